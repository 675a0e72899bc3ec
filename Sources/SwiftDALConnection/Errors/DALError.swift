public import Foundation

/// An error raised by SwiftDAL itself rather than by SQLite: a missing row, a column
/// name that is not in the table, a value that does not convert, a misuse such as a
/// wrong number of arguments or a re-entrant write.
///
/// The ``code`` is an extensible struct: match it in `catch`, or compare it.
///
/// For example:
///
/// ```swift
/// do {
///     _ = try users.getFieldList("name; DROP TABLE users")
/// } catch DALError.Code.invalidColumn {
///     // the column name was rejected before any SQL ran
/// }
/// ```
public struct DALError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable code.
    ///
    /// For example, `catch DALError.Code.notFound`, or `error.code == .invalidColumn`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name (`"notFound"`); a new code is any other stable name.
        public let rawValue: String
        /// A code from its name: SwiftDAL's own are the static constants below.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name, as in `DALError.notFound`.
        public var description: String { rawValue }

        /// No row has the requested key.
        public static let notFound = Code(rawValue: "notFound")
        /// A column name that the table does not have, or that is not allowed here.
        public static let invalidColumn = Code(rawValue: "invalidColumn")
        /// A name that cannot be used as an SQL identifier.
        public static let invalidIdentifier = Code(rawValue: "invalidIdentifier")
        /// A stored value that does not convert to the requested Swift type.
        public static let conversionFailed = Code(rawValue: "conversionFailed")
        /// A Swift value that cannot be stored without loss (NaN, `UInt64` above `Int64.max`).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// Arguments that do not match the statement's parameters.
        public static let argumentMismatch = Code(rawValue: "argumentMismatch")
        /// SQL text that is empty or holds more than the one statement expected.
        public static let invalidSQL = Code(rawValue: "invalidSQL")
        /// A write or read re-entered on a thread that already holds a connection.
        public static let reentrantAccess = Code(rawValue: "reentrantAccess")
        /// A write attempted inside a read-only access.
        public static let writeInReadOnlyAccess = Code(rawValue: "writeInReadOnlyAccess")
        /// The connection is closed.
        public static let connectionClosed = Code(rawValue: "connectionClosed")
        /// No pooled connection became free within the pool's wait (all are in use).
        public static let connectionUnavailable = Code(rawValue: "connectionUnavailable")
        /// The connection could not close: statements are still open.
        public static let statementsStillOpen = Code(rawValue: "statementsStillOpen")
        /// A file-system problem around the database (template copy, missing directory).
        public static let fileSystem = Code(rawValue: "fileSystem")
        /// A database schema that does not match what the code expects.
        public static let schemaMismatch = Code(rawValue: "schemaMismatch")
        /// A connection, statement, cursor or row view used outside the `read`/`write`
        /// closure (or DAL call) it was lent to, or a pooled connection closed directly.
        public static let accessEnded = Code(rawValue: "accessEnded")
        /// A call that ran past its time limit (``withDatabaseTimeout(_:operation:)-l73r``,
        /// ``Configuration/callTimeout``) and was stopped; its transaction was rolled back.
        public static let timeout = Code(rawValue: "timeout")
        /// A call that may or may not have committed: the connection was lost (or its
        /// server stopped answering and it was abandoned) while a statement that commits
        /// was in flight (a `COMMIT`, or a write outside a transaction), or the call was
        /// stopped while its commit waited for a synchronous standby (PostgreSQL keeps it on
        /// the primary, unconfirmed by any standby: a failover may lose it). Never "rolled back":
        /// find out before retrying (read the row back, or give each write an idempotency key
        /// the table keeps unique, so that a retry of a write that did commit is refused).
        public static let outcomeUnknown = Code(rawValue: "outcomeUnknown")
        /// A write refused because more than one server of the primary's list accepts writes
        /// (split brain: an old primary back beside the promoted one). Writes resume once
        /// one remains; the message names the servers.
        public static let splitBrain = Code(rawValue: "splitBrain")
        /// An insert that produced no rowid (a `WITHOUT ROWID` table, a view, an insert
        /// that inserted nothing or several rows) where a rowid was asked for.
        public static let noRowID = Code(rawValue: "noRowID")
        /// An operation that this table or DAL cannot perform (a key lookup on a view
        /// without a primary key).
        public static let unsupportedOperation = Code(rawValue: "unsupportedOperation")
        /// A keyset-paging cursor that is not one this DAL issued for this query: garbage,
        /// truncated, tampered with, signed with another key, or made for another table,
        /// order, condition or scope. Never SQL: the token is checked before any is built.
        public static let invalidCursor = Code(rawValue: "invalidCursor")
        /// A DAL that declares a tenant scope used without a tenant value (it would
        /// otherwise read or write every tenant's rows).
        public static let tenantRequired = Code(rawValue: "tenantRequired")
        /// A write that would cross the DAL's scope: an entity carrying another tenant's
        /// value, a write to the tenant column, an upsert whose key belongs to a row
        /// outside the scope.
        public static let scopeViolation = Code(rawValue: "scopeViolation")
        /// A transaction that failed but could not be rolled back whole: a statement in it
        /// committed it on its own (MariaDB commits the open transaction at DDL — `CREATE`,
        /// `ALTER`, `DROP`, … — `LOCK TABLES` and a few more), so what it wrote up to that
        /// statement, the statement, and every statement after it (each then committed on
        /// its own, as MariaDB runs it) stay committed. ``DALError/sql`` is that statement;
        /// ``DALError/underlying`` the failure. Run such statements outside a `write`, or in
        /// a migration.
        public static let committedImplicitly = Code(rawValue: "committedImplicitly")

        /// Lets a code be a `catch` pattern: `catch DALError.Code.notFound`.
        public static func ~= (pattern: Code, error: any Error) -> Bool {
            (error as? DALError)?.code == pattern
        }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for people.
    public var message: String
    /// The table involved, when there is one.
    public var table: String?
    /// The column involved, when there is one.
    public var column: String?
    /// The SQL involved, when there is one.
    public var sql: String?
    /// The error that caused this one, when there is one.
    public var underlying: (any Error)?

    /// Creates an error.
    ///
    /// For example, `DALError(.notFound, "no user with id 7", table: "users")`.
    public init(
        _ code: Code, _ message: String, table: String? = nil, column: String? = nil,
        sql: String? = nil, underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.table = table
        self.column = column
        self.sql = sql
        self.underlying = underlying
    }

    /// The code, the message, and the table, column and SQL when known; never bound values.
    public var description: String {
        var text = "DALError.\(code): \(message)"
        if let table { text += " [table \(table)]" }
        if let column { text += " [column \(column)]" }
        if let sql { text += " — `\(sql)`" }
        return text
    }

    /// The error of a ``RowView`` read after its row was left (it escaped the closure that
    /// received it), on any engine that reads rows in place.
    package static func rowViewLeft(sql: String? = nil) -> DALError {
        DALError(
            .accessEnded,
            "a row view was read after its row was left (it escaped the closure that received it); "
                + "copy the row (row.copy()) or decode it inside the closure", sql: sql)
    }

    /// Shorthand for matching in `catch`: `catch DALError.notFound`.
    public static let notFound = Code.notFound
    /// Shorthand for ``Code/invalidColumn``: `catch DALError.invalidColumn`.
    public static let invalidColumn = Code.invalidColumn
    /// Shorthand for ``Code/conversionFailed``: `catch DALError.conversionFailed`.
    public static let conversionFailed = Code.conversionFailed
    /// Shorthand for ``Code/argumentMismatch``: `catch DALError.argumentMismatch`.
    public static let argumentMismatch = Code.argumentMismatch
    /// Shorthand for ``Code/reentrantAccess``: `catch DALError.reentrantAccess`.
    public static let reentrantAccess = Code.reentrantAccess
}

extension DALError: LocalizedError {
    /// The same as ``description``, for code that logs `error.localizedDescription`
    /// (without it, Foundation's generic "The operation could not be completed").
    public var errorDescription: String? { description }
}
