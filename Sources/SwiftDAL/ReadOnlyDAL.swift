import SwiftDALSchema
import Synchronization

/// The read half of ``BaseDAL``: finds, lookups, counts, existence checks, field values
/// and paging for any ``Entity``, with no way to write. Use it for views, and for
/// tables a service only reads; ``BaseDAL`` extends it with the writes.
///
/// A view has no primary key: declare one in the entity (`static let primaryKey`) to
/// use the key lookups (``findById(_:)-9njmh``, ``findByIds(_:)-5rxs8``, ``getFieldValue(_:fieldName:as:)-5yv5e``),
/// which otherwise throw ``DALError/Code/unsupportedOperation``. Without a key, rows are
/// listed in the order of the first column unless told otherwise.
///
/// Subclasses may override these hooks: ``tableName``, ``primaryKey``,
/// ``defaultSortField``, ``defaultSortDirection``, ``scope`` and ``cursorSigningKey``.
/// A DAL is shared between threads:
/// subclasses add only immutable (`let`), `Sendable` stored properties, and restate the
/// base class's `@unchecked Sendable`.
///
/// For example:
///
/// ```swift
/// struct ProductSale: Entity, Codable {          // a row of the view product_sales
///     static let tableName = "product_sales"
///     static let primaryKey: [String] = []        // a view has none
///     var product: String
///     var total: Double
/// }
///
/// final class ProductSaleDAL: ReadOnlyDAL<ProductSale>, @unchecked Sendable {
///     override var defaultSortField: String { "total" }
///     override var defaultSortDirection: SortDirection { .descending }
/// }
///
/// let best = try ProductSaleDAL(database: pool).findTop(10)
/// ```
open class ReadOnlyDAL<T: Entity>: @unchecked Sendable {
    /// The entity this DAL reads: `T`.
    public typealias EntityType = T

    /// The database this DAL works on (a ``DatabasePool`` or ``DatabaseQueue``).
    public let database: any DatabaseWriter
    /// The tenant given to ``init(database:tenant:)``, as given (checked at every use).
    let tenantBinding: TenantBinding
    /// Whether this DAL shares its mapping (it was made with a tenant): stored, read on
    /// every call (matching the binding's enum there cost ~20 instructions, callgrind W3a).
    private let sharesMapping: Bool
    /// What the scope binds after a condition or a key: the tenant, when there is one.
    @usableFromInline let scopeValues: [DatabaseValue]
    /// Whether this DAL reads soft-deleted rows too (an ``includingDeleted`` view).
    let includesDeletedRows: Bool
    /// The ``includingDeleted`` view, made at its first use.
    let includingDeletedView = Locked<ReadOnlyDAL<T>?>(nil)
    /// The current mapping, read lock-free on every call. Every mapping ever made is
    /// owned by `mappings` until the DAL is released, so a reference loaded here stays
    /// valid even if `invalidateSchemaCache()` runs concurrently.
    private let currentMapping = Atomic<Unmanaged<TableMapping>?>(nil)
    private let mappings = Locked<[TableMapping]>([])

    /// A DAL for `T`'s table (or view) in `database`.
    ///
    /// For example, `let sales = ProductSaleDAL(database: pool)`.
    public init(database: any DatabaseWriter) {
        self.database = database
        tenantBinding = .none
        sharesMapping = false
        scopeValues = []
        includesDeletedRows = false
    }

    /// A DAL bound to one tenant: every read, count, update and delete of this instance
    /// is restricted to the rows whose tenant column (declared by ``scope``) holds
    /// `tenant`, and inserts set it. Make one per request, with the caller's tenant.
    ///
    /// A `nil` tenant (an `Optional` holding nil) makes every operation throw
    /// ``DALError/Code/tenantRequired``, and a tenant given to a DAL whose scope declares
    /// no tenant column throws ``DALError/Code/unsupportedOperation``: neither ever reads
    /// every tenant's rows.
    ///
    /// DALs made with a tenant share what they read of the table's schema (with every
    /// other tenant-bound DAL of the same entity, table, hooks and database), so that one
    /// made per request reads no catalog: after a migration that changes the table, call
    /// ``invalidateSchemaCache()`` on any one of them.
    ///
    /// For example, `let notes = NoteDAL(database: pool, tenant: request.tenantID)`.
    public init(database: any DatabaseWriter, tenant: some DatabaseValueConvertible) {
        self.database = database
        var binding: TenantBinding
        do {
            let value = try tenant.databaseValue()
            binding = value.isNull ? .missing : .value(value)
        } catch let error as DALError {
            binding = .invalid(error)
        } catch {
            binding = .invalid(DALError(.invalidValue, "the tenant value does not convert", underlying: error))
        }
        tenantBinding = binding
        sharesMapping = true
        if case .value(let value) = binding { scopeValues = [value] } else { scopeValues = [] }
        includesDeletedRows = false
    }

    /// A read-only view of `base` that reads its soft-deleted rows too (see
    /// ``includingDeleted``).
    init(includingDeletedRowsOf base: ReadOnlyDAL<T>) {
        database = base.database
        tenantBinding = base.tenantBinding
        sharesMapping = base.sharesMapping
        scopeValues = base.scopeValues
        includesDeletedRows = true
    }

    // MARK: Hooks a subclass may override (read once, at first use)

    /// The table (or view) name. Default: `T.tableName`.
    open var tableName: String { T.tableName }

    /// The primary-key columns. Default: `T.primaryKey`.
    open var primaryKey: [String] { T.primaryKey }

    /// The column used when a query gives no order. Default: the first primary-key
    /// column (the first column of the table when there is no key).
    open var defaultSortField: String { primaryKey.first ?? "" }

    /// The direction used with ``defaultSortField``. Default: ascending.
    open var defaultSortDirection: SortDirection { .ascending }

    /// The rows this DAL may see and touch: a tenant column and a soft-delete column
    /// (see ``DALScope``). Default: ``DALScope/none``, every row.
    ///
    /// For example:
    ///
    /// ```swift
    /// override var scope: DALScope { DALScope(tenantColumn: "tenant_id", softDeleteColumn: "deleted_at") }
    /// ```
    open var scope: DALScope { .none }

    /// The key that signs and checks this DAL's keyset-paging cursors (``findPage(after:limit:condition:orderBy:)-2kb15``).
    /// Default: ``CursorSigningKey/processDefault``, random per process: override it
    /// with a configured key when cursors must survive restarts or work across the
    /// instances of a service. Read at every `findPage`.
    ///
    /// For example, `override var cursorSigningKey: CursorSigningKey { AppKeys.cursors }`.
    open var cursorSigningKey: CursorSigningKey { .processDefault }

    /// Whether the DAL needs a primary key (a DAL that writes does: it updates and
    /// deletes by key).
    var requiresPrimaryKey: Bool { false }

    /// Forgets what was read of the table's schema (call after a migration that changes
    /// the table); it is read again at the next use.
    ///
    /// For example, `users.invalidateSchemaCache()`.
    public final func invalidateSchemaCache() {
        currentMapping.store(nil, ordering: .releasing)
        if sharesMapping { SharedMappings.forget(sharedMappingKey) }
    }

    /// Checks `T.tableDefinition()` against the real table and throws
    /// ``DALError/Code/schemaMismatch`` naming every difference that would make reads
    /// or writes fail (missing columns, incompatible types, nullability, primary key).
    /// Call it at startup to fail fast on a wrong database. An explicitly mapped entity
    /// without a definition (as `swiftdal-gen` writes them) is checked by its
    /// ``Entity/columnNames``: each must be a column of the table, every `NOT NULL` column
    /// without a default among them, and the primary key the DAL's.
    ///
    /// For example, `try users.verifySchema()`.
    public final func verifySchema() throws {
        var definition: TableDefinition
        do {
            definition = try T.tableDefinition()
        } catch let error as DALError where error.code == .schemaMismatch && !(T.self is any Decodable.Type) {
            // The default's error: no definition declared, and none to derive.
            guard let names = T.columnNames else { throw error }
            let (table, key) = (tableName, primaryKey)
            return try read { db in try db.checkSchema(columns: names, primaryKey: key, table: table, for: "\(T.self)")
            }
        }
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

    /// Entities from any query that returns the entity's columns (by name, in any order,
    /// extra columns ignored): the query runs as a subquery of
    /// `SELECT <the entity's columns> FROM (…)`, so an explicit mapping still reads its
    /// columns in its own order. The query's row order is kept.
    ///
    /// **Scopes**: SwiftDAL cannot rewrite the inside of your query. On a DAL with a
    /// ``scope`` it filters the rows the query *returns* (`… FROM (…) WHERE tenant_id = ?
    /// AND deleted_at IS NULL`, so the query must return those columns), which keeps
    /// other tenants' and deleted entities out of the result; but the tables your query
    /// reads (a join's other tables, a subquery, an aggregate) are not scoped: write
    /// their tenant conditions yourself. ``sqlValueList(_:as:)-1ub7f``, ``read(_:)`` and
    /// `write(_:)` are never scoped.
    ///
    /// For example, `try fetchEntities("SELECT u.* FROM users u JOIN orders o ON o.user_id = u.id WHERE o.product = \(p)")`.
    public final func fetchEntities(_ sql: SQL) throws -> [T] {
        try withMapping(writing: false) { db, mapping in
            let columns = mapping.selectedColumns.map(quoteIdentifier).joined(separator: ", ")
            var query = SQL(sql: "SELECT \(columns) FROM (\(sql.sql)) AS swiftdal_query", arguments: sql.arguments)
            if let filter = scopeFilter(mapping, named: sql.arguments.namedValues != nil) {
                try checkEnclosable(sql.sql, table: mapping.table, lexicons: mapping.dialect.lexicons)
                query = SQL(
                    sql: query.sql + " WHERE \(filter.sql)", arguments: try concatenate(sql.arguments, filter.arguments)
                )
            }
            return try db.fetchAll(query) { try self.decode($0, mapping) }
        }
    }

    // MARK: Internals shared by the operations

    /// Runs `body` with a connection (the writer when `writing`) and the table mapping.
    /// A ``DALError`` that names no table gets this DAL's (a conversion failure in
    /// `getFieldValue`, an argument mismatch in a condition…).
    @usableFromInline
    final func withMapping<R>(writing: Bool, _ body: (Database, TableMapping) throws -> R) throws -> R {
        do {
            // `reentrantRead`/`reentrantWrite` run `body` on the connection this thread holds
            // inside a `read`/`write` of the same database, if any. (Looking for one here
            // first cost every call a second look: ~140 instructions a call outside a
            // transaction and ~12 inside one, callgrind W3a and W3.)
            if writing {
                return try database.reentrantWrite { db in try mapping(db)._withUnsafeGuaranteedRef { try body(db, $0) }
                }
            }
            return try database.reentrantRead { db in try mapping(db)._withUnsafeGuaranteedRef { try body(db, $0) } }
        } catch var error as DALError where error.table == nil {
            error.table = tableName
            throw error
        }
    }

    /// The mapping of this DAL's table, made at first use (or shared, see
    /// ``init(database:tenant:)``), after checking the DAL's tenant against its scope.
    final func mapping(_ db: Database) throws -> Unmanaged<TableMapping> {
        let reference = try currentMapping.load(ordering: .acquiring) ?? makeMapping(db)
        if sharesMapping || reference._withUnsafeGuaranteedRef({ $0.hasTenantColumn }) {
            try checkTenant(hasTenantColumn: reference._withUnsafeGuaranteedRef { $0.hasTenantColumn })
        }
        return reference
    }

    private final func makeMapping(_ db: Database) throws -> Unmanaged<TableMapping> {
        let key = sharesMapping ? sharedMappingKey : nil
        let mapping =
            try key.flatMap { SharedMappings.mapping(for: $0, database: database) }
            ?? TableMapping(
                entity: T.self, table: tableName, primaryKey: primaryKey, requiresPrimaryKey: requiresPrimaryKey,
                defaultSort: defaultSortField.isEmpty ? nil : OrderBy(column: defaultSortField, defaultSortDirection),
                scope: scope, includesDeletedRows: includesDeletedRows, db: db, dialect: db.dialect)
        if let key { SharedMappings.keep(mapping, for: key, database: database) }
        mappings.withLock { $0.append(mapping) }
        let reference = Unmanaged.passUnretained(mapping)
        currentMapping.store(reference, ordering: .releasing)
        return reference
    }

    /// What a shared mapping depends on: the entity, the database and every hook.
    private final var sharedMappingKey: SharedMappings.Key {
        SharedMappings.Key(
            entity: ObjectIdentifier(T.self), database: ObjectIdentifier(database), table: tableName,
            primaryKey: primaryKey,
            sortField: defaultSortField, sortDirection: defaultSortDirection, scope: scope,
            includesDeletedRows: includesDeletedRows, requiresPrimaryKey: requiresPrimaryKey)
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
}
