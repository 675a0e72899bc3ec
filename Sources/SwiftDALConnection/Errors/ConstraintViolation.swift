import Foundation

/// A constraint violation as an API reports it: what kind of constraint, on which table
/// and columns, under which name, as far as the engine says. SQLite names the table and
/// columns of a `UNIQUE`, `PRIMARY KEY` or `NOT NULL` failure (`UNIQUE constraint failed:
/// users.email`) and the name or expression of a `CHECK`, but nothing for a `FOREIGN KEY`;
/// PostgreSQL names the table and constraint of every one, the column of a `NOT NULL`, and
/// the key columns of a `UNIQUE` or `FOREIGN KEY` (read from its detail, values left out).
///
/// For example:
///
/// ```swift
/// catch let error as any DatabaseError {
///     if let violation = error.constraintViolation {
///         return Response(status: violation.httpStatus, body: "\(violation.kind) on \(violation.columns)")
///     }
/// }
/// ```
public struct ConstraintViolation: Sendable, Hashable {
    /// Which constraint failed.
    public let kind: ConstraintKind
    /// The table, when the engine names it.
    public let table: String?
    /// The columns, when the engine names them (empty otherwise).
    public let columns: [String]
    /// The constraint's name (PostgreSQL), or a `CHECK`'s name or expression (SQLite).
    public let constraint: String?

    /// Creates a violation. SwiftDAL creates these from engine errors.
    ///
    /// For example, `ConstraintViolation(kind: .unique, table: "users", columns: ["email"], constraint: nil)`.
    public init(kind: ConstraintKind, table: String?, columns: [String], constraint: String?) {
        self.kind = kind
        self.table = table
        self.columns = columns
        self.constraint = constraint
    }

    /// The HTTP status an API answers with: 409 Conflict for a unique or primary key
    /// (the resource exists), 422 Unprocessable Content for the others (check, not null,
    /// foreign key: the request's content is wrong).
    public var httpStatus: Int {
        switch kind {
        case .unique, .primaryKey: 409
        default: 422
        }
    }
}

extension DatabaseError {
    /// The violated constraint in an API's terms, for constraint errors; `nil` otherwise.
    ///
    /// For example, `error.constraintViolation?.columns == ["email"]`.
    public var constraintViolation: ConstraintViolation? {
        guard let kind = constraintKind else { return nil }
        if let detailed = self as? any DetailedConstraintError { return detailed.violation(kind) }
        return ConstraintViolation(kind: kind, table: nil, columns: [], constraint: nil)
    }
}

/// An engine error that says whether the engine refused a value for its column's type
/// (too long, out of range, badly formatted): most often a request's value, which
/// ``httpStatus(for:)`` answers with 422. Errors of the values a statement computes (a
/// division by zero, an overflow in an expression) are not: they stay 500.
package protocol ValueRefusingError {
    var refusesAValue: Bool { get }
}

/// An engine error that knows its constraint's table, columns and name itself.
package protocol DetailedConstraintError {
    func violation(_ kind: ConstraintKind) -> ConstraintViolation
}

/// The HTTP status an API answers a failed database call with, so that handlers map
/// errors without parsing text:
///
/// | error | status |
/// |---|---|
/// | unique or primary-key violation | 409 Conflict |
/// | check, not-null, foreign-key violation; a value the engine refuses for its column's type: too long, out of range, badly formatted (MariaDB's 1406, 1264, 1265, 1366, 1292; PostgreSQL's 22001, 22003, 22007, 22008, 22P02, 22021; SQLite's datatype mismatch) | 422 Unprocessable Content |
/// | busy or locked database, serialization failure, deadlock, time limit (``DALError/Code/timeout``), no free connection, a pool shutting down (``DALError/Code/connectionClosed``), writes refused in a split brain (``DALError/Code/splitBrain``), unreachable server | 503 Service Unavailable |
/// | ``DALError/Code/notFound`` | 404 Not Found |
/// | a column, value or argument the caller gave that is refused (``DALError/Code/invalidColumn``, `.invalidIdentifier`, `.invalidValue`, `.argumentMismatch`, `.conversionFailed`) | 400 Bad Request |
/// | a keyset-paging cursor the DAL did not issue for this query (``DALError/Code/invalidCursor``) | 400 Bad Request |
/// | a write that would cross the DAL's tenant or soft-delete scope (``DALError/Code/scopeViolation``) | 403 Forbidden |
/// | `CancellationError` (the client went away) | 499 |
/// | anything else, ``DALError/Code/outcomeUnknown`` included (a write that may have committed: not one to retry blindly), and refused credentials (category ``DatabaseErrorCategory/permission``: a wrong password is the service's configuration, not an outage) | 500 Internal Server Error |
///
/// For example, `return Response(status: httpStatus(for: error))`.
public func httpStatus(for error: any Error) -> Int {
    if error is CancellationError { return 499 }
    if let error = error as? any DatabaseError {
        if let violation = error.constraintViolation { return violation.httpStatus }
        if error.isRetryable { return 503 }
        if (error as? any ValueRefusingError)?.refusesAValue == true { return 422 }
        // Refused credentials (a wrong password, an unknown role): the service's
        // configuration, which no retry mends.
        if error.category == .permission { return 500 }
        switch error.resultCode.primary {
        case .busy, .locked, .cannotOpen, .interrupt: return 503
        default: return 500
        }
    }
    if let error = error as? DALError {
        switch error.code {
        case .notFound: return 404
        case .timeout, .connectionUnavailable, .connectionClosed, .splitBrain: return 503
        case .invalidColumn, .invalidIdentifier, .invalidValue, .argumentMismatch, .conversionFailed: return 400
        case .invalidCursor: return 400
        case .scopeViolation: return 403
        default: return 500
        }
    }
    return 500
}

/// The kind of constraint behind a constraint error, on every engine (SQLite's
/// `SQLITE_CONSTRAINT_*`, PostgreSQL's class 23, MariaDB's 1062, 1451, 1048, …).
///
/// For example, a duplicate email gives `error.constraintKind == .unique`.
public enum ConstraintKind: Sendable, Hashable {
    /// A `UNIQUE` constraint: a duplicate value.
    case unique
    /// A `PRIMARY KEY` constraint: a duplicate key.
    case primaryKey
    /// A `NOT NULL` constraint: `NULL` in a column that refuses it.
    case notNull
    /// A `FOREIGN KEY` constraint: a reference to a missing row, or a delete of a referenced one.
    case foreignKey
    /// A `CHECK` constraint: a value the check refuses.
    case check
    /// Another constraint (trigger `RAISE`, rowid, datatype in a STRICT table…).
    case other

    /// The kind an extended constraint code names (``ResultCode/constraintUnique`` is
    /// ``unique``, …), or `nil` for any other code: how every engine reads the code it mapped
    /// its error onto.
    package init?(code: ResultCode) {
        switch code {
        case .constraintUnique: self = .unique
        case .constraintPrimaryKey: self = .primaryKey
        case .constraintNotNull: self = .notNull
        case .constraintForeignKey: self = .foreignKey
        case .constraintCheck: self = .check
        default: return nil
        }
    }
}
