/// What kind of failure an engine error is, the same on every engine: what a service
/// decides on (retry, answer 409 or 503, page someone) without reading SQLite's result
/// codes, PostgreSQL's SQLSTATEs or MariaDB's error numbers.
///
/// A struct with static values rather than an enum, so that a category added later breaks
/// no `switch` (end one with `default:`).
///
/// ```swift
/// do {
///     try users.insert(user)
/// } catch let error as any DatabaseError {
///     switch error.category {
///     case .constraint: return .conflict          // error.constraintKind says which
///     case .busy, .conflict: return .retryLater   // error.isRetryable is true
///     case .connection: return .unavailable
///     default: throw error
///     }
/// }
/// ```
public struct DatabaseErrorCategory: Hashable, Sendable, CustomStringConvertible {
    /// The category's name (`"constraint"`).
    public let name: String

    /// A category named `name`.
    ///
    /// For example, `DatabaseErrorCategory(name: "constraint") == .constraint`.
    public init(name: String) { self.name = name }

    /// The name.
    public var description: String { name }

    /// A constraint refused the change (unique, primary key, foreign key, not null,
    /// check): ``DatabaseError/constraintKind`` says which.
    public static let constraint = DatabaseErrorCategory(name: "constraint")
    /// The database was busy or a lock was not granted in time: the same statement may
    /// succeed later (SQLite's `SQLITE_BUSY`/`SQLITE_LOCKED`, PostgreSQL's lock timeout,
    /// MariaDB's lock wait timeout).
    public static let busy = DatabaseErrorCategory(name: "busy")
    /// The transaction lost to another one (a deadlock, a serialization failure): run the
    /// whole transaction again.
    public static let conflict = DatabaseErrorCategory(name: "conflict")
    /// The connection to the server failed or was lost (or the server is shutting down).
    public static let connection = DatabaseErrorCategory(name: "connection")
    /// The statement was stopped (a cancel, a time limit, a `KILL`).
    public static let interrupted = DatabaseErrorCategory(name: "interrupted")
    /// A write where only reads are allowed (a read-only transaction or database, a standby).
    public static let readOnly = DatabaseErrorCategory(name: "readOnly")
    /// The statement cannot run as written: a syntax error, an unknown table, column or
    /// function (on SQLite, also an error a function raised while it ran).
    public static let invalidStatement = DatabaseErrorCategory(name: "invalidStatement")
    /// A value the statement computed or stored is not valid for its type: out of range,
    /// badly formatted, too long, a division by zero.
    public static let invalidValue = DatabaseErrorCategory(name: "invalidValue")
    /// The engine ran out of something: disk, memory, connections.
    public static let resourceExhausted = DatabaseErrorCategory(name: "resourceExhausted")
    /// The user may not do this (access denied, a missing privilege).
    public static let permission = DatabaseErrorCategory(name: "permission")
    /// The database file is damaged or is not a database.
    public static let corrupt = DatabaseErrorCategory(name: "corrupt")
    /// Anything else.
    public static let other = DatabaseErrorCategory(name: "other")
}

extension DatabaseError {
    /// The category of `resultCode` (SQLite's result codes, or the nearest one another
    /// engine maps its error onto); the engines' own errors say it from their own codes.
    public var category: DatabaseErrorCategory { DatabaseErrorCategory(resultCode: resultCode) }
}

extension DatabaseErrorCategory {
    /// The category of SQLite's result code `code` (its primary code decides).
    ///
    /// For example, `DatabaseErrorCategory(resultCode: .busy) == .busy`.
    public init(resultCode code: ResultCode) {
        if code == .busySnapshot {  // the transaction must start again
            self = .conflict
            return
        }
        switch ResultCode(rawValue: code.rawValue & 0xFF) {
        case .constraint: self = .constraint
        case .busy, .locked: self = .busy
        case .interrupt: self = .interrupted
        case .readOnly: self = .readOnly
        case .error, .schema, .misuse, .range: self = .invalidStatement
        case .mismatch, .tooBig: self = .invalidValue
        case .full, .noMemory: self = .resourceExhausted
        case .permission: self = .permission
        case .corrupt, .notADatabase: self = .corrupt
        case .cannotOpen: self = .connection
        default: self = .other
        }
    }
}
