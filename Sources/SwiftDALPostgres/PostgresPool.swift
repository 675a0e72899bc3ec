import Foundation
public import SwiftDALConnection

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
    /// Whether calls measure their wait for a connection (an observer reads it).
    private let measuresWaits: Bool
    /// What the pool's connections are called in errors: host, port and database.
    public let name: String
    /// The connections being opened now, which ``abandonConnectionsInUse()`` gives up on.
    private let openings: PostgresConnect.Openings
    /// The slots, the line of waiting callers and the connections' threads.
    private let core: PoolCore

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
        let name = Self.describe(url)
        self.name = name
        self.configuration = configuration
        var settings = Configuration()
        settings.callTimeout = configuration.callTimeout
        settings.trace = configuration.trace
        settings.observer = configuration.observer
        settings.slowStatementThreshold = configuration.slowStatementThreshold
        measuresWaits = settings.observer != nil
        let cancelSender = StopRequestSender(threadName: "dal-pg-cancel")
        let openings = PostgresConnect.Openings()
        self.openings = openings
        core = PoolCore(
            PoolCore.Options(
                name: "the PostgreSQL pool on \(name)", threadName: "dal-pg-",
                capacity: configuration.maximumConnections,
                acquireTimeout: configuration.acquireTimeout, callTimeout: configuration.callTimeout)
        ) { [settings] in
            let connection = try PostgresConnection(
                connectionString: url, configuration: configuration, name: name, cancelSender: cancelSender,
                openings: openings)
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

    /// Runs `body` in a transaction (``PostgresConfiguration/writeIsolation``): commits on
    /// return, rolls back on throw.
    ///
    /// For example, `try pool.write { db in try db.execute("DELETE FROM sessions") }`.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try core.writeTransaction(
            for: self, isolation: configuration.writeIsolation, measuringWaits: measuresWaits, body)
    }

    /// `write` at a given isolation level, for the transactions that need `.serializable`;
    /// a serialization failure is a ``PostgresError`` whose ``PostgresError/isRetryable``
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

    /// Runs `work` on a connection's thread under a time limit of `limit`, once one is free
    /// (waiting in line, holding no thread), and calls `completion` with its result: for a
    /// cluster's health checks, which must not depend on Swift's cooperative threads.
    package func start<T: Sendable>(
        limit: Duration, _ work: @escaping @Sendable () throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let control = CallControl(limitsWholeCall: true)
        control.addDeadline(after: limit, reporting: limit)
        core.start(under: control, work, completion: completion)
    }

    /// Whether the `async` call running on this thread waited in line for this pool (its
    /// first access here takes the connection reserved for it).
    package var isReservedOnThisThread: Bool { core.isReservedOnThisThread }

    /// The connections in use now, for a cluster that found their server not answering:
    /// each is abandoned (its socket shut down), so that the calls waiting on it fail at
    /// once (and a cluster's read that had no answer yet is run elsewhere).
    package func abandonConnectionsInUse() {
        core.forEachConnectionInUse { $0.abandonConnection() }
        openings.abortAll()  // and the connections being opened to it now
    }

    /// Refuses the calls waiting in line for a connection now, with
    /// ``SwiftDAL/DALError/Code/connectionUnavailable`` saying `why`: for a cluster whose
    /// replica left the rotation (its reads then run elsewhere).
    package func refuseCallersInLine(_ why: String) {
        core.refuseCallersInLine(why)
    }

    // MARK: Helpers

    /// Host, port and database of a connection string, without user or password; a URL's
    /// as a URL: a socket directory percent-encoded, as written in one
    /// (`postgresql://%2Ftmp%2Fpg:5432/shop`), whether it came as the host or as the
    /// `host` parameter; no host (libpq's default socket) left empty.
    static func describe(_ url: String) -> String {
        // Read from the URL without its password: a password holding a raw `@` and `/`
        // would otherwise give a host made of its pieces (`u:p@ss/x@h/db`).
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"),
            let components = URLComponents(string: ConnectionText.withoutPassword(url))
        {
            func parameter(_ name: String) -> String? {
                components.queryItems?.first { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : $0 }
            }
            let host = (parameter("host") ?? components.host ?? "").replacingOccurrences(of: "/", with: "%2F")
            let port = parameter("port") ?? components.port.map(String.init)
            return "postgresql://\(host)\(port.map { ":\($0)" } ?? "")\(components.path)"
        }
        var parts = [String]()
        for pair in url.split(separator: " ") {
            let keyValue = pair.split(separator: "=", maxSplits: 1)
            guard keyValue.count == 2, ["host", "port", "dbname"].contains(keyValue[0]) else { continue }
            parts.append("\(keyValue[0])=\(keyValue[1])")
        }
        return parts.isEmpty ? "PostgreSQL" : parts.joined(separator: " ")
    }

    /// Whether the pool refuses new calls (``close()`` or ``shutdown(gracePeriod:)`` began).
    package var refusesNewCalls: Bool { core.isClosing }
}
