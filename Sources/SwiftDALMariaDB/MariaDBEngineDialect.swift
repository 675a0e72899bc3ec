import Foundation
import SwiftDALConnection

/// MariaDB's ``SwiftDAL/EngineDialect``.
///
/// What the SQL lexicon must assume of a SwiftDAL session (see ``MariaDBConnection``):
/// `"…"` is an identifier (`ANSI_QUOTES`), `` `…` `` too; strings are `'…'`, where a
/// backslash escapes the next character (`NO_BACKSLASH_ESCAPES` is not set) and `''` is
/// a quote; comments are `-- ` (a space after the dashes), `#` to the end of the line,
/// and `/* */` (not nested; `/*! … */` is executed by the server).
struct MariaDBEngineDialect: EngineDialect {
    /// How long an instance waits for another one's migrations, in seconds.
    static let lockTimeout = 300

    /// The name of the lock for `key`: `GET_LOCK` names are server-wide, so the
    /// database's name is part of it (two databases on one server migrate independently).
    static func lockName(_ key: Int64) -> SQL {
        "CONCAT('swiftdal.', LEFT(DATABASE(), 30), '.', \(String(key)))"
    }

    /// A named lock of the session (`GET_LOCK`): several service instances may start at
    /// once, and one migrates while the others wait (at most ``lockTimeout`` seconds, then
    /// a ``SwiftDAL/DALError/Code/timeout``), then find nothing left to do.
    func lockMigrations(_ db: Database, key: Int64) throws {
        let lockName = Self.lockName(key)
        let got = try db.fetchScalar(Int.self, "SELECT GET_LOCK(\(sql: lockName), \(Self.lockTimeout))")
        guard got == 1 else {
            throw DALError(
                .timeout, "another instance held the migration lock for \(Self.lockTimeout) s; nothing was migrated")
        }
    }

    func unlockMigrations(_ db: Database, key: Int64) throws {
        let lockName = Self.lockName(key)
        _ = try db.fetchScalar(Int.self, "SELECT RELEASE_LOCK(\(sql: lockName))")
    }

    func createMigrationHistory(_ quotedTable: String) -> String {
        "CREATE TABLE IF NOT EXISTS \(quotedTable) (id VARCHAR(255) NOT NULL PRIMARY KEY, "
            + "applied_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), "
            + "position BIGINT NOT NULL AUTO_INCREMENT UNIQUE) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"
    }

    /// An `AUTO_INCREMENT` column: a table has no insertion order of its own.
    var migrationHistoryOrder: String { "position" }

    /// In a transaction of its own, with `foreign_key_checks = 0` around it when
    /// `disablesForeignKeys` (a session setting, restored afterwards, on every path).
    ///
    /// MariaDB's DDL is not transactional: each `CREATE`, `ALTER`, `DROP` commits the
    /// transaction open before it and takes effect at once. A step that fails after some
    /// DDL leaves that DDL applied, and the step unrecorded in the history (its record is
    /// the last statement): its rows are rolled back, its schema changes are not. Write
    /// steps whose DDL can run again (`IF NOT EXISTS`, `IF EXISTS`), or one DDL statement
    /// per step.
    func runMigrationStep(_ db: Database, disablesForeignKeys: Bool, _ body: () throws -> Void) throws {
        if disablesForeignKeys { try db.execute(sql: "SET foreign_key_checks = 0") }
        defer {
            if disablesForeignKeys { _ = try? db.execute(sql: "SET foreign_key_checks = 1") }
        }
        try db.inTransaction(.immediate) { try body() }
    }

    /// `ALTER TABLE` changes columns, types and constraints in place.
    var rebuildsTables: Bool { false }

    /// The `table=` of the lines whose `type=ALL` (a full table scan); see
    /// ``MariaDBConnection/queryPlan(of:)`` for the lines' form.
    func scannedNames(inPlan plan: [String]) -> [String] {
        plan.compactMap { line in
            guard line.contains(" type=ALL "), let table = line.range(of: " table=") else { return nil }
            return QueryPlanText.firstName(in: line[table.upperBound...])
        }
    }

    /// EXPLAIN names a table by its alias when the statement gives one.
    var planNamesAliases: Bool { true }
}
