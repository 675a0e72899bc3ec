import Foundation
import SwiftDALConnection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the health checks learned of the primary.
struct PrimaryState: Sendable {
    /// Its system identifier (`pg_control_system()`), once read.
    var system: UInt64?
    /// Its current timeline, once read.
    var timeline: UInt32?
    /// Its WAL position at each recent check, oldest first: `position` was read after
    /// `checkedSince` (monotonic nanoseconds), so every commit acknowledged before then is
    /// at or before it.
    var samples: [(checkedSince: UInt64, position: UInt64)] = []
    /// The hosts of the primary's multi-host list that accepted writes at the last check
    /// (`nil` for a one-host string).
    var hostsAcceptingWrites: [String]?
}

/// One health check's reading of the primary.
struct PrimaryReading: Sendable {
    let position: UInt64
    let timeline: UInt32
    let system: UInt64

    /// The primary's current WAL insert position (past every commit record written so
    /// far, flushed or not: an asynchronous commit, `synchronous_commit = off`, returns
    /// before its record is written out, and a token at the write position would let a
    /// standby without it serve the session), as a replica's replay position compares with
    /// it (``replayComparable(insertPosition:blockSize:)``), timeline and system
    /// identifier, read on `db` (a connection to the primary); `nil` when the server did
    /// not give them all.
    static func read(on db: Database) throws -> PrimaryReading? {
        guard
            let row = try db.fetchOne(
                """
                SELECT position::text, pg_walfile_name(position),
                       (SELECT system_identifier::text FROM pg_control_system()),
                       current_setting('wal_block_size')
                FROM (SELECT pg_current_wal_insert_lsn() AS position) AS current
                """),
            let position = try row.decode(String?.self, at: 0).flatMap(walPosition(ofLSN:)),
            let timeline = try row.decode(String?.self, at: 1).flatMap(PostgresCluster.timeline(ofWALFile:)),
            let system = try row.decode(String?.self, at: 2).flatMap({ UInt64($0) }),
            let blockSize = try row.decode(String?.self, at: 3).flatMap({ UInt64($0) })
        else { return nil }
        return PrimaryReading(
            position: replayComparable(insertPosition: position, blockSize: blockSize), timeline: timeline,
            system: system)
    }

    /// The most bytes a WAL page's header takes on any platform PostgreSQL supports
    /// (`SizeOfXLogLongPHD`, the first page of a segment, with 8-byte alignment; the other
    /// pages' headers are 24 bytes, 20 where the maximum alignment is 4), and fewer than a
    /// page header and the smallest record together (a record's header alone is 24 bytes).
    /// The insert position also lands within these bytes in ordinary operation (a record
    /// ended on the page before, or one begun there ended within them).
    static let largestPageHeader: UInt64 = 40

    /// `insertPosition` (`pg_current_wal_insert_lsn()`) as a replica's replay position
    /// (`pg_last_wal_replay_lsn()`, the end of the last record replayed) compares with it.
    ///
    /// The insert position never points into a page header: when the last record ended at
    /// the end of a page (after a WAL switch, `pg_basebackup`'s or `archive_timeout`'s,
    /// always: the switch fills the segment), it points past the next page's header, a
    /// position no record ends at, while a replica that has replayed everything reports the
    /// page's start. Without this, every replica of a quiet primary stayed out of rotation
    /// ("staleness unknown") until the primary wrote again: some 13 s after a base backup
    /// in the tests, never on a primary that stays idle. So a position within the first
    /// ``largestPageHeader`` bytes of a page reads as the page's start. That is exact:
    /// between the page's start and such a position there is the header and at most the
    /// end of a record begun on the previous page (then no record ends at the page's start,
    /// and a replica's replay position is either before the page or at the record's end),
    /// never a whole record; so a replica's position is at or past the page's start exactly
    /// when it is at or past `insertPosition`. `blockSize` is the server's
    /// `wal_block_size`.
    static func replayComparable(insertPosition: UInt64, blockSize: UInt64) -> UInt64 {
        guard blockSize > largestPageHeader else { return insertPosition }
        let offset = insertPosition % blockSize
        guard offset > 0, offset <= largestPageHeader else { return insertPosition }
        return insertPosition - offset
    }
}

/// One health check's reading of a replica.
struct ReplicaReading: Sendable {
    let isInRecovery: Bool
    let replayed: UInt64?
    let system: UInt64?
    /// Its WAL receiver's process, `nil` when it has none (it follows no primary now).
    let receiverProcess: Int64?
    /// The timeline its WAL receiver receives (`nil`: none, or not readable by the role).
    let receivedTimeline: Int64?
}

extension PostgresCluster {
    /// The settings of a health-check connection: one connection, no observer or trace
    /// (checks are not the service's statements).
    static func probeConfiguration(_ pool: PostgresConfiguration) -> PostgresConfiguration {
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
            guard let reading = try PrimaryReading.read(on: db) else {
                throw DALError(.schemaMismatch, "the primary's WAL position could not be read")
            }
            return reading
        }
        let writerChecks = writerHosts.map { host in
            HealthCheck.reuseOrStart(in: host.check, host.probe, within: timeout) { db in
                try db.fetchScalar(String.self, Self.writerIdentityQuery)
            }
        }
        let replicaChecks = replicas.map { replica in
            HealthCheck.reuseOrStart(in: replica.check, replica.probe, within: timeout) { db in
                guard
                    let row = try db.fetchOne(
                        """
                        SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,
                               (SELECT system_identifier::text FROM pg_control_system()),
                               (SELECT pid FROM pg_stat_wal_receiver)::bigint,
                               (SELECT received_tli FROM pg_stat_wal_receiver)::bigint
                        """)
                else { throw DALError(.schemaMismatch, "the replica's state could not be read") }
                return ReplicaReading(
                    isInRecovery: try row.decode(Bool.self, at: 0),
                    replayed: try row.decode(String?.self, at: 1).flatMap(walPosition(ofLSN:)),
                    system: try row.decode(String?.self, at: 2).flatMap { UInt64($0) },
                    receiverProcess: try row.decode(Int64?.self, at: 3),
                    receivedTimeline: try row.decode(Int64?.self, at: 4))
            }
        }
        let end = DeadlineScheduler.now() &+ UInt64(CallControl.boundedNanoseconds(timeout))
        if case .success(let reading)? = primaryCheck.result(waitingUntil: end) {
            record(reading, checkedSince: checkedSince)
        }
        if !writerHosts.isEmpty {
            // One name per server accepting writes (the first of the list naming it).
            var servers = Set<String>()
            let accepting = zip(writerHosts, writerChecks).compactMap { host, check -> String? in
                guard case .success(let identity?)? = check.result(waitingUntil: end),
                    servers.insert(identity).inserted
                else { return nil }
                return host.probe.name
            }
            primaryState.withLock { $0.hostsAcceptingWrites = accepting }
        }
        let primary = primaryState.withLock { $0 }
        for (replica, check) in zip(replicas, replicaChecks) {
            guard let result = check.result(waitingUntil: end) else {
                replica.leaveRotation("did not answer a health check within \(timeout)")
                // Reads waiting on it would wait as long as it hangs: they are stopped, and
                // those that had no answer yet run elsewhere.
                replica.pool.abandonConnectionsInUse()
                // And those waiting in line for its connections run elsewhere, rather than
                // wait for a connection as long as it hangs (a trial's 100 tasks: 10 s).
                replica.pool.refuseCallersInLine("left the cluster's rotation (it did not answer a health check)")
                continue
            }
            switch result {
            case .failure(let error): replica.leaveRotation("unreachable: \(error)")
            case .success(let reading): judge(replica, reading, primary: primary)
            }
        }
        return replicaStatuses
    }

    /// Records the primary's reading: its system and timeline, and a sample of its position
    /// (the samples of an earlier timeline are dropped: positions compare within one).
    private func record(_ reading: PrimaryReading, checkedSince: UInt64) {
        let window = UInt64(CallControl.boundedNanoseconds(configuration.maximumStaleness)) &* 2
        primaryState.withLock { state in
            if state.system != reading.system || state.timeline != reading.timeline { state.samples = [] }
            state.system = reading.system
            state.timeline = reading.timeline
            guard (state.samples.last?.checkedSince ?? 0) < checkedSince else { return }
            state.samples.append((checkedSince, reading.position))
            let oldest = checkedSince > window ? checkedSince - window : 0
            // Keeps the newest sample older than the window too: it still bounds a replica
            // that has replayed nothing newer.
            while state.samples.count > 2, state.samples[1].checkedSince < oldest { state.samples.removeFirst() }
            if state.samples.count > 512 { state.samples.removeFirst(state.samples.count - 512) }
        }
    }

    /// Whether `replica` may serve reads, from its reading and the primary's state.
    private func judge(_ replica: Replica, _ reading: ReplicaReading, primary: PrimaryState) {
        var problem: String?
        var lag: Int64?
        var staleness: Duration?
        if !reading.isInRecovery {
            problem = "not a standby (promoted, or never one)"
        } else if let system = primary.system, reading.system != system {
            problem = "it belongs to another system (its system identifier is not the primary's)"
        } else if reading.receiverProcess == nil {
            problem = "it has no WAL receiver: it follows no primary now (its upstream is gone)"
        } else if reading.receivedTimeline == nil {
            problem =
                "its WAL receiver's state cannot be read: the cluster's role needs the privileges of pg_read_all_stats"
        } else if let timeline = primary.timeline, reading.receivedTimeline != Int64(timeline) {
            problem =
                "it follows timeline \(reading.receivedTimeline ?? 0) where the primary is on timeline \(timeline)"
        } else if let replayed = reading.replayed, let newest = primary.samples.last {
            lag = Int64(clamping: newest.position > replayed ? newest.position - replayed : 0)
            let now = DeadlineScheduler.now()
            var bound = configuration.maximumStaleness
            if case .time(let tighter) = configuration.maximumReplicaLag { bound = min(bound, tighter) }
            if let caughtUp = primary.samples.last(where: { $0.position <= replayed }) {
                staleness = .nanoseconds(Int64(clamping: now - min(now, caughtUp.checkedSince)))
            } else if let oldest = primary.samples.first {
                // Behind every reading of the primary kept (after the cluster's start, or a
                // new timeline, there may be only one): older than the oldest, by how much
                // unknown. Never in rotation on a guess: it comes back once it has replayed
                // a position read of the primary.
                let age = Duration.nanoseconds(Int64(clamping: now - min(now, oldest.checkedSince)))
                staleness = age
                problem = "it has not replayed the primary's position read \(age) ago: its staleness is unknown"
            }
            if problem == nil, case .bytes(let bytes) = configuration.maximumReplicaLag, let lag, lag > bytes {
                problem = "\(lag) bytes of WAL behind the primary, past the bound"
            } else if problem == nil, let staleness, staleness > bound {
                problem = "its newest data is \(staleness) old, past the bound of \(bound)"
            }
        } else {
            problem = "its staleness is unknown: no reading of the primary's WAL position yet"
        }
        replica.health.withLock {
            $0.isInRotation = problem == nil
            $0.problem = problem
            $0.lagBytes = lag
            $0.staleness = staleness
            $0.timeline = reading.receivedTimeline.map { UInt32(clamping: $0) }
            $0.system = reading.system
        }
    }

    /// What the last health check found, replica by replica.
    ///
    /// For example, `for status in cluster.replicaStatuses where !status.isInRotation { log(status.problem) }`.
    public var replicaStatuses: [ReplicaStatus] {
        replicas.map { replica in
            replica.health.withLock {
                ReplicaStatus(
                    name: replica.pool.name, isInRotation: $0.isInRotation, lagBytes: $0.lagBytes,
                    staleness: $0.staleness, timeline: $0.timeline, problem: $0.problem)
            }
        }
    }

    /// The hosts of the primary's multi-host list that accepted writes at the last health
    /// check, one name per server (entries naming the same server, a virtual address and
    /// its own name, count once): more than one is split brain, and writes are refused.
    /// Empty for a primary given as one host.
    ///
    /// For example, `if cluster.hostsAcceptingWrites.count > 1 { alert(…) }`.
    public var hostsAcceptingWrites: [String] {
        primaryState.withLock { $0.hostsAcceptingWrites } ?? []
    }
}

/// A health check running on a host's health-check connection (on that connection's
/// thread, under the check's time limit; no task, so that a busy cooperative pool cannot
/// delay it), whose result the health thread waits for until a deadline, and no longer.
final class HealthCheck<Value: Sendable>: Sendable {
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
        pool.start(
            limit: timeout, { try pool.reentrantRead(query) },
            completion: { result in check.outcome.withLock { $0 = result } })
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
