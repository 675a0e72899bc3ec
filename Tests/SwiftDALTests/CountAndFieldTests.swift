import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct CountAndFieldTests {
    @Test func recordCountIsCountStar() throws {
        let sample = try Sample()
        #expect(try sample.users.getRecordCount() == 8)
        #expect(sample.recorder.last == #"SELECT COUNT(*) FROM "users""#)
        #expect(try sample.users.getRecordCount(condition: "age < \(25)") == 2)
        #expect(try sample.users.getRecordCount(condition: "age < \(0)") == 0)
        #expect(try sample.users.getRecordCount(condition: "full_name IS NULL") == 1)
    }

    @Test func existenceChecksUseExists() throws {
        let sample = try Sample()
        #expect(try sample.users.isExistRecord(condition: "score > \(95.0)"))
        #expect(sample.recorder.last?.hasPrefix("SELECT EXISTS(") == true)
        #expect(try !sample.users.isExistRecord(condition: "score > \(100.0)"))
        #expect(try sample.users.isExist(fieldName: "email", value: "alice@example.com"))
        #expect(try !sample.users.isExist(fieldName: "email", value: "ALICE@example.com"))
        #expect(try sample.users.isExist(fieldName: "EMAIL", value: "bob@example.com"))
        #expect(try sample.users.isExist(fieldName: "bio", value: "日本語のプロフィール"))
        #expect(try !sample.users.isExist(fieldName: "bio", value: nil as String?))
    }

    @Test func fieldListIsDistinctAndSorted() throws {
        let sample = try Sample()
        #expect(
            try sample.orders.getFieldList("product", condition: "quantity > \(1)", as: String.self)
                == ["Desk lamp", "Monitor", "Notebook", "Pen", "USB-C cable"])
        #expect(
            try sample.users.getFieldList("full_name", condition: "age > \(35)", as: String?.self) == [
                nil, "Chloé Dubois", "Erin O'Brien"
            ])
        let raw = try sample.users.getFieldList("age", condition: "id <= \(2)")
        #expect(raw == [.integer(27), .integer(34)])
        #expect(
            #expect(throws: DALError.self) { _ = try sample.users.getFieldList("full_name", as: String.self) }?.code
                == .conversionFailed)
    }

    @Test func fieldValueByKey() throws {
        let sample = try Sample()
        #expect(try sample.users.getFieldValue(3, fieldName: "full_name", as: String.self) == "Chloé Dubois")
        #expect(try sample.users.getFieldValue(8, fieldName: "full_name", as: String.self) == nil)
        #expect(try sample.users.getFieldValue(999, fieldName: "full_name", as: String.self) == nil)
        #expect(try sample.users.getFieldValue(1, fieldName: "avatar", as: Data.self) == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(try sample.tags.getFieldValue(CompositeKey(1, "admin"), fieldName: "tag", as: String.self) == "admin")
        let wrongWidth = #expect(throws: DALError.self) {
            _ = try sample.tags.getFieldValue(1, fieldName: "tag", as: String.self)
        }
        #expect(wrongWidth?.code == .invalidValue)
        // A part of a key that cannot be stored throws; it is never bound as NULL.
        let unstorable = CompositeKey(UInt64.max, "admin")
        #expect(throws: DALError.self) { _ = try sample.tags.findById(unstorable) }
        let deleted = #expect(throws: DALError.self) { _ = try sample.tags.deleteById(unstorable) }
        #expect(deleted?.code == .invalidValue)
        #expect(try sample.tags.getRecordCount() == 5)
    }

    @Test func sqlValueListRunsAnyQueryWithBoundValues() throws {
        let sample = try Sample()
        let names = try sample.users.sqlValueList(
            "SELECT name FROM users WHERE id IN (SELECT user_id FROM orders WHERE quantity >= \(10)) ORDER BY name",
            as: String.self)
        #expect(names == ["chloé"])
        #expect(try sample.users.sqlValueList("SELECT COUNT(*) FROM orders", as: Int.self) == [8])
        #expect(try sample.users.sqlValueList("SELECT full_name FROM users WHERE id = \(8)") == [.null])
    }
}
