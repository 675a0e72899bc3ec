import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// Every SampleDAL query, and the key operations BaseDAL gives every table, run under the
/// query-plan guard on both engines: none reads a whole table where an index serves;
/// the calls that must read everything (counting a table, a substring search, listing
/// all rows) say so by name.
@Suite struct QueryPlanTests {
    private func guarded(_ engine: Engine) throws -> (SampleDatabase, QueryPlanGuard) {
        let planGuard = QueryPlanGuard()
        var sqlite = Configuration()
        sqlite.observer = planGuard
        var postgres = PostgresConfiguration()
        postgres.observer = planGuard
        var mariadb = MariaDBConfiguration()
        mariadb.observer = planGuard
        return (try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb), planGuard)
    }

    @Test(arguments: Engine.allCases)
    func everySampleDALQueryUsesAnIndex(_ engine: Engine) throws {
        let (sample, planGuard) = try guarded(engine)
        let db = sample.database
        let users = sample.users
        let orders = sample.orders
        let tags = sample.tags
        // UserDAL's own queries.
        #expect(try planGuard.check(db) { try users.findByEmail("alice@example.com") } != nil)
        #expect(try planGuard.check(db) { try users.findByAge(20...30) }.isEmpty == false)
        // OrderDAL's and UserTagDAL's.
        #expect(try planGuard.check(db) { try orders.findByUser(1) }.isEmpty == false)
        _ = try planGuard.check(db) { try orders.totalSpent(by: 1) }
        #expect(try planGuard.check(db) { try tags.tags(of: 1) }.isEmpty == false)
        // BaseDAL's key operations, on every sample table.
        #expect(try planGuard.check(db) { try users.findById(1) } != nil)
        #expect(try planGuard.check(db) { try users.findByIds([1, 2, 3]) }.count == 3)
        #expect(try planGuard.check(db) { try users.getFieldValue(1, fieldName: "email", as: String.self) } != nil)
        #expect(try planGuard.check(db) { try users.isExist(fieldName: "email", value: "alice@example.com") })
        #expect(try planGuard.check(db) { try users.updateFields(["age": 31], key: 1) })
        let alice = try #require(try users.findById(1))
        #expect(try planGuard.check(db) { try users.update(alice) } == true)
        let id = try users.insert2(UserInfo(name: "Planned", email: "planned@example.com", age: 5))
        try planGuard.check(db) {
            try users.upsert(UserInfo(id: id, name: "Planned", email: "planned@example.com", age: 6))
        }
        #expect(try planGuard.check(db) { try users.deleteById(id) })
        #expect(try planGuard.check(db) { try orders.findById(1) } != nil)
        #expect(try planGuard.check(db) { try tags.isExistRecord(condition: "user_id = \(1) AND tag = \("admin")") })
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func theCallsThatReadEverythingAreAllowedByName(_ engine: Engine) throws {
        let (sample, planGuard) = try guarded(engine)
        let db = sample.database
        let users = sample.users
        // A substring search cannot use an index: the guard says so, naming the table…
        let violation = #expect(throws: QueryPlanViolation.self) {
            try planGuard.check(db) { try users.search(keyword: "li") }
        }
        #expect(violation?.scans.first?.table == "users")
        #expect(violation?.description.contains("users") == true)
        // …and passes once the scan is allowed.
        #expect(
            try planGuard.check(db, allowingScansOf: ["users"]) { try users.search(keyword: "li") }.isEmpty == false)
        #expect(try planGuard.check(db, allowingScansOf: ["users"]) { try users.getRecordCount() } == 8)
        #expect(try planGuard.check(db, allowingScansOf: ["users"]) { try users.getAll() }.count == 8)
        // A condition on a column without an index is caught, in a read, a delete and an update.
        #expect(throws: QueryPlanViolation.self) {
            try planGuard.check(db) { try users.find(condition: "bio = \("x")") }
        }
        #expect(throws: QueryPlanViolation.self) {
            try planGuard.check(db) { try users.deleteByCondition("bio = \("x")") }
        }
        #expect(throws: QueryPlanViolation.self) {
            try planGuard.check(db) {
                try db.write { try $0.execute("UPDATE users SET score = 1 WHERE bio = \("x")") }
            }
        }
        try sample.close()
    }

    /// A query that starts with `WITH` is checked like any other; a statement that failed
    /// (its error caught in the body) is not planned, so it does not fail the check.
    @Test(arguments: Engine.allCases)
    func aCommonTableExpressionIsCheckedAndAFailedStatementIsNot(_ engine: Engine) throws {
        let (sample, planGuard) = try guarded(engine)
        let db = sample.database
        let violation = #expect(throws: QueryPlanViolation.self) {
            try planGuard.check(db) {
                try db.read { db in
                    try db.fetchAll("WITH picked AS (SELECT id FROM users WHERE bio = \("x")) SELECT id FROM picked")
                }
            }
        }
        #expect(violation?.scans.contains { $0.table == "users" } == true, "\(String(describing: violation))")
        let found = try planGuard.check(db) {
            #expect(throws: (any Error).self) {
                try db.read { try $0.fetchAll("SELECT id FROM no_such_table WHERE id = \(1)") }
            }
            return try sample.users.findById(1)
        }
        #expect(found?.id == 1)
        try sample.close()
    }

    @Test func aGuardThatIsNotTheObserverRefusesToPass() throws {
        let planGuard = QueryPlanGuard()
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)") }
        let error = #expect(throws: DALError.self) {
            try planGuard.check(queue) { try queue.read { db in try db.fetchAll("SELECT * FROM t WHERE v = \("x")") } }
        }
        #expect(error?.message.contains("observer") == true)
    }
}
