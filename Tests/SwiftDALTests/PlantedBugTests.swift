import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

/// Deterministic tests for bugs planted in the DAL layers that got through the other
/// suites; `.ci/mutants` plants each of them again and checks that these tests fail.
@Suite struct DALPlantedBugTests {
    /// Planted bug: a `nil` optional of a Codable entity skipped by the encoder instead of
    /// written as `NULL`, so an update keeps the old value. `String?`, `Int?` and `Double?`
    /// have encoder overloads of their own; `Data?`, `UUID?` and nested Codable values go
    /// through the generic one, which is the one checked here.
    @Test func nilOptionalsOfEveryTypeClearTheirColumnsOnUpdateAndUpsert() throws {
        let (_, notes) = try makeNotes()
        func filled(_ title: String) -> Note {
            var item = note(title)
            item.body = "body"
            item.payload = Data([1, 2, 3])
            item.meta = Note.Meta(source: "import", priority: 2)
            item.rating = 4.5
            item.reference = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")
            return item
        }
        func cleared(_ item: Note) -> Note {
            var item = item
            (item.body, item.payload, item.meta, item.rating, item.reference) = (nil, nil, nil, nil, nil)
            return item
        }
        let nullColumns: SQL = """
            SELECT (body IS NULL) + (payload IS NULL) + (meta IS NULL) + (rating IS NULL) + (reference IS NULL)
            FROM notes ORDER BY id
            """
        var updated = filled("updated")
        updated.id = try notes.insert2(updated)
        var upserted = filled("upserted")
        upserted.id = try notes.insert2(upserted)
        #expect(try notes.sqlValueList(nullColumns, as: Int.self) == [0, 0])

        #expect(try notes.update(cleared(updated)))
        try notes.upsert(cleared(upserted))
        #expect(try notes.sqlValueList(nullColumns, as: Int.self) == [5, 5])
        #expect(try notes.findById(try #require(updated.id)) == cleared(updated))
        #expect(try notes.findById(try #require(upserted.id)) == cleared(upserted))
    }
}
