import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// SQL that keeps the engine busy for far longer than any test waits (tens of seconds),
/// unless it is stopped.
func endlessQuery(_ engine: Engine) -> SQL {
    switch engine {
    case .sqlite:
        "SELECT COUNT(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT x FROM c)"
    case .postgres:
        "SELECT COUNT(*) FROM pg_sleep(60)"
    }
}

/// A request's lifecycle on every engine: cancellation and time limits stop the running
/// SQL, roll its transaction back, and leave the connection clean for the next call.
@Suite struct LifecycleTests {
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
    @Test(.timeLimit(.minutes(1)), arguments: Engine.allCases)
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
    @Test(.timeLimit(.minutes(1)), arguments: Engine.allCases)
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
