import Foundation
import SwiftDALConnection

/// SQL written for SwiftDAL (parameters `?`, `?NNN`, `:name`, `@name`, `$name`), turned
/// into MariaDB's plain `?` parameters with the order in which the arguments are bound, so
/// that the SQL the layers above write runs unchanged.
///
/// The text is read the way a SwiftDAL session of MariaDB reads it (see
/// ``MariaDBConnection``'s `sql_mode`): nothing inside a string literal (`'…'` with
/// backslash escapes and `''`, since `NO_BACKSLASH_ESCAPES` is not set), a quoted
/// identifier (`"…"` under `ANSI_QUOTES`, `` `…` ``) or a comment (`-- `, `#`, `/* */`) is
/// touched. `@@name` (a system variable) and `:=` stay as they are; `@name` is a named
/// parameter, so MariaDB's user variables cannot be used in SwiftDAL's SQL.
struct MariaDBStatementText: Sendable, Equatable {
    /// How the arguments map onto the `?`s.
    enum Parameters: Sendable, Equatable {
        /// The `?`s, in order, bound to these 1-based argument positions (`?` alone takes
        /// the highest so far plus one, as in SQLite); `count` arguments are expected.
        case positional(order: [Int], count: Int)
        /// The `?`s, in order, bound to the arguments of these names.
        case named([String])
    }

    /// The text for MariaDB.
    let sql: String

    /// The length of the `/*!` or `/*M!` at `index` when it opens an executable comment
    /// without a version (the server always runs its text), else 0. A versioned one
    /// (`/*!50700 …*/`) may be skipped by the server, as a comment: it is read as one.
    /// A version is five digits (the server reads a sixth too); fewer are code.
    static func executableCommentMarker(_ bytes: [UInt8], at index: Int) -> Int {
        // The marker as the scope's lexicon reads it, and its rule for a version.
        guard let marker = SQLLexicon.executableCommentMarker(bytes, index) else { return 0 }
        let start = index + marker
        let isVersioned = start + 5 <= bytes.count && bytes[start..<(start + 5)].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        return isVersioned ? 0 : marker
    }

    /// SwiftDAL's own SQLite forms that have a MariaDB spelling: the JSON arrays that bind
    /// long `\(values:)` lists, read by `JSON_TABLE` (MariaDB 10.6+) as one column of
    /// `BIGINT` or of text (in the session's `utf8mb4_nopad_bin`, as SwiftDAL's tables).
    static func mariaDBSpelling(of sql: String) -> String {
        guard containsBytes(sql, "json_each(?)") else { return sql }
        return sql.replacingOccurrences(
            of: "SELECT CAST(value AS INTEGER) FROM json_each(?)",
            with: "SELECT v FROM JSON_TABLE(?, '$[*]' COLUMNS (v BIGINT PATH '$')) AS swiftdal_values"
        ).replacingOccurrences(
            of: "SELECT value FROM json_each(?)",
            with: "SELECT v FROM JSON_TABLE(?, '$[*]' COLUMNS (v LONGTEXT PATH '$')) AS swiftdal_values")
    }
    let parameters: Parameters
    /// Whether the `?`s take the positional arguments one each, in order (no `?NNN`
    /// repeating or reordering them).
    private let bindsInOrder: Bool
    /// The number of positional arguments when the `?`s take them one each, in order
    /// (``bindsInOrder``); -1 otherwise. Read at every execution, where matching
    /// ``parameters`` copied its array (a retain and a release, callgrind, W3 on MariaDB).
    private let inOrderCount: Int

    /// Rewrites `text`; throws ``DALError/Code/invalidSQL`` for a text that mixes named and
    /// positional parameters or leaves a literal, identifier or comment open.
    init(_ text: String) throws {
        let bytes = Array(Self.mariaDBSpelling(of: text).utf8)
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var order = [Int]()
        var highest = 0
        var names = [String]()
        var index = 0
        var openExecutableComments = 0
        func isIdentifierByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x5F
                || byte == 0x24 || byte >= 0x80
        }
        func unterminated(_ what: String) -> DALError {
            DALError(.invalidSQL, "the SQL text leaves \(what) open", sql: text)
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                // A literal or quoted identifier: copied up to its closing quote (doubled
                // quotes inside; backslash escapes in '…' strings only: "…" is a name under
                // ANSI_QUOTES, where a backslash is a character).
                var end = index + 1
                var closed = false
                while end < bytes.count {
                    if bytes[end] == UInt8(ascii: "\\"), byte == UInt8(ascii: "'") {
                        end += 2
                        continue
                    }
                    if bytes[end] == byte {
                        if end + 1 < bytes.count, bytes[end + 1] == byte {
                            end += 2
                            continue
                        }
                        closed = true
                        end += 1
                        break
                    }
                    end += 1
                }
                guard closed else { throw unterminated(byte == UInt8(ascii: "`") ? "a quoted name" : "a literal") }
                output.append(contentsOf: bytes[index..<end])
                index = end
            case UInt8(ascii: "#"):
                let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
                output.append(contentsOf: bytes[index..<end])
                index = end
            case UInt8(ascii: "-")
            where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-")
                && (index + 2 == bytes.count || bytes[index + 2] <= 0x20 || bytes[index + 2] == 0x7F):
                // As the server reads it (and the scope's lexicon): `--` then white space or
                // any control character, `DEL` included.
                let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
                output.append(contentsOf: bytes[index..<end])
                index = end
            case UInt8(ascii: "/") where Self.executableCommentMarker(bytes, at: index) > 0:
                // `/*!` or `/*M!` without a version: code the server runs, parameters
                // included; its closing `*/` is read when the scan meets it.
                let marker = Self.executableCommentMarker(bytes, at: index)
                output.append(contentsOf: bytes[index..<(index + marker)])
                index += marker
                openExecutableComments += 1
            case UInt8(ascii: "*")
            where openExecutableComments > 0 && index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/"):
                output.append(contentsOf: [UInt8(ascii: "*"), UInt8(ascii: "/")])
                index += 2
                openExecutableComments -= 1
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                var end = index + 2
                while end + 1 < bytes.count, !(bytes[end] == UInt8(ascii: "*") && bytes[end + 1] == UInt8(ascii: "/")) {
                    end += 1
                }
                guard end + 1 < bytes.count else { throw unterminated("a comment") }
                output.append(contentsOf: bytes[index..<(end + 2)])
                index = end + 2
            case UInt8(ascii: "?"):
                var end = index + 1
                var number = 0
                while end < bytes.count, bytes[end] >= 0x30, bytes[end] <= 0x39, number < 1_000_000 {
                    number = number * 10 + Int(bytes[end] - 0x30)
                    end += 1
                }
                if end == index + 1 {
                    number = highest + 1
                } else if number == 0 {
                    throw DALError(.invalidSQL, "parameter ?0: numbered parameters start at ?1", sql: text)
                }
                guard names.isEmpty else { throw Self.mixed(text) }
                order.append(number)
                highest = max(highest, number)
                output.append(UInt8(ascii: "?"))
                index = end
            case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "$"):
                let previous = index > 0 ? bytes[index - 1] : 0x20
                var end = index + 1
                while end < bytes.count, isIdentifierByte(bytes[end]), bytes[end] != 0x24 || byte == 0x24 {
                    end += 1
                }
                // A name starts with a letter or `_`; `@@x`, `:=`, `a$b` and `1:2` are not parameters.
                let startsName =
                    end > index + 1 && !(bytes[index + 1] >= 0x30 && bytes[index + 1] <= 0x39)
                    && !(byte == UInt8(ascii: "$") && isIdentifierByte(previous))
                    && previous != UInt8(ascii: "@")
                guard startsName else {
                    output.append(byte)
                    index += 1
                    continue
                }
                guard order.isEmpty else { throw Self.mixed(text) }
                names.append(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))
                output.append(UInt8(ascii: "?"))
                index = end
            default:
                output.append(byte)
                index += 1
            }
        }
        guard openExecutableComments == 0 else { throw unterminated("an executable comment") }
        sql = String(decoding: output, as: UTF8.self)
        parameters = names.isEmpty ? .positional(order: order, count: highest) : .named(names)
        bindsInOrder = order.count == highest && order.enumerated().allSatisfy { $0.element == $0.offset + 1 }
        inOrderCount = bindsInOrder && names.isEmpty ? highest : -1
    }

    private static func mixed(_ text: String) -> DALError {
        DALError(.invalidSQL, "the SQL text mixes named and positional parameters", sql: text)
    }

    /// Whether `arguments` are bound as given: positional, one per `?`, each in its own
    /// place (then ``values(for:)`` would return them unchanged).
    func bindsInPlace(_ arguments: StatementArguments) -> Bool {
        guard inOrderCount >= 0 else { return false }
        return arguments.positionalCount == inOrderCount
    }

    /// The values to bind, one per `?` in order; throws ``DALError/Code/argumentMismatch``
    /// when the arguments do not match the parameters.
    func values(for arguments: StatementArguments) throws -> [DatabaseValue] {
        switch parameters {
        case .positional(let order, let count):
            guard let values = arguments.positionalValues else {
                if count == 0, arguments.isEmpty { return [] }
                throw DALError(
                    .argumentMismatch, "the statement has positional parameters but the arguments are named", sql: sql)
            }
            guard values.count == count else {
                throw DALError(
                    .argumentMismatch,
                    "the statement has \(count) parameter(s) but \(values.count) argument(s) were given", sql: sql)
            }
            // Each argument once, in its own place (plain `?`s): bound as given.
            if bindsInOrder { return values }
            return order.map { values[$0 - 1] }
        case .named(let names):
            guard let values = arguments.namedValues else {
                throw DALError(
                    .argumentMismatch, "the statement has named parameters but the arguments are positional", sql: sql)
            }
            let bound = try names.map { name -> DatabaseValue in
                guard let value = values[name] else {
                    throw DALError(.argumentMismatch, "no argument for parameter \(name)", sql: sql)
                }
                return value
            }
            let unknown = Set(values.keys).subtracting(names)
            guard unknown.isEmpty else {
                throw DALError(
                    .argumentMismatch, "argument(s) \(unknown.sorted().joined(separator: ", ")) match no parameter",
                    sql: sql)
            }
            return bound
        }
    }
}
