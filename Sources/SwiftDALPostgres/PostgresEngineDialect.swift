import Foundation
import SwiftDALConnection

/// PostgreSQL's ``EngineDialect``.
struct PostgresEngineDialect: EngineDialect {
    /// A session-level advisory lock: several service instances may start at once, and
    /// one migrates while the others wait, then find nothing left to do.
    func lockMigrations(_ db: Database, key: Int64) throws {
        try db.execute("SELECT pg_advisory_lock(\(key))")
    }

    func unlockMigrations(_ db: Database, key: Int64) throws {
        try db.execute("SELECT pg_advisory_unlock(\(key))")
    }

    func createMigrationHistory(_ quotedTable: String) -> String {
        "CREATE TABLE IF NOT EXISTS \(quotedTable) (id TEXT PRIMARY KEY NOT NULL, "
            + "applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, position BIGINT GENERATED ALWAYS AS IDENTITY)"
    }

    /// An identity column: a table has no insertion order of its own.
    var migrationHistoryOrder: String { "position" }

    /// In a transaction of its own. Foreign keys are always enforced (a step that
    /// `disablesForeignKeys` defers the deferrable ones to its commit); there is nothing
    /// like SQLite's foreign-key check to run.
    func runMigrationStep(_ db: Database, disablesForeignKeys: Bool, _ body: () throws -> Void) throws {
        try db.inTransaction(.immediate) {
            if disablesForeignKeys { try db.execute(sql: "SET CONSTRAINTS ALL DEFERRED") }
            try body()
        }
    }

    /// `ALTER TABLE` changes what a rebuild would (constraints, column types) in place.
    var rebuildsTables: Bool { false }

    /// `Seq Scan on users u  (cost=…)`, `Parallel Seq Scan on "Odd Name"`.
    func scannedNames(inPlan plan: [String]) -> [String] {
        plan.compactMap { line in
            guard let on = line.range(of: "Seq Scan on ") else { return nil }
            return QueryPlanText.firstName(in: line[on.upperBound...])
        }
    }

    /// The plan names the table (and its alias after it).
    var planNamesAliases: Bool { false }
}
