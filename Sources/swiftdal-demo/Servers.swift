import Foundation
import SampleDAL
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
    print("SwiftDAL tour — PostgreSQL \(pool.name)")
    let applied = try SampleSchema.migrator.migrate(pool)
    print(
        applied.isEmpty
            ? "  schema is up to date (\(SampleSchema.versions.last ?? ""))"
            : "  applied migrations: \(applied.joined(separator: ", "))")
    let tour = Tour(pool: pool)
    if try await tour.users.getRecordCount() == 0 {
        try seed(pool, from: fixture)
        print("  copied the sample data from \(fixture) through the same DALs")
    }
    try SampleSchema.verify(users: tour.users, orders: tour.orders, tags: tour.tags)
    let visit = try tour.recordVisit()
    print("  this is run #\(visit) on this database")
    try tour.finding()
    try tour.counting()
    try tour.writing(visit: visit)
    try tour.errors()
    try tour.rolledBackTransaction(visit: visit)
    try await tour.asynchronous()
    let (userCount, orderCount) = (try await tour.users.getRecordCount(), try await tour.orders.getRecordCount())
    print("\nDone: \(userCount) users and \(orderCount) orders stored.")
    print(
        server == nil
            ? "Run it again: the visitor rows and their orders are still there."
            : "The throwaway server is stopped now; give --postgres a URL to keep the data.")
    try pool.close()
}

/// Copies the fixture's rows into an empty PostgreSQL database through the sample DALs,
/// then moves the identity sequences past the copied ids.
private func seed(_ pool: PostgresPool, from fixture: String) throws {
    let source = try DatabaseQueue(path: fixture, mode: .readOnly)
    defer { try? source.close() }
    try pool.write { db in
        try UserDAL(database: pool).insertRange(UserDAL(database: source).getAll(orderBy: "id"))
        try OrderDAL(database: pool).insertRange(OrderDAL(database: source).getAll(orderBy: "id"))
        try UserTagDAL(database: pool).insertRange(UserTagDAL(database: source).getAll())
        for table in ["users", "orders"] {
            try db.execute(
                "SELECT setval(pg_get_serial_sequence(\(table), 'id'), (SELECT MAX(id) FROM \(identifier: table)))")
        }
    }
}
