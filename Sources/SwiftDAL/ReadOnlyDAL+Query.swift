import SwiftDALConnection
import SwiftDALEntity
import SwiftDALIDAL

/// The SELECTs behind the find operations: text cached per shape (condition text,
/// order, paging), arguments combined per call.
extension ReadOnlyDAL {
    /// `SELECT … [WHERE (condition) AND scope] ORDER BY … [LIMIT [OFFSET]]` with its
    /// arguments (the scope applied by ``scopedCondition(_:_:rows:)``). Limit and offset
    /// are bound, by name when the condition's arguments are named.
    @usableFromInline
    func selectQuery(
        _ mapping: TableMapping, condition: SQL?, orderBy: OrderBy?, limit: Int? = nil, offset: Int? = nil
    ) throws -> SQL {
        let condition = try scopedCondition(condition, mapping)
        let named = condition?.arguments.namedValues != nil
        let limitKind: GeneratedSQLKey.LimitKind = limit == nil ? .none : offset == nil ? .limit : .limitOffset
        let text = try mapping.sql(.select(condition: condition?.sql, order: orderBy, limit: limitKind, named: named)) {
            var sql = mapping.selectSQL
            if let condition { sql += " WHERE (\(condition.sql))" }
            // A page by offset breaks ties by the key: each row has one place in every page.
            sql += " " + (try mapping.orderClause(orderBy, breakingTiesByKey: limitKind == .limitOffset))
            switch limitKind {
            case .none: break
            case .limit: sql += named ? " LIMIT :swiftdal_limit" : " LIMIT ?"
            case .limitOffset: sql += named ? " LIMIT :swiftdal_limit OFFSET :swiftdal_offset" : " LIMIT ? OFFSET ?"
            }
            return sql
        }
        var extra = [(String, DatabaseValue)]()
        if let limit { extra.append(("swiftdal_limit", .integer(Int64(limit)))) }
        if let offset { extra.append(("swiftdal_offset", .integer(Int64(offset)))) }
        return SQL(sql: text, arguments: try combine(condition?.arguments, extra))
    }

    /// `first`'s arguments followed by `second`'s, for SQL whose placeholders come in
    /// that order: merged by name when `first`'s are named (then `second`'s must be too),
    /// else appended.
    func concatenate(_ first: StatementArguments, _ second: StatementArguments) throws -> StatementArguments {
        if second.isEmpty { return first }
        if first.isEmpty && first.conversionError == nil { return second }
        if first.namedValues != nil {
            guard let more = second.namedValues else {
                throw DALError(.argumentMismatch, "positional and named arguments cannot be combined")
            }
            return try combine(first, more.map { ($0.key, $0.value) })
        }
        var all = first
        try all.append(contentsOf: second)
        return all
    }

    /// `condition`'s arguments followed by `extra` (by name when the condition's are named).
    func combine(_ arguments: StatementArguments?, _ extra: [(String, DatabaseValue)]) throws -> StatementArguments {
        guard let arguments else { return StatementArguments(values: extra.map(\.1)) }
        if let named = arguments.namedValues {
            var values = named
            for (name, value) in extra { values[name] = value }
            return StatementArguments(namedValues: values)
        }
        guard !extra.isEmpty else { return arguments }
        // Appended where they are: no array of their values and no merge of two argument
        // lists, which made an array of each (callgrind, W4: ~2,900 instructions a `find`
        // with a limit).
        var combined = arguments
        for (_, value) in extra { combined.append(converted: value) }
        return combined
    }

    /// `<prefix> FROM table [WHERE (condition) AND scope] [suffix]` for count-like
    /// queries, cached under `key` made from the whole WHERE text.
    func conditionQuery(
        _ mapping: TableMapping, _ key: (String?) -> GeneratedSQLKey, prefix: String, condition: SQL?,
        suffix: String = "",
        rows: ScopeRows = .visible
    ) throws -> SQL {
        try filteredQuery(
            mapping, key, head: { "\(prefix) FROM \(mapping.quotedTable)" }, condition: condition, suffix: suffix,
            rows: rows)
    }

    /// `<head> [WHERE (condition) AND scope] [suffix]`, cached under `key` made from the
    /// whole WHERE text; `head` is called only when the text is built.
    func filteredQuery(
        _ mapping: TableMapping, _ key: (String?) -> GeneratedSQLKey, head: () -> String, condition: SQL?,
        suffix: String = "", rows: ScopeRows = .visible
    ) throws -> SQL {
        guard mapping.hasScope else {
            // No scope to add: the condition is read where it is (`scopedCondition` copied
            // it, its text and arguments retained and released; callgrind, W7).
            guard let condition, !condition.isEmpty else {
                return SQL(sql: try mapping.sql(key(nil)) { head() + suffix })
            }
            let text = try mapping.sql(key(condition.sql)) { head() + " WHERE (\(condition.sql))" + suffix }
            return SQL(sql: text, arguments: condition.arguments)
        }
        let condition = try scopedCondition(condition, mapping, rows: rows)
        let text = try mapping.sql(key(condition?.sql)) {
            var sql = head()
            if let condition { sql += " WHERE (\(condition.sql))" }
            return sql + suffix
        }
        return SQL(sql: text, arguments: condition?.arguments ?? StatementArguments())
    }
}
