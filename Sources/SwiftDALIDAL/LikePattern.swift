public import SwiftDALConnection

extension SQL.Interpolation {
    /// `\(containing: text)`: a bound `LIKE` pattern matching `text` anywhere, with `%`,
    /// `_` and `\` in `text` escaped so they match literally. Use after `LIKE`.
    ///
    /// For example, `"name LIKE \(containing: keyword)"` becomes `name LIKE ? ESCAPE '\'`
    /// with `%keyword%` bound.
    public mutating func appendInterpolation(containing text: String) {
        appendLikePattern("%" + escapeLikeWildcards(text) + "%")
    }

    /// `\(startingWith: text)`: a bound `LIKE` pattern for values beginning with `text`.
    ///
    /// For example, `"email LIKE \(startingWith: "admin")"`.
    public mutating func appendInterpolation(startingWith text: String) {
        appendLikePattern(escapeLikeWildcards(text) + "%")
    }

    /// `\(endingWith: text)`: a bound `LIKE` pattern for values ending with `text`.
    ///
    /// For example, `"email LIKE \(endingWith: "@example.com")"`.
    public mutating func appendInterpolation(endingWith text: String) {
        appendLikePattern("%" + escapeLikeWildcards(text))
    }

    private mutating func appendLikePattern(_ pattern: String) {
        if pattern.utf8.contains(0) {
            // SQLite's LIKE stops at a NUL: the rest of the pattern would be ignored and
            // the pattern would match far more than asked. Refused when the query runs.
            appendInterpolation(UnusableLikePattern())
        } else {
            appendInterpolation(pattern)
        }
        appendLiteral(" ESCAPE '\\'")
    }
}

/// Stands in for a LIKE pattern that SQLite cannot honour; binding it throws.
private struct UnusableLikePattern: DatabaseValueConvertible {
    func databaseValue() throws -> DatabaseValue {
        throw DALError(.invalidValue, "a LIKE pattern cannot contain a NUL character: SQLite's LIKE stops at it")
    }

    init() {}
    init?(databaseValue: DatabaseValue) { nil }
}

/// Escapes `%`, `_` and `\` with `\`, for a `LIKE … ESCAPE '\'` pattern.
///
/// The text is read by Unicode scalars, as SQLite reads it: a wildcard followed by a
/// combining mark (`"%\u{301}"`, one `Character` in Swift) is still escaped.
///
/// For example, `escapeLikeWildcards("50%_off") == #"50\%\_off"#`.
public func escapeLikeWildcards(_ text: String) -> String {
    var escaped = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        if scalar == "%" || scalar == "_" || scalar == "\\" { escaped.append("\\") }
        escaped.append(scalar)
    }
    return String(escaped)
}
