import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import Testing

/// Arguments at the ends of their types (a client's `?limit=`, a configuration's
/// durations): an answer or a typed error, never a trap, on both engines.
@Suite struct ExtremeArgumentTests {
    @Test func aPagerAtTheEndsOfIntNeverTraps() {
        #expect(PagerInfo(pageIndex: .max, pageSize: 2).offset == .max)
        #expect(PagerInfo(pageIndex: .min, pageSize: .max).offset == 0)
        #expect(PagerInfo(pageIndex: 3, pageSize: 20).offset == 40)
        #expect(PagerInfo(pageIndex: 1, pageSize: .max, recordCount: .max).pageCount == 1)
        #expect(PagerInfo(pageIndex: 1, pageSize: 1, recordCount: .max).pageCount == .max)
        #expect(PagerInfo(pageIndex: 1, pageSize: 20, recordCount: 41).pageCount == 3)
        #expect(PagerInfo(pageIndex: 1, pageSize: 20, recordCount: 40).pageCount == 2)
        #expect(PagerInfo(pageIndex: 1, pageSize: 20, recordCount: -5).pageCount == 0)
        #expect(PagerInfo(pageIndex: 1, pageSize: .min, recordCount: 5).pageCount == 0)
    }

    @Test(arguments: Engine.allCases)
    func hugePagesAndLimitsReadWhatThereIs(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let all = try sample.users.getAll(orderBy: "id")
        for limit in [Int.max, Int.max - 1, 1 << 40] {
            let page = try sample.users.findPage(limit: limit)
            #expect(page.items == all && page.nextCursor == nil, "\(engine) limit \(limit)")
        }
        let far = try sample.users.findWithPager(pager: PagerInfo(pageIndex: .max, pageSize: 2))
        #expect(far.items.isEmpty && far.pager.recordCount == all.count)
        let whole = try sample.users.findWithPager(pager: PagerInfo(pageIndex: 1, pageSize: .max))
        #expect(whole.items.count == all.count && whole.pager.pageCount == 1)
        #expect(try sample.users.findTop(.max).count == all.count)
    }

    /// A time limit too long to count in nanoseconds is no limit; a zero or negative one
    /// is already past.
    @Test(arguments: Engine.allCases)
    func hugeTimeLimitsAreNoLimitAndNeverTrap(_ engine: Engine) async throws {
        var sqlite = Configuration()
        sqlite.busyTimeout = .seconds(Int64.max)
        sqlite.callTimeout = .seconds(Int64.max)
        var postgres = PostgresConfiguration()
        postgres.acquireTimeout = .seconds(Int64.max)
        postgres.statementTimeout = .seconds(Int64.max)
        postgres.callTimeout = .seconds(Int64.max)
        var mariadb = MariaDBConfiguration()
        mariadb.acquireTimeout = .seconds(Int64.max)
        mariadb.connectTimeout = .seconds(Int64.max)
        mariadb.readTimeout = .seconds(Int64.max)
        mariadb.writeTimeout = .seconds(Int64.max)
        mariadb.callTimeout = .seconds(Int64.max)
        let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        defer { try? sample.close() }
        let users = sample.users
        func countSynchronously(within limit: Duration) -> Int? {
            try? withDatabaseTimeout(limit) { try users.getRecordCount() }
        }
        let count = try await users.getRecordCount()
        for limit: Duration in [
            .seconds(Int64.max), .seconds(10_000_000_000), .seconds(2_197_108_676_271_212) + .nanoseconds(999_999_999),
            .seconds(-Int64.max), .seconds(Int64.min)
        ] {
            let far = limit > .zero
            let counted = countSynchronously(within: limit)
            if far { #expect(counted == count, "\(engine) \(limit)") }
            let awaited = try? await withDatabaseTimeout(limit) { try await users.getRecordCount() }
            if far { #expect(awaited == count, "\(engine) \(limit)") }
        }
        #expect(try await users.getRecordCount() == count)
    }
}
