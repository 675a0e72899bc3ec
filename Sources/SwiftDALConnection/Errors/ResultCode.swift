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

    /// A code from its numeric value (`sqlite3_extended_errcode`'s, or a `SQLITE_*` macro's).
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// Whether this is a primary code (no extended bits).
    public var isPrimary: Bool { rawValue & ~0xFF == 0 }

    /// The code in English, after its primary code (an extended code reads as its family),
    /// with its number.
    ///
    /// For example, `ResultCode.constraintUnique.description` is `"constraint failed (code 2067)"`.
    public var description: String {
        // SQLITE_ABORT_ROLLBACK, the one extended code SQLite describes apart from its family.
        let meaning = rawValue == 4 | 2 << 8 ? "abort due to ROLLBACK" : Self.meaning(of: rawValue & 0xFF)
        return "\(meaning) (code \(rawValue))"
    }

    /// What primary code `code` means, in SQLite's words (`sqlite3_errstr`'s; the codes are
    /// SQLite's, as sqlite3.h numbers them, and every engine maps its errors onto them).
    private static func meaning(of code: Int32) -> String {
        switch code {
        case 0: "not an error"
        case 1: "SQL logic error"
        case 2: "internal error"
        case 3: "access permission denied"
        case 4: "query aborted"
        case 5: "database is locked"
        case 6: "database table is locked"
        case 7: "out of memory"
        case 8: "attempt to write a readonly database"
        case 9: "interrupted"
        case 10: "disk I/O error"
        case 11: "database disk image is malformed"
        case 12: "unknown operation"
        case 13: "database or disk is full"
        case 14: "unable to open database file"
        case 15: "locking protocol"
        case 17: "database schema has changed"
        case 18: "string or blob too big"
        case 19: "constraint failed"
        case 20: "datatype mismatch"
        case 21: "bad parameter or other API misuse"
        case 23: "authorization denied"
        case 25: "column index out of range"
        case 26: "file is not a database"
        case 27: "notification message"
        case 28: "warning message"
        case 100: "another row available"
        case 101: "no more rows available"
        default: "unknown error"
        }
    }

    /// Whether `code` is this code, or belongs to this primary code's family.
    public func matches(_ code: ResultCode) -> Bool {
        isPrimary ? code.primary == self : code == self
    }

    // Primary codes, named after SQLite's SQLITE_* macros (sqlite3.h documents each).
    /// `SQLITE_OK` (0): success.
    public static let ok = ResultCode(rawValue: 0)
    /// `SQLITE_ERROR` (1): a generic error, such as an SQL syntax error or a missing table.
    public static let error = ResultCode(rawValue: 1)
    /// `SQLITE_INTERNAL` (2): an internal malfunction of SQLite.
    public static let `internal` = ResultCode(rawValue: 2)
    /// `SQLITE_PERM` (3): the file's access mode does not allow the operation.
    public static let permission = ResultCode(rawValue: 3)
    /// `SQLITE_ABORT` (4): the operation was aborted, by a rollback or a callback.
    public static let abort = ResultCode(rawValue: 4)
    /// `SQLITE_BUSY` (5): another connection holds a lock on the database file; as a pattern, every `SQLITE_BUSY_*`.
    public static let busy = ResultCode(rawValue: 5)
    /// `SQLITE_LOCKED` (6): a conflict inside the same connection (or its shared cache).
    public static let locked = ResultCode(rawValue: 6)
    /// `SQLITE_NOMEM` (7): an allocation failed.
    public static let noMemory = ResultCode(rawValue: 7)
    /// `SQLITE_READONLY` (8): a write to a database opened read-only (a pool's readers, a `read` access), or to a read-only file.
    public static let readOnly = ResultCode(rawValue: 8)
    /// `SQLITE_INTERRUPT` (9): the statement was interrupted (a cancelled task, a call past its time limit).
    public static let interrupt = ResultCode(rawValue: 9)
    /// `SQLITE_IOERR` (10): the operating system reported an I/O error; as a pattern, every `SQLITE_IOERR_*`.
    public static let ioError = ResultCode(rawValue: 10)
    /// `SQLITE_CORRUPT` (11): the database file is malformed.
    public static let corrupt = ResultCode(rawValue: 11)
    /// `SQLITE_NOTFOUND` (12): an unknown opcode in a file control, or a missing VFS.
    public static let notFound = ResultCode(rawValue: 12)
    /// `SQLITE_FULL` (13): the disk, or the database's `max_page_count`, is full.
    public static let full = ResultCode(rawValue: 13)
    /// `SQLITE_CANTOPEN` (14): the database file could not be opened.
    public static let cannotOpen = ResultCode(rawValue: 14)
    /// `SQLITE_PROTOCOL` (15): a problem with SQLite's file-locking protocol.
    public static let `protocol` = ResultCode(rawValue: 15)
    /// `SQLITE_SCHEMA` (17): the schema changed under a prepared statement.
    public static let schema = ResultCode(rawValue: 17)
    /// `SQLITE_TOOBIG` (18): a string or blob over the length limit (``Configuration/maximumValueLength``).
    public static let tooBig = ResultCode(rawValue: 18)
    /// `SQLITE_CONSTRAINT` (19): a constraint failed; as a pattern, every `SQLITE_CONSTRAINT_*`.
    public static let constraint = ResultCode(rawValue: 19)
    /// `SQLITE_MISMATCH` (20): a data type mismatch, such as a non-integer into an `INTEGER PRIMARY KEY`.
    public static let mismatch = ResultCode(rawValue: 20)
    /// `SQLITE_MISUSE` (21): the SQLite API was used incorrectly.
    public static let misuse = ResultCode(rawValue: 21)
    /// `SQLITE_RANGE` (25): a parameter index out of range.
    public static let range = ResultCode(rawValue: 25)
    /// `SQLITE_NOTADB` (26): the file is not a database.
    public static let notADatabase = ResultCode(rawValue: 26)
    /// `SQLITE_ROW` (100): `sqlite3_step` has another row ready (a step result, not an error).
    public static let row = ResultCode(rawValue: 100)
    /// `SQLITE_DONE` (101): `sqlite3_step` finished (a step result, not an error).
    public static let done = ResultCode(rawValue: 101)

    // Extended codes: C macros that Swift does not import, defined from sqlite3.h.
    /// `SQLITE_BUSY_RECOVERY`: another connection is recovering a WAL database.
    public static let busyRecovery = ResultCode(rawValue: 5 | 1 << 8)
    /// `SQLITE_BUSY_SNAPSHOT`: a read transaction's snapshot is too old to write from (why writes begin `IMMEDIATE`).
    public static let busySnapshot = ResultCode(rawValue: 5 | 2 << 8)
    /// `SQLITE_BUSY_TIMEOUT`: a blocking lock wait timed out.
    public static let busyTimeout = ResultCode(rawValue: 5 | 3 << 8)
    /// `SQLITE_IOERR_READ`: a read from the file failed.
    public static let ioErrorRead = ResultCode(rawValue: 10 | 1 << 8)
    /// `SQLITE_IOERR_SHORT_READ`: a read returned fewer bytes than asked.
    public static let ioErrorShortRead = ResultCode(rawValue: 10 | 2 << 8)
    /// `SQLITE_IOERR_WRITE`: a write to the file failed.
    public static let ioErrorWrite = ResultCode(rawValue: 10 | 3 << 8)
    /// `SQLITE_IOERR_FSYNC`: flushing the file to storage failed.
    public static let ioErrorFsync = ResultCode(rawValue: 10 | 4 << 8)
    /// `SQLITE_IOERR_TRUNCATE`: truncating the file failed.
    public static let ioErrorTruncate = ResultCode(rawValue: 10 | 6 << 8)
    /// `SQLITE_READONLY_DBMOVED`: the database file was moved or deleted while open.
    public static let readOnlyDatabaseMoved = ResultCode(rawValue: 8 | 4 << 8)
    /// `SQLITE_CANTOPEN_ISDIR`: the path is a directory.
    public static let cannotOpenIsDirectory = ResultCode(rawValue: 14 | 2 << 8)
    /// `SQLITE_CONSTRAINT_CHECK`: a `CHECK` constraint failed.
    public static let constraintCheck = ResultCode(rawValue: 19 | 1 << 8)
    /// `SQLITE_CONSTRAINT_COMMITHOOK`: a commit hook turned the commit into a rollback.
    public static let constraintCommitHook = ResultCode(rawValue: 19 | 2 << 8)
    /// `SQLITE_CONSTRAINT_FOREIGNKEY`: a `FOREIGN KEY` constraint failed, whatever its
    /// action (SQLite reports a `RESTRICT` action's failure as a trigger's; SwiftDAL reports
    /// it with this code).
    public static let constraintForeignKey = ResultCode(rawValue: 19 | 3 << 8)
    /// `SQLITE_CONSTRAINT_FUNCTION`: a constraint raised by an extension function.
    public static let constraintFunction = ResultCode(rawValue: 19 | 4 << 8)
    /// `SQLITE_CONSTRAINT_NOTNULL`: a `NOT NULL` constraint failed.
    public static let constraintNotNull = ResultCode(rawValue: 19 | 5 << 8)
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`: a `PRIMARY KEY` constraint failed (a duplicate key).
    public static let constraintPrimaryKey = ResultCode(rawValue: 19 | 6 << 8)
    /// `SQLITE_CONSTRAINT_TRIGGER`: a trigger's `RAISE` failed the statement (a foreign
    /// key's `RESTRICT` action is reported as ``constraintForeignKey``).
    public static let constraintTrigger = ResultCode(rawValue: 19 | 7 << 8)
    /// `SQLITE_CONSTRAINT_UNIQUE`: a `UNIQUE` constraint failed (a duplicate value).
    public static let constraintUnique = ResultCode(rawValue: 19 | 8 << 8)
    /// `SQLITE_CONSTRAINT_VTAB`: a virtual table's constraint failed.
    public static let constraintVirtualTable = ResultCode(rawValue: 19 | 9 << 8)
    /// `SQLITE_CONSTRAINT_ROWID`: a rowid is not unique.
    public static let constraintRowID = ResultCode(rawValue: 19 | 10 << 8)
    /// `SQLITE_CONSTRAINT_DATATYPE`: a value of the wrong type in a `STRICT` table.
    public static let constraintDataType = ResultCode(rawValue: 19 | 12 << 8)

    /// Lets a code be a `catch` pattern: `catch ResultCode.busy` or `catch SQLiteError.busy`.
    /// Engines other than SQLite match through their ``DatabaseError/resultCode``.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? any DatabaseError else { return false }
        return pattern.matches(error.resultCode)
    }
}
