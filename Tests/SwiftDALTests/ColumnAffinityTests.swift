import Foundation
import SampleDAL
import Testing

/// `ColumnAffinity(declaredType:)` against SQLite itself: for each declared type, what a
/// column of that type does to the text '12' and '12.5' (kept as text, made an integer,
/// made a real) is what the affinity SwiftDAL reports says it does.
@Suite struct ColumnAffinityTests {
    private static let declaredTypes = [
        "INTEGER", "int", "BIGINT", "Point", "VARCHAR(20)", "nchar", "clob", "TEXT", "BLOB", "", "REAL", "float",
        "DOUBLE PRECISION", "NUMERIC", "DECIMAL(10,2)", "BOOLEAN", "DATETIME", "STRING",
        // Unicode case mapping must not apply: SQLite compares ASCII letters only, so a
        // dotless i is not an I, "ß" is not "SS", and the ligature "ﬂ" (U+FB02) is not "FL".
        "\u{131}nt", "\u{130}NT", "\u{FB02}oat", "\u{FB02}OAT", "CLOß", "TEXT\u{301}", "\u{301}INT"
    ]

    /// What SQLite stored for '12' and '12.5' in a column of affinity `affinity`.
    private static func storage(of affinity: ColumnAffinity) -> [String] {
        switch affinity {
        case .integer, .numeric: ["integer", "real"]
        case .text, .blob: ["text", "text"]
        case .real: ["real", "real"]
        }
    }

    @Test func theAffinityOfEveryDeclaredTypeIsSQLites() throws {
        let queue = try DatabaseQueue.inMemory()
        for (index, declared) in Self.declaredTypes.enumerated() {
            let stored = try queue.write { db -> [String] in
                // Unquoted: SQLite takes any byte above 0x7F as part of a name.
                try db.execute(sql: "CREATE TABLE t\(index) (c \(declared))")
                try db.execute(SQL(sql: "INSERT INTO t\(index) (c) VALUES ('12'), ('12.5')"))
                return try db.fetchAll(SQL(sql: "SELECT typeof(c) FROM t\(index) ORDER BY rowid")) {
                    try $0.decode(String.self, at: 0)
                }
            }
            let affinity = ColumnAffinity(declaredType: declared)
            #expect(Self.storage(of: affinity) == stored, "\(declared) (SwiftDAL: \(affinity))")
            // What the schema reports for the column is the same.
            let reported = try queue.read { db in try db.columns(in: "t\(index)").first?.affinity }
            #expect(reported == affinity, "\(declared)")
        }
    }
}
