public import Foundation
public import SwiftDALConnection

/// An error reported by SQLite: the extended result code, SQLite's message, and the SQL.
///
/// The bound arguments are kept in ``arguments`` but left out of every default
/// rendering (``description``, ``debugDescription``, which Swift prints for an uncaught
/// error and `String(reflecting:)` uses, and `dump`/`Mirror`), since they may be
/// personal data; ask for them with ``descriptionIncludingArguments``.
///
/// For example:
///
/// ```swift
/// do {
///     try users.insert(user)
/// } catch let error as SQLiteError where error.constraintKind == .unique {
///     print("taken: \(error.message)")   // "UNIQUE constraint failed: users.email"
/// }
/// ```
public struct SQLiteError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The extended result code (`sqlite3_extended_errcode`); a foreign key's `RESTRICT`
    /// action, which SQLite reports as a trigger's failure (1811), reads as
    /// `SQLITE_CONSTRAINT_FOREIGNKEY` (787).
    public let code: ResultCode
    /// SQLite's message (`sqlite3_errmsg`), or the code's description when there is none.
    public let message: String
    /// The SQL that failed, when there is one.
    public let sql: String?
    /// The arguments bound to ``sql``, when there were any. Not part of ``description``.
    public let arguments: StatementArguments?
    /// For a statement of a batch (`insertRange`), its position in the batch: the index of
    /// the entity whose row failed; `nil` for an error outside a batch, and for one no item
    /// caused (a lost connection, a stopped call).
    public package(set) var batchIndex: Int?

    /// Creates an error. SwiftDAL creates these; you rarely need to.
    ///
    /// For example, `SQLiteError(code: .busy, message: "database is locked")`.
    public init(code: ResultCode, message: String, sql: String? = nil, arguments: StatementArguments? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    /// The primary result code (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`).
    public var primaryCode: ResultCode { code.primary }

    /// Which constraint failed, for `SQLITE_CONSTRAINT` errors; `nil` for any other error.
    public var constraintKind: ConstraintKind? {
        guard primaryCode == .constraint else { return nil }
        return ConstraintKind(code: code) ?? .other
    }

    /// The code, SQLite's message and the SQL, never the bound values (they may be personal data).
    public var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        if let batchIndex { text += " (item \(batchIndex) of a batch)" }
        return text
    }

    /// The same as ``description``: the bound values stay out of it.
    public var debugDescription: String { description }

    /// ``description`` followed by the bound values, for a debugging session that may
    /// show them (never a default rendering).
    ///
    /// For example, `logger.debug("\(error.descriptionIncludingArguments)")` in development.
    public var descriptionIncludingArguments: String {
        guard let arguments, !arguments.isEmpty else { return description }
        return description + " with arguments \(arguments)"
    }

    /// What `dump` and debuggers show: everything but the bound values.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["code": code, "message": message, "sql": sql as Any, "batchIndex": batchIndex as Any],
            displayStyle: .struct)
    }

    // Catch patterns, so that `catch SQLiteError.constraintUnique` reads naturally.
    /// Matches `SQLITE_BUSY` and every `SQLITE_BUSY_*`: `catch SQLiteError.busy`.
    public static let busy = ResultCode.busy
    /// Matches `SQLITE_LOCKED` and its extended codes.
    public static let locked = ResultCode.locked
    /// Matches `SQLITE_READONLY` and its extended codes: a write where only reads are allowed.
    public static let readOnly = ResultCode.readOnly
    /// Matches `SQLITE_CORRUPT` and its extended codes: a malformed database file.
    public static let corrupt = ResultCode.corrupt
    /// Matches `SQLITE_FULL`: the disk or the database's page limit is full.
    public static let full = ResultCode.full
    /// Matches `SQLITE_NOTADB`: the file is not a database.
    public static let notADatabase = ResultCode.notADatabase
    /// Matches every constraint failure (`SQLITE_CONSTRAINT` and each `SQLITE_CONSTRAINT_*`).
    public static let constraint = ResultCode.constraint
    /// Matches a failed `UNIQUE` constraint (SQLite's `SQLITE_CONSTRAINT_UNIQUE`, PostgreSQL's 23505).
    public static let constraintUnique = ResultCode.constraintUnique
    /// Matches a failed `PRIMARY KEY` constraint: a duplicate key.
    public static let constraintPrimaryKey = ResultCode.constraintPrimaryKey
    /// Matches a failed `NOT NULL` constraint (SQLite's `SQLITE_CONSTRAINT_NOTNULL`, PostgreSQL's 23502).
    public static let constraintNotNull = ResultCode.constraintNotNull
    /// Matches a failed `FOREIGN KEY` constraint (SQLite's `SQLITE_CONSTRAINT_FOREIGNKEY`, PostgreSQL's 23503).
    public static let constraintForeignKey = ResultCode.constraintForeignKey
    /// Matches a failed `CHECK` constraint (SQLite's `SQLITE_CONSTRAINT_CHECK`, PostgreSQL's 23514).
    public static let constraintCheck = ResultCode.constraintCheck
}

extension SQLiteError: DatabaseError {
    /// Always ``DatabaseEngine/sqlite``.
    public var engine: DatabaseEngine { .sqlite }

    /// The same as ``code``.
    public var resultCode: ResultCode { code }

    /// `SQLITE_BUSY` and `SQLITE_LOCKED` (and their extended codes).
    public var isRetryable: Bool { primaryCode == .busy || primaryCode == .locked }
}

extension SQLiteError: BatchPositionedError {}

extension SQLiteError: ValueRefusingError {
    /// `SQLITE_MISMATCH`: a value of the wrong type for an integer key or a `STRICT` column.
    package var refusesAValue: Bool { primaryCode == .mismatch }
}

extension SQLiteError: DetailedConstraintError {
    /// The constraint, table and columns SQLite's message names.
    package func violation(_ kind: ConstraintKind) -> ConstraintViolation {
        .parsing(sqliteMessage: message, kind: kind)
    }
}

extension ConstraintViolation {
    /// Reads SQLite's message: `UNIQUE constraint failed: t.a, t.b`, `NOT NULL constraint
    /// failed: t.a`, `CHECK constraint failed: name`.
    static func parsing(sqliteMessage message: String, kind: ConstraintKind) -> ConstraintViolation {
        guard let colon = message.range(of: "constraint failed: ") else {
            return ConstraintViolation(kind: kind, table: nil, columns: [], constraint: nil)
        }
        let rest = String(message[colon.upperBound...])
        if kind == .check || kind == .other {
            return ConstraintViolation(kind: kind, table: nil, columns: [], constraint: rest)
        }
        var table: String?
        var columns = [String]()
        for part in rest.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            // `table.column`: the table's name has no dot in SQLite's message form.
            guard let dot = name.firstIndex(of: ".") else {
                columns.append(name)
                continue
            }
            table = table ?? String(name[..<dot])
            columns.append(String(name[name.index(after: dot)...]))
        }
        return ConstraintViolation(kind: kind, table: table, columns: columns, constraint: nil)
    }
}

extension SQLiteError: LocalizedError {
    /// The same as ``description``, for code that logs `error.localizedDescription`
    /// (without it, Foundation's generic "The operation could not be completed").
    public var errorDescription: String? { description }
}
