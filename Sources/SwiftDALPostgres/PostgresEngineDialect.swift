import Foundation
public import SwiftDALConnection

/// PostgreSQL's ``EngineDialect``.
struct PostgresEngineDialect: EngineDialect {
    /// A session-level advisory lock: several service instances may start at once, and
    /// one migrates while the others wait (at most `limit`, then a
    /// ``SwiftDAL/DALError/Code/timeout``: an instance that hung while migrating holds
    /// the others no longer), then find nothing left to do. The wait's bound is the
    /// transaction's own (`SET LOCAL lock_timeout`, in milliseconds from 1, as 0 would be
    /// none, to the server's most, some 24 days); the lock is the session's and outlives the transaction.
    func lockMigrations(_ db: Database, key: Int64, waitingAtMost limit: Duration) throws {
        let milliseconds = min(max(1, limit.clampedNanoseconds / 1_000_000), Int64(Int32.max))
        do {
            try db.inTransaction {
                try db.execute(sql: "SET LOCAL lock_timeout = \(milliseconds)")
                try db.execute("SELECT pg_advisory_lock(\(key))")
            }
        } catch let error as PostgresError where error.sqlState == "55P03" {
            throw DALError(
                .timeout, "another instance held the migration lock for \(limit); nothing was migrated",
                underlying: error)
        } catch {
            // The lock may have been granted (it is the session's, and outlives the failed
            // transaction: a stop that came as the server granted it refuses the COMMIT):
            // the connection must not go back to its pool holding it.
            db.discardAfterUse()
            throw error
        }
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
    func keyListPredicate(columns: [String], types: [String], keys: [[DatabaseValue]]) throws -> SQL {
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

    // MARK: Tables and the catalog

    /// `BIGINT`, `DOUBLE PRECISION`, `TEXT`, `BYTEA` and `NUMERIC`.
    func columnType(affinity: String, inKey: Bool) -> String {
        switch affinity {
        case "INTEGER": "BIGINT"
        case "REAL": "DOUBLE PRECISION"
        case "BLOB": "BYTEA"
        default: affinity
        }
    }

    /// A blob as `bytea`, infinities as `'Infinity'`.
    func defaultLiteral(_ value: DatabaseValue) -> String {
        switch value {
        case .blob(let data): return "'\\x" + data.map { String(format: "%02x", $0) }.joined() + "'::bytea"
        case .real(let double) where !double.isFinite: return double > 0 ? "'Infinity'" : "'-Infinity'"
        default: return sqlLiteral(value)
        }
    }

    /// An identity column (keys are never reused, `autoincrement` or not).
    func generatedKeyClause(autoincrement: Bool) -> String { " GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" }

    var declaresWithoutRowID: Bool { false }

    /// SQLite's `BINARY` is `"C"`; its `NOCASE` and `RTRIM` have no equivalent.
    func collation(_ name: String, table: String) throws -> String {
        switch name.uppercased() {
        case "BINARY": return "\"C\""
        case "NOCASE", "RTRIM":
            throw DALError(
                .unsupportedOperation,
                "PostgreSQL has no \(name.uppercased()) collation: compare with lower() or ILIKE, or use citext",
                table: table)
        default: return quote(name)
        }
    }

    /// Tables and partitioned tables of the schemas on the search path.
    func tableNames(_ db: Database) throws -> [String] {
        try db.fetchColumn(
            String.self,
            """
            SELECT c.relname FROM pg_class c WHERE c.relkind IN ('r', 'p') AND pg_table_is_visible(c.oid)
                AND c.relnamespace <> 'pg_catalog'::regnamespace ORDER BY c.relname
            """)
    }

    /// Tables, views and materialized views of the schemas on the search path; not a
    /// partitioned table's partitions (its rows are read and written through it).
    func schemaObjectNames(_ db: Database) throws -> [String] {
        try db.fetchColumn(
            String.self,
            """
            SELECT c.relname FROM pg_class c
            WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND pg_table_is_visible(c.oid) AND NOT c.relispartition
            AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
            ORDER BY c.relname
            """)
    }

    /// The partitions of the schemas on the search path (`relispartition`), with their
    /// parent (a partition of a partition names the partition above it).
    func partitions(_ db: Database) throws -> [(name: String, table: String)] {
        try db.fetchAll(
            """
            SELECT c.relname, p.relname FROM pg_class c
            JOIN pg_inherits i ON i.inhrelid = c.oid JOIN pg_class p ON p.oid = i.inhparent
            WHERE c.relispartition AND c.relkind IN ('r', 'p', 'f') AND pg_table_is_visible(c.oid)
            AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
            ORDER BY c.relname
            """
        ) { row in (name: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1)) }
    }

    /// From `pg_index` and `pg_constraint`.
    func describe(table name: String, columns: [ColumnInfo], _ db: Database) throws -> TableDescription {
        let table = quoteIdentifier(name)
        let indexes = try db.fetchAll(
            """
            SELECT i.relname, x.indisunique, CASE WHEN x.indisprimary THEN 'pk' WHEN con.oid IS NOT NULL THEN 'u' ELSE 'c' END,
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
                       JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum ORDER BY k.n), chr(31))
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
            LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.contype = 'u'
            WHERE x.indrelid = to_regclass(\(table)) ORDER BY i.relname
            """
        ) { row in
            IndexInfo(
                name: try row.decode(String.self, at: 0), isUnique: try row.decode(Bool.self, at: 1),
                origin: try row.decode(String.self, at: 2),
                columns: try row.decode(String.self, at: 3).split(separator: "\u{1F}").map(String.init))
        }
        let actions = ["a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"]
        let foreignKeys = try db.fetchAll(
            """
            SELECT (SELECT relname FROM pg_class WHERE oid = c.confrelid),
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n), chr(31)),
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n)
                       JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n), chr(31)),
                   c.confupdtype::text, c.confdeltype::text
            FROM pg_constraint c WHERE c.conrelid = to_regclass(\(table)) AND c.contype = 'f' ORDER BY c.conname
            """
        ) { row in
            ForeignKeyInfo(
                columns: try row.decode(String.self, at: 1).split(separator: "\u{1F}").map(String.init),
                table: try row.decode(String.self, at: 0),
                referencedColumns: try row.decode(String.self, at: 2).split(separator: "\u{1F}").map(String.init),
                onUpdate: actions[try row.decode(String.self, at: 3)] ?? "NO ACTION",
                onDelete: actions[try row.decode(String.self, at: 4)] ?? "NO ACTION")
        }
        return TableDescription(name: name, columns: columns, indexes: indexes, foreignKeys: foreignKeys)
    }

    /// The single integer primary-key column that the database fills in (an identity
    /// column, or one with a default such as a serial's `nextval`).
    func generatedKeyColumn(of description: TableDescription) -> String? {
        let key = description.primaryKey
        guard key.count == 1, let column = description.columns.first(where: { $0.name == key[0] }) else { return nil }
        return column.affinity == .integer && column.defaultValueSQL != nil ? key[0] : nil
    }

    /// PostgreSQL's types, by the name the catalog writes (`format_type`), each to a Swift
    /// type that reads it and writes it back as it was. Affinity rules do not apply: they
    /// made `interval` and `point` an `Int64` (the names hold "INT") and `money` a
    /// `Decimal` (it reads as `$1,234.56`). Every type has a text form the server reads
    /// back, so a type with no closer Swift type is a `String`: money, intervals and
    /// times of day, network addresses, bit strings, full-text values, geometric values,
    /// ranges, arrays, enums, domains, `json`, `jsonb`, `xml`, and any other.
    func swiftType(forDeclaredType declaredType: String) -> (name: String, needsFoundation: Bool) {
        let type = declaredType.lowercased()
        if type.hasSuffix("]") { return ("String", false) }  // an array: its text form
        var base = Substring(type.prefix { $0 != "(" })
        while base.last == " " { base = base.dropLast() }
        switch base {
        case "smallint", "integer", "bigint", "oid": return ("Int64", false)
        case "real", "double precision": return ("Double", false)
        case "numeric", "decimal": return ("Decimal", true)
        case "boolean": return ("Bool", false)
        case "bytea": return ("Data", true)
        case "uuid": return ("UUID", true)
        case "date", "timestamp with time zone", "timestamp without time zone", "timestamp":
            return ("Date", true)
        default: return ("String", false)
        }
    }
}

extension DatabaseEngine {
    /// PostgreSQL, through libpq (this module).
    public static let postgres = DatabaseEngine(rawValue: "postgres", dialect: PostgresEngineDialect())
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
