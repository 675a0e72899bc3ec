public import SwiftDALConnection

extension SQL.Interpolation {
    /// `\(containing: text)`: a bound `LIKE` pattern matching `text` anywhere, with `%`,
    /// `_` and `!` in `text` escaped with `!` so they match literally. Use after `LIKE`.
    /// (`!`, not a backslash: MariaDB and PostgreSQL without `standard_conforming_strings`
    /// read `'\'` as an open literal, and MariaDB's `LIKE` treats `\` as an escape of its
    /// own; `!` is plain on every engine.)
    ///
    /// For example, `"name LIKE \(containing: keyword)"` becomes `name LIKE ? ESCAPE '!'`
    /// with `%keyword%` bound.
    public mutating func appendInterpolation(containing text: String) {
        appendLikePattern("%" + escapeLikeWildcards(text, escape: "!") + "%")
    }

    /// `\(startingWith: text)`: a bound `LIKE` pattern for values beginning with `text`.
    ///
    /// For example, `"email LIKE \(startingWith: "admin")"`.
    public mutating func appendInterpolation(startingWith text: String) {
        appendLikePattern(escapeLikeWildcards(text, escape: "!") + "%")
    }

    /// `\(endingWith: text)`: a bound `LIKE` pattern for values ending with `text`.
    ///
    /// For example, `"email LIKE \(endingWith: "@example.com")"`.
    public mutating func appendInterpolation(endingWith text: String) {
        appendLikePattern("%" + escapeLikeWildcards(text, escape: "!"))
    }

    private mutating func appendLikePattern(_ pattern: String) {
        if pattern.utf8.contains(0) {
            // SQLite's LIKE stops at a NUL: the rest of the pattern would be ignored and
            // the pattern would match far more than asked. Refused when the query runs.
            appendInterpolation(UnusableLikePattern())
        } else {
            appendInterpolation(pattern)
        }
        appendLiteral(" ESCAPE '!'")
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

/// Escapes `%`, `_` and `escape` itself with `escape`, for a `LIKE … ESCAPE 'x'` pattern
/// (the default, `\`, for `ESCAPE '\'`; SwiftDAL's own patterns use `!`, which every
/// engine's lexer reads plainly).
///
/// The text is read by Unicode scalars, as SQLite reads it: a wildcard followed by a
/// combining mark (`"%\u{301}"`, one `Character` in Swift) is still escaped.
///
/// For example, `escapeLikeWildcards("50%_off") == #"50\%\_off"#` and
/// `escapeLikeWildcards("50%!", escape: "!") == "50!%!!"`.
public func escapeLikeWildcards(_ text: String, escape: Unicode.Scalar = "\\") -> String {
    var escaped = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        if scalar == "%" || scalar == "_" || scalar == escape { escaped.append(escape) }
        escaped.append(scalar)
    }
    return String(escaped)
}
