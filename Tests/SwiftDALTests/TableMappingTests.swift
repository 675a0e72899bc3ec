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
            let error = #expect(throws: DALError.self, "column \(name)") {
                _ = try users.isExist(fieldName: name, value: 1)
            }
            #expect(error?.code == .invalidColumn)
            #expect(error?.table == "users")
            #expect(error?.column == name, "\(String(describing: error))")
            let updated = #expect(throws: DALError.self) { _ = try users.updateFields([name: 1], key: 1) }
            #expect(updated?.code == .invalidColumn)
            let read = #expect(throws: DALError.self) { _ = try users.getFieldValue(1, fieldName: name, as: Int.self) }
            #expect(read?.code == .invalidColumn)
            let listed = #expect(throws: DALError.self) {
                _ = try users.getFieldList(name, condition: nil, as: Int.self)
            }
            #expect(listed?.code == .invalidColumn)
            let ordered = #expect(throws: DALError.self) { _ = try users.getAll(orderBy: OrderBy(column: name)) }
            #expect(ordered?.code == .invalidColumn)
        }
        #expect(sample.recorder.all.isEmpty, "a refused name ran SQL: \(sample.recorder.all)")
    }
}
