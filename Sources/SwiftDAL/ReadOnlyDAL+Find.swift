import SwiftDALConnection
import SwiftDALEntity
import SwiftDALIDAL

extension ReadOnlyDAL {
    /// The entity with primary key `id`, or `nil` when there is none.
    ///
    /// For example, `let user = try users.findById(42)`.
    @inlinable
    public func findById(_ id: some EntityKey) throws -> T? {
        try withMapping(writing: false) { db, mapping in
            let key = try mapping.isScoped ? scopedKeyArguments(id, mapping) : mapping.keyArguments(id)
            return try db.fetchFirst(SQL(sql: mapping.findByIdSQL, arguments: key)) {
                try self.decode($0, mapping)
            }
        }
    }

    /// The entities whose primary key is in `ids` (missing keys are skipped), in the
    /// default order, from one statement. On SQLite keys are bound as one JSON array (any
    /// number of keys, one cached statement); keys JSON cannot carry exactly (blobs, text
    /// with NUL) are bound one by one in a `VALUES` list (up to 32,766 values). On
    /// PostgreSQL they are bound as one array per key column (any number of keys; a
    /// composite key whose column types are unknown is bound one by one, up to 65,535
    /// values). On MariaDB they are bound one by one (up to 65,535 values).
    ///
    /// For example, `let some = try users.findByIds([1, 2, 3])`.
    public func findByIds(_ ids: [some EntityKey]) throws -> [T] {
        guard !ids.isEmpty else { return [] }
        return try withMapping(writing: false) { db, mapping in
            let keys = try ids.map { try mapping.keyValues($0) }
            let types = mapping.primaryKey.compactMap { key in
                mapping.columns.first { $0.name == key }?.declaredType
            }
            let keyList = try mapping.dialect.keyListPredicate(columns: mapping.primaryKey, types: types, keys: keys)
            let predicate = try scopedCondition(keyList, mapping) ?? keyList
            let query = SQL(
                sql: "\(mapping.selectSQL) WHERE \(predicate.sql) \(mapping.defaultOrderClause)",
                arguments: predicate.arguments)
            return try db.fetchAll(query) { try self.decode($0, mapping) }
        }
    }

    /// The first entity matching `condition`, in `orderBy` (or the default order), or `nil`.
    ///
    /// For example, `let ann = try users.findSingle(condition: "email = \(email)")`.
    public func findSingle(condition: SQL, orderBy: OrderBy? = nil) throws -> T? {
        try findTop(1, condition: condition, orderBy: orderBy).first
    }

    /// Every entity matching `condition`, in `orderBy` (or the default order). An empty
    /// condition matches every row.
    ///
    /// For example, `let adults = try users.find(condition: "age >= \(18) AND name LIKE \(containing: "an")", orderBy: "name")`.
    @inlinable
    public func find(condition: SQL, orderBy: OrderBy? = nil) throws -> [T] {
        try withMapping(writing: false) { db, mapping in
            try db.fetchAll(try selectQuery(mapping, condition: condition, orderBy: orderBy)) {
                try self.decode($0, mapping)
            }
        }
    }

    /// The first entity in `orderBy` (or the default order), or `nil` when the table is empty.
    ///
    /// For example, `let oldest = try users.findFirst(orderBy: "age DESC")`.
    public func findFirst(orderBy: OrderBy? = nil) throws -> T? {
        try findTop(1, condition: nil, orderBy: orderBy).first
    }

    /// The last entity in `orderBy` (or the default order), or `nil` when the table is empty.
    ///
    /// For example, `let newest = try users.findLast()` (the highest id by default).
    public func findLast(orderBy: OrderBy? = nil) throws -> T? {
        let reversed = try withMapping(writing: false) { _, mapping in (orderBy ?? mapping.defaultOrder).reversed }
        return try findTop(1, condition: nil, orderBy: reversed).first
    }

    /// At most `count` entities matching `condition` (every row when `nil`), in
    /// `orderBy` (or the default order).
    ///
    /// For example, `let top = try users.findTop(10, condition: "age > \(30)", orderBy: "score DESC")`.
    @inlinable
    public func findTop(_ count: Int, condition: SQL? = nil, orderBy: OrderBy? = nil) throws -> [T] {
        guard count >= 0 else {
            throw DALError(.invalidValue, "findTop needs a count of 0 or more, not \(count)", table: tableName)
        }
        return try withMapping(writing: false) { db, mapping in
            let query = try selectQuery(mapping, condition: condition, orderBy: orderBy, limit: count)
            return try db.fetchAll(query, expectedCount: count) { try self.decode($0, mapping) }
        }
    }

    /// One page of the entities matching `condition` (every row when `nil`), and the
    /// pager with the total record count; the count and the page come from one snapshot.
    /// Rows are sorted by `orderBy` (or the default order), then by the primary key's
    /// columns it does not name, so that rows tying on the sort columns keep one place
    /// from page to page (a table without a primary key has no such tie-breaker: sort it
    /// by columns that are unique together).
    ///
    /// For example, `let page = try users.findWithPager(condition: nil, pager: PagerInfo(pageIndex: 2, pageSize: 20))`.
    public func findWithPager(condition: SQL? = nil, pager: PagerInfo, orderBy: OrderBy? = nil) throws -> Page<T> {
        guard pager.pageIndex >= 1, pager.pageSize >= 1 else {
            throw DALError(
                .invalidValue,
                "a pager needs pageIndex >= 1 and pageSize >= 1, not \(pager.pageIndex) and \(pager.pageSize)",
                table: tableName)
        }
        return try withMapping(writing: false) { db, mapping in
            // One snapshot for the count and the page (PostgreSQL: repeatable read).
            try db.inTransaction(.deferred, isolation: .repeatableRead) {
                var result = pager
                result.recordCount = try self.count(db, mapping, condition)
                let query = try self.selectQuery(
                    mapping, condition: condition, orderBy: orderBy, limit: pager.pageSize, offset: pager.offset)
                let items = try db.fetchAll(query) { try self.decode($0, mapping) }
                return Page(items: items, pager: result)
            }
        }
    }

    /// Streams the entities matching `condition` (every row when `nil`) to `body`, one
    /// at a time, without holding the result in memory: for exports and batch jobs over
    /// large tables. The rows come from one statement (one consistent snapshot); the
    /// statement is reset if `body` throws.
    ///
    /// For example, `try users.forEach(condition: "age > \(30)") { user in try export(user) }`.
    @inlinable
    public func forEach(condition: SQL? = nil, orderBy: OrderBy? = nil, _ body: (T) throws -> Void) throws {
        try withMapping(writing: false) { db, mapping in
            try db.forEachRow(try selectQuery(mapping, condition: condition, orderBy: orderBy)) {
                try body(try self.decode($0, mapping))
            }
        }
    }

    /// Every entity, in `orderBy` (or the default order).
    ///
    /// For example, `let everyone = try users.getAll()`.
    @inlinable
    public func getAll(orderBy: OrderBy? = nil) throws -> [T] {
        try withMapping(writing: false) { db, mapping in
            try db.fetchAll(try selectQuery(mapping, condition: nil, orderBy: orderBy)) { try self.decode($0, mapping) }
        }
    }
}
