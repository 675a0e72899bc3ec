import Foundation
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport

/// Counts the UPDATE statements a database ran: an unchanged entity's update runs none.
final class UpdateCounter: DatabaseObserver, @unchecked Sendable {
    private let count = Locked(0)
    func statementDidFinish(_ event: StatementEvent) {
        if event.sql.hasPrefix("UPDATE") { count.withLock { $0 += 1 } }
    }
    var updates: Int { count.withLock { $0 } }
}

/// A database of `engine` (a SQLite file named `file` in a temporary directory, or a new
/// database on the tests' PostgreSQL or MariaDB server) observed by `observer`, with
/// that engine's `schema` script run in it. The directory (`nil` for the servers) must
/// outlive the database.
///
/// For example, `let (database, directory) = try observedDatabase(.sqlite, observer: counter,
/// file: "t.sqlite", sqlite: "CREATE TABLE t(id INTEGER PRIMARY KEY)", postgres: "…", mariadb: "…")`.
func observedDatabase(
    _ engine: Engine, observer: some DatabaseObserver, file: String, sqlite: String, postgres: String,
    mariadb: String
) throws -> (any DatabaseWriter, TemporaryDirectory?) {
    let database: any DatabaseWriter
    var directory: TemporaryDirectory?
    let schema: String
    switch engine {
    case .sqlite:
        let made = try TemporaryDirectory()
        directory = made
        var configuration = Configuration()
        configuration.observer = observer
        database = try DatabasePool(path: made.file(file), configuration: configuration)
        schema = sqlite
    case .postgres:
        var configuration = PostgresConfiguration()
        configuration.observer = observer
        database = try makePostgresPool(configuration)
        schema = postgres
    case .mariadb:
        var configuration = MariaDBConfiguration()
        configuration.observer = observer
        database = try MariaDBPool(url: SharedMariaDB.makeDatabase().url, configuration: configuration)
        schema = mariadb
    }
    try database.reentrantWrite { db in try db.executeScript(schema) }
    return (database, directory)
}
