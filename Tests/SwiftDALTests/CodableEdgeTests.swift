import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

/// Entities whose Codable shape a row cannot hold: each must give a typed error.
struct ArrayShaped: Entity, Codable {
    static let tableName = "notes"
    var values: [Int]
    init(values: [Int]) { self.values = values }
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        values = [try container.decode(Int.self)]
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(values.first ?? 0)
    }
}

struct NestedContainer: Entity, Codable {
    static let tableName = "notes"
    var title: String
    enum CodingKeys: String, CodingKey { case title, extra }
    enum ExtraKeys: String, CodingKey { case inner }
    init(title: String) { self.title = title }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decode(String.self, forKey: .title)
        _ = try container.nestedContainer(keyedBy: ExtraKeys.self, forKey: .extra)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(title, forKey: .title)
        var nested = container.nestedContainer(keyedBy: ExtraKeys.self, forKey: .extra)
        try nested.encode(1, forKey: .inner)
    }
}

enum Mood: String, Codable { case happy, sad }

struct WithEnum: Entity, Codable {
    static let tableName = "moods"
    var id: Int64?
    var mood: Mood
}

struct SingleValueShaped: Entity, Codable {
    static let tableName = "notes"
    var title: String
    init(title: String) { self.title = title }
    init(from decoder: any Decoder) throws { title = try decoder.singleValueContainer().decode(String.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(title)
    }
}

@Suite struct CodableEdgeTests {
    @Test func shapesARowCannotHoldAreTypedErrors() throws {
        let (queue, _) = try makeNotes()
        _ = try NoteDAL(database: queue).insert2(note("row"))
        for error in [
            #expect(throws: DALError.self) {
                try BaseDAL<ArrayShaped>(database: queue).insert(ArrayShaped(values: [1]))
            },
            #expect(throws: DALError.self) { _ = try BaseDAL<ArrayShaped>(database: queue).getAll() },
            #expect(throws: DALError.self) {
                try BaseDAL<NestedContainer>(database: queue).insert(NestedContainer(title: "t"))
            },
            #expect(throws: DALError.self) { _ = try BaseDAL<NestedContainer>(database: queue).getAll() },
            #expect(throws: DALError.self) {
                try BaseDAL<SingleValueShaped>(database: queue).insert(SingleValueShaped(title: "t"))
            },
            #expect(throws: DALError.self) { _ = try BaseDAL<SingleValueShaped>(database: queue).getAll() }
        ] {
            #expect(error?.code == .conversionFailed || error?.code == .invalidColumn, "\(String(describing: error))")
        }
        // The connection is fine afterwards.
        #expect(try NoteDAL(database: queue).getRecordCount() == 1)
    }

    /// An entity decoded from rows outside a DAL (`fetchAll` with `init(row:)`) names its
    /// table in the error, as a DAL's read does: a log says which entity failed.
    @Test func anEntityDecodedOutsideADALNamesItsTableInItsError() throws {
        struct Reading: Entity, Codable {
            static let tableName = "readings"
            var id: Int64
            var celsius: Double
        }
        let queue = try DatabaseQueue.inMemory()
        let error = #expect(throws: DALError.self) {
            _ = try queue.read { db in
                try db.fetchAll("SELECT 1 AS id, 'warm' AS celsius") { try Reading(row: $0) }
            }
        }
        #expect(error?.code == .conversionFailed)
        #expect(error?.table == "readings")
        #expect(error?.column == "celsius")
    }

    @Test func jsonColumnsWithBadContentAreConversionErrorsNamingTheColumn() throws {
        let (queue, notes) = try makeNotes()
        try queue.write { db in
            try db.execute(
                "INSERT INTO notes(id, title, tags, createdAt, pinned, counter) VALUES (1, 't', 'not json', '2024-01-01 00:00:00', 0, 0)"
            )
            try db.execute(
                "INSERT INTO notes(id, title, tags, createdAt, pinned, counter) VALUES (2, 't', 42, '2024-01-01 00:00:00', 0, 0)"
            )
            try db.execute(
                "INSERT INTO notes(id, title, tags, createdAt, pinned, counter) VALUES (3, 't', x'5B5D', '2024-01-01 00:00:00', 0, 0)"
            )
        }
        let notJSON = #expect(throws: DALError.self) { _ = try notes.findById(1) }
        #expect(notJSON?.code == .conversionFailed && notJSON?.column == "tags")
        let wrongClass = #expect(throws: DALError.self) { _ = try notes.findById(2) }  // 42 is JSON, but not an array
        #expect(wrongClass?.code == .conversionFailed && wrongClass?.column == "tags")
        #expect(try notes.findById(3)?.tags == [])  // JSON in a blob is read too
    }

    @Test func derivationNamesWhatItCannotDerive() throws {
        let error = #expect(throws: DALError.self) { _ = try WithEnum.tableDefinition() }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("declare its tableDefinition()") == true)
        #expect(throws: DALError.self) { _ = try ArrayShaped.tableDefinition() }
        #expect(throws: DALError.self) { _ = try NestedContainer.tableDefinition() }
        #expect(throws: DALError.self) { _ = try SingleValueShaped.tableDefinition() }
    }

    @Test func codableEntitiesWithEnumsWorkOnceTheTableIsDeclared() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.create(
                TableDefinition("moods") { t in
                    t.column("id", .integer)
                    t.column("mood", .text, notNull: true, check: "mood IN ('happy', 'sad')")
                    t.primaryKey(["id"])
                })
        }
        let moods = BaseDAL<WithEnum>(database: queue)
        let id = try moods.insert2(WithEnum(id: nil, mood: .sad))
        #expect(try moods.findById(id)?.mood == .sad)
        // Stored as its raw value, so SQL reads it naturally.
        #expect(try moods.sqlValueList("SELECT mood FROM moods", as: String.self) == ["sad"])
        #expect(try moods.find(condition: "mood = \("sad")").count == 1)
        try queue.write { db in try db.execute(sql: "PRAGMA ignore_check_constraints = ON") }
        try queue.write { db in try db.execute("INSERT INTO moods(mood) VALUES ('angry')") }
        #expect(throws: DALError.self) { _ = try moods.findSingle(condition: "mood = 'angry'") }
    }
}
