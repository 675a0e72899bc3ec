import Synchronization
import SwiftDALSchema

/// The generic implementation of ``IDAL`` for any ``Entity``: every table gets CRUD,
/// lookups, counting, existence checks and paging from this one class, and a table's
/// DAL is a subclass of a few lines.
///
/// Values are always bound; column names given as strings are checked against the
/// table's real columns (read from the database at first use) and quoted. The SQL of
/// fixed statements is built once per DAL and each statement is prepared once per
/// connection.
///
/// Subclasses may override only these hooks (documented in the README):
/// ``tableName``, ``primaryKey``, ``defaultSortField``, ``defaultSortDirection`` and
/// ``validate(_:)``. A DAL is shared between threads: subclasses add only immutable
/// (`let`), `Sendable` stored properties, and restate the base class's
/// `@unchecked Sendable` (Swift requires it of every subclass of a non-final class).
///
/// For example:
///
/// ```swift
/// final class UserDAL: BaseDAL<UserInfo>, @unchecked Sendable {
///     override var defaultSortField: String { "name" }
///
///     func findByEmail(_ email: String) throws -> UserInfo? {
///         try findSingle(condition: "email = \(email)")
///     }
/// }
///
/// let users = UserDAL(database: pool)
/// let id = try users.insert2(UserInfo(name: "Ann", email: "ann@example.com", age: 31))
/// let ann = try users.findById(id)
/// ```
open class BaseDAL<T: Entity>: IDAL, @unchecked Sendable {
    public typealias EntityType = T

    /// The database this DAL reads and writes (a ``DatabasePool`` or ``DatabaseQueue``).
    public let database: any DatabaseWriter
    /// The current mapping, read lock-free on every call. Every mapping ever made is
    /// owned by `mappings` until the DAL is released, so a reference loaded here stays
    /// valid even if `invalidateSchemaCache()` runs concurrently.
    private let currentMapping = Atomic<Unmanaged<TableMapping>?>(nil)
    private let mappings = Mutex<[TableMapping]>([])
    let dialect: any SQLDialect = SQLiteDialect()

    /// A DAL for `T`'s table in `database`.
    ///
    /// For example, `let users = UserDAL(database: pool)`.
    public init(database: any DatabaseWriter) {
        self.database = database
    }

    // MARK: Hooks a subclass may override (read once, at first use)

    /// The table name. Default: `T.tableName`.
    open var tableName: String { T.tableName }

    /// The primary-key columns. Default: `T.primaryKey`.
    open var primaryKey: [String] { T.primaryKey }

    /// The column used when a query gives no order. Default: the first primary-key column.
    open var defaultSortField: String { primaryKey.first ?? "id" }

    /// The direction used with ``defaultSortField``. Default: ascending.
    open var defaultSortDirection: SortDirection { .ascending }

    /// Called before every insert, update and upsert of an entity; throw to refuse it.
    /// Default: accepts everything.
    ///
    /// For example:
    ///
    /// ```swift
    /// override func validate(_ user: UserInfo) throws {
    ///     guard user.email.contains("@") else { throw DALError(.invalidValue, "bad email") }
    /// }
    /// ```
    open func validate(_ entity: T) throws {}

    /// Forgets what was read of the table's schema (call after a migration that changes
    /// the table); it is read again at the next use.
    ///
    /// For example, `users.invalidateSchemaCache()`.
    public final func invalidateSchemaCache() {
        currentMapping.store(nil, ordering: .releasing)
    }

    /// Checks `T.tableDefinition()` against the real table and throws
    /// ``DALError/Code/schemaMismatch`` naming every difference (missing columns, types,
    /// nullability, primary key). Call it at startup to fail fast on a wrong database.
    ///
    /// For example, `try users.verifySchema()`.
    public final func verifySchema() throws {
        var definition = try T.tableDefinition()
        definition.name = tableName  // a subclass may override the table name
        try read { db in try db.checkSchema(definition, for: "\(T.self)") }
    }

    // MARK: Building blocks for subclasses

    /// Runs `body` on a reading connection: the one this thread already holds from the
    /// database (inside `read`/`write`), or a free one. Use it for custom queries.
    ///
    /// For example, `try read { db in try db.fetchScalar(Int.self, "SELECT MAX(age) FROM users") }`.
    public final func read<R>(_ body: (Database) throws -> R) throws -> R {
        try database.reentrantRead(body)
    }

    /// Runs `body` on the writer: the one this thread already holds (inside `write`), or
    /// the writer without an explicit transaction. Use it for custom writes.
    ///
    /// For example, `try write { db in try db.execute("UPDATE users SET age = age + 1") }`.
    public final func write<R>(_ body: (Database) throws -> R) throws -> R {
        try database.reentrantWrite(body)
    }

    /// Entities from any query that returns the entity's columns (by name, in any order,
    /// extra columns ignored): the query runs as a subquery of
    /// `SELECT <the entity's columns> FROM (…)`, so an explicit mapping still reads its
    /// columns in its own order. The query's row order is kept.
    ///
    /// For example, `try fetchEntities("SELECT u.* FROM users u JOIN orders o ON o.user_id = u.id WHERE o.product = \(p)")`.
    public final func fetchEntities(_ sql: SQL) throws -> [T] {
        try withMapping(writing: false) { db, mapping in
            let columns = mapping.selectedColumns.map(quoteIdentifier).joined(separator: ", ")
            let query = SQL(sql: "SELECT \(columns) FROM (\(sql.sql))", arguments: sql.arguments)
            return try db.fetchAll(query) { try self.decode($0, mapping) }
        }
    }

    // MARK: Internals shared by the operations

    /// Runs `body` with a connection (the writer when `writing`) and the table mapping.
    @usableFromInline
    final func withMapping<R>(writing: Bool, _ body: (Database, TableMapping) throws -> R) throws -> R {
        // Inside a `read`/`write` of the same database: its connection, without a closure.
        if let held = try heldConnection(of: database, writing: writing) {
            return try mapping(held)._withUnsafeGuaranteedRef { try body(held, $0) }
        }
        if writing {
            return try database.reentrantWrite { db in try mapping(db)._withUnsafeGuaranteedRef { try body(db, $0) } }
        }
        return try database.reentrantRead { db in try mapping(db)._withUnsafeGuaranteedRef { try body(db, $0) } }
    }

    final func mapping(_ db: Database) throws -> Unmanaged<TableMapping> {
        if let mapping = currentMapping.load(ordering: .acquiring) { return mapping }
        let mapping = try TableMapping(
            entity: T.self, table: tableName, primaryKey: primaryKey,
            defaultSort: OrderBy(defaultSortField, defaultSortDirection), db: db, dialect: dialect)
        mappings.withLock { $0.append(mapping) }
        let reference = Unmanaged.passUnretained(mapping)
        currentMapping.store(reference, ordering: .releasing)
        return reference
    }

    @inlinable
    final func decode(_ row: RowView, _ mapping: TableMapping) throws -> T {
        do {
            return try T(row: row)
        } catch var error as DALError where error.table == nil {
            error.table = mapping.table
            throw error
        }
    }

    /// The entity's column values, after ``validate(_:)``.
    final func encode(_ entity: T, _ mapping: TableMapping) throws -> ColumnValues {
        try validate(entity)
        var columns = ColumnValues(capacity: mapping.selectedColumns.count)
        do {
            try entity.encodeColumns(to: &columns)
        } catch var error as DALError where error.table == nil {
            error.table = mapping.table
            throw error
        }
        if mapping.isExplicit && columns.names != mapping.selectedColumns {
            guard columns.names.count == mapping.selectedColumns.count,
                zip(columns.names, mapping.selectedColumns).allSatisfy({ $0.lowercased() == $1.lowercased() })
            else {
                throw DALError(
                    .schemaMismatch,
                    "\(T.self).encodeColumns wrote \(columns.names.joined(separator: ", ")) "
                        + "but \(T.self).columnNames is \(mapping.selectedColumns.joined(separator: ", "))",
                    table: mapping.table)
            }
        }
        return columns
    }
}
