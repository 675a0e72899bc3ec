// One import for users of SwiftDAL: `import SwiftDAL` brings the connection layer,
// Entity, IDAL and BaseDAL.
@_exported public import SwiftDALConnection
@_exported public import SwiftDALEntity
@_exported public import SwiftDALIDAL
@_exported public import SwiftDALSQLite
@_exported public import SwiftDALSchema
