internal import CSwiftDALSQLite
import Foundation
public import SwiftDALConnection
import Synchronization

/// One SQLite connection, as the ``Database`` wrapping it sees it: the embedded engine
/// behind the same seam as the server engines (``EngineConnection``). It owns the handle,
/// the statement cache and the statements of cursors still open.
///
/// Its statements report themselves to the observer as they step and reset
/// (``reportsItsStatements``), and `Database`'s generic reads (`fetchAll`, `fetchFirst`,
/// `forEachRow`) step them in the caller's frame (``start(_:)``, ``SteppingConnection``), so
/// that each row's decoding is specialized for the entity, as SQLite's C loop would be.
@usableFromInline
package final class SQLiteConnection: SteppingConnection {
    /// The handle; `nil` once closed.
    private(set) var handle: OpaquePointer?
    /// The handle, for `sqlite3_interrupt` from another thread (set once; only used while
    /// a call holds the connection, so never after it closes).
    private let interruptibleHandle: OpaquePointer
    /// The file path, or `":memory:"`.
    let path: String
    /// Who may use the connection now (shared with the `Database`).
    let access: ConnectionAccess
    /// The statements of cursors still open in the current access: reset when the
    /// access ends, so that an escaped cursor never pins a snapshot or a lock. Only the
    /// thread holding the connection touches it, never in overlapping accesses: its
    /// exclusivity is not checked at run time (a thread-local lookup on every call).
    @exclusivity(unchecked) private var cursorStatements: [Statement] = []
    private var statementCache: [String: Statement] = [:]
    /// The most recently used cached statement: hot loops run one SQL text again and
    /// again, and comparing a string with itself is O(1), unlike hashing it.
    private var lastStatement: Statement?

    /// How many virtual-machine steps a statement runs between two looks at its call's
    /// stop (``sqliteStopCheck(_:)``): short statements never reach it.
    static let stopCheckInterval: Int32 = 1_000

    /// How many prepared statements a connection keeps; past that the idle ones are
    /// finalized and prepared again on demand.
    static let statementCacheCapacity = 512

    /// Opens (creating if missing, unless `mode` is `.readOnly`) the database at `path`,
    /// with the configuration's busy timeout and value length limit.
    init(path: String, isMemory: Bool, mode: Database.Mode, configuration: Configuration, access: ConnectionAccess)
        throws
    {
        self.path = path
        self.access = access
        try checkNoNUL(path, "database path")
        if let vfsName = configuration.vfsName { try checkNoNUL(vfsName, "VFS name") }
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE
        flags |= mode == .readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        if isMemory { flags |= SQLITE_OPEN_MEMORY }
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, flags, configuration.vfsName)
        guard code == SQLITE_OK, let connection else {
            let error = SQLiteError(connection: connection, code: code, sql: nil)
            sqlite3_close_v2(connection)
            throw SQLiteError(code: error.code, message: "cannot open database at \(path): \(error.message)")
        }
        handle = connection
        interruptibleHandle = connection
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, Int32(clamping: configuration.busyTimeout.clampedMilliseconds))
        // A stop landing after a statement's first step looked at `stopRequested` but
        // before SQLite began running it is lost to `sqlite3_interrupt` alone: SQLite clears
        // its interrupt flag as a statement starts while no other runs (so that an interrupt
        // meant for an earlier statement does not stop the next). The progress handler
        // reads the stop itself every thousand virtual-machine steps, so that such a
        // statement still ends at once (SQLITE_INTERRUPT) instead of running its course.
        sqlite3_progress_handler(
            connection, Self.stopCheckInterval, sqliteStopCheck, Unmanaged.passUnretained(access).toOpaque())
        if let length = configuration.maximumValueLength {
            sqlite3_limit(connection, SQLITE_LIMIT_LENGTH, Int32(clamping: max(1, length)))
        }
    }

    deinit {
        close()
    }

    /// The handle, for the thread that may use it now; throws ``DALError/Code/accessEnded``
    /// on any other thread and once the access is over.
    func openHandle() throws -> OpaquePointer {
        try access.check()
        guard let handle else { throw DALError(.connectionClosed, "the connection to \(path) is closed") }
        return handle
    }

    // MARK: Statements

    /// The cached statement for `sql`, prepared on first use. A statement in use by a
    /// live cursor is never handed out twice: a fresh one is prepared instead.
    @usableFromInline
    func cachedStatement(_ sql: String) throws -> Statement {
        try access.check()
        if let last = lastStatement, !last.isInUse, last.sql == sql { return last }
        if let statement = statementCache[sql], !statement.isInUse {
            lastStatement = statement
            return statement
        }
        let handle = try openHandle()
        let statement = try Statement.prepare(database: handle, sql: sql, persistent: true, access: access)
        if statementCache.count >= Self.statementCacheCapacity {
            // Many different SQL texts (ad-hoc conditions, IN lists): start over rather than grow.
            clearStatementCacheUnchecked()
        }
        if statementCache[sql] == nil {
            statementCache[sql] = statement
            lastStatement = statement
        }
        return statement
    }

    /// Runs `query` on its cached statement: binds, calls `body`, resets on every path.
    @usableFromInline
    func withStatement<T>(_ query: SQL, _ body: (Statement) throws -> T) throws -> T {
        try cachedStatement(query.sql).withBindings(query.arguments, body)
    }

    /// The statement for `query`, bound and marked in use: ``Database``'s generic reads
    /// step it in the caller's frame, specialized for each entity, as SQLite's C loop would be.
    @usableFromInline package func start(_ query: SQL) throws -> any SteppedStatement {
        let statement = try cachedStatement(query.sql)
        statement.isInUse = true
        do {
            try statement.bind(query.arguments)
        } catch {
            statement.finish(after: error)
            throw error
        }
        return statement
    }

    @usableFromInline package func columnNames(of sql: String) throws -> [String] {
        try cachedStatement(sql).columnNames
    }

    /// Every row of `query` mapped by `transform` (the catalog's queries).
    func fetchAll<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> [T] {
        var results = [T]()
        try forEachRow(query) { results.append(try transform($0)) }
        return results
    }

    /// The first row of `query` mapped by `transform`, or `nil` (the catalog's queries).
    func fetchFirst<T>(_ query: SQL, _ transform: (RowView) throws -> T) throws -> T? {
        try withStatement(query) { statement in
            try statement.step(arguments: query.arguments) ? try transform(statement.currentView) : nil
        }
    }

    /// Calls `body` with each row of `query`.
    func forEachRow(_ query: SQL, _ body: (RowView) throws -> Void) throws {
        try withStatement(query) { statement in
            while try statement.step(arguments: query.arguments) {
                try body(statement.currentView)
            }
        }
    }

    /// Executes one statement; returns the rows it changed.
    @usableFromInline package func execute(_ query: SQL) throws -> Int {
        try withStatement(query) { statement in
            while try statement.step(arguments: query.arguments) {}
            // The statement's own connection: its access was checked when it was taken
            // (checking again cost ~30 instructions an update: callgrind, W5).
            return Int(sqlite3_changes64(sqlite3_db_handle(statement.handle)))
        }
    }

    /// Executes an `INSERT` of one row and returns the new row's rowid (see
    /// ``Database/insert(_:)``).
    func insert(_ query: SQL) throws -> Int64 {
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

    @usableFromInline package func fetchRows(_ query: SQL) throws -> [Row] {
        try withStatement(query) { statement in
            var rows = [Row]()
            while try statement.step(arguments: query.arguments) {
                rows.append(try statement.rows.copyRow())
            }
            return rows
        }
    }

    @usableFromInline package func fetchFirstRow(_ query: SQL) throws -> Row? {
        try withStatement(query) { statement in
            try statement.step(arguments: query.arguments) ? try statement.rows.copyRow() : nil
        }
    }

    @usableFromInline package func firstValue(_ query: SQL) throws -> DatabaseValue? {
        try withStatement(query) { statement in
            try statement.step(arguments: query.arguments) ? try statement.rows.value(at: 0) : nil
        }
    }

    @usableFromInline package func firstColumn(_ query: SQL) throws -> [DatabaseValue] {
        try withStatement(query) { statement in
            var values = [DatabaseValue]()
            while try statement.step(arguments: query.arguments) {
                values.append(try statement.rows.value(at: 0))
            }
            return values
        }
    }

    /// The rows changed by the last statement (`sqlite3_changes64`).
    @usableFromInline package var changes: Int {
        get throws { Int(sqlite3_changes64(try openHandle())) }
    }

    /// Finalizes every cached statement not in use.
    func clearStatementCacheUnchecked() {
        statementCache = statementCache.filter { $0.value.isInUse }
        lastStatement = nil
    }

    // MARK: Cursors

    /// Records the statement of a cursor opened in the current access.
    func cursorOpened(_ statement: Statement) {
        cursorStatements.append(statement)
        access.endsWithCleanup = true
    }

    /// Forgets the statement of a cursor that finished.
    func cursorFinished(_ statement: Statement) {
        if let index = cursorStatements.lastIndex(where: { $0 === statement }) {
            cursorStatements.remove(at: index)
        }
    }

    // MARK: Closing

    /// Closes the connection unless statements made from it are still alive: then throws
    /// ``DALError/Code/statementsStillOpen`` (with the SQL of each), and the connection
    /// stays open and usable.
    @usableFromInline package func closeRefusingOpenStatements() throws {
        guard let handle else { return }
        clearStatementCacheUnchecked()
        let code = sqlite3_close(handle)
        guard code == SQLITE_OK else {
            var open = [String]()
            var statement = sqlite3_next_stmt(handle, nil)
            while let current = statement {
                open.append(sqlite3_sql(current).map { String(cString: $0) } ?? "?")
                statement = sqlite3_next_stmt(handle, current)
            }
            throw DALError(
                .statementsStillOpen,
                "cannot close \(path): \(open.count) statement(s) still open: \(open.joined(separator: "; "))")
        }
        self.handle = nil
    }

    // MARK: EngineConnection

    @usableFromInline package var engine: DatabaseEngine { .sqlite }

    /// SQLite's statements tell the observer of each execution as they step and reset.
    @usableFromInline package var reportsItsStatements: Bool { true }

    @usableFromInline package func run(_ query: SQL, _ body: (RowView) throws -> Void) throws -> Int {
        try withStatement(query) { statement in
            while try statement.step(arguments: query.arguments) {
                try body(statement.currentView)
            }
            return Int(sqlite3_changes64(try openHandle()))
        }
    }

    /// Runs the statements one after the other (an embedded engine has no round trip to
    /// save); a failing one's error carries its position. `ended` is not called: each
    /// statement reports itself.
    @usableFromInline package func runBatch(
        count: Int, _ query: (Int) throws -> SQL, row: (Int, RowView) throws -> Void, ended: BatchStatementEnded?
    ) throws -> Int {
        var changed = 0
        for index in 0..<count {
            let statement = try query(index)
            do {
                changed += try run(statement) { try row(index, $0) }
            } catch var error as SQLiteError where error.concernsTheBatchItem {
                error.batchIndex = index
                throw error
            }
        }
        return changed
    }

    /// SQLite has no bulk statement: `INSERT`s of prepared statements are its fastest path.
    @usableFromInline package func copyRows(
        into table: String, columns: [String], blobColumns: Set<Int>, count: Int,
        _ row: (Int, inout [DatabaseValue]) throws -> Void
    ) throws -> Int? { nil }

    @usableFromInline package var hasBulkPath: Bool { false }

    /// Steps the statement, one row at a time: SQLite reads rows from the file as they are
    /// stepped, never the whole result at once (`fetchSize` does not apply).
    @usableFromInline package func stream(_ query: SQL, fetchSize: Int, _ body: (RowView) throws -> Void) throws -> Int
    {
        var rows = 0
        try forEachRow(query) { row in
            rows += 1
            try body(row)
        }
        return rows
    }

    /// SQLite streams in place, without a transaction of its own.
    @usableFromInline package var streamsInATransaction: Bool { false }

    @usableFromInline package func executeScript(_ script: String) throws {
        let handle = try openHandle()
        // After SQLite rolled the transaction back on its own, only a ROLLBACK runs (see
        // `ConnectionAccess.transactionEndedBy`); a script's statements would commit. A
        // script of one whole ROLLBACK ends the transaction here, with nothing left to undo.
        if access.transactionEnded, let cause = access.transactionEndedBy {
            // `ROLLBACK` or `ROLLBACK TRANSACTION` and nothing else (a statement after it
            // without a `;` included, which SQLite would refuse).
            let (words, more) = Statement.leadingWords(of: script, seeingWhatFollows: true)
            guard words == ["ROLLBACK"] || words == ["ROLLBACK", "TRANSACTION"], !more else { throw cause }
            if sqlite3_get_autocommit(handle) != 0 {
                access.transactionEndedBy = nil
                return
            }
        }
        // Whether a transaction was open before the statement that failed (one the script
        // itself began included): SQLite may have rolled it back at that failure.
        var openBeforeFailure = false
        var scriptFailure: SQLiteError?
        defer {
            let open = sqlite3_get_autocommit(handle) == 0
            access.transactionOpen = open
            if openBeforeFailure, !open, let scriptFailure,
                !Statement.isWholeRollback(Statement.leadingWords(of: scriptFailure.sql ?? "").words)
            {
                access.transactionEndedBy = scriptFailure.endingTheTransaction()
            }
        }
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
                        openBeforeFailure = sqlite3_get_autocommit(handle) == 0
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
                        if let failure {
                            scriptFailure = failure
                            throw failure
                        }
                    }
                    guard let tail, tail > cursor else { break }
                    cursor = tail
                }
            }
        }
    }

    /// True too after SQLite rolled the transaction back on its own, until a `ROLLBACK`
    /// ends it here: the transaction's owner must see it end.
    @usableFromInline package var isInTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0 || access.transactionEnded
    }

    /// A SQLite connection never breaks: its errors are the statement's, not the link's.
    @usableFromInline package var mayBreak: Bool { false }

    /// A SQLite connection never breaks: its errors are the statement's, not the link's.
    @usableFromInline package var isBroken: Bool { false }

    @usableFromInline package func wasClosedWhileIdle() -> Bool { false }

    /// Not counted: no pool of SQLite connections asks (only a server's failover does).
    @usableFromInline package var completedStatements: Int { 0 }

    /// SQLite has no binary result format of its own to switch to.
    @usableFromInline package var binaryResults: Int { 0 }

    /// `BEGIN DEFERRED|IMMEDIATE|EXCLUSIVE TRANSACTION`: SQLite transactions are always
    /// serializable, and a read-only pool connection is read-only as opened.
    @usableFromInline package func beginStatement(_ kind: TransactionKind, isolation: IsolationLevel?, readOnly: Bool)
        -> String
    {
        "BEGIN \(kind.rawValue) TRANSACTION"
    }

    @usableFromInline package func columns(in table: String) throws -> [ColumnInfo] {
        // `pragma_table_xinfo`, not `_info`: the latter leaves generated columns out, which
        // then could be neither read nor told apart from columns the table lacks. `hidden`
        // is 2 for a virtual generated column, 3 for a stored one, 1 for a virtual table's
        // hidden column (left out: it is not one of the table's columns).
        var generated = [(index: Int, stored: Bool)]()
        var columns = [ColumnInfo]()
        try forEachRow(
            "SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(\(table)) ORDER BY cid"
        ) { row in
            let hidden = try row.decode(Int.self, at: 5)
            guard hidden != 1 else { return }
            if hidden == 2 || hidden == 3 { generated.append((columns.count, hidden == 3)) }
            columns.append(
                ColumnInfo(
                    name: try row.decode(String.self, at: 0), declaredType: try row.decode(String?.self, at: 1) ?? "",
                    isNotNull: try row.decode(Bool.self, at: 2), defaultValueSQL: try row.decode(String?.self, at: 3),
                    primaryKeyIndex: try row.decode(Int.self, at: 4)))
        }
        guard !columns.isEmpty else {
            throw DALError(.schemaMismatch, "the database has no table or view named \(table)", table: table)
        }
        guard !generated.isEmpty else { return columns }
        // Said as PostgreSQL and MariaDB say a generated column, so that BaseDAL never
        // writes it; its expression as the table's CREATE TABLE writes it.
        let createTable =
            try fetchFirst(
                """
                SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = \(table) COLLATE NOCASE
                UNION ALL SELECT sql FROM sqlite_temp_schema WHERE type = 'table' AND name = \(table) COLLATE NOCASE
                """
            ) { try $0.decode(String.self, at: 0) } ?? ""
        let expressions = GeneratedColumns.expressions(in: createTable)
        for (index, stored) in generated {
            let column = columns[index]
            let expression = expressions[column.name.identifierKey] ?? "…"
            columns[index] = ColumnInfo(
                name: column.name, declaredType: column.declaredType, isNotNull: column.isNotNull,
                defaultValueSQL: "GENERATED ALWAYS AS (\(expression)) \(stored ? "STORED" : "VIRTUAL")",
                primaryKeyIndex: column.primaryKeyIndex)
        }
        return columns
    }

    @usableFromInline package func tableExists(_ name: String) throws -> Bool {
        try fetchFirst(
            "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = \(name) COLLATE NOCASE)"
        ) { try $0.decode(Bool.self, at: 0) } ?? false
    }

    /// The table's one primary-key column when it is the rowid: declared `INTEGER`, and
    /// no index made for the key (an `INT PRIMARY KEY`, a `BIGINT` one or an `INTEGER
    /// PRIMARY KEY DESC` is a column of its own, with an index of origin `pk`).
    @usableFromInline package func rowIDAlias(in name: String) throws -> String? {
        let key = try fetchFirst(
            "SELECT COUNT(*), MAX(name), MAX(upper(type)) FROM pragma_table_info(\(name)) WHERE pk > 0"
        ) { row in
            (try row.decode(Int.self, at: 0), try row.decode(String?.self, at: 1), try row.decode(String?.self, at: 2))
        }
        guard let key, key.0 == 1, key.2 == "INTEGER", let column = key.1 else { return nil }
        let indexed = try fetchFirst("SELECT EXISTS(SELECT 1 FROM pragma_index_list(\(name)) WHERE origin = 'pk')") {
            try $0.decode(Bool.self, at: 0)
        }
        return indexed == true ? nil : column
    }

    @usableFromInline package func tableKind(of name: String) throws -> TableKind {
        // pragma_table_list (SQLite 3.37+) reports WITHOUT ROWID; older libraries fall
        // back to the schema table, where every table is taken for a rowid table.
        let listed = try? fetchFirst(
            "SELECT type, wr FROM pragma_table_list WHERE schema = 'main' AND name = \(name) COLLATE NOCASE"
        ) { row in (try row.decode(String.self, at: 0), try row.decode(Bool.self, at: 1)) }
        let found: (type: String, withoutRowID: Bool)?
        if let listed {
            found = listed
        } else {
            found = try fetchFirst(
                "SELECT type, sql LIKE '%WITHOUT%ROWID%' FROM sqlite_schema WHERE name = \(name) COLLATE NOCASE"
            ) { row in (try row.decode(String.self, at: 0), try row.decode(Bool?.self, at: 1) ?? false) }
        }
        guard let found else {
            throw DALError(.schemaMismatch, "the database has no table or view named \(name)", table: name)
        }
        switch found.type {
        case "view": return .view
        case "virtual": return .virtualTable
        default: return found.withoutRowID ? .withoutRowIDTable : .rowIDTable
        }
    }

    @usableFromInline package var cachedStatementCount: Int { statementCache.count }

    @usableFromInline package func clearStatementCache() throws {
        clearStatementCacheUnchecked()
    }

    /// Interrupts the statement running now (`sqlite3_interrupt`, safe from any thread),
    /// and refuses the call's next statements (all but a rollback) until
    /// ``clearCancelRequest()``: an interrupt alone stops only a statement already running.
    @usableFromInline package func cancelRunningStatement() {
        access.stopRequested.store(true, ordering: .releasing)
        sqlite3_interrupt(interruptibleHandle)
    }

    /// `nil`: an interrupted SQLite statement ends at once, with nothing to wait for.
    @usableFromInline package var interruptGracePeriod: Duration? { nil }

    /// Nothing to shut down: SQLite has no server that could fail to answer.
    @usableFromInline package func abandon() {}

    @usableFromInline package func clearCancelRequest() {
        access.stopRequested.store(false, ordering: .releasing)
    }

    /// Resets the statements of cursors still open, so that they release their snapshot
    /// and locks, and any later use throws.
    @usableFromInline package func accessEnding() {
        guard !cursorStatements.isEmpty else { return }
        for statement in cursorStatements {
            statement.resetAfterFailure()
            statement.isInUse = false
        }
        cursorStatements.removeAll()
    }

    /// `EXPLAIN QUERY PLAN`'s details (`SEARCH users USING INDEX …`, `SCAN orders`).
    @usableFromInline package func queryPlan(of sql: String) throws -> [String] {
        let handle = try openHandle()
        try checkNoNUL(sql, "SQL text")
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, "EXPLAIN QUERY PLAN " + sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard code == SQLITE_OK, let statement else { throw SQLiteError(connection: handle, code: code, sql: sql) }
        var lines = [String]()
        var step = sqlite3_step(statement)
        while step == SQLITE_ROW {
            lines.append(sqlite3_column_text(statement, 3).map { String(cString: $0) } ?? "")
            step = sqlite3_step(statement)
        }
        guard step == SQLITE_DONE else { throw SQLiteError(connection: handle, code: step, sql: sql) }
        return lines
    }

    /// Closes the connection whatever is still open: statements that outlive it keep it
    /// as a zombie (`sqlite3_close_v2`) until they are released, and any use of them
    /// throws. No callback into this object can run afterwards.
    @usableFromInline package func close() {
        guard let handle else { return }
        lastStatement = nil
        statementCache.removeAll()
        cursorStatements.removeAll()
        sqlite3_close_v2(handle)
        self.handle = nil
    }
}

/// SQLite's progress handler for every connection: non-zero (the statement ends with
/// SQLITE_INTERRUPT) once the call holding the connection was stopped. `context` is the
/// connection's ``ConnectionAccess``, which outlives its handle.
private func sqliteStopCheck(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    return Unmanaged<ConnectionAccess>.fromOpaque(context).takeUnretainedValue().stopRequested.load(ordering: .relaxed)
        ? 1 : 0
}
