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

    // MARK: BaseDAL's statements: keys as bound arrays (the server infers each
    // parameter's type from the key column); rows read before an update are locked (`FOR
    // UPDATE`); new keys come back through `RETURNING`.

    /// Standard strings, and backslash escapes in every string: SwiftDAL's sessions set
    /// `standard_conforming_strings` on, but a session behind PgBouncer or a `SET` in a
    /// transaction may turn it off.
    var lexicons: [SQLLexicon] { [.postgres, .postgresWithBackslashEscapes] }

    /// Keys as arrays, any number in one statement and two parameters at most: one key
    /// column `"id" = ANY($1)` (the server reads the array as the column's type); several
    /// `("a", "b") IN (SELECT * FROM unnest(CAST($1 AS bigint[]), CAST($2 AS text[])))`,
    /// each array cast to its column's declared type. (A list of row constructors as long
    /// as a few thousand keys exhausted the server's stack, 54001.)
    func keyListPredicate(columns: [String], types: [String], keys: [[SQLiteValue]]) throws -> SQL {
        guard columns.count > 1 else {
            return SQL(sql: "\(quote(columns[0])) = ANY(?)", arguments: [postgresArrayLiteral(keys.map { $0[0] })])
        }
        guard types.count == columns.count else {
            return try valuesListPredicate(columns: columns, keys: keys, limit: 65_535, valuesKeyword: false)
        }
        let names = columns.map(quote).joined(separator: ", ")
        let arrays = types.map { "CAST(? AS \($0)[])" }.joined(separator: ", ")
        let arguments = (0..<columns.count).map { position in postgresArrayLiteral(keys.map { $0[position] }) }
        return SQL(
            sql: "(\(names)) IN (SELECT * FROM unnest(\(arrays)))",
            arguments: StatementArguments(values: arguments.map { .text($0) }))
    }

    var lockForUpdateClause: String { " FOR UPDATE" }
    var returnsInsertedKeys: Bool { true }
    var sortsNullsFirst: Bool { false }
}

extension SQLLexicon {
    /// PostgreSQL's lexicon, with `standard_conforming_strings` on (SwiftDAL's sessions).
    static let postgres = SQLLexicon(postgresRules(backslashEscapesInEveryString: false))
    /// PostgreSQL's lexicon with `standard_conforming_strings` off: backslash escapes in
    /// every string.
    static let postgresWithBackslashEscapes = SQLLexicon(postgresRules(backslashEscapesInEveryString: true))

    private static func postgresRules(backslashEscapesInEveryString: Bool) -> Rules {
        var rules = Rules()
        rules.backslashEscapesInEveryString = backslashEscapesInEveryString
        rules.escapeStrings = true
        rules.continuedLiterals = true
        rules.dollarQuotes = true
        rules.lineCommentEndsAtCarriageReturn = true
        rules.nestedBlockComments = true
        return rules
    }
}
