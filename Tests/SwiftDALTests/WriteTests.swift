import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct WriteTests {
    @Test func insert2ReturnsTheNewRowidAndInsertAssignsIt() throws {
        let sample = try Sample()
        let id = try sample.users.insert2(newUser("ivy"))
        #expect(id == 9)
        #expect(
            sample.recorder.all.contains(
                #"INSERT INTO "users" ("name", "full_name", "email", "age", "score", "bio", "avatar", "created_at") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"#
            ))
        try sample.users.insert(newUser("jack"))
        #expect(try sample.users.findByEmail("jack@test.example")?.id == 10)
        let order = try sample.orders.insert2(
            OrderInfo(userID: id, product: "Tea", quantity: 1, unitPrice: Decimal(string: "3.10")!))
        #expect(try sample.orders.findById(order)?.unitPrice == Decimal(string: "3.10"))
    }

    @Test func explicitKeysAboveInt32AndAtInt64MaxRoundTrip() throws {
        let sample = try Sample()
        var big = newUser("big")
        big.id = Int64(Int32.max) + 10
        #expect(try sample.users.insert2(big) == Int64(Int32.max) + 10)
        var max = newUser("max")
        max.id = Int64.max
        #expect(try sample.users.insert2(max) == Int64.max)
        #expect(try sample.users.findById(Int64.max)?.name == "max")
        #expect(try sample.users.findById(Int64(Int32.max) + 10)?.name == "big")
    }

    @Test func duplicateKeysAndUniqueColumnsGiveTypedConstraintErrors() throws {
        let sample = try Sample()
        let email = #expect(throws: SQLiteError.self) {
            try sample.users.insert(UserInfo(name: "x", email: "alice@example.com", age: 1))
        }
        #expect(email?.constraintKind == .unique)
        #expect(email?.message.contains("users.email") == true)
        var duplicate = newUser("dup")
        duplicate.id = 1
        #expect(#expect(throws: SQLiteError.self) { try sample.users.insert(duplicate) }?.constraintKind == .primaryKey)
        #expect(
            #expect(throws: SQLiteError.self) { try sample.tags.insert(UserTag(userID: 1, tag: "admin")) }?
                .constraintKind == .primaryKey)
        let negative = #expect(throws: SQLiteError.self) { try sample.users.insert(newUser("neg", age: -1)) }
        #expect(negative?.constraintKind == .check)
        let orphan = #expect(throws: SQLiteError.self) {
            try sample.orders.insert(OrderInfo(userID: 404, product: "x", quantity: 1, unitPrice: 1))
        }
        #expect(orphan?.constraintKind == .foreignKey)
        #expect(try sample.users.getRecordCount() == 8)
    }

    @Test func insertRangeIsAllOrNothingWithOneStatement() throws {
        let sample = try Sample()
        let batch = (0..<100).map { newUser("batch\($0)") }
        #expect(try sample.users.insertRange(batch) == 100)
        #expect(try sample.users.getRecordCount() == 108)
        let inserts = sample.recorder.all.filter { $0.hasPrefix("INSERT") }
        #expect(Set(inserts).count == 1)
        var broken = (0..<5).map { newUser("broken\($0)") }
        broken[3].email = "alice@example.com"
        #expect(#expect(throws: SQLiteError.self) { try sample.users.insertRange(broken) }?.constraintKind == .unique)
        #expect(try sample.users.getRecordCount(condition: "name LIKE \(startingWith: "broken")") == 0)
        #expect(try sample.users.insertRange([]) == 0)
    }

    @Test func updateWritesEveryNonKeyColumnIncludingNulls() throws {
        let sample = try Sample()
        var alice = try #require(try sample.users.findById(1))
        alice.bio = nil
        alice.avatar = Data()
        alice.score = 1.25
        #expect(try sample.users.update(alice, key: 1))
        let reread = try #require(try sample.users.findById(1))
        #expect(reread.bio == nil && reread.avatar == Data() && reread.score == 1.25)
        #expect(try sample.users.update(alice, key: 999) == false)
        var order = try #require(try sample.orders.findById(3))
        order.quantity = 5
        #expect(try sample.orders.update(order))
        #expect(try sample.orders.findById(3)?.quantity == 5)
        var unsaved = newUser("unsaved")
        unsaved.id = nil
        #expect(try sample.users.update(unsaved) == false)
    }

    @Test func updateFieldsWritesOnlyTheNamedColumns() throws {
        let sample = try Sample()
        #expect(try sample.users.updateFields(["age": 35, "bio": nil], key: 1))
        let alice = try #require(try sample.users.findById(1))
        #expect(alice.age == 35 && alice.bio == nil && alice.name == "alice")
        #expect(try sample.users.updateFields(["age": 1], key: 999) == false)
        #expect(
            #expect(throws: DALError.self) { _ = try sample.users.updateFields([:], key: 1) }?.code == .invalidValue)
        #expect(
            #expect(throws: DALError.self) { _ = try sample.users.updateFields(["age": 1, "AGE": 2], key: 1) }?.code
                == .invalidColumn)
        #expect(
            #expect(throws: DALError.self) { _ = try sample.users.updateFields(["score": Double.nan], key: 1) }?.code
                == .invalidValue)
    }

    @Test func updateFieldWritesOneColumnWhateverItHolds() throws {
        let sample = try Sample()
        #expect(try sample.users.updateField("age", to: 36, key: 1))
        #expect(try sample.users.updateField("BIO", to: nil as String?, key: 1))  // names as updateFields reads them
        let alice = try #require(try sample.users.findById(1))
        #expect(alice.age == 36 && alice.bio == nil && alice.name == "alice")
        #expect(sample.recorder.all.contains(#"UPDATE "users" SET "age" = ? WHERE "id" = ?"#))
        #expect(sample.recorder.all.contains(#"UPDATE "users" SET "bio" = ? WHERE "id" = ?"#))
        #expect(try sample.users.updateField("age", to: 1, key: 999) == false)
        #expect(
            #expect(throws: DALError.self) { _ = try sample.users.updateField("agee", to: 1, key: 1) }?.code
                == .invalidColumn)
        #expect(
            #expect(throws: DALError.self) { _ = try sample.users.updateField("score", to: Double.nan, key: 1) }?.code
                == .invalidValue)
        #expect(try sample.users.findById(1)?.score == alice.score)
    }

    @Test func upsertInsertsThenUpdatesAtomically() throws {
        let sample = try Sample()
        var user = newUser("up")
        user.id = 50
        try sample.users.upsert(user)
        #expect(try sample.users.findById(50)?.name == "up")
        user.name = "up-again"
        try sample.users.upsert(user)
        #expect(try sample.users.findById(50)?.name == "up-again")
        #expect(try sample.users.getRecordCount() == 9)
        #expect(
            sample.recorder.all.contains { $0.contains(#"ON CONFLICT("id") DO UPDATE SET "name" = excluded."name""#) })
        try sample.tags.upsert(UserTag(userID: 2, tag: "vip"))
        try sample.tags.upsert(UserTag(userID: 2, tag: "vip"))
        #expect(try sample.tags.tags(of: 2) == ["vip"])
        var order = try #require(try sample.orders.findById(1))
        order.quantity = 9
        try sample.orders.upsert(order)
        #expect(try sample.orders.findById(1)?.quantity == 9)
        try sample.orders.upsert(OrderInfo(userID: 2, product: "new", quantity: 1, unitPrice: 1))
        #expect(try sample.orders.getRecordCount() == 9)
    }

    @Test func deletesReportWhatTheyDid() throws {
        let sample = try Sample()
        #expect(try sample.users.deleteById(2))
        #expect(try sample.users.deleteById(2) == false)
        // ON DELETE CASCADE removed bob's order: foreign keys are enforced.
        #expect(try sample.orders.getRecordCount(condition: "user_id = \(2)") == 0)
        #expect(try sample.orders.deleteByCondition("quantity >= \(10)") == 2)
        #expect(try sample.orders.deleteByCondition("quantity >= \(10)") == 0)
        #expect(#expect(throws: DALError.self) { _ = try sample.orders.deleteByCondition("") }?.code == .invalidValue)
        #expect(try sample.tags.deleteById(CompositeKey(1, "admin")))
        #expect(try sample.tags.tags(of: 1) == ["early-adopter"])
    }

    /// A condition of only white space (a template that left it blank) is refused as an
    /// empty one is: run, it would delete every row of the table.
    @Test func aBlankConditionIsRefusedAndDeletesNothing() throws {
        let sample = try Sample()
        let before = try sample.queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM orders") }
        for blank: SQL in [" ", "\n\t ", "\u{3000}"] {
            let error = #expect(throws: DALError.self) { _ = try sample.orders.deleteByCondition(blank) }
            #expect(error?.code == .invalidValue)
        }
        #expect(try sample.queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM orders") } == before)
        #expect((before ?? 0) > 0)
    }

    @Test func validateHookRefusesBeforeSQLiteRuns() throws {
        let sample = try Sample()
        let error = #expect(throws: DALError.self) {
            try sample.orders.insert(OrderInfo(userID: 1, product: "x", quantity: 1, unitPrice: -1))
        }
        #expect(error?.code == .invalidValue)
        #expect(error?.column == "unit_price")
        #expect(!sample.recorder.all.contains { $0.hasPrefix("INSERT") })
    }
}
