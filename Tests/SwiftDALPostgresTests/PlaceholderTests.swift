import Foundation
import SwiftDAL
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import Testing

/// SwiftDAL's parameters (`?`, `?NNN`, `:name`, `@name`, `$name`) become PostgreSQL's
/// `$1`, `$2`… while nothing inside a literal, a quoted identifier, a comment or a dollar
/// quote changes: each case runs on a real server and checks what it answers.
@Suite struct PlaceholderTests {
    private func row(_ pool: PostgresPool, _ sql: String, _ arguments: StatementArguments = []) throws -> Row? {
        try pool.read { db in try db.fetchOne(SQL(sql: sql, arguments: arguments)) }
    }

    private func code(_ pool: PostgresPool, _ sql: String, _ arguments: StatementArguments = []) -> DALError.Code? {
        #expect(throws: DALError.self) { _ = try row(pool, sql, arguments) }?.code
    }

    @Test func literalsQuotedNamesAndCommentsAreLeftAlone() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        let literals = try row(
            pool,
            #"SELECT '?' AS a, 'it''s :x @y $z ?1' AS b, E'\'? \\ :w' AS c, 'a\' AS d, ?::int AS "n?:m@$o", ? AS p"#,
            [7, "q"])
        #expect(try literals?.decode(String.self, named: "a") == "?")
        #expect(try literals?.decode(String.self, named: "b") == "it's :x @y $z ?1")
        #expect(try literals?.decode(String.self, named: "c") == #"'? \ :w"#)
        #expect(try literals?.decode(String.self, named: "d") == #"a\"#)
        #expect(try literals?.decode(Int.self, named: "n?:m@$o") == 7)
        #expect(try literals?.decode(String.self, named: "p") == "q")

        let comments = try row(
            pool, "SELECT ?::int AS p -- what ? :x $1\n, /* outer ? /* inner :y */ still ? $$ */ ?::int AS q", [1, 2])
        #expect(try comments?.decode(Int.self, named: "p") == 1)
        #expect(try comments?.decode(Int.self, named: "q") == 2)

        // A literal continued after a line break (an E'…' keeps its escapes there).
        let continued = try row(pool, "SELECT E'x'\n'\\'?' AS s, 'a' -- c\n  'b' AS t, ?::int AS p", [3])
        #expect(try continued?.decode(String.self, named: "s") == "x'?")
        #expect(try continued?.decode(String.self, named: "t") == "ab")
        #expect(try continued?.decode(Int.self, named: "p") == 3)
        let commented = try row(pool, "SELECT E'x' -- a comment first\n'\\'?' AS s, ?::int AS p", [4])
        #expect(try commented?.decode(String.self, named: "s") == "x'?")
        #expect(try commented?.decode(Int.self, named: "p") == 4)

        let dollars = try row(pool, "SELECT $$a ? :b $1 'c$$ AS d, $tag$ $$ ? $tag$ AS e, ?::text AS p", ["x"])
        #expect(try dollars?.decode(String.self, named: "d") == "a ? :b $1 'c")
        #expect(try dollars?.decode(String.self, named: "e") == " $$ ? ")
        #expect(try dollars?.decode(String.self, named: "p") == "x")
    }

    @Test func numberedAndNamedParametersMapToTheirArguments() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        let numbered = try row(pool, "SELECT ?2::int - ?1::int AS diff, $2::int AS again", [1, 10])
        #expect(try numbered?.decode(Int.self, named: "diff") == 9)
        #expect(try numbered?.decode(Int.self, named: "again") == 10)
        let named = try row(pool, "SELECT :a::int + :a::int + @b::int + $c::int AS s", ["a": 1, "b": 2, "c": 3])
        #expect(try named?.decode(Int.self, named: "s") == 7)
        // A parameter never joins a `$` or a word beside it: `$?` is not `$$1`, `x?` not `x$1`.
        let apart = try row(pool, "SELECT 'a' || $$b$$||?::text AS s, 5 AS x, 6 AS x$1", ["c"])
        #expect(try apart?.decode(String.self, named: "s") == "abc")
        #expect(
            #expect(throws: PostgresError.self) { _ = try row(pool, "SELECT $?::int", [1]) }?.sqlState == "42601")
    }

    /// A `$` inside a word is a letter of it, on PostgreSQL as on SQLite: never a parameter.
    @Test func aDollarInsideAnIdentifierIsPartOfIt() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE prices(id INTEGER PRIMARY KEY, price$usd INTEGER, a$1 INTEGER)")
            try db.execute(sql: "INSERT INTO prices(id, price$usd, a$1) VALUES (?, ?, ?)", arguments: [1, 30, 4])
        }
        let found = try row(pool, "SELECT price$usd, a$1 FROM prices WHERE price$usd = ? AND a$1 = $2", [30, 4])
        #expect(try found?.decode(Int.self, named: "price$usd") == 30)
        #expect(try found?.decode(Int.self, named: "a$1") == 4)
    }

    @Test func malformedTextAndMismatchedArgumentsThrowBeforeAnythingRuns() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        for text in [
            "SELECT 'open", "SELECT \"open", "SELECT E'open\\'", "SELECT 1 /* open /* nested */",
            "SELECT $$open", "SELECT $t$open$$", "SELECT :a, ?", "SELECT ?0", "SELECT $70000"
        ] {
            #expect(code(pool, text, ["a": 1]) == .invalidSQL, "\(text)")
        }
        #expect(code(pool, "SELECT ?::int, ?::int", [1]) == .argumentMismatch)
        #expect(code(pool, "SELECT ?::int", [1, 2]) == .argumentMismatch)
        #expect(code(pool, "SELECT ?::int", ["a": 1]) == .argumentMismatch)
        #expect(code(pool, "SELECT :a::int", [1]) == .argumentMismatch)
        #expect(code(pool, "SELECT :a::int", ["b": 1]) == .argumentMismatch)
        #expect(code(pool, "SELECT :a::int", ["a": 1, "b": 2]) == .argumentMismatch)
        // The pool is as good as before.
        #expect(try row(pool, "SELECT ?::int AS one", [1])?.decode(Int.self, named: "one") == 1)
    }
}
