public import SwiftDALConnection
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
    // The connection is only touched by the holder of the core's one slot.
    private let database: Database
    private let core: PoolCore
    /// Whether `PRAGMA query_only` is still on (a read could not turn it off); only
    /// touched by the holder of the slot.
    private var queryOnly = false
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
        core = Self.makeCore(database, name: path, callTimeout: configuration.callTimeout)
    }

    /// The core of one slot holding `database` (never reopened: a queue's connection may
    /// be an in-memory database).
    private static func makeCore(_ database: Database, name: String, callTimeout: Duration?) -> PoolCore {
        let core = PoolCore(
            PoolCore.Options(
                name: "the queue on \(name)", threadName: "dal-queue", capacity: 1, callTimeout: callTimeout)
        ) {
            throw DALError(.connectionClosed, "the queue on \(name) is closed")
        }
        core.install(database, at: 0)
        return core
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
        core = Self.makeCore(database, name: database.path, callTimeout: configuration.callTimeout)
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

    /// Runs `body` holding the queue's one slot (waiting in line for it), as an access of
    /// `isWriter` (``ThreadAccess/holding(_:of:isWriter:waited:holdings:_:)``).
    private func withConnection<T>(isWriter: Bool, _ body: () throws -> T) throws -> T {
        let holdings = ThreadAccess.holdings
        let lease = try core.acquire(for: holdings)
        defer { core.release(lease, for: holdings) }
        if measuresWaits { database.recordWait(nanoseconds: lease.waited) }
        return try ThreadAccess.holding(
            database, of: self, isWriter: isWriter, waited: lease.waited, holdings: holdings, body)
    }

    /// How busy the queue is now: its one connection, whether a call holds it, and the
    /// callers waiting for it.
    ///
    /// For example, `metrics.gauge("db.waiting", queue.statistics.callersWaiting)`.
    public var statistics: PoolStatistics { core.statistics }

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

    /// See ``DatabaseReader/perform(writing:_:)``: the connection's own thread, for reads and writes.
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await core.perform(work)
    }

    /// `read` for `async` code, on SwiftDAL's own threads.
    ///
    /// For example, `let n = try await database.read { db in try db.fetchScalar(Int.self, "SELECT 1") }`.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: false) { try self.read(body) }
    }

    /// `write` for `async` code, on the connection's own thread.
    ///
    /// For example, `try await database.write { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: true) { try self.write(body) }
    }

    /// Refuses new calls (they throw ``DALError/Code/connectionClosed``), waits for the
    /// calls in flight and in line to finish, then closes the connection.
    ///
    /// For example, `try queue.close()`.
    public func close() throws {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("close") }
        core.close()
    }

    /// ``close()`` for a service's shutdown: refuses new calls at once, lets the calls in
    /// flight and in line finish, holding no thread while it waits, then closes the
    /// connection. Calls still running after `gracePeriod` (`nil`: no limit) are stopped.
    ///
    /// For example, `await queue.shutdown(gracePeriod: .seconds(10))`.
    public func shutdown(gracePeriod: Duration? = .seconds(30)) async {
        await core.shutdown(gracePeriod: gracePeriod)
    }

    /// Whether the queue refuses new calls (``close()`` or ``shutdown(gracePeriod:)`` began).
    package var refusesNewCalls: Bool { core.isClosing }
}
