internal import CSwiftDALSQLite
import Foundation
import Synchronization

/// One SQLite connection.
///
/// You normally get a `Database` inside ``DatabaseQueue/read(_:)-41sxm`` / ``DatabasePool/write(_:)-2qmfr``
/// closures; it is not `Sendable` and must not leave the closure. Opening it applies
/// the ``Configuration``: foreign keys, busy timeout, journal mode, synchronous and
/// your pragmas. Statements are prepared once per SQL text and cached.
///
/// For example:
///
/// ```swift
/// let db = try Database(path: "app.sqlite")
/// try db.executeScript("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, name TEXT);")
/// let id = try db.insert("INSERT INTO t(name) VALUES (\("Ann"))")
/// try db.close()
/// ```
public final class Database {
    /// How a connection is opened.
    ///
    /// For example, `try Database(path: path, mode: .readOnly)`.
    public enum Mode: Sendable {
        /// Read and write; the file is created if missing.
        case readWrite
        /// Read only; the file must exist.
        case readOnly
    }

    private(set) var handle: OpaquePointer?
    /// The file path, or `":memory:"`.
    public let path: String
    /// Whether this connection was opened read-only.
    public let isReadOnly: Bool
    let configuration: Configuration
    /// `configuration.callTimeout`, kept apart: every access reads it, and reading it
    /// through `configuration` copied the whole configuration (its closures and observer).
    let callTimeout: Duration?
    /// Who may use the connection now (see ``ConnectionAccess``).
    @usableFromInline let access: ConnectionAccess
    /// The connection of another engine (PostgreSQL) this `Database` runs on; `nil` for
    /// SQLite, whose connection is `handle`.
    @usableFromInline let engineConnection: (any EngineConnection)?
    /// The rows changed by the engine connection's last statement. Only the thread holding
    /// the connection touches it, never in overlapping accesses: not checked at run time
    /// (a thread-local lookup on every statement).
    @usableFromInline @exclusivity(unchecked) var engineChanges = 0
    /// The SQLite handle, for `sqlite3_interrupt` from another thread (set once; only
    /// used while a call holds the connection, so never after it closes).
    private let interruptibleHandle: OpaquePointer?
    /// The statements of cursors still open in the current access: reset when the
    /// access ends, so that an escaped cursor never pins a snapshot or a lock. Only the
    /// thread holding the connection touches it, never in overlapping accesses: its
    /// exclusivity is not checked at run time (a thread-local lookup on every call).
    @exclusivity(unchecked) private var cursorStatements: [Statement] = []
    private var statementCache: [String: Statement] = [:]
    /// The most recently used cached statement: hot loops run one SQL text again and
    /// again, and comparing a string with itself is O(1), unlike hashing it.
    private var lastStatement: Statement?
    var savepointDepth = 0
    /// Set by ``discardAfterUse()``.
    private var discardRequested = false

    /// Opens (creating if missing, unless `mode` is `.readOnly`) the database at `path`.
    /// The directory must exist.
    ///
    /// For example, `let db = try Database(path: "/tmp/app.sqlite", mode: .readWrite)`.
    public convenience init(path: String, mode: Mode = .readWrite, configuration: Configuration = Configuration())
        throws
    {
        try self.init(path: path, isMemory: false, mode: mode, configuration: configuration)
    }

    /// Opens a private, empty in-memory database.
    ///
    /// For example, `let db = try Database.inMemory()`.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> Database {
        try Database(path: ":memory:", isMemory: true, mode: .readWrite, configuration: configuration)
    }

    /// Opens an in-memory copy of the database file at `path` (read through the online
    /// backup API): changes never reach the file. Handy for tests over fixtures.
    ///
    /// For example, `let db = try Database.inMemoryCopy(of: "Fixtures/sample.sqlite")`.
    public static func inMemoryCopy(of path: String, configuration: Configuration = Configuration()) throws -> Database
    {
        let source = try Database(path: path, mode: .readOnly, configuration: configuration)
        let copy = try Database.inMemory(configuration: configuration)
        try source.backup(to: copy)
        try source.close()
        return copy
    }

    init(path: String, isMemory: Bool, mode: Mode, configuration: Configuration, owned: Bool = false) throws {
        self.path = path
        self.isReadOnly = mode == .readOnly
        self.configuration = configuration
        callTimeout = configuration.callTimeout
        access = ConnectionAccess(
            path: path, observation: StatementObservation.make(configuration, engine: .sqlite, database: path))
        engineConnection = nil
        try checkNoNUL(path, "database path")
        if let vfsName = configuration.vfsName { try checkNoNUL(vfsName, "VFS name") }
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE
        flags |= mode == .readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        if isMemory { flags |= SQLITE_OPEN_MEMORY }
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, flags, configuration.vfsName)
        guard code == SQLITE_OK, let connection else {
            interruptibleHandle = nil
            let error = SQLiteError(connection: connection, code: code, sql: nil)
            sqlite3_close_v2(connection)
            throw SQLiteError(
                code: error.code, message: "cannot open database at \(path): \(error.message)")
        }
        handle = connection
        interruptibleHandle = connection
        sqlite3_extended_result_codes(connection, 1)
        do {
            try setUp(isMemory: isMemory)
        } catch {
            releaseConnection()
            throw error
        }
        if owned { access.becomeOwned() }
    }

    /// A `Database` over another engine's connection, owned by that engine's pool (it is
    /// lent to one thread per access, like a pooled SQLite connection). `name` describes
    /// the connection in errors (never with a password).
    package init(engine: any EngineConnection, name: String, configuration: Configuration) {
        path = name
        isReadOnly = false
        self.configuration = configuration
        callTimeout = configuration.callTimeout
        access = ConnectionAccess(
            path: name, observation: StatementObservation.make(configuration, engine: engine.engine, database: name))
        engineConnection = engine
        interruptibleHandle = nil
        access.becomeOwned()
    }

    /// The engine this connection runs on.
    ///
    /// For example, `if db.engine == .postgres { … }`.
    public var engine: DatabaseEngine { engineConnection?.engine ?? .sqlite }

    /// Forgets an interrupt once the call it was made for has let the connection go.
    func clearInterrupt() {
        if let engineConnection {
            engineConnection.clearCancelRequest()
        } else {
            access.stopRequested.store(false, ordering: .releasing)
        }
    }

    /// Interrupts the statement running on this connection now, from any thread (the
    /// caller guarantees the connection stays open meanwhile), and refuses the call's
    /// next statements (all but a rollback) until ``clearInterrupt()``.
    package func interruptRunningStatement() {
        if let engineConnection {
            engineConnection.cancelRunningStatement()
        } else if let interruptibleHandle {
            access.stopRequested.store(true, ordering: .releasing)
            sqlite3_interrupt(interruptibleHandle)
        }
    }

    /// How long an interrupted statement may take to end before its connection is
    /// abandoned (``abandonConnection()``): for engines whose interruption is a request to
    /// a server that may not answer; `nil` for SQLite, whose interruption is immediate.
    var interruptGracePeriod: Duration? { engineConnection?.interruptGracePeriod }

    /// Gives up on the connection of a stopped call whose server did not answer within the
    /// grace period: its socket is shut down, so the statement waiting for the server fails
    /// at once, and the pool replaces the connection. Never blocks; from any thread, while
    /// the call still holds the connection.
    package func abandonConnection() {
        engineConnection?.abandon()
    }

    /// Whether the engine connection failed in a way that makes it unusable (its pool
    /// then replaces it).
    package var isBrokenEngineConnection: Bool { engineConnection?.isBroken ?? false }

    /// Whether the server ended this connection's session while it sat idle (see
    /// ``EngineConnection/wasClosedWhileIdle()``); always `false` for SQLite.
    package var wasClosedWhileIdle: Bool { engineConnection?.wasClosedWhileIdle() ?? false }

    /// Whether the pool must close this connection when the current call lets it go: it
    /// broke, or the call left session state it could not clear (``discardAfterUse()``).
    package var mustBeDiscarded: Bool {
        guard let engineConnection else { return false }  // a SQLite connection never breaks
        return discardRequested || engineConnection.isBroken
    }

    /// Asks the pool to close this connection, rather than lend it again, when the current
    /// call lets it go: for a call that could not clear session state it set (an advisory
    /// lock it could not release). The server ends the session, and what it held with it.
    /// (A server engine's connection only: a SQLite connection holds nothing beyond its
    /// transaction, which is always ended.)
    package func discardAfterUse() {
        discardRequested = true
    }

    /// Hands the wait of the call now holding the connection to its first statement's
    /// report (when an observer reads it).
    package func recordWait(nanoseconds: UInt64) {
        access.observation?.pendingWait = .nanoseconds(Int64(clamping: nanoseconds))
    }

    /// Whether the connection has a bulk path (`copyRows`): PostgreSQL's `COPY`.
    package var hasBulkPath: Bool { engineConnection != nil }

    /// How many statements have completed on the engine connection (0 for SQLite).
    package var engineCompletedStatements: Int { engineConnection?.completedStatements ?? 0 }

    /// Closes a connection owned by an engine's pool.
    package func closeOwnedConnection() throws {
        try closeConnection()
    }

    private func setUp(isMemory: Bool) throws {
        guard let handle else { return }
        sqlite3_busy_timeout(handle, Int32(clamping: configuration.busyTimeout.clampedMilliseconds))
        if let length = configuration.maximumValueLength {
            sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, Int32(clamping: max(1, length)))
        }
        // Reading the schema first turns "not a database" and corruption into an error
        // at open, not at the first query.
        _ = try fetchScalar(Int.self, "PRAGMA schema_version")
        try execute(sql: "PRAGMA foreign_keys = \(configuration.foreignKeysEnabled ? "ON" : "OFF")")
        if !isMemory && !isReadOnly {
            // Changing the journal mode takes locks without calling the busy handler: when
            // several processes open a new file at once, it is retried until the busy
            // timeout, like any other statement.
            let mode = try retryingWhileBusy {
                try fetchScalar(String.self, SQL(sql: "PRAGMA journal_mode = \(configuration.journalMode.rawValue)"))
            }
            guard mode?.uppercased() == configuration.journalMode.rawValue else {
                throw DALError(
                    .invalidValue,
                    "journal mode \(configuration.journalMode.rawValue) could not be set (SQLite kept \(mode ?? "none"))"
                )
            }
        }
        try execute(sql: "PRAGMA synchronous = \(configuration.synchronous.rawValue)")
        if let limit = configuration.journalSizeLimit, !isReadOnly {
            _ = try fetchScalar(Int.self, SQL(sql: "PRAGMA journal_size_limit = \(max(-1, limit))"))
        }
        for pragma in configuration.pragmas {
            try forEachRow(SQL(sql: pragma.sql())) { _ in }
        }
        try configuration.prepareDatabase?(self)
    }

    deinit {
        releaseConnection()
    }

    /// Closes the connection whatever is still open: statements that outlive it keep
    /// it as a zombie (`sqlite3_close_v2`) until they are released, and any use of them
    /// throws. No callback into this object can run afterwards.
    private func releaseConnection() {
        if let engineConnection {
            access.markClosed()
            engineConnection.close()
            return
        }
        guard let handle else { return }
        access.markClosed()
        lastStatement = nil
        statementCache.removeAll()
        cursorStatements.removeAll()
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Whether the connection is closed, readable from any thread (for gauges).
    var isClosedForGauges: Bool { access.holder.load(ordering: .relaxed) == ConnectionAccess.closed }

    /// Whether ``close()`` has succeeded.
    public var isClosed: Bool {
        if engineConnection != nil { return access.holder.load(ordering: .relaxed) == ConnectionAccess.closed }
        return handle == nil
    }

    /// Closes a connection you opened yourself (`Database(path:)`, `inMemory()`); a
    /// connection of a queue or pool is closed by closing the queue or pool, and
    /// closing it here throws ``DALError/Code/accessEnded``.
    ///
    /// Throws ``DALError/Code/statementsStillOpen`` (with the SQL of each) when
    /// statements or cursors made from this connection are still alive: they are
    /// reported, never leaked, and the connection stays open and usable.
    ///
    /// For example, `try db.close()`.
    public func close() throws {
        guard access.holder.load(ordering: .relaxed) == ConnectionAccess.unrestricted else {
            if isClosed { return }
            throw DALError(
                .accessEnded,
                "this connection to \(path) belongs to a DatabaseQueue or DatabasePool: close that instead")
        }
        try closeOwnConnection()
    }

    /// Closes the connection (the queue or pool that owns it calls this, with no access
    /// in progress). A pooled connection always closes: statements or cursors that
    /// escaped their access keep it as a zombie until they are released, and throw.
    func closeConnection() throws {
        guard handle != nil || engineConnection != nil else { return }
        guard access.holder.load(ordering: .relaxed) == ConnectionAccess.unrestricted else {
            access.begin()  // the statements released below are finalized by this thread
            releaseConnection()
            return
        }
        try closeOwnConnection()
    }

    /// Closes a connection opened directly, refusing while statements are still open.
    private func closeOwnConnection() throws {
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
        access.markClosed()
    }

    /// The connection's handle, for the thread that may use it now; throws
    /// ``DALError/Code/accessEnded`` on any other thread and once the access is over.
    func openHandle() throws -> OpaquePointer {
        try access.check()
        guard let handle else {
            if let engineConnection {
                throw DALError(
                    .unsupportedOperation, "this operation is SQLite's; the connection is \(engineConnection.engine)")
            }
            throw DALError(.connectionClosed, "the connection to \(path) is closed")
        }
        return handle
    }

    // MARK: Accesses (a queue or pool lends the connection to one thread at a time)

    /// Lends the connection to the calling thread.
    func beginAccess() {
        access.begin()
    }

    /// Ends the calling thread's access: cursors still open are reset (so they release
    /// their snapshot and locks, and any later use throws), then no thread holds it.
    func endAccess() {
        if !cursorStatements.isEmpty {
            for statement in cursorStatements {
                statement.resetAfterFailure()
                statement.isInUse = false
            }
            cursorStatements.removeAll()
        }
        access.end()
    }

    /// Records the statement of a cursor opened in the current access.
    func cursorOpened(_ statement: Statement) {
        cursorStatements.append(statement)
    }

    /// Forgets the statement of a cursor that finished.
    func cursorFinished(_ statement: Statement) {
        if let index = cursorStatements.lastIndex(where: { $0 === statement }) {
            cursorStatements.remove(at: index)
        }
    }

    // MARK: Statements

    /// The cached statement for `sql`, prepared on first use. A statement in use by a
    /// live cursor is never handed out twice: a fresh one is prepared instead.
    func cachedStatement(_ sql: String) throws -> Statement {
        try access.check()
        if let last = lastStatement, !last.isInUse, last.sql == sql { return last }
        if let statement = statementCache[sql], !statement.isInUse {
            lastStatement = statement
            return statement
        }
        let handle = try openHandle()
        let statement = try Statement(database: handle, sql: sql, persistent: true, access: access)
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

    /// Prepares a statement that you own (not cached): it is finalized when released.
    ///
    /// For example, `let statement = try db.makeStatement(sql: "SELECT * FROM t WHERE id = ?")`.
    public func makeStatement(sql: String) throws -> Statement {
        let handle = try openHandle()
        return try Statement(database: handle, sql: sql, persistent: false, access: access, epoch: access.epoch)
    }

    /// How many prepared statements a connection keeps; past that the idle ones are
    /// finalized and prepared again on demand.
    static let statementCacheCapacity = 512

    /// The number of statements in this connection's cache.
    ///
    /// For example, `try db.cachedStatementCount`.
    public var cachedStatementCount: Int {
        get throws {
            try access.check()
            return engineConnection?.cachedStatementCount ?? statementCache.count
        }
    }

    /// Finalizes every cached statement not in use (they are prepared again on demand).
    ///
    /// For example, call `try db.clearStatementCache()` after a schema change in a long-lived connection.
    public func clearStatementCache() throws {
        try access.check()
        if let engineConnection { return try engineConnection.clearStatementCache() }
        clearStatementCacheUnchecked()
    }

    func clearStatementCacheUnchecked() {
        statementCache = statementCache.filter { $0.value.isInUse }
        lastStatement = nil
    }
}

@available(*, unavailable)
extension Database: Sendable {}

/// Throws when `text`, a path or a name handed to C, holds a NUL character: C would
/// read only the part before it, and open or create another file than the one meant.
func checkNoNUL(_ text: String, _ what: String) throws {
    guard !text.utf8.contains(0) else {
        throw DALError(
            .fileSystem,
            "the \(what) \(text.debugDescription) contains a NUL character, which would cut it short; refused")
    }
}

extension Database {
    /// Runs `body` again while it fails with `SQLITE_BUSY` or `SQLITE_LOCKED`, until the
    /// busy timeout has passed: for the few statements SQLite runs without its busy
    /// handler (changing the journal mode).
    func retryingWhileBusy<T>(_ body: () throws -> T) throws -> T {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: configuration.busyTimeout)
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.primaryCode == .busy || error.primaryCode == .locked {
                guard clock.now < deadline else { throw error }
                Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }
}
