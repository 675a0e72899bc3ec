import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// A server that accepts connections and never answers (SIGSTOP): every wait has a deadline.
/// Each test starts a server of its own (the shared one must keep answering).
@Suite(.serialized) struct MariaDBHungServerTests {
    private func configuration() -> MariaDBConfiguration {
        var configuration = MariaDBConfiguration()
        configuration.callTimeout = .seconds(1)
        configuration.stopGracePeriod = .milliseconds(500)
        configuration.connectTimeout = .seconds(2)
        configuration.readTimeout = .seconds(20)
        configuration.maximumConnections = 2
        return configuration
    }

    /// Opening a connection to a server that accepts it and never greets: the call's time
    /// limit (1 s) bounds the wait, not the connect timeout (15 s here). Before, Connector/C
    /// waited out the connect timeout.
    @Test func openingAConnectionToAHungServerEndsAtTheCallsTimeLimit() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        let url = try server.makeDatabase()
        var configuration = configuration()
        configuration.connectTimeout = .seconds(15)
        server.pause()
        defer { server.resume() }
        let start = ContinuousClock.now
        #expect(throws: (any Error).self) {
            let pool = try MariaDBPool(url: url, configuration: configuration)
            defer { try? pool.close() }
            try pool.checkConnection()
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(10), "opening a connection to the hung server ended after \(elapsed)")
    }

    /// An `async` call's limit bounds the connection it opens too, though its task's
    /// limit cannot be read on the pool's thread and Connector/C's connect cannot be
    /// interrupted: the connect gets the time its control has left.
    @Test func anAsyncCallOpeningAConnectionToAHungServerEndsAtItsTimeLimit() async throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        let url = try server.makeDatabase()
        var configuration = configuration()
        configuration.connectTimeout = .seconds(30)
        configuration.callTimeout = nil
        let pool = try MariaDBPool(url: url, configuration: configuration)
        defer { try? pool.close() }
        server.pause()
        defer { server.resume() }
        // Timed on a thread of its own: across an `await` on Swift's cooperative threads,
        // which other tests' blocking work may hold, the end would show seconds late.
        let (result, elapsed) = await timedOnItsOwnThread {
            try await withDatabaseTimeout(.seconds(1)) {
                try await pool.read { try $0.fetchScalar(Int.self, "SELECT 1") }
            }
        }
        let error = #expect(throws: DALError.self) { try result.get() }
        #expect(error?.code == .timeout)
        // The caller is answered at the limit (a stop while the connection opens answers at
        // once); the bug waited out the connect timeout (30 s).
        #expect(elapsed < .seconds(10), "opening a connection to the hung server ended after \(elapsed)")
        // And the connect itself, on the pool's thread, ends with the time its call had left
        // (about 1 s: Connector/C counts whole seconds), giving its slot back, not at the
        // connect timeout.
        let freed = StartedThread { () -> Duration in
            let start = ContinuousClock.now
            while pool.statistics.connectionsInUse > 0, ContinuousClock.now - start < .seconds(60) { usleep(20_000) }
            return ContinuousClock.now - start
        }
        let busyFor = try freed.result()
        #expect(busyFor < .seconds(15), "the connect held its slot \(busyFor) after the call ended")
    }

    /// An `async` call cancelled while its connection to a hung server opens is answered
    /// at once: Connector/C's connect cannot be interrupted and goes on to the connect
    /// timeout (30 s here) on the pool's thread, but its caller waits for it no longer.
    @Test func anAsyncCallCancelledWhileItsConnectionOpensEndsAtOnce() async throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        var configuration = configuration()
        configuration.connectTimeout = .seconds(30)
        configuration.callTimeout = nil
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration)
        defer { try? pool.close() }
        server.pause()
        defer { server.resume() }
        // The call's task and its end are timed on a thread of their own (see
        // `timedOnItsOwnThread`).
        let executor = OwnThreadTaskExecutor()
        defer { executor.finish() }
        let call = Task(executorPreference: executor) { () async -> (threw: Bool, endedAt: ContinuousClock.Instant) in
            let threw = (try? await pool.read { try $0.fetchScalar(Int.self, "SELECT 1") }) == nil
            return (threw, ContinuousClock.now)
        }
        // Cancelled once its connection is opening: a slot in use, no connection open.
        var opening = false
        for _ in 0..<400 where !opening {
            try await Task.sleep(for: .milliseconds(25))
            opening = pool.statistics.connectionsInUse == 1 && pool.statistics.connectionsOpen == 0
        }
        #expect(opening)
        try await Task.sleep(for: .milliseconds(300))
        let cancelledAt = ContinuousClock.now
        call.cancel()
        let (threw, endedAt) = await call.value
        #expect(threw)
        // At once with the fix; the bug waited out the connect timeout (30 s).
        #expect(endedAt - cancelledAt < .seconds(10), "the call ended \(endedAt - cancelledAt) after its cancel")
    }

    /// A call that waited in line for most of its limit, then opens a connection to a
    /// hung server: the connect gets what is left of the limit, not the whole limit again
    /// (it once did: the limit counted from the end of the wait).
    @Test func aCallThatWaitedInLineOpensItsConnectionWithinWhatIsLeftOfItsLimit() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        var configuration = configuration()
        configuration.maximumConnections = 1
        configuration.callTimeout = .seconds(10)
        configuration.connectTimeout = .seconds(30)
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration)
        defer { try? pool.close() }
        defer { server.resume() }
        // The pool's only connection is held 7 s; its session is ended from outside
        // meanwhile, and the server frozen at the end: the call waiting in line gets the
        // slot with 3 s of its limit left, and must open a connection to the hung server.
        let holding = DispatchSemaphore(value: 0)
        let holder = StartedThread {
            try pool.reentrantRead { db in
                let id = try db.fetchScalar(Int.self, "SELECT CONNECTION_ID()") ?? 0
                holding.signal()
                _ = try server.sql("KILL \(id)")
                usleep(7_000_000)
                server.pause()
            }
        }
        #expect(holding.wait(timeout: .now() + 60) == .success)
        let waiter = StartedThread { () -> (error: String?, elapsed: Duration) in
            let start = ContinuousClock.now
            do {
                _ = try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") }
                return (nil, ContinuousClock.now - start)
            } catch let error as DALError where error.code == .timeout {
                return ("timeout", ContinuousClock.now - start)
            } catch {
                return ("\(error)", ContinuousClock.now - start)
            }
        }
        try holder.result()
        let (error, elapsed) = try waiter.result()
        // The call's time-out, not the connect's error ("lost connection": the server is
        // not known to be down).
        #expect(error == "timeout")
        // 10 s with the fix; the bug took 7 s in line, then the whole 10 s again to connect.
        #expect(elapsed < .milliseconds(13500), "the call ended after \(elapsed)")
    }

    /// A stop's `KILL QUERY` names the session by id, which names one session only within
    /// one run of one server. Here the pool's address (a symlinked socket) leads to another
    /// server by the time of the stop, as after a failover behind a virtual address, and a
    /// session there has the same id: it is not killed (nor by the reaper after), as the
    /// server reached is not the run the session belongs to.
    @Test func aStopAfterTheAddressMovedKillsNoSessionOfAnotherServer() throws {
        let first = try MariaDBServer.start()
        defer { first.stop() }
        let second = try MariaDBServer.start()
        defer { second.stop() }
        let directory = try TemporaryDirectory()
        let link = directory.file("m.sock")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: first.socketPath)
        func lastID(_ server: MariaDBServer) throws -> Int {
            Int(try server.sql("SELECT CONNECTION_ID()").trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max
        }
        func sleepers() throws -> [Int] {
            try second.sql("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP%'")
                .split(whereSeparator: \.isNewline).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        let database = try first.makeDatabaseName()
        var configuration = configuration()
        configuration.stopGracePeriod = .seconds(2)
        configuration.maximumConnections = 1
        // The pool's session on the first server, then a sleeping session of the same id on
        // the second. The ids are lined up by opening sessions one after the other; a server
        // can give an id to a thread of its own in between, so a pair whose ids differ is
        // given up and made again (five times at most).
        var matched: (pool: MariaDBPool, id: Int, innocent: StartedThread<String>)?
        for _ in 0..<5 where matched == nil {
            // The pool's session on the first server gets an id the second has not given yet.
            let secondLast = try lastID(second)
            while try lastID(first) < secondLast + 3 {}
            let pool = try MariaDBPool(
                url: "mysql://root@localhost/\(database)?socket=\(link)", configuration: configuration)
            let id = try #require(try pool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") })
            while try lastID(second) < id - 1 {}
            let innocent = StartedThread { try second.sql("SELECT SLEEP(30)") }
            var sleeping: [Int] = []
            for _ in 0..<200 where sleeping.isEmpty {
                usleep(25_000)
                sleeping = try sleepers()
            }
            if sleeping == [id] {
                matched = (pool, id, innocent)
            } else {
                for other in sleeping { _ = try? second.sql("KILL \(other)") }
                _ = try? innocent.result()
                try? pool.close()
            }
        }
        let (pool, id, innocent) = try #require(
            matched, "in five tries, no session of the second server got the pool's session id")
        defer { try? pool.close() }
        defer { _ = try? innocent.result() }
        defer { _ = try? second.sql("KILL \(id)") }
        func sleeping() throws -> Int { try sleepers().filter { $0 == id }.count }
        // The address now leads to the second server, and the first hangs.
        let moved = directory.file("moved.sock")
        try FileManager.default.createSymbolicLink(atPath: moved, withDestinationPath: second.socketPath)
        #expect(rename(moved, link) == 0)
        first.pause()
        defer { first.resume() }
        #expect(throws: (any Error).self) { try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } }
        // The stop's kill (sent at the limit, 1 s) and the reaper's first round (at the
        // grace period's end) reached the second server well before now.
        usleep(1_000_000)
        #expect(try sleeping() == 1, "the second server's session \(id) was killed")
    }

    @Test func aStatementSentToAHungServerEndsWithItsCall() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration())
        defer { try? pool.close() }
        try pool.checkConnection()
        server.pause()
        let start = ContinuousClock.now
        #expect(throws: (any Error).self) { try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } }
        let elapsed = ContinuousClock.now - start
        // The call's limit, then the grace period for KILL QUERY, then the socket is shut down.
        #expect(elapsed < .seconds(5), "ended after \(elapsed)")
        server.resume()
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } == 1)
    }

    /// A statement to a hung server ends at its limit plus the grace period: its
    /// connection is given up on then, and the KILL QUERY still on its way to the server
    /// (its connection waits for a greeting up to the connect timeout) is not waited for a
    /// second grace period (it once was: limit + 2 × grace).
    @Test func aStatementToAHungServerEndsAtItsLimitPlusOneGracePeriod() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        var configuration = configuration()
        configuration.stopGracePeriod = .seconds(5)
        configuration.connectTimeout = .seconds(30)
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration)
        defer { try? pool.close() }
        try pool.checkConnection()
        server.pause()
        defer { server.resume() }
        let start = ContinuousClock.now
        #expect(throws: (any Error).self) { try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } }
        let elapsed = ContinuousClock.now - start
        // 1 s + 5 s; the bug took 1 s + 10 s (margins of 2.5 s either way).
        #expect(elapsed < .milliseconds(8500), "ended after \(elapsed)")
    }

    /// A statement the client gives up on at its read timeout (no call time limit) may
    /// still run on the server, holding its transaction's locks: here an update waiting on
    /// a row lock another session holds (a lock wait, unlike `SLEEP`, never notices that the
    /// client went away). Its session is ended on the server (looked at from outside), not
    /// left to wait out `innodb_lock_wait_timeout`.
    @Test func aSessionGivenUpOnAtTheReadTimeoutIsEndedOnTheServer() throws {
        let server = try MariaDBServer.start(options: ["--innodb-lock-wait-timeout=600"])
        defer { server.stop() }
        let url = server.url(database: try server.makeDatabaseName())
        var settings = configuration()
        settings.callTimeout = nil
        settings.readTimeout = .seconds(2)
        let pool = try MariaDBPool(url: url, configuration: settings)
        defer { try? pool.close() }
        settings.readTimeout = .seconds(20)
        let holderPool = try MariaDBPool(url: url, configuration: settings)
        defer { try? holderPool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY, v INT NOT NULL)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 0)")
        }
        let (holder, done) = try holdingLocks(holderPool, "UPDATE t SET v = 1 WHERE id = 1")
        defer {
            done.signal()
            _ = try? holder.result()
        }
        let victim = Locked<Int?>(nil)
        let error = #expect(throws: MariaDBError.self) {
            try pool.write { db in
                victim.withLock { $0 = try? db.fetchScalar(Int.self, "SELECT CONNECTION_ID()") }
                try db.execute(sql: "UPDATE t SET v = 2 WHERE id = 1")  // waits on the holder
            }
        }
        #expect(error?.isConnectionFailure == true)
        let id = try #require(victim.withLock { $0 })
        let gone = waitFor(attempts: 200, pause: 100_000) {
            (try? server.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = \(id)"))?
                .hasPrefix("0") == true
        }
        #expect(gone, "session \(id) still waits on the server 20 s after the client gave up on it")
    }

    @Test func connectingToAHungServerEndsAtTheConnectTimeout() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        var configuration = configuration()
        configuration.callTimeout = nil
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration)
        defer { try? pool.close() }
        server.pause()
        defer { server.resume() }
        let start = ContinuousClock.now
        let error = #expect(throws: MariaDBError.self) { try pool.checkConnection() }
        let elapsed = ContinuousClock.now - start
        #expect(error?.isConnectionFailure == true)
        #expect(elapsed < .seconds(8), "ended after \(elapsed)")
    }
}

extension MariaDBHungServerTests {
    /// A COMMIT sent to a server that stops answering: whether it committed is unknown,
    /// and the error says so (never a plain failure a caller would retry blindly).
    @Test func aCommitLostInFlightIsAnUnknownOutcome() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration())
        defer { try? pool.close() }
        try pool.write { try $0.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY)") }
        let error = #expect(throws: DALError.self) {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                server.pause()  // the COMMIT that follows gets no answer
            }
        }
        server.resume()
        #expect(error?.code == .outcomeUnknown, "\(String(describing: error))")
    }
}

extension MariaDBHungServerTests {
    /// A call stopped while its server hung: the `KILL QUERY` cannot reach the server, the
    /// grace period passes and the socket is shut down. MariaDB does not notice a client
    /// gone while a statement waits on a lock, so the session would keep its transaction's
    /// locks once the server goes on: the pool ends it (`KILL CONNECTION`, tried until the
    /// server answers). Seen from outside: the session leaves the process list, and the row
    /// it had locked is free at once, without its change.
    @Test func aSessionGivenUpOnWhileItWaitsOnALockIsEndedOnTheServer() throws {
        let server = try MariaDBServer.start(options: ["--innodb-lock-wait-timeout=600"])
        defer { server.stop() }
        let database = try server.makeDatabaseName()
        let url = server.url(database: database)
        var settings = configuration()
        settings.callTimeout = .seconds(5)
        settings.connectTimeout = .seconds(1)
        let pool = try MariaDBPool(url: url, configuration: settings)
        defer { try? pool.close() }
        settings.callTimeout = nil
        let holderPool = try MariaDBPool(url: url, configuration: settings)
        defer { try? holderPool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY, v INT NOT NULL)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 0), (2, 0)")
        }
        // Row 1 stays locked by another session for the whole test.
        let (holder, done) = try holdingLocks(holderPool, "UPDATE t SET v = 1 WHERE id = 1")
        defer {
            done.signal()
            _ = try? holder.result()
        }
        // The server stops once the victim waits on row 1 (seen from outside), before its
        // time limit fires.
        let waiting = "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"
        let pauser = StartedThread { () -> Bool in
            let seen = waitFor(attempts: 400, pause: 10_000) { (try? server.sql(waiting))?.hasPrefix("1") == true }
            if seen { server.pause() }
            return seen
        }
        let victim = Locked<Int?>(nil)
        let error = #expect(throws: (any Error).self) {
            try pool.write { db in
                victim.withLock { $0 = try? db.fetchScalar(Int.self, "SELECT CONNECTION_ID()") }
                try db.execute(sql: "UPDATE t SET v = 2 WHERE id = 2")
                try db.execute(sql: "UPDATE t SET v = 2 WHERE id = 1")  // waits on the holder
            }
        }
        try #require(try pauser.result(), "the victim was never seen waiting on the lock")
        // Given up on, not stopped by KILL QUERY: the server was stopped all along, so the
        // error does not say "rolled back" (nothing was, yet).
        let timeout = try #require(error as? DALError, "\(String(describing: error))")
        #expect(timeout.code == .timeout)
        #expect(timeout.message.contains("connection was closed"), "\(timeout)")
        #expect(!timeout.message.contains("rolled back)"), "\(timeout)")
        // The server goes on once the kill's connection attempt has given up (connect timeout 1 s).
        usleep(2_500_000)
        server.resume()
        let id = try #require(victim.withLock { $0 })
        let ended = try waitFor(attempts: 300, pause: 100_000) {
            try server.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = \(id)").hasPrefix("0")
        }
        #expect(ended, "session \(id) still runs on the server")
        // Row 2 is free at once, and holds nothing of the victim's.
        try server.sql("SET SESSION innodb_lock_wait_timeout = 1; UPDATE t SET v = 10 WHERE id = 2", database: database)
        #expect(try server.sql("SELECT v FROM t WHERE id = 2", database: database) == "10\n")
    }
}
