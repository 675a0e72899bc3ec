import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// An explicitly mapped entity without a table definition, as `swiftdal-gen` writes
/// them: known to `verifySchema()` by its column list alone.
private protocol ListedColumns: Entity {
    var id: Int64? { get }
    init(id: Int64?)
}

extension ListedColumns {
    init(row: RowView) throws { self.init(id: try row[0]) }
    func encodeColumns(to columns: inout ColumnValues) throws { try columns.encode(id, for: "id") }
}

private struct UserColumns: ListedColumns {
    static let tableName = "users"
    static let columnNames: [String]? = ["id", "name", "email", "age"]
    var id: Int64?
}

private struct UserColumnsWithoutEmail: ListedColumns {
    static let tableName = "users"
    static let columnNames: [String]? = ["id", "name", "age"]
    var id: Int64?
}

private struct UserColumnsAndNickname: ListedColumns {
    static let tableName = "users"
    static let columnNames: [String]? = ["id", "name", "email", "nickname"]
    var id: Int64?
}

private final class UsersByEmail: BaseDAL<UserColumns>, @unchecked Sendable {
    override var primaryKey: [String] { ["email"] }
}

@Suite struct ConformanceTests {
    /// Every statement of a `read` sees one snapshot (a page and its total agree): a row
    /// another session commits while the read runs is not seen by the read's later
    /// statements, and is seen once the read ends. The row is committed from outside the
    /// pool on the servers (`psql`, the `mariadb` client), by the pool's writer on another
    /// thread on SQLite (whose file has no second client here).
    @Test(arguments: Engine.allCases)
    func everyStatementOfAReadSeesOneSnapshot(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let insert = "INSERT INTO users(name, email, age) VALUES ('snapshot', 'snapshot@example.com', 30)"
        let (before, during, pageTotal) = try sample.database.read { db in
            let before = try sample.users.getRecordCount()
            if try sample.fromOutside(insert) == nil {
                let written = DispatchSemaphore(value: 0)
                let failure = Locked<(any Error)?>(nil)
                Thread {
                    do { try sample.database.write { try $0.execute(sql: insert) } } catch {
                        failure.withLock { $0 = error }
                    }
                    written.signal()
                }.start()
                written.wait()
                if let error = failure.withLock({ $0 }) { throw error }
            }
            let during = try sample.users.getRecordCount()
            let page = try sample.users.findWithPager(pager: PagerInfo(pageIndex: 1, pageSize: 100))
            #expect(page.items.count == page.pager.recordCount, "the page and its total come from one snapshot")
            return (before, during, page.pager.recordCount)
        }
        #expect(during == before, "a row committed during the read was seen by it")
        #expect(pageTotal == before)
        #expect(try sample.users.getRecordCount() == before + 1, "the row was committed")
        if let outside = try sample.fromOutside("SELECT COUNT(*) FROM users") { #expect(Int(outside) == before + 1) }
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func theSampleDataReadsTheSameOnBothEngines(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let reference = try SampleDatabase(.sqlite)
        #expect(try sample.users.getAll(orderBy: "id") == reference.users.getAll(orderBy: "id"))
        #expect(try sample.orders.getAll(orderBy: "id") == reference.orders.getAll(orderBy: "id"))
        #expect(try sample.tags.getAll() == reference.tags.getAll())
        #expect(try sample.users.getRecordCount() == 8)
        try SampleSchema.verify(users: sample.users, orders: sample.orders, tags: sample.tags)
        try sample.close()
        try reference.close()
    }

    @Test(arguments: Engine.allCases)
    func findsCountsAndFieldValues(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let alice = try #require(try sample.users.findById(1))
        #expect(alice.email == "alice@example.com")
        #expect(try sample.users.findById(999) == nil)
        #expect(Set(try sample.users.findByIds([3, 1, 999]).compactMap(\.id)) == [1, 3])
        #expect(Set(try sample.users.findByIds(Array(1...500)).compactMap(\.id)) == Set(1...8))
        #expect(try sample.users.findByEmail("bob@example.com")?.id == 2)
        let older = try sample.users.find(condition: "age >= \(30)", orderBy: "age DESC, id").map(\.age)
        #expect(!older.isEmpty)
        #expect(older == older.sorted(by: >))
        #expect(older.allSatisfy { $0 >= 30 })
        #expect(try sample.users.findTop(2, orderBy: "id").compactMap(\.id) == [1, 2])
        #expect(try sample.users.findFirst(orderBy: "id")?.id == 1)
        #expect(try sample.users.findLast(orderBy: "id")?.id == 8)
        #expect(try sample.users.getRecordCount(condition: "age > \(100)") == 0)
        #expect(try sample.users.isExistRecord(condition: "email = \("alice@example.com")"))
        #expect(try sample.users.isExist(fieldName: "email", value: "bob@example.com"))
        #expect(try !sample.users.isExist(fieldName: "email", value: "nobody@example.com"))
        #expect(try sample.users.getFieldValue(2, fieldName: "email", as: String.self) == "bob@example.com")
        #expect(try sample.tags.tags(of: 1) == ["admin", "early-adopter"])
        #expect(
            try sample.users.sqlValueList("SELECT email FROM users WHERE id < \(3) ORDER BY id", as: String.self)
                == ["alice@example.com", "bob@example.com"])
        let page = try sample.users.findWithPager(
            condition: "age > \(0)", pager: PagerInfo(pageIndex: 2, pageSize: 3), orderBy: "id")
        #expect(page.items.compactMap(\.id) == [4, 5, 6])
        #expect(page.pager.recordCount == 8)
        // LIKE helpers escape wildcards on both engines (case rules differ: see the README).
        #expect(try sample.users.find(condition: "email LIKE \(startingWith: "alice")").count == 1)
        #expect(try sample.users.find(condition: "email LIKE \(containing: "%")").isEmpty)
        // Long value lists bind as one JSON array on both engines.
        let ids = Array(1...1000)
        #expect(try sample.users.getRecordCount(condition: "id IN (\(values: ids))") == 8)
        let emails = (1...300).map { "user\($0)@example.com" } + ["alice@example.com"]
        #expect(try sample.users.getRecordCount(condition: "email IN (\(values: emails))") == 1)
        try sample.close()
    }

    /// Pages by offset give every row one place: rows that tie on the sort column come in
    /// the key's order, so walking every page shows each row exactly once, in the order of
    /// one query sorted by the column and then the key. (Without the key, PostgreSQL's and
    /// MariaDB's top-N sorts put tied rows differently for each offset: Chinook's invoices
    /// by date, 7 a page, skipped 8 of 412 on PostgreSQL and 17 on MariaDB.)
    @Test(arguments: Engine.allCases)
    func pagesByOffsetShowEveryRowOnceWhenTheSortColumnHasTies(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let ages = [30, 31, 32, 33, 34, 35]
        try sample.users.insertRange(
            (0..<400).map { UserInfo(name: "tie \($0)", email: "tie\($0)@example.com", age: ages[($0 * 7) % 6]) })
        let orders: [(OrderBy, SQL)] = [
            ("age", "SELECT id FROM users ORDER BY age, id"),
            ("age DESC", "SELECT id FROM users ORDER BY age DESC, id DESC")
        ]
        for (orderBy, inOneQuery) in orders {
            var shown = [Int64]()
            for pageIndex in 1... {
                let page = try sample.users.findWithPager(
                    pager: PagerInfo(pageIndex: pageIndex, pageSize: 7), orderBy: orderBy)
                shown += page.items.compactMap(\.id)
                if page.items.count < 7 || pageIndex > 100 { break }
            }
            #expect(Set(shown).count == shown.count, "\(orderBy): a row shown twice")
            #expect(shown == (try sample.users.sqlValueList(inOneQuery, as: Int64.self)), "\(orderBy)")
        }
    }

    /// A key the entity carries is the key stored, 0 included (MariaDB's default
    /// `sql_mode` would make a new key for 0, which SQLite and PostgreSQL store as given);
    /// a `nil` key makes a new one.
    @Test(arguments: Engine.allCases)
    func aKeyOfZeroIsStoredAsGiven(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let zero = try sample.users.insert2(UserInfo(id: 0, name: "zero", email: "zero@example.com", age: 40))
        #expect(zero == 0)
        #expect(try sample.users.sqlValueList("SELECT name FROM users WHERE id = 0", as: String.self) == ["zero"])
        // The server's own client sees the row under key 0 (psql, the mariadb client).
        if let outside = try sample.fromOutside("SELECT name FROM users WHERE id = 0") { #expect(outside == "zero") }
        let made = try sample.users.insert2(UserInfo(name: "made", email: "made@example.com", age: 41))
        #expect(made > 8)
        #expect(
            try sample.users.sqlValueList("SELECT name FROM users WHERE id = \(made)", as: String.self) == ["made"])
        #expect(try sample.users.getRecordCount() == 10)
    }

    /// `verifySchema()` checks an entity known only by its column list (a generated one)
    /// against the table: a list that matches passes; a missing column, a `NOT NULL`
    /// column without a default left out, and another primary key are each named.
    @Test(arguments: Engine.allCases)
    func anEntityWithoutADefinitionIsCheckedByItsColumns(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        try BaseDAL<UserColumns>(database: sample.database).verifySchema()
        let checks: [(() throws -> Void, String)] = [
            (
                { try BaseDAL<UserColumnsAndNickname>(database: sample.database).verifySchema() },
                "column nickname is missing"
            ),
            (
                { try BaseDAL<UserColumnsWithoutEmail>(database: sample.database).verifySchema() },
                "column email is NOT NULL without a default but the entity does not write it"
            ),
            ({ try UsersByEmail(database: sample.database).verifySchema() }, "primary key is (id), expected (email)")
        ]
        for (check, problem) in checks {
            let error = #expect(throws: DALError.self) { try check() }
            #expect(error?.code == .schemaMismatch)
            #expect(error?.message.contains(problem) == true, "\(String(describing: error))")
        }
    }

    /// `fetchScalar` reads as a row's column does: the typed types (`Int`, `Bool`, …) the
    /// same on every engine, `NULL` and no row as `nil`, of several rows the first, and a
    /// value of another kind a conversion error naming the column and the type asked for
    /// (not its optional).
    @Test(arguments: Engine.allCases)
    func aScalarReadsAsAColumnDoes(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        try sample.database.read { (db: Database) throws -> Void in
            #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 8)
            #expect(try db.fetchScalar(Bool.self, "SELECT COUNT(*) > 0 FROM users") == true)
            #expect(try db.fetchScalar(Bool.self, "SELECT COUNT(*) > 100 FROM users") == false)
            #expect(try db.fetchScalar(Int64.self, "SELECT MAX(age) FROM users WHERE id > 100") == nil)
            #expect(try db.fetchScalar(String.self, "SELECT email FROM users WHERE id = 100") == nil)
            #expect(try db.fetchScalar(Double.self, "SELECT score FROM users WHERE id = 1") != nil)
            #expect(try db.fetchScalar(Int?.self, "SELECT MAX(age) FROM users WHERE id > 100") == nil)
            // Of several rows, the first: a scalar, a row, a mapped row.
            let byID: SQL = "SELECT id FROM users ORDER BY id"
            let ids = try db.fetchColumn(Int64.self, byID)
            #expect(ids.count > 2)
            #expect(try db.fetchScalar(Int64.self, byID) == ids.first)
            #expect(try db.fetchScalar(Int64?.self, byID) == ids.first)
            #expect(try db.fetchOne(byID)?.decode(Int64.self, at: 0) == ids.first)
            #expect(try db.fetchFirst(byID) { try $0.decode(Int64.self, at: 0) } == ids.first)
            let error = #expect(throws: DALError.self) {
                _ = try db.fetchScalar(Bool.self, "SELECT email AS address FROM users WHERE id = 1")
            }
            #expect(error?.code == .conversionFailed)
            #expect(error?.message.contains("address") == true, "\(String(describing: error))")
            #expect(error?.message.contains("to Bool") == true, "\(String(describing: error))")
            #expect(error?.message.contains("alice") == false)
        }
    }

    @Test(arguments: Engine.allCases)
    func writesKeepTheirMeaning(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let id = try sample.users.insert2(
            UserInfo(name: "ivy", email: "ivy@example.com", age: 22, avatar: Data([0, 1, 255])))
        #expect(id == 9)
        var ivy = try #require(try sample.users.findById(id))
        #expect(ivy.avatar == Data([0, 1, 255]))
        ivy.age = 23
        #expect(try sample.users.update(ivy))
        #expect(try sample.users.findById(id)?.age == 23)
        #expect(try sample.users.updateFields(["bio": "hello", "score": 2.5], key: id))
        #expect(try sample.users.findById(id)?.bio == "hello")
        #expect(try sample.users.updateField("bio", to: "again", key: id))
        #expect(try sample.users.updateField("age", to: 24, key: id))
        #expect(try sample.users.updateField("bio", to: "none", key: 999) == false)
        #expect(try sample.users.findById(id)?.bio == "again" && sample.users.findById(id)?.age == 24)
        ivy.email = "ivy2@example.com"
        try sample.users.upsert(ivy)
        #expect(try sample.users.findById(id)?.email == "ivy2@example.com")
        try sample.users.upsert(UserInfo(id: 50, name: "new", email: "new@example.com", age: 1))
        #expect(try sample.users.findById(50)?.name == "new")
        let inserted = try sample.orders.insertRange([
            OrderInfo(userID: id, product: "Pen", quantity: 2, unitPrice: Decimal(string: "1.25")!),
            OrderInfo(userID: id, product: "Ink", quantity: 1, unitPrice: Decimal(string: "10.10")!)
        ])
        #expect(inserted == 2)
        #expect(try sample.orders.totalSpent(by: id) == Decimal(string: "12.60"))
        #expect(try sample.orders.deleteByCondition("user_id = \(id) AND product = \("Ink")") == 1)
        #expect(try sample.users.deleteById(50))
        #expect(try !sample.users.deleteById(50))
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func insert2OnACompositeKeyRefusesInsteadOfLying(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        let error = #expect(throws: DALError.self) { _ = try sample.tags.insert2(UserTag(userID: 2, tag: "new-tag")) }
        #expect(error?.code == .noRowID)
        #expect(try sample.tags.tags(of: 2).contains("new-tag") == false)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func constraintErrorsAreCaughtWithTheSamePatterns(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        func kind(_ body: () throws -> Void) -> ConstraintKind? {
            do {
                try body()
                return nil
            } catch SQLiteError.constraintUnique {
                return .unique
            } catch SQLiteError.constraintForeignKey {
                return .foreignKey
            } catch SQLiteError.constraintCheck {
                return .check
            } catch let error as any DatabaseError {
                return error.constraintKind
            } catch {
                return nil
            }
        }
        #expect(kind { try sample.users.insert(UserInfo(name: "x", email: "alice@example.com", age: 1)) } == .unique)
        #expect(
            kind { try sample.orders.insert(OrderInfo(userID: 999, product: "x", quantity: 1, unitPrice: 1)) }
                == .foreignKey)
        #expect(
            kind { try sample.orders.insert(OrderInfo(userID: 1, product: "x", quantity: 0, unitPrice: 1)) } == .check)
        #expect(kind { try sample.users.insert(UserInfo(name: "x", email: "neg@example.com", age: -1)) } == .check)
        #expect(
            kind { try sample.tags.insert(UserTag(userID: 1, tag: "admin")) }.map { $0 == .primaryKey || $0 == .unique }
                == true)
        // The pool keeps working after every error.
        #expect(try sample.users.getRecordCount() == 8)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aRestrictedDeleteIsAForeignKeyErrorOnEveryEngine(_ engine: Engine) throws {
        // SQLite runs a RESTRICT action as a trigger and reports its failure as one (1811).
        let sample = try SampleDatabase(engine)
        try sample.database.write { db in
            try db.create(
                TableDefinition("restricted_notes") { t in
                    t.column("id", .integer)
                    t.column("user_id", .integer, notNull: true)
                    t.primaryKey(["id"])
                    t.foreignKey(
                        ["user_id"], references: "users", columns: ["id"], onDelete: .restrict, onUpdate: .restrict)
                })
            _ = try db.execute("INSERT INTO restricted_notes (id, user_id) VALUES (1, 2)")
        }
        var caught: ConstraintKind?
        do {
            _ = try sample.users.deleteById(2)
        } catch SQLiteError.constraintForeignKey {
            caught = .foreignKey
        } catch let error as any DatabaseError {
            Issue.record("not caught by the foreign key's pattern: \(error)")
        }
        #expect(caught == .foreignKey)
        let error = #expect(throws: (any Error).self) { _ = try sample.users.deleteById(2) }
        let databaseError = error as? any DatabaseError
        #expect(databaseError?.constraintKind == .foreignKey)
        #expect(databaseError?.constraintViolation?.kind == .foreignKey)
        #expect(error.map(httpStatus(for:)) == 422)
        let update = #expect(throws: (any Error).self) {
            try sample.database.write { db in _ = try db.execute("UPDATE users SET id = 100 WHERE id = 2") }
        }
        #expect((update as? any DatabaseError)?.constraintKind == .foreignKey)
        // Nothing was deleted: the user is still there, and so is the note.
        #expect(try sample.users.findById(2) != nil)
        let notes = try sample.database.read { db in
            try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM restricted_notes")
        }
        #expect(notes == 1)
        try sample.close()
    }

    /// The same failure has the same category on every engine, read from the engine's own
    /// codes (SQLite's result codes, SQLSTATEs, MariaDB's numbers).
    @Test(arguments: Engine.allCases)
    func errorsHaveTheSameCategoryOnEveryEngine(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        func category(_ body: () throws -> Void) -> DatabaseErrorCategory? {
            do {
                try body()
                return nil
            } catch let error as any DatabaseError {
                if error.category == .other { Issue.record("\(engine): \(error) has no category") }
                return error.category
            } catch {
                Issue.record("\(engine): not an engine error: \(error)")
                return nil
            }
        }
        #expect(
            category { try sample.users.insert(UserInfo(name: "x", email: "alice@example.com", age: 1)) } == .constraint
        )
        #expect(
            category { try sample.orders.insert(OrderInfo(userID: 999, product: "x", quantity: 1, unitPrice: 1)) }
                == .constraint)
        #expect(category { try sample.database.read { db in _ = try db.execute("SELEC 1") } } == .invalidStatement)
        #expect(
            category { try sample.database.read { db in _ = try db.fetchAll("SELECT * FROM no_such_table") } }
                == .invalidStatement)
        if engine.isServer {
            // A value out of its type's range, computed by the server.
            let overflow: SQL =
                engine == .postgres ? "SELECT CAST(99999999999 AS INTEGER)" : "SELECT 9223372036854775807 + 1"
            #expect(category { try sample.database.read { db in _ = try db.fetchAll(overflow) } } == .invalidValue)
            // A value computed by the statement is the service's own error (500); a value the
            // request gave that the column's type refuses is the request's (422).
            let computed = #expect(throws: (any Error).self) {
                let overflowOrDivision: SQL = engine == .postgres ? "SELECT 1 / 0" : overflow
                try sample.database.read { db in _ = try db.fetchAll(overflowOrDivision) }
            }
            #expect(computed.map(httpStatus(for:)) == 500)
            let refused = #expect(throws: (any Error).self) {
                try sample.database.write { db in
                    _ = try db.execute("INSERT INTO users (name, email, age) VALUES ('x', 'x@example.com', \("abc"))")
                }
            }
            #expect((refused as? any DatabaseError)?.category == .invalidValue)
            #expect(refused.map(httpStatus(for:)) == 422)
        } else {
            // SQLite's datatype mismatch: text where only an integer key can go.
            let refused = #expect(throws: (any Error).self) {
                try sample.database.write { db in
                    _ = try db.execute("INSERT INTO users (id, name, email) VALUES ('x', 'x', 'x@example.com')")
                }
            }
            #expect((refused as? any DatabaseError)?.category == .invalidValue)
            #expect(refused.map(httpStatus(for:)) == 422)
        }
        #expect(try sample.users.getRecordCount() == 8)  // and the pool goes on working
    }

    @Test(arguments: Engine.allCases)
    func constraintViolationsNameTheirTableAndColumnsForAnAPI(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        func violation(_ body: () throws -> Void) -> (ConstraintViolation?, Int) {
            do {
                try body()
                return (nil, 200)
            } catch let error as any DatabaseError {
                return (error.constraintViolation, httpStatus(for: error))
            } catch {
                return (nil, httpStatus(for: error))
            }
        }
        let unique = violation { try sample.users.insert(UserInfo(name: "x", email: "alice@example.com", age: 1)) }
        #expect(unique.0?.kind == .unique)
        #expect(unique.0?.table == "users")
        #expect(unique.0?.columns == ["email"])
        #expect(unique.1 == 409)
        let key = violation { try sample.tags.insert(UserTag(userID: 1, tag: "admin")) }
        #expect(key.0?.kind == .primaryKey)
        #expect(key.0?.table == "user_tags")
        #expect(key.0?.columns == ["user_id", "tag"])
        #expect(key.1 == 409)
        let notNull = violation {
            try sample.database.write { db in
                _ = try db.execute("INSERT INTO users (name, email) VALUES (NULL, \("nn@example.com"))")
            }
        }
        #expect(notNull.0?.kind == .notNull)
        #expect(notNull.0?.table == "users")
        #expect(notNull.0?.columns == ["name"])
        #expect(notNull.1 == 422)
        let foreignKey = violation {
            try sample.orders.insert(OrderInfo(userID: 999, product: "x", quantity: 1, unitPrice: 1))
        }
        #expect(foreignKey.0?.kind == .foreignKey)
        #expect(foreignKey.1 == 422)
        // SQLite's message names no table or column for a foreign key; the servers' do.
        #expect(foreignKey.0?.columns == (engine == .sqlite ? [] : ["user_id"]))
        let check = violation {
            try sample.orders.insert(OrderInfo(userID: 1, product: "x", quantity: 0, unitPrice: 1))
        }
        #expect(check.0?.kind == .check)
        #expect(check.0?.constraint != nil)
        #expect(check.1 == 422)
        // The rest of the table: not found, a refused column, a plain SQL error.
        #expect(httpStatus(for: DALError(.notFound, "no user 12345", table: "users")) == 404)
        #expect(violation { _ = try sample.users.find(condition: "nope = 1") }.1 != 200)
        #expect(httpStatus(for: CancellationError()) == 499)
        #expect(httpStatus(for: DALError(.timeout, "late")) == 503)
        #expect(httpStatus(for: DALError(.connectionClosed, "shutting down")) == 503)
        #expect(httpStatus(for: DALError(.outcomeUnknown, "lost during COMMIT")) == 500)
        #expect(httpStatus(for: DALError(.invalidColumn, "nope")) == 400)
        #expect(violation { try sample.database.read { db in _ = try db.execute("SELEC 1") } }.1 == 500)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func severalDALCallsShareOneTransaction(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        #expect(throws: TestFailure.self) {
            try sample.database.write { _ in
                let id = try sample.users.insert2(UserInfo(name: "tx", email: "tx@example.com", age: 40))
                try sample.orders.insert(OrderInfo(userID: id, product: "Pen", quantity: 1, unitPrice: 1))
                throw TestFailure()
            }
        }
        #expect(try sample.users.findByEmail("tx@example.com") == nil)
        try sample.database.write { _ in
            let id = try sample.users.insert2(UserInfo(name: "tx", email: "tx@example.com", age: 40))
            try sample.orders.insert(OrderInfo(userID: id, product: "Pen", quantity: 1, unitPrice: 1))
        }
        #expect(try sample.users.findByEmail("tx@example.com") != nil)
        try sample.close()
    }

    @Test(arguments: Engine.allCases)
    func asyncFormsRunOffTheCooperativePool(_ engine: Engine) async throws {
        let sample = try SampleDatabase(engine)
        let count = try await sample.users.getRecordCount()
        #expect(count == 8)
        let alice = try await sample.users.findByEmail("alice@example.com")
        #expect(alice?.id == 1)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    _ = try await sample.users.insert2(
                        UserInfo(name: "t\(index)", email: "t\(index)@example.com", age: index))
                }
            }
            try await group.waitForAll()
        }
        #expect(try await sample.users.getRecordCount() == 16)
        try sample.close()
    }

    /// A transaction SwiftDAL runs ends with the call: a statement of its body that would
    /// end or start one is refused before it is sent, and the call's error rolls back the
    /// rest. (Each engine did something else with it, and the outcome lied: SQLite committed,
    /// then threw with the rows written; PostgreSQL committed and ran the rest on its own,
    /// and a later throw was reported as a rollback; MariaDB began another.) Savepoints,
    /// the body's own included, work as before.
    @Test(arguments: Engine.allCases)
    func aTransactionsBodyCannotEndOrStartOne(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        func count() throws -> Int {
            if let outside = try sample.fromOutside("SELECT COUNT(*) FROM users") { return Int(outside) ?? -1 }
            return try sample.users.getRecordCount()
        }
        let before = try count()
        let controls = [
            "COMMIT", "commit work", "END", "ROLLBACK", "ROLLBACK TRANSACTION", "BEGIN", "START TRANSACTION",
            "  /* a note */ COMMIT", "-- a note\nROLLBACK", "# a note\nCOMMIT"
        ]
        for (index, control) in controls.enumerated() {
            let error = #expect(throws: DALError.self, "\(control)") {
                try sample.database.write { db in
                    try db.execute("INSERT INTO users(name, email, age) VALUES ('a', \("a\(index)@x.org"), 1)")
                    try db.execute(sql: control)
                    try db.execute("INSERT INTO users(name, email, age) VALUES ('b', \("b\(index)@x.org"), 1)")
                }
            }
            #expect(error?.code == .unsupportedOperation, "\(control): \(String(describing: error))")
            #expect(error?.sql == control)
            // The same refused inside a read, and by `fetch…`.
            #expect(throws: DALError.self, "\(control)") {
                try sample.database.read { db in _ = try db.fetchAll(sql: control) }
            }
        }
        // A script that holds one is refused whole, before any of it is sent.
        // (MariaDB has no `END` statement: its `END` closes a compound statement.)
        let scriptControls = ["COMMIT", "ROLLBACK", "BEGIN", "START TRANSACTION"] + (engine == .mariadb ? [] : ["END"])
        for (index, control) in scriptControls.enumerated() {
            let script =
                "INSERT INTO users(name, email, age) VALUES ('s', 's\(index)@x.org', 1); \(control); "
                + "INSERT INTO users(name, email, age) VALUES ('t', 't\(index)@x.org', 1)"
            let error = #expect(throws: DALError.self, "\(control)") {
                try sample.database.write { db in
                    try db.execute("INSERT INTO users(name, email, age) VALUES ('r', \("r\(index)@x.org"), 1)")
                    try db.executeScript(script)
                }
            }
            #expect(error?.code == .unsupportedOperation, "\(control): \(String(describing: error))")
            #expect(error?.sql == script)
        }
        #expect(try count() == before, "a refused statement's transaction wrote nothing")
        // A script without one runs in the body's transaction, a `;` in a literal included.
        struct Undo: Error {}
        #expect(throws: Undo.self) {
            try sample.database.write { db in
                try db.executeScript(
                    "INSERT INTO users(name, email, age) VALUES ('e; COMMIT', 'e@x.org', 1); "
                        + "INSERT INTO users(name, email, age) VALUES ('f', 'f@x.org', 1)")
                let written: SQL = "SELECT COUNT(*) FROM users WHERE email IN ('e@x.org', 'f@x.org')"
                #expect(try db.fetchScalar(Int.self, written) == 2)
                throw Undo()
            }
        }
        #expect(try count() == before, "the script's rows were rolled back with the body's transaction")
        // A body's own savepoints, and words that only look like control, run.
        try sample.database.write { db in
            try db.execute(sql: "SAVEPOINT mine")
            try db.execute("INSERT INTO users(name, email, age) VALUES ('c', 'c@x.org', 1)")
            try db.execute(sql: "ROLLBACK TO SAVEPOINT mine")
            try db.execute(sql: "RELEASE SAVEPOINT mine")
            try db.execute("INSERT INTO users(name, email, age) VALUES ('d', 'd@x.org', 1)")
            #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users WHERE email = 'c@x.org'") == 0)
        }
        #expect(try count() == before + 1)
        // Outside a transaction SwiftDAL runs, the check does not apply: a connection
        // opened by hand may begin and end one itself (SQLite).
        if engine == .sqlite {
            // A schema whose trigger names `end` and ends with `END;` runs in a transaction.
            try sample.database.write { db in
                try db.executeScript(
                    "CREATE TABLE shifts(id INTEGER PRIMARY KEY, start TEXT, end TEXT); "
                        + "CREATE TRIGGER shifts_end AFTER INSERT ON shifts BEGIN "
                        + "UPDATE shifts SET end = new.start WHERE id = new.id; END; "
                        + "INSERT INTO shifts(start) VALUES ('9')")
            }
            #expect(try sample.database.read { try $0.fetchScalar(String.self, "SELECT end FROM shifts") } == "9")
            let db = try Database.inMemory()
            try db.execute(sql: "CREATE TABLE t(x)")
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            try db.execute(sql: "COMMIT")
            #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") == 1)
        }
    }
}

/// MariaDB's plan of `query`, a line per table: its name, access type and index, from
/// `EXPLAIN` ("users range users_age"). With `seeksPricedLow`, the session prices an index
/// seek low first (`max_seeks_for_key = 1`: the sample tables are tiny, and a scan of them
/// would cost less than any index), and back to its default after.
func mariaDBPlan(_ query: SQL, _ database: any DatabaseWriter, seeksPricedLow: Bool) throws -> String {
    try database.read { db in
        if seeksPricedLow { _ = try db.execute("SET SESSION max_seeks_for_key = 1") }
        defer { if seeksPricedLow { _ = try? db.execute("SET SESSION max_seeks_for_key = DEFAULT") } }
        let rows = try db.fetchAll(SQL(sql: "EXPLAIN " + query.sql, arguments: query.arguments))
        return rows.map { row in
            [2, 3, 5].map { (try? row.decode(String.self, at: $0)) ?? "NULL" }.joined(separator: " ")
        }.joined(separator: "\n")
    }
}
