import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

@Suite struct StatementTests {
    /// Arguments joined (a condition's, then a scope's or a limit's) keep every value in
    /// order whatever each side holds (one value, two, an array), carry a conversion
    /// error, and refuse positional and named values together.
    @Test func appendedArgumentsKeepTheirOrderAndRefuseMixing() throws {
        func positional(_ values: [DatabaseValue]) -> StatementArguments { StatementArguments(values: values) }
        let one = positional([.integer(1)])
        let two = positional([.text("a"), .null])
        let three = positional([.real(0.5), .integer(2), .text("b")])
        var joined = one
        try joined.append(contentsOf: two)
        #expect(joined.positionalValues == [.integer(1), .text("a"), .null])
        try joined.append(contentsOf: three)
        #expect(joined.positionalValues == [.integer(1), .text("a"), .null, .real(0.5), .integer(2), .text("b")])
        var fromPair = two
        try fromPair.append(contentsOf: one)
        #expect(fromPair.positionalValues == [.text("a"), .null, .integer(1)])
        var fromMany = three
        try fromMany.append(contentsOf: two)
        #expect(fromMany.positionalValues == [.real(0.5), .integer(2), .text("b"), .text("a"), .null])
        var fromNothing = StatementArguments()
        try fromNothing.append(contentsOf: one)
        #expect(fromNothing.positionalValues == [.integer(1)])
        try fromNothing.append(contentsOf: StatementArguments())
        #expect(fromNothing.positionalValues == [.integer(1)])

        let named = StatementArguments(namedValues: ["x": .integer(3)])
        var namedFromNothing = StatementArguments()
        try namedFromNothing.append(contentsOf: named)
        #expect(namedFromNothing.namedValues == ["x": .integer(3)])
        var namedKept = named
        try namedKept.append(contentsOf: StatementArguments())
        #expect(namedKept.namedValues == ["x": .integer(3)])
        var mixed = one
        #expect(throws: DALError.self) { try mixed.append(contentsOf: named) }
        var mixedBack = named
        let refused = #expect(throws: DALError.self) { try mixedBack.append(contentsOf: one) }
        #expect(refused?.code == .argumentMismatch)
        var twoNamed = named
        #expect(throws: DALError.self) { try twoNamed.append(contentsOf: named) }

        let failing: SQL = "\(UInt64.max)"  // above Int64.max: not storable
        #expect(failing.arguments.conversionError != nil)
        var carried = one
        try carried.append(contentsOf: failing.arguments)
        #expect(carried.positionalValues == [.integer(1), .null])
        #expect(carried.conversionError != nil)
    }

    @Test func interpolatedValuesBecomeBoundParameters() throws {
        let minAge = 18
        let pattern = "%ann%"
        let query: SQL = "SELECT * FROM users WHERE age > \(minAge) AND name LIKE \(pattern)"
        #expect(query.sql == "SELECT * FROM users WHERE age > ? AND name LIKE ?")
        #expect(query.arguments.positionalValues == [.integer(18), .text("%ann%")])
    }

    /// Values of a known type (converted where the literal is written), optionals,
    /// existentials and `nil` all bind in order; a value that cannot be converted binds
    /// `NULL` in its place and its error is thrown when the statement runs.
    @Test func everyKindOfInterpolatedValueBindsInOrder() throws {
        let some: Int? = 7
        let none: String? = nil
        let boxed: any DatabaseValueConvertible = 2.5
        let query: SQL = "\(1) \("a") \(some) \(none) \(boxed) \(nil) \(Data([1, 2])) \(Int8(-3))"
        #expect(query.sql == "? ? ? ? ? ? ? ?")
        let expected: [DatabaseValue] = [
            .integer(1), .text("a"), .integer(7), .null, .real(2.5), .null, .blob(Data([1, 2])), .integer(-3)
        ]
        #expect(query.arguments.positionalValues == expected)
        #expect(query.arguments.conversionError == nil)
        let failing: SQL = "\(1) \(UInt64.max) \(Double.nan) \(2)"
        #expect(failing.arguments.positionalValues == [.integer(1), .null, .null, .integer(2)])
        // The first failure is the one reported.
        #expect(failing.arguments.conversionError?.message.contains("UInt64") == true)
        let db = try Database.inMemory()
        #expect(throws: DALError.self) {
            try db.execute(sql: "SELECT 1 WHERE 0 IN (?, ?, ?, ?)", arguments: failing.arguments)
        }
    }

    @Test func hostileValueIsStoredLiterallyAndTheTableSurvives() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        let hostile = "'); DROP TABLE users; --"
        try db.execute("INSERT INTO users(name) VALUES (\(hostile))")
        #expect(try db.fetchScalar(String.self, "SELECT name FROM users") == hostile)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'users'") == 1)
    }

    @Test func bindsByPositionAndByEveryNamePrefix() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        try db.execute(sql: "INSERT INTO users(name, age) VALUES (?, ?)", arguments: ["Ann", 31])
        try db.execute(sql: "INSERT INTO users(name, age) VALUES (?2, ?1)", arguments: [40, "Bob"])
        try db.execute(sql: "INSERT INTO users(name, age) VALUES (:name, :age)", arguments: ["name": "Cy", "age": 22])
        try db.execute(sql: "INSERT INTO users(name, age) VALUES (@name, @age)", arguments: ["@name": "Di", "age": 23])
        try db.execute(sql: "INSERT INTO users(name, age) VALUES ($name, $age)", arguments: ["name": "Ed", "$age": 24])
        let rows = try db.fetchAll("SELECT name, age FROM users ORDER BY id")
        #expect(try rows.map { try $0.decode(String.self, at: 0) } == ["Ann", "Bob", "Cy", "Di", "Ed"])
        #expect(try rows.map { try $0.decode(Int.self, named: "age") } == [31, 40, 22, 23, 24])
    }

    @Test func aNamedParameterUsedTwiceIsBoundOnce() throws {
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne(SQL(sql: "SELECT :x + :x AS twice", arguments: ["x": 21])))
        #expect(try row.decode(Int.self, named: "twice") == 42)
    }

    @Test func wrongArgumentCountsAndNamesThrow() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        let tooFew = #expect(throws: DALError.self) {
            try db.execute(sql: "INSERT INTO users(name, age) VALUES (?, ?)", arguments: ["Ann"])
        }
        #expect(tooFew?.code == .argumentMismatch)
        let tooMany = #expect(throws: DALError.self) {
            try db.execute(sql: "INSERT INTO users(name) VALUES (?)", arguments: ["Ann", 1])
        }
        #expect(tooMany?.code == .argumentMismatch)
        let missing = #expect(throws: DALError.self) {
            try db.execute(sql: "INSERT INTO users(name) VALUES (:name)", arguments: ["nom": "Ann"])
        }
        #expect(missing?.code == .argumentMismatch)
        let extra = #expect(throws: DALError.self) {
            try db.execute(sql: "INSERT INTO users(name) VALUES (:name)", arguments: ["name": "Ann", "age": 3])
        }
        #expect(extra?.code == .argumentMismatch)
        #expect(extra?.message.contains("age") == true)
        // Interpolated values kept without an array (one, two), then in one (three): each
        // count binds where it fits and is refused where it does not.
        let (name, age, email) = ("Bo", 40, "x")
        let two: SQL = "INSERT INTO users(name, age) VALUES (\(name), \(age))"
        #expect(two.arguments.count == 2 && "\(two.arguments)" == "[\'Bo\', 40]")
        let twoForThree = #expect(throws: DALError.self) {
            try db.execute(SQL(sql: "INSERT INTO users(name, age, email) VALUES (?, ?, ?)", arguments: two.arguments))
        }
        #expect(twoForThree?.code == .argumentMismatch)
        let three: SQL = "INSERT INTO users(name, age, email) VALUES (\(name), \(age), \(email))"
        #expect(three.arguments.positionalValues == [.text("Bo"), .integer(40), .text("x")])
        let threeForTwo = #expect(throws: DALError.self) {
            try db.execute(SQL(sql: "INSERT INTO users(name, age) VALUES (?, ?)", arguments: three.arguments))
        }
        #expect(threeForTwo?.code == .argumentMismatch)
        // The connection is still fine and nothing was inserted.
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 0)
        #expect(try db.execute(two) == 1)
        #expect(try db.fetchScalar(Int.self, "SELECT age FROM users WHERE name = \(name)") == 40)
    }

    @Test func moreThanOneStatementInOneCallIsRefused() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        let error = #expect(throws: DALError.self) { try db.execute(sql: "DELETE FROM users; DROP TABLE users") }
        #expect(error?.code == .invalidSQL)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'users'") == 1)
        // A trailing comment or semicolon is fine.
        try db.execute(sql: "DELETE FROM users; -- done")
        #expect(#expect(throws: DALError.self) { try db.execute(sql: "   ") }?.code == .invalidSQL)
    }

    @Test func scriptsRunEveryStatementAndNameTheFailingOne() throws {
        let db = try Database.inMemory()
        try db.executeScript("CREATE TABLE a(x); CREATE TABLE b(y); INSERT INTO a VALUES (1);")
        #expect(try db.fetchScalar(Int.self, "SELECT x FROM a") == 1)
        let error = #expect(throws: SQLiteError.self) {
            try db.executeScript("INSERT INTO a VALUES (2); INSERT INTO nope VALUES (3);")
        }
        #expect(error?.sql?.contains("nope") == true)
        #expect(error?.message.contains("no such table") == true)
    }

    @Test func columnsAreReadByZeroBasedIndexAndByName() throws {
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT 1 AS first, 'two' AS second, NULL AS third"))
        #expect(row.columnNames == ["first", "second", "third"])
        #expect(try row.decode(Int.self, at: 0) == 1)
        #expect(try row.decode(String.self, at: 1) == "two")
        #expect(try row.decode(String.self, named: "SECOND") == "two")
        let outOfRange = #expect(throws: DALError.self) { _ = try row.value(at: 3) }
        #expect(outOfRange?.code == .invalidColumn)
        let unknown = #expect(throws: DALError.self) { _ = try row.value(named: "fourth") }
        #expect(unknown?.code == .invalidColumn)
        let id: Int = try row[0]
        let second: String = try row["second"]
        #expect(id == 1 && second == "two")
    }

    /// Small texts and blobs are bound from the statement's own buffer (`SQLITE_STATIC`),
    /// large ones copied by SQLite: one cached statement, run with values of every size
    /// (the buffer grows, overflows, holds empty values, and a failed execution clears
    /// it), writes every byte it was given. Checked from a second connection, and by
    /// lookups that bind the same texts.
    @Test func textsAndBlobsOfEverySizeAreWrittenByteForByteThroughOneStatement() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("values.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE v(id INTEGER PRIMARY KEY, a TEXT UNIQUE, b BLOB, c TEXT)")
        var generator = SystemRandomNumberGenerator()
        var written = [Int: (a: String, b: Data, c: String)]()
        for row in 0..<400 {
            // Sizes from nothing past the 4 KB of a large value; together sometimes past
            // the buffer's 8 KB.
            let a = String(repeating: "é", count: row % 37) + "\(row)" + (row % 9 == 0 ? "\u{0}tail" : "")
            let b = Data((0..<((row * 131) % 5_000)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let c = row % 5 == 0 ? "" : String(repeating: "x\(row % 10)", count: (row * 53) % 3_000)
            try db.execute("INSERT INTO v(id, a, b, c) VALUES (\(row), \(a), \(b), \(c))")
            written[row] = (a, b, c)
            if row % 50 == 7 {
                // A failed execution of the same statement (a duplicate `a`) writes nothing.
                #expect(throws: (any Error).self) {
                    try db.execute("INSERT INTO v(id, a, b, c) VALUES (\(row + 10_000), \(a), \(b), \(c))")
                }
            }
        }
        #expect(try db.cachedStatementCount >= 1)
        let outside = try Database(path: path, mode: .readOnly)
        var seen = 0
        try outside.forEachRow("SELECT id, a, b, c FROM v ORDER BY id") { row in
            let id: Int = try row.decode(at: 0)
            let expected = written[id]
            #expect(try row.decode(String.self, at: 1) == expected?.a, "row \(id)")
            #expect(try row.decode(Data.self, at: 2) == expected?.b, "row \(id)")
            #expect(try row.decode(String.self, at: 3) == expected?.c, "row \(id)")
            seen += 1
        }
        #expect(seen == 400)
        // Lookups bind the same texts: each finds its own row.
        for (row, values) in written where row % 7 == 0 {
            #expect(try db.fetchScalar(Int.self, "SELECT id FROM v WHERE a = \(values.a) AND c = \(values.c)") == row)
        }
    }

    @Test func statementsArePreparedOnceAndCached() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        let before = try db.cachedStatementCount
        for index in 0..<100 {
            try db.execute("INSERT INTO users(name, age) VALUES (\("user\(index)"), \(index))")
        }
        #expect(try db.cachedStatementCount == before + 1)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 100)
    }

    @Test func emptyValueListInInterpolationMatchesNothing() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        try db.execute("INSERT INTO users(name) VALUES ('a')")
        let none: [Int] = []
        #expect(try db.fetchAll("SELECT * FROM users WHERE id IN (\(values: none))").isEmpty)
        #expect(try db.fetchAll("SELECT * FROM users WHERE id IN (\(values: [1, 2]))").count == 1)
    }

    @Test func fragmentsComposeWithTheirArgumentsInOrder() throws {
        var query: SQL = "SELECT name FROM users WHERE age > \(1)"
        try query.append("AND name = \("x")")
        let nested: SQL = "SELECT * FROM (\(sql: query)) WHERE name <> \("y")"
        #expect(nested.sql == "SELECT * FROM (SELECT name FROM users WHERE age > ? AND name = ?) WHERE name <> ?")
        #expect(nested.arguments.positionalValues == [1, "x", "y"])
        #expect(throws: DALError.self) {
            _ = try SQL(sql: "x = :x", arguments: ["x": 1]).appending("AND y = \(2)")
        }
    }

    @Test func identifiersAreQuotedWithInnerQuotesDoubled() {
        #expect(quoteIdentifier("users") == "\"users\"")
        #expect(quoteIdentifier("we\"ird") == "\"we\"\"ird\"")
        let query: SQL = "SELECT \(identifier: "a\"b") FROM t"
        #expect(query.sql == "SELECT \"a\"\"b\" FROM t")
    }

    @Test func invalidUTF8InATextColumnIsAConversionError() throws {
        let db = try Database.inMemory()
        let error = #expect(throws: DALError.self) { _ = try db.fetchOne("SELECT CAST(x'C328' AS TEXT) AS bad") }
        #expect(error?.code == .conversionFailed)
        #expect(error?.column == "bad")
        #expect(try db.fetchScalar(Int.self, "SELECT 1") == 1)
    }
}
