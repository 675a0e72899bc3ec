import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// The repository's root (for Fixtures/ and the committed generated file).
private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// Every built-in PostgreSQL type (Fixtures/postgres-types.sql) through swiftdal-gen: the
/// entity it generates (committed as Generated/EveryType.swift, compiled into this target)
/// reads every column and writes it back as it was.
@Suite struct PostgresTypesTests {
    /// Every integer is bound as the server reads it back, its edges included (the engine
    /// writes an integer's digits itself, not through `String`).
    @Test func integersOfEveryMagnitudeAreBoundExactly() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, -100, 1_234_567_890_123, .max, .min, .min + 1, .max - 1]
        values += (0..<18).map { power in (0..<power).reduce(Int64(1)) { product, _ in product * 10 } }
        values += values.filter { $0 != .min }.map { -$0 }
        let read = try pool.read { db in
            try values.map { value in
                (
                    try db.fetchScalar(String.self, "SELECT CAST(\(value) AS bigint)::text"),
                    try db.fetchScalar(Int64.self, "SELECT \(value)::bigint")
                )
            }
        }
        #expect(read.map(\.0) == values.map { String($0) })
        #expect(read.map(\.1) == values)
    }

    /// Each statement sends its own parameters: a NULL after a value at the same position
    /// is NULL on the server (the engine reuses its parameter arrays from one statement to
    /// the next), whatever the types around it, and is read so from outside.
    @Test func nullParametersAreSentAsNullAfterValues() throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql("CREATE TABLE p(k int PRIMARY KEY, a text, b bigint, c bytea, d double precision)")
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        try pool.write { db in
            let insert = "INSERT INTO p(k, a, b, c, d) VALUES (?, ?, ?, ?, ?)"
            try db.execute(sql: insert, arguments: [1, "one", 1, Data([1]), 1.5])
            try db.execute(sql: insert, arguments: [2, nil as String?, nil as Int?, nil as Data?, nil as Double?])
            try db.execute(sql: insert, arguments: [3, "three", nil as Int?, Data([3, 3]), nil as Double?])
            try db.execute(sql: "INSERT INTO p(k) VALUES (?)", arguments: [4])
            try db.execute(sql: insert, arguments: [5, nil as String?, 5, nil as Data?, 5.5])
        }
        let rows = try outside.psql(
            "SELECT k, coalesce(a, 'NULL'), coalesce(b::text, 'NULL'), coalesce(encode(c, 'hex'), 'NULL'), "
                + "coalesce(d::text, 'NULL') FROM p ORDER BY k")
        #expect(
            rows.split(separator: "\n") == [
                "1|one|1|01|1.5", "2|NULL|NULL|NULL|NULL", "3|three|NULL|0303|NULL", "4|NULL|NULL|NULL|NULL",
                "5|NULL|5|NULL|5.5"
            ])
    }

    /// A statement prepared on the server whose columns all read the same in binary format
    /// asks for binary from its first execution (the server describes its columns when it
    /// is prepared); one sent unnamed (behind PgBouncer's transaction pooling) reads text
    /// every time. Every value of those types, edges included, reads the same from text and
    /// binary results, through the general path and the typed reads, on the first and the
    /// later executions, and as the server stores it.
    @Test func valuesReadTheSameFromTextAndBinaryResults() throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql(
            """
            CREATE TABLE b(k int PRIMARY KEY, i2 smallint, i4 integer, i8 bigint, o oid, f boolean,
              d double precision, t text, v varchar(20), c char(4), n name, y bytea);
            INSERT INTO b VALUES
              (1, -32768, -2147483648, -9223372036854775808, 0, false, '-Infinity', '', '', '', '', ''),
              (2, 32767, 2147483647, 9223372036854775807, 4294967295, true, 'Infinity', 'Caf\u{E9} ☕ 𝄞', 'x', 'ab',
               'nm', '\\x00ff00'),
              (3, 0, 0, 0, 1, true, 'NaN', 'e\u{301}', 'é', 'é', 'é', '\\x'),
              (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
              (5, -1, -1, -1, 2147483648, false, '-0', ' ', ' ', ' ', ' ', '\\x00'),
              (6, 1, 1, 1, 7, true, '4.9e-324', 'a', 'b', 'c', 'd', '\\x5c'),
              (7, 2, 2, 2, 8, false, '1.7976931348623157e308', 'x', 'y', 'z', 'w', '\\x01'),
              (8, 3, 3, 3, 9, true, '0.1', 'q', 'r', 's', 't', '\\x02');
            """)
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        var unnamed = PostgresConfiguration()
        unnamed.transactionPooling = true  // statements sent unnamed: every result in text
        let textPool = try PostgresPool(url: url, configuration: unnamed)
        defer { try? textPool.close() }
        let query: SQL = "SELECT k, i2, i4, i8, o, f, d, t, v, c, n, y FROM b WHERE k > \(0) ORDER BY k"
        struct Typed: Equatable {
            var integers: [Int64?]
            var double: Double?
            var texts: [String?]
            var bytes: Data?
        }
        func typedRow(_ row: RowView) throws -> Typed {
            // NaN is no REAL (SQLite holds none): reading it as a Double fails, from text and binary alike.
            let double = try? row.decode(Double?.self, at: 6)
            return Typed(
                integers: try (0..<6).map { try row.decode(Int64?.self, at: $0) },
                double: double ?? nil,
                texts: try (7..<11).map { try row.decode(String?.self, at: $0) },
                bytes: try row.decode(Data?.self, at: 11))
        }
        // The typed reads run a statement of their own, whose first run is a first run too.
        let typedQuery: SQL = "SELECT k, i2, i4, i8, o, f, d, t, v, c, n, y FROM b WHERE k < \(100) ORDER BY k"
        func reads(_ pool: PostgresPool) throws -> (general: [[Row]], typed: [[Typed]]) {
            try pool.read { db in
                (
                    try (0..<3).map { _ in try db.fetchAll(query) },
                    try (0..<3).map { _ in try db.fetchAll(typedQuery, typedRow) }
                )
            }
        }
        let (binaryGeneral, binaryTyped) = try reads(pool)
        let (general, typed) = try reads(textPool)
        #expect(general[0].count == 8)
        for read in general.dropFirst() + binaryGeneral {
            #expect(read.count == 8)
            for (row, first) in zip(read, general[0]) {
                #expect(zip(row.values, first.values).allSatisfy { $0.isIdentical(to: $1) }, "\(row.values)")
            }
        }
        #expect(typed.count == 3 && (typed.dropFirst() + binaryTyped).allSatisfy { $0 == typed[0] })
        #expect(
            typed[0].map(\.double) == [
                -.infinity, .infinity, nil, nil, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1
            ])
        #expect(typed[2][4].double.map { $0 == 0 && $0.sign == .minus } == true)  // -0 kept
        // As the server stores them.
        let first = general[0]
        #expect(first[0].values.prefix(7) == [1, -32768, -2_147_483_648, .integer(.min), 0, 0, .real(-.infinity)])
        #expect(first[1].values[3] == .integer(.max) && first[1].values[4] == .integer(4_294_967_295))
        #expect(first[1].values[7] == .text("Caf\u{E9} ☕ 𝄞") && first[1].values[9] == .text("ab  "))
        #expect(first[1].values[11] == .blob(Data([0, 255, 0])))
        #expect(first[2].values[6] == .text("NaN") && first[2].values[7] == .text("e\u{301}"))
        #expect(first[3].values.dropFirst().allSatisfy { $0 == .null })
        #expect(first[4].values[4] == .integer(2_147_483_648))
        #expect(
            first[5].values[6] == .real(.leastNonzeroMagnitude) && first[6].values[6] == .real(1.7976931348623157e308))
        #expect(first[7].values[6] == .real(0.1) && first[5].values[11] == .blob(Data([0x5C])))
    }

    /// Only statements whose result columns PostgreSQL pins read binary: a `FETCH` from a
    /// cursor declared again over other columns (numeric, timestamptz: no binary reader)
    /// reads them as the text path does, however often the same `FETCH` ran before.
    @Test func statementsWhoseColumnsChangeStayInText() throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql(
            "CREATE TABLE m(id bigint, price numeric, at timestamptz); "
                + "INSERT INTO m VALUES (1, 2.50, '2026-01-02 03:04:05+00'), (2, 10, '2026-02-03 04:05:06+00')")
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        let (ids, later) = try pool.write { db in
            try db.execute(sql: "DECLARE c CURSOR FOR SELECT id FROM m ORDER BY id")
            let ids = try (0..<3).map { _ in try db.fetchAll(sql: "FETCH 1 FROM c").map(\.values) }
            try db.execute(sql: "CLOSE c")
            try db.execute(sql: "DECLARE c CURSOR FOR SELECT price, at FROM m ORDER BY id")
            let later = try (0..<2).map { _ in try db.fetchAll(sql: "FETCH 1 FROM c").map(\.values) }
            return (ids, later)
        }
        #expect(ids == [[[.integer(1)]], [[.integer(2)]], []])
        #expect(later[0].first?.first == .real(2.5) && later[1].first?.first == .integer(10))
        #expect(later[0].first?.last == .text("2026-01-02 03:04:05+00"))
    }

    /// Text results read as binary ones do, whatever the database's defaults: a database
    /// set to round floats (`extra_float_digits = 0`) and to write bytea escaped still
    /// reads the exact double and the bytes, in text (a result with a `numeric` column,
    /// which has no binary reader; any result of a statement sent unnamed, as behind
    /// PgBouncer, in a transaction or not) and in binary, on every run of a statement.
    @Test func textResultsReadAsBinaryOnesUnderAnyDatabaseDefaults() throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql(
            "ALTER DATABASE \(outside.database) SET extra_float_digits = 0; "
                + "ALTER DATABASE \(outside.database) SET bytea_output = 'escape'")
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        var unnamed = PostgresConfiguration()
        unnamed.transactionPooling = true  // statements sent unnamed: every result in text
        let textPool = try PostgresPool(url: url, configuration: unnamed)
        defer { try? textPool.close() }
        let query = "SELECT CAST(0.1 AS float8) + CAST(0.2 AS float8), CAST('\\x00ff' AS bytea)"
        let withNumeric = query + ", CAST(1.5 AS numeric)"  // (no binary reader: text on every run)
        func reads(_ pool: PostgresPool, _ sql: String) throws -> [[DatabaseValue]?] {
            try pool.read { db in try (0..<3).map { _ in try db.fetchOne(SQL(sql: sql))?.values } }
        }
        // Outside any transaction of SwiftDAL's, behind the pooler no session setting holds.
        func readsOutsideATransaction(_ pool: PostgresPool, _ sql: String) throws -> [[DatabaseValue]?] {
            try (0..<3).map { _ in try pool.reentrantRead { db in try db.fetchOne(SQL(sql: sql))?.values } }
        }
        let expected: [DatabaseValue] = [.real(0.1 + 0.2), .blob(Data([0, 255]))]
        for (name, read) in [
            ("binary", try reads(pool, query)), ("text", try reads(textPool, query)),
            ("text outside a transaction", try readsOutsideATransaction(textPool, query)),
            // A query that begins with comments is still one that returns rows.
            (
                "text outside a transaction, after comments",
                try readsOutsideATransaction(textPool, "-- the report\n/* sums /* nested */ */ (" + query + ")")
            ),
            ("text with numeric", try reads(pool, withNumeric).map { $0.map { Array($0.prefix(2)) } })
        ] {
            #expect(read.allSatisfy { $0 == expected }, "\(name): \(read)")
        }
        #expect(try reads(pool, withNumeric).allSatisfy { $0?.last == .real(1.5) })
        // A transaction begun by hand behind the pooler, its BEGIN after a comment and in
        // lower case, gets the same settings.
        let byHand = try textPool.reentrantRead { db throws -> [DatabaseValue]? in
            try db.execute(sql: "-- by hand\nbegin -- and a note")
            let values = try db.fetchOne(SQL(sql: query))?.values
            try db.execute(sql: "COMMIT")
            return values
        }
        #expect(byHand == expected)

        // Behind the pooler, outside a transaction: a write returning rows, spelled in lower
        // case, reads exactly too; one whose row reading throws is still committed, as it
        // is without the pooler (the server ran it).
        try outside.psql("CREATE TABLE m(v float8)")
        let returned = try textPool.reentrantWrite { db in
            try db.fetchOne("insert into m(v) values (CAST(0.1 AS float8) + CAST(0.2 AS float8))\nreturning v")?
                .values
        }
        #expect(returned == [.real(0.1 + 0.2)])
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try textPool.reentrantWrite { db in
                try db.forEachRow("INSERT INTO m(v) VALUES (\(2.5)) RETURNING v") { _ in throw Refused() }
            }
        }
        #expect(try outside.psql("SELECT count(*) FROM m").trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    }

    /// A query is described when it is prepared, so its results are read in binary from
    /// its first execution on a connection, not from its second; a result with a column
    /// that has no binary reader (`numeric`) stays in text, and so does every result of a
    /// statement sent unnamed (behind a pooler).
    @Test func aQueryIsReadInBinaryFromItsFirstExecution() throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql("CREATE TABLE b(id bigint PRIMARY KEY, v float8, t text); INSERT INTO b VALUES (1, 0.5, 'x')")
        let query: SQL = "SELECT id, v, t FROM b WHERE id = \(1)"
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        let counts = try pool.read { db throws -> [Int] in
            let before = db.engineBinaryResults
            var counts = [Int]()
            for _ in 0..<2 {
                let values = try db.fetchOne(query)?.values
                #expect(values == [.integer(1), .real(0.5), .text("x")])
                counts.append(db.engineBinaryResults - before)
            }
            _ = try db.fetchAll("SELECT CAST(1.5 AS numeric)")
            counts.append(db.engineBinaryResults - before)
            return counts
        }
        #expect(counts == [1, 2, 2])
        var unnamed = PostgresConfiguration()
        unnamed.transactionPooling = true
        let textPool = try PostgresPool(url: url, configuration: unnamed)
        defer { try? textPool.close() }
        let textCount = try textPool.read { db throws -> Int in
            let before = db.engineBinaryResults
            for _ in 0..<2 {
                let values = try db.fetchOne(query)?.values
                #expect(values == [.integer(1), .real(0.5), .text("x")])
            }
            return db.engineBinaryResults - before
        }
        #expect(textCount == 0)
    }

    @Test func everyBuiltInTypeIsGeneratedReadAndWrittenBackAsItWas() throws {
        let (outside, url) = try OutsideView.fresh()
        try outside.psql(try String(contentsOfFile: repositoryRoot + "/Fixtures/postgres-types.sql", encoding: .utf8))

        // Generated again, the file is the committed one (its first line names the command,
        // with this run's server).
        let generator =
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
            + "/swiftdal-gen"
        let temporary = try TemporaryDirectory()
        let output = temporary.file("EveryType.swift")
        let (status, printed) = try runProgram(
            generator,
            [
                "--postgres", url, "--tables", "every_type", "--stem", "every_type=EveryType", "--internal", "--output",
                output
            ])
        #expect(status == 0, "swiftdal-gen: \(printed)")
        let generated = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let committed = try String(
            contentsOfFile: repositoryRoot + "/Tests/SwiftDALPostgresTests/Generated/EveryType.swift", encoding: .utf8)
        #expect(generated.split(separator: "\n").dropFirst() == committed.split(separator: "\n").dropFirst())

        // Read: every column of a full row and of a row of NULLs.
        let pool = try PostgresPool(url: url)
        defer { try? pool.close() }
        let types = EveryTypeDAL(database: pool)
        let rows = try types.getAll(orderBy: "id")
        #expect(rows.count == 2)
        #expect(rows.first?.cash == "$1,234.56")
        #expect(rows.first?.span == "1 day 02:03:04")
        #expect(rows.first?.spot == "(1.5,-2)")
        #expect(rows.first?.exact == Decimal(string: "12345678.1234"))

        // Written back unchanged: nothing changes (the table's text, row by row).
        let fingerprint = "SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM every_type t"
        let before = try outside.psql(fingerprint)
        for row in rows { #expect(try types.update(row)) }
        #expect(try outside.psql(fingerprint) == before)

        // Inserted as new rows: every column's text is the original's.
        for var row in rows {
            let original = row.id
            row.id = nil
            let copy = try types.insert2(row)
            let differing = try outside.psql(
                """
                SELECT string_agg(a.key, ', ') FROM every_type o
                CROSS JOIN every_type c
                CROSS JOIN LATERAL jsonb_each_text(to_jsonb(o) - 'id') a
                JOIN LATERAL jsonb_each_text(to_jsonb(c) - 'id') b ON b.key = a.key
                WHERE o.id = \(original ?? 0) AND c.id = \(copy) AND a.value IS DISTINCT FROM b.value
                """)
            #expect(
                differing.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "columns that differ: \(differing)")
        }
    }
}
