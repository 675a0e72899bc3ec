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
}
