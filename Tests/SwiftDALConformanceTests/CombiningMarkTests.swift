import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import Testing

/// A row keyed by text.
private struct Label: Entity, Codable, Equatable {
    static let tableName = "labels"
    static let primaryKey = ["name"]
    var name: String
    var rank: Int64
}

private let labelsTable = TableDefinition("labels") { t in
    t.column("name", .text, notNull: true)
    t.column("rank", .integer, notNull: true)
    t.primaryKey(["name"])
}

/// A quote or a backslash followed by a combining mark is one `Character` in Swift but
/// two characters to a database: SQL text built from it (an array literal, a redacted
/// error message) must treat the quote as a quote.
@Suite struct CombiningMarkTests {
    /// Keys whose quote or backslash a combining mark follows: `findByIds` (an array
    /// parameter on PostgreSQL) finds each one, and only it.
    @Test(arguments: Engine.allCases)
    func keysWithAQuoteOrBackslashBeforeACombiningMarkAreFound(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        try sample.database.write { db in try db.create(labelsTable) }
        let labels = BaseDAL<Label>(database: sample.database)
        // "c\\\u{301}d" next to "c\u{301}d": a backslash left unescaped in an array literal
        // escapes the mark, and the key read is the other row's.
        let names = ["a\"\u{301}b", "c\\\u{301}d", "c\u{301}d", "\\\u{301}\"", "q\"", "plain"]
        for (rank, name) in names.enumerated() { try labels.insert(Label(name: name, rank: Int64(rank))) }
        for (rank, name) in names.enumerated() {
            let found = try labels.findByIds([name, "absent"])
            #expect(found.map(\.rank) == [Int64(rank)], "\(name.debugDescription)")
        }
        #expect(try labels.findByIds(names).count == names.count)
    }

    /// A refused value that starts with a combining mark (which joins the quote before it
    /// into one `Character`) is left out of the error's description like any other.
    @Test(arguments: Engine.allCases)
    func aRefusedValueStartingWithACombiningMarkIsNotQuoted(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        try sample.database.write { db in
            try db.execute(
                sql: "CREATE TABLE refusals(id BIGINT PRIMARY KEY, n BIGINT NOT NULL, email VARCHAR(40) UNIQUE)")
            try db.execute("INSERT INTO refusals VALUES (1, 1, \("\u{301}4222222222222222"))")
        }
        // Not a number (PostgreSQL 22P02, MariaDB 1366; SQLite's plain BIGINT column keeps
        // text), and a duplicate of a unique value (MariaDB 1062 quotes it).
        let statements: [SQL] = [
            "INSERT INTO refusals VALUES (2, \("\u{301}4111111111111111"), NULL)",
            "INSERT INTO refusals VALUES (3, 3, \("\u{301}4222222222222222"))"
        ]
        var refused = 0
        for statement in statements {
            do {
                try sample.database.write { db in try db.execute(statement) }
            } catch {
                refused += 1
                let description = String(describing: error)
                #expect(!description.contains("4111") && !description.contains("4222"), "\(description)")
            }
        }
        #expect(refused == (engine == .sqlite ? 1 : 2))
    }
}
