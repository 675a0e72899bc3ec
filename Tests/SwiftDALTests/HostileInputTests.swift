import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

/// Strings that break hand-written SQL: quotes, comments, stacked statements, wildcards,
/// NUL bytes, look-alikes, keywords, very long text.
let hostileStrings: [String] = [
    "'); DROP TABLE users; --",
    "\"; DROP TABLE users; --",
    "' OR '1'='1",
    "' OR 1=1 --",
    "1; DELETE FROM users",
    "admin'--",
    "/* comment */ name",
    "name -- comment",
    "%", "_", "%_%", "\\", "\\%",
    "Robert'); DROP TABLE students;--",
    "\u{0}", "a\u{0}b",
    "ｕｓｅｒｓ", "ʼ OR ʼ1ʼ=ʼ1",
    "SELECT", "rowid", "id DESC; DROP TABLE users",
    "name, (SELECT sql FROM sqlite_master)",
    "`name`", "[name]", "\"name\"",
    "😀", "\u{202E}gnp.exe",
    String(repeating: "'", count: 1000),
]

@Suite struct HostileInputTests {
    private func schemaSnapshot(_ sample: Sample) throws -> [String] {
        try sample.queue.read { try $0.fetchColumn(String.self, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name") }
    }

    @Test func hostileStringsAsValuesAreStoredAndFoundLiterally() throws {
        let sample = try Sample()
        let schema = try schemaSnapshot(sample)
        for (index, text) in hostileStrings.enumerated() {
            let id = try sample.users.insert2(UserInfo(name: text, fullName: text, email: "hostile\(index)@x", age: 1, bio: text))
            #expect(try sample.users.findById(id)?.name == text, "value #\(index)")
            #expect(try sample.users.find(condition: "name = \(text)").map(\.id) == [id], "value #\(index)")
            #expect(try sample.users.isExist(fieldName: "bio", value: text), "value #\(index)")
            #expect(try sample.users.updateFields(["full_name": text + "!"], key: id))
            #expect(try sample.users.search(keyword: text).contains { $0.id == id }, "value #\(index)")
            #expect(try sample.users.getFieldValue(id, fieldName: "full_name", as: String.self) == text + "!")
            #expect(try sample.users.deleteByCondition("bio = \(text) AND id = \(id)") == 1)
        }
        #expect(try schemaSnapshot(sample) == schema)
        #expect(try sample.users.getRecordCount() == 8)
        #expect(try sample.orders.getRecordCount() == 8)
    }

    @Test func hostileStringsAsColumnNamesAreRejectedNamingTheColumn() throws {
        let sample = try Sample()
        let schema = try schemaSnapshot(sample)
        for (index, text) in hostileStrings.enumerated() where text.lowercased() != "rowid" {
            let checks: [(String, () throws -> Void)] = [
                ("isExist", { _ = try sample.users.isExist(fieldName: text, value: 1) }),
                ("getFieldList", { _ = try sample.users.getFieldList(text) }),
                ("getFieldValue", { _ = try sample.users.getFieldValue(1, fieldName: text) }),
                ("updateFields", { _ = try sample.users.updateFields([text: 1], key: 1) }),
                ("orderBy", { _ = try sample.users.getAll(orderBy: OrderBy(text)) }),
                ("orderBy DESC", { _ = try sample.users.find(condition: "", orderBy: OrderBy(text, .descending)) }),
            ]
            for (operation, check) in checks {
                let error = dalError(check)
                #expect(error?.code == .invalidColumn, "\(operation) with hostile name #\(index)")
                #expect(error?.column == text, "\(operation) with hostile name #\(index)")
            }
            let parsed = dalError { _ = try sample.users.getAll(orderBy: OrderBy(parsing: text)) }
            #expect(parsed?.code == .invalidColumn, "parsed order #\(index)")
        }
        #expect(try schemaSnapshot(sample) == schema)
        #expect(try sample.users.findById(1)?.age == 34)
    }

    @Test func orderByTextFormIsParsedAndValidated() throws {
        let sample = try Sample()
        #expect(try sample.users.getAll(orderBy: "AGE desc, id").first?.name == "erin")
        let injected = dalError { _ = try sample.users.getAll(orderBy: "age; DROP TABLE users") }
        #expect(injected?.code == .invalidColumn)
        let badDirection = dalError { _ = try sample.users.getAll(orderBy: "age sideways") }
        #expect(badDirection?.message.contains("sideways") == true)
        let empty = dalError { _ = try sample.users.getAll(orderBy: "") }
        #expect(empty?.code == .invalidColumn)
    }
}
