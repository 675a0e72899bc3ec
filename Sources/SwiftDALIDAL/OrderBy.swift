import Foundation

/// A sort direction.
///
/// For example, `OrderBy("age", .descending)`.
public enum SortDirection: String, Sendable, Hashable {
    case ascending = "ASC"
    case descending = "DESC"

    /// The opposite direction.
    public var reversed: SortDirection { self == .ascending ? .descending : .ascending }
}

/// An `ORDER BY` clause: column names and directions. Column names are checked against
/// the table's real columns and quoted when the query is built; an unknown name is a
/// thrown ``DALError`` naming it, never SQL text.
///
/// Write it as a literal in the classic form (`"name DESC, age"`), or build it.
///
/// For example:
///
/// ```swift
/// try users.find(condition: "age > \(18)", orderBy: "name DESC, id")
/// try users.getAll(orderBy: OrderBy("created_at", .descending).then("id"))
/// try users.getAll(orderBy: OrderBy(parsing: request.sortParameter))   // validated, never pasted
/// ```
public struct OrderBy: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// One sort key.
    public struct Term: Sendable, Hashable {
        /// The column name, validated against the table when the query is built.
        public var column: String
        /// The direction.
        public var direction: SortDirection

        /// A sort key.
        public init(column: String, direction: SortDirection = .ascending) {
            self.column = column
            self.direction = direction
        }
    }

    /// The sort keys, most significant first.
    public private(set) var terms: [Term]
    /// Why the text form did not parse, reported when the query is built.
    public private(set) var parseError: String?

    /// Sorts by one column.
    ///
    /// For example, `OrderBy("name")` or `OrderBy("age", .descending)`.
    public init(_ column: String, _ direction: SortDirection = .ascending) {
        terms = [Term(column: column, direction: direction)]
    }

    /// Sorts by several terms.
    ///
    /// For example, `OrderBy(terms: [.init(column: "age", direction: .descending), .init(column: "id")])`.
    public init(terms: [Term]) {
        self.terms = terms
        if terms.isEmpty { parseError = "an ORDER BY needs at least one column" }
    }

    /// Parses the classic text form: comma-separated `column [ASC|DESC]` terms. Invalid
    /// text is not an error yet: it is reported (thrown) when the query is built.
    ///
    /// For example, `OrderBy(parsing: "name desc, id")`.
    public init(parsing text: String) {
        // A single bare ASCII column name (the usual `orderBy: "id"`) needs no splitting.
        if !text.isEmpty, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x80 && $0 != UInt8(ascii: ",") }) {
            terms = [Term(column: text)]
            return
        }
        terms = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let words = part.split(whereSeparator: \.isWhitespace)
            guard let column = words.first, words.count <= 2 else {
                parseError = "\"\(part.trimmingCharacters(in: .whitespaces))\" is not of the form `column [ASC|DESC]`"
                return
            }
            var direction = SortDirection.ascending
            if words.count == 2 {
                switch words[1].uppercased() {
                case "ASC": direction = .ascending
                case "DESC": direction = .descending
                default:
                    parseError = "\"\(words[1])\" is not a sort direction (ASC or DESC)"
                    return
                }
            }
            terms.append(Term(column: String(column), direction: direction))
        }
    }

    public init(stringLiteral value: String) {
        self.init(parsing: value)
    }

    /// A copy with one more, less significant, term.
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

    public var description: String {
        terms.map { "\($0.column) \($0.direction.rawValue)" }.joined(separator: ", ")
    }
}
