import Dispatch
import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// Collects what an observer is told.
final class EventLog: DatabaseObserver {
    private let events = Locked<[StatementEvent]>([])

    func statementDidFinish(_ event: StatementEvent) {
        events.withLock { $0.append(event) }
    }

    var all: [StatementEvent] { events.withLock { $0 } }

    /// A configuration of each engine whose observer is this log.
    var configurations: (sqlite: Configuration, postgres: PostgresConfiguration, mariadb: MariaDBConfiguration) {
        var sqlite = Configuration()
        sqlite.observer = self
        var postgres = PostgresConfiguration()
        postgres.observer = self
        var mariadb = MariaDBConfiguration()
        mariadb.observer = self
        return (sqlite, postgres, mariadb)
    }

    /// The events recorded while `body` ran.
    func during<R>(_ body: () throws -> R) rethrows -> (R, [StatementEvent]) {
        let before = events.withLock { $0.count }
        let result = try body()
        return (result, events.withLock { Array($0[before...]) })
    }

    /// The events recorded while the `async` `body` ran.
    func whileAwaiting<R>(_ body: () async throws -> R) async rethrows -> (R, [StatementEvent]) {
        let before = events.withLock { $0.count }
        let result = try await body()
        return (result, events.withLock { Array($0[before...]) })
    }
}

/// Observability on every engine: the per-statement hook, the slow-statement threshold,
/// the wait for a connection, and the pool gauges.
@Suite struct ObservabilityTests {
    private func sample(_ engine: Engine, observer: EventLog, threshold: Duration?, connections: Int = 4) throws
        -> SampleDatabase
    {
        var sqlite = Configuration()
        sqlite.observer = observer
        sqlite.slowStatementThreshold = threshold
        sqlite.maximumReaderCount = connections
        var postgres = PostgresConfiguration()
        postgres.observer = observer
        postgres.slowStatementThreshold = threshold
        postgres.maximumConnections = connections
        var mariadb = MariaDBConfiguration()
        mariadb.observer = observer
        mariadb.slowStatementThreshold = threshold
        mariadb.maximumConnections = connections
        return try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
    }

    /// A stream's query reaches the observer once, with the rows it read: SQLite's
    /// statement reports itself, a server engine's stream is reported around its cursor,
    /// and neither is reported twice.
    @Test(arguments: Engine.allCases)
    func aStreamIsReportedOnceWithItsRows(_ engine: Engine) async throws {
        let log = EventLog()
        let sample = try sample(engine, observer: log, threshold: .seconds(3600))
        let expected = try await sample.users.getRecordCount()
        let before = log.all.count
        var read = 0
        for try await _ in sample.users.stream(orderBy: "id") { read += 1 }
        #expect(read == expected && read > 1)
        func queries() -> [StatementEvent] {
            log.all.dropFirst(before).filter { $0.sql.uppercased().hasPrefix("SELECT") }
        }
        // Once the stream's call has let its connection go, every report of it has been made.
        try await eventually { sample.database.statistics.connectionsInUse == 0 && !queries().isEmpty }
        #expect(queries().count == 1, "\(queries().map(\.sql))")
        #expect(queries().first?.rowCount == read)
    }

    @Test(arguments: Engine.allCases)
    func everyStatementIsReportedWithItsPlaceholdersRowsAndEngine(_ engine: Engine) throws {
        let log = EventLog()
        let sample = try sample(engine, observer: log, threshold: .seconds(3600))
        let secret = "secret-\(UUID().uuidString)@example.com"
        let (found, findEvents) = try log.during { try sample.users.find(condition: "age >= \(30)", orderBy: "id") }
        let query = try #require(findEvents.last { $0.sql.contains("users") })
        #expect(query.rowCount == found.count)
        #expect(found.count > 1)
        #expect(query.engine == engine.databaseEngine)
        #expect(query.error == nil)
        #expect(query.isSlow == false)
        #expect(!query.sql.contains("30"))
        let (_, insertEvents) = try log.during {
            try sample.users.insert(UserInfo(name: "Observed", email: secret, age: 44))
        }
        let insert = try #require(insertEvents.first { $0.sql.uppercased().hasPrefix("INSERT") })
        #expect(insert.rowCount == 1)
        let (changed, updateEvents) = try log.during {
            try sample.database.write { db in try db.execute("UPDATE users SET age = age + 1 WHERE age >= \(30)") }
        }
        #expect(updateEvents.contains { $0.sql.hasPrefix("UPDATE") && $0.rowCount == changed })
        #expect(changed > 1)
        // A failing statement is reported with its error; no value reaches any event.
        _ = try? sample.users.insert(UserInfo(name: "Twice", email: secret, age: 1))
        let failed = try #require(log.all.last { $0.error != nil })
        #expect((failed.error as? any DatabaseError)?.constraintKind == .unique)
        for event in log.all {
            #expect(!event.sql.contains(secret))
            #expect(!String(describing: event.error.map { "\($0)" } ?? "").contains(secret))
            #expect(event.database.isEmpty == false)
            #expect(!event.database.contains("password"))
        }
        try sample.close()
    }

    /// A statement the engine refuses to prepare (a table that does not exist, a syntax
    /// error) is heard of once, with its error, on every engine: on SQLite it fails in
    /// the client, on the servers the server refuses it.
    @Test(arguments: Engine.allCases)
    func aStatementThatDoesNotPrepareIsReportedWithItsError(_ engine: Engine) throws {
        let log = EventLog()
        let sample = try sample(engine, observer: log, threshold: .seconds(3600))
        for sql in ["SELECT name FROM no_such_table WHERE id > ?", "SELEKT name FROM users WHERE id > ?"] {
            let (thrown, events) = log.during {
                Result { try sample.database.read { db in try db.fetchAll(SQL(sql: sql, arguments: [0])) } }
            }
            guard case .failure(let error) = thrown else {
                Issue.record("\(sql) ran")
                continue
            }
            let reported = events.filter { $0.sql == sql }
            #expect(reported.count == 1, "\(sql): \(events.map(\.sql))")
            #expect(reported.first?.error.map { "\($0)" } == "\(error)", "\(sql)")
            #expect(reported.first?.rowCount == 0)
        }
        // The connection goes on.
        #expect(try sample.users.getRecordCount() == 8)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aStatementIsReportedWithTheSameTextAloneAndInABatch(_ engine: Engine) throws {
        // A batch is pipelined on PostgreSQL: its statements must still reach the observer
        // as the caller wrote them, so that one statement is one series in the metrics.
        let log = EventLog()
        let sample = try sample(engine, observer: log, threshold: nil)
        func inserts(_ events: [StatementEvent]) -> [String] {
            events.map(\.sql).filter { $0.uppercased().hasPrefix("INSERT") }
        }
        let (_, alone) = try log.during {
            try sample.users.insert2(UserInfo(name: "Alone", email: "alone@example.com", age: 40))
        }
        let (ids, batched) = try log.during {
            try sample.users.insertRange2([
                UserInfo(name: "First", email: "first@example.com", age: 41),
                UserInfo(name: "Second", email: "second@example.com", age: 42)
            ])
        }
        #expect(ids.count == 2)
        let single = try #require(inserts(alone).first)
        #expect(inserts(alone).count == 1)
        #expect(inserts(batched) == [single, single])
        #expect(!inserts(batched).contains { $0.contains("$1") })
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func theSlowThresholdMarksTheStatementsPastIt(_ engine: Engine) throws {
        let everything = EventLog()
        let all = try sample(engine, observer: everything, threshold: .zero)
        let (_, slow) = try everything.during { try all.users.getRecordCount() }
        #expect(!slow.isEmpty)
        #expect(slow.allSatisfy { $0.isSlow })
        try all.close()
        let nothing = EventLog()
        let none = try sample(engine, observer: nothing, threshold: nil)
        let (_, fast) = try nothing.during { try none.users.getRecordCount() }
        #expect(!fast.isEmpty)
        #expect(fast.allSatisfy { !$0.isSlow })
        try none.close()
    }

    @Test(arguments: Engine.allCases)
    func theGaugesAndTheWaitShowACallerWaitingForAConnection(_ engine: Engine) throws {
        let log = EventLog()
        // One connection for reads: a second reader waits for the first.
        let sample = try sample(engine, observer: log, threshold: nil, connections: 1)
        let database = sample.database
        _ = try sample.users.getRecordCount()  // opens the connection
        let idle = database.statistics
        #expect(idle.connectionsInUse == 0)
        #expect(idle.callersWaiting == 0)
        #expect(idle.connectionsOpen >= 1)
        #expect(idle.maximumConnections == (engine.isServer ? 1 : 2))

        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            _ = try? database.read { _ in
                holding.signal()
                release.wait()
            }
        }
        holder.start()
        holding.wait()
        #expect(database.statistics.connectionsInUse == 1)
        let users = sample.users
        let done = DispatchSemaphore(value: 0)
        let waiter = Thread {
            // A call of several statements: only its first carries the wait.
            _ = try? database.read { _ in try users.getRecordCount() + users.getRecordCount(condition: "age > \(0)") }
            done.signal()
        }
        let before = log.all.count
        waiter.start()
        #expect(eventually { database.statistics.callersWaiting == 1 })
        release.signal()
        done.wait()
        // The waiting call's first statement carries its wait; the holder's commit and every
        // other statement (the call's second count among them) carry none, so that the
        // waits add up.
        let events = Array(log.all[before...])
        let waited = events.filter { $0.connectionWait > .zero }
        #expect(waited.count == 1, "\(events.map { ($0.sql, $0.connectionWait) })")
        #expect(events.contains { $0.sql.contains("age >") })
        #expect(waited.contains { $0.sql.contains("age >") } == false)
        #expect(eventually { database.statistics.callersWaiting == 0 && database.statistics.connectionsInUse == 0 })
        try sample.close()
        #expect(database.statistics.connectionsOpen == 0)
    }

    @Test func aQueueHasOneConnectionAndGaugesAddUp() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.file("queue.sqlite"))
        #expect(
            queue.statistics
                == PoolStatistics(connectionsOpen: 1, connectionsInUse: 0, callersWaiting: 0, maximumConnections: 1))
        let inside = try queue.read { _ in queue.statistics.connectionsInUse }
        #expect(inside == 1)
        try queue.close()
        #expect(queue.statistics.connectionsOpen == 0)
        let sum =
            PoolStatistics(connectionsOpen: 2, connectionsInUse: 1, callersWaiting: 3, maximumConnections: 5)
            + PoolStatistics(connectionsOpen: 1, connectionsInUse: 1, callersWaiting: 0, maximumConnections: 4)
        #expect(
            sum == PoolStatistics(connectionsOpen: 3, connectionsInUse: 2, callersWaiting: 3, maximumConnections: 9))
    }
}
