import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// Counts the statements each database of a pool ran, in order (the SQL, never values).
private final class StatementLog: DatabaseObserver, @unchecked Sendable {
    private let events = Locked([(database: String, sql: String)]())

    func statementDidFinish(_ event: StatementEvent) {
        events.withLock { $0.append((event.database, event.sql)) }
    }

    var statements: [(database: String, sql: String)] { events.withLock { $0 } }
}

/// The primary's multi-host string over `servers` (the primary first, then each standby),
/// so that the cluster follows a promotion.
private func writerList(_ servers: ReplicatedServers) -> String {
    let all = [servers.primary] + servers.standbys
    return
        "host=\(all.map(\.directory).joined(separator: ",")) port=\(all.map { "\($0.port)" }.joined(separator: ",")) "
        + "user=app dbname=\(servers.database) connect_timeout=2 target_session_attrs=read-write"
}

@Suite(.serialized) struct FailoverTests {
    /// Read-your-writes across a promotion: standby b stopped, writes replayed by standby c
    /// only, the primary killed, b promoted. c has replayed past b's switch to its new
    /// timeline (its data diverges from the new primary's): it leaves the rotation, and no
    /// session misses its own write.
    @Test func noSessionMissesItsWriteAcrossAPromotionWithADivergedStandby() async throws {
        let servers = try await ReplicatedServers.started(standbys: 2)
        defer { servers.stop() }
        let (a, b, c) = (servers.primary, servers.standbys[0], servers.standbys[1])
        b.stopServer(mode: "fast")
        try a.psql(
            "INSERT INTO notes(body) SELECT repeat('x', 1000) || n FROM generate_series(1, 4000) n",
            database: servers.database)
        let written = try a.psql("SELECT pg_current_wal_lsn()", database: servers.database)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try await blocking {
            try waitUntil {
                try c.psql("SELECT pg_last_wal_replay_lsn() >= '\(written)'::pg_lsn", database: servers.database)
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "t"
            }
        }
        a.stopServer(mode: "immediate")
        try b.restart()
        try b.promote()
        let cluster = try PostgresCluster(primary: writerList(servers), replicas: servers.standbyURLs)
        defer { try? cluster.close() }
        try await blocking {
            try waitUntil { cluster.checkHealth().first?.problem?.contains("not a standby") == true }
        }
        let statuses = cluster.replicaStatuses
        #expect(!statuses[1].isInRotation, "the diverged standby: \(statuses[1])")
        let notes = BaseDAL<Note>(database: cluster)
        var missed = [Int]()
        for index in 0..<100 {
            let session = ConsistencySession()
            try await session.run {
                let id = try await notes.insert2(Note(body: "after \(index)"))
                if try await notes.findById(id) == nil { missed.append(index) }
                if try await notes.getRecordCount(condition: "id = \(id)") != 1 { missed.append(index) }
            }
        }
        #expect(missed.isEmpty, "sessions that missed their own write: \(missed)")
    }

    /// A standby whose primary died has no upstream: its data grows stale however small
    /// its lag in bytes looks, and it leaves the rotation within the staleness bound.
    @Test func aStandbyFollowingADeadPrimaryLeavesTheRotation() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        var configuration = PostgresClusterConfiguration()
        configuration.maximumStaleness = .seconds(2)
        configuration.healthCheckInterval = .milliseconds(100)
        configuration.healthCheckTimeout = .seconds(1)
        let cluster = try PostgresCluster(
            primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
        defer { try? cluster.close() }
        try await blocking { try waitUntil { cluster.replicaStatuses.allSatisfy(\.isInRotation) } }
        // Timed from a thread of its own: a test task can be held for seconds by other tests.
        let after = try await blocking {
            servers.primary.stopServer(mode: "immediate")
            let killed = ContinuousClock.now
            try waitUntil { !(cluster.replicaStatuses.first?.isInRotation ?? true) }
            return ContinuousClock.now - killed
        }
        #expect(after < .seconds(6), "the standby left the rotation \(after) after its primary died")
        let problem = cluster.replicaStatuses.first?.problem ?? ""
        #expect(problem.contains("upstream") || problem.contains("old, past the bound"), "\(problem)")
    }

    /// A token is signed: an edit of any one character, a bare WAL position, a token signed
    /// with another key or issued by another system is ignored, as if the client had sent
    /// none (the session reads what a read without a token may read: here a paused standby
    /// that has not the write). A session never moves back. A deadlock is retryable.
    @Test func tokensCannotBeForgedOrEditedAndSessionsNeverMoveBack() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        let cluster = try clusterKeepingLaggingReplicas(servers)
        defer { try? cluster.close() }
        try await blocking { try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) } }
        try servers.standbys[0].psql("SELECT pg_wal_replay_pause()", database: servers.database)
        defer { _ = try? servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database) }
        let notes = BaseDAL<Note>(database: cluster)
        let session = ConsistencySession()
        let id = try await session.run { try await notes.insert2(Note(body: "signed")) }
        guard let token = session.token else {
            Issue.record("the write left no token")
            return
        }
        /// Whether a session carrying `text` reads the write (the primary), rather than the
        /// paused standby (a token ignored).
        func seesTheWrite(carrying text: String) async throws -> Bool {
            let carried = ConsistencySession(token: ConsistencyToken(text))
            return try await carried.run { try await notes.findById(id) } != nil
        }
        #expect(try await seesTheWrite(carrying: token.description))  // the real token works
        let text = Array(token.description)
        var honoured = [String]()
        for index in text.indices {
            for replacement in ["A", "z", "0", "-"] where String(text[index]) != replacement {
                var edited = text
                edited[index] = Character(replacement)
                if try await seesTheWrite(carrying: String(edited)) { honoured.append(String(edited)) }
            }
        }
        #expect(honoured.isEmpty, "edited tokens honoured: \(honoured.prefix(3))")
        #expect(ConsistencyToken("FFFFFFFF/FFFFFFFF") == nil)
        #expect(ConsistencyToken(token.description + "A") == nil)
        // Signed with another key: another deployment's token.
        var other = PostgresClusterConfiguration()
        other.maximumReplicaLag = .bytes(1 << 40)  // the paused standby stays in rotation
        other.maximumStaleness = .seconds(3600)
        other.tokenSigningKey = try ConsistencyTokenKey(secret: "another deployment's secret")
        let otherCluster = try PostgresCluster(
            primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: other)
        defer { try? otherCluster.close() }
        let foreignSession = ConsistencySession()
        try await foreignSession.run {
            _ = try await BaseDAL<Note>(database: otherCluster).insert2(Note(body: "foreign"))
        }
        let foreign = try #require(foreignSession.token)
        #expect(try await !seesTheWrite(carrying: foreign.description))
        let dropped = ConsistencySession(token: foreign)
        _ = try await dropped.run { try await notes.getRecordCount() }
        #expect(dropped.token == nil)  // an ignored token is dropped, not sent back
        // Never back: the older of two tokens does not replace the newer.
        let later = ConsistencySession()
        try await later.run { _ = try await notes.insert2(Note(body: "later")) }
        let newest = try #require(later.token)
        later.advance(to: token)
        #expect(later.token == newest)
        let earlier = ConsistencySession(token: token)
        earlier.advance(to: newest)
        #expect(earlier.token == newest)
    }

    /// A deadlock (40P01) between two writers is a retryable error.
    @Test func aDeadlockIsRetryable() async throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql("CREATE TABLE pair(id INT PRIMARY KEY, n INT); INSERT INTO pair VALUES (1, 0), (2, 0)")
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        let bothLocked = DispatchSemaphore(value: 0)
        let first = Task {
            try await blocking {
                try pool.write { db in
                    try db.execute("UPDATE pair SET n = n + 1 WHERE id = 1")
                    bothLocked.signal()
                    Thread.sleep(forTimeInterval: 0.3)
                    try db.execute("UPDATE pair SET n = n + 1 WHERE id = 2")
                }
            }
        }
        let second = Task {
            try await blocking {
                try pool.write { db in
                    try db.execute("UPDATE pair SET n = n + 1 WHERE id = 2")
                    bothLocked.signal()
                    Thread.sleep(forTimeInterval: 0.3)
                    try db.execute("UPDATE pair SET n = n + 1 WHERE id = 1")
                }
            }
        }
        var deadlocks = 0
        for task in [first, second] {
            do {
                try await task.value
            } catch let error as PostgresError {
                #expect(error.sqlState == "40P01")
                #expect(error.isRetryable)
                deadlocks += 1
            }
        }
        #expect(deadlocks == 1)
    }

    /// Split brain: the old primary accepting writes beside the promoted one. Writes are
    /// refused, naming both, until one remains; then they resume on it. Reads the
    /// primary's pool would serve are refused too: its connection is to the old primary,
    /// which lacks what the promoted one committed.
    @Test func writesAreRefusedWhileTwoHostsAcceptThem() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        var configuration = PostgresClusterConfiguration()
        configuration.healthCheckInterval = .milliseconds(100)
        let cluster = try PostgresCluster(
            primary: writerList(servers), replicas: servers.standbyURLs, configuration: configuration)
        defer { try? cluster.close() }
        let notes = BaseDAL<Note>(database: cluster)
        _ = try await notes.insert2(Note(body: "before"))
        try servers.standbys[0].promote()  // the old primary still runs: two accept writes
        try await eventually { cluster.hostsAcceptingWrites.count == 2 }
        let refused = await #expect(throws: DALError.self) { _ = try await notes.insert2(Note(body: "during")) }
        #expect(refused?.code == .splitBrain)
        #expect(refused?.message.contains(servers.primary.directory) == true)
        #expect(refused?.message.contains(servers.standbys[0].directory) == true)
        #expect(httpStatus(for: refused ?? DALError(.notFound, "")) == 503)
        // A row the promoted standby committed, which the old primary never got; the
        // standby has left the rotation (it is no longer one): reads would go to the
        // primary's pool, connected to the old primary.
        try servers.standbys[0].psql("INSERT INTO notes(body) VALUES ('promoted')", database: servers.database)
        try await blocking { try waitUntil { cluster.checkHealth().allSatisfy { !$0.isInRotation } } }
        let readRefused = await #expect(throws: DALError.self) {
            _ = try await notes.getRecordCount(condition: "body = \("promoted")")
        }
        #expect(readRefused?.code == .splitBrain)
        servers.primary.stopServer(mode: "fast")
        try await eventually { cluster.hostsAcceptingWrites.count == 1 }
        try await blocking { try waitUntil { (try? notes.insert2(Note(body: "after"))) != nil } }
        #expect(try await notes.getRecordCount(condition: "body = \("during")") == 0)
        #expect(try await notes.getRecordCount(condition: "body = \("promoted")") == 1)
    }

    /// Two entries of the primary's list that name one server (a virtual address and the
    /// server's own name; here its socket directory, with and without a final slash) are
    /// not a split brain: the server is counted once, and writes and the primary's reads
    /// go on.
    @Test func oneServerNamedTwiceInThePrimarysListIsNotASplitBrain() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        let primary = servers.primary
        var configuration = PostgresClusterConfiguration()
        configuration.healthCheckInterval = .milliseconds(100)
        let cluster = try PostgresCluster(
            primary: "host=\(primary.directory),\(primary.directory)/ port=\(primary.port),\(primary.port) "
                + "user=app dbname=\(servers.database) connect_timeout=2 target_session_attrs=read-write",
            replicas: [], configuration: configuration)
        defer { try? cluster.close() }
        _ = cluster.checkHealth()
        #expect(cluster.hostsAcceptingWrites.count == 1, "\(cluster.hostsAcceptingWrites)")
        let notes = BaseDAL<Note>(database: cluster)
        _ = try await notes.insert2(Note(body: "one server"))
        #expect(try await notes.getRecordCount(condition: "body = \("one server")") == 1)
    }

    /// The read-your-writes check runs before the read's snapshot: on the replica's
    /// connection, the replay position is read first, then the read transaction begins
    /// (checked inside the transaction, a commit replayed between the snapshot and the
    /// check would pass it yet stay invisible).
    @Test func theCaughtUpCheckRunsBeforeTheReadsSnapshot() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        let log = StatementLog()
        var configuration = PostgresClusterConfiguration()
        configuration.pool.observer = log
        let cluster = try PostgresCluster(
            primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
        defer { try? cluster.close() }
        try await blocking { try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) } }
        let notes = BaseDAL<Note>(database: cluster)
        let session = ConsistencySession()
        let id = try await session.run { try await notes.insert2(Note(body: "checked")) }
        // The standby has the write: the session's read goes there.
        try await blocking {
            try waitUntil {
                try servers.standbys[0].psql("SELECT count(*) FROM notes WHERE id = \(id)", database: servers.database)
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
        }
        let seen = try await blocking {
            try session.run {
                try cluster.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM notes WHERE id = \(id)") }
            }
        }
        #expect(seen == 1)
        let standby = servers.standbys[0].directory
        let onStandby = log.statements.filter { $0.database.contains(standby) }.map(\.sql)
        let check = onStandby.lastIndex { $0.contains("pg_last_wal_replay_lsn") }
        let begin = onStandby.lastIndex { $0.hasPrefix("BEGIN") }
        let read = onStandby.lastIndex { $0.contains("COUNT(*) FROM notes") }
        let order = try #require(check.flatMap { c in begin.flatMap { b in read.map { (c, b, $0) } } })
        #expect(order.0 < order.1 && order.1 < order.2, "\(onStandby.suffix(5))")
    }

    /// A standby of another timeline (it still follows the old primary, which runs on after
    /// a standby was promoted) or of another system (another cluster's, whatever its
    /// positions) leaves the rotation, and a session's read never goes there.
    @Test func aStandbyOfAnotherTimelineOrSystemLeavesTheRotation() async throws {
        let servers = try await ReplicatedServers.started(standbys: 2)
        defer { servers.stop() }
        let other = try ReplicatedServers(standbys: 1)  // another initdb: another system
        defer { other.stop() }
        #expect(servers.database == other.database)  // the same database name on both
        try servers.standbys[0].promote()  // standby 1 still follows the old primary's timeline
        let cluster = try PostgresCluster(
            primary: servers.standbyURLs[0], replicas: [servers.standbyURLs[1]] + other.standbyURLs)
        defer { try? cluster.close() }
        try await blocking {
            try waitUntil { cluster.checkHealth().allSatisfy { $0.problem != nil && $0.problem != "not checked yet" } }
        }
        let statuses = cluster.replicaStatuses
        #expect(
            statuses[0].problem?.contains("timeline 1 where the primary is on timeline 2") == true, "\(statuses[0])")
        #expect(statuses[1].problem?.contains("another system") == true, "\(statuses[1])")
        let notes = BaseDAL<Note>(database: cluster)
        let session = ConsistencySession()
        let seen = try await session.run {
            let id = try await notes.insert2(Note(body: "on the new timeline"))
            return try await notes.findById(id)
        }
        #expect(seen != nil)
    }

    /// With synchronous replication (`synchronous_standby_names`, `synchronous_commit = on`)
    /// no write acknowledged before the primary is killed (SIGKILL, under load) is missing
    /// on the promoted standby.
    @Test func synchronousReplicationLosesNoAcknowledgedWriteAtAKill() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        try servers.primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        try servers.primary.psql("SELECT pg_reload_conf()")
        try await blocking {
            try waitUntil {
                try servers.primary.psql("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
        }
        let pool = try PostgresPool(url: servers.primaryURL)
        defer { try? pool.close() }
        let notes = BaseDAL<Note>(database: pool)
        let acknowledged = Locked([Int64]())
        let writers = (0..<3).map { index in
            Task {
                try await blocking {
                    for serial in 0..<100_000 {
                        do {
                            let id = try notes.insert2(Note(body: "w\(index)-\(serial)"))
                            acknowledged.withLock { $0.append(id) }
                        } catch {
                            return  // the primary is gone
                        }
                    }
                }
            }
        }
        try await eventually { acknowledged.withLock { $0.count } > 300 }
        servers.primary.crash()
        for writer in writers { try await writer.value }
        try servers.standbys[0].promote()
        let stored = Set(
            try servers.standbys[0].psql("SELECT id FROM notes", database: servers.database)
                .split(separator: "\n").compactMap { Int64($0) })
        let lost = Set(acknowledged.withLock { $0 }).subtracting(stored)
        #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.withLock { $0.count }) acknowledged writes lost")
    }
}
