import Foundation
import SwiftDAL
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// The one PostgreSQL server of this test process, started on first use and stopped
/// when the process exits. Each test gets a database of its own on it.
enum SharedPostgres {
    nonisolated(unsafe) private static var server: PostgresServer?
    private static let lock = NSLock()

    /// A fresh, empty database on the shared server.
    static func makeDatabase() throws -> String {
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
    static func withServer<R>(_ body: (PostgresServer) throws -> R) throws -> R {
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

/// A pool on a fresh database of the shared server.
func makePostgresPool(_ configuration: PostgresConfiguration = PostgresConfiguration()) throws -> PostgresPool {
    try PostgresPool(url: SharedPostgres.makeDatabase(), configuration: configuration)
}
