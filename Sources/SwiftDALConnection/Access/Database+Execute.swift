internal import CSwiftDALSQLite
import Foundation

/// What `sqlite3_last_insert_rowid` is set to before an insert: still there afterwards
/// means that the insert produced no rowid (a rowid of `Int64.min` is never assigned).
let noRowIDSentinel = Int64.min

extension Database {
    /// Runs `query` on its cached statement: binds, calls `body`, resets on every path.
    @usableFromInline
    func withStatement<T>(_ query: SQL, _ body: (Statement) throws -> T) throws -> T {
        try cachedStatement(query.sql).withBindings(query.arguments, body)
    }

    /// Executes one statement and returns the number of rows it changed.
    ///
    /// For example, `let changed = try db.execute("UPDATE users SET age = \(age) WHERE id = \(id)")`.
    @discardableResult
    public func execute(_ query: SQL) throws -> Int {
        if let engine = try checkedEngine() {
            engineChanges = try run(query, on: engine) { _ in }
            return engineChanges
        }
        return try withStatement(query) { statement in
            while try statement.step(arguments: query.arguments) {}
            return Int(sqlite3_changes64(try openHandle()))
        }
    }

    /// Executes `count` statements, the one at each position made by `query` as it is
    /// reached, one after the other, calling `row` with each row they return (an `INSERT …
    /// RETURNING`'s) and the statement's position; returns the rows they changed in all.
    ///
    /// Inside a PostgreSQL transaction they are pipelined: sent without waiting for each
    /// one's result, and their results read a thousand at a time (a round trip per thousand
    /// statements, not per statement). The first failing statement's engine error is thrown
    /// with its position (``DatabaseError/batchIndex``); on PostgreSQL the transaction is then
    /// aborted, and the caller rolls it back (as `inTransaction` does).
    @usableFromInline
    package func executeBatch(
        count: Int, _ query: (Int) throws -> SQL, row: (Int, RowView) throws -> Void = { _, _ in }
    ) throws -> Int {
        if let engine = try checkedEngine() {
            guard let observation = access.observation else {
                engineChanges = try engine.runBatch(count: count, query, row: row, ended: nil)
                return engineChanges
            }
            engineChanges = try engine.runBatch(count: count, query, row: row) { sql, sent, rowCount, error in
                observation.report(sql: sql, since: sent, rowCount: rowCount, error: error)
            }
            return engineChanges
        }
        var changed = 0
        for index in 0..<count {
            let statement = try query(index)
            do {
                try forEachRow(statement) { try row(index, $0) }
                changed += Int(sqlite3_changes64(try openHandle()))
            } catch var error as SQLiteError {
                error.batchIndex = index
                throw error
            }
        }
        return changed
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
        guard let engine = try checkedEngine() else { return nil }
        let start = MonotonicTime.now
        do {
            guard
                let loaded = try engine.copyRows(
                    into: table, columns: columns, blobColumns: blobColumns, count: count, row)
            else { return nil }
            engineChanges = loaded
            access.observation?.report(sql: Self.copySQL(table, columns), since: start, rowCount: loaded, error: nil)
            return loaded
        } catch {
            access.observation?.report(sql: Self.copySQL(table, columns), since: start, rowCount: 0, error: error)
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

    /// Executes an `INSERT` of one row and returns the new row's rowid.
    ///
    /// Throws ``DALError/Code/noRowID`` when the statement produced no rowid: an insert
    /// into a `WITHOUT ROWID` table or a view, one that inserted nothing (`OR IGNORE`),
    /// or one that inserted several rows. (`sqlite3_last_insert_rowid` would then still
    /// hold an earlier insert's rowid, maybe of another table.) The statement has run
    /// when this error is thrown: inside a transaction, roll it back if that matters.
    ///
    /// For example, `let id = try db.insert("INSERT INTO users(name) VALUES (\(name))")`.
    @discardableResult
    public func insert(_ query: SQL) throws -> Int64 {
        if let engine = try checkedEngine() {
            throw DALError(
                .unsupportedOperation,
                "\(engine.engine) has no rowid: add RETURNING to the INSERT and read it with fetchScalar",
                sql: query.sql)
        }
        let handle = try openHandle()
        sqlite3_set_last_insert_rowid(handle, noRowIDSentinel)
        let changed = try execute(query)
        let rowID = sqlite3_last_insert_rowid(handle)
        guard changed == 1, rowID != noRowIDSentinel else {
            throw DALError(
                .noRowID,
                changed == 1
                    ? "the INSERT produced no rowid (a WITHOUT ROWID table, or a view)"
                    : "the INSERT inserted \(changed) rows; insert(_:) returns the rowid of exactly one",
                sql: query.sql)
        }
        return rowID
    }

    /// Runs a script of several statements separated by `;` (a schema file), in order,
    /// without arguments. The first failing statement stops the script and its error
    /// names that statement. Wrap it in ``inTransaction(_:isolation:_:)`` to make it atomic.
    ///
    /// For example, `try db.executeScript(String(contentsOfFile: "schema.sql", encoding: .utf8))`.
    public func executeScript(_ script: String) throws {
        if let engine = try checkedEngine() {
            guard let observation = access.observation else { return try engine.executeScript(script) }
            let start = MonotonicTime.now
            do {
                try engine.executeScript(script)
                observation.report(sql: script, since: start, rowCount: 0, error: nil)
            } catch {
                observation.report(sql: script, since: start, rowCount: 0, error: error)
                throw error
            }
            return
        }
        let handle = try openHandle()
        var utf8 = script
        try utf8.withUTF8 { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { chars in
                guard var cursor = chars.baseAddress else { return }
                let end = cursor + chars.count
                while cursor < end {
                    var statement: OpaquePointer?
                    var tail: UnsafePointer<CChar>?
                    let code = sqlite3_prepare_v2(handle, cursor, Int32(end - cursor), &statement, &tail)
                    let text = String(
                        decoding: UnsafeRawBufferPointer(start: cursor, count: (tail ?? end) - cursor), as: UTF8.self
                    )
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                    guard code == SQLITE_OK else {
                        throw SQLiteError(connection: handle, code: code, sql: text)
                    }
                    defer { sqlite3_finalize(statement) }
                    if let statement {
                        let start = access.observation == nil ? nil : MonotonicTime.now
                        var rows = 0
                        var stepCode = sqlite3_step(statement)
                        while stepCode == SQLITE_ROW {
                            rows += 1
                            stepCode = sqlite3_step(statement)
                        }
                        let failure =
                            stepCode == SQLITE_DONE ? nil : SQLiteError(connection: handle, code: stepCode, sql: text)
                        if let start, let observation = access.observation {
                            let count = Statement.observedRowCount(statement, sql: text, rowsProduced: rows)
                            observation.report(sql: text, since: start, rowCount: count, error: failure)
                        }
                        if let failure { throw failure }
                    }
                    guard let tail, tail > cursor else { break }
                    cursor = tail
                }
            }
        }
    }

    /// All rows of `query`, copied.
    ///
    /// For example, `let rows = try db.fetchAll("SELECT * FROM users WHERE age > \(18)")`.
    public func fetchAll(_ query: SQL) throws -> [Row] {
        if engineConnection != nil { return try engineFetchAll(query) { try $0.copy() } }
        return try withStatement(query) { statement in
            var rows = [Row]()
            while try statement.step(arguments: query.arguments) {
                rows.append(try statement.copyRow())
            }
            return rows
        }
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
        if engineConnection != nil { return try engineFetchAll(query) { try $0.copy() }.first }
        return try withStatement(query) { statement in
            try statement.step(arguments: query.arguments) ? try statement.copyRow() : nil
        }
    }

    /// The first row of `query` mapped by `transform` (reading the row in place), or `nil`.
    ///
    /// For example, `let name = try db.fetchFirst("SELECT name FROM t") { try $0.decode(String.self, at: 0) }`.
    @inlinable
    public func fetchFirst<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> T? {
        if engineConnection != nil { return try engineFetchFirst(query, transform) }
        return try withStatement(query) { statement in
            try statement.step(arguments: query.arguments) ? try transform(RowView(statement: statement)) : nil
        }
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
        if engineConnection != nil { return try engineFetchAll(query, transform) }
        return try withStatement(query) { statement in
            var results = [T]()
            results.reserveCapacity(min(expectedCount, 1024))
            while try statement.step(arguments: query.arguments) {
                results.append(try transform(RowView(statement: statement)))
            }
            return results
        }
    }

    /// The first column of the first row converted to `T`; `nil` when there is no row
    /// or the value is `NULL`.
    ///
    /// For example, `let count = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users")`.
    @inlinable
    public func fetchScalar<T: DatabaseValueConvertible>(_ type: T.Type, _ query: SQL) throws -> T? {
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
        if engineConnection != nil { return try engineFetchFirst(query) { try $0.value(at: 0) } }
        return try withStatement(query) { statement in
            try statement.step(arguments: query.arguments) ? try statement.value(at: 0) : nil
        }
    }

    /// The first column of every row.
    @usableFromInline
    func firstColumn(_ query: SQL) throws -> [DatabaseValue] {
        if engineConnection != nil { return try engineFetchAll(query) { try $0.value(at: 0) } }
        return try withStatement(query) { statement in
            var values = [DatabaseValue]()
            while try statement.step(arguments: query.arguments) {
                values.append(try statement.value(at: 0))
            }
            return values
        }
    }

    /// The error for a first-column value that does not convert to `type`.
    @usableFromInline
    func scalarConversionFailure(_ value: DatabaseValue, _ query: SQL, type: Any.Type) throws -> DALError {
        let name =
            engineConnection == nil
            ? try cachedStatement(query.sql).columnNames.first ?? "column 0" : "column 0"
        return DALError(
            .conversionFailed, "column 0 (\(name)) holds \(value.storageClass), which does not convert to \(type)",
            column: name, sql: query.sql)
    }

    /// Calls `body` with a view of each row (no copy); the statement is reset when
    /// `body` throws, so an error mid-iteration leaves nothing open.
    ///
    /// For example, `try db.forEachRow("SELECT id FROM users") { ids.append(try $0[0]) }`.
    @inlinable
    public func forEachRow(_ query: SQL, _ body: (RowView) throws -> Void) throws {
        if engineConnection != nil { return try engineForEach(query, body) }
        try withStatement(query) { statement in
            while try statement.step(arguments: query.arguments) {
                try body(RowView(statement: statement))
            }
        }
    }

    /// A cursor that streams the rows of `query`. See ``RowCursor``.
    ///
    /// For example, `let cursor = try db.makeCursor("SELECT * FROM events")`.
    public func makeCursor(_ query: SQL) throws -> RowCursor {
        if let engine = try checkedEngine() {
            throw DALError(
                .unsupportedOperation, "cursors are not available on \(engine.engine) yet; use forEachRow",
                sql: query.sql)
        }
        let statement = try cachedStatement(query.sql)
        guard statement.isReadOnly else {
            // A write's changes are made at its first step and committed (in autocommit) when
            // the statement halts, which for an abandoned cursor is a reset whose failure
            // could not be reported: a cursor only ever reads.
            throw DALError(
                .invalidSQL,
                "a cursor streams the rows of a query; run a statement that writes (even with RETURNING) "
                    + "with execute, fetchAll or forEachRow", sql: query.sql)
        }
        return try RowCursor(database: self, statement: statement, arguments: query.arguments)
    }

    /// The rowid of the last row inserted on this connection (`sqlite3_last_insert_rowid`),
    /// as a full 64-bit value. It is not reset by statements that insert nothing, and a
    /// `WITHOUT ROWID` table has no rowid: prefer ``insert(_:)``'s result, or `RETURNING`.
    ///
    /// For example, `try db.execute("INSERT …"); let id = try db.lastInsertedRowID`.
    public var lastInsertedRowID: Int64 {
        get throws {
            if let engine = try checkedEngine() {
                throw DALError(.unsupportedOperation, "\(engine.engine) has no rowid: use INSERT … RETURNING")
            }
            return sqlite3_last_insert_rowid(try openHandle())
        }
    }

    /// The number of rows changed by the last statement (`sqlite3_changes64`).
    ///
    /// For example, `try db.execute("DELETE FROM t"); print(try db.changesCount)`.
    public var changesCount: Int {
        get throws {
            if try checkedEngine() != nil { return engineChanges }
            return Int(sqlite3_changes64(try openHandle()))
        }
    }

    /// Whether a transaction is open on this connection (`false` for a closed
    /// connection, and for a thread that does not hold it).
    ///
    /// For example, inside `write { db in … }` it is `true`.
    public var isInTransaction: Bool {
        guard access.isUsable else { return false }
        if let engineConnection { return engineConnection.isInTransaction }
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    // MARK: Another engine's connection

    /// The engine connection, after the access check; `nil` for SQLite.
    @usableFromInline @inline(__always)
    func checkedEngine() throws -> (any EngineConnection)? {
        guard let engineConnection else { return nil }
        try access.check()
        return engineConnection
    }

    /// Runs `query` on the engine connection, telling the observer (if any) of it.
    @usableFromInline
    func run(_ query: SQL, on engine: any EngineConnection, _ body: (RowView) throws -> Void) throws -> Int {
        guard let observation = access.observation else { return try engine.run(query, body) }
        let start = MonotonicTime.now
        do {
            let count = try engine.run(query, body)
            observation.report(sql: query.sql, since: start, rowCount: count, error: nil)
            return count
        } catch {
            observation.report(sql: query.sql, since: start, rowCount: 0, error: error)
            throw error
        }
    }

    /// Calls `body` with each row of `query` on the engine connection.
    @usableFromInline
    func engineForEach(_ query: SQL, _ body: (RowView) throws -> Void) throws {
        guard let engine = try checkedEngine() else { return }
        engineChanges = try run(query, on: engine, body)
    }

    /// Every row of `query` on the engine connection, mapped by `transform` (inlinable:
    /// specialized for each entity type, like SQLite's loop).
    @inlinable
    func engineFetchAll<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> [T] {
        guard let engine = try checkedEngine() else { return [] }
        var results = [T]()
        engineChanges = try run(query, on: engine) { row in
            // The whole result is in memory: one allocation for the array, not a doubling
            // and a copy per power of two (W2 on PostgreSQL).
            if results.isEmpty { results.reserveCapacity(row.engineResult.rows.rowCount) }
            results.append(try transform(row))
        }
        return results
    }

    /// The first row of `query` on the engine connection, mapped by `transform`.
    @inlinable
    func engineFetchFirst<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> T? {
        guard let engine = try checkedEngine() else { return nil }
        var first: T?
        // Through a pointer: the closure's writes to a captured variable were checked for
        // exclusivity at run time (a thread-local lookup per call, callgrind, W3a).
        try withUnsafeMutablePointer(to: &first) { first in
            engineChanges = try run(query, on: engine) { row in
                if first.pointee == nil { first.pointee = try transform(row) }
            }
        }
        return first
    }
}

extension Statement {
    /// Executes this statement with `arguments`; returns the number of changed rows.
    ///
    /// For example, `try insert.execute(arguments: ["Ann", 31])`.
    @discardableResult
    public func execute(arguments: StatementArguments = StatementArguments()) throws -> Int {
        try checkAccess()
        return try withBindings(arguments) { statement in
            while try statement.step(arguments: arguments) {}
            return Int(sqlite3_changes64(sqlite3_db_handle(handle)))
        }
    }

    /// All rows of this statement with `arguments`, copied.
    ///
    /// For example, `let rows = try select.fetchAll(arguments: [18])`.
    public func fetchAll(arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try checkAccess()
        return try withBindings(arguments) { statement in
            var rows = [Row]()
            while try statement.step(arguments: arguments) { rows.append(try statement.copyRow()) }
            return rows
        }
    }

    /// Calls `body` with a view of each row of this statement with `arguments`.
    ///
    /// For example, `try select.forEachRow(arguments: [18]) { row in … }`.
    public func forEachRow(arguments: StatementArguments = StatementArguments(), _ body: (RowView) throws -> Void)
        throws
    {
        try checkAccess()
        try withBindings(arguments) { statement in
            while try statement.step(arguments: arguments) { try body(RowView(statement: statement)) }
        }
    }
}
