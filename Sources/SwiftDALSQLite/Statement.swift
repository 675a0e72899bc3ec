internal import CSwiftDALSQLite
import Foundation
public import SwiftDALConnection
import Synchronization

/// A prepared SQLite statement.
///
/// Statements are owned by one ``Database`` and never cross threads (they are not
/// `Sendable`). SwiftDAL prepares each SQL text once per connection and caches it;
/// every use binds, steps, then resets the statement, on error paths too, so no
/// statement is ever left holding a lock. A statement is finalized when it is
/// released. Text and blobs are bound with their byte length and copied (small ones
/// into the statement's own buffer, large ones by SQLite), so a temporary Swift string
/// is always safe to bind, and an embedded NUL survives.
///
/// Parameters are 1-based (as in SQLite); columns are 0-based (as in SQLite): SwiftDAL
/// never asks you to convert between the two.
///
/// For example:
///
/// ```swift
/// let insert = try db.makeStatement(sql: "INSERT INTO logs(message) VALUES (?)")
/// for message in messages {
///     try insert.execute(arguments: [message])
/// }
/// ```
public final class Statement {
    let handle: OpaquePointer
    /// The SQL text this statement was prepared from.
    public let sql: String
    /// Who may use the connection (shared with the ``Database``).
    @usableFromInline let access: ConnectionAccess
    /// For a statement made by ``Database/makeStatement(sql:)`` on a pooled connection:
    /// the access it belongs to (`nil` for cached statements, which every use reaches
    /// through the checked ``Database``).
    private let epoch: UInt64?
    /// The current row's columns, which ``RowView``s read (``SQLiteRows``): an object of
    /// its own, so that a view kept past its statement never reads a finalized handle.
    let rows: SQLiteRows
    /// The box the views of this statement's rows hold (made once: a view costs nothing).
    @usableFromInline package let result: EngineResult
    /// Set while the statement is stepping, so that a cached statement is never reused
    /// under a live cursor.
    var isInUse = false
    /// The number of parameters: fixed by the SQL text, so a re-prepare keeps it.
    private let parameters: Int32
    /// How many times SQLite had re-prepared the statement when the shape was read.
    private var preparation: Int32 = 0
    /// Set by a reset: the next step is an execution's first, the only one at which
    /// SQLite may re-prepare the statement.
    private var isFirstStep = true
    /// Whether a large text or blob is bound: released after use, so that an idle cached
    /// statement never keeps one alive. Small values stay bound, in the statement's own
    /// buffer, until the next use (every use binds every parameter, so none is stale).
    private var holdsLargeValue = false
    private static let largeValueBytes = 4096
    /// The bytes of the small texts and blobs bound (up to ``largeValueBytes`` each), copied
    /// one after the other and bound `SQLITE_STATIC`: SQLite reads them where they are,
    /// instead of freeing its copy of the last execution's value and allocating one for
    /// this one at each bind (callgrind, W1: ~500 instructions a text). They stay valid
    /// until the statement's next binding or its finalization, as SQLite requires: the
    /// buffer is only rewritten by the next ``bind(_:)``, which binds every parameter
    /// again, and replaced (for a larger one) only after every binding is cleared.
    private var arena: UnsafeMutableRawPointer?
    private var arenaCapacity = 0
    private var arenaUsed = 0
    /// The bytes the small values of the last binding needed: the next ``bind(_:)`` grows
    /// the buffer to hold them all, up to ``arenaLimit`` once (values that did not fit
    /// were bound `SQLITE_TRANSIENT`, as those past the limit always are).
    private var arenaDemand = 0
    private static let arenaLimit = 8 * 1024
    private var cachedParameterNames: [String?]?
    /// Whether this is SwiftDAL's own `ROLLBACK …`: the one statement a stopped call still
    /// runs (its transaction must end, or the writer would keep its lock).
    private let isRollback: Bool
    /// Whether this is a `ROLLBACK` of the whole transaction (not `ROLLBACK TO`).
    private let isWholeRollback: Bool
    /// Whether it begins or ends a transaction or a savepoint (`BEGIN`, `COMMIT`, `END`,
    /// `ROLLBACK`, `SAVEPOINT`, `RELEASE`): the connection notes whether a transaction is
    /// open after it (``ConnectionAccess/transactionOpen``).
    private let controlsTransaction: Bool
    /// Why it is refused inside the body of a transaction SwiftDAL runs
    /// (``ConnectionAccess/refusesTransactionControl``): it would end or start that
    /// transaction. Read once, at its preparation, so that running it costs a test of this.
    private let transactionControlRefusal: DALError?
    /// When the current execution's first step ran, if an observer is told of it.
    private var observedStart: MonotonicTime?
    /// The rows the current execution has produced.
    private var rowsProduced = 0

    init(database: OpaquePointer, sql: String, persistent: Bool, access: ConnectionAccess, epoch: UInt64? = nil) throws
    {
        var statement: OpaquePointer?
        var tailOffset = 0
        var utf8 = sql
        let flags = UInt32(persistent ? SQLITE_PREPARE_PERSISTENT : 0)
        let code = utf8.withUTF8 { buffer -> Int32 in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v3(
                    database, chars.baseAddress ?? Statement.emptyCString, Int32(chars.count), flags,
                    &statement, &tail)
                if let tail, let base = chars.baseAddress { tailOffset = tail - base }
                return code
            }
        }
        // Read before the text's preparation: what SQLite cannot prepare (`COMMIT WORK`, `START
        // TRANSACTION`) is refused as on the other engines.
        let refusal = TransactionControl.refusal(of: sql, dialect: SQLiteEngineDialect())
        guard code == SQLITE_OK else {
            if let refusal, access.refusesTransactionControl { throw refusal }
            let error = SQLiteError(connection: database, code: code, sql: sql)
            if error.message.hasPrefix("too many SQL variables") {
                let limit = sqlite3_limit(database, SQLITE_LIMIT_VARIABLE_NUMBER, -1)
                let shortSQL = sql.count > 200 ? String(sql.prefix(200)) + "…" : sql
                throw DALError(
                    .argumentMismatch,
                    "the statement has more parameters than SQLite's limit of \(limit) on this connection; "
                        + "bind a long list of integers or text with \\(values:) (one JSON array), "
                        + "or insert it into a temporary table",
                    sql: shortSQL, underlying: SQLiteError(code: error.code, message: error.message, sql: shortSQL))
            }
            throw error
        }
        guard let statement else {
            throw DALError(.invalidSQL, "the SQL text holds no statement", sql: sql)
        }
        handle = statement
        self.sql = sql
        self.access = access
        isRollback = sql.hasPrefix("ROLLBACK")
        let words = Statement.leadingWords(of: sql).words
        controlsTransaction = ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"].contains(words.first)
        transactionControlRefusal = refusal
        isWholeRollback = Statement.isWholeRollback(words)
        // A statement made for the holder of a pooled connection belongs to that access;
        // on a connection you opened yourself it lives as long as you keep it.
        self.epoch = access.holder.load(ordering: .relaxed) == ConnectionAccess.unrestricted ? nil : epoch
        rows = SQLiteRows(handle: statement, sql: sql)
        result = EngineResult(rows)
        parameters = sqlite3_bind_parameter_count(statement)
        let rest = sql.utf8.dropFirst(tailOffset)
        if rest.contains(where: { !Statement.isSpaceOrSemicolon($0) }) {
            // Only comments may follow. Anything else is refused, never silently ignored:
            // a second statement, and text that is not SQL at all.
            // (Every property is set, so `deinit` finalizes `handle` when this throws.)
            try Statement.checkOnlyComments(rest, database: database, sql: sql)
        }
    }

    /// Prepares `sql` as ``init(database:sql:persistent:access:epoch:)`` does, and reports a
    /// failure to the connection's observer, as PostgreSQL's and MariaDB's refusals of a
    /// statement are (a table that does not exist, a syntax error): one event, with the
    /// error. A transaction control statement refused inside a transaction SwiftDAL runs is
    /// not reported, as on the servers: it is refused before the engine sees it.
    static func prepare(
        database: OpaquePointer, sql: String, persistent: Bool, access: ConnectionAccess, epoch: UInt64? = nil
    ) throws -> Statement {
        guard let observation = access.observation else {
            return try Statement(database: database, sql: sql, persistent: persistent, access: access, epoch: epoch)
        }
        let start = MonotonicTime.now
        do {
            return try Statement(database: database, sql: sql, persistent: persistent, access: access, epoch: epoch)
        } catch let error as DALError where error.code == .unsupportedOperation {
            throw error
        } catch {
            observation.report(sql: sql, since: start, rowCount: 0, error: error)
            throw error
        }
    }

    /// Throws unless `rest`, the text after the first statement, holds nothing but
    /// comments, white space and semicolons (it then prepares to no statement).
    private static func checkOnlyComments(_ rest: Substring.UTF8View, database: OpaquePointer, sql: String) throws {
        var text = String(decoding: rest, as: UTF8.self)
        var second: OpaquePointer?
        let code = text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                sqlite3_prepare_v2(
                    database, chars.baseAddress ?? Statement.emptyCString, Int32(chars.count), &second, nil)
            }
        }
        sqlite3_finalize(second)
        if code == SQLITE_OK && second == nil { return }
        let problem =
            code == SQLITE_OK
            ? "more than one statement"
            : "a second statement that does not compile (\(SQLiteError(connection: database, code: code, sql: nil).message))"
        throw DALError(
            .invalidSQL,
            "the SQL text holds \(problem); run one statement at a time, or use executeScript(_:) for scripts",
            sql: sql)
    }

    deinit {
        rows.invalidate()
        access.finalize(handle, with: sqlite3_finalize)
        // (A finalization that is deferred reads no bound bytes: SQLite frees only what it
        // allocated.)
        arena?.deallocate()
    }

    /// Throws unless the calling thread may use this statement now.
    @inline(__always)
    func checkAccess() throws {
        if let epoch {
            try access.check(epoch: epoch)
        } else {
            try access.check()
        }
    }

    private static func isSpaceOrSemicolon(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
            || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: ";")
    }

    nonisolated(unsafe) static let emptyCString: UnsafePointer<CChar> = {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        pointer.pointee = 0
        return UnsafePointer(pointer)
    }()

    // MARK: Shape

    /// The number of result columns (0 for statements that return no rows).
    ///
    /// For example, `try statement.columnCount`.
    public var columnCount: Int {
        get throws {
            try checkAccess()
            return Int(sqlite3_column_count(handle))
        }
    }

    /// The result column names, in order (0-based, as SQLite numbers columns).
    ///
    /// For example, `try statement.columnNames`.
    public var columnNames: [String] {
        get throws {
            try checkAccess()
            return rows.layout.names
        }
    }

    /// The number of parameters (the largest parameter index; parameters are 1-based).
    public var parameterCount: Int { Int(parameters) }

    /// Whether the statement only reads (`sqlite3_stmt_readonly`).
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    // MARK: Binding

    /// Binds `arguments`; throws ``DALError/Code/argumentMismatch`` when their number or
    /// names do not match the statement's parameters.
    func bind(_ arguments: StatementArguments) throws {
        if let error = arguments.conversionError { throw error }
        arenaUsed = 0
        if arenaDemand > arenaCapacity, arenaCapacity < Self.arenaLimit { growArena() }
        arenaDemand = 0
        let count = Int(parameters)
        switch arguments.storage {
        case .positional:
            // Bound where the array holds them, each read through a pointer: through the
            // array's subscript, each value was copied (retained and released) around its
            // bind (callgrind, W1 on SQLite: −117 instructions an insert of five values).
            try arguments.withPositionalValues { values in
                guard values.count == count else { throw positionalCountMismatch(given: values.count) }
                guard let first = values.baseAddress else { return }  // no values
                for index in 0..<count {
                    try bind((first + index).pointee, at: Int32(index + 1))
                }
            }
        case .single(let value):
            guard count == 1 else { throw positionalCountMismatch(given: 1) }
            try bind(value, at: 1)
        case .pair(let first, let second):
            guard count == 2 else { throw positionalCountMismatch(given: 2) }
            try bind(first, at: 1)
            try bind(second, at: 2)
        case .named(let values):
            let names = parameterNames
            var used = 0
            for index in 0..<count {
                guard let name = names[index] else {
                    throw DALError(
                        .argumentMismatch,
                        "parameter \(index + 1) is positional but the arguments are named", sql: sql)
                }
                guard let value = values[name] else {
                    throw DALError(.argumentMismatch, "no argument for parameter \(name)", sql: sql)
                }
                used += 1
                try bind(value, at: Int32(index + 1))
            }
            if used != values.count {
                let unknown = Set(values.keys).subtracting(names.compactMap { $0 }).sorted()
                throw DALError(
                    .argumentMismatch,
                    "argument(s) \(unknown.joined(separator: ", ")) match no parameter", sql: sql)
            }
        }
    }

    /// The error for `given` positional arguments where the statement has another number.
    private func positionalCountMismatch(given: Int) -> DALError {
        DALError(
            .argumentMismatch, "the statement has \(parameters) parameter(s) but \(given) argument(s) were given",
            sql: sql)
    }

    /// Parameter names without their prefix; `nil` for `?` parameters.
    private var parameterNames: [String?] {
        if let cachedParameterNames { return cachedParameterNames }
        let names = (0..<sqlite3_bind_parameter_count(handle)).map { index -> String? in
            guard let name = sqlite3_bind_parameter_name(handle, index + 1) else { return nil }
            let text = String(cString: name)
            return text.hasPrefix("?") ? nil : StatementArguments.strippedName(text)
        }
        cachedParameterNames = names
        return names
    }

    /// Replaces the buffer of small values by one that holds `arenaDemand` bytes (up to
    /// ``arenaLimit``), once no binding points into the old one.
    @inline(never)
    private func growArena() {
        sqlite3_clear_bindings(handle)
        arena?.deallocate()
        var capacity = Swift.max(arenaCapacity * 2, 256)
        while capacity < arenaDemand { capacity *= 2 }
        arenaCapacity = Swift.min(capacity, Self.arenaLimit)
        arena = .allocate(byteCount: arenaCapacity, alignment: 1)
    }

    /// `bytes` copied into the buffer of small values, or `nil` when they are large or do
    /// not fit (they are then bound `SQLITE_TRANSIENT`, and the next binding has room).
    @inline(__always)
    private func parked(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        let count = bytes.count
        guard count <= Self.largeValueBytes else { return nil }
        arenaDemand &+= count
        let end = arenaUsed + count
        guard end <= arenaCapacity, let arena else { return nil }
        let destination = arena + arenaUsed
        if let source = bytes.baseAddress { destination.copyMemory(from: source, byteCount: count) }
        arenaUsed = end
        return UnsafeRawPointer(destination)
    }

    /// Binds `value` to parameter `index` (1-based).
    private func bind(_ value: borrowing DatabaseValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            code = sqlite3_bind_int64(handle, index, integer)
        case .real(let double):
            code = sqlite3_bind_double(handle, index, double)
        case .text(let string):
            // Read in place (a native string's bytes, a small one's copied to the stack):
            // `withUTF8` needs a `var`, a copy of the value (callgrind, W1).
            func bindText(_ buffer: UnsafeBufferPointer<UInt8>) -> Int32 {
                if let parked = parked(UnsafeRawBufferPointer(buffer)) {
                    return sqlite3_bind_text64(
                        handle, index, parked.assumingMemoryBound(to: CChar.self), UInt64(buffer.count), sqliteStatic,
                        UInt8(SQLITE_UTF8))
                }
                if buffer.count > Self.largeValueBytes { holdsLargeValue = true }
                return buffer.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text64(
                        handle, index, chars.baseAddress ?? Statement.emptyCString, UInt64(chars.count),
                        sqliteTransient, UInt8(SQLITE_UTF8))
                }
            }
            if let bound = string.utf8.withContiguousStorageIfAvailable(bindText) {
                code = bound
            } else {
                var contiguous = string
                code = contiguous.withUTF8(bindText)
            }
        case .blob(let data):
            if data.count > Self.largeValueBytes { holdsLargeValue = true }
            code = data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                if let parked = parked(bytes) {
                    return sqlite3_bind_blob64(handle, index, parked, UInt64(bytes.count), sqliteStatic)
                }
                return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), sqliteTransient)
            }
        }
        guard code == SQLITE_OK else {
            throw SQLiteError(connection: sqlite3_db_handle(handle), code: code, sql: sql)
        }
    }

    // MARK: Stepping

    /// Steps once: `true` when a row is available, `false` when done. `arguments` (those
    /// bound) only name the values in an error; taken unwrapped, so that no call copies them.
    @usableFromInline
    func step(arguments: StatementArguments) throws -> Bool {
        rows.advance()
        if isFirstStep {
            if access.stopRequested.load(ordering: .acquiring), !isRollback { throw stopped(arguments) }
            if let refusal = transactionControlRefusal, access.refusesTransactionControl { throw refusal }
            if access.transactionEnded, try runsNothingAfterTransactionEnded() { return false }
            if access.observation != nil {
                observedStart = MonotonicTime.now
                rowsProduced = 0
            }
        }
        let code = sqlite3_step(handle)
        if isFirstStep {
            isFirstStep = false
            let current = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
            if current != preparation {
                preparation = current
                rows.shapeChanged()
            }
        }
        switch code {
        case SQLITE_ROW:
            rowsProduced &+= 1
            return true
        case SQLITE_DONE:
            if controlsTransaction { access.transactionOpen = sqlite3_get_autocommit(sqlite3_db_handle(handle)) == 0 }
            return false
        case let code:
            let error = SQLiteError(connection: sqlite3_db_handle(handle), code: code, sql: sql, arguments: arguments)
            if access.transactionOpen || controlsTransaction { noteTransactionEnd(error) }
            throw error
        }
    }

    /// After a failed statement: when SQLite rolled the open transaction back on its own,
    /// marks it ended (``ConnectionAccess/transactionEndedBy``) until a `ROLLBACK`.
    @inline(never)
    private func noteTransactionEnd(_ error: SQLiteError) {
        guard sqlite3_get_autocommit(sqlite3_db_handle(handle)) != 0 else { return }
        if access.transactionOpen, !isWholeRollback, access.transactionEndedBy == nil {
            access.transactionEndedBy = error.endingTheTransaction()
        }
        access.transactionOpen = false
    }

    /// A statement about to run after SQLite rolled the transaction back on its own: a
    /// whole `ROLLBACK` ends it here too (`true`: not run, as no transaction is open and
    /// there is nothing left to undo); anything else throws the error that ended it.
    @inline(never)
    private func runsNothingAfterTransactionEnded() throws -> Bool {
        guard isWholeRollback else {
            throw access.transactionEndedBy ?? SQLiteError(code: .abort, message: "SQLite rolled the transaction back")
        }
        access.transactionEndedBy = nil
        return sqlite3_get_autocommit(sqlite3_db_handle(handle)) != 0
    }

    /// The first words of `sql`'s first statement, upper-cased (at most `limit`; comments
    /// and white space skipped, anything else but a word read as an empty one), and, when
    /// `seeingWhatFollows`, whether anything but white space and comments follows that
    /// statement's `;` (a `;` in a literal counts as one: a cautious answer). Read when a
    /// statement is prepared or a script runs, not when a prepared statement runs.
    package static func leadingWords(
        of sql: String, limit: Int = 4, seeingWhatFollows: Bool = false
    ) -> (words: [String], more: Bool) {
        let bytes = Array(sql.utf8)
        var words = [String]()
        var index = 0
        var endedAt: Int?
        func skipBlank() {
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D || byte == 0x0C {
                    index += 1
                } else if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
                    while index < bytes.count && bytes[index] != 0x0A { index += 1 }
                } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                    index += 2
                    while index < bytes.count
                        && !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count
                            && bytes[index + 1] == UInt8(ascii: "/"))
                    {
                        index += 1
                    }
                    index = min(index + 2, bytes.count)
                } else {
                    return
                }
            }
        }
        func isWordByte(_ byte: UInt8) -> Bool {
            let lower = byte | 0x20
            return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "_")
        }
        while index < bytes.count {
            if words.count == limit && !seeingWhatFollows { break }
            skipBlank()
            guard index < bytes.count else { break }
            if bytes[index] == UInt8(ascii: ";") {
                endedAt = index
                break
            }
            let start = index
            while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
            if index == start {
                index += 1  // a quote, a parenthesis: not a word (and the statement is no control one)
                if words.count < limit { words.append("") }
                continue
            }
            if words.count < limit { words.append(String(decoding: bytes[start..<index], as: UTF8.self).uppercased()) }
        }
        guard let endedAt else { return (words, false) }
        index = endedAt
        while index < bytes.count && bytes[index] == UInt8(ascii: ";") {
            index += 1
            skipBlank()
        }
        return (words, index < bytes.count)
    }

    /// Whether `words` (``leadingWords(of:limit:)``) are a `ROLLBACK` of the whole
    /// transaction: not `ROLLBACK TO` a savepoint.
    package static func isWholeRollback(_ words: [String]) -> Bool {
        words.first == "ROLLBACK" && !words.contains("TO")
    }

    /// The error of a statement refused because its call was stopped (the call throws
    /// the reason instead: `CancellationError` or the time limit's error).
    @inline(never)
    private func stopped(_ arguments: StatementArguments?) -> SQLiteError {
        SQLiteError(
            code: .interrupt, message: "interrupted: the call was cancelled or ran past its time limit", sql: sql,
            arguments: arguments)
    }

    /// Resets after a successful use (clearing large bindings), checking the reset's code.
    func reset() throws {
        isFirstStep = true
        rows.advance()
        if observedStart != nil { reportExecution(error: nil) }
        let code = sqlite3_reset(handle)
        if holdsLargeValue {
            holdsLargeValue = false
            sqlite3_clear_bindings(handle)
        }
        guard code == SQLITE_OK else {
            throw SQLiteError(connection: sqlite3_db_handle(handle), code: code, sql: sql)
        }
    }

    /// Resets after a failure: the failure is already being thrown, so the reset's code
    /// (which repeats it) is not.
    func resetAfterFailure(_ error: (any Error)? = nil) {
        isFirstStep = true
        rows.advance()
        if observedStart != nil { reportExecution(error: error) }
        holdsLargeValue = false
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Tells the observer of the execution that is ending (before the reset, while
    /// `sqlite3_changes` still counts its rows).
    private func reportExecution(error: (any Error)?) {
        guard let start = observedStart, let observation = access.observation else { return }
        observedStart = nil
        observation.report(
            sql: sql, since: start, rowCount: Self.observedRowCount(handle, sql: sql, rowsProduced: rowsProduced),
            error: error)
    }

    /// The rows an execution read or changed, as an observer is told: the rows a query
    /// produced; for `INSERT`, `UPDATE`, `DELETE`, `REPLACE` (or a `WITH` that writes),
    /// SQLite's count of changed rows; 0 for anything else that writes (`BEGIN IMMEDIATE`,
    /// `COMMIT`, DDL), for which `sqlite3_changes` still holds the last write's count.
    static func observedRowCount(_ handle: OpaquePointer?, sql: String, rowsProduced: Int) -> Int {
        if sqlite3_stmt_readonly(handle) != 0 { return rowsProduced }
        let first = sql.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "(" }.prefix { $0.isLetter }.uppercased()
        guard ["INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"].contains(first) else { return 0 }
        return Int(sqlite3_changes64(sqlite3_db_handle(handle)))
    }

    /// Binds, runs `body`, then resets, on every path.
    func withBindings<T>(_ arguments: StatementArguments, _ body: (Statement) throws -> T) throws -> T {
        isInUse = true
        defer { isInUse = false }
        let result: T
        do {
            try bind(arguments)
            result = try body(self)
        } catch {
            resetAfterFailure(error)
            throw error
        }
        try reset()
        return result
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

extension Statement: SteppedStatement {
    /// A view of the current row.
    var currentView: RowView { RowView(result: result, row: rows.currentRow) }

    @usableFromInline package func step(_ query: SQL) throws -> Int? {
        try step(arguments: query.arguments) ? rows.currentRow : nil
    }

    /// Resets the statement, then lets it be handed out again (an observer the reset tells
    /// of the execution may run statements: never this one before it is reset).
    @usableFromInline package func finish() throws {
        defer { isInUse = false }
        try reset()
    }

    @usableFromInline package func finish(after error: any Error) {
        resetAfterFailure(error)
        isInUse = false
    }
}

/// SQLite's `SQLITE_TRANSIENT` (a C macro Swift does not import): SQLite copies the
/// bytes before the bind call returns.
private var sqliteTransient: sqlite3_destructor_type {
    unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// SQLite's `SQLITE_STATIC` (`nil`): SQLite reads the bytes where they are, until the
/// parameter is bound again or the statement is finalized.
private let sqliteStatic: sqlite3_destructor_type? = nil

extension SQLiteError {
    /// This error, as the statements after it are refused with once SQLite rolled the
    /// transaction back at it (no values: the arguments are left out).
    func endingTheTransaction() -> SQLiteError {
        SQLiteError(
            code: code,
            message: message
                + " (SQLite rolled the transaction back at that error: every statement but ROLLBACK is refused until "
                + "the transaction ends, and COMMIT would commit nothing)",
            sql: sql)
    }

    /// SQLite's message for a failed foreign key.
    private static let foreignKeyFailed = "FOREIGN KEY constraint failed"

    /// The error of `connection` for a failed `code` (a `RESTRICT` action's failure read as
    /// its foreign key's, see below).
    init(connection: OpaquePointer?, code: Int32, sql: String?, arguments: StatementArguments? = nil) {
        var extended = code
        var message: String?
        if let connection {
            let reported = sqlite3_extended_errcode(connection)
            if reported & 0xFF == code & 0xFF { extended = reported }
            if let text = sqlite3_errmsg(connection) { message = String(cString: text) }
        }
        // SQLite runs a foreign key's `RESTRICT` action as a trigger, and reports its
        // failure as one (`SQLITE_CONSTRAINT_TRIGGER`, "FOREIGN KEY constraint failed"): it
        // is the foreign key's, as `NO ACTION`'s is and as the servers say.
        if extended == ResultCode.constraintTrigger.rawValue, message == Self.foreignKeyFailed {
            extended = ResultCode.constraintForeignKey.rawValue
        }
        let result = ResultCode(rawValue: extended)
        self.init(
            code: result, message: message ?? result.description, sql: sql,
            arguments: arguments?.isEmpty == false ? arguments : nil)
    }
}
