internal import CSwiftDALSQLite
public import SwiftDALConnection

extension DatabaseEngine {
    /// SQLite, the embedded default.
    ///
    /// For example, `if db.engine == .sqlite { … }`.
    public static let sqlite = DatabaseEngine(rawValue: "sqlite", dialect: SQLiteEngineDialect())
}

/// SQLite's ``EngineDialect``.
package struct SQLiteEngineDialect: EngineDialect {
    package init() {}

    /// None: every step runs in an `IMMEDIATE` transaction, which already lets one
    /// connection write at a time; a second instance finds the step recorded once it has
    /// its turn.
    package func lockMigrations(_ db: Database, key: Int64, waitingAtMost limit: Duration) throws {}

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

    /// SQLite's own split: a statement ends at the first `;` after which the text so far
    /// is a complete statement by `sqlite3_complete` (SQLite's tokenizer: a trigger runs
    /// to its `; END;`, whatever its body names `begin`, `case` or `end`). Only a `;`
    /// outside literals, names and comments is asked about, so that the time stays linear
    /// in a statement whose literals hold many.
    package func scriptStatements(_ script: String) -> [String]? {
        let bytes = Array(script.utf8)
        var statements = [String]()
        var start = 0
        var text = [CChar]()
        var index = 0
        while index < bytes.count {
            let region: SQLLexicon.Region?
            do {
                region = try SQLLexicon.sqlite.region(in: bytes, at: index, sql: script)
            } catch {
                break  // an unclosed literal or comment: the rest is one statement, which SQLite refuses
            }
            if let region, region.end > index {
                index = region.end
                continue
            }
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: ";") else { continue }
            text.removeAll(keepingCapacity: true)
            text.append(contentsOf: bytes[start...index].map { CChar(bitPattern: $0) })
            text.append(0)
            guard sqlite3_complete(text) != 0 else { continue }
            statements.append(String(decoding: bytes[start..<index], as: UTF8.self))
            start = index + 1
        }
        if start < bytes.count { statements.append(String(decoding: bytes[start...], as: UTF8.self)) }
        return statements
    }

    /// Keys travel as one JSON array (any number, one cached statement) when JSON carries
    /// them exactly, else as a bound `VALUES` list.
    package func keyListPredicate(columns: [String], types: [String], keys: [[DatabaseValue]]) throws -> SQL {
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

    // MARK: Tables and the catalog

    /// The affinity's own name: `INTEGER`, `REAL`, `TEXT`, `BLOB`, `NUMERIC`.
    package func columnType(affinity: String, inKey: Bool) -> String { affinity }

    package func generatedKeyClause(autoincrement: Bool) -> String {
        " PRIMARY KEY" + (autoincrement ? " AUTOINCREMENT" : "")
    }

    package var declaresWithoutRowID: Bool { true }

    package func collation(_ name: String, table: String) throws -> String { quote(name) }

    package func tableNames(_ db: Database) throws -> [String] {
        try db.fetchColumn(
            String.self,
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
    }

    /// The main schema's tables, views and virtual tables; left out are SQLite's own
    /// (`sqlite_…`) and the shadow tables that hold a virtual table's data (FTS5's
    /// `docs_data`, `docs_idx`…).
    package func schemaObjectNames(_ db: Database) throws -> [String] {
        // pragma_table_list (SQLite 3.37+) tells shadow tables apart; older libraries
        // fall back to the schema table, which lists them as ordinary tables.
        var names = try? db.fetchColumn(
            String.self,
            """
            SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'view', 'virtual')
            AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
        if names == nil {
            names = try db.fetchColumn(
                String.self,
                """
                SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                ORDER BY name
                """)
        }
        return names ?? []
    }

    /// From `pragma_index_list`, `pragma_index_info` and `pragma_foreign_key_list`.
    package func describe(table name: String, columns: [ColumnInfo], _ db: Database) throws -> TableDescription {
        let indexes = try db.fetchAll(
            "SELECT name, \"unique\", origin FROM pragma_index_list(\(name)) ORDER BY name"
        ) { row in
            (
                name: try row.decode(String.self, at: 0), isUnique: try row.decode(Bool.self, at: 1),
                origin: try row.decode(String.self, at: 2)
            )
        }.map { index in
            IndexInfo(
                name: index.name, isUnique: index.isUnique, origin: index.origin,
                columns: try db.fetchColumn(
                    String.self, "SELECT name FROM pragma_index_info(\(index.name)) ORDER BY seqno"))
        }
        let keyRows = try db.fetchAll(
            "SELECT id, \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(\(name)) ORDER BY id, seq"
        ) { row in
            (
                id: try row.decode(Int.self, at: 0), table: try row.decode(String.self, at: 1),
                from: try row.decode(String.self, at: 2),
                to: try row.decode(String?.self, at: 3), onUpdate: try row.decode(String.self, at: 4),
                onDelete: try row.decode(String.self, at: 5)
            )
        }
        var foreignKeys = [ForeignKeyInfo]()
        for id in Set(keyRows.map(\.id)).sorted() {
            let parts = keyRows.filter { $0.id == id }
            guard let first = parts.first else { continue }
            foreignKeys.append(
                ForeignKeyInfo(
                    columns: parts.map(\.from), table: first.table, referencedColumns: parts.map { $0.to ?? "" },
                    onUpdate: first.onUpdate, onDelete: first.onDelete))
        }
        return TableDescription(name: name, columns: columns, indexes: indexes, foreignKeys: foreignKeys)
    }

    /// The key of a rowid alias: the single `INTEGER PRIMARY KEY` column of a rowid table.
    /// SQLite makes no index for that key, and one for every other key (`INT PRIMARY
    /// KEY`, `INTEGER PRIMARY KEY DESC`, a `TEXT` key), which tells the quirks apart
    /// without parsing the `CREATE TABLE`.
    package func generatedKeyColumn(of description: TableDescription) -> String? {
        let key = description.primaryKey
        guard key.count == 1, let column = description.columns.first(where: { $0.name == key[0] }),
            !description.indexes.contains(where: { $0.origin == "pk" }), column.declaredType.uppercased() == "INTEGER"
        else { return nil }
        return key[0]
    }

    /// From the declared type by SQLite's own affinity rules
    /// (<https://sqlite.org/datatype3.html>, section 3.1), with the type names of the
    /// NUMERIC affinity that say what they hold given their Swift types: exact numbers
    /// (`DECIMAL`, `NUMERIC`, `MONEY`…) → `Decimal`, `BOOLEAN` and `BIT` → `Bool`, dates → `Date`;
    /// `BYTEA` → `Data` and `UUID` → `UUID` first (a schema written for PostgreSQL).
    package func swiftType(forDeclaredType declaredType: String) -> (name: String, needsFoundation: Bool) {
        let type = declaredType.uppercased()
        if type == "BYTEA" { return ("Data", true) }
        if type == "UUID" { return ("UUID", true) }
        // The affinity rules, as SQLite applies them (ColumnAffinity: bytes, ASCII case).
        switch ColumnAffinity(declaredType: declaredType) {
        case .integer: return ("Int64", false)
        case .text: return ("String", false)
        case .blob:
            // No declared type: no affinity, any storage class.
            return declaredType.isEmpty ? ("DatabaseValue", false) : ("Data", true)
        case .real: return ("Double", false)
        case .numeric: break
        }
        // NUMERIC affinity.
        // `BIT` is SQL Server's and Access's flag (a schema moved from them), `BIT(1)` one bit.
        if type.hasPrefix("BOOL") || type == "BIT" || type == "BIT(1)" { return ("Bool", false) }
        if type.contains("DATE") || type.contains("TIMESTAMP") { return ("Date", true) }
        // SQLite keeps a number-like value as INTEGER or REAL and anything else as TEXT:
        // `Decimal` reads INTEGER, REAL and numeric TEXT, and stores text, losslessly.
        let firstWord = String(type.prefix { $0.isLetter })
        if Self.exactNumberTypes.contains(firstWord) { return ("Decimal", true) }
        // Any other name (TIME, INTERVAL…): whatever storage class the database gave, exactly.
        return ("DatabaseValue", false)
    }

    /// The first words of declared types that mean an exact number: `DECIMAL(10,2)`,
    /// `NUMERIC`, `NUMBER` (Oracle), `MONEY` and `SMALLMONEY` (SQL Server), `CURRENCY`
    /// (Access), `DEC` and `FIXED` (MySQL's synonyms of `DECIMAL`).
    package static let exactNumberTypes: Set<String> = [
        "DECIMAL", "DEC", "NUMERIC", "NUMBER", "MONEY", "SMALLMONEY", "CURRENCY", "FIXED"
    ]
}

/// The keys as a JSON array (of values, or of arrays for composite keys) for
/// `json_each`, or `nil` when a key cannot travel through JSON exactly.
private func jsonKeys(_ keys: [[DatabaseValue]], single: Bool) -> String? {
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

extension SQLLexicon {
    /// SQLite's lexicon.
    package static let sqlite: SQLLexicon = {
        var rules = Rules()
        rules.backtickNames = true
        rules.bracketNames = true
        rules.sqliteParameters = true
        return SQLLexicon(rules)
    }()
}
