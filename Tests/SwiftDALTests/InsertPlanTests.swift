import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

/// A Codable entity whose encoding leaves out `body` when it is empty: its shape of
/// properties changes from one entity to the next.
struct Memo: Entity, Codable {
    static let tableName = "memos"
    var id: Int64?
    var title: String
    var body: String

    enum CodingKeys: String, CodingKey { case id, title, body }

    init(id: Int64? = nil, title: String, body: String = "") {
        self.id = id
        self.title = title
        self.body = body
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(Int64.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        body = try container.decodeIfPresent(String.self, forKey: .body) ?? ""
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        if !body.isEmpty { try container.encode(body, forKey: .body) }
    }
}

/// The same table, encoded without its key at all.
struct KeylessMemo: Entity, Codable {
    static let tableName = "memos"
    var title: String
}

/// Codable inserts reuse a plan per shape of encoded properties; every shape, key state
/// and statement kind must still produce exactly the row asked for.
@Suite struct InsertPlanTests {
    private func makeMemos() throws -> DatabaseQueue {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE memos(id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT DEFAULT 'none')")
        }
        return queue
    }

    @Test func nullAndExplicitKeysAlternateOnOneShape() throws {
        let memos = BaseDAL<Memo>(database: try makeMemos())
        let first = try memos.insert2(Memo(title: "a", body: "x"))
        let chosen = try memos.insert2(Memo(id: 100, title: "b", body: "y"))
        let next = try memos.insert2(Memo(title: "c", body: "z"))
        #expect(chosen == 100)
        #expect(next == 101)
        #expect(first < chosen)
        #expect(try memos.findById(100)?.title == "b")
        #expect(try memos.getAll().map(\.title) == ["a", "b", "c"])
    }

    @Test func aChangingShapeGetsItsOwnStatement() throws {
        let memos = BaseDAL<Memo>(database: try makeMemos())
        let withBody = try memos.insert2(Memo(title: "a", body: "text"))
        let withoutBody = try memos.insert2(Memo(title: "b"))  // body left out: the column default applies
        let again = try memos.insert2(Memo(title: "c", body: "more"))
        let bodies = try memos.sqlValueList("SELECT body FROM memos ORDER BY id", as: String.self)
        #expect(bodies == ["text", "none", "more"])
        #expect([withBody, withoutBody, again] == [1, 2, 3])
    }

    @Test func upsertAndInsertKeepSeparatePlans() throws {
        let memos = BaseDAL<Memo>(database: try makeMemos())
        let id = try memos.insert2(Memo(title: "a", body: "x"))
        try memos.upsert(Memo(id: id, title: "a2", body: "x2"))
        try memos.upsert(Memo(title: "new", body: "n"))  // no key: a plain insert
        #expect(throws: SQLiteError.self) { try memos.insert(Memo(id: id, title: "dup", body: "d")) }
        #expect(try memos.findById(id)?.title == "a2")
        #expect(try memos.getRecordCount() == 2)
    }

    @Test func anEncodingWithoutTheKeyLetsSQLiteAssignIt() throws {
        let queue = try makeMemos()
        let keyless = BaseDAL<KeylessMemo>(database: queue)
        let first = try keyless.insert2(KeylessMemo(title: "a"))
        let second = try keyless.insert2(KeylessMemo(title: "b"))
        #expect(second == first + 1)
        #expect(try BaseDAL<Memo>(database: queue).findById(second)?.title == "b")
    }

    @Test func compositeKeysAreNeverLeftOut() throws {
        let queue = try DatabaseQueue.inMemory()
        _ = try SampleSchema.migrator.migrate(queue)
        let users = UserDAL(database: queue)
        let tags = UserTagDAL(database: queue)
        let userID = try users.insert2(UserInfo(name: "ann", email: "ann@example.com", age: 30))
        try tags.insert(UserTag(userID: userID, tag: "a"))
        try tags.insert(UserTag(userID: userID, tag: "b"))
        try tags.upsert(UserTag(userID: userID, tag: "b"))
        #expect(try tags.tags(of: userID) == ["a", "b"])
        #expect(throws: SQLiteError.self) { try tags.insert(UserTag(userID: userID, tag: "a")) }
    }
}
