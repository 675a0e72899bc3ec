import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALTestSupport
import Testing

/// A note belongs to a tenant, and is soft-deleted.
private struct ScopedNote: Entity, Codable, Hashable {
    static let tableName = "notes"
    var id: Int64?
    var tenantID: Int64?
    var title: String
    var body: String?
    var createdAt: Date
    var deletedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, title, body
        case tenantID = "tenant_id"
        case createdAt = "created_at"
        case deletedAt = "deleted_at"
    }

    init(
        id: Int64? = nil, tenantID: Int64? = nil, title: String, body: String? = nil, createdAt: Date,
        deletedAt: Date? = nil
    ) {
        self.id = id
        self.tenantID = tenantID
        self.title = title
        self.body = body
        self.createdAt = createdAt
        self.deletedAt = deletedAt
    }
}

/// The tenant's DAL: two lines of scope.
private final class NoteDAL: BaseDAL<ScopedNote>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "tenant_id", softDeleteColumn: "deleted_at") }
    override var defaultSortField: String { "created_at" }
}

/// Every row, for checking what the scoped DALs did (an operator's view).
private final class AllNotesDAL: BaseDAL<ScopedNote>, @unchecked Sendable {}

/// An explicitly mapped entity that does not map the tenant or the soft-delete column.
private struct NoteTitle: Entity, Hashable {
    static let tableName = "notes"
    static let columnNames: [String]? = ["id", "title", "created_at"]
    var id: Int64?
    var title: String
    var createdAt: Date

    init(id: Int64? = nil, title: String, createdAt: Date) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
    }

    init(row: RowView) throws {
        try self.init(id: row[0], title: row[1], createdAt: row[2])
    }

    func encodeColumns(to columns: inout ColumnValues) throws {
        try columns.encode(id, for: "id")
        try columns.encode(title, for: "title")
        try columns.encode(createdAt, for: "created_at")
    }
}

private final class NoteTitleDAL: BaseDAL<NoteTitle>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "tenant_id", softDeleteColumn: "deleted_at") }
}

/// Soft delete only, marking with a value rather than the time.
private final class FlaggedNoteDAL: BaseDAL<ScopedNote>, @unchecked Sendable {
    override var scope: DALScope {
        DALScope(softDeleteColumn: "deleted_at", deletionMark: .value("1999-12-31 23:59:59"))
    }
}

private let notesTable = TableDefinition("notes") { t in
    t.column("id", .integer)
    t.column("tenant_id", .integer, notNull: true)
    t.column("title", .text, notNull: true)
    t.column("body", .text)
    t.column("created_at", .text, notNull: true)
    t.column("deleted_at", .text)
    t.primaryKey(["id"])
    t.index("notes_tenant_created", on: ["tenant_id", "created_at", "id"])
}

private func day(_ n: Int) -> Date { Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 86_400) }

/// Two tenants' notes on `engine`: tenant 1 and tenant 2, five notes each, tenant 2's
/// last one soft-deleted by tenant 2.
private struct TwoTenants {
    let sample: SampleDatabase
    let one: NoteDAL
    let two: NoteDAL
    let all: AllNotesDAL

    init(_ engine: Engine) throws {
        sample = try SampleDatabase(engine)
        try sample.database.write { db in try db.create(notesTable) }
        one = NoteDAL(database: sample.database, tenant: Int64(1))
        two = NoteDAL(database: sample.database, tenant: Int64(2))
        all = AllNotesDAL(database: sample.database)
        for n in 0..<5 {
            try one.insert(ScopedNote(title: "one-\(n)", body: "secret of one", createdAt: day(n)))
            try two.insert(ScopedNote(title: "two-\(n)", body: "secret of two", createdAt: day(n)))
        }
        let last = try #require(try two.findLast())
        #expect(try two.deleteById(try #require(last.id)))
    }
}

@Suite struct ScopeTests {
    /// Tenant 1's DAL tries every BaseDAL operation on tenant 2's rows: by id, by
    /// condition (with ORs that look like injections), by entity; tenant 2's rows come
    /// out exactly as they went in.
    @Test(arguments: Engine.allCases)
    func noBaseDALOperationCrossesATenant(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        let one = world.one
        let before = try world.all.getAll(orderBy: "id")
        let theirs = before.filter { $0.tenantID == 2 }
        let theirIDs = theirs.compactMap(\.id)
        let ourIDs = before.filter { $0.tenantID == 1 }.compactMap(\.id)
        let their = theirs[0]
        let theirID = try #require(their.id)
        let theirDeletedID = try #require(theirs.first { $0.deletedAt != nil }?.id)
        #expect(theirIDs.count == 5 && ourIDs.count == 5)

        func onlyOurs(_ notes: [ScopedNote], _ what: String) {
            #expect(notes.allSatisfy { $0.tenantID == 1 }, "\(engine) \(what) crossed the tenant")
        }
        let escapes: [SQL] = [
            "1 = 1 OR 1 = 1",
            "id = \(theirID) OR 1 = 1",
            "tenant_id = \(2) OR tenant_id <> \(2)",
            "tenant_id = \(2) OR deleted_at IS NOT NULL OR \("x") = \("x")",
            SQL(sql: "tenant_id = :t OR 1 = 1", arguments: ["t": 2])
        ]
        // Finding, counting, existence, field values, paging: each sees tenant 1's live rows only.
        #expect(try one.findById(theirID) == nil)
        #expect(try one.findById(theirDeletedID) == nil)
        #expect(try one.findByIds(theirIDs).isEmpty)
        #expect(Set(try one.findByIds(theirIDs + ourIDs).compactMap(\.id)) == Set(ourIDs))
        for condition in escapes {
            onlyOurs(try one.find(condition: condition), "find")
            onlyOurs(try one.findSingle(condition: condition).map { [$0] } ?? [], "findSingle")
            onlyOurs(try one.findTop(100, condition: condition), "findTop")
            onlyOurs(
                try one.findWithPager(condition: condition, pager: PagerInfo(pageIndex: 1, pageSize: 100)).items,
                "findWithPager")
            #expect(try one.findWithPager(condition: condition, pager: PagerInfo(pageSize: 2)).pager.recordCount == 5)
            onlyOurs(try one.findPage(limit: 100, condition: condition).items, "findPage")
            var streamed = [ScopedNote]()
            try one.forEach(condition: condition) { streamed.append($0) }
            onlyOurs(streamed, "forEach")
            #expect(try one.getRecordCount(condition: condition) == 5)
            #expect(Set(try one.getFieldList("tenant_id", condition: condition, as: Int64.self)) == [1])
        }
        #expect(try !one.isExistRecord(condition: "tenant_id = \(2)"))
        #expect(try !one.isExistRecord(condition: "id = \(theirID)"))
        #expect(try !one.isExist(fieldName: "tenant_id", value: 2))
        #expect(try !one.isExist(fieldName: "title", value: their.title))
        #expect(try !one.isExist(fieldName: "id", value: theirID))
        #expect(try one.getFieldValue(theirID, fieldName: "body", as: String.self) == nil)
        #expect(try one.getFieldList("tenant_id", as: Int64.self) == [1])
        onlyOurs(try one.getAll(), "getAll")
        onlyOurs([try #require(try one.findFirst()), try #require(try one.findLast())], "findFirst/findLast")
        onlyOurs(try one.fetchEntities("SELECT * FROM notes"), "fetchEntities")
        #expect(try one.fetchEntities("SELECT * FROM notes WHERE tenant_id = \(2)").isEmpty)
        onlyOurs(try one.includingDeleted.find(condition: "1 = 1 OR tenant_id = \(2)"), "includingDeleted.find")
        #expect(try one.includingDeleted.findById(theirDeletedID) == nil)
        #expect(try one.includingDeleted.getRecordCount() == 5)
        // A condition that would close the scope's parentheses is refused, never run.
        for broken: SQL in [
            SQL(sql: "1 = 1) OR (1 = 1"), SQL(sql: "1 = 1 --"), SQL(sql: "1 = 1 /*"), SQL(sql: "title = 'x")
        ] {
            #expect(#expect(throws: DALError.self) { _ = try one.find(condition: broken) }?.code == .invalidSQL)
            #expect(#expect(throws: DALError.self) { _ = try one.deleteByCondition(broken) }?.code == .invalidSQL)
        }
        #expect(
            #expect(throws: DALError.self) {
                _ = try one.fetchEntities(SQL(sql: "SELECT * FROM notes) AS x WHERE (1 = 1"))
            }?.code
                == .invalidSQL)
        // Their cursor is not ours.
        let theirCursor = try #require(try world.two.findPage(limit: 1).nextCursor)
        #expect(
            #expect(throws: DALError.self) { _ = try one.findPage(after: theirCursor, limit: 10) }?.code
                == .invalidCursor)

        // Writing their rows by key: nothing found, nothing written.
        var stolen = their
        stolen.title = "stolen"
        // It carries their tenant:
        #expect(#expect(throws: DALError.self) { _ = try one.update(stolen) }?.code == .scopeViolation)
        #expect(#expect(throws: DALError.self) { _ = try one.update(stolen, key: theirID) }?.code == .scopeViolation)
        stolen.tenantID = nil  // "keep the row's tenant": still not ours to find
        #expect(try !one.update(stolen))
        #expect(try !one.update(stolen, key: theirID))
        stolen.tenantID = 1  // "it is ours now": not found either
        #expect(try !one.update(stolen))
        #expect(try !one.updateFields(["title": "stolen"], key: theirID))
        #expect(try !one.updateField("title", to: "stolen", key: theirID))
        #expect(try one.updateRange([stolen]) == 0)
        #expect(try one.updateFieldsRange([(key: theirID, fields: ["title": "stolen"])]) == 0)
        #expect(try one.updateFieldRange("title", [(key: theirID, value: "stolen")]) == 0)
        #expect(try !one.deleteById(theirID))
        #expect(try !one.purgeById(theirID))
        #expect(try !one.restoreById(theirDeletedID))
        // Their key, our tenant:
        #expect(#expect(throws: DALError.self) { try one.upsert(stolen) }?.code == .scopeViolation)
        #expect(#expect(throws: DALError.self) { try one.upsertRange([stolen]) }?.code == .scopeViolation)
        stolen.tenantID = 2
        #expect(#expect(throws: DALError.self) { try one.upsert(stolen) }?.code == .scopeViolation)
        // Writing rows that carry their tenant, or moving ours there: refused.
        #expect(
            #expect(throws: DALError.self) {
                try one.insert(ScopedNote(tenantID: 2, title: "planted", createdAt: day(9)))
            }?.code
                == .scopeViolation)
        #expect(
            #expect(throws: DALError.self) {
                _ = try one.insert2(ScopedNote(tenantID: 2, title: "planted", createdAt: day(9)))
            }?.code
                == .scopeViolation)
        #expect(
            #expect(throws: DALError.self) {
                _ = try one.insertRange([
                    ScopedNote(title: "fine", createdAt: day(9)),
                    ScopedNote(tenantID: 2, title: "planted", createdAt: day(9))
                ])
            }?.code == .scopeViolation)
        #expect(try one.find(condition: "title = \("fine")").isEmpty)  // all or none
        #expect(
            #expect(throws: DALError.self) {
                try one.upsert(ScopedNote(tenantID: 2, title: "planted", createdAt: day(9)))
            }?.code
                == .scopeViolation)
        var ours = try #require(try one.findById(ourIDs[0]))
        ours.tenantID = 2
        #expect(#expect(throws: DALError.self) { _ = try one.update(ours) }?.code == .scopeViolation)
        #expect(#expect(throws: DALError.self) { _ = try one.update(ours, key: ourIDs[0]) }?.code == .scopeViolation)
        #expect(
            #expect(throws: DALError.self) { _ = try one.updateFields(["tenant_id": 2], key: ourIDs[0]) }?.code
                == .scopeViolation)
        #expect(
            #expect(throws: DALError.self) { _ = try one.updateField("Tenant_ID", to: 2, key: ourIDs[0]) }?.code
                == .scopeViolation)
        #expect(
            #expect(throws: DALError.self) { _ = try one.updateFieldRange("tenant_id", [(key: ourIDs[0], value: 2)]) }?
                .code == .scopeViolation)
        #expect(
            #expect(throws: DALError.self) { _ = try one.updateFields(["tenant_id": 1, "title": "x"], key: ourIDs[0]) }?
                .code
                == .scopeViolation)
        #expect(httpStatus(for: DALError(.scopeViolation, "no")) == 403)

        // Deleting and purging by conditions that try to reach them: only ours go.
        #expect(try one.deleteByCondition("id = \(theirID) OR 1 = 1") == 5)
        #expect(try one.purgeByCondition("tenant_id = \(2) OR 1 = 1") == 5)
        // Their rows are byte for byte as before; ours are gone.
        #expect(try world.all.find(condition: "tenant_id = \(2)", orderBy: "id") == theirs)
        #expect(try world.all.getRecordCount(condition: "tenant_id = \(1)") == 0)
        #expect(try world.two.getRecordCount() == 4)
        try world.sample.close()
    }

    /// Parentheses hidden where one engine reads a string or a comment and a naive reading
    /// does not (PostgreSQL's dollar quotes, `E'\''` strings, nested comments): the check
    /// reads each condition the way its engine will, so none escapes the tenant. On
    /// SQLite these texts are refused or fail as SQL; on PostgreSQL they are refused.
    @Test(arguments: Engine.allCases)
    func parenthesesHiddenInTheEnginesQuotingNeverEscapeTheScope(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        let one = world.one
        let before = try world.all.getAll(orderBy: "id")
        let hiding = [
            "$$ ( $$ = 'x' OR 1=1) OR (1=1 OR $$ ) $$ = 'y'",
            "$a$ ( $a$ = 'x' OR 1=1) OR (1=1 OR $a$ ) $a$ = 'y'",
            #"E'\'' = 'a' OR 1=1) OR (E'\'' = 'b'"#,
            "/* /* */ ( */ 1=1) OR (1=1 /* /* */ ) */",
            "/* ( */ 1=1) OR (1=1 /* ) */",
            "[ ( ] = 1) OR (1 = 1 OR [ ) ] = 1",
            "` ( ` = 1) OR (1 = 1 OR ` ) ` = 1"
        ]
        for text in hiding {
            let condition = SQL(sql: text)
            #expect(throws: (any Error).self, "\(engine) \(text)") { _ = try one.find(condition: condition) }
            #expect(throws: (any Error).self) { _ = try one.getRecordCount(condition: condition) }
            #expect(throws: (any Error).self) { _ = try one.deleteByCondition(condition) }
            #expect(throws: (any Error).self) { _ = try one.purgeByCondition(condition) }
            #expect(throws: (any Error).self) {
                _ = try one.fetchEntities(SQL(sql: "SELECT * FROM notes WHERE " + text))
            }
        }
        #expect(try world.all.getAll(orderBy: "id") == before)
        // Texts each engine reads its own way (found in review): SQLite's `$a(…)`
        // parameters hide a quote; PostgreSQL ends a `--` comment at a carriage return and
        // reads `x$$$` as one name; with `standard_conforming_strings` off a backslash
        // escapes a quote in any string. Each is refused, fails as SQL, or stays inside.
        let theirs = before.filter { $0.tenantID == 2 }
        let readTheirOwnWay: [SQL] = [
            SQL(sql: "$a(')IS NULL) OR 1=1 OR ($b(')IS NULL", arguments: [nil, nil]),
            SQL(sql: "false -- \r) OR true OR (false\n"),
            SQL(sql: "1 = (SELECT 1 AS x$$$)) OR (1 = (SELECT 1 AS y$$)"),
            SQL(sql: #"'\'' ) OR true OR ( '\''"#),
            // PostgreSQL continues a literal after a line break, an E'…' with its escapes
            // (found by a differential fuzz against the server).
            SQL(sql: "E''\n'\\'x'<>'\\')OR(true--'\n"),
            SQL(sql: "E'x'\r\n  -- note\n'\\'x'='\\' ) OR true OR (1=1 -- '\n"),
            SQL(sql: "E'x' -- note\n'\\'x'='\\' ) OR true OR (1=1 -- '\n")
        ]
        for condition in readTheirOwnWay {
            if let found = try? one.find(condition: condition) {
                #expect(found.allSatisfy { $0.tenantID == 1 }, "\(engine) \(condition.sql) crossed the tenant")
            }
            if let count = try? one.getRecordCount(condition: condition) { #expect(count <= 5, "\(condition.sql)") }
            _ = try? one.deleteByCondition(condition)
            _ = try? one.purgeByCondition(condition)
        }
        // A parameter right after a `$` (found by a second fuzz): PostgreSQL's `$?` once
        // became `$$1`, the start of a dollar quote the check had read as code.
        let besideDollar: [SQL] = [
            SQL(sql: "$?$$)OR $1::int=$2)--$$", arguments: [1]),
            SQL(sql: "title=$:a||$$)OR $1||$2<>'')--$$", arguments: ["a": "x"]),
            SQL(sql: "title=$@a||$$)OR $1||$2<>'')--$$", arguments: ["a": "x"])
        ]
        for condition in besideDollar {
            if let found = try? one.find(condition: condition) {
                #expect(found.allSatisfy { $0.tenantID == 1 }, "\(engine) \(condition.sql) crossed the tenant")
            }
            if let count = try? one.getRecordCount(condition: condition) { #expect(count <= 5, "\(condition.sql)") }
            _ = try? one.deleteByCondition(condition)
        }
        #expect(try world.all.getAll(orderBy: "id").filter { $0.tenantID == 2 } == theirs)
        if engine == .postgres {
            // All but the first are PostgreSQL's own readings: the check refuses them.
            for condition in readTheirOwnWay.dropFirst() {
                #expect(#expect(throws: DALError.self) { _ = try one.find(condition: condition) }?.code == .invalidSQL)
            }
        }
        if engine == .postgres {
            // What PostgreSQL reads as a string is a string: a parenthesis in it is fine.
            #expect(try one.getRecordCount(condition: "title <> $$(not a parenthesis$$") == 5)
            #expect(try one.getRecordCount(condition: #"title <> E'it\'s ('"#) == 5)
            #expect(try one.getRecordCount(condition: "/* /* ( */ ) */ title <> ''") == 5)
        }
    }

    @Test(arguments: Engine.allCases)
    func insertsTakeTheDALsTenantAndUpdatesKeepIt(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        let id = try world.one.insert2(ScopedNote(title: "new", createdAt: day(20)))
        #expect(try world.all.findById(id)?.tenantID == 1)
        let same = try world.one.insert2(ScopedNote(tenantID: 1, title: "explicit", createdAt: day(21)))
        #expect(try world.all.findById(same)?.tenantID == 1)
        // An update with the tenant left nil keeps the row's tenant.
        var note = try #require(try world.one.findById(id))
        note.tenantID = nil
        note.title = "renamed"
        #expect(try world.one.update(note))
        #expect(try world.all.findById(id)?.tenantID == 1)
        #expect(try world.all.findById(id)?.title == "renamed")
        // Upsert inside the scope: an insert, then an update.
        try world.one.upsert(ScopedNote(id: 500, title: "upserted", createdAt: day(22)))
        #expect(try world.all.findById(500)?.tenantID == 1)
        try world.one.upsert(ScopedNote(id: 500, title: "upserted again", createdAt: day(22)))
        #expect(try world.one.findById(500)?.title == "upserted again")
        // An explicit entity that does not map the tenant column gets it too.
        let titles = NoteTitleDAL(database: world.sample.database, tenant: Int64(2))
        let titleID = try titles.insert2(NoteTitle(title: "no tenant property", createdAt: day(23)))
        #expect(try world.all.findById(titleID)?.tenantID == 2)
        #expect(try titles.findById(titleID)?.title == "no tenant property")
        #expect(try titles.getRecordCount() == 5)  // tenant 2's live notes
        #expect(try world.all.getRecordCount() == 14)
        try world.sample.close()
    }

    /// `updateFields` of several columns in a scoped DAL writes the row whose key it names
    /// if that row is the tenant's, and nothing else: checked where a key and a tenant
    /// number could be mistaken for each other (tenant 50's DAL, another tenant's row 50,
    /// key 51), from outside the scope.
    @Test(arguments: Engine.allCases)
    func updateFieldsWritesTheTenantsRowAndNoOther(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        let ours = try #require(try world.one.getAll(orderBy: "id").last?.id)
        #expect(try world.one.updateFields(["title": "retitled", "body": "rewritten"], key: ours))
        let written = try #require(try world.all.findById(ours))
        #expect(written.title == "retitled" && written.body == "rewritten" && written.tenantID == 1)
        // Row 50 is tenant 51's; tenant 50's DAL asks for its own row 51, which does not exist.
        try world.all.insert(ScopedNote(id: 50, tenantID: 51, title: "theirs", body: "kept", createdAt: day(30)))
        let fifty = NoteDAL(database: world.sample.database, tenant: Int64(50))
        #expect(try !fifty.updateFields(["title": "taken", "body": "overwritten"], key: Int64(51)))
        let theirs = try #require(try world.all.findById(Int64(50)))
        #expect(theirs.title == "theirs" && theirs.body == "kept" && theirs.tenantID == 51)
        #expect(try world.all.getRecordCount(condition: "title = \("retitled")") == 1)
        try world.sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aScopedDALWithoutATenantReadsNothingAndWritesNothing(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        let missing: Int64? = nil
        for dal in [NoteDAL(database: world.sample.database), NoteDAL(database: world.sample.database, tenant: missing)]
        {
            func required(_ body: () throws -> Void) -> Bool {
                #expect(throws: DALError.self, performing: body)?.code == .tenantRequired
            }
            #expect(required { _ = try dal.getAll() })
            #expect(required { _ = try dal.findById(1) })
            #expect(required { _ = try dal.findByIds([1, 2]) })
            #expect(required { _ = try dal.find(condition: "1 = 1") })
            #expect(required { _ = try dal.findPage(limit: 5) })
            #expect(required { _ = try dal.findWithPager(pager: PagerInfo()) })
            #expect(required { _ = try dal.getRecordCount() })
            #expect(required { _ = try dal.isExist(fieldName: "id", value: 1) })
            #expect(required { _ = try dal.getFieldValue(1, fieldName: "title") })
            #expect(required { _ = try dal.fetchEntities("SELECT * FROM notes") })
            #expect(required { _ = try dal.includingDeleted.getAll() })
            #expect(required { try dal.insert(ScopedNote(title: "x", createdAt: day(1))) })
            #expect(required { _ = try dal.updateFields(["title": "x"], key: 1) })
            #expect(required { _ = try dal.deleteById(1) })
            #expect(required { _ = try dal.deleteByCondition("1 = 1") })
            #expect(required { _ = try dal.purgeByCondition("1 = 1") })
            #expect(dal.tenant == nil)
        }
        // A tenant given to a DAL that declares no tenant column is refused too.
        let confused = AllNotesDAL(database: world.sample.database, tenant: Int64(1))
        #expect(#expect(throws: DALError.self) { _ = try confused.getAll() }?.code == .unsupportedOperation)
        #expect(world.one.tenant == .integer(1))
        #expect(try world.all.getRecordCount() == 10)
        try world.sample.close()
    }

    @Test(arguments: Engine.allCases)
    func softDeleteHidesRowsAndIncludingDeletedRestoreAndPurgeReachThem(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        let one = world.one
        let notes = try one.getAll()
        let id = try #require(notes[1].id)
        #expect(try one.deleteById(id))
        #expect(try !one.deleteById(id))  // already deleted: invisible
        // Hidden from every read.
        #expect(try one.findById(id) == nil)
        #expect(try one.getRecordCount() == 4)
        #expect(try !one.isExist(fieldName: "id", value: id))
        #expect(try one.getFieldValue(id, fieldName: "title", as: String.self) == nil)
        #expect(try !one.getAll().contains { $0.id == id })
        #expect(try !one.findPage(limit: 10).items.contains { $0.id == id })
        #expect(try !one.update(notes[1]))
        #expect(try !one.updateFields(["title": "x"], key: id))
        // Still in the table, marked with the database's time; the view reads it.
        let stored = try #require(try one.includingDeleted.findById(id))
        let deletedAt = try #require(stored.deletedAt)
        #expect(abs(deletedAt.timeIntervalSinceNow) < 600)
        #expect(try one.includingDeleted.getRecordCount() == 5)
        #expect(try one.includingDeleted.find(condition: "deleted_at IS NOT NULL").compactMap(\.id) == [id])
        #expect(try one.includingDeleted.findPage(limit: 10).items.count == 5)
        // Upserting its key does not bring it back behind the caller's back.
        #expect(#expect(throws: DALError.self) { try one.upsert(stored) }?.code == .scopeViolation)
        // Restore, soft delete by condition, purge.
        #expect(try one.restoreById(id))
        #expect(try !one.restoreById(id))
        #expect(try one.findById(id)?.deletedAt == nil)
        #expect(try one.deleteByCondition("title LIKE \(startingWith: "one-")") == 5)
        #expect(try one.getRecordCount() == 0)
        #expect(try one.includingDeleted.getRecordCount() == 5)
        #expect(try one.purgeById(id))
        #expect(try one.includingDeleted.getRecordCount() == 4)
        #expect(
            try one.purgeByCondition(
                SQL(sql: "deleted_at IS NOT NULL AND title <> :keep", arguments: ["keep": "one-0"])) == 3)
        #expect(try one.includingDeleted.getAll().map(\.title) == ["one-0"])
        #expect(#expect(throws: DALError.self) { _ = try one.purgeByCondition("") }?.code == .invalidValue)
        // A DAL without soft delete cannot restore; its deletes delete.
        #expect(#expect(throws: DALError.self) { _ = try world.all.restoreById(id) }?.code == .unsupportedOperation)
        #expect(try world.two.getRecordCount() == 4)
        try world.sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aDeletionMarkValueAndNamedConditionsAreBound(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        let flagged = FlaggedNoteDAL(database: world.sample.database)
        let count = try flagged.deleteByCondition(
            SQL(sql: "title = :a OR title = :b", arguments: ["a": "one-0", "b": "two-0"]))
        #expect(count == 2)
        #expect(try flagged.deleteById(try #require(try world.all.find(condition: "title = \("one-1")").first?.id)))
        let marked = try world.all.find(condition: "deleted_at = \("1999-12-31 23:59:59")")
        #expect(Set(marked.map(\.title)) == ["one-0", "two-0", "one-1"])
        #expect(try flagged.getRecordCount() == 6)  // 10, less tenant 2's earlier delete, less 3
        // Named arguments beside the tenant's, on every kind of read.
        let named = SQL(sql: "title <> :skip", arguments: ["skip": "one-2"])
        #expect(try world.one.find(condition: named).map(\.title) == ["one-3", "one-4"])
        #expect(try world.one.getRecordCount(condition: named) == 2)
        #expect(try world.one.findPage(limit: 1, condition: named).nextCursor != nil)
        #expect(
            try world.one.findWithPager(condition: named, pager: PagerInfo(pageIndex: 1, pageSize: 1)).pager.recordCount
                == 2)
        try world.sample.close()
    }

    @Test(arguments: Engine.allCases)
    func aTenantsPagesUseTheTenantIndex(_ engine: Engine) throws {
        let world = try TwoTenants(engine)
        var all = [ScopedNote]()
        var cursor: PageCursor?
        repeat {
            let page = try world.one.findPage(after: cursor, limit: 2)
            all += page.items
            cursor = page.nextCursor
        } while cursor != nil
        #expect(all.map(\.title) == ["one-0", "one-1", "one-2", "one-3", "one-4"])
        let first = try world.one.findPage(limit: 2)
        let query = try world.one.findPageQuery(after: first.nextCursor, limit: 2)
        let seek =
            engine == .mariadb
            ? #"("created_at" >= ? AND ("created_at" > ? OR ("created_at" = ? AND "id" > ?)))"#
            : #"(("created_at", "id") > (?, ?))"#
        #expect(
            query.sql.contains(#"WHERE ("tenant_id" = ? AND "deleted_at" IS NULL) AND "# + seek), "\(query.sql)")
        if engine == .mariadb {
            let plan = try mariaDBPlan(query, world.sample.database, seeksPricedLow: true)
            // The tenant's rows in the index's order from the tenant's first (`ref`, on a
            // table this small) or from the cursor (`range`): the index either way.
            #expect(["notes ref notes_tenant_created", "notes range notes_tenant_created"].contains(plan), "\(plan)")
            try world.sample.close()
            return
        }
        let plan = try world.sample.database.read { db in
            if engine == .postgres { _ = try db.execute("SET LOCAL enable_seqscan = off") }
            let explain = engine == .sqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN "
            return try db.fetchAll(SQL(sql: explain + query.sql, arguments: query.arguments)).map {
                try $0.decode(String.self, at: engine == .sqlite ? 3 : 0)
            }.joined(separator: "\n")
        }
        switch engine {
        case .sqlite:
            #expect(
                plan.contains("SEARCH notes USING INDEX notes_tenant_created (tenant_id=? AND created_at>?)"), "\(plan)"
            )
        case .postgres:
            #expect(plan.contains("Index Scan using notes_tenant_created on notes"), "\(plan)")
            #expect(plan.contains("ROW(created_at, id) > ROW("), "\(plan)")
        case .mariadb: break  // above
        }
        try world.sample.close()
    }

    @Test(arguments: Engine.allCases)
    func asyncFormsKeepTheScope(_ engine: Engine) async throws {
        let world = try TwoTenants(engine)
        let theirs = try await world.all.find(condition: "tenant_id = \(2)").compactMap(\.id)
        let found = try await world.one.findById(theirs[0])
        #expect(found == nil)
        let deleted = try await world.one.deleteById(theirs[0])
        #expect(!deleted)
        let purged = try await world.one.purgeById(theirs[0])
        #expect(!purged)
        let restored = try await world.one.restoreById(theirs[0])
        #expect(!restored)
        let removed = try await world.one.purgeByCondition("1 = 1")
        #expect(removed == 5)
        let page = try await world.two.findPage(limit: 10)
        #expect(page.items.count == 4)
        try world.sample.close()
    }
}
