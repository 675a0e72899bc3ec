public import SwiftDALConnection

extension DatabaseEngine {
    /// MariaDB (and MySQL), through the MySQL C API of MariaDB Connector/C (this module).
    ///
    /// For example, `if db.engine == .mariadb { … }`.
    public static let mariadb = DatabaseEngine(rawValue: "mariadb", dialect: MariaDBEngineDialect())
}
