public import SwiftDALConnection

/// The rows a table DAL may see and touch, declared once by overriding
/// ``ReadOnlyDAL/scope``: a **tenant** column, whose value the DAL instance is bound to,
/// and a **soft-delete** column, set instead of deleting rows.
///
/// With a tenant column every read, count, existence check, field lookup, find, page,
/// update and delete adds `tenant_id = ?` (the DAL's tenant, bound); inserts set the
/// column (and refuse an entity carrying another tenant's value); updates never move a
/// row to another tenant. A DAL that declares a tenant column but was made without a
/// tenant throws ``DALError/Code/tenantRequired`` rather than reading every tenant.
///
/// With a soft-delete column (nullable, `NULL` for a live row) reads skip rows where it
/// is not `NULL`, and `deleteById`/`deleteByCondition` set it (to ``DeletionMark``)
/// instead of deleting. ``ReadOnlyDAL/includingDeleted`` reads deleted rows too;
/// ``BaseDAL/restoreById(_:)-ehfc`` brings one back; ``BaseDAL/purgeById(_:)-3hd0t`` and
/// ``BaseDAL/purgeByCondition(_:)-7gkwo`` delete for good (within the tenant).
///
/// For example:
///
/// ```swift
/// final class NoteDAL: BaseDAL<Note>, @unchecked Sendable {
///     override var scope: DALScope { DALScope(tenantColumn: "tenant_id", softDeleteColumn: "deleted_at") }
/// }
///
/// let notes = NoteDAL(database: pool, tenant: request.tenantID)   // one per request
/// let mine = try notes.find(condition: "title LIKE \(containing: "q3")")   // this tenant's, not deleted
/// ```
public struct DALScope: Sendable, Hashable {
    /// The column holding each row's tenant (`nil`: no tenant scope).
    public var tenantColumn: String?
    /// The column that marks a row deleted when it is not `NULL` (`nil`: deletes delete).
    public var softDeleteColumn: String?
    /// What a soft delete writes into ``softDeleteColumn``.
    public var deletionMark: DeletionMark

    /// A scope; every part is optional.
    ///
    /// For example, `DALScope(tenantColumn: "tenant_id")` or
    /// `DALScope(softDeleteColumn: "deleted_at", deletionMark: .value(1))`.
    public init(
        tenantColumn: String? = nil, softDeleteColumn: String? = nil, deletionMark: DeletionMark = .currentTimestamp
    ) {
        self.tenantColumn = tenantColumn
        self.softDeleteColumn = softDeleteColumn
        self.deletionMark = deletionMark
    }

    /// No scope: every row of the table (the default).
    ///
    /// For example, `override var scope: DALScope { .none }`.
    public static let none = DALScope()

    /// Whether the scope restricts anything.
    var isEmpty: Bool { tenantColumn == nil && softDeleteColumn == nil }
}

/// What a soft delete writes into the scope's soft-delete column.
///
/// For example, `DALScope(softDeleteColumn: "deleted_at", deletionMark: .currentTimestamp)`.
public enum DeletionMark: Sendable, Hashable {
    /// The database's `CURRENT_TIMESTAMP` (SQLite writes `'YYYY-MM-DD HH:MM:SS'` in UTC,
    /// which reads back as a `Date`; PostgreSQL the transaction's start time).
    case currentTimestamp
    /// A fixed value, bound (for example `1` in a nullable flag column).
    case value(DatabaseValue)
}
