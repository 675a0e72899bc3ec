import Foundation

extension Database {
    /// Executes one statement and returns the number of rows it changed.
    ///
    /// For example, `let changed = try db.execute("UPDATE users SET age = \(age) WHERE id = \(id)")`.
    @discardableResult
    public func execute(_ query: SQL) throws -> Int {
        if let changed = try stepping?.execute(query) { return changed }
        engineChanges = try run(query) { _ in }
        return engineChanges
    }

    /// Executes `count` statements, the one at each position made by `query` as it is
    /// reached, one after the other, calling `row` with each row they return (an `INSERT …
    /// RETURNING`'s) and the statement's position; returns the rows they changed in all.
    ///
    /// Inside a PostgreSQL transaction they are pipelined: sent without waiting for each
    /// one's result, and their results read a thousand at a time (a round trip per thousand
    /// statements, not per statement). On MariaDB, runs of one-row `INSERT`s of one text go
    /// as bulk executions, a thousand rows a round trip. The first failing statement's
    /// engine error is thrown with its position (``DatabaseError/batchIndex``); on
    /// PostgreSQL the transaction is then aborted, and the caller rolls it back (as
    /// `inTransaction` does).
    @usableFromInline
    package func executeBatch(
        count: Int, _ query: (Int) throws -> SQL, row: (Int, RowView) throws -> Void = { _, _ in }
    ) throws -> Int {
        try access.check()
        guard let observation = callObservation else {
            engineChanges = try connection.runBatch(count: count, query, row: row, ended: nil)
            return engineChanges
        }
        engineChanges = try connection.runBatch(count: count, query, row: row) { sql, sent, rowCount, error in
            observation.report(sql: sql, since: sent, rowCount: rowCount, error: error)
        }
        return engineChanges
    }

    /// Loads `count` rows into `table` (quoted) through the engine's bulk path (`COPY …
    /// FROM STDIN` on PostgreSQL), `columns` (unquoted names) each row's, `row(index,
    /// &values)` filling a row's values in that order; returns the rows loaded, or `nil`
    /// when the engine has no bulk path (SQLite) or its bulk path would not do what
    /// `INSERT`s do for this table and these columns (`blobColumns`: the positions where
    /// some row holds bytes): then nothing was sent. Call it inside a transaction.
    package func copyRows(
        into table: String, columns: [String], blobColumns: Set<Int>, count: Int,
        _ row: (Int, inout [DatabaseValue]) throws -> Void
    ) throws -> Int? {
        try access.check()
        guard connection.hasBulkPath else { return nil }
        let start = MonotonicTime.now
        do {
            guard
                let loaded = try connection.copyRows(
                    into: table, columns: columns, blobColumns: blobColumns, count: count, row)
            else { return nil }
            engineChanges = loaded
            callObservation?.report(sql: Self.copySQL(table, columns), since: start, rowCount: loaded, error: nil)
            return loaded
        } catch {
            callObservation?.report(sql: Self.copySQL(table, columns), since: start, rowCount: 0, error: error)
            throw error
        }
    }

    /// The statement of a bulk load of `columns` (unquoted) into `table` (quoted).
    package static func copySQL(_ table: String, _ columns: [String]) -> String {
        "COPY \(table) (\(columns.map(quoteIdentifier).joined(separator: ", "))) FROM STDIN"
    }

    /// Executes one statement of SQL text with explicit arguments; returns the number
    /// of rows it changed.
    ///
    /// For example, `try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])`.
    @discardableResult
    public func execute(sql: String, arguments: StatementArguments = StatementArguments()) throws -> Int {
        try execute(SQL(sql: sql, arguments: arguments))
    }

    /// Runs a script of several statements separated by `;` (a schema file), in order,
    /// without arguments. The first failing statement stops the script and its error
    /// names that statement. Wrap it in ``inTransaction(_:isolation:_:)`` to make it atomic;
    /// inside a transaction SwiftDAL runs, a script that would end or start one (`COMMIT`,
    /// `ROLLBACK`, `BEGIN`…) is refused before any of it is sent.
    ///
    /// For example, `try db.executeScript(String(contentsOfFile: "schema.sql", encoding: .utf8))`.
    public func executeScript(_ script: String) throws {
        try access.check()
        try checkNoTransactionControl(inScript: script)
        guard let observation = callObservation else { return try connection.executeScript(script) }
        let start = MonotonicTime.now
        do {
            try connection.executeScript(script)
            observation.report(sql: script, since: start, rowCount: 0, error: nil)
        } catch {
            observation.report(sql: script, since: start, rowCount: 0, error: error)
            throw error
        }
    }

    /// All rows of `query`, copied.
    ///
    /// For example, `let rows = try db.fetchAll("SELECT * FROM users WHERE age > \(18)")`.
    public func fetchAll(_ query: SQL) throws -> [Row] {
        if let rows = try stepping?.fetchRows(query) { return rows }
        return try engineFetchAll(query) { try $0.copy() }
    }

    /// All rows of SQL text with explicit arguments.
    ///
    /// For example, `try db.fetchAll(sql: "SELECT * FROM users WHERE name = :n", arguments: ["n": "Ann"])`.
    public func fetchAll(sql: String, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try fetchAll(SQL(sql: sql, arguments: arguments))
    }

    /// The first row of `query`, or `nil`.
    ///
    /// For example, `let row = try db.fetchOne("SELECT * FROM users WHERE id = \(id)")`.
    public func fetchOne(_ query: SQL) throws -> Row? {
        if stepping != nil { return try stepping?.fetchFirstRow(query) }
        return try engineFetchFirst(query) { try $0.copy() }
    }

    /// The first row of `query` mapped by `transform` (reading the row in place), or `nil`.
    ///
    /// For example, `let name = try db.fetchFirst("SELECT name FROM t") { try $0.decode(String.self, at: 0) }`.
    @inlinable
    public func fetchFirst<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> T? {
        if let statement = try stepping?.start(query) {
            return try finish(statement) { statement, result in
                try statement.step(query).map { try transform(RowView(result: result, row: $0)) }
            }
        }
        return try engineFetchFirst(query, transform)
    }

    /// Every row of `query` mapped by `transform` (reading each row in place, no copy).
    ///
    /// For example, `let ids = try db.fetchAll("SELECT id FROM t") { try $0.decode(Int64.self, at: 0) }`.
    @inlinable
    public func fetchAll<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> [T] {
        try fetchAll(query, expectedCount: 0, transform)
    }

    /// ``fetchAll(_:_:)`` with room reserved for `expectedCount` results (a `LIMIT`).
    @inlinable
    package func fetchAll<T>(_ query: SQL, expectedCount: Int, _ transform: (RowView) throws -> T) throws -> [T] {
        if let statement = try stepping?.start(query) {
            return try finish(statement) { statement, result in
                var results = [T]()
                results.reserveCapacity(min(expectedCount, 1024))
                while let row = try statement.step(query) {
                    results.append(try transform(RowView(result: result, row: row)))
                }
                return results
            }
        }
        return try engineFetchAll(query, transform)
    }

    /// The first column of the first row converted to `T`; `nil` when there is no row
    /// or the value is `NULL`.
    ///
    /// For example, `let count = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users")`.
    @inlinable
    public func fetchScalar<T: DatabaseValueConvertible>(_ type: T.Type, _ query: SQL) throws -> T? {
        if stepping == nil {
            // Read through the type's typed path, as a row's columns are: no value in
            // between (callgrind, PostgreSQL W7 and W6: a count or an existence check).
            return try engineFetchFirst(query) { try T.decodeOptionalColumn(of: $0, at: 0) } ?? nil
        }
        guard let value = try firstValue(query), !value.isNull else { return nil }
        guard let converted = T(databaseValue: value) else {
            throw try scalarConversionFailure(value, query, type: T.self)
        }
        return converted
    }

    /// The first column of every row converted to `T`.
    ///
    /// For example, `let names = try db.fetchColumn(String.self, "SELECT name FROM users")`.
    @inlinable
    public func fetchColumn<T: DatabaseValueConvertible>(_ type: T.Type, _ query: SQL) throws -> [T] {
        var converted = [T]()
        for value in try firstColumn(query) {
            guard let item = T(databaseValue: value) else {
                throw try scalarConversionFailure(value, query, type: T.self)
            }
            converted.append(item)
        }
        return converted
    }

    /// The first column of the first row, or `nil` when there is no row.
    @usableFromInline
    func firstValue(_ query: SQL) throws -> DatabaseValue? {
        if stepping != nil { return try stepping?.firstValue(query) }
        return try engineFetchFirst(query) { try $0.value(at: 0) }
    }

    /// The first column of every row.
    @usableFromInline
    func firstColumn(_ query: SQL) throws -> [DatabaseValue] {
        if let column = try stepping?.firstColumn(query) { return column }
        return try engineFetchAll(query) { try $0.value(at: 0) }
    }

    /// The error for a first-column value that does not convert to `type`.
    @usableFromInline
    func scalarConversionFailure(_ value: DatabaseValue, _ query: SQL, type: Any.Type) throws -> DALError {
        let name = try stepping?.columnNames(of: query.sql).first ?? "column 0"
        return conversionFailure(value, index: 0, name: name, type: type, sql: query.sql)
    }

    /// Calls `body` with a view of each row (no copy); the statement is reset when
    /// `body` throws, so an error mid-iteration leaves nothing open.
    ///
    /// For example, `try db.forEachRow("SELECT id FROM users") { ids.append(try $0[0]) }`.
    @inlinable
    public func forEachRow(_ query: SQL, _ body: (RowView) throws -> Void) throws {
        if let statement = try stepping?.start(query) {
            return try finish(statement) { statement, result in
                while let row = try statement.step(query) { try body(RowView(result: result, row: row)) }
            }
        }
        engineChanges = try run(query, body)
    }

    /// The number of rows changed by the last statement (`sqlite3_changes64`).
    ///
    /// For example, `try db.execute("DELETE FROM t"); print(try db.changesCount)`.
    public var changesCount: Int {
        get throws {
            if let changes = try stepping?.changes { return changes }
            try access.check()
            return engineChanges
        }
    }

    /// Whether a transaction is open on this connection (`false` for a closed
    /// connection, and for a thread that does not hold it).
    ///
    /// For example, inside `write { db in … }` it is `true`.
    public var isInTransaction: Bool {
        guard access.isUsable else { return false }
        return connection.isInTransaction
    }

    // MARK: A server engine's connection

    /// Runs `query` on the engine connection, telling the observer (if any) of it.
    @usableFromInline
    func run(_ query: SQL, _ body: (RowView) throws -> Void) throws -> Int {
        try checkNotTransactionControl(query)
        try access.check()
        guard let observation = callObservation else { return try connection.run(query, body) }
        let start = MonotonicTime.now
        do {
            let count = try connection.run(query, body)
            observation.report(sql: query.sql, since: start, rowCount: count, error: nil)
            return count
        } catch {
            observation.report(sql: query.sql, since: start, rowCount: 0, error: error)
            throw error
        }
    }

    /// Every row of `query` on the engine connection, mapped by `transform` (inlinable:
    /// specialized for each entity type, like SQLite's loop).
    @inlinable
    func engineFetchAll<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> [T] {
        var results = [T]()
        engineChanges = try run(query) { row in
            // The whole result is in memory: one allocation for the array, not a doubling
            // and a copy per power of two (W2 on PostgreSQL).
            if results.isEmpty { results.reserveCapacity(row.rows.rowCount) }
            results.append(try transform(row))
        }
        return results
    }

    /// The first row of `query` on the engine connection, mapped by `transform`.
    @inlinable
    func engineFetchFirst<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> T? {
        var first: T?
        // Through a pointer: the closure's writes to a captured variable were checked for
        // exclusivity at run time (a thread-local lookup per call, callgrind, W3a).
        try withUnsafeMutablePointer(to: &first) { first in
            engineChanges = try run(query) { row in
                if first.pointee == nil { first.pointee = try transform(row) }
            }
        }
        return first
    }
}
