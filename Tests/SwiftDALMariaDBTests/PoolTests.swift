import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

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
