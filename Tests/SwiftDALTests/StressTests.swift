import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct StressTests {
    /// Six tasks for a bounded time (about a second and a half, and at least 20 operations
    /// each however slow the machine): inserts, updates, deletes and consistent reads
    /// through the pool. Every task keeps its own tally; at the end the table holds exactly
    /// what the tallies say, and nothing threw (no SQLITE_BUSY).
    @Test func mixedConcurrentWorkForABoundedTimeEndsWithExactCounts() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("stress.sqlite"), template: sampleDatabase)
        let users = UserDAL(database: pool)
        let orders = OrderDAL(database: pool)
        let deadline = ContinuousClock.now + .milliseconds(1500)
        let minimumOperations = 20
        let tallies = try await withThrowingTaskGroup(of: (users: Int, orders: Int, operations: Int).self) { group in
            for task in 0..<6 {
                group.addTask {
                    var tally = (users: 0, orders: 0, operations: 0)
                    var mine: [Int64] = []
                    var step = 0
                    while step < minimumOperations || ContinuousClock.now < deadline {
                        step += 1
                        switch (task + step) % 5 {
                        case 0, 1:
                            let user = UserInfo(
                                name: "s\(task)-\(step)", email: "s\(task)-\(step)@stress", age: step % 90)
                            let id = try await pool.write { _ in
                                let id = try users.insert2(user)
                                try orders.insert(OrderInfo(userID: id, product: "p", quantity: 1, unitPrice: 1))
                                return id
                            }
                            mine.append(id)
                            tally.users += 1
                            tally.orders += 1
                        case 2:
                            if let id = mine.last {
                                #expect(try await users.updateFields(["score": Double(step)], key: id))
                            }
                        case 3:
                            if let id = mine.popLast() {
                                #expect(try await users.deleteById(id))  // its order goes with it (cascade)
                                tally.users -= 1
                                tally.orders -= 1
                            }
                        default:
                            let consistent = try await pool.read { db in
                                let orphans =
                                    try db.fetchScalar(
                                        Int.self,
                                        "SELECT COUNT(*) FROM orders WHERE user_id NOT IN (SELECT id FROM users)") ?? -1
                                return orphans == 0
                            }
                            #expect(consistent)
                        }
                        tally.operations += 1
                    }
                    return tally
                }
            }
            var total = (users: 0, orders: 0, operations: 0)
            for try await tally in group {
                total.users += tally.users
                total.orders += tally.orders
                total.operations += tally.operations
            }
            return total
        }
        #expect(tallies.operations >= 6 * minimumOperations)
        #expect(try await users.getRecordCount() == 8 + tallies.users)
        #expect(try await orders.getRecordCount() == 8 + tallies.orders)
        #expect(try await pool.read { try $0.fetchScalar(String.self, "PRAGMA integrity_check") } == "ok")
    }
}
