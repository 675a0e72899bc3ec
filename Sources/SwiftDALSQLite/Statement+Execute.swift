internal import CSwiftDALSQLite
public import SwiftDALConnection

extension Statement {
    /// Executes this statement with `arguments`; returns the number of changed rows.
    ///
    /// For example, `try insert.execute(arguments: ["Ann", 31])`.
    @discardableResult
    public func execute(arguments: StatementArguments = StatementArguments()) throws -> Int {
        try checkAccess()
        return try withBindings(arguments) { statement in
            while try statement.step(arguments: arguments) {}
            return Int(sqlite3_changes64(sqlite3_db_handle(handle)))
        }
    }

    /// All rows of this statement with `arguments`, copied.
    ///
    /// For example, `let rows = try select.fetchAll(arguments: [18])`.
    public func fetchAll(arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try checkAccess()
        return try withBindings(arguments) { statement in
            var rows = [Row]()
            while try statement.step(arguments: arguments) { rows.append(try statement.rows.copyRow()) }
            return rows
        }
    }

    /// Calls `body` with a view of each row of this statement with `arguments`.
    ///
    /// For example, `try select.forEachRow(arguments: [18]) { row in … }`.
    public func forEachRow(arguments: StatementArguments = StatementArguments(), _ body: (RowView) throws -> Void)
        throws
    {
        try checkAccess()
        try withBindings(arguments) { statement in
            while try statement.step(arguments: arguments) { try body(statement.currentView) }
        }
    }
}
