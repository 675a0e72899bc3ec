import SwiftDALConnection
import SwiftDALEntity
import SwiftDALIDAL

/// The SELECTs behind the find operations: text cached per shape (condition text,
/// order, paging), arguments combined per call.
extension ReadOnlyDAL {
    /// `SELECT … [WHERE (condition)] ORDER BY … [LIMIT [OFFSET]]` with its arguments.
    /// Limit and offset are bound, by name when the condition's arguments are named.
    @usableFromInline
    func selectQuery(
        _ mapping: TableMapping, condition: SQL?, orderBy: OrderBy?, limit: Int? = nil, offset: Int? = nil
    ) throws -> SQL {
        let condition = condition.flatMap { $0.isEmpty ? nil : $0 }
        let named = condition?.arguments.namedValues != nil
        let limitKind: GeneratedSQLKey.LimitKind = limit == nil ? .none : offset == nil ? .limit : .limitOffset
        let text = try mapping.sql(.select(condition: condition?.sql, order: orderBy, limit: limitKind, named: named)) {
            var sql = mapping.selectSQL
            if let condition { sql += " WHERE (\(condition.sql))" }
            sql += " " + (try mapping.orderClause(orderBy))
            switch limitKind {
            case .none: break
            case .limit: sql += named ? " LIMIT :swiftdal_limit" : " LIMIT ?"
            case .limitOffset: sql += named ? " LIMIT :swiftdal_limit OFFSET :swiftdal_offset" : " LIMIT ? OFFSET ?"
            }
            return sql
        }
        var extra = [(String, SQLiteValue)]()
        if let limit { extra.append(("swiftdal_limit", .integer(Int64(limit)))) }
        if let offset { extra.append(("swiftdal_offset", .integer(Int64(offset)))) }
        return SQL(sql: text, arguments: try combine(condition?.arguments, extra))
    }

    /// `condition`'s arguments followed by `extra` (by name when the condition's are named).
    func combine(_ arguments: StatementArguments?, _ extra: [(String, SQLiteValue)]) throws -> StatementArguments {
        guard let arguments else { return StatementArguments(values: extra.map(\.1)) }
        if let named = arguments.namedValues {
            var values = named
            for (name, value) in extra { values[name] = value }
            return StatementArguments(namedValues: values)
        }
        guard !extra.isEmpty else { return arguments }
        var combined = arguments
        try combined.append(contentsOf: StatementArguments(values: extra.map(\.1)))
        return combined
    }

    /// `<prefix> FROM table [WHERE (condition)] [suffix]` for count-like queries, cached.
    func conditionQuery(_ mapping: TableMapping, _ key: GeneratedSQLKey, prefix: String, condition: SQL?, suffix: String = "")
        throws -> SQL
    {
        let condition = condition.flatMap { $0.isEmpty ? nil : $0 }
        let text = try mapping.sql(key) {
            var sql = "\(prefix) FROM \(mapping.quotedTable)"
            if let condition { sql += " WHERE (\(condition.sql))" }
            return sql + suffix
        }
        return SQL(sql: text, arguments: condition?.arguments ?? StatementArguments())
    }
}
