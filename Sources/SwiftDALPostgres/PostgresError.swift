public import Foundation
public import SwiftDALConnection

/// An error reported by PostgreSQL (or by libpq, for a connection that failed): the
/// SQLSTATE, the server's message, and the schema, table, column and constraint it names.
///
/// It is a ``SwiftDAL/DatabaseError``, so the `catch` patterns written for SQLite work unchanged:
/// `catch ResultCode.constraintUnique` (or `SQLiteError.constraintUnique`) catches SQLSTATE 23505, `.constraintNotNull`
/// 23502, `.constraintForeignKey` 23503, `.constraintCheck` 23514. A serialization failure
/// (40001) or a deadlock (40P01) ``isRetryable``: run the transaction again.
///
/// For example:
///
/// ```swift
/// do {
///     try users.insert(user)
/// } catch let error as PostgresError where error.constraintKind == .unique {
///     print(error.constraint ?? "", error.table ?? "", error.column ?? "")
/// }
/// ```
public struct PostgresError: DatabaseError, CustomDebugStringConvertible, CustomReflectable {
    /// The five-character SQLSTATE (`"23505"`); `"08006"` when the connection failed
    /// without the server saying why.
    public let sqlState: String
    /// The server's primary message (or libpq's, for a connection failure), with the values
    /// it quotes left out: a data exception (class 22) quotes the value it refused
    /// (`invalid input syntax for type bigint: "…"`), which may be a card number or a
    /// password. ``serverMessage`` has the server's text as it came.
    public let message: String
    /// The server's primary message as it came, values included: for a deliberate look
    /// while debugging, never for logs. Not in ``description``, `dump` or the observer's
    /// events.
    public let serverMessage: String?
    /// The server's detail, when it gives one (it may quote values: not in ``description``
    /// or `dump`).
    public let detail: String?
    /// The server's hint, when it gives one.
    public let hint: String?
    /// The schema of the object involved, when the server names it.
    public let schema: String?
    /// The table involved, when the server names it.
    public let table: String?
    /// The column involved, when the server names it (not-null violations).
    public let column: String?
    /// The constraint involved, when the server names it.
    public let constraint: String?
    /// The SQL that failed, as sent (numbered parameters, never values).
    public let sql: String?
    /// For a statement of a batch (`insertRange`), its position in the batch: the index of
    /// the entity whose row failed; `nil` for an error outside a batch, and for one no item
    /// caused (a lost connection, a stopped call).
    public package(set) var batchIndex: Int?
    /// Whether the server sent the error (an answer: the statement it answered failed), or
    /// libpq made it up for a connection that went away without an answer.
    var isFromServer = true
    /// Whether the statement left the client: `false` for one refused before it was sent
    /// (its connection had already broken), which therefore changed nothing.
    var wasSent = true
    /// Whether the connection could not be opened because the server refused its
    /// credentials or its database (a wrong password, an unknown role or database, no
    /// `pg_hba.conf` entry): a connection failure to the pool, and category
    /// ``DatabaseErrorCategory/permission`` to the caller, who must fix the configuration
    /// rather than retry.
    package var isRefusedLogin = false

    /// Creates an error. SwiftDAL creates these; you rarely need to.
    ///
    /// For example, `PostgresError(sqlState: "40001", message: "could not serialize access")`.
    public init(
        sqlState: String, message: String, detail: String? = nil, hint: String? = nil, schema: String? = nil,
        table: String? = nil, column: String? = nil, constraint: String? = nil, sql: String? = nil
    ) {
        self.sqlState = sqlState
        self.message = Self.redacted(message, sqlState: sqlState)
        serverMessage = message
        self.detail = detail
        self.hint = hint
        self.schema = schema
        self.table = table
        self.column = column
        self.constraint = constraint
        self.sql = sql
    }

    /// Always ``DatabaseEngine/postgres``.
    public var engine: DatabaseEngine { .postgres }

    /// The SQLSTATE's class: its first two characters (`"23"`, integrity constraint violation).
    public var sqlStateClass: String { String(sqlState.prefix(2)) }

    /// SQLite's nearest result code, for the shared `catch` patterns.
    public var resultCode: ResultCode {
        switch sqlState {
        case "23505": constraint?.hasSuffix("_pkey") == true ? .constraintPrimaryKey : .constraintUnique
        case "23502": .constraintNotNull
        case "23503": .constraintForeignKey
        case "23514": .constraintCheck
        case "40001": .busySnapshot
        case "40P01", "55P03", "53300": .busy
        case "57014": .interrupt
        case "25P03": .cannotOpen
        case "25006": .readOnly
        case "53100": .full
        case "53200": .noMemory
        case "22001": .tooBig
        default:
            switch sqlStateClass {
            case "23": .constraint
            case "08", "57": .cannotOpen
            case "22": .mismatch
            case "42": .error
            default: .error
            }
        }
    }

    /// The category of the SQLSTATE: class 23 constraints; `40001`/`40P01` (serialization
    /// failure, deadlock) a conflict; `55P03` (lock not available) busy; class 08, the
    /// shutdowns of class 57 and the session timeouts that end the connection (`25P03`
    /// idle in transaction, `57P05` idle session) the connection; `57014` (canceled)
    /// interrupted; `25006` read
    /// only; class 42 an invalid statement but `42501` (insufficient privilege); class 22
    /// an invalid value; class 53 resources; class 28 (authorization) permission.
    public var category: DatabaseErrorCategory {
        if isRefusedLogin { return .permission }
        switch sqlState {
        case "40001", "40P01": return .conflict
        case "55P03": return .busy
        case "57014": return .interrupted
        case "25006": return .readOnly
        case "42501": return .permission
        case "57P01", "57P02", "57P03", "25P03", "57P05": return .connection
        default: break
        }
        switch sqlStateClass {
        case "23": return .constraint
        case "08": return .connection
        case "42": return .invalidStatement
        case "22": return .invalidValue
        case "53": return .resourceExhausted
        case "28": return .permission
        case "XX": return sqlState == "XX001" || sqlState == "XX002" ? .corrupt : .other
        default: return .other
        }
    }

    /// Which constraint failed, for integrity constraint violations (class 23).
    public var constraintKind: ConstraintKind? {
        guard sqlStateClass == "23" else { return nil }
        return ConstraintKind(code: resultCode) ?? .other
    }

    /// A serialization failure (40001) or a deadlock (40P01), a lock not available
    /// (55P03) or too many connections (53300): the same work may succeed if run again.
    public var isRetryable: Bool { ["40001", "40P01", "55P03", "53300"].contains(sqlState) }

    /// The connection failed, the server is going away (class 08, 57P01–57P03) or it ended
    /// the session for a timeout (25P03 idle in transaction, 57P05 idle session): the
    /// connection cannot be used again, and a pool replaces it.
    public var isConnectionFailure: Bool {
        sqlStateClass == "08" || ["57P01", "57P02", "57P03", "25P03", "57P05"].contains(sqlState)
    }

    /// A session the server ended because its client left it idle too long (25P03 in a
    /// transaction, 57P05 outside one): the client's doing, not the server's health.
    var isIdleSessionTimeout: Bool { sqlState == "25P03" || sqlState == "57P05" }

    /// "cached plan must not change result type" (0A000): another session's schema change
    /// altered a prepared statement's result columns.
    var isStalePlan: Bool { Self.isStalePlan(sqlState: sqlState, message: message) }

    /// Whether an error of `sqlState` saying `message` is "cached plan must not change
    /// result type" (read from a result, or from an error made of one).
    static func isStalePlan(sqlState: String?, message: String) -> Bool {
        sqlState == "0A000" && message.contains("cached plan")
    }

    /// The SQLSTATE, the message, the table, column and constraint, the server's hint
    /// for a column, table or function it did not find (42703, 42P01, 42883: such a hint
    /// names what it did find), and the SQL; never the detail, which may quote values.
    public var description: String {
        var text = "PostgreSQL error \(sqlState): \(message)"
        if let hint, Self.namesOnlyHintStates.contains(sqlState) { text += " (\(hint))" }
        var names = [String]()
        if let table { names.append("table \(table)") }
        if let column { names.append("column \(column)") }
        if let constraint { names.append("constraint \(constraint)") }
        if !names.isEmpty { text += " [" + names.joined(separator: ", ") + "]" }
        if let sql { text += " — while executing `\(sql)`" }
        if let batchIndex { text += " (item \(batchIndex) of a batch)" }
        return text
    }

    /// The SQLSTATEs of a name the server did not find (a column, a table, a function):
    /// their hint names what it did find, such as `Perhaps you meant to reference the column
    /// "products.priceCents".` for an unquoted `priceCents`, which PostgreSQL reads as
    /// `pricecents`; and of a feature the statement cannot use there (0A000), whose hint
    /// says what would allow it, such as `You need an unconditional ON INSERT DO INSTEAD
    /// rule with a RETURNING clause.` for `insert2` on a table with a conditional rule
    /// (Sakila's `payment`). They hold names only, so `description` shows them.
    static let namesOnlyHintStates: Set<String> = ["42703", "42P01", "42883", "0A000"]

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the fields of ``description`` and the hint; never the
    /// detail or ``serverMessage``, which may quote values.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "sqlState": sqlState, "message": message, "hint": hint as Any, "schema": schema as Any,
                "table": table as Any, "column": column as Any, "constraint": constraint as Any, "sql": sql as Any,
                "batchIndex": batchIndex as Any
            ], displayStyle: .struct)
    }

    /// `message` with what may quote a value left out: data exceptions (class 22,
    /// `invalid input syntax for type uuid: "…"`, `value "…" is out of range`) quote the
    /// value they refused, and spell characters of it as bytes (`0xe2 0x82 0xac`). Other
    /// messages quote names (a table, a constraint), which are kept.
    static func redacted(_ message: String, sqlState: String) -> String {
        guard sqlState.hasPrefix("22") else { return message }
        return redactingQuotedParts(message)
    }

    /// `text` with everything from its first double quote to its last one replaced by
    /// `"…"` (a quoted value may hold quotes of its own, which the server does not escape:
    /// the quotes cannot be paired), and each run of bytes spelled `0x..` by `…`.
    static func redactingQuotedParts(_ text: String) -> String {
        var kept = text
        // By scalar, not by Character: a value that starts with a combining mark makes one
        // Character of it and its opening quote, which `firstIndex(of: "\"")` does not find.
        let scalars = text.unicodeScalars
        if let first = scalars.firstIndex(of: "\""), let last = scalars.lastIndex(of: "\"") {
            let end = last > first ? scalars.index(after: last) : scalars.endIndex
            kept = String(scalars[..<first]) + "\"…\"" + String(scalars[end...])
        }
        return redactingBytes(kept)
    }

    /// `text` with each run of `0x..` bytes (`0xe2 0x82 0xac`) replaced by `…`.
    private static func redactingBytes(_ text: String) -> String {
        let bytes = Array(text.utf8)
        func isHex(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }
        func isByte(at index: Int) -> Bool {
            index + 3 < bytes.count && bytes[index] == 0x30 && bytes[index + 1] == 0x78
                && isHex(bytes[index + 2]) && isHex(bytes[index + 3])
        }
        var result = [UInt8]()
        var index = 0
        while index < bytes.count {
            guard isByte(at: index) else {
                result.append(bytes[index])
                index += 1
                continue
            }
            result += Array("…".utf8)
            index += 4
            while index + 4 < bytes.count, bytes[index] == 0x20, isByte(at: index + 1) { index += 5 }
        }
        return String(decoding: result, as: UTF8.self)
    }
}

extension PostgresError: DetailedConstraintError {
    /// The table and constraint the server names; the columns of a not-null violation
    /// from its column field, those of a unique or foreign key from the detail's
    /// `Key (a, b)=(…)` (the values are left out).
    package func violation(_ kind: ConstraintKind) -> ConstraintViolation {
        var columns = [String]()
        if let column {
            columns = [column]
        } else if let detail {
            columns = Self.keyColumns(inDetail: detail)
        }
        return ConstraintViolation(kind: kind, table: table, columns: columns, constraint: constraint)
    }

    /// The names between `Key (` and `)=(`, split at top-level commas; quoted names are
    /// unquoted; an expression (`lower(email)`) is kept as written.
    static func keyColumns(inDetail detail: String) -> [String] {
        guard let start = detail.range(of: "Key (") else { return [] }
        var names = [String]()
        var current = ""
        var depth = 0
        var inQuotes = false
        var index = start.upperBound
        while index < detail.endIndex {
            let character = detail[index]
            index = detail.index(after: index)
            if inQuotes {
                if character == "\"" {
                    if index < detail.endIndex, detail[index] == "\"" {
                        current.append("\"")
                        index = detail.index(after: index)
                    } else {
                        inQuotes = false
                    }
                } else {
                    current.append(character)
                }
                continue
            }
            switch character {
            case "\"" where current.allSatisfy({ $0 == " " }):
                current = ""
                inQuotes = true
            case "(":
                depth += 1
                current.append(character)
            case ")" where depth == 0:
                names.append(trimmed(current))
                return names.allSatisfy { !$0.isEmpty } ? names : []
            case ")":
                depth -= 1
                current.append(character)
            case "," where depth == 0:
                names.append(trimmed(current))
                current = ""
            default:
                current.append(character)
            }
        }
        return []
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
extension PostgresError: BatchPositionedError {}

extension PostgresError: ValueRefusingError {
    /// A value refused for its type: too long (22001), out of range (22003), a date or
    /// time badly written or out of range (22007, 22008), text not of the type (22P02),
    /// a character the encoding lacks (22021).
    package var refusesAValue: Bool { ["22001", "22003", "22007", "22008", "22P02", "22021"].contains(sqlState) }
}

extension PostgresError: LocalizedError {
    /// The same as ``description``, for code that logs `error.localizedDescription`
    /// (without it, Foundation's generic "The operation could not be completed").
    public var errorDescription: String? { description }
}
