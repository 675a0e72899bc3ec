/// The SQL an engine needs written its own way, for the layers above the connection
/// (issue 25's seam: an engine is a module that brings its connection and its dialect,
/// and nothing above branches on which engine it is). Each engine provides one:
/// ``SQLiteEngineDialect`` here, `PostgresEngineDialect` in `SwiftDALPostgres`; a
/// connection's is ``Database/dialect``.
///
/// It holds the SQL BaseDAL writes differently per engine (identifier quoting, upsert,
/// key lists, row locks, the new key of an insert, the order of `NULL`s, how the engine
/// reads SQL text), what the migrator needs (the lock that serializes instances, the
/// history table, how a step runs) and how a query plan is read. Everything else the
/// layers above write is the same SQL on every engine, with `?` placeholders (an engine's
/// connection turns them into its own).
@usableFromInline
package protocol EngineDialect: Sendable {
    /// Takes the lock that lets one service instance migrate while the others wait (held
    /// by the session of `db`; `key` names it), waiting at most `limit` for another
    /// session's (then ``DALError/Code/timeout``). An engine whose step transactions
    /// already serialize writers takes none.
    func lockMigrations(_ db: Database, key: Int64, waitingAtMost limit: Duration) throws
    /// Releases ``lockMigrations(_:key:waitingAtMost:)``'s lock. When it throws, the caller closes the
    /// connection instead of lending it again (the server releases a session's lock as the
    /// session ends).
    func unlockMigrations(_ db: Database, key: Int64) throws
    /// The statement that creates the migration history table `quotedTable` if it is
    /// missing: `id` (the step's name, the key) and `applied_at`, and whatever keeps the
    /// order the steps were applied in (see ``migrationHistoryOrder``).
    func createMigrationHistory(_ quotedTable: String) -> String
    /// The expression the history is ordered by to list steps in the order they were
    /// applied.
    var migrationHistoryOrder: String { get }
    /// Runs a migration step in a transaction of its own: `body` (the step, then its
    /// record in the history), with foreign keys relaxed as the engine can when
    /// `disablesForeignKeys`, and checked before the commit where the engine does not
    /// check them itself. Rolls back and throws when anything fails.
    func runMigrationStep(_ db: Database, disablesForeignKeys: Bool, _ body: () throws -> Void) throws
    /// Whether a step's DDL is undone when the step fails (SQLite, PostgreSQL); where DDL
    /// commits at once (MariaDB), a failed step leaves the DDL it ran applied.
    var rollsBackDDL: Bool { get }
    /// Whether a table is changed by rebuilding it (create a copy, move the rows, drop,
    /// rename: SQLite's way around its `ALTER TABLE`) rather than altered in place.
    var rebuildsTables: Bool { get }
    /// The names a query plan (``Database/queryPlan(of:)``'s lines, as the engine prints
    /// them) reads whole: the full scans a query-plan guard reports.
    func scannedNames(inPlan plan: [String]) -> [String]
    /// Whether ``scannedNames(inPlan:)`` may give a statement's alias for a table rather
    /// than the table's name (SQLite prints the alias): a name that is no table's still
    /// counts as a scan then.
    var planNamesAliases: Bool { get }

    // MARK: BaseDAL's statements

    /// A quoted identifier (default: ``quoteIdentifier(_:)``'s standard double quotes).
    func quote(_ identifier: String) -> String
    /// The placeholder for the next bound parameter (default: `?`).
    var placeholder: String { get }
    /// The clause that turns an `INSERT` into an atomic upsert on a conflict over
    /// `conflictColumns`, setting `updateColumns` to the inserted values (none: the row is
    /// left as it is), only where the existing row meets `condition` when one is given
    /// (a scope's guard: its placeholders are bound once, after the inserted values).
    /// Default: `ON CONFLICT(…) DO UPDATE SET … = excluded.… [WHERE condition]`.
    func upsertClause(conflictColumns: [String], updateColumns: [String], where condition: String?) -> String
    /// The value an upsert's `INSERT` proposed for the column `quotedColumn`, as its
    /// conflict clause refers to it (default: `excluded."c"`).
    func insertedValue(ofQuoted quotedColumn: String) -> String
    /// Whether `error`, thrown by an upsert whose clause carries a condition (see
    /// ``upsertClause(conflictColumns:updateColumns:where:)``), is the engine's way of
    /// refusing a row that fails it (default: `false`, for engines whose upsert leaves such
    /// a row alone and reports no change).
    func isUpsertRefusal(_ error: any Error, conflictColumns: [String]) -> Bool
    /// A predicate `(key columns) IN (…)` over `keys`, any number of them, with its
    /// arguments; `types` are the columns' declared types (as the catalog writes them).
    func keyListPredicate(columns: [String], types: [String], keys: [[DatabaseValue]]) throws -> SQL
    /// What follows a `SELECT` of one row that is about to be updated in the same
    /// transaction (a row lock where the engine takes one).
    var lockForUpdateClause: String { get }
    /// Whether an insert reads its new key back with `RETURNING` (else: the rowid, or the
    /// engine's last insert id).
    var returnsInsertedKeys: Bool { get }
    /// Whether `NULL` sorts before every value in an ascending order (SQLite), or after
    /// (PostgreSQL); descending orders put it at the other end. Keyset paging follows
    /// the engine's own order, which its indexes serve.
    var sortsNullsFirst: Bool { get }
    /// Whether the planner reads a row-value comparison, `(a, id) > (?, ?)`, as one index
    /// range (SQLite, PostgreSQL). Where it does not (MariaDB scans the index from its
    /// start), keyset paging writes the expanded form, led by `a >= ?` (default: `true`).
    var seeksWithRowValues: Bool { get }
    /// How the engine reads SQL text (literals, quoted names, comments): every reading it
    /// may apply, where a session setting changes it. The scope check encloses a condition
    /// only when every one of them reads it the same way.
    var lexicons: [SQLLexicon] { get }

    // MARK: Tables (DDL) and what the catalog says of them

    /// The column type a table definition's column of SQLite affinity `affinity` gets
    /// (`INTEGER`, `REAL`, `TEXT`, `BLOB`, `NUMERIC`); `inKey` when the column is part of a
    /// key or index (an engine that cannot index long text gives it a bounded type).
    func columnType(affinity: String, inKey: Bool) -> String
    /// A constant as an SQL literal in a `DEFAULT` clause (default: ``sqlLiteral(_:)``).
    func defaultLiteral(_ value: DatabaseValue) -> String
    /// What follows a table's single integer primary-key column that the database fills
    /// in (SQLite's rowid alias, an identity column), `autoincrement` when keys are never
    /// reused.
    func generatedKeyClause(autoincrement: Bool) -> String
    /// Whether tables may be declared `WITHOUT ROWID` (SQLite); elsewhere the clause is
    /// left out.
    var declaresWithoutRowID: Bool { get }
    /// A collation's name in this engine's DDL, or a thrown
    /// ``DALError/Code/unsupportedOperation`` when the engine has none like it.
    func collation(_ name: String, table: String) throws -> String
    /// The names of the tables, sorted (the engine's own left out).
    func tableNames(_ db: Database) throws -> [String]
    /// The tables, views and other relations the generator writes entities for when given
    /// no list, sorted (the engine's own and SwiftDAL's migration history left out).
    func schemaObjectNames(_ db: Database) throws -> [String]
    /// The partitions of partitioned tables, which ``schemaObjectNames(_:)`` leaves out
    /// (their rows are read and written through their table), each with the table it is
    /// a partition of, sorted by name; none on an engine whose partitions are not tables.
    func partitions(_ db: Database) throws -> [(name: String, table: String)]
    /// The indexes and foreign keys of `table`, whose `columns` are already read.
    func describe(table: String, columns: [ColumnInfo], _ db: Database) throws -> TableDescription
    /// The column of `description`'s single-column primary key that the database fills in
    /// (rowid alias, identity, serial, auto-increment), if there is one.
    func generatedKeyColumn(of description: TableDescription) -> String?
    /// The Swift type the generator writes for a column declared as `declaredType` (as the
    /// catalog writes it), and whether the type needs Foundation.
    func swiftType(forDeclaredType declaredType: String) -> (name: String, needsFoundation: Bool)

    /// The statements of `script` as the engine splits it, each from its first word; `nil`
    /// when the text cannot be read as the server reads it. Used to refuse transaction
    /// control inside a transaction SwiftDAL runs. By default, as
    /// ``TransactionControl/statements(in:lexicon:)`` reads it under the engine's first
    /// lexicon (the session settings SwiftDAL sets).
    func scriptStatements(_ script: String) -> [String]?
}

extension EngineDialect {
    package func quote(_ identifier: String) -> String { quoteIdentifier(identifier) }

    package func partitions(_ db: Database) throws -> [(name: String, table: String)] { [] }

    package func scriptStatements(_ script: String) -> [String]? {
        guard let lexicon = lexicons.first else { return [script] }
        return TransactionControl.statements(in: script, lexicon: lexicon)
    }

    package var placeholder: String { "?" }

    package var seeksWithRowValues: Bool { true }

    package var rollsBackDDL: Bool { true }

    package func isUpsertRefusal(_ error: any Error, conflictColumns: [String]) -> Bool { false }

    package func insertedValue(ofQuoted quotedColumn: String) -> String { "excluded.\(quotedColumn)" }

    package func defaultLiteral(_ value: DatabaseValue) -> String { sqlLiteral(value) }

    package func upsertClause(conflictColumns: [String], updateColumns: [String], where condition: String?)
        -> String
    {
        let target = conflictColumns.map(quote).joined(separator: ", ")
        guard !updateColumns.isEmpty else { return "ON CONFLICT(\(target)) DO NOTHING" }
        let assignments = updateColumns.map { "\(quote($0)) = excluded.\(quote($0))" }.joined(separator: ", ")
        return "ON CONFLICT(\(target)) DO UPDATE SET \(assignments)" + (condition.map { " WHERE \($0)" } ?? "")
    }

    /// `(columns) IN ([VALUES] (?, …), …)` with every value bound, at most `limit` values
    /// (the engine's limit on a statement's parameters).
    package func valuesListPredicate(columns: [String], keys: [[DatabaseValue]], limit: Int, valuesKeyword: Bool)
        throws -> SQL
    {
        let width = columns.count
        guard keys.count * width <= limit else {
            throw DALError(.invalidValue, "findByIds binds at most \(limit) key values at once on this engine")
        }
        let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        let list = Array(repeating: tuple, count: keys.count).joined(separator: ", ")
        let names = columns.map(quote).joined(separator: ", ")
        // Appended, not `StatementArguments(values:)`: a call of that initializer from
        // inside this module made the optimizer specialize it, and the public entry point
        // every insert takes grew by ~70 instructions (W1, callgrind).
        var arguments = StatementArguments()
        arguments.append(converted: keys.flatMap { $0 })
        return SQL(sql: "(\(names)) IN (\(valuesKeyword ? "VALUES " : "")\(list))", arguments: arguments)
    }
}

/// Reading the text of query plans, for the engines' dialects.
package enum QueryPlanText {
    /// The first name in `text`: a double-quoted identifier (its `""` read as `"`), or a
    /// word up to a space.
    package static func firstName(in text: Substring) -> String? {
        if text.hasPrefix("\"") {
            var name = ""
            var index = text.index(after: text.startIndex)
            while index < text.endIndex {
                let character = text[index]
                index = text.index(after: index)
                if character == "\"" {
                    guard index < text.endIndex, text[index] == "\"" else { return name }
                    index = text.index(after: index)
                }
                name.append(character)
            }
            return nil
        }
        let word = text.prefix(while: { $0 != " " })
        return word.isEmpty ? nil : String(word)
    }
}

extension Database {
    /// The SQL dialect of this connection's engine (see ``EngineDialect``).
    package var dialect: any EngineDialect { engine.dialect }
}
