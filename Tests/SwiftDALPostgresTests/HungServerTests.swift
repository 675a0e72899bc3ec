import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import SwiftDALTestSupport
import Synchronization
import Testing

/// How long `body` took.
private func elapsed(_ body: () throws -> Void) rethrows -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return clock.now - start
}

private struct HungItem: Entity, Codable {
    static let tableName = "items"
    var id: Int64?
    var name: String
}

/// Waits until no session of `database` is left in a transaction (seen from `psql`, outside
/// SwiftDAL): the server ended what the client gave up on.
private func noSessionLeftInATransaction(on server: PostgresServer, in database: String) async throws {
    try await blocking {
        try waitUntil {
            let left = try? server.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    + "AND state LIKE 'idle in transaction%'", database: database)
            return left?.trimmingCharacters(in: .whitespacesAndNewlines) == "0"
        }
    }
}

/// A server stopped with SIGSTOP accepts connections and never answers. Nothing in the
/// process may be held by it: not the time limits of calls to other servers, not the
/// health checks of the other replicas, not the reads the cluster can serve elsewhere.
/// A cluster over `servers`, its notes table holding 100 rows, health-checked every
/// 200 ms with a 1 s deadline (`configure` may change more), once every replica is in
/// rotation and reads through it see the rows.
private func servingCluster(
    _ servers: ReplicatedServers, _ configure: (inout PostgresClusterConfiguration) -> Void = { _ in }
) async throws -> PostgresCluster {
    try servers.primary.psql(
        "INSERT INTO notes(body) SELECT 'note ' || n FROM generate_series(1, 100) n", database: servers.database)
    var configuration = PostgresClusterConfiguration()
    configuration.healthCheckInterval = .milliseconds(200)
    configuration.healthCheckTimeout = .seconds(1)
    configure(&configuration)
    let cluster = try PostgresCluster(
        primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
    do {
        try await blocking {
            try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) }
            try waitUntil { try BaseDAL<Note>(database: cluster).getRecordCount() == 100 }
        }
    } catch {
        try? cluster.close()
        throw error
    }
    return cluster
}

@Suite(.serialized) struct HungServerTests {
    /// A multi-host string whose first host hangs (a frozen old primary) and whose second
    /// accepts writes (the promoted standby): the first host gets its connect timeout, then
    /// the second is tried. libpq alone gave up on the whole list once the hung host's socket
    /// was shut down, so no write reached the new primary.
    @Test func aHungFirstHostOfAMultiHostStringIsPassedOver() throws {
        let hung = try PostgresServer.start()
        defer { hung.stop() }
        let other = try PostgresServer.start()
        defer { other.stop() }
        let database = try other.makeDatabaseName()
        hung.pause()
        defer { hung.resume() }
        let url =
            "host=\(hung.directory),\(other.directory) port=\(hung.port),\(other.port) user=app "
            + "dbname=\(database) connect_timeout=2 target_session_attrs=read-write"
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        let start = ContinuousClock.now
        let port = try pool.write { try $0.fetchScalar(String.self, "SHOW port") }
        #expect(port == String(other.port))
        let took = ContinuousClock.now - start
        #expect(took < .seconds(15), "connecting took \(took)")
    }

    @Test func aHungStandbyHoldsNoTimeLimitNoHealthCheckAndNoReadElsewhere() async throws {
        let servers = try await ReplicatedServers.started(standbys: 2)
        defer { servers.stop() }
        let cluster = try await servingCluster(servers)
        defer { try? cluster.close() }
        let hung = servers.standbys[0]
        let onHung = try PostgresPool(url: servers.standbyURLs[0])
        defer { try? onHung.close() }
        try onHung.checkConnection()
        let onPrimary = try PostgresPool(url: servers.primaryURL)
        defer { try? onPrimary.close() }
        try onPrimary.checkConnection()
        // Reads of the cluster, without time limits, running all along.
        let notes = BaseDAL<Note>(database: cluster)
        let readers = (0..<3).map { _ in
            Task.detached { () -> (served: Int, failures: [String]) in
                var served = 0
                var failures = [String]()
                let end = ContinuousClock.now.advanced(by: .seconds(6))
                while ContinuousClock.now < end {
                    do {
                        if try await notes.getRecordCount() == 100 { served += 1 }
                    } catch {
                        failures.append("\(error)")
                    }
                }
                return (served, failures)
            }
        }
        try await Task.sleep(for: .milliseconds(300))

        hung.pause()
        let pausedAt = ContinuousClock.now
        // When the hung standby leaves the rotation, seen from a thread of its own (this
        // task's wake-ups may wait for a cooperative thread behind other tests' work).
        let leftAt = Mutex<ContinuousClock.Instant?>(nil)
        Thread {
            if eventually({ cluster.replicaStatuses.first?.isInRotation == false }) {
                leftAt.withLock { $0 = .now }
            }
        }.start()
        // A call to the hung server under a time limit: its cancel request cannot get an
        // answer. It ends at its limit and grace period all the same.
        let stuck = Task {
            try await blocking {
                elapsed {
                    let error = #expect(throws: DALError.self) {
                        try withDatabaseTimeout(.milliseconds(300)) { try onHung.read { try $0.execute("SELECT 1") } }
                    }
                    // Its connection was given up on, nothing rolled back yet: the error
                    // says so rather than "rolled back".
                    #expect(error?.code == .timeout)
                    #expect(error?.message.contains("connection was closed") == true, "\(String(describing: error))")
                }
            }
        }
        try await Task.sleep(for: .milliseconds(400))
        // Time limits elsewhere in the process still fire, on time.
        let onTime = try await blocking {
            elapsed {
                let error = #expect(throws: DALError.self) {
                    try withDatabaseTimeout(.milliseconds(1500)) {
                        try onPrimary.read { try $0.execute("SELECT pg_sleep(4)") }
                    }
                }
                #expect(error?.code == .timeout)
            }
        }
        #expect(onTime < .milliseconds(2500), "a 1.5 s limit on the primary fired after \(onTime)")
        let stuckFor = try await stuck.value
        #expect(stuckFor < .seconds(3), "the call to the hung server ended after \(stuckFor)")
        // The hung standby left the rotation, found by the health checks' own deadline.
        try await eventually { leftAt.withLock { $0 } != nil }
        let leftAfter = (leftAt.withLock { $0 } ?? .now) - pausedAt
        #expect(leftAfter < .seconds(5), "the hung standby left the rotation after \(leftAfter)")
        #expect(cluster.replicaStatuses[1].isInRotation)
        // Reads went on elsewhere: none failed (those waiting on the hung standby with no
        // answer yet ran again on another server).
        for reader in readers {
            let (served, failures) = await reader.value
            #expect(failures.isEmpty, "reads that failed: \(failures.prefix(3))")
            #expect(served > 0)
        }
        hung.resume()
        try await blocking { try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) } }
    }

    /// A hung standby whose pool has callers waiting in line (more readers than its
    /// connections) and connections being opened to it: as it leaves the rotation, the
    /// openings are given up on and the callers in line go to another line, instead of
    /// waiting as long as it hangs (a trial's 100 tasks each waited their pool's 10 s
    /// acquire timeout, then failed; reads opening a connection waited the 10 s connect
    /// timeout). No read fails, and none takes anything like the hang's length.
    @Test func readsInLineForAHungStandbyGoElsewhere() async throws {
        let servers = try await ReplicatedServers.started(standbys: 2)
        defer { servers.stop() }
        let cluster = try await servingCluster(servers) { configuration in
            // More connections than its reads so far opened: the readers open new ones, to a
            // server that accepts them and never answers (each connect waited the connect
            // timeout, 10 s, before the pool gave up on them).
            configuration.pool.maximumConnections = 4
            configuration.pool.acquireTimeout = .seconds(120)  // a caller left in line would wait this long
            configuration.pool.connectTimeout = .seconds(30)  // and a connect to the hung server, this long
        }
        defer { try? cluster.close() }
        let notes = BaseDAL<Note>(database: cluster)
        servers.standbys[0].pause()
        let readers = (0..<12).map { _ in
            Task.detached { () -> (served: Int, failures: [String], longest: Duration) in
                var served = 0
                var failures = [String]()
                var longest = Duration.zero
                let clock = ContinuousClock()
                let end = clock.now.advanced(by: .seconds(8))
                while clock.now < end {
                    let start = clock.now
                    do {
                        if try await notes.getRecordCount() == 100 { served += 1 }
                    } catch {
                        failures.append("\(error)")
                    }
                    longest = max(longest, clock.now - start)
                }
                return (served, failures, longest)
            }
        }
        var results = [(served: Int, failures: [String], longest: Duration)]()
        for reader in readers { results.append(await reader.value) }
        servers.standbys[0].resume()
        #expect(cluster.replicaStatuses[1].isInRotation)
        for (served, failures, longest) in results {
            #expect(failures.isEmpty, "reads that failed: \(failures.prefix(3))")
            #expect(served > 0)
            // Loose (a noisy machine, Address Sanitizer: 8.3 s seen): what the bug held a read
            // for is 30 s (a connect) or 120 s (the line).
            #expect(longest < .seconds(20), "a read took \(longest)")
        }
        try await blocking { try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) } }
    }

    /// A write in a consistency session whose COMMIT is in flight when the primary hangs:
    /// it ends at its limit and grace period, outcome unknown, as without a session (its
    /// session no longer asks the hung primary for its position first: a trial's 1 s limit
    /// ended at 3.5 s, a health check's timeout later). The session's next read goes to the
    /// primary, and sees the row if it committed.
    @Test func aSessionsWriteOfUnknownOutcomeEndsAtItsLimit() async throws {
        let servers = try await ReplicatedServers.started(standbys: 1)
        defer { servers.stop() }
        var configuration = PostgresClusterConfiguration()
        configuration.healthCheckTimeout = .seconds(20)  // what the call waited for, past its limit
        let cluster = try PostgresCluster(
            primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
        defer { try? cluster.close() }
        try await blocking { try waitUntil { cluster.checkHealth().allSatisfy(\.isInRotation) } }
        let notes = BaseDAL<Note>(database: cluster)
        let session = ConsistencySession()
        let aboutToCommit = DispatchSemaphore(value: 0)
        let write = Task { () -> (took: Duration, error: (any Error)?) in
            try await blocking {
                let start = ContinuousClock.now
                do {
                    try withDatabaseTimeout(.milliseconds(1500)) {
                        try session.run {
                            try cluster.write { db in
                                try db.execute("INSERT INTO notes(body) VALUES (\("in flight"))")
                                aboutToCommit.signal()
                                Thread.sleep(forTimeInterval: 1)  // the server hangs meanwhile
                            }
                        }
                    }
                    return (ContinuousClock.now - start, nil)
                } catch {
                    return (ContinuousClock.now - start, error)
                }
            }
        }
        try await blocking {
            aboutToCommit.wait()
            servers.primary.pause()
        }
        let (took, failure) = try await write.value
        servers.primary.resume()
        #expect((failure as? DALError)?.code == .outcomeUnknown, "\(String(describing: failure))")
        // Its limit (1.5 s) and grace period (0.5 s), loosely: not the health check's 8 s more.
        #expect(took < .seconds(6), "the write ended after \(took)")
        try await blocking {
            try waitUntil { (try? servers.primary.psql("SELECT 1", database: servers.database)) != nil }
        }
        let stored = try servers.primary.psql("SELECT count(*) FROM notes", database: servers.database)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let seen = try await blocking { try session.run { try notes.getRecordCount() } }
        #expect(String(seen) == stored)
    }

    /// A COMMIT sent to a server that hangs before answering: the call's limit passes, the
    /// cancel request gets no answer, and the connection is abandoned with the COMMIT in
    /// flight. Whether it committed is unknown (the server may read it when it resumes):
    /// the call says so, never "rolled back".
    @Test func aCommitInFlightWhenTheServerHangsHasAnUnknownOutcome() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let database = try server.makeDatabaseName()
        try server.psql("CREATE TABLE ledger(id INT PRIMARY KEY)", database: database)
        let pool = try PostgresPool(url: server.connectionString(database: database))
        defer { try? pool.close() }
        let aboutToCommit = DispatchSemaphore(value: 0)
        let write = Task {
            try await blocking {
                // The limit passes after COMMIT went out: it stops the COMMIT in flight.
                try withDatabaseTimeout(.milliseconds(1500)) {
                    try pool.write { db in
                        try db.execute("INSERT INTO ledger VALUES (1)")
                        aboutToCommit.signal()
                        Thread.sleep(forTimeInterval: 1)  // the server hangs meanwhile; then COMMIT goes out
                    }
                }
            }
        }
        // Paused from a thread of its own, at once (a task could resume late on a busy machine).
        try await blocking {
            aboutToCommit.wait()
            server.pause()
        }
        let outcome = await write.result
        server.resume()
        let error = #expect(throws: DALError.self) { try outcome.get() }
        #expect(error?.code == .outcomeUnknown, "\(String(describing: error))")
        // The server is back; the row is there or not, and nothing said otherwise.
        try await blocking { try waitUntil { (try? server.psql("SELECT 1", database: database)) != nil } }
    }

    /// A shutdown whose grace period ends while a synchronous call with no time limit
    /// waits on a server that hangs: its cancel request gets no answer, and its connection
    /// is given up on after the grace period for stops, so that the call ends (with an
    /// error) and the shutdown returns, the server still hung.
    @Test func aShutdownEndsAnUnlimitedCallToAHungServer() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        var configuration = PostgresConfiguration()
        configuration.connectTimeout = .seconds(1)
        let pool = try PostgresPool(url: server.connectionString(), configuration: configuration)
        defer { try? pool.close() }
        try pool.checkConnection()
        let callEnded = DispatchSemaphore(value: 0)
        let callError = Mutex<(any Error)?>(nil)
        Thread {
            do {
                try pool.read { db in _ = try db.execute("SELECT pg_sleep(60)") }
            } catch {
                callError.withLock { $0 = error }
            }
            callEnded.signal()
        }.start()
        try await blocking {
            try waitUntil {
                let active = try? server.psql(
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' AND state = 'active'"
                )
                return active?.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
        }
        server.pause()
        let shutdownReturned = DispatchSemaphore(value: 0)
        Task {
            await pool.shutdown(gracePeriod: .milliseconds(200))
            shutdownReturned.signal()
        }
        // Bounded waits: without the grace period, both would wait for the server.
        let returned = try await blocking { shutdownReturned.wait(timeout: .now() + 20) == .success }
        let ended = try await blocking { callEnded.wait(timeout: .now() + 5) == .success }
        server.resume()
        #expect(returned, "the shutdown had not returned 20 s after its grace period began, the server hung")
        #expect(ended)
        #expect(callError.withLock { $0 } != nil)
        if !returned { try await blocking { _ = shutdownReturned.wait(timeout: .now() + 60) } }
    }

    /// A session whose setup the server never answers: PgBouncer, its one server
    /// connection held by another session's open transaction, completes the login itself
    /// and queues the new session's first statements (its SETs). Opening the connection
    /// ends at the connect timeout, saying so, instead of waiting for the server; once the
    /// server connection is free, the pool connects.
    @Test func aSessionWhoseSetupIsNeverAnsweredEndsAtTheConnectTimeout() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let name = try server.makeDatabaseName()
        let bouncer = try server.startPgBouncer(poolSize: 1)
        let url = "host=\(server.directory) port=\(bouncer) user=app dbname=\(name)"
        var pooling = PostgresConfiguration()
        pooling.transactionPooling = true
        let holder = try PostgresPool(url: url, configuration: pooling)
        defer { try? holder.close() }
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            try? holder.write { db in
                _ = try db.execute("SELECT 1")
                held.signal()
                // Released by the test, or after 20 s: a setup that waits for the server
                // then gets its answer, and the test fails rather than hangs.
                _ = release.wait(timeout: .now() + 20)
            }
        }.start()
        try await blocking { held.wait() }
        var configuration = PostgresConfiguration()
        configuration.connectTimeout = .seconds(1)
        let pool = try PostgresPool(url: url, configuration: configuration)
        defer { try? pool.close() }
        // Timed on the opening thread: resuming this test's task may wait for one of
        // Swift's threads, which a synchronous test elsewhere in the suite can hold for
        // seconds (it did, under Address Sanitizer: 9.8 s).
        let (error, took) = try await blocking { () -> (String?, Duration) in
            let started = ContinuousClock.now
            do {
                try pool.checkConnection()
                return (nil, ContinuousClock.now - started)
            } catch {
                return ("\(error)", ContinuousClock.now - started)
            }
        }
        // An `async` call opens its connection on a pool's thread. Cancelled while its
        // session's setup waits (the connect timeout 60 s), its caller is answered at once,
        // and the setup ends then too (its watch sees the call's stop), giving the slot
        // back, not at the holder's release (20 s) or the connect timeout.
        var patient = PostgresConfiguration()
        patient.connectTimeout = .seconds(60)
        let asyncPool = try PostgresPool(url: url, configuration: patient)
        defer { try? asyncPool.close() }
        let executor = OwnThreadTaskExecutor()
        defer { executor.finish() }
        let call = Task(executorPreference: executor) { try await asyncPool.read { _ in } }
        var opening = false
        for _ in 0..<400 where !opening {
            try await Task.sleep(for: .milliseconds(25))
            opening = asyncPool.statistics.connectionsInUse == 1 && asyncPool.statistics.connectionsOpen == 0
        }
        #expect(opening)
        try await Task.sleep(for: .milliseconds(300))  // in its setup by now
        call.cancel()
        // Timed on a thread of its own (not across an `await` on Swift's cooperative
        // threads, which other tests' blocking work may hold for seconds).
        let freed = StartedThread { () -> Duration in
            let start = ContinuousClock.now
            while asyncPool.statistics.connectionsInUse > 0, ContinuousClock.now - start < .seconds(60) {
                usleep(20_000)
            }
            return ContinuousClock.now - start
        }
        let busyFor = try await blocking { try freed.result() }
        await #expect(throws: CancellationError.self) { try await call.value }
        release.signal()
        #expect(error?.contains("did not finish setting up the session") == true, "\(String(describing: error))")
        #expect(took < .seconds(9), "opening the connection ended after \(took)")
        // The bug held the slot until the holder's release (20 s).
        #expect(busyFor < .seconds(10), "the cancelled call's setup held its slot \(busyFor)")
        try await blocking { try pool.checkConnection() }
        try await asyncPool.read { _ in }
    }

    /// A stream whose time limit passes while its server hangs and its loop is busy with
    /// rows (not waiting for more): the loop's next request for rows throws only once the
    /// stream has ended, its connection given up on after the grace period, and the error
    /// says so. Thrown any earlier, the pool would still hold the stream's connection and
    /// the error would say "rolled back", which nothing was.
    @Test func aStreamPastItsLimitOnAHungServerThrowsOnceItsConnectionIsGivenUp() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let database = try server.makeDatabaseName()
        var configuration = PostgresConfiguration()
        configuration.maximumConnections = 1
        configuration.stopGracePeriod = .seconds(3)
        let pool = try PostgresPool(url: server.connectionString(database: database), configuration: configuration)
        defer { try? pool.close() }
        try pool.checkConnection()
        var inUseWhenThrown = -1
        let thrown = await #expect(throws: DALError.self) {
            // A limit far longer than the first row takes, even under a loaded machine's
            // sanitizers: it passes in the pause below.
            try await withDatabaseTimeout(.seconds(2)) {
                var iterator = pool.stream("SELECT x FROM generate_series(1, 100000) x").makeAsyncIterator()
                _ = try await iterator.next()
                server.pause()
                // The limit passes here; the loop asks again ~2.4 s before the grace period ends.
                try await Task.sleep(for: .milliseconds(2600))
                defer { inUseWhenThrown = pool.statistics.connectionsInUse }
                while try await iterator.next() != nil {}
            }
        }
        server.resume()
        #expect(inUseWhenThrown == 0)
        #expect(thrown?.code == .timeout)
        #expect(thrown?.message.contains("connection was closed") == true, "\(String(describing: thrown))")
        // The server, resumed, ends the abandoned session's read transaction.
        try await noSessionLeftInATransaction(on: server, in: database)
        #expect(try await pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } == 1)
    }

    /// A batch under way when its server hangs: a pipelined `insertRange` waiting for its
    /// results, a `bulkInsert` whose `COPY` data has filled the socket (the client blocked
    /// writing it). Cancelling the call still ends it, within the grace period for the
    /// cancel request the hung server cannot answer; the server, resumed, has none of it
    /// and no session left in a transaction.
    @Test(arguments: ["insertRange", "bulkInsert"])
    func aBatchToAServerThatHangsEndsWhenCancelled(_ method: String) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let database = try server.makeDatabaseName()
        try server.psql(
            """
            CREATE TABLE items(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name TEXT NOT NULL);
            CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql
                AS $$ BEGIN PERFORM pg_sleep(0.002); RETURN NEW; END $$;
            CREATE TRIGGER slow BEFORE INSERT ON items FOR EACH ROW EXECUTE FUNCTION slow_insert();
            """, database: database)
        let pool = try PostgresPool(url: server.connectionString(database: database))
        defer { try? pool.close() }
        try pool.checkConnection()
        let items = BaseDAL<HungItem>(database: pool)
        // Some 8 MB of rows: far more than the socket buffers hold.
        let rows = (0..<20_000).map { HungItem(name: "hung \($0) " + String(repeating: "x", count: 400)) }
        let batch = Task {
            _ = method == "bulkInsert" ? try await items.bulkInsert(rows) : try await items.insertRange(rows)
        }
        // Paused once the batch's rows are being inserted (seen from outside), then the
        // call is cancelled; no time limit races the setup on a slow machine.
        try await blocking {
            try waitUntil {
                let active = try? server.psql(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' "
                        + "AND (query LIKE 'INSERT%' OR query LIKE 'COPY%')", database: database)
                return active?.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
            server.pause()
        }
        let cancelledAt = ContinuousClock.now
        batch.cancel()
        let outcome = await batch.result
        let took = ContinuousClock.now - cancelledAt
        server.resume()
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(took < .seconds(20), "the batch to the hung server ended \(took) after its cancel")
        try await noSessionLeftInATransaction(on: server, in: database)
        let stored = try server.psql("SELECT count(*) FROM items", database: database)
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
