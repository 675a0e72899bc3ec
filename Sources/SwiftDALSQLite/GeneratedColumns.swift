import Foundation
import SwiftDALConnection

/// The expressions of a SQLite table's generated columns, read from its `CREATE TABLE`
/// text: SQLite reports which columns are generated (`pragma_table_xinfo`'s `hidden`, 2
/// virtual, 3 stored) but not their expressions, which ``ColumnInfo/defaultValueSQL``
/// carries on every engine (`GENERATED ALWAYS AS (…) STORED`).
///
/// The text is read through SQLite's lexicon, so that a parenthesis, comma or `AS` inside
/// a string, a quoted name or a comment is not taken for the statement's own.
enum GeneratedColumns {
    /// A token of the statement: its kind (`nil` for a punctuation character) and bytes.
    private struct Token {
        let kind: SQLLexicon.Kind?
        let range: Range<Int>
    }

    /// The expression of each generated column in `createTable`, by the column's
    /// ``Swift/String/identifierKey``; columns whose definition cannot be read are left out.
    ///
    /// For example, `expressions(in: "CREATE TABLE t(a INT, b AS (a * 2) STORED)")["b"] == "a * 2"`.
    static func expressions(in createTable: String) -> [String: String] {
        let bytes = Array(createTable.utf8)
        guard let tokens = try? tokens(of: bytes, sql: createTable) else { return [:] }
        var expressions = [String: String]()
        for definition in columnDefinitions(tokens, bytes) {
            guard let first = definition.first, let name = name(of: first, bytes),
                let expression = generatedExpression(definition, bytes)
            else { continue }
            expressions[name.identifierKey] = expression
        }
        return expressions
    }

    /// The statement's tokens, comments left out.
    private static func tokens(of bytes: [UInt8], sql: String) throws -> [Token] {
        var tokens = [Token]()
        var index = 0
        while index < bytes.count {
            if let region = try SQLLexicon.sqlite.region(in: bytes, at: index, sql: sql) {
                if region.kind != .lineComment && region.kind != .blockComment {
                    tokens.append(Token(kind: region.kind, range: index..<region.end))
                }
                index = max(region.end, index + 1)
            } else {
                if !SQLLexicon.isSpace(bytes[index]) { tokens.append(Token(kind: nil, range: index..<(index + 1))) }
                index += 1
            }
        }
        return tokens
    }

    /// The definitions between the statement's outer parentheses, split at its top-level
    /// commas (column definitions and table constraints alike).
    private static func columnDefinitions(_ tokens: [Token], _ bytes: [UInt8]) -> [[Token]] {
        var definitions = [[Token]]()
        var current = [Token]()
        var depth = 0
        for token in tokens {
            let punctuation = token.kind == nil ? bytes[token.range.lowerBound] : 0
            if punctuation == UInt8(ascii: "(") {
                depth += 1
                if depth == 1 { continue }
            } else if punctuation == UInt8(ascii: ")") {
                depth -= 1
                if depth == 0 {
                    definitions.append(current)
                    return definitions
                }
            } else if punctuation == UInt8(ascii: ","), depth == 1 {
                definitions.append(current)
                current = []
                continue
            }
            if depth >= 1 { current.append(token) }
        }
        return []  // no closing parenthesis: not a statement SQLite accepted
    }

    /// A definition's first token as a name: a word, or a quoted name unquoted.
    private static func name(of token: Token, _ bytes: [UInt8]) -> String? {
        let text = bytes[token.range]
        switch token.kind {
        case .word:
            return String(decoding: text, as: UTF8.self)
        case .quotedName, .literal:
            guard let open = text.first, text.count >= 2 else { return nil }
            let close = open == UInt8(ascii: "[") ? UInt8(ascii: "]") : open
            var name = [UInt8]()
            var index = text.startIndex + 1
            while index < text.endIndex - 1 {
                name.append(text[index])
                // A doubled quote stands for one.
                index += text[index] == close && close != UInt8(ascii: "]") ? 2 : 1
            }
            return String(decoding: name, as: UTF8.self)
        default:
            return nil
        }
    }

    /// The text between the parentheses after a definition's top-level `AS`, or `nil`
    /// when it has none (not a generated column).
    private static func generatedExpression(_ definition: [Token], _ bytes: [UInt8]) -> String? {
        var depth = 0
        var index = 1
        while index < definition.count {
            let token = definition[index]
            let punctuation = token.kind == nil ? bytes[token.range.lowerBound] : 0
            if punctuation == UInt8(ascii: "(") { depth += 1 }
            if punctuation == UInt8(ascii: ")") { depth -= 1 }
            if depth == 0, token.kind == .word,
                String(decoding: bytes[token.range], as: UTF8.self).uppercased() == "AS",
                index + 1 < definition.count, definition[index + 1].kind == nil,
                bytes[definition[index + 1].range.lowerBound] == UInt8(ascii: "(")
            {
                return balanced(definition, from: index + 1, bytes)
            }
            index += 1
        }
        return nil
    }

    /// The text inside the parentheses that open at `definition[open]`, as written.
    private static func balanced(_ definition: [Token], from open: Int, _ bytes: [UInt8]) -> String? {
        var depth = 0
        for index in open..<definition.count {
            let token = definition[index]
            guard token.kind == nil else { continue }
            let byte = bytes[token.range.lowerBound]
            if byte == UInt8(ascii: "(") { depth += 1 }
            if byte == UInt8(ascii: ")") {
                depth -= 1
                if depth == 0 {
                    let start = definition[open].range.upperBound
                    let end = token.range.lowerBound
                    let text = String(decoding: bytes[start..<end], as: UTF8.self)
                    return text.trimmingCharacters(in: .whitespacesAndNewlines)
                }
            }
        }
        return nil
    }
}
