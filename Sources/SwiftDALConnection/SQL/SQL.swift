import Foundation

/// SQL text with its arguments, built by string interpolation: every interpolated value
/// becomes a bound `?` parameter, never text pasted into the SQL.
///
/// A plain `String` variable cannot become an `SQL` by accident (only literals and
/// interpolations do); use ``init(sql:arguments:)`` to say explicitly that a string
/// is SQL text.
///
/// For example:
///
/// ```swift
/// let minAge = 18, pattern = "%ann%"
/// let query: SQL = "SELECT * FROM users WHERE age > \(minAge) AND name LIKE \(pattern)"
/// // query.sql == "SELECT * FROM users WHERE age > ? AND name LIKE ?"
/// // query.arguments == [18, "%ann%"]
/// try db.fetchAll(query)
/// ```
public struct SQL: Sendable, CustomStringConvertible {
    /// The SQL text, with a `?` for each interpolated value.
    public private(set) var sql: String
    /// The values bound to the text's parameters.
    public private(set) var arguments: StatementArguments

    /// SQL text with explicit arguments (positional or named).
    ///
    /// For example, `SQL(sql: "SELECT * FROM users WHERE id = :id", arguments: ["id": 1])`.
    public init(sql: String, arguments: StatementArguments = StatementArguments()) {
        self.sql = sql
        self.arguments = arguments
    }

    /// Whether the text is empty or only white space.
    public var isEmpty: Bool {
        // Bytes first: ASCII decides at once (a condition's first byte, usually), and only
        // a non-ASCII byte asks `Character`'s Unicode rules (a grapheme-breaking pass
        // cost ~300 instructions on every DAL call with a condition; callgrind, W7). The
        // bytes are read in place (`UTF8View`'s iterator cost ~80 instructions for one byte).
        // The first byte alone decides a condition that starts with a word (~110
        // instructions less a call than copying the text to read it in place).
        if let first = sql.utf8.first, first > 0x20, first < 0x80 { return false }
        var text = sql
        let ascii: Bool? = text.withUTF8 { bytes in
            for byte in bytes {
                switch byte {
                case 0x09...0x0D, 0x20: continue
                case 0..<0x80: return false
                default: return nil
                }
            }
            return true
        }
        return ascii ?? sql.allSatisfy(\.isWhitespace)
    }

    /// The text followed by `other`'s text (separated by a space), arguments in order.
    ///
    /// For example, `try SQL("SELECT * FROM t").appending("WHERE id = \(id)")`.
    public func appending(_ other: SQL) throws -> SQL {
        var result = self
        try result.append(other)
        return result
    }

    /// Appends `other`'s text (separated by a space) and its arguments.
    ///
    /// For example, `try query.append("ORDER BY id")`.
    public mutating func append(_ other: SQL) throws {
        try arguments.append(contentsOf: other.arguments)
        if !sql.isEmpty && !other.sql.isEmpty { sql += " " }
        sql += other.sql
    }

    /// The SQL text, with `?` placeholders: the bound values stay out of it.
    public var description: String { sql }

    /// The longest `\(values:)` list bound one parameter per value; longer lists of
    /// integers and text are bound as one JSON array.
    public static let largeListThreshold = 100
}

extension SQL: ExpressibleByStringInterpolation {
    /// SQL from a literal without interpolations: the text as written, no arguments.
    public init(stringLiteral value: String) {
        self.init(sql: value)
    }

    /// SQL from an interpolated literal: each interpolated value becomes a bound `?`.
    public init(stringInterpolation: consuming Interpolation) {
        // Moved out, not copied (a copy and the interpolation's release cost ~300
        // instructions on every interpolated literal), into locals then consumed into
        // `self`: swapping into `self` directly built it in a temporary and copied that
        // (~190 instructions more, callgrind W7).
        let error = stringInterpolation.error
        var text = ""
        swap(&text, &stringInterpolation.sql)
        var values = StatementArguments()
        swap(&values, &stringInterpolation.arguments)
        if let error, values.conversionError == nil {
            values.conversionError = error
        }
        sql = consume text
        arguments = consume values
    }

    /// Builds ``SQL`` from an interpolated literal; the compiler uses it, you write the literal.
    ///
    /// For example, `let condition: SQL = "age > \(18) AND name LIKE \(startingWith: prefix)"`.
    public struct Interpolation: StringInterpolationProtocol {
        @usableFromInline var sql = ""
        @usableFromInline var arguments = StatementArguments()
        /// The first fragment that could not be inlined (thrown when the statement runs).
        /// Boxed: an inline `DALError?` cost every interpolated literal its destruction.
        var error: DALError? {
            get { failure?.error }
            set { failure = newValue.map(BoxedError.init) }
        }
        private var failure: BoxedError?

        /// Starts an interpolation; the compiler calls it for every interpolated ``SQL`` literal.
        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount)
        }

        /// Appends a literal part of the text as written; the compiler calls it.
        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// `\(value)`: a bound parameter. `nil` binds `NULL`.
        public mutating func appendInterpolation(_ value: (any DatabaseValueConvertible)?) {
            sql += "?"
            arguments.append(value)
        }

        /// `\(value)` for a value whose type is known where the literal is written (the
        /// usual case: `"age = \(age)"`): a bound parameter, as above, converted there
        /// without going through `any DatabaseValueConvertible`.
        @inlinable
        public mutating func appendInterpolation<Value: DatabaseValueConvertible>(_ value: Value) {
            sql += "?"
            do {
                arguments.append(converted: try value.databaseValue())
            } catch {
                arguments.append(value as any DatabaseValueConvertible)  // records the error, binds NULL
            }
        }

        /// `\(sql: fragment)`: another ``SQL`` inlined, its arguments kept in order.
        public mutating func appendInterpolation(sql fragment: SQL) {
            do {
                try arguments.append(contentsOf: fragment.arguments)
                sql += fragment.sql
            } catch let failure as DALError {
                if error == nil { error = failure }
            } catch {
                // append(contentsOf:) throws only DALError.
            }
        }

        /// `\(identifier: name)`: a quoted identifier (`"name"`, inner quotes doubled).
        /// The name is quoted, not validated: DAL layers validate names against the schema.
        public mutating func appendInterpolation(identifier name: String) {
            sql += quoteIdentifier(name)
        }

        /// `\(values: list)`: the values of an `IN (…)` list, every one bound. An empty
        /// list gives `NULL`, so that `x IN (NULL)` matches nothing.
        ///
        /// Up to ``SQL/largeListThreshold`` values become one `?` each. A longer list of
        /// integers and text (without NUL) is bound as one JSON array and read back by
        /// `SELECT value FROM json_each(?)`, which is valid inside the same parentheses:
        /// any length, one cached statement, and no limit on bound parameters. A longer
        /// list of other values (reals, blobs) keeps one `?` each and fails with
        /// ``DALError/Code/argumentMismatch`` past SQLite's limit on parameters (32,766
        /// by default). Building either form takes time linear in the list's length.
        ///
        /// For example, `"id IN (\(values: ids))"`.
        public mutating func appendInterpolation(values list: [some DatabaseValueConvertible]) {
            if list.isEmpty {
                sql += "NULL"
                return
            }
            var converted = [DatabaseValue]()
            converted.reserveCapacity(list.count)
            var failure: DALError?
            for value in list { converted.append(StatementArguments.convert(value, &failure)) }
            if let failure, error == nil { error = failure }
            if converted.count > SQL.largeListThreshold, let json = jsonArray(of: converted) {
                // Integer lists say so (PostgreSQL's spelling of this needs the type).
                let integers = converted.allSatisfy { if case .text = $0 { false } else { true } }
                sql += integers ? "SELECT CAST(value AS INTEGER) FROM json_each(?)" : "SELECT value FROM json_each(?)"
                arguments.append(converted: .text(json))
                return
            }
            sql.reserveCapacity(sql.utf8.count + 2 * converted.count)
            sql += "?"
            for _ in 1..<converted.count { sql += ",?" }
            arguments.append(converted: converted)
        }
    }
}

/// Quotes an SQL identifier: wraps it in double quotes and doubles any inner quote.
///
/// For example, `quoteIdentifier(#"my "table""#) == #""my ""table""""#`.
public func quoteIdentifier(_ name: String) -> String {
    enclosing(name, in: UInt8(ascii: "\""))
}

/// Whether `text` holds `needle`, byte for byte in UTF-8 (no Unicode equivalence): the
/// library's checks of its own SQL for its own spellings. Foundation's `contains` bridges
/// through `NSString`, ~24,000 instructions on a catalog query's text.
package func containsBytes(_ text: String, _ needle: String) -> Bool {
    var text = text
    var needle = needle
    return text.withUTF8 { haystack in
        needle.withUTF8 { needle in
            guard let first = needle.first else { return true }
            guard haystack.count >= needle.count, let base = haystack.baseAddress, let pattern = needle.baseAddress
            else { return false }
            var index = 0
            let last = haystack.count - needle.count
            while index <= last {
                if haystack[index] == first && memcmp(base + index, pattern, needle.count) == 0 { return true }
                index += 1
            }
            return false
        }
    }
}

/// `text` between two `quote` characters, each `quote` inside it doubled: an SQL
/// identifier (`"`) or string literal (`'`). In Swift: Foundation's
/// `replacingOccurrences` bridges through `NSString`, ~2,000 instructions a call, which
/// opening a table mapping paid for every column it quotes.
package func enclosing(_ text: String, in quote: UInt8) -> String {
    let mark = String(UnicodeScalar(quote))
    guard text.utf8.contains(quote) else { return mark + text + mark }
    var bytes = [UInt8]()
    bytes.reserveCapacity(text.utf8.count + 8)
    bytes.append(quote)
    for byte in text.utf8 {
        bytes.append(byte)
        if byte == quote { bytes.append(quote) }
    }
    bytes.append(quote)
    // An ASCII quote added next to whole UTF-8 sequences keeps the bytes valid UTF-8.
    return String(decoding: bytes, as: UTF8.self)
}

/// `values` as a JSON array, or `nil` when one of them cannot travel through JSON
/// exactly: only `NULL`, integers and text without NUL do (a real would be re-parsed, a
/// blob has no JSON form, and SQLite's JSON functions stop at a NUL).
package func jsonArray(of values: [DatabaseValue]) -> String? {
    var json = "["
    json.reserveCapacity(values.count * 8)
    for (index, value) in values.enumerated() {
        if index > 0 { json += "," }
        guard appendJSON(value, to: &json) else { return nil }
    }
    return json + "]"
}

/// Appends `value` as JSON; `false` when it has no exact JSON form (see ``jsonArray(of:)``).
package func appendJSON(_ value: DatabaseValue, to json: inout String) -> Bool {
    switch value {
    case .null: json += "null"
    case .integer(let integer): json += String(integer)
    case .text(let text):
        guard !text.utf8.contains(0) else { return false }
        json += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
    case .real, .blob: return false
    }
    return true
}

extension String {
    /// The name as SQLite compares identifiers: only the ASCII letters A–Z folded to
    /// lowercase (`"Émile"` and `"émile"` stay two names, as they are two columns to
    /// SQLite; `lowercased()` would fold them into one).
    ///
    /// For example, `"User_ID".identifierKey == "user_id"` and `"É".identifierKey == "É"`.
    package var identifierKey: String {
        guard utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return self }
        return String(
            decoding: utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

/// `values` as a PostgreSQL array literal in text form (`{1,"a b",NULL}`): every element
/// quoted (backslashes and quotes escaped), `NULL` bare, a real in its exact text, a blob
/// as bytea's hex form. The server reads each element as the array's element type.
package func postgresArrayLiteral(_ values: [DatabaseValue]) -> String {
    var literal = "{"
    for (index, value) in values.enumerated() {
        if index > 0 { literal += "," }
        switch value {
        case .null: literal += "NULL"
        case .integer(let integer): literal += String(integer)
        case .real(let real): literal += "\"" + postgresText(of: real) + "\""
        case .text(let text): literal += "\"" + escapedForArray(text) + "\""
        case .blob(let data):
            let digits = Array("0123456789abcdef".utf8)
            var hex = [UInt8]()
            hex.reserveCapacity(data.count * 2)
            for byte in data {
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0x0F)])
            }
            literal += "\"\\\\x" + String(decoding: hex, as: UTF8.self) + "\""
        }
    }
    return literal + "}"
}

/// A double as PostgreSQL reads it back exactly.
package func postgresText(of double: Double) -> String {
    if double == .infinity { return "Infinity" }
    if double == -.infinity { return "-Infinity" }
    return double.description  // the same digits as "\(double)", without the interpolation's buffer
}

/// `text` for a quoted array element: backslashes and double quotes escaped.
private func escapedForArray(_ text: String) -> String {
    // By scalar, not by Character: a quote or a backslash followed by a combining mark is one
    // Character ("\"\u{301}") that equals neither, and was left unescaped (a malformed
    // literal, or another value: "c\\\u{301}d" read as "c\u{301}d").
    var escaped = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        if scalar == "\\" || scalar == "\"" { escaped.append("\\") }
        escaped.append(scalar)
    }
    return String(escaped)
}

/// A value as an SQL literal, for DDL where parameters cannot be bound: numbers as
/// digits, text single-quoted with quotes doubled, blobs as `X'…'`.
///
/// For example, `sqlLiteral(.text("it's")) == "'it''s'"`.
public func sqlLiteral(_ value: DatabaseValue) -> String {
    switch value {
    case .null: return "NULL"
    case .integer(let integer): return String(integer)
    case .real(let double): return double.isFinite ? "\(double)" : (double > 0 ? "9e999" : "-9e999")
    case .text(let text):
        // A NUL would end the SQL text early: such text is written as bytes.
        if text.utf8.contains(0) { return "(CAST(\(sqlLiteral(.blob(Data(text.utf8)))) AS TEXT))" }
        return enclosing(text, in: UInt8(ascii: "'"))
    case .blob(let data): return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
    }
}
