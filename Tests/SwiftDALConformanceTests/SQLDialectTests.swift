import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// Records every statement a database runs during an operation, under the operation's
/// label: its text as the observer is told it (SwiftDAL's text: `?` for single statements
/// on PostgreSQL, the `$n` it sends for pipelined ones), newlines shown as `\n`, then the
/// rows it read or changed, and whether it failed.
private final class SQLRecorder {
    /// The observer to give the database.
    let log = EventLog()
    private var lines = [String]()

    /// Runs `body` with its statements recorded under `label`.
    func record<R>(_ label: String, _ body: () throws -> R) rethrows -> R {
        let (result, events) = try log.during(body)
        append(label, events)
        return result
    }

    /// `record` for an `async` operation.
    func record<R>(_ label: String, _ body: () async throws -> R) async rethrows -> R {
        let (result, events) = try await log.whileAwaiting(body)
        append(label, events)
        return result
    }

    private func append(_ label: String, _ events: [StatementEvent]) {
        lines.append("-- \(label)")
        for event in events {
            let text = event.sql.replacingOccurrences(of: "\n", with: "\\n")
            lines.append(text + "  ⇒ \(event.rowCount) rows" + (event.error == nil ? "" : ", failed"))
        }
    }

    var transcript: String { lines.joined(separator: "\n") + "\n" }
}

/// A note of a tenant, soft-deleted by a mark: the scoped operations' SQL.
private struct TenantNote: Entity, Codable {
    static let tableName = "tenant_notes"
    var id: Int64?
    var tenantID: Int64?
    var title: String
    var deletedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, title
        case tenantID = "tenant_id"
        case deletedAt = "deleted_at"
    }
}

private final class TenantNoteDAL: BaseDAL<TenantNote>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "tenant_id", softDeleteColumn: "deleted_at") }
}

private let tenantNotes = TableDefinition("tenant_notes") { t in
    t.column("id", .integer)
    t.column("tenant_id", .integer, notNull: true)
    t.column("title", .text, notNull: true)
    t.column("deleted_at", .text)
    t.primaryKey(["id"])
}

/// The SQL each BaseDAL operation writes, per engine, against a committed transcript
/// (`Tests/SwiftDALConformanceTests/Golden/sql-<engine>.txt`): what a reviewer reads to see
/// the statements a change makes the library send, and a test that fails when they change
/// unnoticed. After an intended change, rewrite the transcripts with
/// `SWIFTDAL_RECORD_GOLDEN=1 swift test --filter SQLDialectTests` and review the diff.
@Suite struct SQLDialectTests {
    @Test(arguments: Engine.allCases)
    func eachOperationWritesTheSQLOfItsTranscript(_ engine: Engine) async throws {
        let recorder = SQLRecorder()
        // One connection to read with: a connection opened inside an operation would add
        // its session statements to the transcript.
        var (sqlite, postgres, mariadb) = SampleDatabase.oneConnection
        sqlite.observer = recorder.log
        postgres.observer = recorder.log
        mariadb.observer = recorder.log
        let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        defer { try? sample.close() }
        let users = sample.users
        try runOperations(sample, recorder)
        _ = try await recorder.record("stream") {
            var count = 0
            for try await _ in users.stream(condition: "age < \(100)") { count += 1 }
            return count
        }
        try compare(recorder.transcript, toGolden: "sql-\(engine.rawValue).txt")
    }

    /// Every synchronous operation, each recorded under its name.
    private func runOperations(_ sample: SampleDatabase, _ r: SQLRecorder) throws {
        try sample.database.write { db in try db.create(tenantNotes) }
        let users = sample.users
        let tags = sample.tags
        let notes = TenantNoteDAL(database: sample.database, tenant: Int64(7))
        // Mappings are made (and the catalog read) at first use: not part of an operation.
        _ = try users.getRecordCount()
        _ = try tags.getRecordCount()
        _ = try notes.getRecordCount()
        let ann = try #require(try users.findById(1))
        _ = try r.record("findById") { try users.findById(1) }
        _ = try r.record("findById, composite key") { try tags.findById(CompositeKey(Int64(1), "admin")) }
        _ = try r.record("findByIds") { try users.findByIds([1, 2, 3]) }
        _ = try r.record("find, a list of 101 values") {
            try users.find(condition: "id IN (\(values: Array(Int64(1)...101)))", orderBy: "id")
        }
        _ = try r.record("find(condition:orderBy:)") { try users.find(condition: "age >= \(30)", orderBy: "age DESC") }
        _ = try r.record("findSingle") { try users.findSingle(condition: "email = \(ann.email)") }
        _ = try r.record("findFirst") { try users.findFirst() }
        _ = try r.record("findLast") { try users.findLast(orderBy: "age") }
        _ = try r.record("findTop") { try users.findTop(2, condition: nil, orderBy: nil) }
        _ = try r.record("findWithPager") {
            try users.findWithPager(condition: "age >= \(18)", pager: PagerInfo(pageIndex: 2, pageSize: 2))
        }
        let first = try r.record("findPage, first") { try users.findPage(limit: 2, orderBy: "age") }
        _ = try r.record("findPage, after a cursor") {
            try users.findPage(after: first.nextCursor, limit: 2, orderBy: "age")
        }
        _ = try r.record("getAll") { try users.getAll() }
        _ = try r.record("getRecordCount") { try users.getRecordCount(condition: "age > \(20)") }
        _ = try r.record("isExistRecord") { try users.isExistRecord(condition: "name = \("ann")") }
        _ = try r.record("isExist(fieldName:value:)") { try users.isExist(fieldName: "email", value: ann.email) }
        _ = try r.record("getFieldValue") { try users.getFieldValue(1, fieldName: "name", as: String.self) }
        _ = try r.record("getFieldList") { try users.getFieldList("age", condition: nil, as: Int.self) }

        let newcomer = UserInfo(
            name: "zed", email: "zed@example.com", age: 40, createdAt: Date(timeIntervalSince1970: 0))
        try r.record("insert") { try users.insert(newcomer) }
        let id = try r.record("insert2") {
            try users.insert2(
                UserInfo(name: "yan", email: "yan@example.com", age: 41, createdAt: Date(timeIntervalSince1970: 0)))
        }
        var yan = try #require(try users.findById(id))
        _ = try r.record("update, nothing changed") { try users.update(yan) }
        yan.age += 1
        _ = try r.record("update, one column changed") { try users.update(yan) }
        _ = try r.record("updateFields") { try users.updateFields(["score": 1.5], key: id) }
        yan.score = 2.5
        try r.record("upsert, an existing row") { try users.upsert(yan) }
        try r.record("upsert, a new row") {
            try users.upsert(
                UserInfo(name: "xia", email: "xia@example.com", age: 22, createdAt: Date(timeIntervalSince1970: 0)))
        }
        try r.record("a savepoint rolled back (a duplicate email)") {
            try sample.database.write { db in _ = try? db.inSavepoint { try users.insert(newcomer) } }
        }
        let pairs = (0..<2).map {
            UserInfo(
                name: "pair\($0)", email: "pair\($0)@example.com", age: 20, createdAt: Date(timeIntervalSince1970: 0))
        }
        _ = try r.record("insertRange") { try users.insertRange(pairs) }
        let more = (0..<2).map {
            UserInfo(
                name: "more\($0)", email: "more\($0)@example.com", age: 20, createdAt: Date(timeIntervalSince1970: 0))
        }
        let moreIDs = try r.record("insertRange2") { try users.insertRange2(more) }
        var stored = try users.findByIds(moreIDs)
        for index in stored.indices { stored[index].age += 1 }
        _ = try r.record("updateRange") { try users.updateRange(stored) }
        _ = try r.record("updateFieldsRange") {
            try users.updateFieldsRange(moreIDs.map { (key: $0, fields: ["score": 3.5]) })
        }
        _ = try r.record("updateFieldRange") {
            try users.updateFieldRange("score", moreIDs.map { (key: $0, value: 4.5) })
        }
        _ = try r.record("bulkInsert") {
            try users.bulkInsert([
                UserInfo(name: "bulk", email: "bulk@example.com", age: 30, createdAt: Date(timeIntervalSince1970: 0))
            ])
        }
        _ = try r.record("deleteById") { try users.deleteById(id) }
        _ = try r.record("deleteByCondition") { try users.deleteByCondition("name LIKE \(startingWith: "pair")") }

        let noteID = try r.record("insert2, tenant scope") { try notes.insert2(TenantNote(title: "first")) }
        _ = try r.record("findById, tenant and soft-delete scope") { try notes.findById(noteID) }
        _ = try r.record("getRecordCount, scoped") { try notes.getRecordCount() }
        _ = try r.record("deleteById, soft delete") { try notes.deleteById(noteID) }
        _ = try r.record("restoreById") { try notes.restoreById(noteID) }
        _ = try r.record("purgeById") { try notes.purgeById(noteID) }
    }

    /// Fails, naming the first line that differs, when `transcript` is not the committed
    /// golden file's text; with `SWIFTDAL_RECORD_GOLDEN=1`, writes it instead.
    private func compare(_ transcript: String, toGolden name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name)")
        if ProcessInfo.processInfo.environment["SWIFTDAL_RECORD_GOLDEN"] == "1" {
            try transcript.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        guard golden != transcript else { return }
        let expected = golden.split(separator: "\n", omittingEmptySubsequences: false)
        let actual = transcript.split(separator: "\n", omittingEmptySubsequences: false)
        let line =
            zip(expected, actual).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(expected.count, actual.count)
        let context = actual[..<line].last { $0.hasPrefix("-- ") } ?? "the start"
        Issue.record(
            """
            the SQL differs from Golden/\(name) at line \(line + 1), in \(context):
              expected: \(line < expected.count ? String(expected[line]) : "(end)")
              actual:   \(line < actual.count ? String(actual[line]) : "(end)")
            If the change is intended: SWIFTDAL_RECORD_GOLDEN=1 swift test --filter SQLDialectTests, and review the diff.
            """)
    }
}
