import Foundation
import SwiftDALConnection

/// A sort direction.
///
/// For example, `OrderBy("age", .descending)`.
public enum SortDirection: String, Sendable, Hashable {
    /// `ASC`: smallest first (`NULL`s first on SQLite, last on PostgreSQL).
    case ascending = "ASC"
    /// `DESC`: largest first (`NULL`s last on SQLite, first on PostgreSQL).
    case descending = "DESC"

    /// The opposite direction.
    public var reversed: SortDirection { self == .ascending ? .descending : .ascending }
}

/// An `ORDER BY` clause: column names and directions. Column names are checked against
/// the table's real columns and quoted when the query is built; an unknown name is a
/// thrown ``DALError`` naming it, never SQL text.
///
/// One spelling has one meaning: a string literal, `OrderBy(text)` and
/// `OrderBy(parsing: text)` all read the same text form, comma-separated
/// `column [ASC|DESC]` terms, whether the text is written in the code or comes from a
/// variable. A column name may hold spaces (`"Order ID"` is the column `Order ID`,
/// `"Order ID DESC"` sorts it descending); write a name in double quotes when it holds
/// a comma or a double quote (doubled), or ends in the word ASC or DESC
/// (`#""Total, net" DESC"#`). To name exactly one column, whatever its text, use
/// ``init(column:_:)`` or ``init(_:_:)``.
///
/// For example:
///
/// ```swift
/// try users.find(condition: "age > \(18)", orderBy: "name DESC, id")
/// try orders.getAll(orderBy: "Order ID")                        // the column "Order ID"
/// try users.getAll(orderBy: OrderBy("created_at", .descending).then("id"))
/// try users.getAll(orderBy: OrderBy(request.sortParameter))      // validated, never pasted
/// try users.getAll(orderBy: OrderBy(column: columnName))         // one column, never parsed
/// ```
public struct OrderBy: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// One sort key.
    ///
    /// For example, `OrderBy(terms: [OrderBy.Term(column: "age", direction: .descending)])`.
    public struct Term: Sendable, Hashable {
        /// The column name, validated against the table when the query is built.
        public var column: String
        /// The direction.
        public var direction: SortDirection

        /// A sort key.
        ///
        /// For example, `OrderBy.Term(column: "age", direction: .descending)`.
        public init(column: String, direction: SortDirection = .ascending) {
            self.column = column
            self.direction = direction
        }
    }

    /// The sort keys, most significant first.
    public private(set) var terms: [Term]
    /// Why the text form did not parse, reported (thrown) when the query is built.
    public private(set) var parseError: String?

    /// Sorts by exactly the column `column` (its name is never parsed), in `direction`.
    ///
    /// For example, `OrderBy(column: "Order ID")` or `OrderBy(column: name, .descending)`.
    public init(column: String, _ direction: SortDirection = .ascending) {
        terms = [Term(column: column, direction: direction)]
    }

    /// Sorts by exactly the column `column` in `direction`.
    ///
    /// For example, `OrderBy("age", .descending)`.
    public init(_ column: String, _ direction: SortDirection) {
        self.init(column: column, direction)
    }

    /// Sorts by several terms.
    ///
    /// For example, `OrderBy(terms: [.init(column: "age", direction: .descending), .init(column: "id")])`.
    public init(terms: [Term]) {
        self.terms = terms
        if terms.isEmpty { parseError = "an ORDER BY needs at least one column" }
    }

    /// Reads the text form (see ``OrderBy``): the same as a string literal with this text.
    /// Invalid text is not an error yet: it is reported (thrown) when the query is built.
    ///
    /// For example, `OrderBy(request.sort)` with `request.sort == "name DESC, id"`.
    public init(_ text: String) {
        self.init(parsing: text)
    }

    /// Reads the text form; the same as ``init(_:)``.
    ///
    /// For example, `OrderBy(parsing: "name desc, id")`.
    public init(parsing text: String) {
        // A single bare ASCII column name (the usual `orderBy: "id"`) needs no parsing.
        if !text.isEmpty,
            text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x80 && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "\"") })
        {
            terms = [Term(column: text)]
            return
        }
        var parser = OrderByParser(text)
        do {
            terms = try parser.terms()
        } catch {
            terms = []
            parseError = error.message
        }
    }

    /// Reads the text form from a string literal.
    ///
    /// For example, `let order: OrderBy = "name DESC, id"`.
    public init(stringLiteral value: String) {
        self.init(parsing: value)
    }

    /// A copy with one more, less significant, term: exactly the column `column`.
    ///
    /// For example, `OrderBy("age", .descending).then("id")`.
    public func then(_ column: String, _ direction: SortDirection = .ascending) -> OrderBy {
        var copy = self
        copy.terms.append(Term(column: column, direction: direction))
        return copy
    }

    /// The same terms with every direction reversed (used by `findLast`).
    ///
    /// For example, `OrderBy("id").reversed` sorts by `id DESC`.
    public var reversed: OrderBy {
        var copy = self
        copy.terms = terms.map { Term(column: $0.column, direction: $0.direction.reversed) }
        return copy
    }

    /// The text form, which reads back as the same order (names quoted where needed).
    ///
    /// For example, `OrderBy(column: "Total, net").description == #""Total, net" ASC"#`.
    public var description: String {
        terms.map { "\(OrderByParser.spelling(of: $0.column)) \($0.direction.rawValue)" }.joined(separator: ", ")
    }
}

/// The parser of the text form (see ``OrderBy``).
struct OrderByParser {
    struct Failure: Error {
        let message: String
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    mutating func terms() throws(Failure) -> [OrderBy.Term] {
        var terms = [OrderBy.Term]()
        repeat {
            terms.append(try term())
        } while skip(",")
        return terms
    }

    /// `column [ASC|DESC]`, where the column is a double-quoted name or bare text.
    private mutating func term() throws(Failure) -> OrderBy.Term {
        skipSpaces()
        let column: String
        var direction = SortDirection.ascending
        if skip("\"") {
            column = try quoted()
            skipSpaces()
            let word = String(String.UnicodeScalarView(scalars[index..<end(ofTermFrom: index)]))
                .trimmingCharacters(in: .whitespaces)
            index = end(ofTermFrom: index)
            if !word.isEmpty {
                guard let parsed = Self.direction(word) else {
                    throw Failure(message: "\"\(word)\" is not a sort direction (ASC or DESC)")
                }
                direction = parsed
            }
        } else {
            let stop = end(ofTermFrom: index)
            var text = String(String.UnicodeScalarView(scalars[index..<stop])).trimmingCharacters(in: .whitespaces)
            index = stop
            if let space = text.lastIndex(where: \.isWhitespace),
                let parsed = Self.direction(String(text[space...].dropFirst()))
            {
                direction = parsed
                text = String(text[..<space]).trimmingCharacters(in: .whitespaces)
            }
            column = text
        }
        guard !column.isEmpty else {
            throw Failure(message: "an ORDER BY term names no column")
        }
        return OrderBy.Term(column: column, direction: direction)
    }

    /// The rest of a double-quoted name (the opening quote read), `""` meaning `"`.
    private mutating func quoted() throws(Failure) -> String {
        var name = String.UnicodeScalarView()
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "\"" {
                guard index < scalars.count, scalars[index] == "\"" else { return String(name) }
                index += 1
            }
            name.append(scalar)
        }
        throw Failure(message: "a quoted column name is not closed")
    }

    /// Where the term starting at `start` ends: the next comma, or the end.
    private func end(ofTermFrom start: Int) -> Int {
        scalars[start...].firstIndex(of: ",") ?? scalars.count
    }

    private mutating func skip(_ scalar: Unicode.Scalar) -> Bool {
        guard index < scalars.count, scalars[index] == scalar else { return false }
        index += 1
        return true
    }

    private mutating func skipSpaces() {
        while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
    }

    private static func direction(_ word: String) -> SortDirection? {
        switch word.uppercased() {
        case "ASC": .ascending
        case "DESC": .descending
        default: nil
        }
    }

    /// `name` as the text form writes it: bare when it reads back as itself, else quoted.
    static func spelling(of name: String) -> String {
        var parser = OrderByParser(name + " ASC")
        if !name.hasPrefix("\""), let terms = try? parser.terms(), terms == [OrderBy.Term(column: name)] {
            return name
        }
        return quoteIdentifier(name)
    }
}
