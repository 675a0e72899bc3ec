import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Synchronization
import Testing

/// The most calls of a set seen running at once, counted by the calls themselves.
private final class ConcurrencyCounter: Sendable {
    private let running = Atomic<Int>(0)
    private let peakSeen = Atomic<Int>(0)

    func run<T>(_ body: () throws -> T) rethrows -> T {
        let now = running.add(1, ordering: .relaxed).newValue
        var peak = peakSeen.load(ordering: .relaxed)
        while now > peak {
            let (exchanged, original) = peakSeen.compareExchange(expected: peak, desired: now, ordering: .relaxed)
            if exchanged { break }
            peak = original
        }
        defer { running.subtract(1, ordering: .relaxed) }
        return try body()
    }

    var peak: Int { peakSeen.load(ordering: .relaxed) }
}

/// Whether `database` refuses new calls.
private func isClosing(_ database: any DatabaseWriter) -> Bool {
    switch database {
    case let pool as DatabasePool: pool.refusesNewCalls
    case let pool as PostgresPool: pool.refusesNewCalls
    case let pool as MariaDBPool: pool.refusesNewCalls
    default: false
    }
}

/// Shuts `database`'s pool down (`shutdown(gracePeriod:)`), whichever engine's it is.
private func shutDown(_ database: any DatabaseWriter, gracePeriod: Duration) async {
    switch database {
    case let pool as DatabasePool: await pool.shutdown(gracePeriod: gracePeriod)
    case let pool as PostgresPool: await pool.shutdown(gracePeriod: gracePeriod)
    case let pool as MariaDBPool: await pool.shutdown(gracePeriod: gracePeriod)
    default: Issue.record("unexpected database \(database)")
    }
}

/// A pool of `connections` read connections of `engine` (the SQLite pool's readers), and
/// what makes a read of it last about `seconds` on its connection (`pg_sleep` on
/// PostgreSQL, `SLEEP` on MariaDB; a CPU-bound recursive query under a time limit on SQLite).
private struct SlowReads: @unchecked Sendable {
    let database: any DatabaseWriter
    let engine: Engine
    private let directory: TemporaryDirectory?
    /// MariaDB: the database's name on the shared server.
    let mariaDBName: String?

    init(_ engine: Engine, connections: Int) throws {
        self.engine = engine
        switch engine {
        case .sqlite:
            let directory = try TemporaryDirectory()
            self.directory = directory
            mariaDBName = nil
            var configuration = Configuration()
            configuration.maximumReaderCount = connections
            database = try DatabasePool(path: directory.file("load.sqlite"), configuration: configuration)
        case .postgres:
            directory = nil
            var configuration = PostgresConfiguration()
            configuration.maximumConnections = connections
            configuration.acquireTimeout = .seconds(300)  // callers wait in line as long as a test holds them
            database = try makePostgresPool(configuration)
            mariaDBName = nil
        case .mariadb:
            directory = nil
            var configuration = MariaDBConfiguration()
            configuration.maximumConnections = connections
            configuration.acquireTimeout = .seconds(300)
            let (name, url) = try SharedMariaDB.makeDatabase()
            mariaDBName = name
            database = try MariaDBPool(url: url, configuration: configuration)
        }
    }

    /// Keeps `db` busy for about `seconds` (on a server: in the server, sleeping).
    func occupy(_ db: Database, seconds: Double) throws {
        switch engine {
        case .postgres: try db.execute("SELECT pg_sleep(\(seconds))")
        case .mariadb: try db.execute("SELECT SLEEP(\(seconds))")
        case .sqlite: Thread.sleep(forTimeInterval: seconds)
        }
    }

    /// How many sessions of this database's server are running a sleep now, asked of the
    /// server from outside the pool (`nil` on SQLite).
    func sessionsSleeping() throws -> Int? {
        switch engine {
        case .sqlite: return nil
        case .postgres:
            guard let pool = database as? PostgresPool else { return nil }
            let name = pool.name.split(separator: "dbname=").last.map(String.init) ?? ""
            let printed = try OutsideView.of(pool).server.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(name)' AND query LIKE "
                    + "'%pg_sleep%' AND state = 'active' AND pid <> pg_backend_pid()")
            return Int(printed.trimmingCharacters(in: .whitespacesAndNewlines))
        case .mariadb:
            let printed = try SharedMariaDB.shared().sql(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '\(mariaDBName ?? "")' "
                    + "AND INFO LIKE 'SELECT SLEEP(%' AND ID <> CONNECTION_ID()")
            return Int(printed.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// The rows of `table`, counted from outside the pool: another connection of the
    /// SQLite file, `psql`, the `mariadb` client.
    func rowsOutside(_ table: String) throws -> Int? {
        switch engine {
        case .sqlite:
            guard let directory else { return nil }
            let queue = try DatabaseQueue(path: directory.file("load.sqlite"))
            defer { try? queue.close() }
            return try queue.read { db in try db.fetchScalar(Int.self, SQL(sql: "SELECT COUNT(*) FROM " + table)) }
        case .postgres:
            guard let pool = database as? PostgresPool else { return nil }
            let printed = try OutsideView.of(pool).psql("SELECT count(*) FROM \(table)")
            return Int(printed.trimmingCharacters(in: .whitespacesAndNewlines))
        case .mariadb:
            let printed = try SharedMariaDB.shared().sql("SELECT COUNT(*) FROM `\(mariaDBName ?? "")`.\(table)")
            return Int(printed.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// The sessions the pool holds open on the server, asked from outside it (`nil` on SQLite).
    func sessionsOpen() throws -> Int? {
        switch engine {
        case .sqlite: return nil
        case .postgres:
            guard let pool = database as? PostgresPool else { return nil }
            return try OutsideView.of(pool).sessionStates().count
        case .mariadb:
            let printed = try SharedMariaDB.shared().sql(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '\(mariaDBName ?? "")' "
                    + "AND ID <> CONNECTION_ID()")
            return Int(printed.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}

/// `--url` and a fresh database of the shared server of `engine`, for `swiftdal-probe`.
private func probeURL(_ engine: Engine) throws -> [String] {
    switch engine {
    case .sqlite: []
    case .postgres: ["--url", try SharedPostgres.makeDatabase()]
    case .mariadb: ["--url", try SharedMariaDB.makeDatabase().url]
    }
}

@Suite struct ServiceLoadTests {
    /// N concurrent async calls on a pool of P connections keep min(N, P) connections busy,
    /// on any number of cores (this machine has two): the calls count themselves, and on
    /// PostgreSQL the server is asked how many sessions run the query at once.
    @Test(arguments: Engine.allCases)
    func concurrentAsyncCallsKeepEveryConnectionOfThePoolBusy(_ engine: Engine) async throws {
        let pool = 6
        let reads = try SlowReads(engine, connections: pool)
        defer { try? reads.database.close() }
        let counter = ConcurrencyCounter()
        let serverPeak = Locked(0)
        let sampling = Locked(true)
        // Sampled from a thread of its own (the test process's cooperative threads are
        // shared with the other tests).
        let sampler = Task {
            try await blocking {
                guard engine.isServer else { return }
                while sampling.withLock({ $0 }) {
                    let count = (try? reads.sessionsSleeping()).flatMap { $0 } ?? 0
                    serverPeak.withLock { $0 = max($0, count) }
                    usleep(50_000)
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<(pool * 2) {
                group.addTask {
                    try await reads.database.read { db in try counter.run { try reads.occupy(db, seconds: 2) } }
                }
            }
            try await group.waitForAll()
        }
        sampling.withLock { $0 = false }
        try await sampler.value
        #expect(counter.peak == pool)
        if engine.isServer { #expect(serverPeak.withLock { $0 } == pool) }
    }

    /// A call waiting for a connection holds no thread: with every connection held, two
    /// thousand waiting async calls (readers, and SQLite's writer) add no thread to the
    /// process, then all complete. Measured in a process of its own (`swiftdal-probe`):
    /// this one runs other tests beside it.
    @Test(arguments: Engine.allCases)
    func thousandsOfWaitingCallsCostNoThreads(_ engine: Engine) async throws {
        let arguments = ["waiters", "--engine", engine.rawValue] + (try probeURL(engine))
        let result = try await runProbe(arguments)
        #expect(result["callers_waiting"] == 2_000)
        #expect(result["completed"] == 2_000)
        let before = result["threads_before"] ?? 0
        let waiting = result["threads_waiting"] ?? .max
        #expect(waiting <= before + 2, "threads: \(before) before, \(waiting) with 2,000 calls waiting")
    }

    /// Swift's own threads are never held by database work: a task ticking every 10 ms
    /// keeps its pace while the pool is saturated with slow queries (CPU-bound ones on
    /// SQLite), more of them waiting. Measured in a process of its own (`swiftdal-probe`),
    /// with a wide margin (the machine is shared).
    @Test(arguments: Engine.allCases)
    func aTickerKeepsItsPaceWhileThePoolIsSaturated(_ engine: Engine) async throws {
        let arguments = ["ticker", "--engine", engine.rawValue] + (try probeURL(engine))
        let result = try await runProbe(arguments)
        #expect(result["reads_completed"] == 8)
        let gap = result["longest_gap_ms"] ?? .max
        #expect(gap < 500, "the ticker waited \(gap) ms between two wake-ups")
    }

    /// A service's shutdown: `shutdown(gracePeriod:)` refuses new calls at once with a
    /// typed error, lets the calls in flight and in line finish, then closes every
    /// connection (on PostgreSQL the server shows no session left).
    @Test(arguments: Engine.allCases)
    func shutdownRefusesNewCallsAndLetsCallsInFlightFinish(_ engine: Engine) async throws {
        let reads = try SlowReads(engine, connections: 2)
        let database = reads.database
        // Two calls hold the connections until released, two wait in line behind them.
        let release = Locked(false)
        let inFlight = (0..<4).map { _ in
            Task {
                try await database.read { db in
                    try reads.occupy(db, seconds: 0.05)
                    while !release.withLock({ $0 }) { usleep(1000) }
                }
            }
        }
        try await eventually { database.statistics.connectionsInUse == 2 && database.statistics.callersWaiting == 2 }
        let shutdown = Task { await shutDown(database, gracePeriod: .seconds(30)) }
        try await eventually { isClosing(database) }
        #expect(database.statistics.callersWaiting == 2)
        let refused = await #expect(throws: DALError.self) {
            try await database.read { db in try db.fetchScalar(Int.self, "SELECT 1") }
        }
        #expect(refused?.code == .connectionClosed)
        release.withLock { $0 = true }
        for call in inFlight { try await call.value }  // every call in flight or in line finished
        await shutdown.value
        #expect(database.statistics.connectionsOpen == 0)
        if engine.isServer { #expect(try reads.sessionsOpen() == 0) }
    }

    /// A shutdown refuses a new blocking call as it does an `async` one, also while a
    /// connection is free: one call holds one of the pool's two connections, and a
    /// synchronous read made during the grace period is refused without running.
    @Test(arguments: Engine.allCases)
    func shutdownRefusesABlockingCallWhileAConnectionIsFree(_ engine: Engine) async throws {
        let reads = try SlowReads(engine, connections: 2)
        let database = reads.database
        let release = Locked(false)
        let inFlight = Task {
            try await database.read { _ in
                while !release.withLock({ $0 }) { usleep(1000) }
            }
        }
        try await eventually { database.statistics.connectionsInUse == 1 }
        let shutdown = Task { await shutDown(database, gracePeriod: .seconds(30)) }
        try await eventually { isClosing(database) }
        let ran = Locked(false)
        let blocking = StartedThread { () throws -> Int? in
            try database.read { db in
                ran.withLock { $0 = true }
                return try db.fetchScalar(Int.self, "SELECT 1")
            }
        }
        let refused = #expect(throws: DALError.self) { _ = try blocking.result() }
        #expect(refused?.code == .connectionClosed, "\(String(describing: refused))")
        #expect(!ran.withLock { $0 })
        release.withLock { $0 = true }
        try await inFlight.value
        await shutdown.value
        #expect(database.statistics.connectionsOpen == 0)
        if engine.isServer { #expect(try reads.sessionsOpen() == 0) }
    }

    /// A call still running when a shutdown's grace period ends is stopped, and says the
    /// shutdown stopped it: ``DALError/Code/connectionClosed``, 503 (not the 499 of a
    /// client that went away). Its transaction is rolled back, checked from outside the
    /// pool: its row is not there, and on a server no session is left.
    @Test(arguments: Engine.allCases)
    func aCallRunningWhenTheGracePeriodEndsIsStoppedAsAShutdown(_ engine: Engine) async throws {
        let reads = try SlowReads(engine, connections: 1)
        let database = reads.database
        try await database.write { db in try db.execute("CREATE TABLE marks(id INTEGER PRIMARY KEY)") }
        let wrote = DispatchSemaphore(value: 0)
        let call = Task {
            try await database.write { db in
                try db.execute("INSERT INTO marks(id) VALUES (1)")
                wrote.signal()
                // Runs until stopped (SQLite: statement after statement, each interruptible).
                let end = ContinuousClock.now.advanced(by: .seconds(120))
                while ContinuousClock.now < end { try reads.occupy(db, seconds: engine.isServer ? 120 : 0.005) }
            }
        }
        try await eventually { wrote.wait(timeout: .now()) == .success }
        if engine.isServer { try await eventually { try reads.sessionsSleeping() == 1 } }
        await shutDown(database, gracePeriod: .milliseconds(200))
        let error = await #expect(throws: DALError.self) { try await call.value }
        #expect(error?.code == .connectionClosed)
        #expect(error?.message.contains("shut down") == true, "\(String(describing: error))")
        #expect(error?.message.contains("rolled back") == true, "\(String(describing: error))")
        #expect(error.map { httpStatus(for: $0) } == 503)
        #expect(try reads.rowsOutside("marks") == 0)
        if engine.isServer { #expect(try reads.sessionsOpen() == 0) }
    }
}
