/// SQLite's ``EngineDialect``.
package struct SQLiteEngineDialect: EngineDialect {
    package init() {}

    /// None: every step runs in an `IMMEDIATE` transaction, which already lets one
    /// connection write at a time; a second instance finds the step recorded once it has
    /// its turn.
    package func lockMigrations(_ db: Database, key: Int64) throws {}

    package func unlockMigrations(_ db: Database, key: Int64) throws {}

    package func createMigrationHistory(_ quotedTable: String) -> String {
        "CREATE TABLE IF NOT EXISTS \(quotedTable) (id TEXT PRIMARY KEY NOT NULL, "
            + "applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    }

    /// The rowid: rows are appended in the order steps were applied.
    package var migrationHistoryOrder: String { "rowid" }

    /// In an `IMMEDIATE` transaction. `disablesForeignKeys` turns `PRAGMA foreign_keys`
    /// off around it (SQLite ignores the pragma inside a transaction), and back on after it
    /// if it was on; `PRAGMA foreign_key_check` runs before the commit, and a violation
    /// fails the step (rolled back) naming the first rows.
    package func runMigrationStep(_ db: Database, disablesForeignKeys: Bool, _ body: () throws -> Void) throws {
        let foreignKeysWereOn = try db.fetchScalar(Bool.self, "PRAGMA foreign_keys") ?? false
        if disablesForeignKeys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
        defer {
            if disablesForeignKeys && foreignKeysWereOn { _ = try? db.execute(sql: "PRAGMA foreign_keys = ON") }
        }
        try db.inTransaction(.immediate) {
            try body()
            let violations = try db.fetchAll("PRAGMA foreign_key_check")
            guard violations.isEmpty else {
                let listed = violations.prefix(5).map { row in
                    let table = (try? row.decode(String.self, at: 0)) ?? "?"
                    let rowid = (try? row.decode(Int64.self, at: 1)).map(String.init) ?? "?"
                    return "\(table) row \(rowid)"
                }
                throw DALError(
                    .schemaMismatch,
                    "it leaves \(violations.count) foreign key violation(s): \(listed.joined(separator: ", "))")
            }
        }
    }

    package var rebuildsTables: Bool { true }

    /// `SCAN users`, `SCAN u USING INDEX …` (SQLite prints the alias when there is one);
    /// not a constant row, a virtual table or a subquery.
    package func scannedNames(inPlan plan: [String]) -> [String] {
        plan.compactMap { line in
            let trimmed = line.drop(while: { $0 == " " })
            guard trimmed.hasPrefix("SCAN "), !trimmed.contains("VIRTUAL TABLE") else { return nil }
            let rest = trimmed.dropFirst(5)
            guard !rest.hasPrefix("CONSTANT ROW"), !rest.hasPrefix("(") else { return nil }
            return QueryPlanText.firstName(in: rest)
        }
    }

    package var planNamesAliases: Bool { true }

    // MARK: BaseDAL's statements

    package var lexicons: [SQLLexicon] { [.sqlite] }

    /// Keys travel as one JSON array (any number, one cached statement) when JSON carries
    /// them exactly, else as a bound `VALUES` list.
    package func keyListPredicate(columns: [String], types: [String], keys: [[SQLiteValue]]) throws -> SQL {
        let names = columns.map(quote).joined(separator: ", ")
        if let json = jsonKeys(keys, single: columns.count == 1) {
            let extract =
                columns.count == 1
                ? "SELECT value FROM json_each(?)"
                : "SELECT " + (0..<columns.count).map { "json_extract(value, '$[\($0)]')" }.joined(separator: ", ")
                    + " FROM json_each(?)"
            return SQL(sql: "(\(names)) IN (\(extract))", arguments: [json])
        }
        // SQLite reads a list of rows only as `VALUES`.
        return try valuesListPredicate(columns: columns, keys: keys, limit: 32_766, valuesKeyword: true)
    }

    /// None: SQLite's write transaction already holds the whole database.
    package var lockForUpdateClause: String { "" }
    package var returnsInsertedKeys: Bool { false }
    package var sortsNullsFirst: Bool { true }
}

/// The keys as a JSON array (of values, or of arrays for composite keys) for
/// `json_each`, or `nil` when a key cannot travel through JSON exactly.
private func jsonKeys(_ keys: [[SQLiteValue]], single: Bool) -> String? {
    if single { return jsonArray(of: keys.map { $0[0] }) }
    var json = "["
    for (index, key) in keys.enumerated() {
        json += index == 0 ? "[" : ",["
        for (position, value) in key.enumerated() {
            if position > 0 { json += "," }
            guard appendJSON(value, to: &json) else { return nil }
        }
        json += "]"
    }
    return json + "]"
}
