import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALTestSupport
import Testing

/// A DAL's table mapping: the column names an operation is given (`isExist(fieldName:)`,
/// `getFieldValue`, `getFieldList`, `updateFields`) are checked against the table's real
/// columns, matched without regard to ASCII case, and written in the table's own spelling,
/// quoted; a name the table does not have is refused before any SQL runs, naming the column
/// and the table.
@Suite struct TableMappingTests {
    @Test func columnNamesResolveToTheTablesSpellingAndUnknownOnesAreRefused() throws {
        let sample = try Sample()
        let users = sample.users
        let ann = try #require(try users.findById(1))

        #expect(try users.isExist(fieldName: "EMAIL", value: ann.email))
        #expect(sample.recorder.last?.contains(#"WHERE "email" = ?"#) == true)
        #expect(try users.getFieldValue(1, fieldName: "Name", as: String.self) == ann.name)
        #expect(sample.recorder.last?.contains(#"SELECT "name" FROM "users""#) == true)
        #expect(try users.getFieldList("AGE", condition: nil, as: Int.self).contains(ann.age))
        #expect(try users.updateFields(["Age": ann.age + 1], key: 1))
        #expect(try users.findById(1)?.age == ann.age + 1)

        sample.recorder.reset()
        for name in ["nope", "name\" FROM users --", "", "e-mail", "users.name"] {
            for (operation, check) in columnNameOperations(users, name) {
                let error = #expect(throws: DALError.self, "\(operation) with column \(name)", performing: check)
                #expect(error?.code == .invalidColumn, "\(operation)")
                #expect(error?.table == "users", "\(operation)")
                #expect(error?.column == name, "\(operation): \(String(describing: error))")
            }
        }
        #expect(sample.recorder.all.isEmpty, "a refused name ran SQL: \(sample.recorder.all)")
    }

    /// A column name is matched by what it says, not by its bytes: a name spelled with a
    /// decomposed accent finds the column spelled precomposed (the two differ in length, so
    /// the lookup's length pre-check must not refuse it), uppercase accented letters
    /// included, and is written in the table's spelling.
    @Test func aColumnNameMatchesWhateverItsUnicodeForm() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE moods(id INTEGER PRIMARY KEY, mood TEXT NOT NULL, \"caf\u{E9}\" TEXT, "
                    + "\"\u{C9}mile\" TEXT)")
            try db.execute(sql: "INSERT INTO moods(mood, \"caf\u{E9}\") VALUES ('happy', 'au lait')")
        }
        let moods = BaseDAL<WithEnum>(database: queue)
        #expect(try moods.isExist(fieldName: "cafe\u{301}", value: "au lait"))
        #expect(try moods.getFieldValue(1, fieldName: "CAFE\u{301}", as: String.self) == "au lait")
        #expect(try moods.updateFields(["cafe\u{301}": "noir"], key: 1))
        #expect(try moods.getFieldValue(1, fieldName: "caf\u{E9}", as: String.self) == "noir")
        // An uppercase accented letter, which the ASCII folding of names does not match.
        #expect(try moods.updateFields(["E\u{301}mile": "Zola"], key: 1))
        #expect(try moods.getFieldValue(1, fieldName: "\u{C9}mile", as: String.self) == "Zola")
    }

    /// An empty column name as a fresh DAL's first call (the key the generated-SQL cache
    /// starts from) is refused like any unknown name, never answered from the cache.
    @Test func anEmptyColumnNameAsAFreshDALsFirstCallIsRefused() throws {
        let sample = try Sample()
        let error = #expect(throws: DALError.self) { _ = try sample.users.getFieldValue(1, fieldName: "") }
        #expect(error?.code == .invalidColumn)
        // Only the mapping's reading of the table's columns ran, no statement on the table.
        #expect(!sample.recorder.all.contains { $0.contains(#"FROM "users""#) }, "\(sample.recorder.all)")
    }
}

/// Every ``BaseDAL`` operation that takes a column name, given `name`: what a test of
/// column names runs each one through.
func columnNameOperations(_ users: UserDAL, _ name: String) -> [(String, () throws -> Void)] {
    [
        ("isExist", { _ = try users.isExist(fieldName: name, value: 1) }),
        ("getFieldList", { _ = try users.getFieldList(name) }),
        ("getFieldValue", { _ = try users.getFieldValue(1, fieldName: name) }),
        ("updateFields", { _ = try users.updateFields([name: 1], key: 1) }),
        ("orderBy", { _ = try users.getAll(orderBy: OrderBy(column: name)) }),
        ("orderBy DESC", { _ = try users.find(condition: "", orderBy: OrderBy(name, .descending)) })
    ]
}
