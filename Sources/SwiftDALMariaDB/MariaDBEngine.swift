public import SwiftDALConnection

extension DatabaseEngine {
    /// MariaDB (10.6 or later), through the MySQL C API of MariaDB Connector/C (this module).
    /// MySQL is not supported yet: it has no `INSERT … RETURNING` and no `nopad` collations.
    ///
    /// For example, `if db.engine == .mariadb { … }`.
    public static let mariadb = DatabaseEngine(rawValue: "mariadb", dialect: MariaDBEngineDialect())
}
