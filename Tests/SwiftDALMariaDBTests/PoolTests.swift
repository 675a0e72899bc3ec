import Foundation
import SwiftDAL
import SwiftDALTestSupport
import Testing

@testable import SwiftDALMariaDB

@Suite struct MariaDBPoolTests {
    @Test func asyncCallsShareThePoolAndShutdownEndsIt() async throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 3
        let (pool, outside) = try makeMariaDBPool(configuration)
        try await pool.write { db in _ = try db.execute(sql: "CREATE TABLE hits(id INT AUTO_INCREMENT PRIMARY KEY)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { try await pool.write { db in _ = try db.execute(sql: "INSERT INTO hits VALUES ()") } }
            }
            try await group.waitForAll()
        }
        #expect(try await pool.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM hits") } == 20)
        #expect(pool.statistics.connectionsOpen <= 3)
        #expect(try outside.sql("SELECT COUNT(*) FROM hits") == "20")
        await pool.shutdown(gracePeriod: .seconds(5))
        await #expect(throws: DALError.self) {
            try await pool.read { db in try db.fetchScalar(Int.self, "SELECT 1") }
        }
    }

    @Test func statementsAreCachedPerConnection() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1
        let (pool, _) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        try pool.write { db in
            for value in 0..<5 { _ = try db.fetchScalar(Int.self, "SELECT \(value) + 1") }
            #expect(try db.cachedStatementCount == 1)
            _ = try db.fetchScalar(Int.self, "SELECT \(1) + 2")
            #expect(try db.cachedStatementCount == 2)
            try db.clearStatementCache()
            #expect(try db.cachedStatementCount == 0)
        }
    }

    /// A URL's parameters are checked when the pool is made: an unknown one (a typo) and a
    /// `connect_timeout` that is not a positive number of seconds are refused, naming the
    /// parameter, before any connection is tried.
    @Test func aURLsParametersAreCheckedWhenThePoolIsMade() throws {
        for (url, problem) in [
            ("mysql://app@localhost/shop?conect_timeout=5", "unknown MariaDB URL parameter conect_timeout"),
            ("mysql://app@localhost/shop?sock=/tmp/m.sock", "unknown MariaDB URL parameter sock"),
            ("mysql://app@localhost/shop?connect_timeout=0", "connect_timeout must be a positive number"),
            ("mysql://app@localhost/shop?connect_timeout=-1", "connect_timeout must be a positive number"),
            ("mysql://app@localhost/shop?connect_timeout=5s", "connect_timeout must be a positive number")
        ] {
            let error = #expect(throws: DALError.self) { _ = try MariaDBPool(url: url) }
            #expect(error?.code == .invalidValue)
            #expect(error?.message.contains(problem) == true, "\(String(describing: error))")
        }
        for url in [
            "mysql://app@localhost/shop?socket=/nonexistent/m.sock&connect_timeout=3",
            "mariadb://app@localhost/shop?unix_socket=/nonexistent/m.sock"
        ] {
            try MariaDBPool(url: url).close()
        }
    }

    /// The configuration's timeouts reach Connector/C as whole seconds rounded up (a 1.5 s
    /// limit is 2 s, not 1), at least 1, at most what it counts in milliseconds.
    @Test func timeoutsAreWholeSecondsRoundedUp() throws {
        #expect(MariaDBEndpoint.seconds(.milliseconds(1500)) == 2)
        #expect(MariaDBEndpoint.seconds(.milliseconds(1)) == 1)
        #expect(MariaDBEndpoint.seconds(.seconds(3)) == 3)
        #expect(MariaDBEndpoint.seconds(.zero) == 1)
        #expect(MariaDBEndpoint.seconds(.seconds(Int64.max)) == UInt32(Int32.max / 1000))
        var configuration = MariaDBConfiguration()
        configuration.connectTimeout = .milliseconds(2500)
        configuration.readTimeout = .milliseconds(100)
        configuration.writeTimeout = .seconds(61)
        let endpoint = try MariaDBEndpoint(url: "mysql://app@db/shop", configuration: configuration)
        #expect(endpoint.connectTimeout == 3 && endpoint.readTimeout == 1 && endpoint.writeTimeout == 61)
    }

    @Test func aWrongURLIsRefusedWithoutItsPassword() throws {
        #expect(throws: DALError.self) { _ = try MariaDBPool(url: "postgresql://app@localhost/shop") }
        let pool = try MariaDBPool(url: "mysql://app:hunter2@localhost/none?socket=/nonexistent/m.sock")
        defer { try? pool.close() }
        let error = #expect(throws: MariaDBError.self) { try pool.checkConnection() }
        #expect(error?.isConnectionFailure == true)
        #expect(error.map { "\($0)" }?.contains("hunter2") == false)
        #expect(pool.name.contains("hunter2") == false)
    }
}
