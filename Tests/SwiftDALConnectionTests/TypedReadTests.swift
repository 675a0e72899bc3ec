import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

/// The typed fast paths of `RowView` (String, Int, Int64, Double and their optionals)
/// must read every storage class exactly as the general path (`Row`, through
/// `DatabaseValue`) does: same values, same errors.
@Suite struct TypedReadTests {
    /// One column per storage-class case the fast paths must either settle or hand over.
    static let cases = [
        "7", "-9223372036854775808", "2.5", "3.0", "1e300", "'text'", "''", "'12'", "NULL", "x'01'", "x''"
    ]

    /// The outcome of a read, comparable across paths: the value, or the error's code,
    /// column and message.
    private func outcome<T>(_ read: () throws -> T) -> String {
        do {
            return "value \(String(describing: try read()))"
        } catch let error as DALError {
            return "error \(error.code) \(error.column ?? "-") \(error.message)"
        } catch {
            return "other \(error)"
        }
    }

    private func compare<T: DatabaseValueConvertible>(_ type: T.Type, in db: Database) throws {
        let sql = "SELECT " + Self.cases.enumerated().map { "\($1) AS c\($0)" }.joined(separator: ", ")
        let copied = try #require(try db.fetchOne(SQL(sql: sql)))
        var viewed = [String]()
        try db.forEachRow(SQL(sql: sql)) { row in
            for index in Self.cases.indices {
                viewed.append(outcome { () throws -> T in try row[index] })
                viewed.append(outcome { try row.decode(T.self, at: index) })
            }
        }
        for index in Self.cases.indices {
            let general = outcome { try copied.decode(T.self, at: index) }
            #expect(viewed[2 * index] == general, "\(T.self) from \(Self.cases[index])")
            #expect(viewed[2 * index + 1] == general, "\(T.self) from \(Self.cases[index])")
        }
    }

    @Test func fastPathsAgreeWithTheGeneralPathOnEveryStorageClass() throws {
        let db = try Database.inMemory()
        try compare(String.self, in: db)
        try compare(String?.self, in: db)
        try compare(Int.self, in: db)
        try compare(Int?.self, in: db)
        try compare(Int64.self, in: db)
        try compare(Int64?.self, in: db)
        try compare(Double.self, in: db)
        try compare(Double?.self, in: db)
        try compare(Int32.self, in: db)  // no fast path: the general path through the same entry
        try compare(Bool?.self, in: db)
    }

    @Test func fastPathsSettleTheCommonCasesAndRefuseTheRest() throws {
        let db = try Database.inMemory()
        var errors = [DALError?]()
        try db.forEachRow("SELECT 'Ann', NULL, 42, 2.5, 3, 'x'") { row in
            let name: String = try row[0]
            let missing: String? = try row[1]
            let id64: Int64 = try row[2]
            let id: Int = try row[2]
            let score: Double = try row[3]
            let whole: Double = try row[4]  // an INTEGER reads as Double, as before
            let missingInt: Int? = try row[1]
            #expect(name == "Ann" && missing == nil && id64 == 42 && id == 42)
            #expect(score == 2.5 && whole == 3 && missingInt == nil)
            errors.append(#expect(throws: DALError.self) { let _: String = try row[1] })
            errors.append(#expect(throws: DALError.self) { let _: Int = try row[5] })
            errors.append(#expect(throws: DALError.self) { let _: String = try row[6] })
            errors.append(#expect(throws: DALError.self) { let _: Int64? = try row[-1] })
        }
        #expect(errors[0]?.code == .conversionFailed)
        #expect(errors[0]?.message.contains("NULL") == true)
        #expect(errors[1]?.code == .conversionFailed)
        #expect(errors[2]?.code == .invalidColumn)
        #expect(errors[2]?.message.contains("numbered from 0") == true)
        #expect(errors[3]?.code == .invalidColumn)
    }

    @Test func invalidUTF8TextIsAnErrorOnTheFastPathToo() throws {
        let db = try Database.inMemory()
        var errors = [DALError?]()
        try db.forEachRow("SELECT CAST(x'C328' AS TEXT)") { row in
            errors.append(#expect(throws: DALError.self) { let _: String = try row[0] })
            errors.append(#expect(throws: DALError.self) { let _: String? = try row[0] })
            errors.append(#expect(throws: DALError.self) { _ = try row.value(at: 0) })
        }
        // The same error on the fast and the general path.
        #expect(errors.count == 3)
        #expect(errors.allSatisfy { $0?.code == .conversionFailed && $0?.message.contains("UTF-8") == true })
        #expect(Set(errors.map { $0?.message }).count == 1)
    }

    @Test func invalidAndNonASCIIBytesAreFoundAtEveryPosition() throws {
        let db = try Database.inMemory()
        for length in 1...24 {
            for position in 0..<length {
                var invalid = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                invalid[position] = 0xFF
                var outcome: DALError?
                try db.forEachRow("SELECT CAST(\(Data(invalid)) AS TEXT)") { row in
                    outcome = #expect(throws: DALError.self) { let _: String = try row[0] }
                }
                #expect(outcome?.code == .conversionFailed, "0xFF at \(position) of \(length)")
                let valid =
                    String(repeating: "a", count: position) + "é" + String(repeating: "b", count: length - position)
                var read = ""
                try db.forEachRow("SELECT \(valid)") { row in read = try row[0] }
                #expect(read == valid, "é at \(position) of \(length)")
            }
        }
    }

    /// A lone byte of 0x80 or more is never UTF-8 (0x80 is Windows-1252's euro sign, which
    /// a client in that encoding stores as is): reading it as text is an error, not a
    /// replacement character, however short the text and wherever NULs stand beside it.
    @Test func aLoneHighByteIsNotReadAsText() throws {
        let db = try Database.inMemory()
        for bytes: [UInt8] in [[0x80], [0x80, 0x00], [0x00, 0x80, 0x00, 0x80], [0xA4], [0xFF]] {
            var outcome: DALError?
            try db.forEachRow("SELECT CAST(\(Data(bytes)) AS TEXT)") { row in
                outcome = #expect(throws: DALError.self) { let _: String = try row[0] }
            }
            #expect(outcome?.code == .conversionFailed, "\(bytes)")
        }
    }

    @Test func lookupsByNameFindTheFirstColumnOfANameOnEveryRow() throws {
        let db = try Database.inMemory()
        var seen = [Int]()
        try db.forEachRow("SELECT 1 AS id, 2 AS id, 3 AS x UNION ALL SELECT 4, 5, 6") { row in
            seen.append(try row["id"])
            seen.append(try row["id"])  // the hint points past the first "id": still the first wins
            seen.append(try row["x"])
            seen.append(try row["ID"])
            seen.append(try row["X"])
        }
        #expect(seen == [1, 1, 3, 1, 3, 4, 4, 6, 4, 6])
        var unique = [String]()
        try db.forEachRow("SELECT 'a' AS first, 'b' AS second UNION ALL SELECT 'c', 'd'") { row in
            unique.append(try row["second"])  // out of order, then in order
            unique.append(try row["first"])
            unique.append(try row["second"])
        }
        #expect(unique == ["b", "a", "b", "d", "c", "d"])
        #expect(throws: DALError.self) {
            try db.forEachRow("SELECT 1 AS a") { row in _ = try row["missing"] as Int }
        }
    }

    @Test func cachedSelectStarFollowsASchemaChange() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(a INTEGER)")
        try db.execute(sql: "INSERT INTO t(a) VALUES (1)")
        let before = try db.fetchAll(sql: "SELECT * FROM t")
        #expect(before.first?.columnNames == ["a"])
        var counts = [Int]()
        try db.forEachRow(SQL(sql: "SELECT * FROM t")) { row in counts.append(try row.count) }
        try db.execute(sql: "ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'new'")
        // The same SQL text: SQLite re-prepares the cached statement, and the columns follow.
        let after = try db.fetchAll(sql: "SELECT * FROM t")
        #expect(after.first?.columnNames == ["a", "b"])
        var values = [String]()
        try db.forEachRow(SQL(sql: "SELECT * FROM t")) { row in
            counts.append(try row.count)
            values.append(try row[1])
            values.append(try row["b"])
        }
        #expect(counts == [1, 2])
        #expect(values == ["new", "new"])
    }

    @Test func oneValueArgumentsBindAndCountLikeAnArray() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(a INTEGER, b TEXT)")
        try db.execute(sql: "INSERT INTO t(a) VALUES (?)", arguments: StatementArguments(value: .integer(5)))
        #expect(try db.fetchScalar(Int.self, "SELECT a FROM t") == 5)
        let arguments = StatementArguments(value: .text("x"))
        #expect(arguments.positionalValues == [.text("x")])
        #expect(!arguments.isEmpty)
        #expect(arguments.description == "[\(DatabaseValue.text("x"))]")
        let mismatch = #expect(throws: DALError.self) {
            try db.execute(sql: "INSERT INTO t(a, b) VALUES (?, ?)", arguments: arguments)
        }
        #expect(mismatch?.code == .argumentMismatch)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") == 1)
        // Interpolation goes from one value to several and keeps them in order.
        let one: SQL = "SELECT \(1)"
        #expect(one.arguments.positionalValues == [.integer(1)])
        let three: SQL = "SELECT \(1) + \(2) + \(3)"
        #expect(three.arguments.positionalValues == [.integer(1), .integer(2), .integer(3)])
        #expect(try db.fetchScalar(Int.self, three) == 6)
        var combined = StatementArguments(value: .integer(1))
        try combined.append(contentsOf: StatementArguments(value: .integer(2)))
        #expect(combined.positionalValues == [.integer(1), .integer(2)])
    }
}
