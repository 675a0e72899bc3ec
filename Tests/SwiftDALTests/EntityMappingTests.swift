import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

/// A plain Codable entity with no mapping code: NULLs, JSON-nested values, every type.
struct Note: Entity, Codable, Equatable {
    static let tableName = "notes"

    struct Meta: Codable, Equatable {
        var source: String
        var priority: Int
    }

    var id: Int64?
    var title: String
    var body: String?
    var payload: Data?
    var tags: [String]
    var meta: Meta?
    var createdAt: Date
    var rating: Double?
    var pinned: Bool
    var counter: Int64
    var reference: UUID?
}

final class NoteDAL: BaseDAL<Note>, @unchecked Sendable {}

let notesSchema = """
    CREATE TABLE notes (
        id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, payload BLOB, tags TEXT NOT NULL,
        meta TEXT, createdAt TEXT NOT NULL, rating REAL, pinned INTEGER NOT NULL, counter INTEGER NOT NULL,
        reference TEXT
    );
    """

func makeNotes() throws -> (DatabaseQueue, NoteDAL) {
    let queue = try DatabaseQueue.inMemory()
    try queue.write { try $0.executeScript(notesSchema) }
    return (queue, NoteDAL(database: queue))
}

func note(_ title: String) -> Note {
    Note(
        id: nil, title: title, body: nil, payload: nil, tags: [], meta: nil,
        createdAt: Date(timeIntervalSince1970: 1_700_000_000), rating: nil, pinned: false, counter: 0, reference: nil)
}

@Suite struct EntityMappingTests {
    @Test func codableEntityRoundTripsEveryKindOfValue() throws {
        let (_, notes) = try makeNotes()
        let full = Note(
            id: nil, title: "Zoë 🚀 日本語", body: "line\u{0}with NUL", payload: Data([0, 255, 0]), tags: ["a", "b\"c"],
            meta: Note.Meta(source: "test", priority: 2), createdAt: Date(timeIntervalSince1970: 1_700_000_000.5),
            rating: -0.5, pinned: true, counter: Int64.min, reference: UUID())
        let id = try notes.insert2(full)
        var expected = full
        expected.id = id
        #expect(try notes.findById(id) == expected)
        let empty = note("nulls")
        let emptyID = try notes.insert2(empty)
        let reread = try #require(try notes.findById(emptyID))
        #expect(reread.body == nil && reread.payload == nil && reread.meta == nil && reread.rating == nil)
        #expect(try notes.getFieldValue(emptyID, fieldName: "payload") == nil)  // NULL reads as nil
        #expect(try notes.getFieldValue(emptyID, fieldName: "title") == .text("nulls"))
    }

    @Test func nilOptionalsClearColumnsOnUpdate() throws {
        let (_, notes) = try makeNotes()
        var item = note("x")
        item.body = "something"
        item.rating = 4
        item.id = try notes.insert2(item)
        item.body = nil
        item.rating = nil
        #expect(try notes.update(item))
        #expect(try notes.sqlValueList("SELECT body FROM notes WHERE id = \(item.id)") == [.null])
        #expect(try notes.sqlValueList("SELECT rating FROM notes WHERE id = \(item.id)") == [.null])
    }

    @Test func int64ExtremesAndLargeTextAndBlobsRoundTrip() throws {
        let (_, notes) = try makeNotes()
        var large = note(String(repeating: "ü", count: 600_000))
        large.payload = Data((0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        large.counter = Int64.max
        large.id = Int64.max
        #expect(try notes.insert2(large) == Int64.max)
        let reread = try #require(try notes.findById(Int64.max))
        #expect(reread.title == large.title)
        #expect(reread.payload == large.payload)
        #expect(reread.counter == Int64.max)
        large.id = Int64.min
        large.counter = Int64.min
        try notes.insert(large)
        #expect(try notes.findById(Int64.min)?.counter == Int64.min)
    }

    @Test func decodingErrorsNameTheColumnTheTypeAndTheTable() throws {
        let (queue, notes) = try makeNotes()
        try queue.write { db in
            try db.execute(
                "INSERT INTO notes(id, title, tags, createdAt, pinned, counter) VALUES (1, 't', '[]', '2024-01-01 00:00:00', 0, 'not a number')"
            )
        }
        let error = #expect(throws: DALError.self) { _ = try notes.findById(1) }
        #expect(error?.code == .conversionFailed)
        #expect(error?.column == "counter")
        #expect(error?.table == "notes")
        #expect(error?.message.contains("Int64") == true)
        // The process keeps working: other rows still read.
        try notes.insert(note("fine"))
        #expect(try notes.findSingle(condition: "title = \("fine")")?.title == "fine")
    }

    /// An optional property is `nil` for `NULL` only: a value that does not convert throws,
    /// as it does for a non-optional one (read as `nil`, a later update would overwrite it).
    @Test func anOptionalPropertyIsNilForNullOnlyNotForAValueThatDoesNotConvert() throws {
        struct Reading: Entity, Codable {
            static let tableName = "readings"
            var id: Int64?
            var level: Int?
        }
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE readings(id INTEGER PRIMARY KEY, level)")
            try db.execute(sql: "INSERT INTO readings VALUES (1, 'abc'), (2, 2.5), (3, NULL), (4, 7)")
        }
        let readings = BaseDAL<Reading>(database: queue)
        #expect(try readings.findById(4)?.level == 7)
        let null = try #require(try readings.findById(3))
        #expect(null.level == nil)
        for id: Int64 in [1, 2] {
            let error = #expect(throws: DALError.self) { _ = try readings.findById(id) }
            #expect(error?.code == .conversionFailed, "row \(id): \(String(describing: error))")
            #expect(error?.column == "level", "row \(id)")
        }
    }

    @Test func explicitEntityRowsConvertWithErrorsNamingColumns() throws {
        let sample = try Sample()
        try sample.queue.write { db in
            try db.execute(
                "INSERT INTO users(id, name, email, age, created_at) VALUES (100, 'bad', 'bad@x', 1, 'not a date')")
        }
        let error = #expect(throws: DALError.self) { _ = try sample.users.findById(100) }
        #expect(error?.code == .conversionFailed)
        #expect(error?.column == "created_at")
        #expect(error?.message.contains("Date") == true)
    }

    @Test func anEntityThatDoesNotMatchItsTableIsReportedByName() throws {
        struct Ghost: Entity, Codable {
            static let tableName = "ghosts"
            var id: Int64?
        }
        struct WrongColumns: Entity {
            static let tableName = "users"
            static let columnNames: [String]? = ["id", "nickname", "shoe_size"]
            init(row: RowView) throws {}
            func encodeColumns(to columns: inout ColumnValues) throws {}
        }
        struct Extra: Entity, Codable {
            static let tableName = "users"
            var id: Int64?
            var name: String
            var nickname: String
        }
        /// An explicit entity whose `encodeColumns` does not write its `columnNames`.
        struct BadlyEncoded: Entity {
            static let tableName = "user_tags"
            static let primaryKey = ["user_id", "tag"]
            static let columnNames: [String]? = ["user_id", "tag"]
            /// Whether it forgets `tag` (else it writes both columns in the wrong order).
            var forgetsTag = false
            init(forgetsTag: Bool) { self.forgetsTag = forgetsTag }
            init(row: RowView) throws {}
            func encodeColumns(to columns: inout ColumnValues) throws {
                if !forgetsTag { try columns.encode("x", for: "tag") }
                try columns.encode(1, for: "user_id")
            }
        }
        let sample = try Sample()
        let missing = #expect(throws: DALError.self) { _ = try BaseDAL<Ghost>(database: sample.queue).getAll() }
        #expect(missing?.code == .schemaMismatch)
        #expect(missing?.message.contains("ghosts") == true)
        let wrong = #expect(throws: DALError.self) { _ = try BaseDAL<WrongColumns>(database: sample.queue).getAll() }
        #expect(wrong?.code == .schemaMismatch)
        #expect(wrong?.message.contains("nickname, shoe_size") == true)
        let extra = #expect(throws: DALError.self) {
            try BaseDAL<Extra>(database: sample.queue).insert(Extra(id: nil, name: "n", nickname: "x"))
        }
        #expect(extra?.code == .invalidColumn)
        #expect(extra?.column == "nickname")
        let badlyEncoded = BaseDAL<BadlyEncoded>(database: sample.queue)
        let misordered = #expect(throws: DALError.self) { try badlyEncoded.insert(BadlyEncoded(forgetsTag: false)) }
        #expect(misordered?.code == .schemaMismatch)
        let forgotten = #expect(throws: DALError.self) { try badlyEncoded.insert(BadlyEncoded(forgetsTag: true)) }
        #expect(forgotten?.code == .schemaMismatch)
        #expect(forgotten?.message.contains("wrote user_id but") == true, "\(String(describing: forgotten))")
        #expect(try sample.tags.getRecordCount() == 5)
    }

    /// Names written in the expected order are not stored but read back the same; a name
    /// out of that order (or past its end) stores the names from there on, in order.
    @Test func columnValuesReadBackTheNamesWrittenWhateverTheOrder() throws {
        let expected = ["id", "name", "email"]
        var following = ColumnValues(expecting: expected)
        try following.encode(1, for: "id")
        #expect(following.names == ["id"])
        try following.encode("Ann", for: "name")
        try following.encode("a@x.org", for: "email")
        #expect(following.names == expected && following.hasExactlyTheExpectedNames)
        #expect(following.values == [.integer(1), .text("Ann"), .text("a@x.org")])
        #expect(following.value(for: "EMAIL") == .text("a@x.org"))

        var leaving = ColumnValues(expecting: expected)
        try leaving.encode(1, for: "id")
        try leaving.encode("a@x.org", for: "email")
        try leaving.encode("Ann", for: "name")
        #expect(leaving.names == ["id", "email", "name"] && !leaving.hasExactlyTheExpectedNames)
        #expect(leaving.value(for: "name") == .text("Ann") && leaving.count == 3)

        var longer = ColumnValues(expecting: expected)
        for name in expected + ["bio"] { try longer.encode(name, for: name) }
        #expect(longer.names == expected + ["bio"] && !longer.hasExactlyTheExpectedNames)
        #expect(longer.values.last == .text("bio"))

        var shorter = ColumnValues(expecting: expected)
        try shorter.encode(1, for: "id")
        #expect(!shorter.hasExactlyTheExpectedNames && shorter.names == ["id"])
    }

    @Test func codableEntityWithNaNIsRefusedWithATypedError() throws {
        let (_, notes) = try makeNotes()
        var bad = note("nan")
        bad.rating = .nan
        #expect(#expect(throws: DALError.self) { try notes.insert(bad) }?.code == .invalidValue)
        #expect(try notes.getRecordCount() == 0)
    }
}
