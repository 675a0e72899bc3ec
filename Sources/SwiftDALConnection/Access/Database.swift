import Foundation
import Synchronization

/// One connection to a database: SQLite's (the embedded default, opened here with
/// ``init(path:mode:configuration:)``), or a server engine's, lent by that engine's pool.
///
/// You normally get a `Database` inside ``DatabaseQueue/read(_:)-8y1ua`` / ``DatabasePool/write(_:)-33uzx``
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

    /// The file path, or `":memory:"`; for a server engine, the connection's description
    /// (never with a password).
    public let path: String
    /// Whether this connection was opened read-only.
    public let isReadOnly: Bool
    package let configuration: Configuration
    /// `configuration.callTimeout`, kept apart: every access reads it, and reading it
    /// through `configuration` copied the whole configuration (its closures and observer).
    package let callTimeout: Duration?
    /// Who may use the connection now (see ``ConnectionAccess``).
    @usableFromInline package let access: ConnectionAccess
    /// The engine's connection this `Database` runs on.
    @usableFromInline package let connection: any EngineConnection
    /// The same connection when its statements are stepped in the caller's frame (SQLite's,
    /// ``SteppingConnection``): the generic reads then step them inlined, specialized for
    /// each entity. `nil` on a server engine. Called through optional chaining
    /// (`stepping?.start(query)`): `if let stepping` retained and released it on every call
    /// (callgrind, W5, W6).
    @usableFromInline let stepping: (any SteppingConnection)?
    /// Whether the connection can break or be ended by its server (a server engine's): only
    /// then does the pool ask it (``EngineConnection/isBroken``, `wasClosedWhileIdle()`) as it
    /// lends and takes it back.
    let mayBreak: Bool
    /// `connection.mayCommitImplicitly`, read once.
    let mayCommitImplicitly: Bool
    /// The observation to report each call to, when the engine's statements do not report
    /// themselves (``EngineConnection/reportsItsStatements``).
    let callObservation: StatementObservation?
    /// The rows changed by a server engine's last statement. Only the thread holding
    /// the connection touches it, never in overlapping accesses: not checked at run time
    /// (a thread-local lookup on every statement).
    @usableFromInline @exclusivity(unchecked) var engineChanges = 0
    var savepointDepth = 0
    /// Whether the body of a transaction this `Database` began runs now (`write`, `read`,
    /// ``inTransaction(_:isolation:_:)``): its statements may not end or start one
    /// (``checkNotTransactionControl(_:)``). Atomic: it is read before a call's access is
    /// checked, by any thread that calls (a connection that escaped its closure), and a
    /// relaxed load is a plain one.
    let runsATransactionsBody = Atomic<Bool>(false)
    /// Set by ``discardAfterUse()``.
    private var discardRequested = false

    /// A `Database` over `connection`, whose accesses `access` checks; `path` describes the
    /// connection in errors (never with a password).
    package init(
        connection: any EngineConnection, access: ConnectionAccess, path: String, isReadOnly: Bool,
        configuration: Configuration
    ) {
        self.path = path
        self.isReadOnly = isReadOnly
        self.configuration = configuration
        callTimeout = configuration.callTimeout
        self.access = access
        self.connection = connection
        stepping = connection as? any SteppingConnection
        mayBreak = connection.mayBreak
        mayCommitImplicitly = connection.mayCommitImplicitly
        callObservation = connection.reportsItsStatements ? nil : access.observation
    }

    /// A `Database` over another engine's connection, owned by that engine's pool (it is
    /// lent to one thread per access, like a pooled SQLite connection). `name` describes
    /// the connection in errors (never with a password).
    package convenience init(engine: any EngineConnection, name: String, configuration: Configuration) {
        let access = ConnectionAccess(
            path: name, observation: StatementObservation.make(configuration, engine: engine.engine, database: name))
        self.init(connection: engine, access: access, path: name, isReadOnly: false, configuration: configuration)
        access.becomeOwned()
    }

    /// The engine this connection runs on.
    ///
    /// For example, `if db.engine == .postgres { … }`.
    public var engine: DatabaseEngine { connection.engine }

    /// Calls `body` with `statement`, just started (``SteppingConnection/start(_:)``) to
    /// step in the caller's frame, and its rows, then ends it on every path: the per-call
    /// fast path of ``fetchFirst(_:_:)`` and the other generic reads, inlined into the
    /// caller and specialized for its row mapping. (Callers start it as
    /// `stepping?.start(query)`: binding `stepping` first retained it on every call.)
    @inlinable @inline(__always)
    func finish<T>(
        _ statement: any SteppedStatement, _ body: (any SteppedStatement, EngineResult) throws -> T
    ) throws -> T {
        let value: T
        do {
            value = try body(statement, statement.result)
        } catch {
            statement.finish(after: error)
            throw error
        }
        try statement.finish()
        return value
    }

    /// Forgets an interrupt once the call it was made for has let the connection go.
    func clearInterrupt() {
        connection.clearCancelRequest()
    }

    /// Interrupts the statement running on this connection now, from any thread (the
    /// caller guarantees the connection stays open meanwhile), and refuses the call's
    /// next statements (all but a rollback) until ``clearInterrupt()``.
    package func interruptRunningStatement() {
        connection.cancelRunningStatement()
    }

    /// How long an interrupted statement may take to end before its connection is
    /// abandoned (``abandonConnection()``): for engines whose interruption is a request to
    /// a server that may not answer; `nil` for SQLite, whose interruption is immediate.
    var interruptGracePeriod: Duration? { connection.interruptGracePeriod }

    /// Gives up on the connection of a stopped call whose server did not answer within the
    /// grace period: its socket is shut down, so the statement waiting for the server fails
    /// at once, and the pool replaces the connection. Never blocks; from any thread, while
    /// the call still holds the connection.
    package func abandonConnection() {
        connection.abandon()
    }

    /// Whether the engine connection failed in a way that makes it unusable (its pool
    /// then replaces it).
    package var isBrokenEngineConnection: Bool { mayBreak && connection.isBroken }

    /// Whether the server ended this connection's session while it sat idle (see
    /// ``EngineConnection/wasClosedWhileIdle()``); always `false` for SQLite.
    package var wasClosedWhileIdle: Bool { mayBreak && connection.wasClosedWhileIdle() }

    /// Whether the pool must close this connection when the current call lets it go: it
    /// broke, or the call left session state it could not clear (``discardAfterUse()``).
    /// Never for SQLite's, which holds nothing beyond its transaction, always ended (a
    /// queue's one connection is never opened again).
    package var mustBeDiscarded: Bool {
        mayBreak && (discardRequested || connection.isBroken)
    }

    /// Asks the pool to close this connection, rather than lend it again, when the current
    /// call lets it go: for a call that could not clear session state it set (an advisory
    /// lock it could not release). The server ends the session, and what it held with it.
    package func discardAfterUse() {
        discardRequested = true
    }

    /// Hands the wait of the call now holding the connection to its first statement's
    /// report (when an observer reads it).
    package func recordWait(nanoseconds: UInt64) {
        access.observation?.pendingWait = .nanoseconds(Int64(clamping: nanoseconds))
    }

    /// Whether the connection has a bulk path (`copyRows`): PostgreSQL's `COPY`.
    package var hasBulkPath: Bool { connection.hasBulkPath }

    /// How many statements have completed on the engine connection (0 for SQLite).
    package var engineCompletedStatements: Int { connection.completedStatements }

    /// How many results the engine connection has read in binary (0 for SQLite).
    package var engineBinaryResults: Int { connection.binaryResults }

    /// Closes a connection owned by an engine's pool.
    package func closeOwnedConnection() throws {
        try closeConnection()
    }

    deinit {
        releaseConnection()
    }

    /// Closes the connection whatever is still open (see ``EngineConnection/close()``).
    private func releaseConnection() {
        access.markClosed()
        connection.close()
    }

    /// Whether the connection is closed, readable from any thread (for gauges).
    var isClosedForGauges: Bool { access.holder.load(ordering: .relaxed) == ConnectionAccess.closed }

    /// Whether ``close()`` has succeeded.
    public var isClosed: Bool { access.holder.load(ordering: .relaxed) == ConnectionAccess.closed }

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
                "this connection to \(path) belongs to a queue or pool: close that instead")
        }
        try closeOwnConnection()
    }

    /// Closes the connection (the queue or pool that owns it calls this, with no access
    /// in progress). A pooled connection always closes: statements or cursors that
    /// escaped their access keep it as a zombie until they are released, and throw.
    func closeConnection() throws {
        guard !isClosed else { return }
        guard access.holder.load(ordering: .relaxed) == ConnectionAccess.unrestricted else {
            access.begin()  // the statements released below are finalized by this thread
            releaseConnection()
            return
        }
        try closeOwnConnection()
    }

    /// Closes a connection opened directly, refusing while statements are still open.
    private func closeOwnConnection() throws {
        try connection.closeRefusingOpenStatements()
        releaseConnection()
    }

    // MARK: Accesses (a queue or pool lends the connection to one thread at a time)

    /// Lends the connection to the calling thread.
    func beginAccess() {
        access.begin()
    }

    /// Ends the calling thread's access: the engine lets go of what the access left open
    /// (SQLite resets cursors still open, so they release their snapshot and locks, and
    /// any later use throws), then no thread holds it.
    func endAccess() {
        if access.endsWithCleanup {
            access.endsWithCleanup = false
            connection.accessEnding()
        }
        access.end()
    }

    // MARK: Statements

    /// The number of statements in this connection's cache.
    ///
    /// For example, `try db.cachedStatementCount`.
    public var cachedStatementCount: Int {
        get throws {
            try access.check()
            return connection.cachedStatementCount
        }
    }

    /// Finalizes every cached statement not in use (they are prepared again on demand).
    ///
    /// For example, call `try db.clearStatementCache()` after a schema change in a long-lived connection.
    public func clearStatementCache() throws {
        try access.check()
        try connection.clearStatementCache()
    }
}

@available(*, unavailable)
extension Database: Sendable {}

/// Throws when `text`, a path or a name handed to C, holds a NUL character: C would
/// read only the part before it, and open or create another file than the one meant.
package func checkNoNUL(_ text: String, _ what: String) throws {
    guard !text.utf8.contains(0) else {
        throw DALError(
            .fileSystem,
            "the \(what) \(text.debugDescription) contains a NUL character, which would cut it short; refused")
    }
}
