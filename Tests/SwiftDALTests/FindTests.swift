import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct FindTests {
    @Test func findByIdReturnsTheEntityWithOneCachedStatement() throws {
        let sample = try Sample()
        let alice = try #require(try sample.users.findById(1))
        #expect(alice.name == "alice" && alice.email == "alice@example.com" && alice.age == 34)
        #expect(alice.avatar == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(alice.createdAt == Date(timeIntervalSince1970: 1_704_445_200))
        #expect(sample.recorder.last?.hasSuffix(#"FROM "users" WHERE "id" = ?"#) == true)
        _ = try sample.users.findById(2)
        _ = try sample.queue.read { try $0.cachedStatementCount }  // caches the read's own BEGIN/COMMIT
        let cached = try sample.queue.read { try $0.cachedStatementCount }
        _ = try sample.users.findById(3)
        #expect(try sample.queue.read { try $0.cachedStatementCount } == cached)
    }

    @Test func findByIdReturnsNilForMissingKey() throws {
        let sample = try Sample()
        #expect(try sample.users.findById(424_242) == nil)
        #expect(try sample.users.findById(Int64.max) == nil)
        #expect(try sample.users.findById(Int64.min) == nil)
    }

    @Test func findByIdsSkipsMissingKeysAndUsesTheDefaultOrder() throws {
        let sample = try Sample()
        let found = try sample.users.findByIds([3, 1, 999, 2])
        #expect(found.map(\.name) == ["alice", "bob", "chloé"])  // UserDAL sorts by name
        #expect(try sample.users.findByIds([Int]()).isEmpty)
        let many = try sample.users.findByIds(Array(1...5000))
        #expect(many.count == 8)
        let tags = try sample.tags.findByIds([CompositeKey(1, "admin"), CompositeKey(6, "vip"), CompositeKey(2, "none")]
        )
        #expect(Set(tags) == [UserTag(userID: 1, tag: "admin"), UserTag(userID: 6, tag: "vip")])
    }

    @Test func findWithConditionBindsEveryValue() throws {
        let sample = try Sample()
        let minAge = 30
        let found = try sample.users.find(condition: "age > \(minAge) AND name LIKE \(containing: "a")", orderBy: "age")
        #expect(found.map(\.name) == ["alice", "hana"])
        #expect(sample.recorder.last?.contains("(age > ? AND name LIKE ? ESCAPE '!')") == true)
        #expect(try sample.users.find(condition: "age > \(200)").isEmpty)
        #expect(try sample.users.find(condition: "").count == 8)
    }

    @Test func explicitArgumentsFormsWorkPositionalAndNamed() throws {
        let sample = try Sample()
        let positional = try sample.users.find(condition: SQL(sql: "age BETWEEN ? AND ?", arguments: [20, 30]))
        #expect(positional.map(\.name) == ["bob", "farah", "goro"])
        let named = try sample.users.find(
            condition: SQL(sql: "age >= :min AND score >= :score", arguments: ["min": 30, "score": 90.0]))
        #expect(named.map(\.name) == ["chloé", "farah"])
    }

    @Test func namedArgumentConditionsWorkWithLimitsAndPaging() throws {
        let sample = try Sample()
        let condition = SQL(sql: "age >= :min", arguments: ["min": 30])
        #expect(try sample.users.findSingle(condition: condition, orderBy: "age")?.name == "farah")
        #expect(try sample.users.findTop(2, condition: condition, orderBy: "age DESC").map(\.name) == ["erin", "chloé"])
        let page = try sample.users.findWithPager(
            condition: condition, pager: PagerInfo(pageIndex: 2, pageSize: 2), orderBy: "id")
        #expect(page.items.map(\.id) == [5, 6])
        #expect(page.pager.recordCount == 5)
        #expect(sample.recorder.all.contains { $0.hasSuffix("LIMIT :swiftdal_limit OFFSET :swiftdal_offset") })
        #expect(try sample.users.getRecordCount(condition: condition) == 5)
        #expect(try sample.users.isExistRecord(condition: condition))
    }

    @Test func repeatedQueriesReuseTheirGeneratedSQLAndStatement() throws {
        let sample = try Sample()
        for age in 20..<30 {
            _ = try sample.users.findTop(3, condition: "age > \(age)", orderBy: "score DESC")
        }
        let selects = sample.recorder.all.filter { $0.contains(#"FROM "users""#) }
        #expect(
            Set(selects) == [
                #"SELECT "id", "name", "full_name", "email", "age", "score", "bio", "avatar", "created_at" FROM "users" WHERE (age > ?) ORDER BY "score" DESC LIMIT ?"#
            ])
    }

    @Test func findSingleFirstLastAndTopFollowTheOrder() throws {
        let sample = try Sample()
        #expect(try sample.users.findSingle(condition: "age > \(40)", orderBy: "age DESC")?.name == "erin")
        #expect(try sample.users.findSingle(condition: "age > \(400)") == nil)
        #expect(try sample.users.findFirst()?.name == "alice")
        #expect(try sample.users.findLast()?.name == "hana")
        #expect(try sample.users.findFirst(orderBy: "age")?.name == "dmitri")
        #expect(try sample.users.findLast(orderBy: "age")?.name == "erin")
        #expect(
            try sample.users.findTop(3, orderBy: OrderBy("score", .descending)).map(\.name) == [
                "farah", "chloé", "alice"
            ])
        #expect(try sample.users.findTop(0).isEmpty)
        #expect(#expect(throws: DALError.self) { _ = try sample.users.findTop(-1) }?.code == .invalidValue)
        #expect(try sample.users.findTop(2, condition: "age < \(30)", orderBy: "age").map(\.name) == ["dmitri", "goro"])
    }

    @Test func pagerReturnsThePageAndTheTotalCount() throws {
        let sample = try Sample()
        let page = try sample.users.findWithPager(
            condition: nil, pager: PagerInfo(pageIndex: 3, pageSize: 3), orderBy: "id")
        #expect(page.items.map(\.id) == [7, 8])
        #expect(page.pager.recordCount == 8)
        #expect(page.pager.pageCount == 3)
        let filtered = try sample.users.findWithPager(
            condition: "age >= \(30)", pager: PagerInfo(pageIndex: 1, pageSize: 2), orderBy: "id")
        #expect(filtered.items.map(\.id) == [1, 3])
        #expect(filtered.pager.recordCount == 5)
        let beyond = try sample.users.findWithPager(
            condition: nil, pager: PagerInfo(pageIndex: 9, pageSize: 5), orderBy: nil)
        #expect(beyond.items.isEmpty && beyond.pager.recordCount == 8)
        #expect(
            #expect(throws: DALError.self) {
                _ = try sample.users.findWithPager(
                    condition: nil, pager: PagerInfo(pageIndex: 0, pageSize: 5), orderBy: nil)
            }?.code == .invalidValue)
    }

    @Test func getAllOnAnEmptyTableAndWithOrder() throws {
        let sample = try Sample()
        #expect(try sample.orders.getAll().map(\.id) == [8, 7, 6, 5, 4, 3, 2, 1])  // newest first
        #expect(try sample.users.getAll(orderBy: "id DESC").first?.id == 8)
        _ = try sample.tags.deleteByCondition("1 = 1")
        #expect(try sample.tags.getAll().isEmpty)
        #expect(try sample.tags.findFirst() == nil)
        #expect(try sample.tags.findLast() == nil)
        #expect(try sample.tags.getRecordCount() == 0)
        #expect(try sample.tags.findWithPager(condition: nil, pager: PagerInfo(), orderBy: nil).pager.pageCount == 0)
    }

    @Test func subclassQueriesAndOverriddenDefaultSort() throws {
        let sample = try Sample()
        #expect(sample.users.defaultSortField == "name")
        #expect(sample.orders.defaultSortDirection == .descending)
        #expect(try sample.users.findByEmail("goro@example.com")?.fullName == "Goro Tanaka")
        #expect(try sample.users.findByEmail("GORO@example.com") == nil)
        #expect(try sample.users.search(keyword: "an").map(\.name) == ["dmitri", "goro", "hana"])
        #expect(try sample.users.search(keyword: "100%").map(\.name) == [])
        #expect(try sample.users.findByAge(30...36).map(\.name) == ["hana", "alice", "farah"])
        #expect(try sample.tags.tags(of: 1) == ["admin", "early-adopter"])
        #expect(try sample.orders.totalSpent(by: 1) == Decimal(string: "73.87"))
    }

    @Test func likeWildcardsInAKeywordMatchLiterally() throws {
        let sample = try Sample()
        try sample.users.insert(UserInfo(name: "50%_off", email: "promo@test.example", age: 1))
        try sample.users.insert(UserInfo(name: "5000 off", email: "other@test.example", age: 1))
        #expect(try sample.users.search(keyword: "50%_").map(\.name) == ["50%_off"])
        #expect(try sample.users.search(keyword: "%").map(\.name) == ["50%_off"])
        #expect(try sample.users.search(keyword: "_").map(\.name) == ["50%_off"])
        #expect(try sample.users.search(keyword: "\\").isEmpty)
    }

    @Test func forEachStreamsEveryMatchAndStopsCleanlyOnThrow() throws {
        let sample = try Sample()
        var names = [String]()
        try sample.users.forEach(condition: "age >= \(30)", orderBy: "id") { names.append($0.name) }
        #expect(names == ["alice", "chloé", "erin", "farah", "hana"])
        var seen = 0
        #expect(throws: TestFailure.self) {
            // swift-format-ignore: ReplaceForEachWithForLoop
            // (BaseDAL.forEach streams the table; it is not Sequence.forEach.)
            try sample.users.forEach { _ in
                seen += 1
                if seen == 2 { throw TestFailure() }
            }
        }
        #expect(seen == 2)
        // Nothing was left open: a write goes through at once.
        try sample.users.insert(newUser("after"))
        #expect(try sample.users.getRecordCount() == 9)
    }

    @Test func aLikeKeywordWithNULIsRefusedInsteadOfMatchingEverything() throws {
        let sample = try Sample()
        // SQLite's LIKE stops at NUL: "%\0%" would behave as "%" and match every row.
        let error = #expect(throws: DALError.self) { _ = try sample.users.search(keyword: "\u{0}") }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("NUL") == true)
        #expect(try sample.users.search(keyword: "a").map(\.name) == ["alice", "dmitri", "farah", "goro", "hana"])
    }

    @Test func findByIdsHandlesKeysJSONCannotCarry() throws {
        let sample = try Sample()
        try sample.tags.insert(UserTag(userID: 2, tag: "nul\u{0}tag"))
        let found = try sample.tags.findByIds([
            CompositeKey(2, "nul\u{0}tag"), CompositeKey(1, "admin"), CompositeKey(2, "nul")
        ])
        #expect(Set(found.map(\.tag)) == ["nul\u{0}tag", "admin"])
    }

    @Test func fetchEntitiesRunsCustomJoins() throws {
        let sample = try Sample()
        let buyers = try sample.users.fetchEntities(
            "SELECT u.* FROM users u WHERE EXISTS (SELECT 1 FROM orders o WHERE o.user_id = u.id AND o.product = \("Keyboard")) ORDER BY u.id"
        )
        #expect(buyers.map(\.name) == ["alice", "farah"])
    }
}
