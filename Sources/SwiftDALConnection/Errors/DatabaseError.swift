/// An error reported by a database engine: an ``SQLiteError``, or a `PostgresError` from
/// the `SwiftDALPostgres` module. The same `catch` patterns work for every engine:
/// `catch SQLiteError.constraintUnique` (any ``ResultCode`` pattern) matches the engine
/// error whose ``resultCode`` is that code, so a duplicate key on PostgreSQL (SQLSTATE
/// 23505) is caught where the SQLite one is.
///
/// For example:
///
/// ```swift
/// do {
///     try users.insert(user)
/// } catch let error as any DatabaseError where error.constraintKind == .unique {
///     return .conflict(error.message)
/// } catch let error as any DatabaseError where error.isRetryable {
///     return .retryLater
/// }
/// ```
public protocol DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The engine that reported the error.
    var engine: DatabaseEngine { get }
    /// SQLite's result code for the error, or the nearest one for another engine (a
    /// unique violation is ``ResultCode/constraintUnique`` everywhere).
    var resultCode: ResultCode { get }
    /// Which constraint failed, for constraint violations; `nil` otherwise.
    var constraintKind: ConstraintKind? { get }
    /// What kind of failure this is, the same on every engine (``DatabaseErrorCategory``).
    var category: DatabaseErrorCategory { get }
    /// The engine's message.
    var message: String { get }
    /// The SQL that failed, when there is one (placeholders only, never values).
    var sql: String? { get }
    /// Whether running the same work again may succeed: the database was busy or locked,
    /// a serialization failure or a deadlock.
    var isRetryable: Bool { get }
    /// For a statement of a batch (`insertRange`), the failing one's position in it: the
    /// index of the entity whose row failed; `nil` for an error outside a batch, and for
    /// one no item caused (a lost connection, a stopped call, a statement timeout), which
    /// names no item.
    var batchIndex: Int? { get }
}

extension DatabaseError {
    /// `nil`: an error outside a batch (the engines' errors carry a position when they
    /// come from one).
    public var batchIndex: Int? { nil }
}

extension DatabaseError {
    /// Whether the error can be the batch item's own doing (a constraint, a value, a lock
    /// conflict, a statement the server refused), so that its ``batchIndex`` names the item
    /// to look at: not a lost connection or a stopped call, which any item would have met.
    package var concernsTheBatchItem: Bool { category != .connection && category != .interrupted }
}

/// An engine error that can carry a batch position (``DatabaseError/batchIndex``), set by
/// the package's batch paths.
package protocol BatchPositionedError: Error {
    var batchIndex: Int? { get set }
}

/// Runs `body`, a batch whose statements are not one per entity (some entities send none):
/// an engine error's ``DatabaseError/batchIndex``, a statement's position, becomes
/// `position(statement)`, the entity's.
package func renumberingBatchErrors<R>(_ position: (Int) -> Int, _ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch var error as any BatchPositionedError {
        if let index = error.batchIndex { error.batchIndex = position(index) }
        throw error
    }
}

/// Runs `body`, the statements of item `index` of a batch run one by one: an engine error
/// gets `index` as its ``DatabaseError/batchIndex``.
package func positioningBatchErrors<R>(at index: Int, _ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch var error as any BatchPositionedError {
        if (error as? any DatabaseError)?.concernsTheBatchItem != false { error.batchIndex = index }
        throw error
    }
}
