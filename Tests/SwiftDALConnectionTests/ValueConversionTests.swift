import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

@Suite struct ValueConversionTests {
    private func roundTrip<T: DatabaseValueConvertible & Equatable>(_ value: T, _ sqlType: String = "") throws -> T? {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(v \(sqlType))")
        try db.execute("INSERT INTO t(v) VALUES (\(value))")
        return try db.fetchScalar(T.self, "SELECT v FROM t")
    }

    @Test func integerWidthsRoundTripAtTheirExtremes() throws {
        #expect(try roundTrip(Int8.min) == Int8.min)
        #expect(try roundTrip(Int16.max) == Int16.max)
        #expect(try roundTrip(Int32.min) == Int32.min)
        #expect(try roundTrip(Int64.max) == Int64.max)
        #expect(try roundTrip(Int64.min) == Int64.min)
        #expect(try roundTrip(UInt8.max) == UInt8.max)
        #expect(try roundTrip(UInt32.max) == UInt32.max)
        #expect(try roundTrip(UInt64(Int64.max)) == UInt64(Int64.max))
    }

    @Test func unsignedValueAboveInt64MaxIsRefusedNotTruncated() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(v INTEGER)")
        let error = #expect(throws: DALError.self) { try db.execute("INSERT INTO t(v) VALUES (\(UInt64.max))") }
        #expect(error?.code == .invalidValue)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") == 0)
    }

    @Test func storedIntegerTooLargeForNarrowTypeIsAConversionErrorNamingColumnAndType() throws {
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT 300 AS age"))
        let error = #expect(throws: DALError.self) { _ = try row.decode(UInt8.self, named: "age") }
        #expect(error?.code == .conversionFailed)
        #expect(error?.column == "age")
        #expect(error?.message.contains("UInt8") == true)
        let id: Int64 = try row.decode(at: 0)
        #expect(id == 300)
    }

    @Test func idsAbove2To31AreReadAsFull64BitValues() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        let big: Int64 = 1 << 33 + 5
        try db.execute("INSERT INTO t(id, name) VALUES (\(big), 'a')")
        #expect(try db.lastInsertedRowID == big)
        let next = try db.insert("INSERT INTO t(name) VALUES ('b')")
        #expect(next == big + 1)
        try db.execute("INSERT INTO t(id, name) VALUES (\(Int64.max), 'max')")
        #expect(try db.fetchScalar(Int64.self, "SELECT id FROM t WHERE name = 'max'") == Int64.max)
    }

    @Test func doublesFloatsAndNaN() throws {
        #expect(try roundTrip(1.5) == 1.5)
        #expect(try roundTrip(Double.infinity) == .infinity)
        #expect(try roundTrip(-Double.greatestFiniteMagnitude) == -.greatestFiniteMagnitude)
        #expect(try roundTrip(Float(0.25)) == 0.25)
        #expect(throws: DALError.self) { try Double.nan.databaseValue() }
        #expect(Float(databaseValue: .real(1e300)) == nil)
        #expect(Double(databaseValue: .integer(3)) == 3)
    }

    @Test func boolsAreStoredAsIntegers() throws {
        #expect(true.databaseValue() == .integer(1))
        #expect(try roundTrip(false) == false)
        #expect(Bool(databaseValue: .text("1")) == nil)
    }

    @Test func emptyStringEmptyBlobAndNullStayDistinct() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(k INTEGER, v)")
        try db.execute("INSERT INTO t VALUES (1, \(""))")
        try db.execute("INSERT INTO t VALUES (2, \(Data()))")
        try db.execute("INSERT INTO t VALUES (3, \(nil as String?))")
        let types = try db.fetchColumn(String.self, "SELECT typeof(v) FROM t ORDER BY k")
        #expect(types == ["text", "blob", "null"])
        let values = try db.fetchAll("SELECT v FROM t ORDER BY k").map { try $0.value(at: 0) }
        #expect(values == [.text(""), .blob(Data()), .null])
    }

    @Test func embeddedNulSurvivesInTextAndBlob() throws {
        let text = "before\u{0}after"
        #expect(try roundTrip(text) == text)
        let blob = Data([0, 1, 0, 2, 0])
        #expect(try roundTrip(blob) == blob)
        let db = try Database.inMemory()
        #expect(try db.fetchScalar(Int.self, "SELECT length(CAST(\(text) AS BLOB))") == 12)
    }

    @Test func temporaryStringIsCopiedWhenBound() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(v TEXT)")
        let statement = try db.makeStatement(sql: "INSERT INTO t(v) VALUES (?)")
        for index in 0..<50 {
            // A string built, bound and dropped before the statement steps: SQLite must own a copy.
            try statement.execute(arguments: [String(repeating: "x", count: index) + "\(index)-temporary"])
        }
        let stored = try db.fetchColumn(String.self, "SELECT v FROM t ORDER BY rowid")
        #expect(stored == (0..<50).map { String(repeating: "x", count: $0) + "\($0)-temporary" })
    }

    @Test func unicodeTextRoundTrips() throws {
        let text = "Zoë 🚀 日本語 \u{202E}rtl"
        #expect(try roundTrip(text) == text)
    }

    @Test func datesUseTheCanonicalSortableUTCText() throws {
        #expect(try Date(timeIntervalSince1970: 0).databaseValue() == .text("1970-01-01 00:00:00.000"))
        let date = Date(timeIntervalSince1970: 1_709_208_000.123)
        #expect(try date.databaseValue() == .text("2024-02-29 12:00:00.123"))
        let back = try #require(try roundTrip(date))
        #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.0005)
        let old = Date(timeIntervalSince1970: -2_000_000_000.5)
        #expect(abs(try #require(try roundTrip(old)).timeIntervalSince1970 - old.timeIntervalSince1970) < 0.0005)
        // Text order is time order.
        let earlier = try Date(timeIntervalSince1970: 999).databaseValue().string!
        let later = try Date(timeIntervalSince1970: 1000).databaseValue().string!
        #expect(earlier < later)
    }

    @Test func datesReadWhatSQLiteWrites() throws {
        let db = try Database.inMemory()
        let now = try #require(try db.fetchScalar(Date.self, "SELECT CURRENT_TIMESTAMP"))
        #expect(abs(now.timeIntervalSinceNow) < 120)
        let fixed = try db.fetchScalar(Date.self, "SELECT '2024-02-29 12:00:00'")
        #expect(fixed == Date(timeIntervalSince1970: 1_709_208_000))
        #expect(Date(databaseValue: "2024-02-29T13:00:00+01:00") == Date(timeIntervalSince1970: 1_709_208_000))
        #expect(Date(databaseValue: "2024-02-29T12:00:00Z") == Date(timeIntervalSince1970: 1_709_208_000))
        #expect(Date(databaseValue: "2024-02-29") == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(
            try db.fetchScalar(Date.self, "SELECT unixepoch('2024-02-29 12:00:00')")
                == Date(timeIntervalSince1970: 1_709_208_000))
        #expect(Date(databaseValue: "2023-02-29") == nil)
        #expect(Date(databaseValue: "not a date") == nil)
    }

    /// Found by the values fuzzer: a NaN REAL read as a date, then stored, crashed the
    /// process (the error message used Date.description, which traps on NaN).
    @Test func nonFiniteDatesAreConversionErrorsNotCrashes() throws {
        #expect(Date(databaseValue: .real(.nan)) == nil)
        #expect(Date(databaseValue: .real(.infinity)) == nil)
        #expect(throws: DALError.self) { try Date(timeIntervalSince1970: .nan).databaseValue() }
        #expect(throws: DALError.self) { try Date(timeIntervalSince1970: 1e300).databaseValue() }
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT 9e999 AS stamp"))
        #expect(
            #expect(throws: DALError.self) { _ = try row.decode(Date.self, named: "stamp") }?.code == .conversionFailed)
    }

    @Test func uuidsAndDecimalsRoundTripLosslessly() throws {
        let uuid = UUID()
        #expect(try roundTrip(uuid) == uuid)
        #expect(uuid.databaseValue() == .text(uuid.uuidString.lowercased()))
        let decimal = try #require(Decimal(string: "12345678901234567890.123456789"))
        #expect(try roundTrip(decimal, "TEXT") == decimal)
        #expect(try roundTrip(Decimal(string: "0.1")!) == Decimal(string: "0.1"))
        // A REAL (what SQLite's NUMERIC affinity makes of "0.99") reads as its shortest decimal.
        #expect(Decimal(databaseValue: .real(0.1)) == Decimal(string: "0.1"))
        #expect(Decimal(databaseValue: .real(0.99)) == Decimal(string: "0.99"))
        #expect(Decimal(databaseValue: .real(-1e-7)) == Decimal(string: "-0.0000001"))
        #expect(Decimal(databaseValue: .real(.infinity)) == nil)
        #expect(Decimal(databaseValue: .real(1e300)) == nil)  // beyond Decimal's range: refused, never wrong
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE prices(amount NUMERIC(10,2))")
        try db.execute("INSERT INTO prices VALUES (\(Decimal(string: "0.99")!))")
        #expect(try db.fetchScalar(DatabaseValue.self, "SELECT amount FROM prices") == .real(0.99))
        #expect(try db.fetchScalar(Decimal.self, "SELECT amount FROM prices") == Decimal(string: "0.99"))
        // Foundation parses a prefix ("12abc" is 12); SwiftDAL refuses the whole value instead.
        for junk in ["12abc", "1.5.5", " 1", "1,5", "", ".", "e5", "1e", "NaN"] {
            #expect(Decimal(databaseValue: .text(junk)) == nil, "\(junk.debugDescription)")
        }
        #expect(Decimal(databaseValue: "-0.10") == Decimal(string: "-0.1"))
        // What a Decimal cannot hold exactly is refused, never rounded: more significant
        // digits than its 128-bit mantissa holds (38, or 39 below 2^128; Decimal(string:)
        // keeps what fits and drops the rest), or a power of ten outside its range.
        let digits38 = "12345678901234567890123456789012345678"
        #expect(Decimal(databaseValue: .text(digits38))?.description == digits38)
        #expect(Decimal(databaseValue: .text("-0.000" + digits38 + "000"))?.description == "-0.000" + digits38)
        #expect(Decimal(databaseValue: .text(digits38 + "000e-3")) == Decimal(string: digits38))
        for inexact in [
            digits38 + "91", "1234567890123456789012345678901234567891", "123456789012345678901234567890123456789.5",
            "0." + digits38 + "91", "1e400", "1e-400", "1e99999999999999999999"
        ] {
            #expect(Decimal(databaseValue: .text(inexact)) == nil, "\(inexact)")
        }
        #expect(Decimal(databaseValue: .real(1e-300)) == nil)
        #expect(Decimal(databaseValue: .text(digits38 + "9"))?.description == digits38 + "9")  // under 2^128
        #expect(Decimal(databaseValue: .text("1e100"))?.description == "1" + String(repeating: "0", count: 100))
        for same in ["0", "-0", "0.000", "+0e5", "1.50", "15e-1", "0.0015e3", "-7", "-7.000"] {
            #expect(Decimal(databaseValue: .text(same)) == Decimal(string: same), "\(same)")
        }
        #expect(Decimal(databaseValue: "1e5") == 100_000)
        #expect(Decimal(databaseValue: .integer(-7)) == -7)
    }

    @Test func optionalsAreNull() throws {
        let none: Int? = nil
        #expect(try none.databaseValue() == .null)
        #expect(Int?(databaseValue: .null) == .some(nil))
        #expect(try roundTrip(Optional(5)) == 5)
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT NULL AS v"))
        let value: String? = try row.decode(named: "v")
        #expect(value == nil)
        #expect(throws: DALError.self) { _ = try row.decode(String.self, named: "v") }
    }
}
