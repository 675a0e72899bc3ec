// `import SampleDAL` is the one import a service needs to use these table DALs.
@_exported public import SwiftDAL
