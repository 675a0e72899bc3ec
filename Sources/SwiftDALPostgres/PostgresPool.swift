import Dispatch
import Foundation
public import SwiftDALConnection
import Synchronization

/// A pool of connections to a PostgreSQL server, and a ``SwiftDAL/DatabaseWriter`` like
/// ``SwiftDAL/DatabasePool``: the same table DALs, entities and conditions run on it, and only the
/// line that builds the database object changes.
///
/// - `write { db in }` runs a transaction (read committed, or
///   ``PostgresConfiguration/writeIsolation``) that commits on return and rolls back on
///   throw; `read { db in }` a read-only, repeatable-read transaction (one snapshot).
/// - Connections open on first need, up to ``PostgresConfiguration/maximumConnections``;
///   a caller waits at most ``PostgresConfiguration/acquireTimeout`` for a free one, then
///   gets ``SwiftDAL/DALError/Code/connectionUnavailable``.
/// - A connection that failed (the server restarted, the network dropped) is closed and
///   replaced at its next use; the call that met the failure gets the error (a
///   ``PostgresError`` with ``PostgresError/isConnectionFailure``), nothing is retried
///   behind your back, and nothing acknowledged is lost.
/// - The async forms run on the pool's own threads, never on Swift's cooperative pool.
///
/// On PostgreSQL an error inside a transaction aborts it: catch it inside
/// `db.inSavepoint { }` to carry on with the rest of the transaction.
///
/// For example:
///
/// ```swift
/// let pool = try PostgresPool(url: "postgresql://app@localhost/shop")
/// let users = UserDAL(database: pool)          // the same DAL class as on SQLite
/// let id = try users.insert2(UserInfo(name: "Ann", email: "ann@example.com", age: 31))
/// ```
public final class PostgresPool: DatabaseWriter, @unchecked Sendable {
    /// The pool's settings.
    public let configuration: PostgresConfiguration
    private let connectionString: String
    /// What each connection's `Database` is opened with (time limit, observer).
    private let settings: Configuration
    /// Whether calls measure their wait for a connection (an observer reads it).
    private let measuresWaits: Bool
    /// What the pool's connections are called in errors: host, port and database.
    public let name: String
    private let slots: [Slot]
    private let available: DispatchSemaphore
    private let isClosed = Atomic<Bool>(false)
    /// Gauges: connections open, callers waiting for one.
    private let openCount = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)
    private let queue = makeQueue("SwiftDAL.PostgresPool", concurrent: true)

    /// One connection place: the `Database` (over a libpq connection) when open.
    private final class Slot: @unchecked Sendable {
        // Touched only by the thread that set `busy` from false to true.
        var database: Database?
        let busy = Atomic<Bool>(false)

        func tryAcquire() -> Bool {
            busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        }

        func release() { busy.store(false, ordering: .releasing) }
    }

    /// A pool for the server at `url`: a `postgresql://user:password@host:port/database`
    /// URI or a libpq keyword string (`host=/tmp port=5432 dbname=shop user=app`). No
    /// connection opens until the first use; call ``checkConnection()`` to fail fast at
    /// startup.
    ///
    /// For example, `let pool = try PostgresPool(url: "postgresql://app@localhost/shop")`.
    public init(url: String, configuration: PostgresConfiguration = PostgresConfiguration()) throws {
        guard configuration.maximumConnections >= 1 else {
            throw DALError(.invalidValue, "a PostgreSQL pool needs at least one connection")
        }
        guard !url.utf8.contains(0) else {
            throw DALError(.invalidValue, "the connection string contains a NUL character")
        }
        guard !(configuration.transactionPooling && configuration.statementTimeout != nil) else {
            throw DALError(
                .invalidValue,
                "statementTimeout needs a session setting, which transaction pooling does not keep: "
                    + "set statement_timeout on the server or the role instead")
        }
        connectionString = url
        name = Self.describe(url)
        self.configuration = configuration
        var settings = Configuration()
        settings.callTimeout = configuration.callTimeout
        settings.trace = configuration.trace
        settings.observer = configuration.observer
        settings.slowStatementThreshold = configuration.slowStatementThreshold
        self.settings = settings
        measuresWaits = settings.observer != nil
        slots = (0..<configuration.maximumConnections).map { _ in Slot() }
        available = DispatchSemaphore(value: configuration.maximumConnections)
    }

    /// Opens a connection now (or reuses one), so that a wrong address or password fails
    /// at startup rather than at the first request.
    ///
    /// For example, `try pool.checkConnection()`.
    public func checkConnection() throws {
        _ = try reentrantRead { db in try db.fetchScalar(Int.self, "SELECT 1") }
    }

    // MARK: Lending connections

    private func withConnection<T>(writing: Bool, _ body: (Database) throws -> T) throws -> T {
        guard !isClosed.load(ordering: .acquiring) else {
            throw DALError(.connectionClosed, "the PostgreSQL pool on \(name) is closed")
        }
        let wait = ConnectionWait(measuring: measuresWaits)
        // The clock is read only when no connection is free.
        guard
            let waited = try available.wait(
                until: .now() + .nanoseconds(Int(clamping: configuration.acquireTimeout.clampedNanoseconds)),
                countingWaitersIn: waiting, callTimeout: configuration.callTimeout)
        else {
            throw DALError(
                .connectionUnavailable,
                "no PostgreSQL connection to \(name) became free within \(configuration.acquireTimeout) "
                    + "(all \(slots.count) in use)")
        }
        let slot = acquireSlot()
        defer {
            if let database = slot.database, database.isBrokenEngineConnection {
                // A connection that failed is closed now and replaced at the slot's next use.
                slot.database = nil
                try? database.closeOwnedConnection()
                openCount.subtract(1, ordering: .relaxed)
            }
            slot.release()
            available.signal()
        }
        let database = try slot.database ?? openDatabase(into: slot)
        wait.record(on: database)
        return try withLentConnection(database, of: self, isWriter: writing, waited: waited) {
            // A transaction a failed rollback left open must not be joined.
            try database.discardLeftoverTransaction()
            return try body(database)
        }
    }

    private func acquireSlot() -> Slot {
        while true {
            for slot in slots where slot.tryAcquire() { return slot }
        }
    }

    private func openDatabase(into slot: Slot) throws -> Database {
        let connection = try PostgresConnection(
            connectionString: connectionString, configuration: configuration, name: name)
        let database = Database(engine: connection, name: name, configuration: settings)
        slot.database = database
        openCount.add(1, ordering: .relaxed)
        return database
    }

    // MARK: DatabaseWriter

    /// Runs `body` in a read-only, repeatable-read transaction: one snapshot.
    ///
    /// For example, `let n = try pool.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") }`.
    @discardableResult
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        guard !isHoldingConnection(of: self) else { throw reentrancyError("read") }
        return try withConnection(writing: false) { db in
            try db.inTransaction(.deferred, isolation: .repeatableRead, readOnly: true) { try body(db) }
        }
    }

    /// See ``DatabaseReader/reentrantRead(_:)``.
    ///
    /// For example, `try pool.reentrantRead { db in try db.fetchOne("SELECT 1") }`.
    @discardableResult
    public func reentrantRead<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(of: self, writing: false) { return try body(held) }
        return try withConnection(writing: false, body)
    }

    /// Runs `body` in a transaction (``PostgresConfiguration/writeIsolation``): commits on
    /// return, rolls back on throw.
    ///
    /// For example, `try pool.write { db in try db.execute("DELETE FROM sessions") }`.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard !isHoldingConnection(of: self) else { throw reentrancyError("write") }
        return try withConnection(writing: true) { db in
            try db.inTransaction(.immediate, isolation: configuration.writeIsolation) { try body(db) }
        }
    }

    /// `write` at a given isolation level, for the transactions that need `.serializable`;
    /// a serialization failure is a ``PostgresError`` whose ``PostgresError/isRetryable``
    /// is true: run the closure again.
    ///
    /// For example, `try pool.write(isolation: .serializable) { db in try transfer(db) }`.
    @discardableResult
    public func write<T>(isolation: IsolationLevel, _ body: (Database) throws -> T) throws -> T {
        guard !isHoldingConnection(of: self) else { throw reentrancyError("write") }
        return try withConnection(writing: true) { db in
            try db.inTransaction(.immediate, isolation: isolation) { try body(db) }
        }
    }

    /// See ``DatabaseWriter/reentrantWrite(_:)``.
    ///
    /// For example, `try pool.reentrantWrite { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func reentrantWrite<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(of: self, writing: true) { return try body(held) }
        return try withConnection(writing: true, body)
    }

    /// See ``DatabaseReader/perform(writing:_:)``: the pool's own concurrent queue.
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await performOnQueue(queue, work)
    }

    /// `read` for `async` code, on the pool's own threads.
    ///
    /// For example, `let n = try await pool.read { db in try db.fetchScalar(Int.self, "SELECT 1") }`.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: false) { try self.read(body) }
    }

    /// `write` for `async` code, on the pool's own threads.
    ///
    /// For example, `try await pool.write { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: true) { try self.write(body) }
    }

    /// Waits for every connection to be free, then closes them all; later accesses
    /// throw ``DALError/Code/connectionClosed``.
    ///
    /// For example, `try pool.close()`.
    public func close() throws {
        guard !isHoldingConnection(of: self) else { throw reentrancyError("close") }
        for _ in slots { available.wait() }
        defer { for _ in slots { available.signal() } }
        isClosed.store(true, ordering: .releasing)
        for slot in slots where slot.database != nil {
            try? slot.database?.closeOwnedConnection()
            slot.database = nil
            openCount.subtract(1, ordering: .relaxed)
        }
    }

    /// How busy the pool is now: its connections open and in use, and the callers
    /// waiting for one.
    ///
    /// For example, `metrics.gauge("db.waiting", pool.statistics.callersWaiting)`.
    public var statistics: PoolStatistics {
        PoolStatistics(
            connectionsOpen: openCount.load(ordering: .relaxed),
            connectionsInUse: slots.reduce(0) { $0 + ($1.busy.load(ordering: .relaxed) ? 1 : 0) },
            callersWaiting: waiting.load(ordering: .relaxed), maximumConnections: slots.count)
    }

    // MARK: Helpers

    /// Host, port and database of a connection string, without user or password.
    static func describe(_ url: String) -> String {
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"), let components = URLComponents(string: url) {
            let database = components.path.isEmpty ? "" : components.path
            return "postgresql://\(components.host ?? "localhost")\(components.port.map { ":\($0)" } ?? "")\(database)"
        }
        var parts = [String]()
        for pair in url.split(separator: " ") {
            let keyValue = pair.split(separator: "=", maxSplits: 1)
            guard keyValue.count == 2, ["host", "port", "dbname"].contains(keyValue[0]) else { continue }
            parts.append("\(keyValue[0])=\(keyValue[1])")
        }
        return parts.isEmpty ? "PostgreSQL" : parts.joined(separator: " ")
    }
}
