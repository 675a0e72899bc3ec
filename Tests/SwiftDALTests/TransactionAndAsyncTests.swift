import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct TransactionAndAsyncTests {
    @Test func callsOnTwoDALsInOneWriteAreRolledBackTogether() throws {
        let sample = try Sample()
        #expect(throws: TestFailure.self) {
            try sample.queue.write { _ in
                let id = try sample.users.insert2(newUser("tx"))
                try sample.orders.insert(OrderInfo(userID: id, product: "tx", quantity: 1, unitPrice: 1))
                #expect(try sample.users.getRecordCount() == 9)
                throw TestFailure()
            }
        }
        #expect(try sample.users.getRecordCount() == 8)
        #expect(try sample.orders.getRecordCount() == 8)
        try sample.queue.write { _ in
            let id = try sample.users.insert2(newUser("kept"))
            try sample.orders.insert(OrderInfo(userID: id, product: "kept", quantity: 1, unitPrice: 1))
        }
        #expect(try sample.orders.getRecordCount(condition: "product = \("kept")") == 1)
    }

    @Test func aFailingDALCallInsideAWriteRollsBackTheEarlierOnes() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("tx.sqlite"), template: sampleDatabase)
        let users = UserDAL(database: pool)
        let orders = OrderDAL(database: pool)
        let error = #expect(throws: SQLiteError.self) {
            try pool.write { _ in
                _ = try users.insert2(newUser("first"))
                try orders.insert(OrderInfo(userID: 999, product: "orphan", quantity: 1, unitPrice: 1))
            }
        }
        #expect(error?.constraintKind == .foreignKey)
        #expect(try users.findByEmail("first@test.example") == nil)
        // A nested insertRange joins the outer transaction as a savepoint.
        #expect(throws: TestFailure.self) {
            try pool.write { _ in
                try users.insertRange([newUser("n1"), newUser("n2")])
                throw TestFailure()
            }
        }
        #expect(try users.getRecordCount() == 8)
    }

    @Test func aDALWriteInsideAReadIsRefused() throws {
        let sample = try Sample()
        let error = #expect(throws: DALError.self) {
            try sample.queue.read { _ in try sample.users.insert(newUser("nope")) }
        }
        #expect(error?.code == .writeInReadOnlyAccess)
        #expect(try sample.queue.read { _ in try sample.users.getRecordCount() } == 8)
    }

    @Test func everyAsyncFormWorks() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("async.sqlite"), template: sampleDatabase)
        let users = UserDAL(database: pool)
        let tags = UserTagDAL(database: pool)
        #expect(try await users.findById(1)?.name == "alice")
        #expect(try await users.findByIds([1, 2]).count == 2)
        #expect(try await users.findSingle(condition: "age = \(19)")?.name == "dmitri")
        #expect(try await users.find(condition: "age > \(40)").count == 2)
        #expect(try await users.findFirst()?.name == "alice")
        #expect(try await users.findLast()?.name == "hana")
        #expect(try await users.findTop(2).count == 2)
        #expect(try await users.findWithPager(pager: PagerInfo(pageIndex: 1, pageSize: 5)).pager.recordCount == 8)
        // Every argument reaches the synchronous form: the condition, the page, the order.
        let page = try await users.findWithPager(
            condition: "age > \(20)", pager: PagerInfo(pageIndex: 2, pageSize: 2), orderBy: "age DESC")
        let all = try await users.find(condition: "age > \(20)", orderBy: "age DESC, id DESC")
        #expect(page.items.map(\.id) == all[2..<4].map(\.id))
        #expect(page.pager.recordCount == all.count)
        #expect(try await users.getAll().count == 8)
        #expect(try await users.getRecordCount() == 8)
        #expect(try await users.isExistRecord(condition: "age > \(50)"))
        #expect(try await users.isExist(fieldName: "name", value: "bob"))
        #expect(try await users.getFieldList("age", condition: "age > \(40)", as: Int.self) == [41, 52])
        #expect(try await users.getFieldValue(2, fieldName: "name", as: String.self) == "bob")
        #expect(try await users.sqlValueList("SELECT 1 + \(1)", as: Int.self) == [2])
        #expect(try await users.findByEmail("bob@example.com")?.id == 2)
        try await users.insert(newUser("z1"))
        let id = try await users.insert2(newUser("z2"))
        #expect(try await users.insertRange([newUser("z3"), newUser("z4")]) == 2)
        var user = try #require(try await users.findById(id))
        user.age = 77
        #expect(try await users.update(user, key: id))
        #expect(try await users.update(user))
        #expect(try await users.updateFields(["age": 78], key: id))
        #expect(try await users.updateFieldsRange([(key: id, fields: ["age": 79])]) == 1)
        #expect(try await users.updateFieldRange("age", [(key: id, value: 80), (key: 999_999, value: 1)]) == 1)
        #expect(try await users.findById(id)?.age == 80)
        #expect(try await users.updateRange([user]) == 1)
        try await users.upsertRange([user])
        try await users.upsert(user)
        #expect(try await users.findById(id)?.age == 77)
        try await tags.upsert(UserTag(userID: id, tag: "async"))
        #expect(try await users.deleteById(id))
        #expect(try await users.deleteByCondition("name LIKE \(startingWith: "z")") == 3)
        #expect(try await users.getRecordCount() == 8)
    }

    @Test func asyncWriteAcrossDALsCommitsAndRollsBack() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("async-tx.sqlite"), template: sampleDatabase)
        let users = UserDAL(database: pool)
        let orders = OrderDAL(database: pool)
        do {
            try await pool.write { _ in
                let id = try users.insert2(newUser("async-tx"))
                try orders.insert(OrderInfo(userID: id, product: "x", quantity: 1, unitPrice: 1))
                throw TestFailure()
            }
        } catch is TestFailure {}
        #expect(try await users.getRecordCount() == 8)
        #expect(try await orders.getRecordCount() == 8)
    }

    @Test func concurrentTasksThroughDALsKeepExactCounts() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("stress.sqlite"), template: sampleDatabase)
        let users = UserDAL(database: pool)
        let orders = OrderDAL(database: pool)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        if (task + index) % 3 == 0 {
                            try await pool.write { _ in
                                let id = try users.insert2(newUser("t\(task)i\(index)"))
                                try orders.insert(OrderInfo(userID: id, product: "p", quantity: 1, unitPrice: 1))
                            }
                        } else {
                            let page = try await users.findWithPager(pager: PagerInfo(pageIndex: 1, pageSize: 3))
                            #expect(page.items.count == 3)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let writes = (0..<8).flatMap { task in (0..<25).filter { (task + $0) % 3 == 0 } }.count
        #expect(try await users.getRecordCount() == 8 + writes)
        #expect(try await orders.getRecordCount(condition: "product = \("p")") == writes)
    }
}
