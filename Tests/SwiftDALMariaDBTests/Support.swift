import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// A pool on a fresh database of the shared server, and a view of that database from
/// outside the pool (the `mariadb` client).
func makeMariaDBPool(
    _ configuration: MariaDBConfiguration = MariaDBConfiguration()
) throws -> (MariaDBPool, OutsideView) {
    let (name, url) = try SharedMariaDB.makeDatabase()
    return (
        try MariaDBPool(url: url, configuration: configuration),
        OutsideView(server: try SharedMariaDB.shared(), database: name)
    )
}

/// A pool of one connection (one statement cache, one session) on a database of its own,
/// whose reads wait at most 20 s for the server: a hang fails the test, not the run.
func makeOneConnectionPool() throws -> (MariaDBPool, OutsideView) {
    var configuration = MariaDBConfiguration()
    configuration.readTimeout = .seconds(20)
    configuration.maximumConnections = 1
    return try makeMariaDBPool(configuration)
}

/// What a second connection sees of a database: the `mariadb` client, outside the pool
/// under test.
struct OutsideView {
    let server: MariaDBServer
    let database: String

    /// Runs `sql`; returns its rows, one per line, tab-separated values.
    @discardableResult
    func sql(_ sql: String) throws -> String {
        try server.sql(sql, database: database).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Runs blocking `body` on a thread of its own and returns its result.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A write on `pool` that runs `sql` and then holds its locks (the rows it changed, never
/// committed) until `done` is signalled; it then throws `CancellationError`, rolled back.
/// Returns once the locks are held.
///
/// For example, `let (holder, done) = try holdingLocks(pool, "UPDATE t SET v = 1 WHERE id = 1")`.
func holdingLocks(_ pool: MariaDBPool, _ sql: String) throws -> (StartedThread<Void>, DispatchSemaphore) {
    let (held, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let holder = StartedThread {
        try pool.write { db in
            try db.execute(sql: sql)
            held.signal()
            _ = done.wait(timeout: .now() + 120)
            throw CancellationError()  // rolled back: the lock holder writes nothing
        }
    }
    guard held.wait(timeout: .now() + 120) == .success else {
        done.signal()
        throw TestFailure()
    }
    return (holder, done)
}

/// A MariaDB server of its own listening on TCP at 127.0.0.1 (a random port), with a new
/// database and a user `app`@`127.0.0.1` identified by `password`, granted everything on
/// it. Stop the server at the end.
///
/// For example, `let (server, port, database) = try startTCPServer(password: "secret")`.
func startTCPServer(password: String) throws -> (server: MariaDBServer, port: Int, database: String) {
    let port = 20_000 + Int.random(in: 0..<20_000)
    let server = try MariaDBServer.start(options: ["--skip-networking=0", "--port=\(port)", "--bind-address=127.0.0.1"])
    do {
        let database = try server.makeDatabaseName()
        try server.sql(
            "CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY '\(password)'; GRANT ALL ON \(database).* TO 'app'@'127.0.0.1'"
        )
        return (server, port, database)
    } catch {
        server.stop()
        throw error
    }
}
