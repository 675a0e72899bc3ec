import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

@Suite struct MariaDBMigrationTests {
    private static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register("1-create") { db in
            try db.execute(sql: "CREATE TABLE parent(id INT PRIMARY KEY)")
            try db.execute(
                sql:
                    "CREATE TABLE child(id INT PRIMARY KEY, parent_id INT, FOREIGN KEY (parent_id) REFERENCES parent(id))"
            )
            // Holds the lock a while: the other instance waits, then finds nothing to do.
            _ = try db.fetchScalar(Int.self, "SELECT SLEEP(0.5)")
        }
        migrator.register("2-orphan", disablesForeignKeys: true) { db in
            try db.execute(sql: "INSERT INTO child VALUES (1, 42)")
        }
        return migrator
    }

    @Test func twoInstancesMigrateOnceUnderTheLockAndForeignKeysComeBack() async throws {
        let (name, url) = try SharedMariaDB.makeDatabase()
        let outside = OutsideView(server: try SharedMariaDB.shared(), database: name)
        let pools = try (0..<2).map { _ in try MariaDBPool(url: url) }
        defer { for pool in pools { try? pool.close() } }
        let applied = try await withThrowingTaskGroup(of: [String].self) { group in
            for pool in pools {
                group.addTask { try await blocking { try Self.migrator.migrate(pool) } }
            }
            var all = [String]()
            for try await steps in group { all += steps }
            return all
        }
        #expect(applied.sorted() == ["1-create", "2-orphan"])
        #expect(try outside.sql("SELECT id FROM swiftdal_migrations ORDER BY position") == "1-create\n2-orphan")
        #expect(try outside.sql("SELECT COUNT(*) FROM child") == "1")
        // The session setting did not outlive the step: foreign keys are checked again.
        for pool in pools {
            let checks = try await pool.read { db in try db.fetchScalar(Int.self, "SELECT @@foreign_key_checks") }
            #expect(checks == 1)
            await #expect(throws: MariaDBError.self) {
                try await pool.write { db in _ = try db.execute(sql: "INSERT INTO child VALUES (2, 43)") }
            }
        }
        // No lock left behind: a third instance takes it at once (a 5 s limit, not GET_LOCK's 300 s).
        var limited = MariaDBConfiguration()
        limited.callTimeout = .seconds(5)
        let third = try MariaDBPool(url: url, configuration: limited)
        defer { try? third.close() }
        #expect(try await blocking { try Self.migrator.migrate(third) } == [])
    }

    /// MariaDB's DDL commits at once, with what ran before it, and what follows runs
    /// outside a transaction: a step that fails after a `CREATE TABLE` keeps the rows
    /// inserted before and after it and the table (seen from outside), is not recorded, and
    /// its error says so rather than "rolled back". A step without DDL is rolled back
    /// whole, and its error says that.
    @Test func aFailedStepSaysItsDDLStaysAndIsNotRecorded() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        var migrator = Migrator()
        migrator.register("0-before") { db in try db.execute(sql: "CREATE TABLE early(id INT PRIMARY KEY)") }
        migrator.register("1-half") { db in
            try db.execute(sql: "INSERT INTO early VALUES (7)")
            try db.execute(sql: "CREATE TABLE kept(id INT PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO kept VALUES (1)")
            try db.execute(sql: "INSERT INTO kept VALUES (1)")
        }
        let error = try #require(#expect(throws: DALError.self) { try migrator.migrate(pool) })
        #expect(
            error.message.contains("everything up to the failure stays applied"),
            "\(error.message)")
        #expect(!error.message.contains("was rolled back:"))
        #expect(
            try outside.sql(
                "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kept'"
            ) == "1")
        #expect(try outside.sql("SELECT COUNT(*) FROM kept") == "1")
        #expect(try outside.sql("SELECT COUNT(*) FROM early") == "1")
        #expect(try outside.sql("SELECT id FROM swiftdal_migrations") == "0-before")
        // No DDL: the step is rolled back whole.
        var second = Migrator()
        second.register("0-before") { _ in }
        second.register("1-rows") { db in
            try db.execute(sql: "INSERT INTO early VALUES (8)")
            try db.execute(sql: "INSERT INTO early VALUES (8)")
        }
        let rolledBack = try #require(#expect(throws: DALError.self) { try second.migrate(pool) })
        #expect(!rolledBack.message.contains("stays applied"), "\(rolledBack.message)")
        #expect(rolledBack.message.contains("failed and is not recorded"))
        #expect(try outside.sql("SELECT id FROM early ORDER BY id") == "7")
    }
}
