import Foundation
import SwiftDALConnection

/// SQL written for SwiftDAL (parameters `?`, `?NNN`, `:name`, `@name`, `$name`), turned
/// into PostgreSQL's numbered parameters (`$1`, `$2`…), so that the same conditions and
/// the SQL BaseDAL builds run on both engines.
///
/// The text is read the way PostgreSQL reads it: nothing inside a string literal
/// (`'…'`, `E'…'` with backslash escapes, `$tag$…$tag$`), a quoted identifier (`"…"`) or
/// a comment (`--`, nested `/* */`) is touched, and `::type` casts stay casts.
/// PostgreSQL's own `$1` parameters are accepted too. (PostgreSQL's `jsonb` operators
/// `?`, `?|` and `?&` read as parameters: use `jsonb_exists`, `jsonb_exists_any` and
/// `jsonb_exists_all` instead.)
/// A class: a prepared statement hands it to every execution with one reference count
/// (a struct of a string, an enum and a set cost three, and their copies; callgrind,
/// PostgreSQL W3).
final class PostgresStatementText: Sendable {
    /// How the arguments map onto the numbered parameters.
    enum Parameters: Sendable, Equatable {
        /// `count` positional parameters, `$1`…`$count` bound to arguments 1…count.
        case positional(count: Int)
        /// Named parameters: `$k` is bound to the argument named `names[k - 1]`.
        case named([String])
    }

    /// The text for PostgreSQL.
    let sql: String
    let parameters: Parameters
    /// The number of parameters (`$1`…`$n`).
    let parameterCount: Int
    /// The parameters (1-based) bound to a list of values as one array: their argument,
    /// the JSON array SwiftDAL's `\(values:)` builds for a long list, is sent as an array
    /// literal (`{…}`), whose element type the server takes from the other side of
    /// `= ANY(…)`.
    let arrayParameters: Set<Int>

    /// PostgreSQL's most parameters in one statement.
    static let parameterLimit = 65_535

    /// Rewrites `text`; throws ``DALError/Code/invalidSQL`` for a text that mixes named and
    /// positional parameters or leaves a literal, identifier or comment open.
    init(_ text: String) throws {
        var scanner = Scanner(Array(text.utf8))
        let (rewritten, parameters) = try scanner.rewrite(original: text)
        (sql, arrayParameters) = Self.anyArrays(in: rewritten)
        self.parameters = parameters
        // More than the server takes: refused before anything is sent (the statement's
        // preparation was sent first, and its description broke the connection).
        switch parameters {
        case .positional(let positional): parameterCount = positional
        case .named(let names): parameterCount = names.count
        }
        guard parameterCount <= Self.parameterLimit else { throw Self.tooManyParameters(parameterCount, sql: sql) }
    }

    /// The error for a statement of `count` parameters, more than PostgreSQL takes.
    static func tooManyParameters(_ count: Int, sql: String) -> DALError {
        DALError(
            .argumentMismatch,
            "the statement has \(count) parameters; PostgreSQL takes at most \(parameterLimit) "
                + "(a long list of values travels as one parameter through \\(values:))",
            sql: sql)
    }

    /// `x IN (SELECT value FROM json_array_elements_text(CAST($k AS json)))` (SwiftDAL's
    /// long `\(values:)` list) as `x = ANY($k)`, and `NOT IN` as `<> ALL($k)`: the server
    /// then reads the list as an array of `x`'s type (a uuid, a timestamp, a numeric),
    /// where JSON's elements are text that compares with none of them. Any length, one
    /// parameter. A list in another place keeps its JSON form.
    private static func anyArrays(in sql: String) -> (String, Set<Int>) {
        guard containsBytes(sql, "json_array_elements_text(CAST($") else { return (sql, []) }
        let pattern =
            #"(?i:\b(NOT\s+)?IN)\s*\(\s*SELECT (?:value|CAST\(value AS BIGINT\)) FROM json_array_elements_text\(CAST\(\$([0-9]+) AS json\)\)\s*\)"#
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return (sql, []) }
        var result = sql
        var numbers = Set<Int>()
        let matches = expression.matches(in: sql, range: NSRange(sql.startIndex..., in: sql))
        for match in matches.reversed() {
            guard let whole = Range(match.range, in: sql), let number = Range(match.range(at: 2), in: sql),
                let parameter = Int(sql[number])
            else { continue }
            let negated = match.range(at: 1).location != NSNotFound
            result.replaceSubrange(whole, with: negated ? "<> ALL($\(parameter))" : "= ANY($\(parameter))")
            numbers.insert(parameter)
        }
        return (result, numbers)
    }

    /// The values to bind, in parameter order; throws ``DALError/Code/argumentMismatch``
    /// when the arguments do not match the parameters (a statement of more parameters than
    /// PostgreSQL takes was refused when its text was read).
    func values(for arguments: StatementArguments) throws -> [DatabaseValue] {
        var values = try matchedValues(for: arguments)
        for parameter in arrayParameters where parameter <= values.count {
            guard case .text(let json) = values[parameter - 1], let literal = postgresArrayLiteral(fromJSON: json)
            else { continue }
            values[parameter - 1] = .text(literal)
        }
        return values
    }

    private func matchedValues(for arguments: StatementArguments) throws -> [DatabaseValue] {
        switch parameters {
        case .positional(let count):
            guard let values = arguments.positionalValues else {
                if count == 0, arguments.isEmpty { return [] }
                throw DALError(
                    .argumentMismatch, "the statement has positional parameters but the arguments are named", sql: sql)
            }
            guard values.count == count else {
                throw DALError(
                    .argumentMismatch,
                    "the statement has \(count) parameter(s) but \(values.count) argument(s) were given",
                    sql: sql)
            }
            return values
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
            if values.count != names.count {
                let unknown = Set(values.keys).subtracting(names).sorted()
                throw DALError(
                    .argumentMismatch, "argument(s) \(unknown.joined(separator: ", ")) match no parameter", sql: sql)
            }
            return bound
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var output: [UInt8] = []
        var positionalCount = 0
        var highestNumbered = 0
        var names: [String] = []

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            output.reserveCapacity(bytes.count + 16)
        }

        mutating func rewrite(original: String) throws -> (String, Parameters) {
            let lexicon = SQLLexicon.postgres
            while index < bytes.count {
                if let region = try lexicon.region(in: bytes, at: index, sql: original) {
                    output.append(contentsOf: bytes[index..<region.end])
                    index = region.end
                    continue
                }
                switch bytes[index] {
                case UInt8(ascii: "?"):
                    index += 1
                    let digits = readDigits()
                    if digits.isEmpty {
                        positionalCount += 1
                        appendParameter(positionalCount)
                    } else {
                        try numbered(digits, original)
                    }
                case UInt8(ascii: ":") where peek(1) == UInt8(ascii: ":"):
                    copy()
                    copy()
                case UInt8(ascii: ":"), UInt8(ascii: "@"):
                    if let name = nameAfter(index) {
                        index += 1 + name.utf8.count
                        appendNamed(name)
                    } else {
                        copy()
                    }
                case UInt8(ascii: "$"):
                    try dollar(original)
                default:
                    copy()
                }
            }
            if !names.isEmpty && (positionalCount > 0 || highestNumbered > 0) {
                throw DALError(.invalidSQL, "the SQL text mixes named and positional parameters", sql: original)
            }
            let parameters: Parameters =
                names.isEmpty ? .positional(count: max(positionalCount, highestNumbered)) : .named(names)
            return (String(decoding: output, as: UTF8.self), parameters)
        }

        private func peek(_ offset: Int) -> UInt8? {
            index + offset < bytes.count ? bytes[index + offset] : nil
        }

        private mutating func copy() {
            output.append(bytes[index])
            index += 1
        }

        /// `$number`, set apart by a space from a `$` or a word character on either side:
        /// written against them it would join them (`$?` must not become `$$1`, the start
        /// of a dollar quote, nor `x?` the name `x$1`), and the text would no longer read
        /// as it was checked.
        private mutating func appendParameter(_ number: Int) {
            if let last = output.last, SQLLexicon.isNameByte(last) { output.append(0x20) }
            append("$\(number)")
            if index < bytes.count, SQLLexicon.isNameByte(bytes[index]) { output.append(0x20) }
        }

        private mutating func append(_ text: String) {
            output.append(contentsOf: text.utf8)
        }

        private mutating func readDigits() -> [UInt8] {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return Array(bytes[start..<index])
        }

        /// `?NNN` or `$NNN`: parameter NNN (1-based).
        private mutating func numbered(_ digits: [UInt8], _ original: String) throws {
            guard let number = Int(String(decoding: digits, as: UTF8.self)), number >= 1, number <= 65_535 else {
                throw DALError(
                    .invalidSQL, "parameter number \(String(decoding: digits, as: UTF8.self)) is out of range",
                    sql: original)
            }
            highestNumbered = max(highestNumbered, number)
            appendParameter(number)
        }

        private mutating func appendNamed(_ name: String) {
            if let position = names.firstIndex(of: name) {
                appendParameter(position + 1)
            } else {
                names.append(name)
                appendParameter(names.count)
            }
        }

        /// The identifier right after the prefix at `position`, if there is one.
        private func nameAfter(_ position: Int) -> String? {
            var end = position + 1
            guard end < bytes.count, SQLLexicon.isWordStart(bytes[end]) else { return nil }
            while end < bytes.count, SQLLexicon.isNameByte(bytes[end]) { end += 1 }
            return String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
        }

        /// `$NNN` (a PostgreSQL parameter) or `$name` (a named parameter). Dollar quotes and
        /// words (`price$usd` is one identifier to PostgreSQL and to SQLite) are tokens of
        /// the lexicon, copied whole before this is reached.
        private mutating func dollar(_ original: String) throws {
            if let next = peek(1), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) {
                index += 1
                try numbered(readDigits(), original)
                return
            }
            if let name = nameAfter(index) {
                index += 1 + name.utf8.count
                appendNamed(name)
            } else {
                copy()
            }
        }
    }
}

/// The JSON array SwiftDAL's `\(values:)` builds (integers, strings, nulls) as a
/// PostgreSQL array literal, or `nil` when it is not one.
func postgresArrayLiteral(fromJSON json: String) -> String? {
    guard let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]),
        let elements = parsed as? [Any]
    else { return nil }
    var values = [DatabaseValue]()
    values.reserveCapacity(elements.count)
    for element in elements {
        switch element {
        case is NSNull: values.append(.null)
        case let text as String: values.append(.text(text))
        case let number as NSNumber:
            guard let integer = Int64(exactly: number.int64Value), "\(integer)" == number.stringValue else {
                return nil
            }
            values.append(.integer(integer))
        default: return nil
        }
    }
    return postgresArrayLiteral(values)
}
