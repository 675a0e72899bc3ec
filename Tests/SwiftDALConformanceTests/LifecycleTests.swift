import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// A request's lifecycle on every engine: cancellation and time limits stop the running
/// SQL, roll its transaction back, and leave the connection clean for the next call.
/// Holds a connection of `database` on a thread of its own until `release` is called.
private final class HeldConnection: @unchecked Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)

    init(_ database: any DatabaseWriter, writing: Bool) {
        Thread { [entered, released, ended] in
            if writing {
                _ = try? database.write { _ in
                    entered.signal()
                    released.wait()
                }
            } else {
                _ = try? database.read { _ in
                    entered.signal()
                    released.wait()
                }
            }
            ended.signal()
        }.start()
        entered.wait()
    }

    func release() {
        released.signal()
        ended.wait()
    }
}

@Suite struct LifecycleTests {
    /// A call waiting for a connection another call holds waits under its own control:
    /// its time limit and its task's cancellation end the wait (the holder still holding),
    /// for a reader, the writer, a queue's connection and a PostgreSQL connection.
    @Test(arguments: Engine.allCases)
    func aCallWaitingForAConnectionStopsAtItsTimeLimitOrWhenCancelled(_ engine: Engine) async throws {
        var (sqlite, postgres, mariadb) = SampleDatabase.oneConnection
        // No bound on the wait for a connection that could end it before the test's
        // cancellation does, on a test process whose tasks wait for a cooperative thread.
        postgres.acquireTimeout = .seconds(600)
        mariadb.acquireTimeout = .seconds(600)
        let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        let users = sample.users
        let queue: DatabaseQueue? = engine == .sqlite ? try DatabaseQueue.inMemory() : nil
        var databases: [(any DatabaseWriter, Bool)] = [(sample.database, false), (sample.database, true)]
        if let queue { databases.append((queue, false)) }
        for (database, writing) in databases {
            let held = HeldConnection(database, writing: writing)
            let what = "\(engine) \(type(of: database)) \(writing ? "writer" : "reader")"
            let timedOut = #expect(throws: DALError.self, "\(what)") {
                try withDatabaseTimeout(.milliseconds(150)) {
                    if writing {
                        try database.write { db in try db.execute("SELECT 1") }
                    } else {
                        try database.read { db in _ = try db.fetchScalar(Int.self, "SELECT 1") }
                    }
                }
            }
            #expect(timedOut?.code == .timeout, "\(what)")
            let waiting = Task {
                if writing {
                    try await database.write { db in try db.fetchScalar(Int.self, "SELECT 1") }
                } else {
                    try await database.read { db in try db.fetchScalar(Int.self, "SELECT 1") }
                }
            }
            try await Task.sleep(for: .milliseconds(150))
            waiting.cancel()
            await #expect(throws: CancellationError.self, "\(what)") { _ = try await waiting.value }
            held.release()
            #expect(database.statistics.callersWaiting == 0)
            #expect(try await database.read { db in try db.fetchScalar(Int.self, "SELECT 1") } == 1)
        }
        // A stream holding the only reader (more rows than it reads ahead), and a call
        // inside its loop under a time limit: the call ends with .timeout instead of
        // waiting for the loop for ever.
        if engine == .sqlite {
            var inner: (any Error)?
            let manyRows: SQL =
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT x FROM c"
            for try await _ in sample.database.stream(manyRows) {
                do {
                    _ = try await withDatabaseTimeout(.milliseconds(150)) { try await users.getRecordCount() }
                } catch {
                    inner = error
                }
                break
            }
            #expect((inner as? DALError)?.code == .timeout)
        }
        #expect(try await users.getRecordCount() == 8)
        try queue?.close()
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func cancellingTheAwaitingTaskStopsTheRunningStatement(_ engine: Engine) async throws {
        let sample = try SampleDatabase(engine)
        let query = endlessQuery(engine)
        let task = Task { try await sample.database.read { db in try db.fetchScalar(Int.self, query) } }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        // A DAL call too, and the connections are clean afterwards.
        let users = sample.users
        let search = Task { try await users.find(condition: "id IN (\(sql: query))") }
        try await Task.sleep(for: .milliseconds(300))
        search.cancel()
        await #expect(throws: CancellationError.self) { _ = try await search.value }
        for _ in 0..<10 {
            #expect(try await sample.users.getRecordCount() == 8)
        }
        try sample.close()
    }

    /// A task cancelled before it calls runs nothing: its call throws `CancellationError`
    /// at once, on Swift's threads and on a task executor of its own alike, and no row is
    /// written (witnessed by a count from another pool's connection).
    @Test(arguments: Engine.allCases)
    func aTaskCancelledBeforeItsCallRunsNothing(_ engine: Engine) async throws {
        let sample = try SampleDatabase(engine)
        let users = sample.users
        let executor = OwnThreadTaskExecutor()
        defer { executor.finish() }
        for preference in [nil, executor] as [OwnThreadTaskExecutor?] {
            let gate = DispatchSemaphore(value: 0)
            let task = Task(executorPreference: preference) { () async throws -> Int64 in
                gate.wait()  // cancelled by then
                return try await users.insert2(UserInfo(name: "late", email: "late@example.com", age: 1))
            }
            task.cancel()
            gate.signal()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
        #expect(try await sample.users.getRecordCount(condition: "name = \("late")") == 0)
        try sample.close()
    }

    /// The `async` time limit inside an actor's method (a service's request handler): it
    /// compiles there (its operation runs in the actor's isolation, touching its state),
    /// and it stops the call.
    @Test(arguments: Engine.allCases)
    func anAsyncTimeLimitWorksInsideAnActor(_ engine: Engine) async throws {
        let sample = try SampleDatabase(engine)
        let handler = TimedHandler(users: sample.users, query: endlessQuery(engine))
        let error = await #expect(throws: DALError.self) { try await handler.endlessCount() }
        #expect(error?.code == .timeout)
        #expect(await handler.calls == 2)
        #expect(try await sample.users.getRecordCount() == 8)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aTimeLimitStopsTheCallAndRollsItsTransactionBack(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let query = endlessQuery(engine)
        let error = #expect(throws: DALError.self) {
            try withDatabaseTimeout(.milliseconds(300)) {
                try sample.database.write { db in
                    try sample.users.insert(UserInfo(name: "late", email: "late@example.com", age: 1))
                    _ = try db.fetchScalar(Int.self, query)
                }
            }
        }
        #expect(error?.code == .timeout)
        #expect(try sample.users.findByEmail("late@example.com") == nil)
        // Calls within their limit are untouched, and the connection is reusable.
        let count = try withDatabaseTimeout(.seconds(30)) { try sample.users.getRecordCount() }
        #expect(count == 8)
        #expect(try sample.users.getRecordCount() == 8)
        try sample.close()
    }

    /// A stop that lands between two statements of a call (no statement running, so
    /// `sqlite3_interrupt` or a cancel request has nothing to stop) still stops the next
    /// one: it fails at once instead of running its course, and the call's transaction is
    /// rolled back. Without that, the endless query below ran until the test's limit.
    @Test(.timeLimit(.minutes(3)), arguments: Engine.allCases)
    func aStopBetweenTwoStatementsStopsTheNextOne(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let query = endlessQuery(engine)
        let error = #expect(throws: DALError.self) {
            try withDatabaseTimeout(.milliseconds(200)) {
                try sample.database.write { db in
                    try sample.users.insert(UserInfo(name: "late", email: "late@example.com", age: 1))
                    Thread.sleep(forTimeInterval: 0.6)  // the limit passes here, between statements
                    _ = try db.fetchScalar(Int.self, query)
                }
            }
        }
        #expect(error?.code == .timeout)
        #expect(try sample.users.findByEmail("late@example.com") == nil)
        #expect(try sample.users.getRecordCount() == 8)
        try sample.close()
    }

    /// The async form of `withDatabaseTimeout` reaches the calls awaited inside it, which
    /// run on SwiftDAL's own threads.
    @Test(.timeLimit(.minutes(3)), arguments: Engine.allCases)
    func anAsyncTimeLimitStopsTheAwaitedCall(_ engine: Engine) async throws {
        let sample = try SampleDatabase(engine)
        let query = endlessQuery(engine)
        await #expect {
            try await withDatabaseTimeout(.milliseconds(300)) {
                _ = try await sample.database.read { db in try db.fetchScalar(Int.self, query) }
            }
        } throws: { ($0 as? DALError)?.code == .timeout }
        let users = sample.users
        await #expect {
            try await withDatabaseTimeout(.milliseconds(300)) {
                _ = try await users.find(condition: "id IN (\(sql: query))")
            }
        } throws: { ($0 as? DALError)?.code == .timeout }
        // Calls within their limit are untouched, and the connections are clean.
        #expect(try await withDatabaseTimeout(.seconds(30)) { try await users.getRecordCount() } == 8)
        #expect(try await users.getRecordCount() == 8)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aDatabaseDefaultTimeLimitAppliesToEveryCall(_ engine: Engine) throws {
        let database: any DatabaseWriter
        let directory = try TemporaryDirectory()
        switch engine {
        case .sqlite:
            var configuration = Configuration()
            configuration.callTimeout = .milliseconds(300)
            database = try DatabasePool(path: directory.file("limited.sqlite"), configuration: configuration)
        case .postgres:
            var configuration = PostgresConfiguration()
            configuration.callTimeout = .milliseconds(300)
            database = try makePostgresPool(configuration)
        case .mariadb:
            var configuration = MariaDBConfiguration()
            configuration.callTimeout = .milliseconds(300)
            database = try MariaDBPool(url: SharedMariaDB.makeDatabase().url, configuration: configuration)
        }
        let query = endlessQuery(engine)
        #expect(
            #expect(throws: DALError.self) { _ = try database.read { db in try db.fetchScalar(Int.self, query) } }?.code
                == .timeout)
        #expect(try database.read { db in try db.fetchScalar(Int.self, "SELECT 7") } == 7)
        // A longer limit for the calls that need one.
        #expect(
            try withDatabaseTimeout(.seconds(30)) {
                try database.read { db in try db.fetchScalar(Int.self, "SELECT 8") }
            } == 8)
        try database.close()
    }
}

/// A request handler as an actor, running a call under an `async` time limit.
private actor TimedHandler {
    let users: UserDAL
    let query: SQL
    private(set) var calls = 0

    init(users: UserDAL, query: SQL) {
        self.users = users
        self.query = query
    }

    func endlessCount() async throws -> Int {
        calls += 1
        return try await withDatabaseTimeout(.milliseconds(300)) {
            calls += 1  // the actor's own state, inside the limit's operation
            return try await users.database.read { [query] db in try db.fetchScalar(Int.self, query) ?? 0 }
        }
    }
}
