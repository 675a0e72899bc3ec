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
    public var isEmpty: Bool { sql.allSatisfy(\.isWhitespace) }

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

    public var description: String { sql }
}

extension SQL: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) {
        self.init(sql: value)
    }

    public init(stringInterpolation: Interpolation) {
        sql = stringInterpolation.sql
        arguments = stringInterpolation.arguments
        if let error = stringInterpolation.error, arguments.conversionError == nil {
            arguments.conversionError = error
        }
    }

    /// Builds ``SQL`` from an interpolated literal.
    public struct Interpolation: StringInterpolationProtocol {
        var sql = ""
        var arguments = StatementArguments()
        var error: DALError?

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// `\(value)`: a bound parameter. `nil` binds `NULL`.
        public mutating func appendInterpolation(_ value: (any SQLiteValueConvertible)?) {
            sql += "?"
            arguments.append(value)
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

        /// `\(values: list)`: a comma-separated list of bound parameters, for `IN (…)`.
        /// An empty list gives `NULL`, so that `x IN (NULL)` matches nothing.
        public mutating func appendInterpolation(values list: [some SQLiteValueConvertible]) {
            if list.isEmpty {
                sql += "NULL"
                return
            }
            for (index, value) in list.enumerated() {
                sql += index == 0 ? "?" : ",?"
                arguments.append(value)
            }
        }
    }
}

/// Quotes an SQL identifier: wraps it in double quotes and doubles any inner quote.
///
/// For example, `quoteIdentifier(#"my "table""#) == #""my ""table""""#`.
public func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
