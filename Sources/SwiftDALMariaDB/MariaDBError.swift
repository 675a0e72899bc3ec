public import Foundation
public import SwiftDALConnection

/// An error reported by MariaDB (or by Connector/C, for a connection that failed): the
/// server's error number, its SQLSTATE and message, and the table, column and constraint
/// the message names.
///
/// It is a ``SwiftDAL/DatabaseError``, so the `catch` patterns written for SQLite work
/// unchanged: `catch ResultCode.constraintUnique` (or `SQLiteError.constraintUnique`) catches a
/// duplicate key (1062, 1586), `.constraintForeignKey` 1451 and 1452, `.constraintNotNull`
/// 1048 (and 1364, a NOT NULL column left out), `.constraintCheck` 4025 (and MySQL's 3819). A deadlock (1213) or a
/// lock wait timeout (1205) ``isRetryable``: run the transaction again.
///
/// The message never quotes a value: MariaDB quotes the duplicate key (`Duplicate entry
/// '…' for key 'email'`) and refused values (`Incorrect integer value: '…'`), which are
/// left out here.
///
/// For example:
///
/// ```swift
/// do {
///     try users.insert(user)
/// } catch let error as MariaDBError where error.constraintKind == .unique {
///     print(error.constraint ?? "")    // the key's name: "email"
/// }
/// ```
public struct MariaDBError: DatabaseError, CustomDebugStringConvertible, CustomReflectable {
    /// The error number (`1062`, duplicate entry; `2013`, lost connection). Numbers from
    /// 2000 to 2999 are Connector/C's own (the client's), the others the server's.
    public let code: Int
    /// The five-character SQLSTATE (`"23000"`); `"HY000"` when there is none more precise.
    public let sqlState: String
    /// The message, with the values it quotes left out.
    public let message: String
    /// The table the message names, or for a duplicate key or a missing value (whose
    /// messages name none) the table the failing statement writes to.
    public package(set) var table: String?
    /// The column the message names (not-null violations, foreign keys).
    public let column: String?
    /// The columns of the violated constraint: the column the message names, or for a
    /// duplicate key the key's columns, read from the catalog (`[]` when unknown).
    public package(set) var columns: [String]
    /// The constraint (or, for a duplicate, the key) the message names.
    public let constraint: String?
    /// The SQL that failed, as SwiftDAL wrote it (placeholders, never values).
    public let sql: String?
    /// For a statement of a batch (`insertRange`), its position in the batch; `nil` for an
    /// error outside a batch, and for one no item caused (a lost connection, a stopped call).
    public package(set) var batchIndex: Int?
    /// Whether the statement left the client: `false` for one refused before it was sent
    /// (its connection had already broken), which therefore changed nothing.
    var wasSent = true

    /// Creates an error. SwiftDAL creates these; you rarely need to.
    ///
    /// For example, `MariaDBError(code: 1213, sqlState: "40001", message: "Deadlock found")`.
    public init(code: Int, sqlState: String, message: String, sql: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.message = Self.redacted(message, code: code, sqlState: sqlState)
        self.sql = sql
        (table, column, constraint) = Self.names(in: message, code: code)
        columns = column.map { [$0] } ?? []
    }

    /// The table `sql` writes to, as SwiftDAL writes its statements (`INSERT INTO "t"`,
    /// `UPDATE "t"`, `DELETE FROM "t"`, `REPLACE INTO "t"`; a qualified name's last part).
    static func targetTable(of sql: String) -> String? {
        var rest = Substring(sql.drop { $0.isWhitespace })
        let upper = rest.prefix(24).uppercased()
        guard
            let verb = ["INSERT INTO ", "INSERT IGNORE INTO ", "REPLACE INTO ", "UPDATE ", "DELETE FROM "].first(
                where: { upper.hasPrefix($0) })
        else { return nil }
        rest = rest.dropFirst(verb.count).drop { $0.isWhitespace }
        var name: String?
        while let first = rest.first {
            var part = ""
            if first == "\"" || first == "`" {
                rest = rest.dropFirst()
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if character == first {
                        guard rest.first == first else { break }
                        rest = rest.dropFirst()
                    }
                    part.append(character)
                }
            } else {
                let word = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }
                guard !word.isEmpty else { break }
                part = String(word)
                rest = rest.dropFirst(word.count)
            }
            name = part
            guard rest.first == "." else { break }
            rest = rest.dropFirst()
        }
        return name
    }

    /// Always ``DatabaseEngine/mariadb``.
    public var engine: DatabaseEngine { .mariadb }

    /// Whether the server sent the error (an answer: the statement failed), rather than
    /// Connector/C for a connection that went away or could not be made.
    public var isFromServer: Bool { !(2000..<3000).contains(code) }

    /// The category of the error number: constraints (1062, 1586, 1451, 1452, 1216, 1217,
    /// 1048, 1364, 3819, 4025), a deadlock (1213) or a write conflict (1020) a conflict, a
    /// lock wait timeout (1205)
    /// busy, every ``isConnectionFailure`` (Connector/C's lost or refused connections, a
    /// server shutting down, a session killed or timed out) the connection, a stopped
    /// statement (1317, 1969, 3024)
    /// interrupted, read-only refusals (1792, 1290, 1836), statements that cannot run
    /// (1064, 1146, 1054, 1049, 1305, 1149), values (1264, 1265, 1366, 1292, 1406, 1690,
    /// 1365, 1411), resources (1114, 1040, 1041, 1021, 1037, 1038) and privileges (1044,
    /// 1045, 1142, 1143, 1227, 1370).
    public var category: DatabaseErrorCategory {
        if isConnectionFailure { return .connection }
        return switch code {
        case 1062, 1586, 1451, 1452, 1216, 1217, 1048, 1364, 3819, 4025: .constraint
        case 1213, 1020: .conflict
        case 1205: .busy
        case 1317, 1969, 3024: .interrupted
        case 1792, 1290, 1836: .readOnly
        case 1064, 1146, 1054, 1049, 1305, 1149: .invalidStatement
        case 1264, 1265, 1366, 1292, 1406, 1690, 1365, 1411: .invalidValue
        case 1114, 1040, 1041, 1021, 1037, 1038: .resourceExhausted
        case 1044, 1045, 1142, 1143, 1227, 1370: .permission
        default: .other
        }
    }

    /// SQLite's nearest result code, for the shared `catch` patterns.
    public var resultCode: ResultCode {
        switch code {
        case 1062, 1586: constraint == "PRIMARY" ? .constraintPrimaryKey : .constraintUnique
        case 1451, 1452, 1216, 1217: .constraintForeignKey
        case 1048, 1364: .constraintNotNull
        case 3819, 4025: .constraintCheck
        case 1213, 1020: .busySnapshot
        case 1205, 1040: .busy
        case 1317, 1969, 3024: .interrupt
        case 1792, 1290: .readOnly
        case 1114: .full
        case 1037, 1038: .noMemory
        case 1406, 1153: .tooBig
        case 1264, 1265, 1366, 1292, 1411: .mismatch
        default: isConnectionFailure ? .cannotOpen : .error
        }
    }

    /// Which constraint failed, for constraint violations; `nil` otherwise.
    public var constraintKind: ConstraintKind? {
        ConstraintKind(code: resultCode)
    }

    /// A deadlock (1213), a lock wait timeout (1205), a write conflict under
    /// `innodb_snapshot_isolation` (1020, "Record has changed since last read") or too many
    /// connections (1040): the same work may succeed if run again (after a deadlock or a
    /// write conflict the server has rolled the transaction back; after a lock wait timeout
    /// only the statement, unless `innodb_rollback_on_timeout` is on).
    public var isRetryable: Bool { [1213, 1205, 1020, 1040].contains(code) }

    /// The connection failed, or the server ended the session: the connection cannot be
    /// used again, and a pool replaces it. The client's connection errors (2002 cannot
    /// connect, 2006 server gone away, 2013 lost connection…), a server shutting down
    /// (1053), a session killed (1927) or timed out while idle (4031).
    public var isConnectionFailure: Bool {
        [
            2001, 2002, 2003, 2004, 2005, 2006, 2009, 2011, 2012, 2013, 2024, 2025, 2026, 2048, 2055, 1053, 1927, 4031,
            1152
        ]
        .contains(code)
    }

    /// The number, SQLSTATE, message, the names, and the SQL; never a value.
    public var description: String {
        var text = "MariaDB error \(code) (\(sqlState)): \(message)"
        var names = [String]()
        if let table { names.append("table \(table)") }
        if let column { names.append("column \(column)") }
        if let constraint { names.append("constraint \(constraint)") }
        if !names.isEmpty { text += " [" + names.joined(separator: ", ") + "]" }
        if let sql { text += " — while executing `\(sql)`" }
        if let batchIndex { text += " (item \(batchIndex) of a batch)" }
        return text
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the fields of ``description``.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "code": code, "sqlState": sqlState, "message": message, "table": table as Any,
                "column": column as Any, "constraint": constraint as Any, "sql": sql as Any,
                "batchIndex": batchIndex as Any
            ], displayStyle: .struct)
    }

    // MARK: Reading the message

    /// `message` without the values it quotes: a duplicate entry's key value, and the
    /// single-quoted parts of data errors (SQLSTATE class 22 and the conversions of
    /// strict mode), which quote the value refused. Names are quoted with backticks, or
    /// follow `key`/`column`, and are kept.
    static func redacted(_ message: String, code: Int, sqlState: String) -> String {
        switch code {
        case 1062, 1586:
            // Duplicate entry '<value>' for key '<name>'
            guard let (value, _) = duplicateEntryParts(of: message) else { return redactingQuotedParts(message) }
            return message[..<value.lowerBound] + "…" + message[value.upperBound...]
        case 1264, 1265, 1406:
            // Out of range value / Data truncated / Data too long for column '<name>' at row
            // n: the quoted part is the column's name, the value is not in the message.
            return message
        case 1366, 1292, 1411, 1367, 1918:
            return redactingQuotedParts(message)
        default:
            return sqlState.hasPrefix("22") ? redactingQuotedParts(message) : message
        }
    }

    /// Where a duplicate entry's value lies in `message` (`Duplicate entry '<value>' for key
    /// '<name>'`), and the key's name. Read from the end: the value is the client's and
    /// may itself hold `' for key '` (it is never taken for the key, nor left in the text).
    static func duplicateEntryParts(of message: String) -> (value: Range<String.Index>, key: String)? {
        guard let start = message.range(of: "entry '"),
            let end = message.range(of: "' for key '", options: .backwards, range: start.upperBound..<message.endIndex),
            let last = message.lastIndex(of: "'"), last >= end.upperBound
        else { return nil }
        return (start.upperBound..<end.lowerBound, String(message[end.upperBound..<last]))
    }

    /// `text` with the inside of every single-quoted part replaced by `…`.
    static func redactingQuotedParts(_ text: String) -> String {
        // By scalar, not by Character: a value that starts with a combining mark makes one
        // Character of it and its opening quote, which would not be seen as a quote.
        var result = String.UnicodeScalarView()
        var inQuotes = false
        for scalar in text.unicodeScalars {
            if scalar == "'" {
                if inQuotes { result.append("…") }
                inQuotes.toggle()
                result.append(scalar)
            } else if !inQuotes {
                result.append(scalar)
            }
        }
        if inQuotes { result.append("…") }
        return String(result)
    }

    /// The table, column and constraint the message of error `code` names.
    static func names(in message: String, code: Int) -> (table: String?, column: String?, constraint: String?) {
        switch code {
        case 1062, 1586:
            // … for key 'email' (MySQL 8: 'users.email')
            guard let (_, key) = duplicateEntryParts(of: message) else { return (nil, nil, nil) }
            if let dot = key.lastIndex(of: ".") {
                return (String(key[..<dot]), nil, String(key[key.index(after: dot)...]))
            }
            return (nil, nil, key)
        case 1451, 1452:
            // … fails (`db`.`child`, CONSTRAINT `fk` FOREIGN KEY (`parent_id`) REFERENCES `parent` (`id`))
            // (names in double quotes under ANSI_QUOTES, as SwiftDAL's sessions run)
            let table = name(in: message, afterQualifier: true)
            let constraint = name(in: message, after: "CONSTRAINT ")
            let column = name(in: message, after: "FOREIGN KEY (")
            return (table, column, constraint)
        case 1048, 1364:
            // Column 'name' cannot be null; Field 'name' doesn't have a default value
            return (
                nil,
                quoted(in: message, after: "Column ", quote: "'") ?? quoted(in: message, after: "Field ", quote: "'"),
                nil
            )
        case 4025:
            // CONSTRAINT `t.positive` failed for `db`.`t`
            let table = quoted(in: message, after: "`.", quote: "`")
            guard var constraint = quoted(in: message, after: "CONSTRAINT ", quote: "`") else {
                return (table, nil, nil)
            }
            if let table, constraint.hasPrefix(table + ".") { constraint.removeFirst(table.count + 1) }
            return (table, nil, constraint)
        case 1264, 1265, 1406:
            // Data too long for column 'email' at row 1
            return (nil, quoted(in: message, after: "column ", quote: "'"), nil)
        case 3819:
            // Check constraint 'name' is violated.
            return (nil, nil, quoted(in: message, after: "constraint ", quote: "'"))
        default:
            return (nil, nil, nil)
        }
    }

    /// The name quoted with backticks or double quotes right after `marker`.
    private static func name(in message: String, after marker: String) -> String? {
        quoted(in: message, after: marker, quote: "`") ?? quoted(in: message, after: marker, quote: "\"")
    }

    /// The name right after the first `db`.` qualifier (backticks or double quotes).
    private static func name(in message: String, afterQualifier: Bool) -> String? {
        quoted(in: message, after: "`.", quote: "`") ?? quoted(in: message, after: "\".", quote: "\"")
    }

    /// The text between `quote`s right after `marker` in `message`.
    private static func quoted(in message: String, after marker: String, quote: Character) -> String? {
        guard let range = message.range(of: marker) else { return nil }
        let rest = message[range.upperBound...]
        guard rest.first == quote else { return nil }
        let inside = rest.dropFirst()
        guard let end = inside.firstIndex(of: quote) else { return nil }
        return String(inside[..<end])
    }
}

extension MariaDBError: DetailedConstraintError {
    /// The table, column and constraint (a duplicate's key name) the message names.
    package func violation(_ kind: ConstraintKind) -> ConstraintViolation {
        ConstraintViolation(kind: kind, table: table, columns: columns, constraint: constraint)
    }
}

extension MariaDBError: BatchPositionedError {}

extension MariaDBError: ValueRefusingError {
    /// A value refused for its column's type: too long (1406), out of range (1264),
    /// truncated (1265), not of the type (1366, 1292).
    package var refusesAValue: Bool { [1406, 1264, 1265, 1366, 1292].contains(code) }
}

extension MariaDBError: LocalizedError {
    /// The same as ``description``, for code that logs `error.localizedDescription`
    /// (without it, Foundation's generic "The operation could not be completed").
    public var errorDescription: String? { description }
}
