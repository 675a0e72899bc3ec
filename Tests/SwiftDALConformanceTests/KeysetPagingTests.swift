import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALTestSupport
import Testing

/// A row whose sort keys cover every kind a cursor carries: integers over the full
/// 64-bit range, doubles down to the last bit, text in any script, dates as stored, and
/// a nullable column.
private struct SortKeyRow: Entity, Codable, Hashable {
    static let tableName = "sort_keys"
    var id: Int64?
    var i: Int64
    var r: Double
    var t: String
    var d: Date
    var n: Int64?
}

private final class SortKeyDAL: BaseDAL<SortKeyRow>, @unchecked Sendable {}

/// The same table, with cursors signed by another secret.
private final class OtherKeySortKeyDAL: BaseDAL<SortKeyRow>, @unchecked Sendable {
    static let key = Result { try CursorSigningKey(secret: "another service's secret, 32 bytes") }
    override var cursorSigningKey: CursorSigningKey { (try? Self.key.get()) ?? .processDefault }
}

private let sortKeys = TableDefinition("sort_keys") { t in
    t.column("id", .integer)
    t.column("i", .integer, notNull: true)
    t.column("r", .real, notNull: true)
    t.column("t", .text, notNull: true)
    t.column("d", .text, notNull: true)
    t.column("n", .integer)
    t.primaryKey(["id"])
    t.index("sort_keys_i", on: ["i", "id"])
}

/// Rows with extreme and awkward values, several sharing a sort value (so the tie-breaker
/// matters), and NULLs in `n`.
private func awkwardRows(_ engine: Engine) -> [SortKeyRow] {
    let integers: [Int64] = [.min, .max, 0, -1, 1, .max - 1, .min + 1, 0, 42, 42]
    var doubles: [Double] = [
        0.1, 0.1.nextUp, 0.1.nextDown, -0.0, 0.0, .leastNormalMagnitude, .leastNonzeroMagnitude,
        .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, .infinity, -.infinity, 1e-300, 1.0 / 3.0, 2.0 / 3.0, -1.5
    ]
    if engine == .mariadb { doubles.removeAll { $0.isInfinite } }  // MariaDB's DOUBLE holds no infinity
    var texts = [
        "", "a", "A", "b", "é", "e\u{301}", "😀", "👩‍👩‍👧", "中文", "عربي", "a b", "'; DROP TABLE sort_keys; --",
        "\u{202E}rtl", "z", String(repeating: "long", count: 200), "Ω", "a"
    ]
    if engine == .sqlite { texts.append("nul\u{0}inside") }  // PostgreSQL text cannot hold NUL
    let dates: [Date] = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -2_208_988_800),
        Date(timeIntervalSince1970: 4_102_444_800.123),
        Date(timeIntervalSince1970: 1_700_000_000.001), Date(timeIntervalSince1970: 1_700_000_000.002)
    ]
    let nullable: [Int64?] = [nil, 3, nil, -7, 3, nil, 0]
    let count = 60
    return (0..<count).map { index in
        SortKeyRow(
            i: integers[index % integers.count], r: doubles[(index * 7) % doubles.count],
            t: texts[(index * 5) % texts.count],
            d: dates[(index * 3) % dates.count], n: nullable[index % nullable.count])
    }
}

/// URL-safe base64's 64 characters, in the order of the values they stand for.
private let urlSafeAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

/// `token` (URL-safe base64 without padding) with the unused low bits of its last
/// character set: another text for the same bytes (checked here), or `nil` when its length
/// leaves no unused bits.
private func nonCanonicalTwin(of token: String) -> String? {
    func bytes(_ text: String) -> Data? {
        let base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return Data(base64Encoded: base64 + String(repeating: "=", count: (4 - text.count % 4) % 4))
    }
    // 2 or 3 characters past the last group of four end with 4 or 2 unused bits.
    guard [2, 3].contains(token.count % 4), let last = token.last,
        let position = urlSafeAlphabet.firstIndex(of: last)
    else { return nil }
    let twin = String(token.dropLast()) + String(urlSafeAlphabet[position | 1])
    guard twin != token, let decoded = bytes(twin), decoded == bytes(token) else { return nil }
    return twin
}

/// Every row of `dal` matching `condition`, page by page.
private func pageThrough(
    _ dal: ReadOnlyDAL<SortKeyRow>, limit: Int, condition: SQL? = nil, orderBy: OrderBy
) throws -> [SortKeyRow] {
    var rows = [SortKeyRow]()
    var cursor: PageCursor?
    var pages = 0
    repeat {
        let page = try dal.findPage(after: cursor, limit: limit, condition: condition, orderBy: orderBy)
        #expect(page.items.count <= limit)
        #expect(page.nextCursor == nil || page.items.count == limit)
        rows += page.items
        cursor = page.nextCursor
        pages += 1
    } while cursor != nil && pages < 10_000
    return rows
}

@Suite struct KeysetPagingTests {
    private func makeTable(_ sample: SampleDatabase) throws -> SortKeyDAL {
        try sample.database.write { db in try db.create(sortKeys) }
        let dal = SortKeyDAL(database: sample.database)
        try dal.insertRange(awkwardRows(sample.engine))
        return dal
    }

    @Test(arguments: Engine.allCases)
    func everyRowComesOnceInEveryOrderAndValuesRoundTripExactly(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let dal = try makeTable(sample)
        // Every awkward value is in the table (SQLite stores -0.0 as 0).
        let stored = try dal.getAll()
        // SQLite and MariaDB store -0.0 as 0; MariaDB's DOUBLE holds no infinity.
        let distinctDoubles = [Engine.sqlite: 14, .postgres: 15, .mariadb: 12]
        #expect(Set(stored.map(\.r.bitPattern)).count == distinctDoubles[engine])
        #expect(Set(stored.map(\.i)).count == 8)
        #expect(Set(stored.map { Array($0.t.utf8) }).count == (engine == .sqlite ? 17 : 16))
        #expect(Set(stored.map(\.d)).count == 5)
        let orders: [String] = [
            "id", "i", "i DESC", "r", "r DESC", "t", "t DESC", "d", "d DESC", "n", "n DESC", "n, r DESC", "t DESC, i",
            "r, t DESC, n", "n DESC, d, t", "i DESC, id"
        ]
        for text in orders {
            let order = OrderBy(text)
            let lastDirection = order.terms.last?.direction ?? .ascending
            let expected = try dal.getAll(
                orderBy: order.terms.contains { $0.column == "id" } ? order : order.then("id", lastDirection))
            for limit in [1, 3, 7, 100] {
                let paged = try pageThrough(dal, limit: limit, orderBy: order)
                #expect(paged == expected, "\(engine) ORDER BY \(text), limit \(limit)")
            }
        }
        // With a condition, on the sample tables too.
        let adults = try pageThrough(dal, limit: 4, condition: "i >= \(0) OR n IS NULL", orderBy: "r DESC")
        #expect(
            adults
                == (try dal.find(
                    condition: "i >= \(0) OR n IS NULL", orderBy: OrderBy("r", .descending).then("id", .descending))))
        var users = [UserInfo]()
        var cursor: PageCursor?
        repeat {
            let page = try sample.users.findPage(after: cursor, limit: 3)
            users += page.items
            cursor = page.nextCursor
        } while cursor != nil
        #expect(users == (try sample.users.getAll(orderBy: "name, id")))
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func theLastPageHasNoCursorAndAnEmptyTableOnePage(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let exact = try sample.users.findPage(limit: 8, orderBy: "id")
        #expect(exact.items.count == 8)
        #expect(exact.nextCursor == nil)  // no empty page after a full last one
        let first = try sample.users.findPage(limit: 5, orderBy: "id")
        let second = try sample.users.findPage(after: first.nextCursor, limit: 5, orderBy: "id")
        #expect(first.items.compactMap(\.id) == [1, 2, 3, 4, 5])
        #expect(second.items.compactMap(\.id) == [6, 7, 8])
        #expect(second.nextCursor == nil)
        let none = try sample.users.findPage(limit: 5, condition: "age > \(1000)")
        #expect(none.items.isEmpty && none.nextCursor == nil)
        #expect(#expect(throws: DALError.self) { _ = try sample.users.findPage(limit: 0) }?.code == .invalidValue)
        #expect(
            #expect(throws: DALError.self) { _ = try sample.users.findPage(limit: 5, orderBy: "nope") }?.code
                == .invalidColumn)
        // The offset pager still works beside it.
        let pager = try sample.users.findWithPager(pager: PagerInfo(pageIndex: 2, pageSize: 3), orderBy: "id")
        #expect(pager.items.compactMap(\.id) == [4, 5, 6])
        #expect(pager.pager.recordCount == 8)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func rowsInsertedBetweenPagesNeverMakeARowRepeatOrGoMissing(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let dal = try makeTable(sample)
        let initial = Set(try dal.getAll().compactMap(\.id))
        for order in ["i", "r DESC, t", "n, d DESC"] {
            var seen = [Int64]()
            var cursor: PageCursor?
            var round: Int64 = 0
            repeat {
                let page = try dal.findPage(after: cursor, limit: 4, orderBy: OrderBy(order))
                seen += page.items.compactMap(\.id)
                cursor = page.nextCursor
                // Between pages: rows before, at and after the current position.
                round += 1
                let last = page.items.last
                try dal.insertRange([
                    SortKeyRow(i: .min + round, r: -1e308, t: "", d: Date(timeIntervalSince1970: 0), n: nil),
                    SortKeyRow(i: last?.i ?? 0, r: last?.r ?? 0, t: last?.t ?? "", d: last?.d ?? Date(), n: last?.n),
                    SortKeyRow(i: .max - round, r: 1e308, t: "zzz", d: Date(timeIntervalSince1970: 4e9), n: 1000)
                ])
            } while cursor != nil && round < 1_000  // a cursor that never gets past the inserts: below, not a hang
            #expect(cursor == nil, "\(engine) \(order): paging did not end after \(round) pages")
            #expect(seen.count == Set(seen).count, "\(engine) \(order): a row came twice")
            #expect(initial.isSubset(of: Set(seen)), "\(engine) \(order): a row present from the start was skipped")
        }
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aTamperedTruncatedGarbageOrForeignCursorIsATypedErrorNeverSQL(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let dal = try makeTable(sample)
        let page = try dal.findPage(limit: 3, condition: "i > \(-5)", orderBy: "t DESC, r")
        let token = try #require(page.nextCursor?.token)
        func refused(
            _ text: String, condition: SQL = "i > \(-5)", orderBy: OrderBy = "t DESC, r",
            by other: ReadOnlyDAL<SortKeyRow>? = nil
        )
            -> Bool
        {
            let error = #expect(throws: DALError.self) {
                _ = try (other ?? dal).findPage(
                    after: PageCursor(text), limit: 3, condition: condition, orderBy: orderBy)
            }
            return error?.code == .invalidCursor
        }
        // Accepted as issued, and with other values for the same condition.
        #expect(
            try dal.findPage(after: PageCursor(token), limit: 3, condition: "i > \(-5)", orderBy: "t DESC, r").items
                .count == 3)
        #expect(
            try dal.findPage(after: PageCursor(token), limit: 3, condition: "i > \(-6)", orderBy: "t DESC, r").items
                .count > 0)
        // Every single-character change.
        let characters = Array(token)
        for index in characters.indices {
            var changed = characters
            let position = try #require(urlSafeAlphabet.firstIndex(of: characters[index]))
            changed[index] = urlSafeAlphabet[(position + 1) % urlSafeAlphabet.count]
            #expect(refused(String(changed)), "a change at \(index) was accepted")
        }
        // The same bytes spelled another way (unused low bits of the last character set),
        // on up to three of the next pages' tokens whose length leaves such bits.
        var next = page.nextCursor
        var twins = 0
        while let cursor = next, twins < 3 {
            if let twin = nonCanonicalTwin(of: cursor.token) {
                #expect(refused(twin), "\(twin), the same bytes as \(cursor.token), was accepted")
                twins += 1
            }
            next = try dal.findPage(after: cursor, limit: 3, condition: "i > \(-5)", orderBy: "t DESC, r").nextCursor
        }
        #expect(twins > 0)
        // Truncated, extended, garbage.
        for cut in [1, 2, 5, 20, characters.count / 2, characters.count - 1] {
            #expect(refused(String(characters.dropLast(cut))))
        }
        for text in [
            "", "x", "!!!!", "AAAA", token + "A", token + "AAAA", "' OR 1=1 --", String(repeating: "A", count: 70_000),
            "AQ", Data((0..<200).map { UInt8($0) }).base64EncodedString(),
            Data((0..<200).map { UInt8($0) }).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        ] {
            #expect(refused(text), "\(text.prefix(40)) was accepted")
        }
        // Another key, another order, another condition text, another table.
        #expect(refused(token, by: OtherKeySortKeyDAL(database: sample.database)))
        #expect(refused(token, orderBy: "t, r"))
        #expect(refused(token, orderBy: "t DESC"))
        #expect(refused(token, orderBy: "t DESC, r, i"))
        #expect(refused(token, condition: "i >= \(-5)"))
        #expect(refused(token, condition: ""))
        let userCursor = try #require(try sample.users.findPage(limit: 2, orderBy: "id").nextCursor)
        #expect(
            #expect(throws: DALError.self) { _ = try dal.findPage(after: userCursor, limit: 2, orderBy: "id") }?.code
                == .invalidCursor)
        // The table is as it was, and the DAL still works.
        #expect(try dal.getRecordCount() == 60)
        #expect(httpStatus(for: DALError(.invalidCursor, "bad")) == 400)
        try sample.close()
    }

    /// The plan of each page query: `EXPLAIN QUERY PLAN` on SQLite, `EXPLAIN` on
    /// PostgreSQL (with sequential scans priced out, as the sample tables are tiny), and
    /// on MariaDB each table's access type and index ("users range users_age").
    private func plan(_ query: SQL, _ sample: SampleDatabase, seqscanOff: Bool = true) throws -> String {
        if sample.engine == .mariadb { return try mariaDBPlan(query, sample.database, seeksPricedLow: seqscanOff) }
        return try sample.database.read { db in
            if sample.engine == .postgres && seqscanOff { _ = try db.execute("SET LOCAL enable_seqscan = off") }
            let explain = sample.engine == .sqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN "
            let rows = try db.fetchAll(SQL(sql: explain + query.sql, arguments: query.arguments))
            return try rows.map { try $0.decode(String.self, at: sample.engine == .sqlite ? 3 : 0) }.joined(
                separator: "\n")
        }
    }

    @Test(arguments: Engine.allCases)
    func aPageAfterACursorIsAnIndexRangeOnTheSampleTables(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        func secondPage<E: Entity>(_ dal: ReadOnlyDAL<E>, condition: SQL? = nil, orderBy: OrderBy) throws -> String {
            let first = try dal.findPage(limit: 1, condition: condition, orderBy: orderBy)
            let cursor = try #require(first.nextCursor)
            return try plan(
                try dal.findPageQuery(after: cursor, limit: 1, condition: condition, orderBy: orderBy), sample)
        }
        let byID = try secondPage(sample.users, orderBy: "id")
        let byAge = try secondPage(sample.users, orderBy: "age")  // (age, id) > (?, ?)
        let mixed = try secondPage(sample.users, orderBy: "age DESC, id")  // age <= ? AND (age < ? OR …)
        let ordersOfUser = try secondPage(sample.orders, condition: "user_id = \(1)", orderBy: "id")
        switch engine {
        case .sqlite:
            #expect(byID.contains("SEARCH users USING INTEGER PRIMARY KEY (rowid>?)"), "\(byID)")
            #expect(byAge.contains("SEARCH users USING INDEX users_age (age>?)"), "\(byAge)")
            #expect(mixed.contains("SEARCH users USING INDEX users_age (age<?)"), "\(mixed)")
            #expect(
                ordersOfUser.contains("SEARCH orders USING INDEX orders_user (user_id=? AND rowid>?)"),
                "\(ordersOfUser)")
            for plan in [byID, byAge, mixed, ordersOfUser] {
                #expect(!plan.contains("SCAN users") && !plan.contains("SCAN orders"))
            }
        case .mariadb:
            #expect(byID == "users range PRIMARY", "\(byID)")
            #expect(byAge == "users range users_age", "\(byAge)")
            #expect(mixed == "users range users_age", "\(mixed)")
            #expect(ordersOfUser == "orders range orders_user", "\(ordersOfUser)")
        case .postgres:
            #expect(
                byID.contains("Index Scan using users_pkey on users") && byID.contains("Index Cond: (id > "), "\(byID)")
            #expect(
                byAge.contains("Index Scan using users_age on users") && byAge.contains("Index Cond: (age >= "),
                "\(byAge)")
            #expect(
                mixed.contains("Index Scan Backward using users_age on users")
                    && mixed.contains("Index Cond: (age <= "), "\(mixed)")
            #expect(
                ordersOfUser.contains("Index Scan on orders_user") && ordersOfUser.contains("Index Cond: (user_id = "),
                "\(ordersOfUser)")
            for plan in [byID, byAge, mixed, ordersOfUser] { #expect(!plan.contains("Seq Scan")) }
        }
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func onATableBigEnoughTheRowValueSeekIsTheIndexCondition(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        try sample.database.write { db in
            try db.create(sortKeys)
            let fill =
                switch engine {
                case .sqlite:
                    "WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 20000) "
                        + "INSERT INTO sort_keys (i, r, t, d) SELECT x % 500, x, 't', '2024-01-01' FROM g"
                case .postgres:
                    "INSERT INTO sort_keys (i, r, t, d) SELECT g % 500, g, 't', '2024-01-01' FROM generate_series(1, 20000) g"
                case .mariadb:
                    "INSERT INTO sort_keys (i, r, t, d) SELECT seq % 500, seq, 't', '2024-01-01' FROM seq_1_to_20000"
                }
            _ = try db.execute(sql: fill)
            _ = try db.execute(sql: engine == .mariadb ? "ANALYZE TABLE sort_keys" : "ANALYZE")
        }
        let dal = SortKeyDAL(database: sample.database)
        let first = try dal.findPage(limit: 20, orderBy: "i")
        let query = try dal.findPageQuery(after: first.nextCursor, limit: 20, orderBy: "i")
        #expect(
            query.sql.contains(
                engine == .mariadb ? #"("i" >= ? AND ("i" > ? OR ("i" = ? AND "id" > ?)))"# : #"(("i", "id") > (?, ?))"#
            ),
            "\(query.sql)")
        let observed = try plan(query, sample, seqscanOff: false)  // the planner's own choice
        switch engine {
        case .sqlite: #expect(observed.contains("SEARCH sort_keys USING INDEX sort_keys_i (i>?)"), "\(observed)")
        case .mariadb: #expect(observed == "sort_keys range sort_keys_i", "\(observed)")  // not `index`: a scan
        case .postgres:
            #expect(observed.contains("Index Scan using sort_keys_i on sort_keys"), "\(observed)")
            #expect(observed.contains("Index Cond: (ROW(i, id) > ROW("), "\(observed)")
        }
        // And the pages are right: the 20,000 rows, once each, in order.
        var count = 0
        var previous: (Int64, Int64)?
        var cursor: PageCursor?
        repeat {
            let page = try dal.findPage(after: cursor, limit: 700, orderBy: "i")
            for row in page.items {
                let key = (row.i, row.id ?? 0)
                if let previous { #expect(previous < key) }
                previous = key
            }
            count += page.items.count
            cursor = page.nextCursor
        } while cursor != nil
        #expect(count == 20_000)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func asyncPagesAreTheSame(_ engine: Engine) async throws {
        let sample = try SampleDatabase(engine)
        let first = try await sample.users.findPage(limit: 3, orderBy: "age DESC")
        let second = try await sample.users.findPage(after: first.nextCursor, limit: 3, orderBy: "age DESC")
        let all = try await sample.users.getAll(orderBy: "age DESC, id DESC")
        #expect((first.items + second.items) == Array(all.prefix(6)))
        try sample.close()
    }
}
