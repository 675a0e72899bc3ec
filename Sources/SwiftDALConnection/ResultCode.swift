internal import CSwiftDALSQLite

/// An SQLite result code, primary (`SQLITE_BUSY`) or extended (`SQLITE_CONSTRAINT_UNIQUE`).
///
/// Use a code as a pattern in `catch`: an extended code matches exactly, a primary code
/// matches every extended code in its family.
///
/// For example:
///
/// ```swift
/// do {
///     try db.execute("INSERT INTO users(email) VALUES (\(email))")
/// } catch SQLiteError.constraintUnique {
///     // duplicate email
/// } catch SQLiteError.busy {
///     // SQLITE_BUSY and every SQLITE_BUSY_*
/// }
/// ```
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code, as `sqlite3_extended_errcode` returns it.
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// Whether this is a primary code (no extended bits).
    public var isPrimary: Bool { rawValue & ~0xFF == 0 }

    /// SQLite's English description of the code (`sqlite3_errstr`).
    public var description: String {
        let text = sqlite3_errstr(rawValue).map { String(cString: $0) } ?? "unknown error"
        return "\(text) (code \(rawValue))"
    }

    /// Whether `code` is this code, or belongs to this primary code's family.
    public func matches(_ code: ResultCode) -> Bool {
        isPrimary ? code.primary == self : code == self
    }

    // Primary codes, named after SQLite's SQLITE_* macros (sqlite3.h documents each).
    public static let ok = ResultCode(rawValue: 0)
    public static let error = ResultCode(rawValue: 1)
    public static let `internal` = ResultCode(rawValue: 2)
    public static let permission = ResultCode(rawValue: 3)
    public static let abort = ResultCode(rawValue: 4)
    public static let busy = ResultCode(rawValue: 5)
    public static let locked = ResultCode(rawValue: 6)
    public static let noMemory = ResultCode(rawValue: 7)
    public static let readOnly = ResultCode(rawValue: 8)
    public static let interrupt = ResultCode(rawValue: 9)
    public static let ioError = ResultCode(rawValue: 10)
    public static let corrupt = ResultCode(rawValue: 11)
    public static let notFound = ResultCode(rawValue: 12)
    public static let full = ResultCode(rawValue: 13)
    public static let cannotOpen = ResultCode(rawValue: 14)
    public static let `protocol` = ResultCode(rawValue: 15)
    public static let schema = ResultCode(rawValue: 17)
    public static let tooBig = ResultCode(rawValue: 18)
    public static let constraint = ResultCode(rawValue: 19)
    public static let mismatch = ResultCode(rawValue: 20)
    public static let misuse = ResultCode(rawValue: 21)
    public static let range = ResultCode(rawValue: 25)
    public static let notADatabase = ResultCode(rawValue: 26)
    public static let row = ResultCode(rawValue: 100)
    public static let done = ResultCode(rawValue: 101)

    // Extended codes: C macros that Swift does not import, defined from sqlite3.h.
    public static let busyRecovery = ResultCode(rawValue: 5 | 1 << 8)
    public static let busySnapshot = ResultCode(rawValue: 5 | 2 << 8)
    public static let busyTimeout = ResultCode(rawValue: 5 | 3 << 8)
    public static let ioErrorRead = ResultCode(rawValue: 10 | 1 << 8)
    public static let ioErrorShortRead = ResultCode(rawValue: 10 | 2 << 8)
    public static let ioErrorWrite = ResultCode(rawValue: 10 | 3 << 8)
    public static let ioErrorFsync = ResultCode(rawValue: 10 | 4 << 8)
    public static let ioErrorTruncate = ResultCode(rawValue: 10 | 6 << 8)
    public static let readOnlyDatabaseMoved = ResultCode(rawValue: 8 | 4 << 8)
    public static let cannotOpenIsDirectory = ResultCode(rawValue: 14 | 2 << 8)
    public static let constraintCheck = ResultCode(rawValue: 19 | 1 << 8)
    public static let constraintCommitHook = ResultCode(rawValue: 19 | 2 << 8)
    public static let constraintForeignKey = ResultCode(rawValue: 19 | 3 << 8)
    public static let constraintFunction = ResultCode(rawValue: 19 | 4 << 8)
    public static let constraintNotNull = ResultCode(rawValue: 19 | 5 << 8)
    public static let constraintPrimaryKey = ResultCode(rawValue: 19 | 6 << 8)
    public static let constraintTrigger = ResultCode(rawValue: 19 | 7 << 8)
    public static let constraintUnique = ResultCode(rawValue: 19 | 8 << 8)
    public static let constraintVirtualTable = ResultCode(rawValue: 19 | 9 << 8)
    public static let constraintRowID = ResultCode(rawValue: 19 | 10 << 8)
    public static let constraintDataType = ResultCode(rawValue: 19 | 12 << 8)

    /// Lets a code be a `catch` pattern: `catch ResultCode.busy` or `catch SQLiteError.busy`.
    /// Engines other than SQLite match through their ``DatabaseError/resultCode``.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? any DatabaseError else { return false }
        return pattern.matches(error.resultCode)
    }
}
