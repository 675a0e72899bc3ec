import SwiftDALConnection

/// A ``DALScope`` resolved against the real table: its columns as the table spells
/// them (checked at the DAL's first use), and the SQL fragments that apply it. The
/// fragments hold placeholders, never values: the tenant is bound.
struct ScopeSQL: Sendable {
    /// The tenant column, as the table spells it.
    let tenantColumn: String?
    /// The soft-delete column, as the table spells it.
    let softDeleteColumn: String?
    let quotedSoftDeleteColumn: String?
    let deletionMark: DeletionMark
    /// Whether the DAL reads soft-deleted rows too (an `includingDeleted` view).
    let includesDeletedRows: Bool
    let quotedTenantColumn: String?
    /// `"tenant_id" = ?`.
    let tenantPredicate: String?
    /// `"deleted_at" IS NOT NULL`.
    let deletedRowPredicate: String?
    /// The rows the DAL sees and touches: the tenant's, and only live ones unless deleted
    /// rows are included; `nil` when that is every row. Binds the tenant (if any).
    let visibleRows: String?
    /// ``visibleRows`` with the tenant as `:swiftdal_tenant`, for conditions whose
    /// arguments are named.
    let visibleRowsNamed: String?
    /// What an upsert's `DO UPDATE` must find in the conflicting row (its tenant and,
    /// with soft delete, not deleted), so that an upsert never updates a row outside the
    /// scope; binds nothing.
    let upsertGuard: String?

    /// The predicate selecting `rows` (placeholders named when `named`), or `nil` when
    /// that is every row.
    func predicate(_ rows: ScopeRows, named: Bool) -> String? {
        let tenant = quotedTenantColumn.map { "\($0) = \(named ? ":\(Self.tenantArgument)" : "?")" }
        let parts: [String?]
        switch rows {
        case .visible: return named ? visibleRowsNamed : visibleRows
        case .anyDeletionState: parts = [tenant]
        case .deletedOnly: parts = [tenant, deletedRowPredicate]
        }
        let present = parts.compactMap { $0 }
        return present.isEmpty ? nil : present.joined(separator: " AND ")
    }

    /// The name of the tenant's named argument.
    static let tenantArgument = "swiftdal_tenant"

    init(
        _ scope: DALScope, includesDeletedRows: Bool, table: String, quotedTable: String, columns: [ColumnInfo],
        resolve: (String, String) throws -> String, dialect: any EngineDialect
    ) throws {
        let tenant = try scope.tenantColumn.map { try resolve($0, "the scope's tenant column") }
        let softDelete = try scope.softDeleteColumn.map { try resolve($0, "the scope's soft-delete column") }
        if let softDelete, let tenant, softDelete == tenant {
            throw DALError(
                .schemaMismatch, "the scope names \(tenant) as both the tenant and the soft-delete column",
                table: table,
                column: tenant)
        }
        if let softDelete, columns.first(where: { $0.name == softDelete })?.isNotNull == true {
            throw DALError(
                .schemaMismatch,
                "the soft-delete column \(softDelete) is NOT NULL: a live row holds NULL there, so it must be nullable",
                table: table, column: softDelete)
        }
        tenantColumn = tenant
        softDeleteColumn = softDelete
        quotedSoftDeleteColumn = softDelete.map(dialect.quote)
        deletionMark = scope.deletionMark
        self.includesDeletedRows = includesDeletedRows
        let quotedTenant = tenant.map(dialect.quote)
        quotedTenantColumn = quotedTenant
        tenantPredicate = quotedTenant.map { "\($0) = \(dialect.placeholder)" }
        deletedRowPredicate = quotedSoftDeleteColumn.map { "\($0) IS NOT NULL" }
        let live = includesDeletedRows ? nil : quotedSoftDeleteColumn.map { "\($0) IS NULL" }
        let parts = [tenantPredicate, live].compactMap { $0 }
        visibleRows = parts.isEmpty ? nil : parts.joined(separator: " AND ")
        let namedParts = [quotedTenant.map { "\($0) = :\(Self.tenantArgument)" }, live].compactMap { $0 }
        visibleRowsNamed = namedParts.isEmpty ? nil : namedParts.joined(separator: " AND ")
        let guardParts = [
            quotedTenant.map { "\(quotedTable).\($0) = \(dialect.insertedValue(ofQuoted: $0))" },
            quotedSoftDeleteColumn.map { "\(quotedTable).\($0) IS NULL" }
        ].compactMap { $0 }
        upsertGuard = guardParts.isEmpty ? nil : guardParts.joined(separator: " AND ")
    }
}

/// Which rows of a DAL's scope an operation matches.
enum ScopeRows {
    /// The rows the DAL sees: its tenant's, live unless the DAL includes deleted rows.
    case visible
    /// The tenant's rows, deleted or not (purging).
    case anyDeletionState
    /// The tenant's soft-deleted rows (restoring).
    case deletedOnly
}
