import Foundation
import SwiftDAL
import SwiftDALConnection
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
