import Foundation

/// The one PostgreSQL server of a test process, started on first use and stopped when the
/// process exits. Each test gets a database of its own on it.
///
/// ```swift
/// let url = try SharedPostgres.makeDatabase()
/// let pool = try PostgresPool(url: url)
/// ```
public enum SharedPostgres {
    nonisolated(unsafe) private static var server: PostgresServer?
    private static let lock = NSLock()

    /// A fresh, empty database on the shared server: its connection string.
    public static func makeDatabase() throws -> String {
        try lock.withLock {
            if server == nil {
                server = try PostgresServer.start(settings: ["max_connections": "200"])
                atexit { SharedPostgres.stopAtExit() }
            }
            guard let server else { throw PostgresServer.StartFailure(description: "no server") }
            return try server.makeDatabase()
        }
    }

    /// `body` with the shared server (for a database made otherwise than the default).
    public static func withServer<R>(_ body: (PostgresServer) throws -> R) throws -> R {
        _ = try makeDatabase()
        return try lock.withLock {
            guard let server else { throw PostgresServer.StartFailure(description: "no server") }
            return try body(server)
        }
    }

    private static func stopAtExit() {
        server?.stop()
    }
}

/// The one MariaDB server of a test process, started on first use and stopped when the
/// process exits (its watcher stops it should the process die first). Each test gets a
/// database of its own on it.
///
/// ```swift
/// let (name, url) = try SharedMariaDB.makeDatabase()
/// let pool = try MariaDBPool(url: url)
/// ```
public enum SharedMariaDB {
    nonisolated(unsafe) private static var server: MariaDBServer?
    private static let lock = NSLock()

    /// The shared server, started on first use.
    public static func shared() throws -> MariaDBServer {
        try lock.withLock {
            if let server { return server }
            let started = try MariaDBServer.start()
            server = started
            atexit { SharedMariaDB.stopAtExit() }
            return started
        }
    }

    /// A fresh, empty database on the shared server: its name and URL.
    public static func makeDatabase() throws -> (name: String, url: String) {
        let server = try shared()
        let name = try server.makeDatabaseName()
        return (name, server.url(database: name))
    }

    private static func stopAtExit() {
        server?.stop()
    }
}
