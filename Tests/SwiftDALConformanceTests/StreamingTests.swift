import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// A row of the streamed table, mapped explicitly (decoding stays cheap in a debug build).
private struct StreamItem: Entity, Hashable {
    static let tableName = "stream_items"
    static let columnNames: [String]? = ["id", "n", "label"]
    var id: Int64?
    var n: Int64
    var label: String

    init(id: Int64?, n: Int64, label: String) {
        self.id = id
        self.n = n
        self.label = label
    }

    init(row: RowView) throws {
        try self.init(id: row[0], n: row[1], label: row[2])
    }

    func encodeColumns(to columns: inout ColumnValues) throws {
        try columns.encode(id, for: "id")
        try columns.encode(n, for: "n")
        try columns.encode(label, for: "label")
    }
}

private final class ItemDAL: BaseDAL<StreamItem>, @unchecked Sendable {}

/// The same table seen by one tenant, without its soft-deleted rows.
private final class TenantItemDAL: BaseDAL<StreamItem>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "tenant_id", softDeleteColumn: "deleted_at") }
}

private let itemsTable = TableDefinition("stream_items") { t in
    t.column("id", .integer)
    t.column("tenant_id", .integer, notNull: true)
    t.column("n", .integer, notNull: true)
    t.column("label", .text, notNull: true)
    t.column("deleted_at", .text)
    t.primaryKey(["id"])
}

/// The sample database of `engine` with `count` items (ids and `n` from 1; tenant 1 holds
/// the even ones, tenant 2 the odd ones; every tenth is soft-deleted), written by one
/// statement on the server.
private func itemsDatabase(
    _ engine: Engine, count: Int, sqlite: Configuration = Configuration(),
    postgres: PostgresConfiguration = PostgresConfiguration(), mariadb: MariaDBConfiguration = MariaDBConfiguration()
) throws -> (SampleDatabase, ItemDAL) {
    let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
    try sample.database.write { db in
        try db.create(itemsTable)
        let values = "x, 1 + x % 2, x, 'item-' || x, CASE WHEN x % 10 = 0 THEN '2026-01-01 00:00:00' END"
        switch engine {
        case .sqlite:
            try db.execute(
                sql: "INSERT INTO stream_items(id, tenant_id, n, label, deleted_at) WITH RECURSIVE c(x) AS "
                    + "(SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < \(count)) SELECT \(values) FROM c")
        case .postgres:
            try db.execute(
                sql:
                    "INSERT INTO stream_items(id, tenant_id, n, label, deleted_at) SELECT \(values) FROM generate_series(1, \(count)) x"
            )
        case .mariadb:
            // The SEQUENCE engine's virtual table of 1...count.
            try db.execute(
                sql:
                    "INSERT INTO stream_items(id, tenant_id, n, label, deleted_at) SELECT \(values) FROM (SELECT seq AS x FROM seq_1_to_\(count)) c"
            )
        }
    }
    return (sample, ItemDAL(database: sample.database))
}

/// A query whose rows never end (unless it is stopped), produced one by one (PostgreSQL
/// would compute all of `generate_series` before its first row). MariaDB makes a cursor's
/// whole result on the server before its first row (the stream reads it through one):
/// there, 200,000 rows, more than any of these tests reads.
private func endlessRows(_ engine: Engine) -> SQL {
    switch engine {
    case .sqlite, .postgres: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
    case .mariadb: "SELECT seq AS x FROM seq_1_to_200000"
    }
}

/// Streams a query of `engine` that fails at its 500th row, the consumer pausing `pause`
/// after each row: the numbers received, and what the loop threw.
private func streamAFailingQuery(
    _ engine: Engine, _ database: any DatabaseWriter, pausingPerRow pause: Duration
) async -> (received: [Int], thrown: (any Error)?) {
    let failing: SQL =
        switch engine {
        case .sqlite:
            SQL(
                sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
                    + "SELECT x, CASE WHEN x < 500 THEN x ELSE json('not json') END FROM c")
        case .postgres: "SELECT x, CASE WHEN x < 500 THEN x ELSE 1 / (x - x) END FROM generate_series(1, 1000) x"
        // Division by zero is an error under ERROR_FOR_DIVISION_BY_ZERO only in writes: a
        // value out of BIGINT's range fails in a read.
        case .mariadb:
            SQL(
                sql: "SELECT seq AS x, CASE WHEN seq < 500 THEN seq ELSE CAST(seq AS SIGNED) * 9223372036854775807 "
                    + "END FROM seq_1_to_1000")
        }
    var received = [Int]()
    do {
        for try await row in database.stream(failing) {
            received.append(try row.decode(Int.self, at: 0))
            if pause > .zero { try await Task.sleep(for: pause) }
        }
    } catch {
        return (received, error)
    }
    return (received, nil)
}

/// Every element of `stream`.
private func collect<Element>(_ stream: DatabaseStream<Element>) async throws -> [Element] {
    var elements = [Element]()
    for try await element in stream { elements.append(element) }
    return elements
}

/// This process's resident memory now, in KiB (`VmRSS` of /proc/self/status).
private func residentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.dropFirst(6).split(whereSeparator: \.isWhitespace).first ?? "") ?? 0
    }
    return 0
}

/// Whether AddressSanitizer is in the process: its quarantine keeps freed memory
/// resident, so a resident-memory bound says nothing there.
private let underAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

/// Streaming on every engine: every row once, in order, with the DAL's scope; bounded
/// read-ahead; early stops, cancellation and errors that leave the connection clean.
/// (One test at a time: they hold threads and stream many rows, and the whole suite runs
/// on a machine of two cores, where other suites' cancellations wait for a free thread.)
@Suite(.serialized) struct StreamingTests {
    @Test(arguments: Engine.allCases)
    func everyRowArrivesOnceInOrder(_ engine: Engine) async throws {
        let (sample, items) = try itemsDatabase(engine, count: 1000)
        // Several buffers (and PostgreSQL fetches) long.
        let streamed = try await collect(items.stream(orderBy: "id"))
        #expect(streamed.count == 1000)
        #expect(streamed == (try await items.find(condition: "", orderBy: "id")))
        let filtered = try await collect(
            items.stream(condition: "n > \(300) AND label LIKE \(startingWith: "item-")", orderBy: "n DESC"))
        #expect(
            filtered
                == (try await items.find(
                    condition: "n > \(300) AND label LIKE \(startingWith: "item-")", orderBy: "n DESC")))
        #expect(filtered.first?.n == 1000 && filtered.count == 700)
        // The sample DALs too, in their default order.
        #expect(try await collect(sample.users.stream()) == (try sample.users.getAll()))
        // Rows of any query, copied, with bound values.
        let rows = try await collect(
            sample.database.stream("SELECT id, label FROM stream_items WHERE n <= \(600) ORDER BY id"))
        let expected = try await sample.database.read { db in
            try db.fetchAll("SELECT id, label FROM stream_items WHERE n <= \(600) ORDER BY id")
        }
        #expect(rows.map(\.values) == expected.map(\.values))
        #expect(rows.first?.columnNames == ["id", "label"])
        let explicit = try await collect(
            sample.database.stream(sql: "SELECT n FROM stream_items WHERE id = ?", arguments: [42]))
        #expect(try explicit.map { try $0.decode(Int.self, at: 0) } == [42])
        // An empty result ends at once; iterating a sequence again runs the query again.
        let none = items.stream(condition: "n < \(0)")
        #expect(try await collect(none).isEmpty)
        #expect(try await collect(none).isEmpty)
        try sample.close()
    }

    @Test func aDatabaseQueueStreamsAndIsFreeAfterAnEarlyStop() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.file("queue.sqlite"), template: sampleFixture)
        let users = UserDAL(database: queue)
        #expect(try await collect(users.stream(orderBy: "id")) == (try users.getAll(orderBy: "id")))
        for try await _ in users.stream() { break }
        // The queue's one connection is free again, for sync and async calls.
        #expect(try await users.getRecordCount() == 8)
        #expect(try await users.getRecordCount() == 8)
        try await queue.write { db in try db.execute("UPDATE users SET age = age + 1") }
        try queue.close()
    }

    @Test(arguments: Engine.allCases)
    func aTenantStreamsOnlyItsLiveRows(_ engine: Engine) async throws {
        let (sample, items) = try itemsDatabase(engine, count: 600)
        let tenantOne = TenantItemDAL(database: sample.database, tenant: Int64(1))
        let streamed = try await collect(tenantOne.stream(orderBy: "id"))
        let expected = try await items.find(condition: "tenant_id = \(1) AND deleted_at IS NULL", orderBy: "id")
        #expect(streamed == expected)
        #expect(streamed.count == 240)
        #expect(streamed.allSatisfy { $0.n % 2 == 0 && $0.n % 10 != 0 })
        // A condition that tries to reach the other tenant stays inside the scope.
        let escape = try await collect(tenantOne.stream(condition: "1 = 1 OR tenant_id = \(2)"))
        #expect(Set(escape) == Set(expected))
        #expect(try await collect(tenantOne.includingDeleted.stream()).count == 300)
        // No tenant: the stream throws before reading anything.
        let nobody = TenantItemDAL(database: sample.database, tenant: Int64?.none)
        await #expect {
            _ = try await collect(nobody.stream())
        } throws: { ($0 as? DALError)?.code == .tenantRequired }
        try sample.close()
    }

    /// A pool of one connection serves the next call after a stream stopped early, after
    /// an iterator released mid-way, and after a sequence never iterated.
    @Test(.timeLimit(.minutes(3)), arguments: Engine.allCases)
    func anEarlyStopReleasesTheConnection(_ engine: Engine) async throws {
        let (sqlite, postgres, mariadb) = SampleDatabase.oneConnection
        let (sample, items) = try itemsDatabase(
            engine, count: 2000, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        for round in 0..<3 {
            var seen = [Int64]()
            for try await item in items.stream(orderBy: "id") {
                seen.append(item.n)
                if seen.count == 3 { break }
            }
            #expect(seen == [1, 2, 3])
            #expect(try await items.getRecordCount() == 2000, "round \(round)")
            #expect(try await items.findById(Int64(7))?.n == 7)
        }
        // An iterator released after one element.
        do {
            var iterator = sample.database.stream(endlessRows(engine)).makeAsyncIterator()
            #expect(try await iterator.next() != nil)
        }
        #expect(try await items.getRecordCount() == 2000)
        // A sequence (and an iterator) never iterated: nothing ran, nothing is held.
        do {
            let stream = items.stream()
            _ = stream.makeAsyncIterator()
        }
        #expect(try await items.getRecordCount() == 2000)
        try sample.close()
    }

    @Test(.timeLimit(.minutes(3)), arguments: Engine.allCases)
    func cancellingTheConsumerStopsTheStreamAndFreesTheConnection(_ engine: Engine) async throws {
        let (sqlite, postgres, mariadb) = SampleDatabase.oneConnection
        let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        let database = sample.database
        // A consumer of endless rows whose task is cancelled while it iterates: its loop
        // throws CancellationError at the next element.
        let consumer = Task {
            var count = 0
            for try await _ in database.stream(endlessRows(engine)) {
                count += 1
                if count == 10 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return count
        }
        await #expect(throws: CancellationError.self) { _ = try await consumer.value }
        #expect(try await sample.users.getRecordCount() == 8)
        // A consumer waiting for the first row of a query that runs for ever, cancelled
        // from another thread: the statement is interrupted. (The cancel comes from a
        // serial queue, which has a thread of its own: a CPU-bound query may keep every
        // thread of the shared pool busy on a small machine.)
        let waiting = Task { try await collect(database.stream(endlessQuery(engine))) }
        DispatchQueue(label: "StreamingTests.canceller").asyncAfter(deadline: .now() + .milliseconds(300)) {
            waiting.cancel()
        }
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        for _ in 0..<5 { #expect(try await sample.users.getRecordCount() == 8) }
        // A consumer cancelled before it starts runs nothing.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await collect(sample.users.stream())
        }
        await #expect(throws: CancellationError.self) { _ = try await early.value }
        #expect(try await sample.users.getRecordCount() == 8)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func errorsAreThrownTypedAndLeaveTheConnectionClean(_ engine: Engine) async throws {
        let (sqlite, postgres, mariadb) = SampleDatabase.oneConnection
        let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        let database = sample.database
        // A query that cannot run.
        let missing = database.stream("SELECT * FROM no_such_table")
        switch engine {
        case .sqlite: await #expect(throws: SQLiteError.self) { _ = try await collect(missing) }
        case .postgres:
            await #expect { _ = try await collect(missing) } throws: { ($0 as? PostgresError)?.sqlState == "42P01" }
        case .mariadb:
            await #expect { _ = try await collect(missing) } throws: { ($0 as? MariaDBError)?.code == 1146 }
        }
        // A query that fails at its 500th row, after the rows before it: to a consumer
        // waiting for each batch, and to one busy with its rows when the query fails (the
        // error must still come after the buffered rows, not a quiet end).
        for pause in [Duration.zero, .milliseconds(2)] {
            let (received, thrown) = await streamAFailingQuery(engine, database, pausingPerRow: pause)
            if engine == .mariadb {
                // Its cursor's result is made whole on the server before the first row.
                #expect(received.isEmpty)
            } else {
                #expect(!received.isEmpty && received.count < 500, "pausing \(pause)")
                #expect(received == Array(1...max(1, received.count)))
            }
            switch engine {
            case .sqlite: #expect(thrown is SQLiteError, "pausing \(pause)")
            case .postgres: #expect((thrown as? PostgresError)?.sqlState == "22012", "pausing \(pause)")
            case .mariadb: #expect((thrown as? MariaDBError)?.code == 1690, "\(String(describing: thrown))")
            }
        }
        // A column the table does not have, named in the order: the DAL's typed error.
        await #expect {
            _ = try await collect(sample.users.stream(orderBy: "no_such_column"))
        } throws: { ($0 as? DALError)?.code == .invalidColumn && ($0 as? DALError)?.table == "users" }
        #expect(try await sample.users.getRecordCount() == 8)
        try sample.close()
    }

    /// The reading side never gets more than the buffer ahead of a slow consumer.
    @Test(arguments: Engine.allCases)
    func theReadingSideStaysWithinTheBuffer(_ engine: Engine) async throws {
        let (sample, items) = try itemsDatabase(engine, count: 1500)
        let bound = DatabaseStream<StreamItem>.bufferSize
        var iterator = items.stream(orderBy: "id").makeAsyncIterator()
        var consumed = 0
        while let item = try await iterator.next() {
            consumed += 1
            #expect(item.n == Int64(consumed))
            if consumed % 100 == 1 {
                // Time for the reading side to run as far ahead as it may (not a timing
                // assertion: the bound holds however long it runs).
                try await Task.sleep(for: .milliseconds(50))
            }
            let ahead = iterator.producedCount - consumed
            #expect(ahead >= 0 && ahead <= bound, "\(ahead) elements ahead after \(consumed)")
        }
        #expect(consumed == 1500)
        #expect(iterator.producedCount == 1500)
        try sample.close()
    }

    /// The observer hears of a stream once, when it ends, with its row count.
    @Test(arguments: Engine.allCases)
    func anObserverHearsOfAStreamOnce(_ engine: Engine) async throws {
        let log = EventLog()
        let (sqlite, postgres, mariadb) = log.configurations
        let (sample, _) = try itemsDatabase(
            engine, count: 700, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        let query: SQL = "SELECT id FROM stream_items WHERE n > \(0) ORDER BY id"
        #expect(try await collect(sample.database.stream(query)).count == 700)
        let events = log.all.filter { $0.sql == query.sql }
        #expect(events.count == 1)
        #expect(events.first?.rowCount == 700)
        #expect(events.first?.error == nil)
        try sample.close()
    }

    /// A stream that fails while its rows are read is reported once, with its error: a
    /// service counting failed statements sees it.
    @Test(arguments: Engine.allCases)
    func anObserverHearsOfAFailedStreamWithItsError(_ engine: Engine) async throws {
        let log = EventLog()
        let (sqlite, postgres, mariadb) = log.configurations
        let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        // Fails as its rows are read: SQLite's json() of a name that is not JSON; on the
        // servers, a subquery that returns more than one row.
        let query: SQL =
            engine == .sqlite
            ? "SELECT json(name) FROM users WHERE id > \(0)"
            : "SELECT name FROM users WHERE id = (SELECT id FROM users WHERE id > \(0))"
        await #expect(throws: (any Error).self) { _ = try await collect(sample.database.stream(query)) }
        let events = log.all.filter { $0.sql == query.sql }
        #expect(events.count == 1)
        #expect(events.first?.error != nil)
        #expect(try await sample.users.getRecordCount() == 8)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aTimeLimitBoundsTheWholeStream(_ engine: Engine) async throws {
        let sample = try SampleDatabase(engine)
        let database = sample.database
        var count = 0
        await #expect {
            try await withDatabaseTimeout(.milliseconds(300)) {
                for try await _ in database.stream(endlessRows(engine)) {
                    count += 1
                    try await Task.sleep(for: .milliseconds(1))  // a slow consumer: the reading side waits
                }
            }
        } throws: { ($0 as? DALError)?.code == .timeout }
        #expect(count > 0)
        #expect(try await sample.users.getRecordCount() == 8)
        try sample.close()
    }

    /// 200,000 entities streamed while resident memory is sampled: it grows by far less
    /// than loading them would take (the release benchmark measures 1,000,000 rows:
    /// `swiftdal-bench --stream`).
    @Test(arguments: Engine.allCases)
    func streamingManyRowsKeepsMemoryBounded(_ engine: Engine) async throws {
        let count = 200_000
        let (sample, items) = try itemsDatabase(engine, count: count)
        let before = residentKiB()
        var peak = before
        var consumed = 0
        var sum: Int64 = 0
        for try await item in items.stream(orderBy: "id") {
            consumed += 1
            sum &+= item.n
            if consumed % 10_000 == 0 { peak = max(peak, residentKiB()) }
        }
        #expect(consumed == count)
        #expect(sum == Int64(count) * Int64(count + 1) / 2)
        if !underAddressSanitizer {
            #expect(peak - before < 50 * 1024, "resident memory grew by \(peak - before) KiB while streaming")
        }
        try sample.close()
    }
}
