import Foundation
public import SwiftDALConnection

/// A test helper that fails a DAL call whose SQL reads a whole table where an index
/// should have been used: it records the statements the call runs, asks the engine for
/// each one's plan (SQLite's `EXPLAIN QUERY PLAN`, PostgreSQL's `EXPLAIN` of the generic
/// plan, with sequential scans discouraged so that a small test table still shows
/// whether an index could serve; MariaDB's `EXPLAIN`, where a scan is `type=ALL`, or
/// `type=index` while filtering rows), and throws ``QueryPlanViolation`` naming every
/// query, update and delete that scans a table.
///
/// The guard must be the database's observer (``Configuration/observer``, or
/// `PostgresConfiguration.observer`); it throws when a checked call recorded no
/// statement, so that a guard left unplugged never passes silently. A scan that is
/// right (counting a whole table, a `LIKE '%…%'` search) is allowed by naming its table.
///
/// For example:
///
/// ```swift
/// let planGuard = QueryPlanGuard()
/// var configuration = Configuration()
/// configuration.observer = planGuard
/// let pool = try DatabasePool(path: path, configuration: configuration)
/// let users = UserDAL(database: pool)
/// try planGuard.check(pool) { _ = try users.findByEmail("ann@example.com") }    // passes: an index
/// try planGuard.check(pool, allowingScansOf: ["users"]) { _ = try users.getRecordCount() }
/// ```
public final class QueryPlanGuard: DatabaseObserver {
    /// The SQL recorded while a check runs; `nil` outside checks.
    private let recorded = Locked<[String]?>(nil)

    /// A guard; set it as the observer of the database it checks.
    ///
    /// For example, `configuration.observer = QueryPlanGuard()`.
    public init() {}

    /// Records the SQL of each statement that succeeded while a ``check(_:allowingScansOf:_:)`` runs; called by the database, on the thread that ran the statement.
    public func statementDidFinish(_ event: StatementEvent) {
        guard event.error == nil else { return }
        recorded.withLock { $0?.append(event.sql) }
    }

    /// Runs `body`, then checks the plan of each query, update and delete it ran on
    /// `database`: throws ``QueryPlanViolation`` when one scans a table not named in
    /// `allowed`, and ``DALError/Code/invalidValue`` when `body` ran no statement seen by
    /// this guard (it is not the database's observer). Returns what `body` returned.
    ///
    /// For example, `let user = try planGuard.check(pool) { try users.findById(7) }`.
    @discardableResult
    public func check<R>(
        _ database: any DatabaseWriter, allowingScansOf allowed: Set<String> = [], _ body: () throws -> R
    ) throws -> R {
        recorded.withLock { $0 = [] }
        let result: R
        do {
            result = try body()
        } catch {
            recorded.withLock { $0 = nil }
            throw error
        }
        let statements = recorded.withLock { list -> [String] in
            defer { list = nil }
            return list ?? []
        }
        guard !statements.isEmpty else {
            throw DALError(
                .invalidValue,
                "the query-plan guard saw no statement: set it as the database's observer (configuration.observer)")
        }
        var seen = Set<String>()
        let planned = statements.filter { Self.isPlanned($0) && seen.insert($0).inserted }
        let scans = try database.write { db -> [QueryPlanViolation.Scan] in
            let tables = Set(try db.tableNames().map(\.identifierKey))
            let allowedKeys = Set(allowed.map(\.identifierKey))
            var scans = [QueryPlanViolation.Scan]()
            let dialect = db.dialect
            for sql in planned {
                let plan = try db.queryPlan(of: sql)
                for name in dialect.scannedNames(inPlan: plan)
                where !allowedKeys.contains(name.identifierKey)
                    && (tables.contains(name.identifierKey) || dialect.planNamesAliases)
                {
                    scans.append(QueryPlanViolation.Scan(sql: sql, table: name, plan: plan))
                }
            }
            return scans
        }
        guard scans.isEmpty else { throw QueryPlanViolation(scans: scans) }
        return result
    }

    /// Whether `sql` is a statement whose plan can scan: a query, an update, a delete.
    private static func isPlanned(_ sql: String) -> Bool {
        let keyword = sql.drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "(" })
            .prefix(while: { $0.isLetter }).uppercased()
        return ["SELECT", "WITH", "UPDATE", "DELETE"].contains(keyword)
    }
}

/// The statements a ``QueryPlanGuard`` found scanning a table, with their plans.
///
/// For example, `catch let violation as QueryPlanViolation { print(violation.scans.map(\.table)) }`.
public struct QueryPlanViolation: Error, CustomStringConvertible {
    /// One statement that reads a whole table.
    ///
    /// For example, `violation.scans.map(\.table)` names the tables scanned.
    public struct Scan: Sendable {
        /// The statement's SQL (placeholders only).
        public let sql: String
        /// The table scanned (on SQLite, its alias when the statement gives one).
        public let table: String
        /// The engine's plan, one line per step.
        public let plan: [String]
    }

    /// Every scan found.
    public let scans: [Scan]

    /// Each scanned table, with the statement that scans it and its plan.
    public var description: String {
        "the call scans a table instead of using an index:\n"
            + scans.map { "- \($0.table) in `\($0.sql)`\n    " + $0.plan.joined(separator: "\n    ") }.joined(
                separator: "\n")
    }
}
