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
    let inOrderCount: Int

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
                while end < bytes.count, SQLLexicon.isNameByte(bytes[end]), bytes[end] != 0x24 || byte == 0x24 {
                    end += 1
                }
                // A name starts with a letter or `_`; `@@x`, `:=`, `a$b` and `1:2` are not parameters.
                let startsName =
                    end > index + 1 && !(bytes[index + 1] >= 0x30 && bytes[index + 1] <= 0x39)
                    && !(byte == UInt8(ascii: "$") && SQLLexicon.isNameByte(previous))
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

    /// Whether the statement inserts exactly one row each time it runs without an error:
    /// `INSERT INTO target [(columns)] VALUES (?, …)` and nothing after the values (no
    /// `IGNORE`, `ON DUPLICATE KEY UPDATE`, `RETURNING`, `SELECT` or second row; no comment:
    /// read conservatively). `insertRange` writes such statements: a bulk execution of them
    /// changed one row per row of parameters (MariaDB's own count of a bulk execution adds
    /// the rows its triggers wrote).
    ///
    /// For example, `try MariaDBStatementText("INSERT INTO \"users\" (\"name\") VALUES (?)").insertsOneRow`
    /// is `true`.
    var insertsOneRow: Bool {
        var reader = InsertReader(sql)
        guard reader.readInsertInto() else { return false }
        let bytes = reader.bytes
        // The target and its columns (quoted names, parentheses), up to the word VALUES.
        while reader.index < bytes.count {
            let byte = bytes[reader.index]
            if byte == 0x22 || byte == 0x60 {  // "name", `name`
                guard reader.name() != nil else { return false }
                continue
            }
            if byte == 0x27 || byte == 0x23 || byte == 0x3B { return false }  // a literal, #, ;
            if byte == 0x2D || byte == 0x2F, reader.index + 1 < bytes.count,
                bytes[reader.index + 1] == 0x2D || bytes[reader.index + 1] == 0x2A
            {
                return false  // a comment
            }
            if SQLLexicon.isNameByte(byte) {
                if reader.read("VALUES") { break }
                if reader.read("SELECT") || reader.read("SET") || reader.read("VALUE") { return false }
                while reader.index < bytes.count, SQLLexicon.isNameByte(bytes[reader.index]) { reader.index += 1 }
                continue
            }
            reader.index += 1
        }
        reader.skipBlanks()
        guard reader.index < bytes.count, bytes[reader.index] == 0x28 else { return false }  // (
        reader.index += 1
        var placeholders = 0
        while reader.index < bytes.count, bytes[reader.index] != 0x29 {  // )
            let byte = bytes[reader.index]
            if byte == 0x3F {
                placeholders += 1
            } else if byte != 0x2C, !InsertReader.isBlank(byte) {
                return false
            }
            reader.index += 1
        }
        guard reader.index < bytes.count, placeholders > 0 else { return false }
        reader.index += 1
        reader.skipBlanks()
        return reader.index == bytes.count
    }

    /// The table an `INSERT INTO [schema.]table …` writes to, its names unquoted (`"…"`,
    /// `` `…` `` or bare); `nil` for another statement, or a name not read so.
    ///
    /// For example, `try MariaDBStatementText(#"INSERT INTO "shop"."users" ("a") VALUES (?)"#).insertTarget`
    /// is `("shop", "users")`.
    var insertTarget: (schema: String?, table: String)? {
        var reader = InsertReader(sql)
        guard reader.readInsertInto(), let first = reader.name() else { return nil }
        reader.skipBlanks()
        // After the name: `.` and the table's name, or what follows a table's name.
        guard reader.index < reader.bytes.count, reader.bytes[reader.index] == 0x2E else {
            return reader.endsAName ? (nil, first) : nil
        }
        reader.index += 1
        reader.skipBlanks()
        guard let second = reader.name() else { return nil }
        reader.skipBlanks()
        return reader.endsAName ? (first, second) : nil
    }

    /// Reads the start of an `INSERT` statement's text: blanks, whole words, names.
    private struct InsertReader {
        let bytes: [UInt8]
        var index = 0

        init(_ sql: String) { bytes = Array(sql.utf8) }

        static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

        mutating func skipBlanks() {
            while index < bytes.count, Self.isBlank(bytes[index]) { index += 1 }
        }

        /// Reads `word` (upper-case ASCII, any case in the text) as a whole word at `index`.
        mutating func read(_ word: String) -> Bool {
            let letters = Array(word.utf8)
            let end = index + letters.count
            guard end <= bytes.count, zip(bytes[index...], letters).allSatisfy({ $0 & 0xDF == $1 }),
                end == bytes.count || !SQLLexicon.isNameByte(bytes[end])
            else { return false }
            index = end
            return true
        }

        /// Whether a table's name may end where the reading is: at the end, or before `(`
        /// or a word (after blanks read), as `VALUES` or `PARTITION`.
        var endsAName: Bool {
            index == bytes.count || bytes[index] == 0x28
                || (index > 0 && Self.isBlank(bytes[index - 1])
                    && SQLLexicon.isNameByte(bytes[index]))
        }

        /// `INSERT INTO` after blanks, and the blanks after it.
        mutating func readInsertInto() -> Bool {
            skipBlanks()
            guard read("INSERT") else { return false }
            skipBlanks()
            guard read("INTO") else { return false }
            skipBlanks()
            return true
        }

        /// One name: quoted (a doubled quote inside stands for one) or bare.
        mutating func name() -> String? {
            guard index < bytes.count else { return nil }
            let quote = bytes[index]
            guard quote == 0x22 || quote == 0x60 else {
                let start = index
                while index < bytes.count, SQLLexicon.isNameByte(bytes[index]) { index += 1 }
                return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
            }
            var name = [UInt8]()
            index += 1
            while index < bytes.count {
                if bytes[index] == quote {
                    guard index + 1 < bytes.count, bytes[index + 1] == quote else {
                        index += 1
                        return String(decoding: name, as: UTF8.self)
                    }
                    index += 1
                }
                name.append(bytes[index])
                index += 1
            }
            return nil
        }
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
