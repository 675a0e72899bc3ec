import Foundation
package import SampleDAL
import SwiftDAL
package import SwiftDALMariaDB
package import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// The engines every conformance test runs on.
package enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres, mariadb
    package var testDescription: String { rawValue }

    /// The engine's value in the library (what `Database.engine` reports).
    package var databaseEngine: DatabaseEngine {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        case .mariadb: .mariadb
        }
    }

    /// Whether the engine is a server (each connection its own session) rather than an
    /// embedded file.
    package var isServer: Bool { self != .sqlite }
}

package let sampleFixture = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/sample.sqlite").path

/// The sample DALs on a fresh database of `engine`, holding the sample data: a pool on a
/// copy of the SQLite fixture, or a PostgreSQL or MariaDB database migrated by the same
/// migrations and filled through the same DALs.
package struct SampleDatabase: @unchecked Sendable {
    package let engine: Engine
    package let database: any DatabaseWriter
    package let users: UserDAL
    package let orders: OrderDAL
    package let tags: UserTagDAL
    private let directory: TemporaryDirectory?
    /// Runs SQL on the database from outside the pool (`psql`, the `mariadb` client).
    private let outside: (@Sendable (String) throws -> String)?

    package init(
        _ engine: Engine, sqlite: Configuration = Configuration(),
        postgres: PostgresConfiguration = PostgresConfiguration(),
        mariadb: MariaDBConfiguration = MariaDBConfiguration()
    ) throws {
        self.engine = engine
        switch engine {
        case .sqlite:
            let directory = try TemporaryDirectory()
            self.directory = directory
            outside = nil
            database = try DatabasePool(
                path: directory.file("sample.sqlite"), template: sampleFixture, configuration: sqlite)
        case .postgres:
            directory = nil
            let pool = try makePostgresPool(postgres)
            let view = try OutsideView.of(pool)
            outside = { try view.psql($0).trimmingCharacters(in: .whitespacesAndNewlines) }
            try Self.fill(pool)
            // Rows copied with their ids leave the identity sequences behind: move them on.
            try pool.write { db in
                for table in ["users", "orders"] {
                    try db.execute(
                        "SELECT setval(pg_get_serial_sequence(\(table), 'id'), (SELECT MAX(id) FROM \(identifier: table)))"
                    )
                }
            }
            database = pool
        case .mariadb:
            // AUTO_INCREMENT moves past the ids copied in by itself.
            directory = nil
            let (name, url) = try SharedMariaDB.makeDatabase()
            let server = try SharedMariaDB.shared()
            outside = { try server.sql($0, database: name).trimmingCharacters(in: .whitespacesAndNewlines) }
            let pool = try MariaDBPool(url: url, configuration: mariadb)
            try Self.fill(pool)
            database = pool
        }
        users = UserDAL(database: database)
        orders = OrderDAL(database: database)
        tags = UserTagDAL(database: database)
    }

    package func close() throws { try database.close() }

    /// What `sql` prints when run from outside the pool under test (`psql`, the `mariadb`
    /// client; values separated by `|` or a tab), trimmed; `nil` on SQLite, whose file has
    /// no second client here.
    package func fromOutside(_ sql: String) throws -> String? {
        try outside?(sql)
    }

    /// Migrates `pool`'s empty database with the sample's migrations and copies the
    /// fixture's rows in through the sample DALs.
    private static func fill(_ pool: some DatabaseWriter) throws {
        try SampleSchema.migrator.migrate(pool)
        let source = try DatabaseQueue(path: sampleFixture, mode: .readOnly)
        defer { try? source.close() }
        try pool.write { _ in
            try UserDAL(database: pool).insertRange(UserDAL(database: source).getAll(orderBy: "id"))
            try OrderDAL(database: pool).insertRange(OrderDAL(database: source).getAll(orderBy: "id"))
            try UserTagDAL(database: pool).insertRange(UserTagDAL(database: source).getAll())
        }
    }

    /// Configurations that leave one connection to read with on every engine (one SQLite
    /// reader beside the writer, one server connection): for tests of what waits.
    package static var oneConnection:
        (sqlite: Configuration, postgres: PostgresConfiguration, mariadb: MariaDBConfiguration)
    {
        var sqlite = Configuration()
        sqlite.maximumReaderCount = 1
        var postgres = PostgresConfiguration()
        postgres.maximumConnections = 1
        var mariadb = MariaDBConfiguration()
        mariadb.maximumConnections = 1
        return (sqlite, postgres, mariadb)
    }
}

/// SQL that keeps the engine busy for far longer than any test waits (tens of seconds),
/// unless it is stopped.
package func endlessQuery(_ engine: Engine) -> SQL {
    switch engine {
    case .sqlite:
        "SELECT COUNT(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT x FROM c)"
    case .postgres:
        "SELECT COUNT(*) FROM pg_sleep(60)"
    case .mariadb:
        "SELECT COUNT(*) FROM (SELECT SLEEP(60) AS s) AS c"
    }
}
