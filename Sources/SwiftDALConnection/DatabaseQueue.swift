import Dispatch
import Synchronization

/// One serialized connection, safe to share between threads and tasks: every access
/// takes the connection in turn. Simple, and right for tools, tests, in-memory
/// databases and light services; use ``DatabasePool`` for concurrent reads.
///
/// For example:
///
/// ```swift
/// let queue = try DatabaseQueue(path: "app.sqlite")
/// try queue.write { db in try db.execute("INSERT INTO t(name) VALUES (\("Ann"))") }
/// let count = try queue.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") }
/// ```
public final class DatabaseQueue: DatabaseWriter, @unchecked Sendable {
    // The connection is only touched with `mutex` held.
    private let database: Database
    private let mutex = PlainMutex()
    /// Whether `PRAGMA query_only` is still on (a read could not turn it off); only
    /// touched with `mutex` held.
    private var queryOnly = false
    private let queue: DispatchQueue
    /// Gauges: callers waiting for the connection, whether a call holds it.
    private let waiting = Atomic<Int>(0)
    private let inUse = Atomic<Bool>(false)
    /// The configuration the connection was opened with.
    public let configuration: Configuration
    /// Whether calls measure their wait for the connection (an observer reads it).
    private let measuresWaits: Bool

    /// Opens the database at `path`. When `template` is given and `path` does not exist,
    /// the template file is copied there first (the template itself is never modified).
    ///
    /// For example, `let queue = try DatabaseQueue(path: "data/app.sqlite", template: "Fixtures/sample.sqlite")`.
    public init(
        path: String, mode: Database.Mode = .readWrite, template: String? = nil,
        configuration: Configuration = Configuration()
    ) throws {
        if let template { try Database.copyTemplateIfMissing(template, to: path) }
        database = try Database(path: path, isMemory: false, mode: mode, configuration: configuration, owned: true)
        self.configuration = configuration
        measuresWaits = configuration.observer != nil
        queue = makeQueue("SwiftDAL.DatabaseQueue")
    }

    /// Wraps a connection you opened (an in-memory database, an in-memory copy of a
    /// fixture). The queue owns it from now on: using it directly afterwards throws
    /// ``DALError/Code/accessEnded``, and so do its statements and cursors. Throws the
    /// same error for a connection that already belongs to a queue or pool.
    ///
    /// For example, `let queue = try DatabaseQueue(Database.inMemory())`.
    public init(_ database: Database) throws {
        guard database.access.holder.load(ordering: .relaxed) == ConnectionAccess.unrestricted else {
            throw DALError(
                .accessEnded, "this connection to \(database.path) is closed or already belongs to a queue or pool")
        }
        database.access.becomeOwned()
        self.database = database
        configuration = database.configuration
        measuresWaits = configuration.observer != nil
        queue = makeQueue("SwiftDAL.DatabaseQueue")
    }

    /// A queue over a new, empty in-memory database.
    ///
    /// For example, `let queue = try DatabaseQueue.inMemory()`.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> DatabaseQueue {
        try DatabaseQueue(Database.inMemory(configuration: configuration))
    }

    /// Runs `body` in a deferred transaction with `PRAGMA query_only` on: any write
    /// inside throws `SQLITE_READONLY`.
    ///
    /// For example, `let rows = try queue.read { db in try db.fetchAll("SELECT * FROM t") }`.
    @discardableResult
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("read") }
        return try withConnection(isWriter: false) {
            try prepareForUse()
            try database.execute(sql: "PRAGMA query_only = ON")
            queryOnly = true
            let result: Result<T, any Error> = Result {
                try database.inTransaction(.deferred) { try body(database) }
            }
            try database.execute(sql: "PRAGMA query_only = OFF")
            queryOnly = false
            return try result.get()
        }
    }

    /// See ``DatabaseReader/reentrantRead(_:)``.
    ///
    /// For example, `try queue.reentrantRead { db in try db.fetchOne("SELECT 1") }`.
    @discardableResult
    public func reentrantRead<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(of: self, writing: false) { return try body(held) }
        return try withConnection(isWriter: false) {
            try prepareForUse()
            return try body(database)
        }
    }

    /// Runs `body` holding the connection's lock (counting the wait, marking it in use),
    /// as an access of `isWriter` (``ThreadAccess/holding(_:of:isWriter:waited:_:)``).
    private func withConnection<T>(isWriter: Bool, _ body: () throws -> T) throws -> T {
        let wait = ConnectionWait(measuring: measuresWaits)
        return try mutex.withLock(countingWaitersIn: waiting, callTimeout: configuration.callTimeout) { waited in
            inUse.store(true, ordering: .relaxed)
            defer { inUse.store(false, ordering: .relaxed) }
            wait.record(on: database)
            return try ThreadAccess.holding(database, of: self, isWriter: isWriter, waited: waited, body)
        }
    }

    /// How busy the queue is now: its one connection, whether a call holds it, and the
    /// callers waiting for it.
    ///
    /// For example, `metrics.gauge("db.waiting", queue.statistics.callersWaiting)`.
    public var statistics: PoolStatistics {
        PoolStatistics(
            connectionsOpen: database.isClosedForGauges ? 0 : 1,
            connectionsInUse: inUse.load(ordering: .relaxed) ? 1 : 0,
            callersWaiting: waiting.load(ordering: .relaxed), maximumConnections: 1)
    }

    /// Clears what a failed access may have left behind: an open transaction (a failed
    /// rollback), `query_only` still on (a read that could not turn it off).
    private func prepareForUse() throws {
        try database.discardLeftoverTransaction()
        if queryOnly {
            try database.execute(sql: "PRAGMA query_only = OFF")
            queryOnly = false
        }
    }

    /// Runs `body` in an `IMMEDIATE` transaction; commits on return, rolls back on throw.
    ///
    /// For example, `try queue.write { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("write") }
        return try withConnection(isWriter: true) {
            try prepareForUse()
            return try database.inTransaction(.immediate) { try body(database) }
        }
    }

    /// See ``DatabaseWriter/reentrantWrite(_:)``.
    ///
    /// For example, `try queue.reentrantWrite { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func reentrantWrite<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(of: self, writing: true) { return try body(held) }
        return try withConnection(isWriter: true) {
            try prepareForUse()
            return try body(database)
        }
    }

    /// See ``DatabaseReader/perform(writing:_:)``: one serial queue for reads and writes.
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await performOnQueue(queue, work)
    }

    /// `read` for `async` code, on SwiftDAL's own threads.
    ///
    /// For example, `let n = try await database.read { db in try db.fetchScalar(Int.self, "SELECT 1") }`.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: false) { try self.read(body) }
    }

    /// `write` for `async` code, on SwiftDAL's own writer queue.
    ///
    /// For example, `try await database.write { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: true) { try self.write(body) }
    }

    /// Closes the connection; see ``Database/close()``.
    ///
    /// For example, `try queue.close()`.
    public func close() throws {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("close") }
        try mutex.withLock { try database.closeConnection() }
    }
}

func writeInReadError() -> DALError {
    DALError(.writeInReadOnlyAccess, "a write was attempted inside a read-only access (a read closure)")
}
