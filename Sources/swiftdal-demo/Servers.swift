import Foundation
import SampleDAL
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport

/// The tour on PostgreSQL: the same migrations, the same DALs, the same calls. With no
/// URL, a throwaway server is started for the run (and stopped after); on an empty
/// database the sample data is copied in from the SQLite fixture through the DALs.
func runOnPostgres(url: String, fixture: String) async throws {
    var server: PostgresServer?
    defer { server?.stop() }
    let connectionString: String
    if url.isEmpty {
        print("starting a throwaway PostgreSQL server…")
        let started = try PostgresServer.start()
        server = started
        connectionString = try started.makeDatabase()
    } else {
        connectionString = url
    }
    let pool = try PostgresPool(url: connectionString)
    try pool.checkConnection()
    try await runTour(on: pool, title: "PostgreSQL \(pool.name)", fixture: fixture, throwaway: server != nil) { db in
        // Rows copied with their ids leave the identity sequences behind: move them on.
        for table in ["users", "orders"] {
            try db.execute(
                "SELECT setval(pg_get_serial_sequence(\(table), 'id'), (SELECT MAX(id) FROM \(identifier: table)))")
        }
    }
    try pool.close()
}

/// The tour on MariaDB: the same migrations, DALs and calls. With no URL, a
/// throwaway server is started for the run (needs `mariadb-server`) and stopped after.
func runOnMariaDB(url: String, fixture: String) async throws {
    var server: MariaDBServer?
    defer { server?.stop() }
    let address: String
    if url.isEmpty {
        print("starting a throwaway MariaDB server…")
        let started = try MariaDBServer.start()
        server = started
        address = try started.makeDatabase()
    } else {
        address = url
    }
    let pool = try MariaDBPool(url: address)
    try pool.checkConnection()
    // AUTO_INCREMENT moves past the ids copied in by itself.
    try await runTour(on: pool, title: "MariaDB \(pool.name)", fixture: fixture, throwaway: server != nil) { _ in }
    try pool.close()
}

/// The tour on a server's `pool`: migrate, copy the sample data in when the database is
/// empty (then `afterCopy` in the same transaction), and make every call of the tour.
private func runTour(
    on pool: any DatabaseWriter, title: String, fixture: String, throwaway: Bool,
    afterCopy: @Sendable (Database) throws -> Void
) async throws {
    print("SwiftDAL tour — \(title)")
    let applied = try SampleSchema.migrator.migrate(pool)
    print(
        applied.isEmpty
            ? "  schema is up to date (\(SampleSchema.versions.last ?? ""))"
            : "  applied migrations: \(applied.joined(separator: ", "))")
    let tour = Tour(pool: pool)
    if try await tour.users.getRecordCount() == 0 {
        try copySampleData(into: pool, from: fixture, then: afterCopy)
        print("  copied the sample data from \(fixture) through the same DALs")
    }
    try await tour.takeEveryStop()
    print(
        throwaway
            ? "The throwaway server is stopped now; give a URL to keep the data."
            : "Run it again: the visitor rows and their orders are still there.")
}

/// Copies the fixture's rows into `pool`'s empty tables through the sample DALs, then
/// runs `afterCopy`, in one transaction.
private func copySampleData(
    into pool: any DatabaseWriter, from fixture: String, then afterCopy: (Database) throws -> Void
) throws {
    let source = try DatabaseQueue(path: fixture, mode: .readOnly)
    defer { try? source.close() }
    try pool.write { db in
        try UserDAL(database: pool).insertRange(UserDAL(database: source).getAll(orderBy: "id"))
        try OrderDAL(database: pool).insertRange(OrderDAL(database: source).getAll(orderBy: "id"))
        try UserTagDAL(database: pool).insertRange(UserTagDAL(database: source).getAll())
        try afterCopy(db)
    }
}
