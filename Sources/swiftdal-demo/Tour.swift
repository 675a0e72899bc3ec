import Foundation
import SampleDAL

/// The tour of every IDAL operation, through UserDAL, OrderDAL and UserTagDAL.
struct Tour {
    /// Checks the schema, then every stop of the tour in order; prints the counts stored.
    func takeEveryStop() async throws {
        try SampleSchema.verify(users: users, orders: orders, tags: tags)
        let visit = try recordVisit()
        print("  this is run #\(visit) on this database")
        try finding()
        try counting()
        try writing(visit: visit)
        try errors()
        try rolledBackTransaction(visit: visit)
        try await asynchronous()
        let (userCount, orderCount) = (try await users.getRecordCount(), try await orders.getRecordCount())
        print("\nDone: \(userCount) users and \(orderCount) orders stored.")
    }

    let pool: any DatabaseWriter
    let users: UserDAL
    let orders: OrderDAL
    let tags: UserTagDAL

    init(pool: any DatabaseWriter) {
        self.pool = pool
        users = UserDAL(database: pool)
        orders = OrderDAL(database: pool)
        tags = UserTagDAL(database: pool)
    }

    func section(_ title: String) {
        print("\n== \(title)")
    }

    func show(_ label: String, _ value: Any) {
        print("  \(label.padding(toLength: 34, withPad: " ", startingAt: 0)) \(value)")
    }

    func describe(_ user: UserInfo?) -> String {
        guard let user else { return "nil" }
        return "#\(user.id ?? 0) \(user.name) <\(user.email)> age \(user.age), score \(user.score)"
    }

    func names(_ list: [UserInfo]) -> String {
        "[" + list.map(\.name).joined(separator: ", ") + "]"
    }

    /// Records this run as a visitor (a row that persists) and returns its number.
    func recordVisit() throws -> Int {
        let previous = try users.getRecordCount(condition: "email LIKE \(endingWith: "@visitors.demo")")
        let number = previous + 1
        let id = try users.insert2(
            UserInfo(
                name: "visitor\(number)", fullName: "Demo Visitor \(number)", email: "visitor\(number)@visitors.demo",
                age: 20 + number % 50, score: Double(number)))
        show("this run's visitor row", "#\(id) visitor\(number)@visitors.demo")
        return number
    }

    func finding() throws {
        section("Finding")
        show("findById(1)", describe(try users.findById(1)))
        show("findById(999) (missing)", describe(try users.findById(999)))
        show("findByIds([1, 3, 999])", names(try users.findByIds([1, 3, 999])))
        show("findSingle(email = …)", describe(try users.findSingle(condition: "email = \("bob@example.com")")))
        show("find(age >= 30, by age DESC)", names(try users.find(condition: "age >= \(30)", orderBy: "age DESC")))
        show("findFirst() (default: by name)", describe(try users.findFirst()))
        show("findLast()", describe(try users.findLast()))
        show("findTop(3, by score DESC)", names(try users.findTop(3, orderBy: "score DESC")))
        let page = try users.findWithPager(condition: nil, pager: PagerInfo(pageIndex: 2, pageSize: 3), orderBy: "id")
        show(
            "findWithPager(page 2 of 3/page)",
            "\(names(page.items)) — \(page.pager.recordCount) records, \(page.pager.pageCount) pages")
        let first = try users.findPage(limit: 3, orderBy: "age DESC")
        let next = try users.findPage(after: first.nextCursor, limit: 3, orderBy: "age DESC")
        show("findPage(3, age DESC), next page", "\(names(first.items)) / \(names(next.items))")
        show("getAll().count", try users.getAll().count)
        show("findByEmail (UserDAL's own)", describe(try users.findByEmail("chloe@example.com")))
        show("search(keyword: \"an\")", names(try users.search(keyword: "an")))
        show("search(keyword: \"100%\") literal %", names(try users.search(keyword: "100%")))
        show("orders.findByUser(1) (newest first)", try orders.findByUser(1).map(\.product))
        show("tags.findById((1, \"admin\"))", try tags.findById(CompositeKey(1, "admin")).map(\.tag) ?? "nil")
    }

    func counting() throws {
        section("Counting, existence, field values")
        show("getRecordCount()", try users.getRecordCount())
        show("getRecordCount(age < 25)", try users.getRecordCount(condition: "age < \(25)"))
        show("isExistRecord(score > 95)", try users.isExistRecord(condition: "score > \(95.0)"))
        show("isExist(email, alice@…)", try users.isExist(fieldName: "email", value: "alice@example.com"))
        show("isExist(email, nobody@…)", try users.isExist(fieldName: "email", value: "nobody@example.com"))
        show("getFieldList(\"product\")", try orders.getFieldList("product", as: String.self))
        show("getFieldValue(1, \"email\")", try users.getFieldValue(1, fieldName: "email", as: String.self) ?? "nil")
        show(
            "sqlValueList(join)",
            try users.sqlValueList(
                "SELECT DISTINCT u.name FROM users u JOIN orders o ON o.user_id = u.id WHERE o.product = \("Keyboard") ORDER BY u.name",
                as: String.self))
        show("orders.totalSpent(by: 3)", try orders.totalSpent(by: 3))
    }

    func writing(visit: Int) throws {
        section("Writing")
        var temp = UserInfo(name: "temp\(visit)", email: "temp\(visit)@demo.example", age: 40, score: 1)
        temp.id = try users.insert2(temp)
        show("insert2(temp user) -> rowid", temp.id ?? 0)
        temp.score = 42.5
        show("update(temp user, score 42.5)", try users.update(temp))
        show("updateFields([bio], key)", try users.updateFields(["bio": "updated by the tour"], key: temp.id ?? 0))
        show("…read back bio", try users.getFieldValue(temp.id ?? 0, fieldName: "bio", as: String.self) ?? "nil")
        let visitor = try users.findByEmail("visitor\(visit)@visitors.demo")
        let visitorID = visitor?.id ?? 1
        let inserted = try orders.insertRange([
            OrderInfo(userID: visitorID, product: "Guide book", quantity: 1, unitPrice: Decimal(string: "12.30") ?? 0),
            OrderInfo(userID: visitorID, product: "Souvenir", quantity: 2, unitPrice: Decimal(string: "4.05") ?? 0)
        ])
        show("orders.insertRange(2 orders)", inserted)
        try orders.insert(
            OrderInfo(userID: visitorID, product: "Coffee", quantity: 1, unitPrice: Decimal(string: "2.80") ?? 0))
        show("orders.insert(coffee)", "ok; visitor spent \(try orders.totalSpent(by: visitorID))")
        try tags.upsert(UserTag(userID: visitorID, tag: "visitor"))
        try tags.upsert(UserTag(userID: visitorID, tag: "visitor"))
        show("tags.upsert twice (atomic)", try tags.tags(of: visitorID))
        var upserted = UserInfo(id: temp.id, name: "temp\(visit)-renamed", email: temp.email, age: 41)
        try users.upsert(upserted)
        upserted = try users.findById(temp.id ?? 0) ?? upserted
        show("upsert(existing id)", describe(upserted))
        show("deleteById(temp user)", try users.deleteById(temp.id ?? 0))
        show("deleteById(again)", try users.deleteById(temp.id ?? 0))
        show(
            "orders.deleteByCondition(coffee)",
            try orders.deleteByCondition("product = \("Coffee") AND user_id = \(visitorID)"))
    }

    func errors() throws {
        section("Errors are thrown, typed and clear")
        do {
            try users.insert(UserInfo(name: "alice2", email: "alice@example.com", age: 30))
            show("duplicate email", "unexpectedly inserted")
        } catch let error as any DatabaseError where error.constraintKind == .unique {
            show("duplicate email insert", "refused by \(error.engine): \(error.message)")
        }
        do {
            _ = try users.getFieldList("email; DROP TABLE users", as: String.self)
        } catch let error as DALError {
            show("hostile field name", "refused: \(error.message.prefix(70))…")
        }
        do {
            _ = try users.find(condition: "name = \("'); DROP TABLE users; --")")
            show("hostile value", "bound as a value: no match, users still has \(try users.getRecordCount()) rows")
        }
        do {
            try orders.insert(OrderInfo(userID: 99_999, product: "Ghost", quantity: 1, unitPrice: 1))
        } catch let error as any DatabaseError where error.constraintKind == .foreignKey {
            show("order for a missing user", "refused by \(error.engine): \(error.message)")
        }
    }

    func rolledBackTransaction(visit: Int) throws {
        section("A two-table transaction, rolled back")
        let before = (try users.getRecordCount(), try orders.getRecordCount())
        struct ChangedMyMind: Error {}
        do {
            try pool.write { _ in
                let id = try users.insert2(UserInfo(name: "ghost\(visit)", email: "ghost\(visit)@demo.example", age: 1))
                try orders.insert(OrderInfo(userID: id, product: "Nothing", quantity: 1, unitPrice: 0))
                show("inside: users/orders", "\(try users.getRecordCount())/\(try orders.getRecordCount())")
                throw ChangedMyMind()
            }
        } catch is ChangedMyMind {
            let after = (try users.getRecordCount(), try orders.getRecordCount())
            show("before → after rollback", "\(before.0)/\(before.1) → \(after.0)/\(after.1)")
        }
    }

    func asynchronous() async throws {
        section("async forms (on SwiftDAL's own threads)")
        async let count = users.getRecordCount()
        async let alice = users.findByEmail("alice@example.com")
        async let page = orders.findWithPager(condition: nil, pager: PagerInfo(pageIndex: 1, pageSize: 2), orderBy: nil)
        show("await getRecordCount()", try await count)
        show("await findByEmail(alice)", describe(try await alice))
        show("await findWithPager(1, 2)", try await page.items.map(\.product))
    }
}
