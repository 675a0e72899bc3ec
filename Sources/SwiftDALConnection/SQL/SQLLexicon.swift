/// How an engine's lexer splits SQL text into the tokens that matter for reading it safely:
/// literals, quoted names, comments, and the tokens that can hide quote or parenthesis
/// characters inside them (words, numbers, SQLite's parameters), read forward from the
/// start of each token as the engine reads them. The PostgreSQL engine's parameter
/// rewriting and a scoped DAL's check that a condition stays inside its parentheses both
/// read SQL through it, so that they read it the way the engine that runs it does.
///
/// A lexicon is a set of rules (``Rules``); each engine's dialect declares the ones it
/// applies (``EngineDialect/lexicons``), so that no engine is named here:
///
/// - SQLite (``sqlite``): `'…'` (`''` inside), `"…"`, `` `…` `` and `[…]` names, `--`
///   comments (to a line feed) and `/* */` comments (not nested), words whose letters
///   include `$`, and parameters `$name`, `:name`, `@name`, `#name` with SQLite's `::` and
///   `(…)` suffixes.
/// - PostgreSQL (in `SwiftDALPostgres`): `'…'`, `E'…'` (backslash escapes; in every string
///   when `standard_conforming_strings` is off), each continued by a literal after white
///   space holding a line break (`'a'⏎'b'`), `$tag$…$tag$` and `$$…$$`, `"…"` names, `--`
///   comments (to a line feed or carriage return) and nested `/* */` comments, words whose
///   letters include `$`.
/// - MariaDB (in `SwiftDALMariaDB`): `'…'` (backslash escapes unless
///   `NO_BACKSLASH_ESCAPES`), `"…"` names (strings without `ANSI_QUOTES`), `` `…` `` names,
///   `-- ` (white space or a control character after the dashes) and `#` comments to a
///   line feed, `/* */` comments (not nested), `/*! … */` and `/*M! … */` code
///   (self-contained, versioned ones ending alike run or skipped, or refused).
///
/// For example, `try SQLLexicon.sqlite.region(in: bytes, at: 0, sql: text)?.end`.
@usableFromInline
package struct SQLLexicon: Sendable {
    /// What a region is.
    package enum Kind: Sendable, Equatable {
        case literal, quotedName, lineComment, blockComment
        /// A word (name or keyword) or a number.
        case word
        /// A SQLite parameter with a name (`$name`, `:name`, `@name`, `#name`, suffixes included).
        case parameter
    }

    /// A token: its kind, and the index just past its end (a line comment ends before
    /// its line break, or at the end of the text).
    package struct Region: Sendable, Equatable {
        package let kind: Kind
        package let end: Int
    }

    /// The rules of an engine's lexer that differ between engines.
    package struct Rules: Sendable {
        /// Whether a backslash escapes the next character in every string literal
        /// (PostgreSQL with `standard_conforming_strings` off; MySQL's default).
        package var backslashEscapesInEveryString = false
        /// Whether `E'…'` is a string with backslash escapes (PostgreSQL).
        package var escapeStrings = false
        /// Whether a literal continues across white space holding a line break (`'a'⏎'b'`
        /// is `'ab'`: PostgreSQL).
        package var continuedLiterals = false
        /// Whether `$tag$…$tag$` is a string (PostgreSQL).
        package var dollarQuotes = false
        /// Whether `"…"` is a quoted name (else a string literal, as MySQL reads it without
        /// `ANSI_QUOTES`).
        package var doubleQuotedNames = true
        /// Whether `` `…` `` is a quoted name (SQLite, MySQL).
        package var backtickNames = false
        /// Whether `[…]` is a quoted name (SQLite).
        package var bracketNames = false
        /// Whether a carriage return ends a `--` comment as a line feed does (PostgreSQL).
        package var lineCommentEndsAtCarriageReturn = false
        /// Whether `--` starts a comment only when white space or a control character
        /// (`DEL` included) follows it (MySQL; `--x` is two minus signs).
        package var lineCommentNeedsSpace = false
        /// Whether `#` starts a comment to the end of the line (MySQL).
        package var hashComments = false
        /// Whether `/* */` comments nest (PostgreSQL).
        package var nestedBlockComments = false
        /// Whether `/*!…*/` and `/*M!…*/` are code, not comments (MySQL and MariaDB run
        /// what they hold): each is read as one region whose code must be self-contained.
        /// One with a version (`/*!50700 …*/`, `/*M!100000 …*/`) is skipped as a comment by
        /// a server older than the version (and MariaDB skips MySQL 5.7's,
        /// `/*!50700`–`/*!99999`): it must read alike both ways. Otherwise the text is
        /// refused.
        package var executableComments = false
        /// Whether `$name`, `:name`, `@name` and `#name` are parameters, with SQLite's
        /// suffixes (SQLite).
        package var sqliteParameters = false

        package init() {}
    }

    /// The rules this lexicon applies.
    package let rules: Rules

    package init(_ rules: Rules) {
        self.rules = rules
    }

    /// The token that starts at `index` (the start of a token: the text's start, or where
    /// the previous one ended) if it is one of ``Kind``'s, else `nil` (a single character
    /// of code: an operator, a parenthesis, a space, SwiftDAL's `?` or PostgreSQL's
    /// `$1`); throws ``DALError/Code/invalidSQL`` (naming `sql`) for a literal, quoted
    /// name, dollar quote, block comment or parameter suffix that is not closed.
    package func region(in bytes: [UInt8], at index: Int, sql: String) throws -> Region? {
        let byte = bytes[index]
        let next: UInt8? = index + 1 < bytes.count ? bytes[index + 1] : nil
        switch byte {
        case UInt8(ascii: "'"):
            let escapes = rules.backslashEscapesInEveryString
            return Region(kind: .literal, end: try literal(bytes, index, escapes: escapes, sql))
        case UInt8(ascii: "\"") where !rules.doubleQuotedNames:
            return Region(
                kind: .literal,
                end: try quoted(
                    bytes, index, close: byte, doubled: true, backslashes: rules.backslashEscapesInEveryString, sql,
                    "a string literal"))
        case UInt8(ascii: "\""):
            return Region(
                kind: .quotedName,
                end: try quoted(
                    bytes, index, close: byte, doubled: true, backslashes: false, sql, "a quoted identifier"))
        case UInt8(ascii: "`") where rules.backtickNames:
            return Region(
                kind: .quotedName,
                end: try quoted(
                    bytes, index, close: byte, doubled: true, backslashes: false, sql, "a quoted identifier"))
        case UInt8(ascii: "[") where rules.bracketNames:
            return Region(
                kind: .quotedName,
                end: try quoted(
                    bytes, index, close: UInt8(ascii: "]"), doubled: false, backslashes: false, sql,
                    "a quoted identifier"
                ))
        case UInt8(ascii: "-") where next == UInt8(ascii: "-"):
            if rules.lineCommentNeedsSpace {
                // MySQL: `--` then white space or a control character, `DEL` included (or
                // the end).
                guard index + 2 >= bytes.count || bytes[index + 2] <= 0x20 || bytes[index + 2] == 0x7F else {
                    return nil
                }
            }
            return Region(kind: .lineComment, end: lineCommentEnd(bytes, from: index + 2))
        case UInt8(ascii: "#") where rules.hashComments:
            return Region(kind: .lineComment, end: lineCommentEnd(bytes, from: index + 1))
        case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
            if rules.executableComments, let marker = Self.executableCommentMarker(bytes, index) {
                return executableComment(bytes, index, marker: marker, sql)
            }
            return Region(kind: .blockComment, end: try blockComment(bytes, index, sql))
        case UInt8(ascii: "$") where rules.dollarQuotes:
            return try dollarQuote(bytes, index, sql).map { Region(kind: .literal, end: $0) }
        case UInt8(ascii: "$"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "#"):
            guard rules.sqliteParameters else { return nil }
            return try sqliteParameter(bytes, index, sql).map { Region(kind: .parameter, end: $0) }
        default:
            if rules.escapeStrings, byte == UInt8(ascii: "E") || byte == UInt8(ascii: "e"), next == UInt8(ascii: "'") {
                // An escape string: `E` alone, at the start of a token.
                return Region(kind: .literal, end: try literal(bytes, index + 1, escapes: true, sql))
            }
            if Self.isWordStart(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                // A word, or a number (with what follows it in a word: an engine refuses
                // such junk, and a `$` after digits starts a new token).
                let isNumber = !Self.isWordStart(byte)
                var end = index + 1
                while end < bytes.count,
                    isNumber
                        ? Self.isWordByte(bytes[end]) || bytes[end] == UInt8(ascii: ".")
                        : Self.isNameByte(bytes[end])
                {
                    end += 1
                }
                return Region(kind: .word, end: end)
            }
            return nil
        }
    }

    /// The length of the `/*!` or `/*M!` that starts an executable comment at `index`
    /// (MySQL, MariaDB), or `nil`.
    package static func executableCommentMarker(_ bytes: [UInt8], _ index: Int) -> Int? {
        guard index + 2 < bytes.count, bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "*") else {
            return nil
        }
        if bytes[index + 2] == UInt8(ascii: "!") { return 3 }
        if bytes[index + 2] == UInt8(ascii: "M"), index + 3 < bytes.count, bytes[index + 3] == UInt8(ascii: "!") {
            return 4
        }
        return nil
    }

    /// The executable comment at `start` (its `/*!` or `/*M!` `marker` bytes long), read
    /// as MySQL and MariaDB read it.
    ///
    /// The server runs its text as code, up to the first `*/` outside that code's tokens
    /// (after a version: five or six digits, skipped). Read as one region, that code must be
    /// self-contained: no literal, name or comment left open, no executable comment inside
    /// (the first `*/` would end both), its parentheses balanced; its `*/` is then never
    /// read as the start of a `/*` comment (MariaDB ran `*1)OR(1` in
    /// `1=1 /*!*/*1)OR(1/*!*/`, where the check had read a comment from the second `/`). A
    /// versioned comment is instead skipped as a comment, to its first `*/` after one level
    /// of `/* */` inside, by a server older than the version (and MariaDB skips MySQL 5.7's,
    /// `/*!50700` to `/*!99999`, at any version): the lexicon cannot tell which, so the two
    /// readings must end at the same `*/` (MariaDB ran `1) OR (1` between `/*!99999 ( */`
    /// and `/*!99999 ) */`, where the check had counted both parentheses). A comment that
    /// reads otherwise is unreadable: the region of a `--` comment that runs to the end of
    /// the text, which the scope's check refuses under every reading.
    private func executableComment(_ bytes: [UInt8], _ start: Int, marker: Int, _ sql: String) -> Region {
        func isDigit(_ index: Int) -> Bool {
            index < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
        }
        let unreadable = Region(kind: .lineComment, end: bytes.count)
        var index = start + marker
        var skippedEnd: Int?
        if (index..<(index + 5)).allSatisfy(isDigit) {
            guard let end = Self.skippedCommentEnd(bytes, from: index) else { return unreadable }
            skippedEnd = end
            index += isDigit(index + 5) ? 6 : 5
        }
        // Run as code, to the first `*/` outside its tokens.
        var depth = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "*"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                let end = index + 2
                guard depth == 0, skippedEnd == nil || skippedEnd == end else { return unreadable }
                return Region(kind: .blockComment, end: end)
            }
            if Self.executableCommentMarker(bytes, index) != nil { return unreadable }
            let region: Region?
            do {
                region = try self.region(in: bytes, at: index, sql: sql)
            } catch {
                return unreadable
            }
            if let region {
                index = region.end
                continue
            }
            if bytes[index] == UInt8(ascii: "(") { depth += 1 }
            if bytes[index] == UInt8(ascii: ")") { depth -= 1 }
            guard depth >= 0 else { return unreadable }
            index += 1
        }
        return unreadable
    }

    /// Where the versioned comment whose text starts at `start` ends when the server skips
    /// it: at its first `*/` after one level of `/* */` inside (MariaDB's `consume_comment`),
    /// or `nil` when it is not closed.
    private static func skippedCommentEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        var nested = false
        while index + 1 < bytes.count {
            if !nested, bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "*") {
                nested = true
                index += 2
            } else if bytes[index] == UInt8(ascii: "*"), bytes[index + 1] == UInt8(ascii: "/") {
                index += 2
                if !nested { return index }
                nested = false
            } else {
                index += 1
            }
        }
        return nil
    }

    /// Where a line comment whose text starts at `start` ends: before its line break, or at
    /// the end of the text.
    private func lineCommentEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\n"),
            !rules.lineCommentEndsAtCarriageReturn || bytes[end] != UInt8(ascii: "\r")
        {
            end += 1
        }
        return end
    }

    /// Whether `byte` may continue a word (an unquoted name or keyword).
    package static func isWordByte(_ byte: UInt8) -> Bool {
        isWordStart(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Whether `byte` may continue a name: a word's letters and `$` (PostgreSQL's and
    /// SQLite's names, and SQLite's parameter names, take `$` after their first letter).
    package static func isNameByte(_ byte: UInt8) -> Bool {
        isWordByte(byte) || byte == UInt8(ascii: "$")
    }

    /// Whether `byte` may start a word.
    package static func isWordStart(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    private func literal(_ bytes: [UInt8], _ start: Int, escapes: Bool, _ sql: String) throws -> Int {
        var end = try quoted(
            bytes, start, close: UInt8(ascii: "'"), doubled: true, backslashes: escapes, sql, "a string literal")
        guard rules.continuedLiterals else { return end }
        // PostgreSQL continues a literal across white space that holds a line break
        // (`'a'⏎'b'` is 'ab'), in the same mode: a continued `E'…'` keeps its escapes.
        while let next = Self.continuation(bytes, after: end) {
            end = try quoted(
                bytes, next, close: UInt8(ascii: "'"), doubled: true, backslashes: escapes, sql, "a string literal")
        }
        return end
    }

    /// Where the literal continuing the one that ended at `end` starts, if one does:
    /// PostgreSQL's rule (its scanner's `quotecontinue`): horizontal white space or a `--`
    /// comment, a line break, then white space or `--` comments each ended by a line
    /// break, then a quote.
    private static func continuation(_ bytes: [UInt8], after end: Int) -> Int? {
        var index = end
        func isLineBreak(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") }
        while index < bytes.count {
            if bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0C {
                index += 1
            } else if bytes[index] == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-")
            {
                index += 2
                while index < bytes.count, !isLineBreak(bytes[index]) { index += 1 }
            } else {
                break
            }
        }
        guard index < bytes.count, isLineBreak(bytes[index]) else { return nil }
        index += 1
        while index < bytes.count {
            if isSpace(bytes[index]) {
                index += 1
            } else if bytes[index] == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-")
            {
                var commentEnd = index + 2
                while commentEnd < bytes.count, !isLineBreak(bytes[commentEnd]) { commentEnd += 1 }
                guard commentEnd < bytes.count else { return nil }
                index = commentEnd + 1
            } else {
                break
            }
        }
        return index < bytes.count && bytes[index] == UInt8(ascii: "'") ? index : nil
    }

    /// SQLite's named parameter at `start` (as its tokenizer reads one: name characters,
    /// `::` inside, and a `(…)` suffix ending at `)` or a space), or `nil` when no name
    /// follows the prefix.
    private func sqliteParameter(_ bytes: [UInt8], _ start: Int, _ sql: String) throws -> Int? {
        var index = start + 1
        var nameLength = 0
        while index < bytes.count {
            let byte = bytes[index]
            if Self.isNameByte(byte) {
                nameLength += 1
                index += 1
            } else if byte == UInt8(ascii: "("), nameLength > 0 {
                index += 1
                while index < bytes.count, !Self.isSpace(bytes[index]), bytes[index] != UInt8(ascii: ")") { index += 1 }
                guard index < bytes.count, bytes[index] == UInt8(ascii: ")") else {
                    throw DALError(.invalidSQL, "a parameter's (…) suffix is not closed", sql: sql)
                }
                return index + 1
            } else if byte == UInt8(ascii: ":"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ":") {
                index += 2
            } else {
                break
            }
        }
        return nameLength > 0 ? index : nil
    }

    /// Whether `byte` is white space between tokens (space, tab, line feed, vertical tab,
    /// form feed, carriage return).
    package static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
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
            // Comments that do not nest (SQLite's, MariaDB's) take no `/*` inside: the `*` of
            // `/*/` is the start of the `*/` that ends one.
            if bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "*"),
                depth == 0 || rules.nestedBlockComments
            {
                depth += 1
                index += 2
            } else if bytes[index] == UInt8(ascii: "*"), bytes[index + 1] == UInt8(ascii: "/") {
                depth -= 1
                index += 2
                // SQLite's comments do not nest: the first `*/` ends one.
                if depth == 0 || !rules.nestedBlockComments { return index }
            } else {
                index += 1
            }
        }
        throw DALError(.invalidSQL, "a block comment is not closed", sql: sql)
    }

    /// The end of the dollar-quoted string starting at `start`, or `nil` when the `$`
    /// there starts none (a parameter `$1`, a lone `$`; a `$` inside a word is part of
    /// the word's token and never reaches here).
    private func dollarQuote(_ bytes: [UInt8], _ start: Int, _ sql: String) throws -> Int? {
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
