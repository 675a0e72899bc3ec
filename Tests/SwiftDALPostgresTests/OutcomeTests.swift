import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// What a call reported about its write.
private enum Reported {
    case committed, rolledBack, unknown
}

/// The outcomes reported by writes stopped at random moments, by the row each wrote.
private struct Outcomes {
    var reports: [Int: Reported] = [:]

    mutating func record(_ id: Int, _ write: () async throws -> Void) async {
        do {
            try await write()
            reports[id] = .committed
        } catch DALError.Code.outcomeUnknown {
            reports[id] = .unknown
        } catch is CancellationError {
            reports[id] = .rolledBack
        } catch DALError.Code.timeout {
            reports[id] = .rolledBack
        } catch {
            Issue.record("write \(id) failed otherwise: \(error)")
        }
    }

    /// Every report checked against the rows the server holds: a committed write is there,
    /// a rolled-back one is not (an unknown one may be either).
    func check(against rows: Set<Int>, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let falselyCommitted = reports.filter { $0.value == .committed && !rows.contains($0.key) }.map(\.key)
        let falselyRolledBack = reports.filter { $0.value == .rolledBack && rows.contains($0.key) }.map(\.key)
        #expect(
            falselyCommitted.isEmpty, "\(what): reported committed, not stored: \(falselyCommitted.sorted())",
            sourceLocation: sourceLocation)
        #expect(
            falselyRolledBack.isEmpty, "\(what): reported rolled back, stored: \(falselyRolledBack.sorted())",
            sourceLocation: sourceLocation)
    }

    func count(_ kind: Reported) -> Int { reports.values.filter { $0 == kind }.count }
}

/// The ids stored in `ledger`, read with psql.
private func storedIDs(_ server: PostgresServer, database: String) throws -> Set<Int> {
    Set(try server.psql("SELECT id FROM ledger", database: database).split(separator: "\n").compactMap { Int($0) })
}

/// A write of row `id` through `cluster` in `session`.
private func sessionWrite(_ cluster: PostgresCluster, _ session: ConsistencySession, _ id: Int) async throws {
    let insert: @Sendable (Database) throws -> Void = { db in
        try db.execute("INSERT INTO ledger VALUES (\(id), 'x')")
    }
    let write: () async throws -> Void = { try await cluster.write(insert) }
    try await session.run(write)
}

/// A pool of one connection (the next call runs on the same one) on a fresh database whose
/// table `k` holds the row 1, and a view from outside the pool.
private func poolOnTableK() throws -> (PostgresPool, OutsideView) {
    var configuration = PostgresConfiguration()
    configuration.maximumConnections = 1
    let pool = try makePostgresPool(configuration)
    do {
        let outside = try OutsideView.of(pool)
        try outside.psql("CREATE TABLE k(id INT PRIMARY KEY); INSERT INTO k VALUES (1)")
        return (pool, outside)
    } catch {
        try? pool.close()
        throw error
    }
}

/// The ids `k` holds, seen from outside: `"1,3"`.
private func storedKeys(_ outside: OutsideView) throws -> String {
    try outside.psql("SELECT string_agg(id::text, ',' ORDER BY id) FROM k").trimmingCharacters(
        in: .whitespacesAndNewlines)
}

@Suite(.serialized) struct OutcomeTests {
    /// A read whose connection is lost as its `COMMIT` is sent committed nothing: its
    /// result is returned, not reported as an unknown outcome to check before retrying.
    /// The session is ended from outside (`pg_terminate_backend`) once the body's reads
    /// are done.
    @Test func aReadWhoseCommitLosesItsConnectionReturnsItsResult() throws {
        let (pool, outside) = try poolOnTableK()
        defer { try? pool.close() }
        let result = try pool.read { db -> Int in
            let pid = try #require(try db.fetchScalar(Int.self, "SELECT pg_backend_pid()"))
            let count = try #require(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM k"))
            try outside.psql("SELECT pg_terminate_backend(\(pid), 10000)")
            return count + 100
        }
        #expect(result == 101)
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM k") } == 1)
    }

    /// A write whose statement failed with its error caught (`try?`) has an aborted
    /// transaction: PostgreSQL answers its COMMIT with "ROLLBACK" and no error. The call
    /// throws (25P02) instead of returning as if committed, nothing is written (checked from
    /// outside), and the connection serves the next write.
    @Test func aCommitOfATransactionAnErrorAbortedThrows() throws {
        let (pool, outside) = try poolOnTableK()
        defer { try? pool.close() }
        let failure = #expect(throws: PostgresError.self) {
            try pool.write { db in
                try db.execute("INSERT INTO k VALUES (\(2))")
                _ = try? db.execute("INSERT INTO k VALUES (\(1))")  // a duplicate: the transaction is aborted
            }
        }
        #expect(failure?.sqlState == "25P02", "\(String(describing: failure))")
        #expect(try storedKeys(outside) == "1")
        try pool.write { db in try db.execute("INSERT INTO k VALUES (\(3))") }
        #expect(try storedKeys(outside) == "1,3")
    }

    /// The same with a transaction written by hand, its `COMMIT` after a comment: the
    /// statement is still read as a commit, and the call throws (25P02).
    @Test func aCommitAfterACommentOfATransactionAnErrorAbortedThrows() throws {
        let (pool, outside) = try poolOnTableK()
        defer { try? pool.close() }
        let failure = #expect(throws: PostgresError.self) {
            try pool.reentrantWrite { db in
                try db.execute("BEGIN")
                try db.execute("INSERT INTO k VALUES (\(2))")
                _ = try? db.execute("INSERT INTO k VALUES (\(1))")  // a duplicate: the transaction is aborted
                try db.execute("-- the batch is done\n/* all of it */ COMMIT")
            }
        }
        #expect(failure?.sqlState == "25P02", "\(String(describing: failure))")
        #expect(try storedKeys(outside) == "1")
    }

    /// A write whose session an administrator ended part way (`pg_terminate_backend` from
    /// outside), its next statement's error caught: the COMMIT is refused before it is
    /// sent, so the call reports a connection failure, not an unknown outcome. Nothing of
    /// it was written (checked from outside), and the pool serves the next write.
    @Test func aCommitRefusedOnABrokenConnectionIsReportedNotCommitted() throws {
        let (pool, outside) = try poolOnTableK()
        defer { try? pool.close() }
        let failure = #expect(throws: PostgresError.self) {
            try pool.write { db in
                try db.execute("INSERT INTO k VALUES (\(2))")
                let session = try db.fetchScalar(Int.self, "SELECT pg_backend_pid()") ?? 0
                _ = try outside.psql("SELECT pg_terminate_backend(\(session), 10000)")
                _ = try? db.execute("INSERT INTO k VALUES (\(3))")  // the session is gone
            }
        }
        #expect(failure?.category == .connection, "\(String(describing: failure))")
        #expect(failure?.description.contains("not sent") == true, "\(String(describing: failure))")
        #expect(try storedKeys(outside) == "1")
        try pool.write { db in try db.execute("INSERT INTO k VALUES (\(4))") }
        #expect(try storedKeys(outside) == "1,4")
    }

    /// A session the server ends for idling in a transaction
    /// (`idle_in_transaction_session_timeout`, 100 ms, while the body waits a second): the
    /// next statement throws a connection failure (25P03, or, as libpq 15 reports it when
    /// its send fails first, 08006), nothing of the transaction was
    /// written (checked from outside), and the pool lends a new session.
    @Test func aSessionEndedForIdlingInATransactionIsAConnectionFailure() throws {
        let (pool, outside) = try poolOnTableK()
        defer { try? pool.close() }
        let first = try pool.read { try $0.fetchScalar(Int.self, "SELECT pg_backend_pid()") }
        let failure = #expect(throws: PostgresError.self) {
            try pool.write { db in
                try db.execute(sql: "SET LOCAL idle_in_transaction_session_timeout = 100")
                try db.execute("INSERT INTO k VALUES (\(2))")
                Thread.sleep(forTimeInterval: 1)
                try db.execute("INSERT INTO k VALUES (\(3))")
            }
        }
        #expect(["25P03", "08006"].contains(failure?.sqlState ?? ""), "\(String(describing: failure))")
        #expect(failure?.isConnectionFailure == true, "\(String(describing: failure))")
        #expect(failure?.category == .connection, "\(String(describing: failure))")
        #expect(try outside.psql("SELECT count(*) FROM k").trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        let next = try pool.read { try $0.fetchScalar(Int.self, "SELECT pg_backend_pid()") }
        #expect(next != nil && next != first)
    }

    /// Writes stopped at random moments across BEGIN … COMMIT (time limits and
    /// cancellations of a few milliseconds, statements of a few milliseconds): every
    /// outcome a call reports is the one the server holds, in both directions.
    @Test func everyReportedOutcomeOfAStoppedWriteIsTheServersOnAPool() async throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql("CREATE TABLE ledger(id INT PRIMARY KEY, note TEXT)")
        var configuration = PostgresConfiguration()
        configuration.maximumConnections = 2
        let pool = try PostgresPool(url: url, configuration: configuration)
        defer { try? pool.close() }
        var outcomes = Outcomes()
        for id in 0..<160 {
            let pause = Double.random(in: 0..<0.006)
            let write: @Sendable () async throws -> Void = {
                try await pool.write { db in
                    try db.execute("INSERT INTO ledger(id, note) VALUES (\(id), 'x')")
                    if pause > 0.003 { try db.execute("SELECT pg_sleep(\(pause))") }
                }
            }
            if id % 2 == 0 {
                await outcomes.record(id) {
                    try await withDatabaseTimeout(.microseconds(Int64.random(in: 0..<8_000))) { try await write() }
                }
            } else {
                let task = Task { try await write() }
                try await Task.sleep(for: .microseconds(Int.random(in: 0..<8_000)))
                task.cancel()
                await outcomes.record(id) { try await task.value }
            }
        }
        outcomes.check(against: try storedIDs(outside.server, database: outside.database), "pool")
        #expect(outcomes.count(.committed) > 0)
        #expect(outcomes.count(.rolledBack) > 0)
    }

    /// The same through a cluster in a consistency session, with synchronous replication
    /// whose standbys hang (SIGSTOP): every COMMIT waits for them, and the stop lands on the
    /// COMMIT in flight. PostgreSQL then keeps the commit on the primary, confirmed by no
    /// standby (a failover may lose it): the call reports neither "committed" nor "rolled
    /// back", but `outcomeUnknown`, and its session reads it back while it is there.
    @Test func aStopDuringACommitWaitingForASynchronousStandbyReportsItUnknown() async throws {
        let servers = try await ReplicatedServers.started(standbys: 2)
        defer { servers.stop() }
        try servers.primary.psql(
            "CREATE TABLE ledger(id INT PRIMARY KEY, note TEXT)", database: servers.database)
        try servers.primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        try servers.primary.psql("SELECT pg_reload_conf()")
        try await blocking {
            try waitUntil {
                try servers.primary.psql("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            }
        }
        var configuration = PostgresClusterConfiguration()
        configuration.healthCheckTimeout = .milliseconds(500)
        let cluster = try PostgresCluster(
            primary: servers.primaryURL, replicas: servers.standbyURLs, configuration: configuration)
        defer { try? cluster.close() }
        var outcomes = Outcomes()
        // Random stops first, with replication answering.
        for id in 0..<60 {
            let session = ConsistencySession()
            let limit = Duration.microseconds(Int64.random(in: 0..<10_000))
            await outcomes.record(id) {
                try await withDatabaseTimeout(limit) { try await sessionWrite(cluster, session, id) }
            }
            if outcomes.reports[id] == .committed { #expect(session.token != nil, "write \(id): no token") }
        }
        // Then every synchronous standby hangs: each COMMIT waits until the stop.
        for standby in servers.standbys { standby.pause() }
        var sessions = [Int: ConsistencySession]()
        for id in 100..<110 {
            let session = ConsistencySession()
            sessions[id] = session
            await outcomes.record(id) {
                try await withDatabaseTimeout(.milliseconds(300)) { try await sessionWrite(cluster, session, id) }
            }
            #expect(
                outcomes.reports[id] == .unknown,
                "write \(id) during the hang: \(String(describing: outcomes.reports[id]))")
            #expect(session.token != nil, "write \(id): the session did not move on past it")
        }
        // On the server: each is on the primary, past what any standby has confirmed.
        let stored = try storedIDs(servers.primary, database: servers.database)
        #expect(Set(100..<110).isSubset(of: stored), "\(stored.filter { $0 >= 100 }.sorted())")
        let unconfirmed = try servers.primary.psql(
            "SELECT pg_current_wal_lsn() > ALL (SELECT flush_lsn FROM pg_stat_replication WHERE flush_lsn IS NOT NULL)")
        #expect(unconfirmed.trimmingCharacters(in: .whitespacesAndNewlines) == "t")
        // A session reads its unknown write back while it is there (from the primary, since
        // no replica has it).
        for id in [100, 109] {
            let session = try #require(sessions[id])
            let seen = try await session.run {
                try await cluster.read { db in
                    try db.fetchScalar(Int.self, "SELECT count(*) FROM ledger WHERE id = \(id)")
                }
            }
            #expect(seen == 1, "write \(id) read back through its session")
        }
        for standby in servers.standbys { standby.resume() }
        outcomes.check(against: stored, "cluster")
    }
}

/// Every SQLSTATE SwiftDAL names has its category; a session the server ended is a
/// connection failure whatever the reason it gives.
@Suite struct PostgresErrorCategoryTests {
    @Test func eachNamedSQLStateHasItsCategory() {
        let expected: [(String, DatabaseErrorCategory)] = [
            ("23505", .constraint), ("23503", .constraint), ("40001", .conflict), ("40P01", .conflict),
            ("55P03", .busy), ("57014", .interrupted), ("25006", .readOnly), ("42501", .permission),
            ("08006", .connection), ("57P01", .connection), ("57P03", .connection), ("25P03", .connection),
            ("57P05", .connection), ("42P01", .invalidStatement), ("22003", .invalidValue),
            ("53100", .resourceExhausted), ("28P01", .permission), ("XX001", .corrupt), ("25P02", .other)
        ]
        for (state, category) in expected {
            let error = PostgresError(sqlState: state, message: "m")
            #expect(error.category == category, "\(state)")
            #expect(error.isConnectionFailure == (category == .connection), "\(state)")
        }
    }
}
