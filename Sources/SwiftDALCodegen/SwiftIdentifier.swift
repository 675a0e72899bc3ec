/// What Swift accepts as an identifier, and how generated code writes names and text.
///
/// The character classes are those of The Swift Programming Language, "Lexical
/// Structure" (identifier-head, identifier-character), checked against the Swift 6.3
/// compiler code point by code point: it refuses U+FFF9–U+FFFD, which the book lists, and
/// takes U+00A0 for a space; both are left out here.
enum SwiftIdentifier {
    /// Whether `scalar` may start an identifier.
    static func isHead(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 {
            return (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) || value == 0x5F
        }
        return headRanges.contains { $0.contains(value) }
    }

    /// Whether `scalar` may appear in an identifier after its first character.
    static func isCharacter(_ scalar: Unicode.Scalar) -> Bool {
        if isHead(scalar) { return true }
        let value = scalar.value
        return (0x30...0x39).contains(value) || continuationRanges.contains { $0.contains(value) }
    }

    /// Whether generated names keep `scalar`: an identifier character that is not one of
    /// the invisible characters the compiler accepts but a reader cannot see. The
    /// bidirectional controls (U+202A–U+202E, U+2066–U+2069) can make source text display
    /// in another order than the compiler reads it ("Trojan Source"); the soft hyphen,
    /// zero-width space, word joiner, invisible operators and byte-order mark make names
    /// that look alike. They are dropped like punctuation. The zero-width joiner and
    /// non-joiner stay: emoji sequences and several scripts (Persian, the Indic ones)
    /// need them.
    static func isKept(_ scalar: Unicode.Scalar) -> Bool {
        guard isCharacter(scalar) else { return false }
        switch scalar.value {
        case 0x00AD, 0x200B, 0x202A...0x202E, 0x2060...0x2064, 0x2066...0x2069, 0xFEFF: return false
        default: return true
        }
    }

    /// Whether `text` is a Swift identifier that generated code may use as a type name:
    /// an identifier head followed by identifier characters, not `_` alone, and not a
    /// keyword (`Any`, `Self`, `Type`, `Protocol`… would need backticks), and without the
    /// invisible characters names do not keep (``isKept(_:)``).
    ///
    /// For example, `isTypeName("客户Info")` and `isTypeName("Ünïcode")` are true;
    /// `isTypeName("2x")`, `isTypeName("Bad Name")` and `isTypeName("Type")` are false.
    static func isTypeName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, isHead(first), text != "_", !keywords.contains(text) else {
            return false
        }
        return text.unicodeScalars.allSatisfy(isKept)
    }

    /// Whether `text` may follow an identifier and leave it an identifier (a type-name
    /// suffix): only identifier characters that names keep (``isKept(_:)``), possibly none.
    static func isSuffix(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy(isKept)
    }

    /// The identifier-head ranges beyond ASCII.
    private static let headRanges: [ClosedRange<UInt32>] = [
        0xA8...0xA8, 0xAA...0xAA, 0xAD...0xAD, 0xAF...0xAF, 0xB2...0xB5, 0xB7...0xBA, 0xBC...0xBE, 0xC0...0xD6,
        0xD8...0xF6, 0xF8...0xFF, 0x100...0x2FF, 0x370...0x167F, 0x1681...0x180D, 0x180F...0x1DBF, 0x1E00...0x1FFF,
        0x200B...0x200D, 0x202A...0x202E, 0x203F...0x2040, 0x2054...0x2054, 0x2060...0x206F, 0x2070...0x20CF,
        0x2100...0x218F, 0x2460...0x24FF, 0x2776...0x2793, 0x2C00...0x2DFF, 0x2E80...0x2FFF, 0x3004...0x3007,
        0x3021...0x302F, 0x3031...0x303F, 0x3040...0xD7FF, 0xF900...0xFD3D, 0xFD40...0xFDCF, 0xFDF0...0xFE1F,
        0xFE30...0xFE44, 0xFE47...0xFFF8, 0x10000...0x1FFFD, 0x20000...0x2FFFD, 0x30000...0x3FFFD, 0x40000...0x4FFFD,
        0x50000...0x5FFFD, 0x60000...0x6FFFD, 0x70000...0x7FFFD, 0x80000...0x8FFFD, 0x90000...0x9FFFD,
        0xA0000...0xAFFFD, 0xB0000...0xBFFFD, 0xC0000...0xCFFFD, 0xD0000...0xDFFFD, 0xE0000...0xEFFFD
    ]

    /// The combining marks: identifier characters, but not heads.
    private static let continuationRanges: [ClosedRange<UInt32>] = [
        0x300...0x36F, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F
    ]

    /// Words that need backticks to be used as a name: the reserved words, and `await`,
    /// which as an expression on its own (`self.await = await`) starts an `await`.
    /// Checked against the Swift 6.3 compiler: contextual keywords such as `get`, `some`,
    /// `any`, `async`, `package`, `consuming`, `unsafe` or `isolated` need none.
    static let keywords: Set<String> = [
        "Any", "Protocol", "Self", "Type", "as", "associatedtype", "await", "break", "case", "catch", "class",
        "continue", "default", "defer", "deinit", "do", "else", "enum", "extension", "fallthrough", "false",
        "fileprivate", "for", "func", "guard", "if", "import", "in", "init", "inout", "internal", "is", "let", "nil",
        "open", "operator", "precedencegroup", "private", "protocol", "public", "repeat", "rethrows", "return",
        "self", "some", "static", "struct", "subscript", "super", "switch", "throw", "throws", "true", "try",
        "typealias", "var", "where", "while"
    ]

    /// `name` as it must be written in a declaration or after `self.` (backticks around keywords).
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// `name` as an argument label at a call site: keywords need no backticks there,
    /// except `inout`. (Swift 6.3 refuses escaped `let` and `var` labels at a call site:
    /// "keyword 'let' does not need to be escaped in argument list".)
    static func argumentLabel(_ name: String) -> String {
        name == "inout" ? "`inout`" : name
    }

    /// `text` as a Swift string literal. Control characters, line and paragraph
    /// separators and invisible format characters (the bidirectional controls among
    /// them) are written as `\u{…}` escapes, so that the literal reads as it is.
    static func stringLiteral(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            case _ where isHidden(scalar): literal += "\\u{\(String(scalar.value, radix: 16))}"
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "\""
    }

    /// `text` for a `//` comment: on one line, other controls and the bidirectional
    /// controls shown as `U+XXXX`.
    static func commentText(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\r" || scalar == "\u{85}" || scalar == "\u{2028}" || scalar == "\u{2029}" {
                result += " "
            } else if scalar.properties.generalCategory == .control || isBidirectionalControl(scalar) {
                result += "U+" + String(scalar.value, radix: 16, uppercase: true)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `scalar` is one of the characters that change the display order of text.
    private static func isBidirectionalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Whether `scalar` is a control, a line or paragraph separator, or an invisible
    /// format character (general category Cc, Zl, Zp or Cf).
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .format: return true
        default: return false
        }
    }
}
