import Foundation
public import SwiftDALConnection

/// A pool of connections to a MariaDB server, and a ``SwiftDAL/DatabaseWriter``
/// like ``SwiftDAL/DatabasePool``: the same table DALs, entities and conditions run on it,
/// and only the line that builds the database object changes.
///
/// - `write { db in }` runs a transaction (the server's default isolation, repeatable
///   read, or ``MariaDBConfiguration/writeIsolation``) that commits on return and rolls
///   back on throw; `read { db in }` a read-only, repeatable-read transaction (one snapshot).
/// - Connections open on first need, up to ``MariaDBConfiguration/maximumConnections``;
///   a caller waits at most ``MariaDBConfiguration/acquireTimeout`` for a free one, then
///   gets ``SwiftDAL/DALError/Code/connectionUnavailable``.
/// - A connection that failed (the server restarted, the network dropped) is closed and
///   replaced at its next use; the call that met the failure gets the error (a
///   ``MariaDBError`` with ``MariaDBError/isConnectionFailure``), nothing is retried
///   behind your back.
/// - A call stopped (its time limit, its task cancelled) sends `KILL QUERY` from a thread
///   of its own, then rolls its transaction back.
/// - The async forms run on the pool's own threads, never on Swift's cooperative pool.
///
/// MariaDB's DDL commits the open transaction: a migration step that runs DDL keeps what it
/// ran up to a failure (the error says so).
///
/// For example:
///
/// ```swift
/// let pool = try MariaDBPool(url: "mysql://app:secret@localhost/shop?socket=/run/mysqld/mysqld.sock")
/// let users = UserDAL(database: pool)          // the same DAL class as on SQLite
/// let n = try users.getRecordCount()
/// ```
public final class MariaDBPool: DatabaseWriter, @unchecked Sendable {
    /// The pool's settings.
    public let configuration: MariaDBConfiguration
    /// Whether calls measure their wait for a connection (an observer reads it).
    private let measuresWaits: Bool
    /// What the pool's connections are called in errors: socket or host, and database.
    public let name: String
    /// The slots, the line of waiting callers and the connections' threads.
    private let core: PoolCore

    /// A pool for the server at `url`: `mysql://user:password@host:port/database`, over a
    /// Unix socket with `?socket=/path` (`connect_timeout=` seconds may follow). Host
    /// `localhost` without a socket means Connector/C's default socket; use `127.0.0.1` for
    /// TCP on this machine. User and password may be percent-encoded. No
    /// connection opens until the first use; call ``checkConnection()`` to fail fast at
    /// startup.
    ///
    /// For example, `let pool = try MariaDBPool(url: "mysql://app:secret@db.internal:3306/shop")`.
    public init(url: String, configuration: MariaDBConfiguration = MariaDBConfiguration()) throws {
        guard configuration.maximumConnections >= 1 else {
            throw DALError(.invalidValue, "a MariaDB pool needs at least one connection")
        }
        let endpoint = try MariaDBEndpoint(url: url, configuration: configuration)
        let name = endpoint.name
        self.name = name
        self.configuration = configuration
        var settings = Configuration()
        settings.callTimeout = configuration.callTimeout
        settings.trace = configuration.trace
        settings.observer = configuration.observer
        settings.slowStatementThreshold = configuration.slowStatementThreshold
        measuresWaits = settings.observer != nil
        let killSender = StopRequestSender(threadName: "dal-my-kill")
        let reaper = MariaDBSessionReaper(endpoint: endpoint)
        core = PoolCore(
            PoolCore.Options(
                name: "the MariaDB pool on \(name)", threadName: "dal-my-",
                capacity: configuration.maximumConnections,
                acquireTimeout: configuration.acquireTimeout, callTimeout: configuration.callTimeout)
        ) { [settings] in
            let connection = try MariaDBConnection(
                endpoint: endpoint, configuration: configuration, killSender: killSender, reaper: reaper)
            return Database(engine: connection, name: name, configuration: settings)
        }
    }

    /// Opens a connection now (or reuses one), so that a wrong address or password fails
    /// at startup rather than at the first request.
    ///
    /// For example, `try pool.checkConnection()`.
    public func checkConnection() throws {
        _ = try reentrantRead { db in try db.fetchScalar(Int.self, "SELECT 1") }
    }

    // MARK: DatabaseWriter

    /// Runs `body` in a read-only, repeatable-read transaction: one snapshot.
    ///
    /// For example, `let n = try pool.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") }`.
    @discardableResult
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try core.readTransaction(for: self, measuringWaits: measuresWaits, body)
    }

    /// See ``DatabaseReader/reentrantRead(_:)``.
    ///
    /// For example, `try pool.reentrantRead { db in try db.fetchOne("SELECT 1") }`.
    @discardableResult
    public func reentrantRead<T>(_ body: (Database) throws -> T) throws -> T {
        try core.reentrantAccess(for: self, writing: false, measuringWaits: measuresWaits, body)
    }

    /// Runs `body` in a transaction (``MariaDBConfiguration/writeIsolation``): commits on
    /// return, rolls back on throw.
    ///
    /// For example, `try pool.write { db in try db.execute("DELETE FROM sessions") }`.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try core.writeTransaction(
            for: self, isolation: configuration.writeIsolation, measuringWaits: measuresWaits, body)
    }

    /// `write` at a given isolation level, for the transactions that need `.serializable`;
    /// a deadlock is a ``MariaDBError`` whose ``MariaDBError/isRetryable``
    /// is true: run the closure again.
    ///
    /// For example, `try pool.write(isolation: .serializable) { db in try transfer(db) }`.
    @discardableResult
    public func write<T>(isolation: IsolationLevel, _ body: (Database) throws -> T) throws -> T {
        try core.writeTransaction(for: self, isolation: isolation, measuringWaits: measuresWaits, body)
    }

    /// See ``DatabaseWriter/reentrantWrite(_:)``.
    ///
    /// For example, `try pool.reentrantWrite { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func reentrantWrite<T>(_ body: (Database) throws -> T) throws -> T {
        try core.reentrantAccess(for: self, writing: true, measuringWaits: measuresWaits, body)
    }

    /// See ``DatabaseReader/perform(writing:_:)``: a connection's own thread, once one is
    /// free (the call waits in line holding no thread).
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await core.perform(work)
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

    /// Refuses new calls (they throw ``SwiftDAL/DALError/Code/connectionClosed``), waits
    /// for the calls in flight and in line to finish, then closes every connection.
    ///
    /// For example, `try pool.close()`.
    public func close() throws {
        guard !isHoldingConnection(of: self) else { throw reentrancyError("close") }
        core.close()
    }

    /// ``close()`` for a service's shutdown: refuses new calls at once, lets the calls in
    /// flight and in line finish, holding no thread while it waits, then closes every
    /// connection. Calls still running after `gracePeriod` (`nil`: no limit) are stopped
    /// (a cancel request each) and throw.
    ///
    /// For example, in a service's shutdown: `await pool.shutdown(gracePeriod: .seconds(10))`.
    public func shutdown(gracePeriod: Duration? = .seconds(30)) async {
        await core.shutdown(gracePeriod: gracePeriod)
    }

    /// How busy the pool is now: its connections open and in use, and the callers
    /// waiting for one.
    ///
    /// For example, `metrics.gauge("db.waiting", pool.statistics.callersWaiting)`.
    public var statistics: PoolStatistics { core.statistics }

    /// Whether the pool refuses new calls (``close()`` or ``shutdown(gracePeriod:)`` began).
    package var refusesNewCalls: Bool { core.isClosing }
}
