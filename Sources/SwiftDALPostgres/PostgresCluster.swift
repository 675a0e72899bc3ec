import Dispatch
import Foundation
public import SwiftDALConnection
import Synchronization

/// How a ``PostgresCluster`` routes and checks its hosts.
///
/// For example:
///
/// ```swift
/// var configuration = PostgresClusterConfiguration()
/// configuration.maximumReplicaLag = .bytes(1 << 20)
/// ```
public struct PostgresClusterConfiguration: Sendable {
    /// How far behind a replica may be and still serve reads without a token.
    ///
    /// For example, `configuration.maximumReplicaLag = .time(.seconds(2))`.
    public enum ReplicaLag: Sendable, Hashable {
        /// At most this many bytes of the primary's write-ahead log not yet replayed.
        case bytes(Int64)
        /// The last transaction replayed at most this long ago, when WAL is still pending.
        case time(Duration)
    }

    /// The settings of each host's pool (the primary's and each replica's).
    public var pool = PostgresConfiguration()
    /// A replica further behind leaves the rotation until it catches up (16 MiB).
    public var maximumReplicaLag = ReplicaLag.bytes(16 << 20)
    /// How often each replica's health and lag are checked.
    public var healthCheckInterval: Duration = .milliseconds(250)
    /// How long a health check waits for a host's answer. A replica that does not answer
    /// in time (a hung server accepts connections and never answers) leaves the rotation,
    /// and the reads waiting on it are stopped: those that had no answer yet run elsewhere.
    /// The checks of all hosts run at once, each on a connection of its own: one hung host
    /// never delays the others' checks.
    public var healthCheckTimeout: Duration = .seconds(2)
    /// Whether reads in a ``ConsistencySession`` honour its token (turn off only to see,
    /// in a test, the stale read it prevents).
    public var readYourWrites = true

    /// The defaults above.
    ///
    /// For example, `let cluster = try PostgresCluster(primary: url, replicas: [r1, r2], configuration: .init())`.
    public init() {}
}

/// What a ``PostgresCluster`` last learned of a replica.
///
/// For example, `cluster.replicaStatuses.filter(\.isInRotation).count`.
public struct ReplicaStatus: Sendable, Hashable {
    /// The replica's host, port and database.
    public let name: String
    /// Whether reads may go to it now.
    public let isInRotation: Bool
    /// The bytes of WAL it had not replayed at the last check (`nil`: unknown).
    public let lagBytes: Int64?
    /// Why it is out of the rotation, when it is.
    public let problem: String?
}

/// A PostgreSQL primary with hot standbys, as one ``SwiftDAL/DatabaseWriter``: every DAL works on
/// it unchanged. Writes and `write { }` transactions go to the primary; reads and
/// `read { }` go to a healthy replica (in turn), else to the primary.
///
/// **Read-your-writes.** Inside a ``ConsistencySession`` (`session.run { }`), each write
/// moves the session to the primary's WAL position after it commits, and each read goes
/// only to a replica that has replayed that position, checked on the connection chosen,
/// at the moment it is chosen (the check is the read transaction's first statement, so its
/// snapshot holds the write); when none has, the read goes to the primary. The session's
/// ``ConsistencySession/token`` travels between requests and service instances. Without a
/// session (or a token), a read may be as stale as ``PostgresClusterConfiguration/maximumReplicaLag``.
///
/// **Health.** Each replica is checked every ``PostgresClusterConfiguration/healthCheckInterval``:
/// one that is unreachable, no longer a standby, or further behind than the bound leaves
/// the rotation, and comes back by itself. A read that fails on a broken replica connection
/// before any of its statements returned is run once more elsewhere (so a `read` closure
/// may run twice then: keep its side effects after its reads); a read that cannot be
/// served anywhere throws.
///
/// **A primary that moves.** Give the primary as a multi-host string with
/// `target_session_attrs=read-write` (`host=a,b port=5432,5432 … target_session_attrs=read-write`):
/// after a standby is promoted, the primary pool's broken connections are replaced by
/// connections to the new primary, so writes resume without a restart; writes in flight
/// get typed errors. (With asynchronous replication, commits the old primary acknowledged
/// but had not sent may be lost in a crash: use synchronous replication where that matters.)
///
/// For example:
///
/// ```swift
/// let cluster = try PostgresCluster(
///     primary: "host=db1,db2 port=5432,5432 dbname=shop user=app target_session_attrs=read-write",
///     replicas: ["host=db2 dbname=shop user=app", "host=db3 dbname=shop user=app"])
/// let users = UserDAL(database: cluster)
/// ```
public final class PostgresCluster: DatabaseWriter, @unchecked Sendable {
    /// The primary's pool (writes, and reads when no replica can serve).
    public let primary: PostgresPool
    private let replicas: [Replica]
    /// The settings the cluster was made with.
    public let configuration: PostgresClusterConfiguration
    private let turn = Atomic<Int>(0)
    private let stopping = DispatchSemaphore(value: 0)
    private let isClosed = Atomic<Bool>(false)
    private var healthThread: Thread?

    /// One connection of its own to the primary for the health checks (its WAL position).
    private let primaryProbe: PostgresPool
    /// The primary's check that has not ended yet, if any.
    private let primaryCheck = Locked<HealthCheck<UInt64?>?>(nil)
    /// The primary's WAL position the last health check read, and when that check began
    /// (monotonic nanoseconds): every commit acknowledged before then is at or before it.
    private let lastPrimaryPosition = Locked<(position: UInt64, checkedSince: UInt64)?>(nil)

    private final class Replica: @unchecked Sendable {
        let pool: PostgresPool
        /// One connection of its own for the health checks, so that they never wait for reads.
        let probe: PostgresPool
        let health = Locked(Health())
        /// The health check of this replica that has not ended yet, if any (a hung server's
        /// stays until its time limit ends it): a new round waits for it rather than
        /// stacking another.
        let check = Locked<HealthCheck<Row?>?>(nil)

        struct Health {
            var isInRotation = false
            var lagBytes: Int64?
            var problem: String? = "not checked yet"
        }

        init(url: String, configuration: PostgresConfiguration) throws {
            pool = try PostgresPool(url: url, configuration: configuration)
            probe = try PostgresPool(url: url, configuration: PostgresCluster.probeConfiguration(configuration))
        }

        var isInRotation: Bool { health.withLock { $0.isInRotation } }

        func leaveRotation(_ problem: String) {
            health.withLock {
                $0.isInRotation = false
                $0.problem = problem
            }
        }
    }

    /// The read went to a replica that had not replayed the session's writes.
    private struct NotCaughtUp: Error {}

    /// A cluster of the primary at `primary` and the hot standbys at `replicas` (each a
    /// `postgresql://` URI or a libpq keyword string). No connection opens here; replicas
    /// join the rotation after their first health check (immediately started).
    ///
    /// For example, `let cluster = try PostgresCluster(primary: primaryURL, replicas: [replicaURL])`.
    public init(
        primary: String, replicas: [String],
        configuration: PostgresClusterConfiguration = PostgresClusterConfiguration()
    ) throws {
        self.primary = try PostgresPool(url: primary, configuration: configuration.pool)
        primaryProbe = try PostgresPool(url: primary, configuration: Self.probeConfiguration(configuration.pool))
        self.replicas = try replicas.map { try Replica(url: $0, configuration: configuration.pool) }
        self.configuration = configuration
        // The health thread holds the cluster only while it checks, so that a cluster
        // released without close() still goes (and its thread with it).
        let stopping = self.stopping
        let interval = configuration.healthCheckInterval
        let nanoseconds = Int(clamping: max(1_000_000, interval.clampedNanoseconds))
        let thread = Thread { [weak self] in
            func check() -> Bool {
                guard let cluster = self, !cluster.isClosed.load(ordering: .acquiring) else { return false }
                cluster.checkHealth()
                return true
            }
            while check() {
                _ = stopping.wait(timeout: .now() + .nanoseconds(nanoseconds))
            }
        }
        thread.name = "SwiftDAL.PostgresCluster.health"
        healthThread = thread
        thread.start()
    }

    // MARK: Health

    /// The settings of a health-check connection: one connection, no observer or trace
    /// (checks are not the service's statements).
    private static func probeConfiguration(_ pool: PostgresConfiguration) -> PostgresConfiguration {
        var probing = pool
        probing.maximumConnections = 1
        probing.acquireTimeout = .seconds(2)
        probing.observer = nil
        probing.trace = nil
        return probing
    }

    /// Checks every replica now (the background checks do this on their own), and returns
    /// what it found. Every host is checked at once, on its own health-check connection,
    /// under ``PostgresClusterConfiguration/healthCheckTimeout``: a host that does not answer
    /// in time holds no other host's check, leaves the rotation, and has its reads in flight
    /// stopped (those that had no answer yet run elsewhere).
    ///
    /// For example, `let statuses = cluster.checkHealth()`.
    @discardableResult
    public func checkHealth() -> [ReplicaStatus] {
        let timeout = configuration.healthCheckTimeout
        let checkedSince = DeadlineScheduler.now()
        let primaryCheck = HealthCheck.reuseOrStart(in: self.primaryCheck, primaryProbe, within: timeout) { db in
            try db.fetchScalar(String.self, "SELECT pg_current_wal_lsn()::text").flatMap(
                ConsistencyToken.position(ofLSN:))
        }
        let checks = replicas.map { replica in
            HealthCheck.reuseOrStart(in: replica.check, replica.probe, within: timeout) { db in
                try db.fetchOne(
                    """
                    SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,
                           COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0)::float8
                    """)
            }
        }
        let end = DeadlineScheduler.now() &+ UInt64(CallControl.boundedNanoseconds(timeout))
        let primaryPosition = (try? primaryCheck.result(waitingUntil: end)?.get()) ?? nil
        if let primaryPosition {
            lastPrimaryPosition.withLock { last in
                if (last?.checkedSince ?? 0) < checkedSince { last = (primaryPosition, checkedSince) }
            }
        }
        for (replica, check) in zip(replicas, checks) {
            guard let result = check.result(waitingUntil: end) else {
                replica.leaveRotation("did not answer a health check within \(timeout)")
                // Reads waiting on it would wait as long as it hangs: they are stopped, and
                // those that had no answer yet run elsewhere.
                replica.pool.abandonConnectionsInUse()
                continue
            }
            do {
                guard let row = try result.get(), try row.decode(Bool.self, at: 0) else {
                    replica.leaveRotation("not a standby (promoted, or never one)")
                    continue
                }
                let replayed = try row.decode(String?.self, at: 1).flatMap(ConsistencyToken.position(ofLSN:)) ?? 0
                let lag = primaryPosition.map { Int64(clamping: $0 > replayed ? $0 - replayed : 0) }
                let within: Bool
                switch configuration.maximumReplicaLag {
                case .bytes(let bound): within = (lag ?? 0) <= bound
                case .time(let bound):
                    let seconds = try row.decode(Double.self, at: 2)
                    within = lag == 0 || Duration.milliseconds(Int64(seconds * 1000)) <= bound
                }
                replica.health.withLock {
                    $0.isInRotation = within
                    $0.lagBytes = lag
                    $0.problem = within ? nil : "\(lag ?? 0) bytes of WAL behind the primary, past the bound"
                }
            } catch {
                replica.leaveRotation("unreachable: \(error)")
            }
        }
        return replicaStatuses
    }

    /// What the last health check found, replica by replica.
    public var replicaStatuses: [ReplicaStatus] {
        replicas.map { replica in
            replica.health.withLock {
                ReplicaStatus(
                    name: replica.pool.name, isInRotation: $0.isInRotation, lagBytes: $0.lagBytes, problem: $0.problem)
            }
        }
    }

    // MARK: Routing

    /// The replicas in rotation, starting with the next one in turn (the replica whose
    /// connection this thread has reserved, an `async` read's, first).
    private func candidates() -> [Replica] {
        guard !replicas.isEmpty else { return [] }
        let start = turn.wrappingAdd(1, ordering: .relaxed).oldValue
        var order = (0..<replicas.count).map { replicas[(start + $0) % replicas.count] }.filter(\.isInRotation)
        if let reserved = order.firstIndex(where: { $0.pool.isReservedOnThisThread }) {
            order.swapAt(0, reserved)
        }
        return order
    }

    /// The pool an `async` read waits in line for: a replica in rotation with a connection
    /// free (in turn), else the next replica in rotation, else the primary.
    private func readPool() -> PostgresPool {
        let order = candidates()
        let free = order.first { $0.pool.statistics.connectionsInUse < $0.pool.configuration.maximumConnections }
        return (free ?? order.first)?.pool ?? primary
    }

    /// The token a session's reads must see: its token, or, after a write whose WAL
    /// position could not be read, the primary's position read by a health check that began
    /// after that write (`nil` then: until one has, only the primary has the write).
    private func minimumPosition(for session: ConsistencySession) -> (token: ConsistencyToken?, primaryOnly: Bool) {
        guard let pending = session.pendingWriteSince else { return (session.token, false) }
        guard let last = lastPrimaryPosition.withLock({ $0 }), last.checkedSince >= pending else {
            return (session.token, true)
        }
        session.resolvePendingWrite(since: pending, with: ConsistencyToken(position: last.position))
        return (session.token, false)
    }

    /// Runs `body` on a replica that can serve it (see ``PostgresCluster``), else on the
    /// primary. `transaction` says whether the replica's access is a `read` transaction.
    private func routeRead<T>(transaction: Bool, _ body: (Database) throws -> T) throws -> T {
        var minimum: ConsistencyToken?
        if configuration.readYourWrites, let session = ConsistencySession.current {
            let (token, primaryOnly) = minimumPosition(for: session)
            if primaryOnly { return try transaction ? primary.read(body) : primary.reentrantRead(body) }
            minimum = token
        }
        var retried = false
        for replica in candidates() {
            // Whether the replica answered a statement of `body`: rows went to the caller, and
            // the read is not run again.
            var answered = false
            let attempt = { (db: Database) throws -> T in
                if let minimum {
                    let replayed = try db.fetchScalar(String.self, "SELECT pg_last_wal_replay_lsn()::text")
                        .flatMap(ConsistencyToken.position(ofLSN:))
                    guard let replayed, replayed >= minimum.position else { throw NotCaughtUp() }
                }
                let before = db.engineCompletedStatements
                do {
                    return try body(db)
                } catch {
                    answered = db.engineCompletedStatements > before
                    throw error
                }
            }
            do {
                return try transaction ? replica.pool.read(attempt) : replica.pool.reentrantRead(attempt)
            } catch is NotCaughtUp {
                continue
            } catch let error as PostgresError where error.isConnectionFailure && !answered {
                replica.leaveRotation("a read failed: \(error.message)")
                guard !retried else { throw error }
                retried = true
            } catch DALError.Code.connectionUnavailable {
                continue  // this replica's pool is full: another, or the primary
            }
        }
        return try transaction ? primary.read(body) : primary.reentrantRead(body)
    }

    /// Moves the current session on to the primary's WAL position (after a commit). Never
    /// throws, and runs outside the call's control: the write has committed, and nothing
    /// after it may turn the call into an error. When the position cannot be read (the
    /// call was stopped just as it committed, the connection was lost), the session reads
    /// from the primary until a health check has read a position after the write.
    private func recordWrite() {
        guard configuration.readYourWrites, let session = ConsistencySession.current else { return }
        let since = DeadlineScheduler.now()
        let position = try? outsideCallControl {
            try withDatabaseTimeout(configuration.healthCheckTimeout) {
                try primary.reentrantRead { db in
                    try db.fetchScalar(String.self, "SELECT pg_current_wal_lsn()::text").flatMap(
                        ConsistencyToken.position(ofLSN:))
                }
            }
        }
        if let position {
            session.advance(to: ConsistencyToken(position: position))
        } else {
            session.markPendingWrite(since: since)
        }
    }

    /// The connection this thread already holds from one of the cluster's pools.
    private func heldConnection(writing: Bool) throws -> Database? {
        if let held = try SwiftDALConnection.heldConnection(of: primary, writing: writing) { return held }
        for replica in replicas {
            if let held = try SwiftDALConnection.heldConnection(of: replica.pool, writing: writing) { return held }
        }
        return nil
    }

    // MARK: DatabaseWriter

    /// Runs `body` in a read-only, repeatable-read transaction on a replica that can serve
    /// it (see ``PostgresCluster``), else on the primary.
    ///
    /// For example, `let n = try cluster.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") }`.
    @discardableResult
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        guard try heldConnection(writing: false) == nil else { throw reentrancyError("read") }
        return try routeRead(transaction: true, body)
    }

    /// See ``DatabaseReader/reentrantRead(_:)``: inside a `read` or `write` of the cluster,
    /// its connection; otherwise a replica (or the primary), without a transaction.
    ///
    /// For example, `try cluster.reentrantRead { db in try db.fetchOne("SELECT 1") }`.
    @discardableResult
    public func reentrantRead<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(writing: false) { return try body(held) }
        return try routeRead(transaction: false, body)
    }

    /// Runs `body` in a transaction on the primary; commits on return, rolls back on throw.
    ///
    /// For example, `try cluster.write { db in try db.execute("DELETE FROM sessions") }`.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard try heldConnection(writing: false) == nil else { throw reentrancyError("write") }
        let result = try primary.write(body)
        recordWrite()
        return result
    }

    /// See ``DatabaseWriter/reentrantWrite(_:)``: always on the primary (a write inside a
    /// `read` of the cluster throws ``DALError/Code/writeInReadOnlyAccess``).
    ///
    /// For example, `try cluster.reentrantWrite { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func reentrantWrite<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(writing: true) { return try body(held) }
        let result = try primary.reentrantWrite(body)
        recordWrite()
        return result
    }

    /// See ``DatabaseReader/perform(writing:_:)``: the current ``ConsistencySession`` goes
    /// along to the pool's threads.
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let session = ConsistencySession.current
        return try await primary.perform(writing: writing) {
            try ConsistencySession.$current.withValue(session) { try work() }
        }
    }

    /// `read` for `async` code, on the pools' own threads.
    ///
    /// For example, `let n = try await cluster.read { db in try db.fetchScalar(Int.self, "SELECT 1") }`.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: false) { try self.read(body) }
    }

    /// `write` for `async` code, on the pools' own threads.
    ///
    /// For example, `try await cluster.write { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: true) { try self.write(body) }
    }

    /// How busy the cluster is now: the sum over the primary's pool and the replicas'
    /// (their health probes aside). Each pool's own is `primary.statistics` and
    /// ``replicaStatistics``.
    ///
    /// For example, `metrics.gauge("db.in_use", cluster.statistics.connectionsInUse)`.
    public var statistics: PoolStatistics {
        replicas.reduce(primary.statistics) { $0 + $1.pool.statistics }
    }

    /// Each replica's pool statistics, by the replica's name (host, port and database).
    ///
    /// For example, `for (name, gauges) in cluster.replicaStatistics { … }`.
    public var replicaStatistics: [(name: String, statistics: PoolStatistics)] {
        replicas.map { ($0.pool.name, $0.pool.statistics) }
    }

    /// Stops the health checks and closes every pool.
    ///
    /// For example, `try cluster.close()`.
    public func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopping.signal()
        while let thread = healthThread, !thread.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        var firstError: (any Error)?
        for pool in [primary, primaryProbe] + replicas.flatMap({ [$0.pool, $0.probe] }) {
            do { try pool.close() } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    /// ``close()`` for a service's shutdown: stops the health checks, then shuts every pool
    /// down at once (see ``PostgresPool/shutdown(gracePeriod:)``): new calls are refused,
    /// calls in flight and in line finish (those still running after `gracePeriod` are
    /// stopped), and every connection closes, holding no thread while it waits.
    ///
    /// For example, `await cluster.shutdown(gracePeriod: .seconds(10))`.
    public func shutdown(gracePeriod: Duration? = .seconds(30)) async {
        if !isClosed.exchange(true, ordering: .acquiringAndReleasing) { stopping.signal() }
        await withTaskGroup(of: Void.self) { group in
            for pool in [primary, primaryProbe] + replicas.flatMap({ [$0.pool, $0.probe] }) {
                group.addTask { await pool.shutdown(gracePeriod: gracePeriod) }
            }
        }
    }

    deinit {
        isClosed.store(true, ordering: .releasing)
        stopping.signal()
    }
}

/// A health check running on a host's health-check connection (on that connection's
/// thread, under the check's time limit; no task, so that a busy cooperative pool cannot
/// delay it), whose result the health thread waits for until a deadline, and no longer.
private final class HealthCheck<Value: Sendable>: Sendable {
    private let outcome = Locked<Result<Value, any Error>?>(nil)

    /// The check in `slot` when it has not ended yet (the host's last check, or another
    /// caller's of ``PostgresCluster/checkHealth()``), else a new one started there.
    static func reuseOrStart(
        in slot: Locked<HealthCheck?>, _ pool: PostgresPool, within timeout: Duration,
        _ query: @escaping @Sendable (Database) throws -> Value
    ) -> HealthCheck {
        let (check, isNew) = slot.withLock { current -> (HealthCheck, Bool) in
            if let current, current.outcome.withLock({ $0 == nil }) { return (current, false) }
            let check = HealthCheck()
            current = check
            return (check, true)
        }
        guard isNew else { return check }
        pool.start(limit: timeout, { try pool.reentrantRead(query) }) { result in
            check.outcome.withLock { $0 = result }
        }
        return check
    }

    /// The check's result, waiting for it until `deadline` (monotonic nanoseconds); `nil`
    /// when it has not ended by then.
    func result(waitingUntil deadline: UInt64) -> Result<Value, any Error>? {
        while true {
            if let result = outcome.withLock({ $0 }) { return result }
            let now = DeadlineScheduler.now()
            guard now < deadline else { return nil }
            usleep(UInt32(min(5_000, (deadline - now) / 1_000)))
        }
    }
}
