import SwiftDALConnection
import SwiftDALEntity
import SwiftDALIDAL
import Synchronization

/// The tenant a DAL instance was made with.
enum TenantBinding: Sendable {
    /// No tenant given (`init(database:)`).
    case none
    /// A tenant given as `nil`/`NULL`.
    case missing
    case value(DatabaseValue)
    /// A tenant that did not convert (NaN, a `UInt64` above `Int64.max`).
    case invalid(DALError)
}

extension ReadOnlyDAL {
    /// The tenant this DAL is bound to (``init(database:tenant:)``), or `nil`.
    ///
    /// For example, `notes.tenant == .integer(42)`.
    public var tenant: DatabaseValue? {
        if case .value(let value) = tenantBinding { return value }
        return nil
    }

    /// A read-only view of this DAL that also reads soft-deleted rows: the same table,
    /// tenant, order, cursor key and scope, without the `deleted_at IS NULL` filter (a
    /// DAL without a soft-delete column reads the same rows through it). It has every
    /// read operation (finds, counts, field values, both kinds of paging) and no writes:
    /// bring a row back with ``BaseDAL/restoreById(_:)-ehfc``, or remove it for good with
    /// ``BaseDAL/purgeById(_:)-3hd0t``. Its cursors are its own (a cursor of the DAL is refused
    /// by the view and the other way round).
    ///
    /// For example, `let trash = try notes.includingDeleted.find(condition: "deleted_at IS NOT NULL")`.
    public var includingDeleted: ReadOnlyDAL<T> {
        if includesDeletedRows { return self }
        return includingDeletedView.withLock { view in
            if let view { return view }
            let made = IncludingDeletedView(self)
            view = made
            return made
        }
    }

    /// Throws unless the DAL has a tenant exactly when its scope has a tenant column:
    /// ``DALError/Code/tenantRequired`` without one, ``DALError/Code/unsupportedOperation``
    /// for a tenant given to a DAL without a tenant column, or the tenant's conversion
    /// error.
    func checkTenant(hasTenantColumn: Bool) throws {
        switch (hasTenantColumn, tenantBinding) {
        case (false, .none), (true, .value): return
        case (_, .invalid(let error)): throw error
        case (false, _):
            throw DALError(
                .unsupportedOperation,
                "\(Self.self) was given a tenant, but its scope declares no tenant column (override `scope`)",
                table: tableName)
        case (true, _):
            throw DALError(
                .tenantRequired,
                "\(Self.self) is scoped by a tenant column but has no tenant: make it with init(database:tenant:)",
                table: tableName, column: scope.tenantColumn)
        }
    }

    /// The scope's predicate for `rows` and the values it binds (named
    /// `swiftdal_tenant`), or `nil` when the DAL has no scope there.
    func scopeFilter(_ mapping: TableMapping, named: Bool, rows: ScopeRows = .visible) -> SQL? {
        guard let predicate = mapping.scope.predicate(rows, named: named) else { return nil }
        if named {
            var values = [String: DatabaseValue]()
            if let tenant = scopeValues.first { values[ScopeSQL.tenantArgument] = tenant }
            return SQL(sql: predicate, arguments: StatementArguments(namedValues: values))
        }
        return SQL(sql: predicate, arguments: StatementArguments(values: scopeValues))
    }

    /// **The** WHERE condition of an operation of this DAL on `mapping`'s table: the
    /// caller's `condition`, in parentheses (so that an `OR` in it cannot escape), AND
    /// the scope's predicate (`"tenant_id" = ? AND "deleted_at" IS NULL`), with their
    /// arguments in that order: the condition's, then the tenant (named
    /// `:swiftdal_tenant` when the condition's arguments are named). Without a scope it
    /// is `condition`; `nil` when both are empty (every row). Every query BaseDAL and
    /// ReadOnlyDAL build from a condition goes through it (``selectQuery(_:condition:orderBy:limit:offset:)``
    /// and `conditionQuery` call it), and so must any other query over the table, such
    /// as a stream:
    ///
    /// ```swift
    /// try withMapping(writing: false) { db, mapping in
    ///     var sql = mapping.selectSQL
    ///     let filter = try scopedCondition(condition, mapping)
    ///     if let filter { sql += " WHERE \(filter.sql)" }
    ///     sql += " " + (try mapping.orderClause(orderBy))
    ///     let query = SQL(sql: sql, arguments: filter?.arguments ?? StatementArguments())
    ///     …
    /// }
    /// ```
    ///
    /// (`selectQuery` already applies it: do not apply it twice.) A DAL whose scope has a
    /// tenant column but no tenant never gets here: its mapping throws
    /// ``DALError/Code/tenantRequired`` first.
    func scopedCondition(_ condition: SQL?, _ mapping: TableMapping, rows: ScopeRows = .visible) throws -> SQL? {
        let condition = condition.flatMap { $0.isEmpty ? nil : $0 }
        guard mapping.hasScope else { return condition }
        let named = condition?.arguments.namedValues != nil
        guard let filter = scopeFilter(mapping, named: named, rows: rows) else { return condition }
        guard let condition else { return filter }
        try checkEnclosable(condition.sql, table: mapping.table, lexicons: mapping.dialect.lexicons)
        return SQL(
            sql: "(\(condition.sql)) AND \(filter.sql)",
            arguments: try concatenate(condition.arguments, filter.arguments))
    }

    /// The arguments of a key lookup through ``TableMapping/scopedKeyPredicate``: the
    /// key's values, then the scope's.
    @usableFromInline
    func scopedKeyArguments(_ id: some EntityKey, _ mapping: TableMapping) throws -> StatementArguments {
        let key = try mapping.keyArguments(id)
        return mapping.isScoped ? try scopedArguments(key) : key
    }

    /// `arguments`, then the scope's values.
    @usableFromInline
    func scopedArguments(_ arguments: StatementArguments) throws -> StatementArguments {
        var arguments = arguments
        try arguments.append(contentsOf: StatementArguments(values: scopeValues))
        return arguments
    }
}

/// Throws ``DALError/Code/invalidSQL`` unless `sql` stays inside the parentheses it is
/// put in: its own parentheses balance (never closing one it did not open), and no
/// string, quoted name or comment is left open (a `--` comment must end with a line
/// break), so that nothing written after it, the scope, can be cut off or escaped. The
/// text is read by the engine's lexicon, as the engine reads it: on PostgreSQL a `$$…$$`
/// or `E'\''` string and a nested comment hide their parentheses, on SQLite they do not,
/// and SQLite's `$name(…)` parameters do. Where a session setting changes the reading
/// (PostgreSQL's `standard_conforming_strings`), the text must pass every reading.
func checkEnclosable(_ sql: String, table: String, lexicons: [SQLLexicon]) throws {
    for (index, lexicon) in lexicons.enumerated() {
        try checkEnclosable(sql, table: table, lexicon: lexicon, strict: index == 0)
    }
}

/// One reading of ``checkEnclosable(_:table:lexicons:)``. A reading that is not `strict`
/// (another session setting's) accepts a text that leaves a literal open: under it the
/// engine would read the scope after the text as part of that literal (the scope holds
/// no quote), and fail, never escape.
private func checkEnclosable(_ sql: String, table: String, lexicon: SQLLexicon, strict: Bool) throws {
    func refuse(_ why: String) -> DALError {
        DALError(.invalidSQL, "a condition on a scoped DAL must be self-contained: \(why)", table: table, sql: sql)
    }
    let bytes = Array(sql.utf8)
    var depth = 0
    var index = 0
    while index < bytes.count {
        let region: SQLLexicon.Region?
        do {
            region = try lexicon.region(in: bytes, at: index, sql: sql)
        } catch let error as DALError {
            guard strict else { return }
            throw refuse(error.message)
        }
        if let region {
            if region.kind == .lineComment, region.end == bytes.count { throw refuse("a -- comment runs to its end") }
            index = region.end
            continue
        }
        switch bytes[index] {
        case UInt8(ascii: "("): depth += 1
        case UInt8(ascii: ")"):
            depth -= 1
            guard depth >= 0 else { throw refuse("it closes a parenthesis it did not open") }
        default: break
        }
        index += 1
    }
    guard depth == 0 else { throw refuse("a parenthesis is not closed") }
}

/// The ``ReadOnlyDAL/includingDeleted`` view: the hooks of the DAL it was made from,
/// read once, and deleted rows included.
final class IncludingDeletedView<T: Entity>: ReadOnlyDAL<T>, @unchecked Sendable {
    private let baseTableName: String
    private let basePrimaryKey: [String]
    private let baseSortField: String
    private let baseSortDirection: SortDirection
    private let baseScope: DALScope
    private let baseCursorKey: CursorSigningKey

    init(_ base: ReadOnlyDAL<T>) {
        baseTableName = base.tableName
        basePrimaryKey = base.primaryKey
        baseSortField = base.defaultSortField
        baseSortDirection = base.defaultSortDirection
        baseScope = base.scope
        baseCursorKey = base.cursorSigningKey
        super.init(includingDeletedRowsOf: base)
    }

    override var tableName: String { baseTableName }
    override var primaryKey: [String] { basePrimaryKey }
    override var defaultSortField: String { baseSortField }
    override var defaultSortDirection: SortDirection { baseSortDirection }
    override var scope: DALScope { baseScope }
    override var cursorSigningKey: CursorSigningKey { baseCursorKey }
}

/// The mappings of tenant-bound DALs, shared by entity, database and hooks, so that a DAL
/// made per request reads no schema. An entry holds its database weakly and is used only
/// while that very database is alive (an identifier may be reused after it is freed).
enum SharedMappings {
    struct Key: Hashable {
        let entity: ObjectIdentifier
        let database: ObjectIdentifier
        let table: String
        let primaryKey: [String]
        let sortField: String
        let sortDirection: SortDirection
        let scope: DALScope
        let includesDeletedRows: Bool
        let requiresPrimaryKey: Bool
    }

    private struct Entry {
        weak var database: (any DatabaseWriter)?
        let mapping: TableMapping
    }

    /// (Contended by every DAL made per request: `Locked`, which Thread Sanitizer follows.)
    private static let entries = Locked<[Key: Entry]>([:])

    static func mapping(for key: Key, database: any DatabaseWriter) -> TableMapping? {
        entries.withLock { entries in
            guard let entry = entries[key], let owner = entry.database, owner === database else { return nil }
            return entry.mapping
        }
    }

    static func keep(_ mapping: TableMapping, for key: Key, database: any DatabaseWriter) {
        entries.withLock { entries in
            entries = entries.filter { $0.value.database != nil }  // drop those of freed databases
            entries[key] = Entry(database: database, mapping: mapping)
        }
    }

    static func forget(_ key: Key) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }
}
