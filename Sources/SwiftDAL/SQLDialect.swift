import SwiftDALConnection

/// The one seam between BaseDAL's SQL generation and a database engine: identifier
/// quoting, parameter placeholders, upsert syntax, key lists, row locks and the new
/// key of an insert. Everything else BaseDAL writes is the same SQL on every engine
/// (PostgreSQL's connection layer turns `?` into `$n`).
protocol SQLDialect: Sendable {
    /// A quoted identifier.
    func quote(_ identifier: String) -> String
    /// The placeholder for the next bound parameter.
    var placeholder: String { get }
    /// The clause that turns an `INSERT` into an atomic upsert.
    func upsertClause(conflictColumns: [String], updateColumns: [String]) -> String
    /// A predicate `(key columns) IN (…)` over `keys`, and its arguments; `nil` when the
    /// keys cannot be bound in this dialect's compact form.
    /// `(columns) IN (…keys…)`, for any number of keys; `types` are the columns' declared
    /// types (as the catalog writes them).
    func keyListPredicate(columns: [String], types: [String], keys: [[SQLiteValue]]) throws -> SQL
    /// What follows a `SELECT` of one row that is about to be updated in the same
    /// transaction (a row lock where the engine takes one).
    var lockForUpdateClause: String { get }
    /// Whether an insert reads its new key back with `RETURNING` (else: the rowid).
    var returnsInsertedKeys: Bool { get }
    /// Whether `NULL` sorts before every value in an ascending order (SQLite), or after
    /// (PostgreSQL); descending orders put it at the other end. Keyset paging follows
    /// the engine's own order, which its indexes serve.
    var sortsNullsFirst: Bool { get }
    /// How the engine reads SQL text (literals, quoted names, comments): every reading it
    /// may apply, where a session setting changes it.
    var lexicons: [SQLLexicon] { get }
}

extension SQLDialect {
    func quote(_ identifier: String) -> String { quoteIdentifier(identifier) }

    var placeholder: String { "?" }

    func upsertClause(conflictColumns: [String], updateColumns: [String]) -> String {
        let target = conflictColumns.map(quote).joined(separator: ", ")
        guard !updateColumns.isEmpty else { return "ON CONFLICT(\(target)) DO NOTHING" }
        let assignments = updateColumns.map { "\(quote($0)) = excluded.\(quote($0))" }.joined(separator: ", ")
        return "ON CONFLICT(\(target)) DO UPDATE SET \(assignments)"
    }

    /// `(columns) IN ([VALUES] (?, …), …)` with every value bound.
    func valuesListPredicate(columns: [String], keys: [[SQLiteValue]], limit: Int, valuesKeyword: Bool) throws -> SQL {
        let width = columns.count
        guard keys.count * width <= limit else {
            throw DALError(.invalidValue, "findByIds binds at most \(limit) key values at once on this engine")
        }
        let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        let list = Array(repeating: tuple, count: keys.count).joined(separator: ", ")
        let names = columns.map(quote).joined(separator: ", ")
        return SQL(
            sql: "(\(names)) IN (\(valuesKeyword ? "VALUES " : "")\(list))",
            arguments: StatementArguments(values: keys.flatMap { $0 }))
    }
}

/// SQLite: keys travel as one JSON array (any number, one cached statement) when JSON
/// carries them exactly, else as a bound `VALUES` list.
struct SQLiteDialect: SQLDialect {
    var lexicons: [SQLLexicon] { [SQLLexicon(.sqlite)] }

    func keyListPredicate(columns: [String], types: [String], keys: [[SQLiteValue]]) throws -> SQL {
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

    var lockForUpdateClause: String { "" }
    var returnsInsertedKeys: Bool { false }
    var sortsNullsFirst: Bool { true }
}

/// PostgreSQL: keys as a bound list (the server infers each parameter's type from the
/// key column); rows read before an update are locked (`FOR UPDATE`); new keys come back
/// through `RETURNING`.
struct PostgresDialect: SQLDialect {
    /// Standard strings, and backslash escapes in every string: SwiftDAL's sessions set
    /// `standard_conforming_strings` on, but a session behind PgBouncer or a `SET` in a
    /// transaction may turn it off.
    var lexicons: [SQLLexicon] {
        [SQLLexicon(.postgres), SQLLexicon(.postgres, backslashEscapesInEveryString: true)]
    }

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

/// The dialect of `engine`.
func dialect(for engine: DatabaseEngine) -> any SQLDialect {
    engine == .postgres ? PostgresDialect() : SQLiteDialect()
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
