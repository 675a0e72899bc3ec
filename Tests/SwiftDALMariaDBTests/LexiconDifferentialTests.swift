import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// A row of two tenants (1 and 2); the DAL under test is scoped to tenant 3, which has
/// none, so that any row it reads, counts or deletes crossed the scope.
private struct FuzzRow: Entity, Codable, Hashable {
    static let tableName = "fuzz_rows"
    var id: Int64?
    var tenantID: Int64?
    var title: String
    var n: Int64?

    enum CodingKeys: String, CodingKey {
        case id, title, n
        case tenantID = "tenant_id"
    }
}

private final class FuzzRowDAL: BaseDAL<FuzzRow>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "tenant_id") }
}

/// A differential fuzz of the scope's escape-proof reading against a real MariaDB server:
/// conditions made of the pieces MariaDB's lexer reads its own way (quotes, backslashes,
/// `#` and `-- ` comments, `/*! … */` code, introducers, numbers with exponents,
/// parameters, line breaks, NUL bytes), shaped so that a misreading escapes the
/// parentheses. Whenever the scope's check accepts a condition, the server must not read
/// it as escaping: through a tenant-scoped BaseDAL over a pool (SwiftDAL's session), and
/// directly under each `sql_mode` the dialect's readings cover (`ANSI_QUOTES` or not,
/// `NO_BACKSLASH_ESCAPES` or not), no row of another tenant is read, counted or deleted.
///
/// Seeded and bounded: `SWIFTDAL_LEXICON_FUZZ_COUNT` (default 3000) conditions from
/// `SWIFTDAL_LEXICON_FUZZ_SEED` (default 1); set them to run longer or elsewhere.
@Suite struct LexiconDifferentialTests {
    /// The `sql_mode`s a session may have: SwiftDAL's own, and the ones the dialect's
    /// readings stand for.
    static let modes: [(name: String, sqlMode: String)] = [
        ("session", sessionMode),
        ("no ANSI_QUOTES", sessionMode.replacingOccurrences(of: "ANSI_QUOTES,", with: "")),
        ("NO_BACKSLASH_ESCAPES", sessionMode + ",NO_BACKSLASH_ESCAPES"),
        (
            "no ANSI_QUOTES, NO_BACKSLASH_ESCAPES",
            sessionMode.replacingOccurrences(of: "ANSI_QUOTES,", with: "") + ",NO_BACKSLASH_ESCAPES"
        )
    ]

    /// SwiftDAL's session `sql_mode` (MariaDBConnection's).
    static let sessionMode =
        "STRICT_ALL_TABLES,ANSI_QUOTES,PIPES_AS_CONCAT,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,"
        + "NO_ENGINE_SUBSTITUTION"

    @Test func noConditionTheCheckAcceptsEscapesTheScopeOnTheServer() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["SWIFTDAL_LEXICON_FUZZ_COUNT"].flatMap { Int($0) } ?? 3000
        let seed = environment["SWIFTDAL_LEXICON_FUZZ_SEED"].flatMap { UInt64($0) } ?? 1
        let probe = try ScopeProbe()
        defer { probe.close() }
        var generator = SeededGenerator(seed: seed)
        var made = 0
        while made < count {
            let batch = (0..<min(250, count - made)).map { _ in FuzzCondition.make(&generator) }
            made += batch.count
            try probe.check(batch)
        }
        if environment["SWIFTDAL_LEXICON_FUZZ_COUNT"] != nil { print("lexicon fuzz, seed \(seed): \(probe.report)") }
        #expect(
            probe.escapes.isEmpty,
            "conditions the check accepted escaped the scope:\n\(probe.escapes.joined(separator: "\n"))")
        #expect(probe.report.ran["session", default: 0] > count / 40, "too few conditions ran: \(probe.report)")
    }

    /// Conditions that escaped before the lexicon read them as MariaDB does: each is
    /// refused, or stays inside the scope, on every path and in every mode.
    @Test func theEscapesTheFuzzFoundStayInside() throws {
        let probe = try ScopeProbe()
        defer { probe.close() }
        try probe.check(Self.foundEscapes.map { SQL(sql: $0) })
        #expect(probe.escapes.isEmpty, "\(probe.escapes.joined(separator: "\n"))")
        #expect(probe.report.accepted == 0, "the check accepted some of them: \(probe.report)")
    }

    static let foundEscapes: [String] = [
        // A versioned executable comment the server skips (MariaDB skips MySQL 5.7's,
        // 50700 to 99999, and those of versions above its own) where the check read code.
        "/*!99999 ( */ 1) OR 1=1 OR (1 /*!99999 ) */",
        "/*!50700(*/ 1) OR (1 /*!50700)*/",
        "/*!999999(*/ 1) OR 1=1 OR (1 /*!999999)*/",
        "/*!1234567(*/ -1) OR (1=1 /*!1234567)*/",
        "/*M!999999 ( */ 1) OR 1=1 OR (1 /*M!999999 ) */",
        "/*!99999 /* */(*/ 1) OR 1=1 OR (1 /*!99999 /* */)*/",
        "/*!101120 #( */ -1) OR (1=1 # )!\r\n",
        "1 /*!99999 # */ ) OR 1=1 OR (1 \n",
        // An executable comment's `*/` read as the start of a `/*` comment.
        "1=1 /*!*/*1)OR(1/*!*/",
        // A comment's first `*/` ends it, the `*` of a `/*/` inside included.
        "/*(/*/ -1) OR (1=1 /*)*/",
        "/*m!(/*/ 1)OR(1 /*m!)*/",
        // `--` then DEL: a control character, so a comment.
        "--\u{7F}(\n 1) OR 1=1 OR (1 --\u{7F})\n",
        "--\u{7F}(\n 1) OR true OR (1 /*M!999999 ) */"
    ]
}

/// A table of two tenants' rows (1 and 2) and a DAL scoped to tenant 3, which has none:
/// any row it reads, counts or deletes crossed the scope. ``check(_:)`` runs conditions
/// through the DAL (SwiftDAL's sessions), and those the check accepts also directly, the
/// scope after them as SwiftDAL appends it, in a session of each `sql_mode`.
private final class ScopeProbe {
    let pool: MariaDBPool
    private let world: BaseDAL<FuzzRow>
    private let dal: FuzzRowDAL
    private(set) var report = FuzzReport()
    private(set) var escapes = [String]()

    init() throws {
        (pool, _) = try makeMariaDBPool()
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE fuzz_rows (id BIGINT AUTO_INCREMENT PRIMARY KEY, tenant_id BIGINT NOT NULL,
                        title VARCHAR(100) NOT NULL, n BIGINT)
                    """)
        }
        world = BaseDAL<FuzzRow>(database: pool)
        dal = FuzzRowDAL(database: pool, tenant: Int64(3))
        try fill()
    }

    func close() { try? pool.close() }

    private func fill() throws {
        _ = try world.deleteByCondition("1 = 1")
        _ = try world.insertRange(
            [Int64(1), 2].flatMap { tenant in
                ["a", "(", ")", "'", "x"].enumerated().map { index, title in
                    FuzzRow(tenantID: tenant, title: title, n: index == 4 ? nil : Int64(index) - 1)
                }
            })
    }

    func check(_ conditions: [SQL]) throws {
        // SwiftDAL's own path: a scoped BaseDAL on its sessions.
        var accepted = [SQL]()
        for condition in conditions {
            report.conditions += 1
            do {
                let found = try dal.find(condition: condition)
                report.ran["dal", default: 0] += 1
                if !found.isEmpty { escapes.append("dal find: \(condition.sql.debugDescription)") }
            } catch let error as DALError where error.message.contains("must be self-contained") {
                continue
            } catch {}
            accepted.append(condition)
            if let counted = try? dal.getRecordCount(condition: condition), counted != 0 {
                escapes.append("dal count: \(condition.sql.debugDescription)")
            }
            if let deleted = try? dal.deleteByCondition(condition), deleted != 0 {
                escapes.append("dal delete: \(condition.sql.debugDescription)")
                try fill()
            }
            // A whole query (the scope after it, outside its parentheses) reads as well.
            let query = SQL(sql: "SELECT * FROM fuzz_rows WHERE " + condition.sql, arguments: condition.arguments)
            if let found = try? dal.fetchEntities(query) {
                report.ran["dal query", default: 0] += 1
                if !found.isEmpty { escapes.append("dal query: \(condition.sql.debugDescription)") }
            }
        }
        report.accepted += accepted.count
        for (index, mode) in LexiconDifferentialTests.modes.enumerated() {
            try pool.write { db in
                let saved =
                    try db.fetchScalar(String.self, "SELECT @@SESSION.sql_mode") ?? LexiconDifferentialTests.sessionMode
                try db.execute(sql: "SET SESSION sql_mode = '\(mode.sqlMode)'")
                defer { _ = try? db.execute(sql: "SET SESSION sql_mode = '\(saved)'") }
                for condition in accepted {
                    let named = condition.arguments.namedValues != nil
                    var arguments = condition.arguments
                    if named {
                        var values = condition.arguments.namedValues ?? [:]
                        values["swiftdal_tenant"] = .integer(3)
                        arguments = StatementArguments(namedValues: values)
                    } else {
                        try arguments.append(contentsOf: [Int64(3)])
                    }
                    // Backtick names, which every mode reads as names; the mode's number in
                    // the text, so that a statement prepared in one mode is not reused in
                    // another.
                    let query = SQL(
                        sql: "SELECT `tenant_id` AS m\(index) FROM `fuzz_rows` WHERE (\(condition.sql)) AND "
                            + "`tenant_id` = \(named ? ":swiftdal_tenant" : "?")",
                        arguments: arguments)
                    guard let tenants = try? db.fetchColumn(Int64.self, query) else { continue }
                    report.ran[mode.name, default: 0] += 1
                    if !tenants.isEmpty { escapes.append("\(mode.name): \(condition.sql.debugDescription)") }
                }
            }
        }
    }
}

/// What a fuzz run did: conditions made, accepted by the check, and run without error on
/// each path.
private struct FuzzReport: CustomStringConvertible {
    var conditions = 0
    var accepted = 0
    var ran = [String: Int]()

    var description: String {
        "\(conditions) conditions, \(accepted) accepted; ran without error: "
            + ran.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}

/// SplitMix64: the same conditions from the same seed everywhere.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Conditions from a grammar biased to what MariaDB's lexer reads its own way.
enum FuzzCondition {
    /// Regions one reading may hide and another read as code: comments of every kind
    /// (`/*! … */` code, versioned ones a server skips), and literals and names, each
    /// written where a value may stand.
    static let forms: [(open: String, close: String)] = [
        ("#", "\n"), ("# ", "\r\n"), ("#", "\r"), ("#", "\u{0}"), ("-- ", "\n"), ("--\t", "\n"), ("--\r", "\n"),
        ("--\u{0B}", "\n"), ("--\u{0C}", "\n"), ("--\u{01}", "\n"), ("--\u{1F}", "\n"), ("--\u{7F}", "\n"),
        ("--\u{85}", "\n"), ("--\u{A0}", "\n"), ("--", "\n"), ("---", "\n"), ("-- ", "\r"), ("/*", "*/"), ("/*", "/*/"),
        ("/* ", " */"), ("/*!", "*/"), ("/*! ", " */"), ("/*M!", "*/"), ("/*m!", "*/"), ("/*!12345", "*/"),
        ("/*!40000 ", " */"), ("/*!50700", "*/"), ("/*!57000 ", " */"), ("/*!99999", "*/"), ("/*!100000", "*/"),
        ("/*!101119 ", " */"), ("/*!101120 ", " */"), ("/*!999999", "*/"), ("/*M!50700 ", " */"),
        ("/*M!100000", "*/"), ("/*M!999999 ", " */"), ("/*!99999 /* */", "*/"), ("/*!99999 /*", "*/ */"),
        ("/*!100000 /*", "*/ */"), ("/*!1234567", "*/"), ("1=1 /*!", "*/"), ("'", "'=''"), ("'", "'"),
        ("\"", "\"=''"), ("\"", "\""), ("`", "`=1"), ("`", "`"), ("N'", "'=''"), ("n'", "'"),
        ("_utf8mb4'", "'=''"), ("_binary'", "'"), ("_latin1\"", "\""), ("X'", "'"), ("x'", "'=''"), ("B'", "'"),
        ("'\\", "'"), ("'", "\\''"), ("\"\\", "\""), ("`\\", "`"), ("1.e", "\n"), ("1.e-", "\n"), ("1.5e", "\n")
    ]

    /// What may change where a region ends.
    static let confusers = [
        "", "", "", "\\", "\\\\", "'", "''", "\"", "\"\"", "`", "``", "*/", "/*", "/*/", "*/*", "/*!", "*", "/", "\n",
        "\r", "\u{0}",
        "#", "-- ", "--", "!", "M", "1", "x", " ", "\\'", "'\\'", "\u{7F}", "é", "?", ":a"
    ]

    /// Code around them.
    static let fillers = [
        "", "", "", " ", " ", "1", "x", "1=1", "'x'", "\"x\"", "`x`", "title", "n", "(", ")", " OR ", "-", "+", "*",
        "/", ".", ",", "!", "=", "1 ", " 1", "title=", "n=", "1=", "\n", "?", "'a'", "1.5", "t.", ".1", "@a", "$a",
        "\\N", "0x41", "0b1", "1e", "X'41'", "@@version"
    ]

    /// Where a misreading lets the condition out: the server sees the parentheses close
    /// and reopen.
    static let cores = [
        "1) OR 1=1 OR (1", ") OR 1=1 OR (", "1)OR(1", "1) OR (1", "-1) OR (1=1", "1) OR true OR (1", "n) OR n OR (n"
    ]

    static func make(_ generator: inout SeededGenerator) -> SQL {
        func pick(_ pieces: [String]) -> String { pieces.randomElement(using: &generator)! }
        func maybe(_ pieces: [String]) -> String { Int.random(in: 0..<3, using: &generator) == 0 ? pick(pieces) : "" }
        func form() -> (open: String, close: String) { forms.randomElement(using: &generator)! }
        let text: String
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<4:
            // Parentheses inside regions, the core between: `o ( c 1) OR 1=1 OR (1 o ) c`,
            // out if the server hides the regions and the check does not.
            let first = form()
            let second = Bool.random(using: &generator) ? first : form()
            text =
                maybe(fillers) + first.open + maybe(confusers) + "(" + maybe(confusers) + first.close + " "
                + pick(cores) + " " + second.open + maybe(confusers) + ")" + maybe(confusers) + second.close
                + maybe(fillers)
        case 4..<7:
            // The core inside a region: `1 o 1) OR 1=1 OR (1 c`, out if the check hides
            // the region and the server does not.
            let region = form()
            text =
                maybe(fillers) + region.open + maybe(confusers) + pick(cores) + maybe(confusers) + region.close
                + maybe(fillers)
        default:
            // Anything.
            text = (0..<Int.random(in: 1...10, using: &generator)).map { _ in
                switch Int.random(in: 0..<6, using: &generator) {
                case 0: form().open
                case 1: form().close
                case 2: pick(confusers)
                case 3: pick(cores)
                default: pick(fillers)
                }
            }.joined()
        }
        if text.contains(":a") || text.contains("@a") || text.contains("$a") {
            return SQL(sql: text, arguments: ["a": 1])
        }
        let parameters = text.utf8.filter { $0 == UInt8(ascii: "?") }.count
        return SQL(sql: text, arguments: StatementArguments(Array(repeating: 1, count: parameters)))
    }
}
