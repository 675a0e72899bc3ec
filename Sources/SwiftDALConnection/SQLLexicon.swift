/// Where an engine's SQL text has literals, quoted names and comments: the parts whose
/// bytes are not code. The PostgreSQL engine's parameter rewriting and a scoped DAL's
/// check that a condition stays inside its parentheses both read SQL through it, so that
/// they read it the way the engine that runs it does.
///
/// - SQLite: `'…'` (`''` inside), `"…"`, `` `…` `` and `[…]` names, `--` and `/* */`
///   comments (not nested).
/// - PostgreSQL: `'…'`, `E'…'` (backslash escapes), `$tag$…$tag$` and `$$…$$`, `"…"`
///   names, `--` and nested `/* */` comments; a `$` inside a word is a letter of it.
///
/// For example, `try SQLLexicon(.postgres).region(in: bytes, at: 0, sql: text)?.end`.
package struct SQLLexicon: Sendable {
    /// What a region is.
    package enum Kind: Sendable, Equatable {
        case literal, quotedName, lineComment, blockComment
    }

    /// A literal, quoted name or comment: its kind, and the index just past its end (a
    /// line comment ends before its newline, or at the end of the text).
    package struct Region: Sendable, Equatable {
        package let kind: Kind
        package let end: Int
    }

    package let engine: DatabaseEngine

    package init(_ engine: DatabaseEngine) {
        self.engine = engine
    }

    /// The region that starts at `index`, or `nil` when code starts there; throws
    /// ``DALError/Code/invalidSQL`` (naming `sql`) for a literal, quoted name, dollar
    /// quote or block comment that is not closed.
    package func region(in bytes: [UInt8], at index: Int, sql: String) throws -> Region? {
        let byte = bytes[index]
        let next: UInt8? = index + 1 < bytes.count ? bytes[index + 1] : nil
        switch byte {
        case UInt8(ascii: "'"):
            let escapes =
                engine == .postgres && index > 0
                && (bytes[index - 1] == UInt8(ascii: "E") || bytes[index - 1] == UInt8(ascii: "e"))
                && (index < 2 || !Self.isWordByte(bytes[index - 2]))
            return Region(
                kind: .literal,
                end: try quoted(bytes, index, close: byte, doubled: true, backslashes: escapes, sql, "a string literal")
            )
        case UInt8(ascii: "\""):
            return Region(
                kind: .quotedName,
                end: try quoted(
                    bytes, index, close: byte, doubled: true, backslashes: false, sql, "a quoted identifier"))
        case UInt8(ascii: "`") where engine == .sqlite:
            return Region(
                kind: .quotedName,
                end: try quoted(
                    bytes, index, close: byte, doubled: true, backslashes: false, sql, "a quoted identifier"))
        case UInt8(ascii: "[") where engine == .sqlite:
            return Region(
                kind: .quotedName,
                end: try quoted(
                    bytes, index, close: UInt8(ascii: "]"), doubled: false, backslashes: false, sql,
                    "a quoted identifier"
                ))
        case UInt8(ascii: "-") where next == UInt8(ascii: "-"):
            var end = index + 2
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            return Region(kind: .lineComment, end: end)
        case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
            return Region(kind: .blockComment, end: try blockComment(bytes, index, sql))
        case UInt8(ascii: "$") where engine == .postgres:
            return try dollarQuote(bytes, index, sql).map { Region(kind: .literal, end: $0) }
        default:
            return nil
        }
    }

    /// Whether `byte` may continue a word (an unquoted name or keyword).
    package static func isWordByte(_ byte: UInt8) -> Bool {
        isWordStart(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Whether `byte` may start a word.
    package static func isWordStart(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    private func quoted(
        _ bytes: [UInt8], _ start: Int, close: UInt8, doubled: Bool, backslashes: Bool, _ sql: String, _ what: String
    ) throws -> Int {
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if backslashes && byte == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            index += 1
            if byte == close {
                if doubled, index < bytes.count, bytes[index] == close {
                    index += 1
                    continue
                }
                return index
            }
        }
        throw DALError(.invalidSQL, "\(what) is not closed", sql: sql)
    }

    private func blockComment(_ bytes: [UInt8], _ start: Int, _ sql: String) throws -> Int {
        var depth = 0
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "*") {
                depth += 1
                index += 2
            } else if bytes[index] == UInt8(ascii: "*"), bytes[index + 1] == UInt8(ascii: "/") {
                depth -= 1
                index += 2
                // SQLite's comments do not nest: the first `*/` ends one.
                if depth == 0 || engine == .sqlite { return index }
            } else {
                index += 1
            }
        }
        throw DALError(.invalidSQL, "a block comment is not closed", sql: sql)
    }

    /// The end of the dollar-quoted string starting at `start`, or `nil` when the `$`
    /// there starts none (a parameter `$1`, a letter inside a word, a lone `$`).
    private func dollarQuote(_ bytes: [UInt8], _ start: Int, _ sql: String) throws -> Int? {
        if start > 0, Self.isWordByte(bytes[start - 1]) { return nil }
        var end = start + 1
        if end < bytes.count, !Self.isWordStart(bytes[end]), bytes[end] != UInt8(ascii: "$") { return nil }
        while end < bytes.count, Self.isWordByte(bytes[end]) { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "$") else { return nil }
        let tag = bytes[start...end]
        var index = end + 1
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "$"), index + tag.count <= bytes.count,
                bytes[index..<(index + tag.count)].elementsEqual(tag)
            {
                return index + tag.count
            }
            index += 1
        }
        throw DALError(.invalidSQL, "a dollar-quoted string is not closed", sql: sql)
    }
}
