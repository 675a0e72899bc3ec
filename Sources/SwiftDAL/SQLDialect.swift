import SwiftDALConnection

/// The one seam between BaseDAL's SQL generation and a database engine: identifier
/// quoting, parameter placeholders, paging and upsert syntax. SQLite is the only
/// engine today; a PostgreSQL dialect (`$1` placeholders, `RETURNING`) would plug in
/// here without changing BaseDAL's public API.
protocol SQLDialect: Sendable {
    /// A quoted identifier.
    func quote(_ identifier: String) -> String
    /// The placeholder for the next bound parameter.
    var placeholder: String { get }
    /// The clause that turns an `INSERT` into an atomic upsert.
    func upsertClause(conflictColumns: [String], updateColumns: [String]) -> String
}

struct SQLiteDialect: SQLDialect {
    func quote(_ identifier: String) -> String { quoteIdentifier(identifier) }

    var placeholder: String { "?" }

    func upsertClause(conflictColumns: [String], updateColumns: [String]) -> String {
        let target = conflictColumns.map(quote).joined(separator: ", ")
        guard !updateColumns.isEmpty else { return "ON CONFLICT(\(target)) DO NOTHING" }
        let assignments = updateColumns.map { "\(quote($0)) = excluded.\(quote($0))" }.joined(separator: ", ")
        return "ON CONFLICT(\(target)) DO UPDATE SET \(assignments)"
    }
}
