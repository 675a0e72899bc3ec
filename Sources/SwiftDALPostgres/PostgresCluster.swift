import Dispatch
import Foundation
public import SwiftDALConnection
import Synchronization

/// A PostgreSQL primary with hot standbys, as one ``SwiftDAL/DatabaseWriter``: every DAL works on
/// it unchanged. Writes and `write { }` transactions go to the primary; reads and
/// `read { }` go to a healthy replica (in turn), else to the primary.
///
/// **Read-your-writes.** Inside a ``ConsistencySession`` (`session.run { }`), each write
/// moves the session on to the point of the primary's history it committed at (its
/// system, timeline and WAL position: a signed ``ConsistencyToken``), and each read goes
/// only to a replica that follows that timeline of that system and has replayed that
/// position, checked on the connection chosen before the read's snapshot is taken; when
/// none has, the read goes to the primary. The session's ``ConsistencySession/token``
/// travels between requests and service instances. Without a session (or a token), a read
/// may be as stale as ``PostgresClusterConfiguration/maximumStaleness`` (5 s) and
/// ``PostgresClusterConfiguration/maximumReplicaLag`` allow.
///
/// **Health.** Each replica is checked every ``PostgresClusterConfiguration/healthCheckInterval``,
/// all at once and under ``PostgresClusterConfiguration/healthCheckTimeout``: one that does
/// not answer in time, is unreachable, is no longer a standby, belongs to another system,
/// follows another timeline than the primary's (a standby of a primary that was replaced),
/// has no upstream, or is further behind or staler than the bounds leaves the rotation,
/// and comes back by itself. A read that fails on a broken replica connection before any
/// of its statements returned is run once more elsewhere (so a `read` closure may run
/// twice then: keep its side effects after its reads); a read that cannot be served
/// anywhere throws.
///
/// **A primary that moves.** Give the primary as a multi-host string with
/// `target_session_attrs=read-write` (`host=a,b port=5432,5432 … target_session_attrs=read-write`):
/// after a standby is promoted, the primary pool's broken connections are replaced by
/// connections to the new primary, so writes resume without a restart; writes in flight
/// get typed errors. Each host of that list is checked too: while more than one accepts
/// writes (split brain: an old primary restarted beside the promoted one), every write,
/// and every read the primary's pool would serve, is refused with
/// ``SwiftDAL/DALError/Code/splitBrain``, naming them, until one remains.
/// (With asynchronous replication, commits the old primary acknowledged but had not sent
/// may be lost in a crash: use synchronous replication where that matters.)
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
    let replicas: [Replica]
    /// The settings the cluster was made with.
    public let configuration: PostgresClusterConfiguration
    private let turn = Atomic<Int>(0)
    private let stopping = DispatchSemaphore(value: 0)
    let isClosed = Atomic<Bool>(false)
    private var healthThread: Thread?

    /// One connection of its own to the primary for the health checks.
    let primaryProbe: PostgresPool
    /// The primary's check that has not ended yet, if any.
    let primaryCheck = Locked<HealthCheck<PrimaryReading>?>(nil)
    /// What the health checks learned of the primary.
    let primaryState = Locked(PrimaryState())
    /// Each host of a multi-host primary string, checked for split brain (empty for one host).
    let writerHosts: [WriterHost]

    /// A replica: its pool, its health-check connection and what the checks found.
    final class Replica: @unchecked Sendable {
        let pool: PostgresPool
        /// One connection of its own for the health checks, so that they never wait for reads.
        let probe: PostgresPool
        let health = Locked(Health())
        /// The health check of this replica that has not ended yet, if any (a hung server's
        /// stays until its time limit ends it): a new round waits for it rather than
        /// stacking another.
        let check = Locked<HealthCheck<ReplicaReading>?>(nil)

        struct Health {
            var isInRotation = false
            var lagBytes: Int64?
            var staleness: Duration?
            var timeline: UInt32?
            /// Its system identifier, as it reported it.
            var system: UInt64?
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

    /// A host of the primary's multi-host string, checked on its own for split brain.
    struct WriterHost: Sendable {
        let probe: PostgresPool
        /// The server's identity when it accepts writes (``writerIdentityQuery``), else `nil`.
        let check = Locked<HealthCheck<String?>?>(nil)
    }

    /// Whether a host of the primary's list accepts writes, and if so which server it is:
    /// its system identifier and the time it started. Two entries of the list may name one
    /// server (a virtual address and the server's own name): one server accepting writes
    /// under two names is not a split brain.
    static let writerIdentityQuery: SQL = """
        SELECT CASE WHEN pg_is_in_recovery() THEN NULL
               ELSE (SELECT system_identifier::text FROM pg_control_system()) || '/' || pg_postmaster_start_time()::text
               END
        """

    /// The read went to a replica that had not replayed the session's writes.
    private struct NotCaughtUp: Error {}

    /// A cluster of the primary at `primary` and the hot standbys at `replicas` (each a
    /// `postgresql://` URI or a libpq keyword string). No connection opens here; replicas
    /// join the rotation after their first health check (immediately started).
    ///
    /// The health checks read `pg_stat_wal_receiver` on each replica: the role needs to be
    /// a superuser or to have the privileges of `pg_read_all_stats`, or every replica stays
    /// out of the rotation (its problem says so).
    ///
    /// For example, `let cluster = try PostgresCluster(primary: primaryURL, replicas: [replicaURL])`.
    public init(
        primary: String, replicas: [String],
        configuration: PostgresClusterConfiguration = PostgresClusterConfiguration()
    ) throws {
        self.primary = try PostgresPool(url: primary, configuration: configuration.pool)
        let probing = Self.probeConfiguration(configuration.pool)
        primaryProbe = try PostgresPool(url: primary, configuration: probing)
        writerHosts = try (PostgresConnect.singleHostStrings(primary) ?? []).map {
            WriterHost(probe: try PostgresPool(url: $0, configuration: probing))
        }
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

    /// The token the session's reads must see, checked: signed by this cluster's key and
    /// naming this cluster's system (else ignored and dropped, as if the client had sent
    /// none). After a write whose position could not be read, the primary's position read
    /// by a health check that began after that write; `primaryOnly` until one has.
    private func minimumToken(for session: ConsistencySession) -> (token: ConsistencyToken?, primaryOnly: Bool) {
        let primary = primaryState.withLock { $0 }
        if let token = session.token {
            let foreign = primary.system.map { $0 != token.system } ?? false
            if !token.isSigned(by: configuration.tokenSigningKey) || foreign { session.discardToken(token) }
        }
        guard let pending = session.pendingWriteSince else { return (session.token, false) }
        guard let last = primary.samples.last, last.checkedSince >= pending, let system = primary.system,
            let timeline = primary.timeline
        else { return (session.token, true) }
        session.resolvePendingWrite(
            since: pending,
            with: ConsistencyToken(
                system: system, timeline: timeline, position: last.position, key: configuration.tokenSigningKey))
        return (session.token, false)
    }

    /// Throws unless the replica behind `db` has what `token` names: the same system (as
    /// the health checks read it), the token's timeline as the one it receives, and its
    /// position replayed. Run before the read's snapshot is taken, on the connection that
    /// serves the read: replay only moves forward, so the snapshot taken after it holds the
    /// write.
    private func checkCaughtUp(_ db: Database, replica: Replica, token: ConsistencyToken) throws {
        guard replica.health.withLock({ $0.system }) == token.system else { throw NotCaughtUp() }
        guard
            let row = try db.fetchOne(
                "SELECT pg_last_wal_replay_lsn()::text, (SELECT received_tli FROM pg_stat_wal_receiver)"),
            let replayed = try row.decode(String?.self, at: 0).flatMap(walPosition(ofLSN:)),
            let timeline = try row.decode(Int64?.self, at: 1), timeline == Int64(token.timeline),
            replayed >= token.position
        else { throw NotCaughtUp() }
    }

    /// Runs `body` on a replica that can serve it (see ``PostgresCluster``), else on the
    /// primary. `transaction` says whether the replica's access is a `read` transaction.
    private func routeRead<T>(transaction: Bool, _ body: (Database) throws -> T) throws -> T {
        var minimum: ConsistencyToken?
        if configuration.readYourWrites, let session = ConsistencySession.current {
            let (token, primaryOnly) = minimumToken(for: session)
            if primaryOnly { return try readOnPrimary(transaction: transaction, body) }
            minimum = token
        }
        var retried = false
        for replica in candidates() {
            // Whether the replica answered a statement of `body`: rows went to the caller, and
            // the read is not run again.
            var answered = false
            func run(_ db: Database) throws -> T {
                let before = db.engineCompletedStatements
                do {
                    return try body(db)
                } catch {
                    answered = db.engineCompletedStatements > before
                    throw error
                }
            }
            do {
                return try replica.pool.reentrantRead { db in
                    if let minimum { try checkCaughtUp(db, replica: replica, token: minimum) }
                    guard transaction else { return try run(db) }
                    return try db.inTransaction(.deferred, isolation: .repeatableRead, readOnly: true) { try run(db) }
                }
            } catch is NotCaughtUp {
                continue
            } catch let error as PostgresError
                where error.isConnectionFailure && !error.isIdleSessionTimeout && !answered
            {
                replica.leaveRotation("a read failed: \(error.message)")
                guard !retried else { throw error }
                retried = true
            } catch DALError.Code.connectionUnavailable {
                continue  // this replica's pool is full: another, or the primary
            }
        }
        return try readOnPrimary(transaction: transaction, body)
    }

    /// Runs a read on the primary's pool, refused in a split brain: its connections may
    /// be to either host, and the old primary has diverged (it lacks what the promoted one
    /// committed; it may hold what was never replicated).
    private func readOnPrimary<T>(transaction: Bool, _ body: (Database) throws -> T) throws -> T {
        try checkOnePrimary()
        return try transaction ? primary.read(body) : primary.reentrantRead(body)
    }

    /// Throws ``SwiftDAL/DALError/Code/splitBrain`` while more than one host of the
    /// primary's list accepts writes.
    private func checkOnePrimary() throws {
        guard let hosts = primaryState.withLock({ $0.hostsAcceptingWrites }), hosts.count > 1 else { return }
        throw DALError(
            .splitBrain,
            "more than one host of the primary's list accepts writes (\(hosts.joined(separator: ", "))): writes, "
                + "and reads the primary would serve, are refused until one remains (stop or demote the old primary)")
    }

    /// Moves the current session on to the point of the primary's history its write
    /// committed at (a signed token). Never throws, and runs outside the call's control:
    /// the write has committed, and nothing after it may turn the call into an error. When
    /// the position cannot be read (the call was stopped just as it committed, the
    /// connection was lost), the session reads from the primary until a health check has
    /// read a position after the write.
    private func recordWrite(positionReadable: Bool = true) {
        guard configuration.readYourWrites, let session = ConsistencySession.current else { return }
        let since = DeadlineScheduler.now()
        guard positionReadable else {
            session.markPendingWrite(since: since)
            return
        }
        let key = configuration.tokenSigningKey
        let token = try? outsideCallControl {
            try withDatabaseTimeout(configuration.healthCheckTimeout) {
                try primary.reentrantRead { db -> ConsistencyToken? in
                    try PrimaryReading.read(on: db).map {
                        ConsistencyToken(system: $0.system, timeline: $0.timeline, position: $0.position, key: key)
                    }
                }
            }
        }
        if let token = token ?? nil {
            session.record(token, signedBy: key)
        } else {
            session.markPendingWrite(since: since)
        }
    }

    /// `write`'s result, the session moved on past it (``recordWrite()``). A write whose
    /// outcome is unknown (``SwiftDAL/DALError/Code/outcomeUnknown``: it may have
    /// committed) moves the session on too, so that a read made to check it sees it if it
    /// is there.
    private func recordingWrite<T>(_ write: () throws -> T) throws -> T {
        let result: T
        do {
            result = try write()
        } catch let error as DALError where error.code == .outcomeUnknown {
            // When its connection was lost or its server stopped answering (the error's
            // underlying one says how), the primary's position is not asked now: a hung
            // primary held the call a health check's timeout past its limit (a trial's 1 s
            // limit ended at 3.5 s); the session reads from the primary until a health check
            // has read a position after the write. A commit whose wait for a synchronous
            // standby a stop ended was answered by a primary that answers: asked as usual.
            recordWrite(positionReadable: error.underlying == nil)
            throw error
        }
        recordWrite()
        return result
    }

    /// The timeline a WAL file name starts with (`000000020000000000000004`: 2).
    static func timeline(ofWALFile name: String) -> UInt32? {
        guard name.utf8.count == 24 else { return nil }
        return UInt32(name.prefix(8), radix: 16)
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
    /// Refused with ``SwiftDAL/DALError/Code/splitBrain`` while more than one host of the
    /// primary's list accepts writes.
    ///
    /// For example, `try cluster.write { db in try db.execute("DELETE FROM sessions") }`.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard try heldConnection(writing: false) == nil else { throw reentrancyError("write") }
        try checkOnePrimary()
        return try recordingWrite { try primary.write(body) }
    }

    /// See ``DatabaseWriter/reentrantWrite(_:)``: always on the primary (a write inside a
    /// `read` of the cluster throws ``SwiftDAL/DALError/Code/writeInReadOnlyAccess``).
    ///
    /// For example, `try cluster.reentrantWrite { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func reentrantWrite<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(writing: true) { return try body(held) }
        try checkOnePrimary()
        return try recordingWrite { try primary.reentrantWrite(body) }
    }

    /// See ``DatabaseReader/perform(writing:_:)``: a write waits in line for a connection
    /// of the primary, a read for one of a replica in rotation (one with a connection free
    /// first), else of the primary; the current ``ConsistencySession`` goes along.
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let session = ConsistencySession.current
        guard !writing else {
            return try await primary.perform(writing: true) {
                try ConsistencySession.$current.withValue(session) { try work() }
            }
        }
        // A read refused in line because its replica left the rotation (it hangs: see
        // ``checkHealth()``) waits in another line: the pools in rotation now, else the
        // primary's. Nothing of it ran.
        var attempts = 0
        while true {
            let pool = readPool()
            do {
                return try await pool.perform(writing: false) {
                    try ConsistencySession.$current.withValue(session) { try work() }
                }
            } catch DALError.Code.connectionUnavailable
                where pool !== primary && attempts <= replicas.count
                && replicas.contains(where: { $0.pool === pool && !$0.isInRotation })
            {
                attempts += 1
            }
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

    /// Every pool of the cluster: the primary's, the replicas' and the health checks'.
    private var allPools: [PostgresPool] {
        [primary, primaryProbe] + writerHosts.map(\.probe) + replicas.flatMap { [$0.pool, $0.probe] }
    }

    /// Stops the health checks and closes every pool.
    ///
    /// For example, `try cluster.close()`.
    public func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopping.signal()
        while let thread = healthThread, !thread.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        var firstError: (any Error)?
        for pool in allPools {
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
            for pool in allPools {
                group.addTask { await pool.shutdown(gracePeriod: gracePeriod) }
            }
        }
    }

    deinit {
        isClosed.store(true, ordering: .releasing)
        stopping.signal()
    }
}
