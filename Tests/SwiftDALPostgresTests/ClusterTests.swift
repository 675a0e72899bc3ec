import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// Waits until `condition` holds: replication and health checks take their time, more
/// so when the whole suite loads the machine (30 s, a bound for hangs, not a timing
/// assertion; the issue names the caller's line).
func waitUntil(sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(30)
    while true {
        if try condition() { return }
        guard Date() < deadline else { break }
        Thread.sleep(forTimeInterval: 0.025)
    }
    Issue.record("a condition did not come true within 30 s", sourceLocation: sourceLocation)
}

/// A cluster over `servers` whose replicas stay in rotation however far behind they fall
/// (a paused standby serves reads): for tests of what a session sees.
/// A cluster over `servers` with `lag` (and `staleness`) as its bounds, checking health
/// every 50 ms, returned once every replica is in rotation and the first standby's replay
/// is paused.
private func pausedStandbyCluster(
    _ servers: ReplicatedServers, lag: PostgresClusterConfiguration.ReplicaLag, staleness: Duration? = nil
) throws -> PostgresCluster {
    var configuration = PostgresClusterConfiguration()
    configuration.maximumReplicaLag = lag
    if let staleness { configuration.maximumStaleness = staleness }
    configuration.healthCheckInterval = .milliseconds(50)
    let cluster = try PostgresCluster(
        primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
    do {
        try waitUntil { cluster.replicaStatuses.allSatisfy(\.isInRotation) }
        try servers.standbys[0].psql("SELECT pg_wal_replay_pause()", database: servers.database)
    } catch {
        try? cluster.close()
        throw error
    }
    return cluster
}

func clusterKeepingLaggingReplicas(_ servers: ReplicatedServers) throws -> PostgresCluster {
    var configuration = PostgresClusterConfiguration()
    configuration.maximumReplicaLag = .bytes(1 << 40)
    configuration.maximumStaleness = .seconds(3600)
    return try PostgresCluster(primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
}

@Suite(.serialized) struct ClusterTests {
    @Test func readsGoToReplicasAndWritesToThePrimary() throws {
        let servers = try ReplicatedServers()
        defer { servers.stop() }
        let cluster = try PostgresCluster(primary: servers.primaryURL, replicas: servers.standbyURLs)
        defer { try? cluster.close() }
        try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
        let notes = BaseDAL<Note>(database: cluster)
        let id = try notes.insert2(Note(body: "hello"))
        // Every read is served by a standby (pg_is_in_recovery), in turn.
        var standbyReads = 0
        for _ in 0..<10 {
            if try cluster.read({ try $0.fetchScalar(Bool.self, "SELECT pg_is_in_recovery()") }) == true {
                standbyReads += 1
            }
        }
        #expect(standbyReads == 10)
        #expect(try cluster.write { try $0.fetchScalar(Bool.self, "SELECT pg_is_in_recovery()") } == false)
        try waitUntil { try notes.findById(id) != nil }
        // A write inside a read throws, as on every engine.
        #expect(
            #expect(throws: DALError.self) { _ = try cluster.read { _ in try notes.insert(Note(body: "no")) } }?.code
                == .writeInReadOnlyAccess)
    }

    @Test func readYourWritesNeverHandsTheWriterStaleDataAndTheNegativeControlDoes() throws {
        let servers = try ReplicatedServers(standbys: 1)
        defer { servers.stop() }
        for readYourWrites in [true, false] {
            var configuration = PostgresClusterConfiguration()
            configuration.readYourWrites = readYourWrites
            configuration.maximumReplicaLag = .bytes(1 << 40)  // a paused standby stays in rotation
            configuration.maximumStaleness = .seconds(3600)
            configuration.maximumStaleness = .seconds(3600)
            let cluster = try PostgresCluster(
                primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
            try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
            try servers.standbys[0].psql("SELECT pg_wal_replay_pause()", database: servers.database)
            let notes = BaseDAL<Note>(database: cluster)
            var stale = [String]()
            for index in 0..<20 {
                let session = ConsistencySession()
                try session.run {
                    let id = try notes.insert2(Note(body: "note \(readYourWrites) \(index)"))
                    if try notes.findById(id) == nil { stale.append("find \(index)") }
                }
                // The token travels as text (a header) and back, to another session.
                let carried = ConsistencySession(token: session.token.map(\.description).flatMap(ConsistencyToken.init))
                try carried.run {
                    if try notes.getRecordCount(condition: "body = \("note \(readYourWrites) \(index)")") == 0 {
                        stale.append("count \(index)")
                    }
                }
            }
            if readYourWrites {
                #expect(stale.isEmpty, "\(stale)")
            } else {
                #expect(stale.count == 40, "\(stale)")  // the negative control: the paused standby serves stale reads
            }
            try servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database)
            try cluster.close()
        }
        #expect(ConsistencyToken("not a token; DROP TABLE notes") == nil)
        #expect(ConsistencyToken("16/B374D848") == nil)  // a bare WAL position is no token
    }

    /// A write committed with `synchronous_commit = off` returns before its commit record
    /// is written out (here for up to 10 s, `wal_writer_delay`), and a standby has all the
    /// WAL written before it: the session's token must lie past the commit record (the
    /// primary's insert position), or that standby passes the token's check and serves
    /// the session a read without its write.
    @Test func readYourWritesHoldsForAnAsynchronousCommit() throws {
        let servers = try ReplicatedServers(standbys: 1)
        defer { servers.stop() }
        try servers.primary.psql("ALTER SYSTEM SET wal_writer_delay = '10s'", database: servers.database)
        try servers.primary.psql("SELECT pg_reload_conf()", database: servers.database)
        let cluster = try clusterKeepingLaggingReplicas(servers)
        defer { try? cluster.close() }
        try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
        let notes = BaseDAL<Note>(database: cluster)
        var stale = [Int]()
        for index in 0..<5 {
            // A synchronous commit first, replayed by the standby: it has all WAL written so far.
            try cluster.write { db in try db.execute("INSERT INTO notes(body) VALUES (\("sync \(index)"))") }
            try waitUntil {
                try servers.standbys[0].psql(
                    "SELECT count(*) FROM notes WHERE body = 'sync \(index)'", database: servers.database
                ).trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
            let session = ConsistencySession()
            try session.run {
                let id = try cluster.write { db -> Int64 in
                    try db.execute(sql: "SET LOCAL synchronous_commit TO off")
                    return try notes.insert2(Note(body: "async \(index)"))
                }
                if try notes.findById(id) == nil { stale.append(index) }
            }
        }
        #expect(stale.isEmpty, "reads of the session's own asynchronous commits were stale: \(stale)")
    }

    /// A session that arrives holding a token this cluster cannot use (here one of another
    /// cluster, as in a request that touched two databases) still reads its own writes:
    /// its write replaces that token, which would otherwise be kept (a token of another
    /// cluster is never "later"), then dropped by the read, which would go to the paused
    /// standby with no minimum at all.
    @Test func aSessionHoldingATokenItCannotUseStillReadsItsOwnWrites() throws {
        let servers = try ReplicatedServers(standbys: 1)
        defer { servers.stop() }
        let elsewhere = try PostgresServer.start()
        defer { elsewhere.stop() }
        let otherDatabase = try elsewhere.makeDatabaseName()
        try elsewhere.psql(
            "CREATE TABLE notes(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, body TEXT NOT NULL)",
            database: otherDatabase)
        let cluster = try clusterKeepingLaggingReplicas(servers)
        defer { try? cluster.close() }
        let other = try PostgresCluster(primary: elsewhere.connectionString(database: otherDatabase), replicas: [])
        defer { try? other.close() }
        try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
        try servers.standbys[0].psql("SELECT pg_wal_replay_pause()", database: servers.database)
        let foreign = ConsistencySession()
        try foreign.run { _ = try BaseDAL<Note>(database: other).insert2(Note(body: "elsewhere")) }
        let token = try #require(foreign.token)
        let notes = BaseDAL<Note>(database: cluster)
        var stale = [Int]()
        for index in 0..<5 {
            let session = ConsistencySession(token: token)
            try session.run {
                let id = try notes.insert2(Note(body: "mine \(index)"))
                if try notes.findById(id) == nil { stale.append(index) }
            }
            #expect(session.token != nil && session.token != token)
        }
        #expect(stale.isEmpty, "reads of the session's own writes were stale: \(stale)")
        try servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database)
    }

    /// A standby behind the primary when the cluster starts (its replay paused before) is
    /// not in rotation: it has not replayed the first position read of the primary, so how
    /// stale it is cannot be told yet (it once counted from that first reading, and served
    /// a read without a row committed 3 s earlier). It comes back once it catches up.
    @Test func aStandbyBehindTheFirstReadingOfThePrimaryStaysOutOfRotation() throws {
        let servers = try ReplicatedServers(standbys: 1)
        defer { servers.stop() }
        try servers.standbys[0].psql("SELECT pg_wal_replay_pause()", database: servers.database)
        try servers.primary.psql("INSERT INTO notes(body) VALUES ('before the cluster')", database: servers.database)
        Thread.sleep(forTimeInterval: 3)
        let cluster = try PostgresCluster(primary: servers.primaryURL, replicas: servers.standbyURLs)
        defer { try? cluster.close() }
        #expect(cluster.checkHealth().allSatisfy { !$0.isInRotation })
        for _ in 0..<5 {
            #expect(try cluster.read { try $0.fetchScalar(Int.self, "SELECT count(*) FROM notes") } == 1)
        }
        try servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database)
        try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
    }

    @Test func aLaggingStandbyLeavesTheRotationAndComesBackByItself() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        let cluster = try pausedStandbyCluster(servers, lag: .bytes(64 * 1024))
        defer { try? cluster.close() }
        let notes = BaseDAL<Note>(database: cluster)
        try await notes.insertRange((0..<2000).map { Note(body: String(repeating: "x", count: 100) + "\($0)") })
        try waitUntil { cluster.replicaStatuses.allSatisfy { !$0.isInRotation } }
        #expect(cluster.replicaStatuses.first?.problem?.contains("behind") == true)
        // Out of rotation, reads go to the primary: up to date even without a session.
        #expect(try await notes.getRecordCount() == 2000)
        try servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database)
        try waitUntil { cluster.replicaStatuses.allSatisfy(\.isInRotation) }
        // The session travels with async DAL calls to the pool's threads.
        try servers.standbys[0].psql("SELECT pg_wal_replay_pause()", database: servers.database)
        let session = ConsistencySession()
        let found = try await session.run {
            let id = try await notes.insert2(Note(body: "async"))
            return try await notes.findById(id)
        }
        #expect(found?.body == "async")
        #expect(session.token != nil)
        try servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database)
    }

    /// `maximumReplicaLag = .time(…)` bounds a replica's staleness more tightly than
    /// `maximumStaleness`: a standby whose replay is paused leaves the rotation once its
    /// newest data is older than the lag's bound (1 s here, against a staleness bound of
    /// an hour), and comes back once it replays again.
    @Test func aStandbyStaleByTheTimeBoundLeavesTheRotation() throws {
        let servers = try ReplicatedServers(standbys: 1)
        defer { servers.stop() }
        let cluster = try pausedStandbyCluster(servers, lag: .time(.seconds(1)), staleness: .seconds(3600))
        defer { try? cluster.close() }
        let notes = BaseDAL<Note>(database: cluster)
        try notes.insert(Note(body: "after the pause"))
        try waitUntil { cluster.replicaStatuses.allSatisfy { !$0.isInRotation } }
        #expect(cluster.replicaStatuses.first?.problem?.contains("past the bound of 1.0 seconds") == true)
        try servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database)
        try waitUntil { cluster.replicaStatuses.allSatisfy(\.isInRotation) }
    }

    /// After a WAL switch the primary's insert position points past the next segment's
    /// page header, where no record ends: a standby that has replayed everything (the
    /// switch) reports the segment's start. It stays in rotation: it used to be held out
    /// ("staleness unknown") until the primary wrote again, which a quiet primary may never
    /// do. Checked on the servers: the positions are read with psql, and the health check
    /// is the one the test asks for (the cluster's own thread checks once an hour).
    @Test func aStandbyThatReplayedAWALSwitchStaysInRotationOnAQuietPrimary() throws {
        let servers = try ReplicatedServers(standbys: 1)
        defer { servers.stop() }
        var configuration = PostgresClusterConfiguration()
        configuration.healthCheckInterval = .seconds(3600)
        let cluster = try PostgresCluster(
            primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
        defer { try? cluster.close() }
        let standby = servers.standbys[0]
        var judged = false
        // Tried again when the primary wrote a record of its own (a checkpoint's, the
        // background writer's snapshot) between the readings: the position then moved on.
        // (A switch right after the base backup's changes nothing: both leave the position
        // just past a new segment's header.)
        for _ in 0..<5 where !judged {
            _ = try servers.primary.psql("SELECT pg_switch_wal()", database: servers.database)
            let position = try servers.primary.psql(
                """
                SELECT lsn || ' ' || (pg_walfile_name_offset(lsn)).file_offset
                FROM (SELECT pg_current_wal_insert_lsn() AS lsn) AS current
                """, database: servers.database
            ).split(whereSeparator: \.isWhitespace)
            // Past the new segment's first page header; else the primary wrote since: again.
            guard position.count == 2, position[1] == "40" else { continue }
            let lsn = String(position[0])
            try waitUntil {
                try standby.psql(
                    "SELECT pg_last_wal_replay_lsn() >= '\(lsn)'::pg_lsn - 40", database: servers.database
                ).hasPrefix("t")
            }
            let statuses = cluster.checkHealth()
            let after = try servers.primary.psql("SELECT pg_current_wal_insert_lsn()", database: servers.database)
            guard after.trimmingCharacters(in: .whitespacesAndNewlines) == lsn else { continue }
            judged = true
            #expect(statuses.count == 1)
            let problems = statuses.compactMap(\.problem)
            #expect(problems.isEmpty, "\(problems)")
            #expect(statuses.first?.isInRotation == true)
            #expect(statuses.first?.lagBytes == 0)
        }
        #expect(judged)
    }

    @Test func aStandbyStoppedUnderLoadLeavesTheRotationAndReadsCarryOn() throws {
        let servers = try ReplicatedServers()
        defer { servers.stop() }
        let cluster = try PostgresCluster(primary: servers.primaryURL, replicas: servers.standbyURLs)
        defer { try? cluster.close() }
        try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
        let notes = BaseDAL<Note>(database: cluster)
        try notes.insertRange((0..<100).map { Note(body: "n\($0)") })
        try waitUntil { try cluster.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM notes") } == 100 }
        let failures = Locked(Set<Int64>())
        let failureMessages = Locked([String]())
        let reads = Locked(Set<Int64>())
        let stop = Locked(false)
        let readers = (0..<3).map { reader in
            Thread {
                var count: Int64 = 0
                while !stop.withLock({ $0 }) {
                    count += 1
                    do {
                        if try notes.getRecordCount() >= 100 {
                            reads.withLock { _ = $0.insert(Int64(reader) * 1_000_000 + count) }
                        }
                    } catch {
                        failures.withLock { _ = $0.insert(Int64(reader) * 1_000_000 + count) }
                        failureMessages.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for reader in readers { reader.start() }
        try waitUntil { reads.withLock { $0.count } > 50 }
        servers.standbys[1].stopServer(mode: "immediate")
        let before = reads.withLock { $0.count }
        try waitUntil { reads.withLock { $0.count } > before + 200 }
        stop.withLock { $0 = true }
        while readers.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.005) }
        let statuses = cluster.checkHealth()
        #expect(statuses.filter(\.isInRotation).count == 1)
        #expect(statuses.first { !$0.isInRotation }?.problem?.contains("unreachable") == true)
        // A read that met the stopped standby before reading was served elsewhere: none failed.
        #expect(failures.withLock { $0.count } == 0, "reads that failed: \(failureMessages.withLock { $0 })")
        #expect(try notes.getRecordCount() == 100)
    }

    @Test func aReadWhoseReplicaIsLostBeforeItAnswersIsServedByAnother() throws {
        let servers = try ReplicatedServers()
        defer { servers.stop() }
        let cluster = try PostgresCluster(primary: servers.primaryURL, replicas: servers.standbyURLs)
        defer { try? cluster.close() }
        try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
        let (healthy, doomed) = (servers.standbys[0], servers.standbys[1])
        // From outside: the doomed standby's backend is terminated while it runs the read.
        let terminated = Locked(false)
        let terminator = Thread {
            for _ in 0..<2_400 where !terminated.withLock({ $0 }) {
                let ended = try? doomed.psql(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        + "WHERE query LIKE '%a doomed read%' AND pid <> pg_backend_pid()")
                if let ended, ended != "0" { terminated.withLock { $0 = true } }
                Thread.sleep(forTimeInterval: 0.025)
            }
        }
        terminator.start()
        defer { terminated.withLock { $0 = true } }
        // New to each connection, so prepared first (a round trip that answers nothing), then
        // run: it sleeps on the doomed standby only. Reads take the replicas in turn.
        var ports = [Int]()
        for _ in 0..<4 where !terminated.withLock({ $0 }) {
            ports.append(
                try cluster.reentrantRead { db in
                    try db.fetchScalar(
                        Int.self,
                        """
                        SELECT current_setting('port')::int /* a doomed read */
                        FROM pg_sleep(CASE WHEN current_setting('port') = \(String(doomed.port)) THEN 60 ELSE 0 END)
                        """)
                } ?? -1)
        }
        try waitUntil { terminated.withLock { $0 } }  // the terminator may report after the retried read
        // Every read answered, from the healthy standby: the one that met the doomed standby too.
        #expect(!ports.isEmpty && ports.allSatisfy { $0 == healthy.port }, "\(ports)")
    }

    @Test func writesResumeOnAPromotedStandbyWithoutARestart() throws {
        let servers = try ReplicatedServers(standbys: 1)
        defer { servers.stop() }
        let primaryHosts =
            "host=\(servers.primary.directory),\(servers.standbys[0].directory) port=\(servers.primary.port),\(servers.standbys[0].port) "
            + "user=app dbname=\(servers.database) connect_timeout=2 target_session_attrs=read-write"
        let cluster = try PostgresCluster(primary: primaryHosts, replicas: servers.standbyURLs)
        defer { try? cluster.close() }
        let notes = BaseDAL<Note>(database: cluster)
        var acknowledged = Set<Int64>()
        for index in 0..<20 { acknowledged.insert(try notes.insert2(Note(body: "before \(index)"))) }
        // A clean shutdown sends all WAL to the standby first; then the standby is promoted.
        servers.primary.stopServer(mode: "fast")
        var failed = 0
        for index in 0..<3 {
            do {
                acknowledged.insert(try notes.insert2(Note(body: "during \(index)")))
            } catch let error as PostgresError where error.isConnectionFailure {
                failed += 1
            }
        }
        #expect(failed == 3)  // typed errors, never a silent loss
        try servers.standbys[0].promote()
        try waitUntil {
            (try? notes.insert2(Note(body: "after"))).map { acknowledged.insert($0) } != nil
        }
        for index in 0..<20 { acknowledged.insert(try notes.insert2(Note(body: "after \(index)"))) }
        let stored = Set(try cluster.write { try $0.fetchColumn(Int64.self, "SELECT id FROM notes") })
        #expect(acknowledged.isSubset(of: stored))
        #expect(try cluster.write { try $0.fetchScalar(Bool.self, "SELECT pg_is_in_recovery()") } == false)
    }

    /// A stream of a cluster reads from a replica, through one cursor on one standby
    /// connection; in a consistency session it sees the session's writes.
    @Test func aStreamReadsFromAReplicaAndSeesTheSessionsWrites() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        let cluster = try clusterKeepingLaggingReplicas(servers)
        defer { try? cluster.close() }
        try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
        let notes = BaseDAL<Note>(database: cluster)
        _ = try await notes.insertRange((0..<600).map { Note(body: "note \($0)") })
        try waitUntil { try notes.getRecordCount() == 600 }
        var bodies = [String]()
        for try await note in notes.stream(orderBy: "id") { bodies.append(note.body) }
        #expect(bodies == (0..<600).map { "note \($0)" })
        for try await row in cluster.stream("SELECT pg_is_in_recovery()") { #expect(try row.decode(Bool.self, at: 0)) }
        // The standby stops replaying: a session's stream after its write goes to the primary.
        try servers.standbys[0].psql("SELECT pg_wal_replay_pause()", database: servers.database)
        let session = ConsistencySession()
        let mine = try await session.run {
            try await notes.insert(Note(body: "mine"))
            var found = [String]()
            for try await note in notes.stream(condition: "body = \("mine")") { found.append(note.body) }
            return found
        }
        #expect(mine == ["mine"])
        try servers.standbys[0].psql("SELECT pg_wal_replay_resume()", database: servers.database)
    }

    /// Behind PgBouncer's transaction pooling, a stream's cursor lives in its read
    /// transaction, on the one server connection PgBouncer gives that transaction.
    @Test func aStreamWorksBehindPgBouncerInTransactionPooling() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let name = try server.makeDatabaseName()
        let bouncer = try server.startPgBouncer(poolSize: 2)
        var configuration = PostgresConfiguration()
        configuration.transactionPooling = true
        configuration.maximumConnections = 4
        let pool = try PostgresPool(
            url: "host=\(server.directory) port=\(bouncer) user=app dbname=\(name)", configuration: configuration)
        defer { try? pool.close() }
        try SampleSchema.migrator.migrate(pool)
        let users = UserDAL(database: pool)
        try await users.insertRange((0..<700).map { UserInfo(name: "u\($0)", email: "u\($0)@x", age: $0 % 90) })
        var streamed = [String]()
        for try await user in users.stream(orderBy: "id") {
            // Another call meanwhile, on another server connection.
            if streamed.isEmpty { #expect(try await users.getRecordCount() == 700) }
            streamed.append(user.email)
        }
        #expect(streamed == (0..<700).map { "u\($0)@x" })
        for try await _ in users.stream() { break }
        for _ in 0..<5 { #expect(try await users.getRecordCount() == 700) }
    }

    @Test func theEngineWorksBehindPgBouncerInTransactionPooling() throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let name = try server.makeDatabaseName()
        let bouncer = try server.startPgBouncer(poolSize: 2)
        var configuration = PostgresConfiguration()
        configuration.transactionPooling = true
        configuration.maximumConnections = 6  // more clients than PgBouncer's 2 server connections
        let pool = try PostgresPool(
            url: "host=\(server.directory) port=\(bouncer) user=app dbname=\(name)", configuration: configuration)
        try SampleSchema.migrator.migrate(pool)
        let users = UserDAL(database: pool)
        let group = DispatchGroup()
        let errors = Locked([String]())
        for worker in 0..<6 {
            group.enter()
            Thread {
                for index in 0..<20 {
                    do {
                        try pool.write { _ in
                            let id = try users.insert2(
                                UserInfo(name: "u\(worker)-\(index)", email: "u\(worker)-\(index)@x", age: index))
                            _ = try users.findById(id)
                        }
                        _ = try users.findByEmail("u\(worker)-\(index)@x")
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 }.prefix(3))")
        #expect(try users.getRecordCount() == 120)
        #expect(try users.findWithPager(pager: PagerInfo(pageIndex: 2, pageSize: 50)).items.count == 50)
        // Pipelined batches through PgBouncer: two at once, across pipelines; a failing one
        // names its row and writes nothing.
        let batches = (0..<2).map { worker in
            (0..<1_200).map { UserInfo(name: "b\(worker)-\($0)", email: "b\(worker)-\($0)@x", age: $0 % 90) }
        }
        let keys = Locked([[Int64]]())
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            do {
                let ids = try users.insertRange2(batches[worker])
                keys.withLock { $0.append(ids) }
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 }.prefix(3))")
        #expect(keys.withLock { $0.map(\.count) } == [1_200, 1_200])
        #expect(try users.getRecordCount() == 2_520)
        var failing = batches[0].map { UserInfo(name: $0.name, email: "again-" + $0.email, age: $0.age) }
        failing[1_111].email = "u0-0@x"
        let error = #expect(throws: (any Error).self) { try users.insertRange(failing) }
        #expect((error as? any DatabaseError)?.batchIndex == 1_111)
        #expect(try users.getRecordCount() == 2_520)
        // A bulk load (COPY) through PgBouncer, and one that fails: its row named, nothing loaded.
        let loaded = batches[1].map { UserInfo(name: $0.name, email: "bulk-" + $0.email, age: $0.age) }
        #expect(try users.bulkInsert(loaded) == 1_200)
        let bulkError = #expect(throws: (any Error).self) { try users.bulkInsert(failing) }
        #expect((bulkError as? any DatabaseError)?.batchIndex == 1_111)
        #expect(try users.getRecordCount() == 3_720)
        try pool.close()
    }
}
