import SwiftDALConnection
import SwiftDALEntity
import SwiftDALIDAL

extension ReadOnlyDAL {
    /// One page of keyset ("seek") paging: at most `limit` entities matching `condition`
    /// (every row when `nil`), in `orderBy` (or the default order), that come after
    /// `cursor` (from the start when `nil`), and the cursor of the next page (`nil` when
    /// no row follows).
    ///
    /// The primary key is appended to the order as the tie-breaker when the order does
    /// not hold it, so every row has one place. Each page is one indexed range read
    /// (`WHERE (a, id) > (?, ?) ORDER BY a, id LIMIT ?`), however deep the page: unlike
    /// ``findWithPager(condition:pager:orderBy:)-3bd7c``'s offsets, rows inserted or deleted
    /// between pages never make a row present from the start appear twice or be
    /// skipped. An order that mixes `ASC` and `DESC` works (an expanded `OR` form is used
    /// then). `NULL`s in a sort column are paged through where the engine sorts them:
    /// first in ascending order on SQLite, last on PostgreSQL (the other way round for
    /// `DESC`), which the engines' indexes serve.
    ///
    /// The cursor is signed with ``cursorSigningKey``; it is accepted only with the same
    /// table, order, condition text (its values may change) and scope as the call that
    /// issued it: anything else throws ``DALError/Code/invalidCursor`` before any SQL
    /// runs. Its values are bound, never pasted.
    ///
    /// For example:
    ///
    /// ```swift
    /// let first = try orders.findPage(limit: 50, condition: "user_id = \(userID)", orderBy: "placed_at DESC")
    /// let second = try orders.findPage(after: first.nextCursor, limit: 50, condition: "user_id = \(userID)",
    ///                                  orderBy: "placed_at DESC")
    /// ```
    public func findPage(
        after cursor: PageCursor? = nil, limit: Int, condition: SQL? = nil, orderBy: OrderBy? = nil
    ) throws -> KeysetPage<T> {
        guard limit >= 1 else {
            throw DALError(.invalidValue, "findPage needs a limit of 1 or more, not \(limit)", table: tableName)
        }
        let key = cursorSigningKey
        return try withMapping(writing: false) { db, mapping in
            let (query, order) = try pageQuery(
                mapping, after: cursor, limit: limit, condition: condition, orderBy: orderBy, key: key)
            var items = [T]()
            items.reserveCapacity(min(limit, 1024))  // a limit is a bound, not a size: never allocate it
            var last: [DatabaseValue]?
            var hasMore = false
            try db.forEachRow(query) { row in
                guard items.count < limit else {
                    hasMore = true
                    return
                }
                items.append(try self.decode(row, mapping))
                if items.count == limit { last = try order.positions.map { try row.value(at: $0) } }
            }
            guard hasMore, let last else { return KeysetPage(items: items, nextCursor: nil) }
            let content = CursorContent(
                shape: order.shape, columns: order.columns, directions: order.directions, values: last)
            return KeysetPage(items: items, nextCursor: PageCursor(CursorCodec.encode(content, key: key)))
        }
    }

    /// The statement ``findPage(after:limit:condition:orderBy:)`` runs for these
    /// arguments (it reads one row more than `limit`, to know whether a page follows),
    /// for inspecting its plan (`EXPLAIN QUERY PLAN` + its text, with its arguments).
    ///
    /// For example, `let query = try users.findPageQuery(after: page.nextCursor, limit: 20, orderBy: "age")`.
    package func findPageQuery(
        after cursor: PageCursor? = nil, limit: Int, condition: SQL? = nil, orderBy: OrderBy? = nil
    )
        throws -> SQL
    {
        let key = cursorSigningKey
        return try withMapping(writing: false) { _, mapping in
            try pageQuery(mapping, after: cursor, limit: limit, condition: condition, orderBy: orderBy, key: key).query
        }
    }

    /// The page's SELECT and the order it follows.
    private func pageQuery(
        _ mapping: TableMapping, after cursor: PageCursor?, limit: Int, condition: SQL?, orderBy: OrderBy?,
        key: CursorSigningKey
    ) throws -> (query: SQL, order: KeysetOrder) {
        let condition = condition.flatMap { $0.isEmpty ? nil : $0 }
        let order = try KeysetOrder(mapping, orderBy: orderBy, condition: condition, scopeValues: scopeValues)
        let after = try cursor.map { try order.values(of: $0, key: key, table: mapping.table) }
        let filter = try scopedCondition(condition, mapping)
        let named = filter?.arguments.namedValues != nil
        let seek = after.map {
            order.seekPredicate(
                $0, sortsNullsFirst: mapping.dialect.sortsNullsFirst, rowValues: mapping.dialect.seeksWithRowValues,
                named: named)
        }
        let text = try mapping.sql(
            .page(condition: filter?.sql, order: order.cacheKey, after: after?.map(\.isNull), named: named)
        ) {
            var sql = mapping.selectSQL
            if !order.extraColumns.isEmpty {
                // Sort columns the entity does not read, after its own (read by position).
                let selected = (mapping.selectedColumns.map(mapping.dialect.quote) + order.extraColumns).joined(
                    separator: ", ")
                sql = "SELECT \(selected) FROM \(mapping.quotedTable)"
            }
            let conditions = [filter.map { "(\($0.sql))" }, seek.map { "(\($0.sql))" }].compactMap { $0 }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            sql +=
                " ORDER BY "
                + zip(order.quoted, order.directions).map { "\($0) \($1.rawValue)" }.joined(separator: ", ")
            return sql + (named ? " LIMIT :swiftdal_limit" : " LIMIT ?")
        }
        var extra = seek?.arguments ?? []
        // One row more than the page, to know whether a page follows (Int64.max is already "all").
        let (overLimit, overflow) = Int64(limit).addingReportingOverflow(1)
        extra.append(("swiftdal_limit", .integer(overflow ? Int64.max : overLimit)))
        return (SQL(sql: text, arguments: try combine(filter?.arguments, extra)), order)
    }
}

/// The resolved order of a keyset page: the caller's terms (checked against the table,
/// quoted) with the primary key appended as the tie-breaker, where each sort value sits
/// in the row read, and the fingerprint of the query's shape that cursors carry.
struct KeysetOrder {
    /// The columns, as the table spells them.
    let columns: [String]
    let quoted: [String]
    let directions: [SortDirection]
    /// Whether each column can never hold `NULL`.
    let notNull: [Bool]
    /// The position of each column's value in the rows read.
    let positions: [Int]
    /// Sort columns the entity does not select, quoted: read after its own columns.
    let extraColumns: [String]
    /// The fingerprint of the table, condition text and scope.
    let shape: [UInt8]

    init(_ mapping: TableMapping, orderBy: OrderBy?, condition: SQL?, scopeValues: [DatabaseValue]) throws {
        guard !mapping.primaryKey.isEmpty else {
            throw DALError(
                .unsupportedOperation,
                "\(mapping.table) has no primary key, so findPage has no tie-breaker to give every row one place; "
                    + "declare the key in the entity (static let primaryKey) or use findWithPager",
                table: mapping.table)
        }
        let requested = orderBy ?? mapping.defaultOrder
        if let problem = requested.parseError {
            throw DALError(
                .invalidColumn, "invalid ORDER BY for table \(mapping.table): \(problem)", table: mapping.table)
        }
        var columns = [String]()
        var directions = [SortDirection]()
        for term in requested.terms {
            let column = try mapping.column(term.column)
            guard !columns.contains(column) else { continue }  // a repeated term orders nothing more
            columns.append(column)
            directions.append(term.direction)
        }
        let tieBreakDirection = directions.last ?? .ascending
        for column in mapping.primaryKey where !columns.contains(column) {
            columns.append(column)
            directions.append(tieBreakDirection)
        }
        var positions = [Int]()
        var extra = [String]()
        for column in columns {
            if let position = mapping.selectedPosition(of: column) {
                positions.append(position)
            } else {
                positions.append(mapping.selectedColumns.count + extra.count)
                extra.append(mapping.dialect.quote(column))
            }
        }
        self.columns = columns
        self.directions = directions
        quoted = columns.map(mapping.dialect.quote)
        notNull = columns.map { Self.isNeverNull($0, mapping) }
        self.positions = positions
        extraColumns = extra
        shape = CursorCodec.shape([
            "table", mapping.table,
            "condition", condition?.sql ?? "\u{1}none",
            "scope", mapping.scope.visibleRows ?? "",
            "tenant", scopeValues.map(CursorCodec.canonicalText).joined(separator: ",")
        ])
    }

    /// Whether `column` can never hold `NULL`: declared `NOT NULL`, or SQLite's rowid
    /// alias (`INTEGER PRIMARY KEY`), or a key column of a `WITHOUT ROWID` table.
    private static func isNeverNull(_ column: String, _ mapping: TableMapping) -> Bool {
        guard let info = mapping.columns.first(where: { $0.name == column }) else { return false }
        if info.isNotNull { return true }
        guard mapping.primaryKey.contains(column) else { return false }
        switch mapping.kind {
        case .withoutRowIDTable: return true
        case .rowIDTable:
            return mapping.primaryKey.count == 1 && info.declaredType.uppercased() == "INTEGER"
        case .view, .virtualTable: return false
        }
    }

    /// The order, as the SQL cache's key.
    var cacheKey: [String] {
        zip(columns, directions).map { "\($0)\u{0}\($1.rawValue)" }
    }

    /// The last row's values that `cursor` carries, once its signature, shape and order
    /// are checked; ``DALError/Code/invalidCursor`` otherwise.
    func values(of cursor: PageCursor, key: CursorSigningKey, table: String) throws -> [DatabaseValue] {
        let content: CursorContent
        do {
            content = try CursorCodec.decode(cursor.token, key: key)
        } catch {
            throw DALError(.invalidCursor, "the page cursor is refused: \(error.reason)", table: table)
        }
        guard content.shape == shape else {
            throw DALError(
                .invalidCursor, "the page cursor was made for another table, condition or scope (or tenant)",
                table: table)
        }
        guard content.columns == columns, content.directions == directions else {
            let made = zip(content.columns, content.directions).map { "\($0) \($1.rawValue)" }.joined(separator: ", ")
            let asked = zip(columns, directions).map { "\($0) \($1.rawValue)" }.joined(separator: ", ")
            throw DALError(.invalidCursor, "the page cursor was made for ORDER BY \(made), not \(asked)", table: table)
        }
        return content.values
    }

    /// The rows after `values` in this order, as SQL with its arguments in placeholder
    /// order (named `swiftdal_after_N` when `named`).
    ///
    /// When every column is `NOT NULL` and every direction the same, a row-value
    /// comparison, `(a, b, id) > (?, ?, ?)`, which the engines read as one index range
    /// (with `rowValues`: an engine whose planner does not, gets the expanded form).
    /// Otherwise the expanded form, `a > ? OR (a = ? AND b < ?) OR …`, where a `NULL`
    /// value or a nullable column is compared with `IS [NOT] NULL` at the place the
    /// engine sorts `NULL`; with a `NOT NULL` first column it is prefixed by `a >= ?`
    /// (or `<=`), which gives the planner an index range on that column.
    func seekPredicate(_ values: [DatabaseValue], sortsNullsFirst: Bool, rowValues: Bool = true, named: Bool) -> (
        sql: String, arguments: [(String, DatabaseValue)]
    ) {
        var arguments = [(String, DatabaseValue)]()
        func bind(_ value: DatabaseValue) -> String {
            let name = "swiftdal_after_\(arguments.count)"
            arguments.append((name, value))
            return named ? ":\(name)" : "?"
        }
        let allSameDirection = directions.allSatisfy { $0 == directions[0] }
        if allSameDirection && notNull.allSatisfy({ $0 }) && !values.contains(where: \.isNull)
            && (rowValues || columns.count == 1)
        {
            let comparison = directions[0] == .ascending ? ">" : "<"
            if columns.count == 1 { return ("\(quoted[0]) \(comparison) \(bind(values[0]))", arguments) }
            let placeholders = values.map(bind).joined(separator: ", ")
            return ("(\(quoted.joined(separator: ", "))) \(comparison) (\(placeholders))", arguments)
        }
        // Each disjunct: the columns before `index` equal to the cursor's, and column
        // `index` after it. Rendered in order, so that placeholders bind in text order.
        var disjuncts = [String]()
        for index in columns.indices {
            let ascending = directions[index] == .ascending
            let nullsFirst = sortsNullsFirst == ascending  // NULL comes before every value here
            let value = values[index]
            let column = quoted[index]
            // Nothing comes after NULL when NULLs come last.
            if value.isNull && !nullsFirst { continue }
            var parts = [String]()
            for previous in 0..<index {
                parts.append(
                    values[previous].isNull
                        ? "\(quoted[previous]) IS NULL" : "\(quoted[previous]) = \(bind(values[previous]))")
            }
            if value.isNull {
                parts.append("\(column) IS NOT NULL")
            } else if !notNull[index] && !nullsFirst {
                parts.append("(\(column) \(ascending ? ">" : "<") \(bind(value)) OR \(column) IS NULL)")
            } else {
                parts.append("\(column) \(ascending ? ">" : "<") \(bind(value))")
            }
            disjuncts.append(parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " AND ") + ")")
        }
        guard !disjuncts.isEmpty else { return ("1 = 0", arguments) }
        var sql = disjuncts.joined(separator: " OR ")
        if notNull[0], !values[0].isNull, columns.count > 1 {
            // Rendered first: its placeholder must come first too.
            var prefixed = [(String, DatabaseValue)]()
            let name = "swiftdal_after_lead"
            prefixed.append((name, values[0]))
            let comparison = directions[0] == .ascending ? ">=" : "<="
            sql = "\(quoted[0]) \(comparison) \(named ? ":\(name)" : "?") AND (\(sql))"
            arguments = prefixed + arguments
        }
        return (sql, arguments)
    }
}

// The async form (kept here, beside its synchronous twin).
extension ReadOnlyDAL {
    /// For example, `let page = try await users.findPage(after: cursor, limit: 20, orderBy: "name")`.
    public func findPage(
        after cursor: PageCursor? = nil, limit: Int, condition: SQL? = nil, orderBy: OrderBy? = nil
    ) async throws -> KeysetPage<T> {
        try await onReader { try self.findPage(after: cursor, limit: limit, condition: condition, orderBy: orderBy) }
    }
}
