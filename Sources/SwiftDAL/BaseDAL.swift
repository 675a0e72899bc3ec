import SwiftDALSchema

/// The generic implementation of ``IDAL`` for any ``Entity``: every table gets CRUD,
/// lookups, counting, existence checks and paging from this one class, and a table's
/// DAL is a subclass of a few lines. (The read operations come from ``ReadOnlyDAL``,
/// which it extends.)
///
/// Values are always bound; column names given as strings are checked against the
/// table's real columns (read from the database at first use) and quoted. The SQL of
/// fixed statements is built once per DAL and each statement is prepared once per
/// connection.
///
/// Subclasses may override only these hooks (documented in <doc:AddingATableDAL>):
/// ``ReadOnlyDAL/tableName``, ``ReadOnlyDAL/primaryKey``, ``ReadOnlyDAL/defaultSortField``,
/// ``ReadOnlyDAL/defaultSortDirection``, ``ReadOnlyDAL/scope`` (a tenant and soft delete),
/// ``ReadOnlyDAL/cursorSigningKey`` and ``validate(_:)``. A DAL is shared between
/// threads: subclasses add only immutable (`let`), `Sendable` stored properties, and
/// restate the base class's `@unchecked Sendable` (Swift requires it of every subclass
/// of a non-final class).
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
open class BaseDAL<T: Entity>: ReadOnlyDAL<T>, IDAL, @unchecked Sendable {
    override var requiresPrimaryKey: Bool { true }

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

    // MARK: Building blocks for subclasses

    /// Runs `body` on the writer: the one this thread already holds (inside `write`), or
    /// the writer without an explicit transaction. Use it for custom writes.
    ///
    /// For example, `try write { db in try db.execute("UPDATE users SET age = age + 1") }`.
    public final func write<R>(_ body: (Database) throws -> R) throws -> R {
        try database.reentrantWrite(body)
    }

    // MARK: Internals shared by the write operations

    /// The entity's column values, after ``validate(_:)``.
    final func encode(_ entity: T, _ mapping: TableMapping) throws -> ColumnValues {
        try validate(entity)
        return try encodeUnvalidated(entity, mapping)
    }

    /// The entity's column values (the stored row's, for comparing: not validated).
    final func encodeUnvalidated(_ entity: T, _ mapping: TableMapping) throws -> ColumnValues {
        // The names an explicit entity writes are its table's columns in order: they are
        // then checked as they are written, and not stored (callgrind, W1: one array less).
        var columns =
            mapping.isExplicit
            ? ColumnValues(expecting: mapping.selectedColumns) : ColumnValues(capacity: mapping.selectedColumns.count)
        do {
            try entity.encodeColumns(to: &columns)
        } catch var error as DALError where error.table == nil {
            error.table = mapping.table
            throw error
        }
        if mapping.isExplicit && !columns.hasExactlyTheExpectedNames && columns.names != mapping.selectedColumns {
            guard columns.names.count == mapping.selectedColumns.count,
                zip(columns.names, mapping.selectedColumns).allSatisfy({ $0.identifierKey == $1.identifierKey })
            else {
                throw DALError(
                    .schemaMismatch,
                    "\(T.self).encodeColumns wrote \(columns.names.joined(separator: ", ")) "
                        + "but \(T.self).columnNames is \(mapping.selectedColumns.joined(separator: ", "))",
                    table: mapping.table)
            }
        }
        if !mapping.generatedColumnKeys.isEmpty { columns.removeColumns(withKeys: mapping.generatedColumnKeys) }
        return columns
    }
}
