/// How table and column names become Swift names in generated code.
///
/// Names are split into words at every character that cannot appear in a Swift
/// identifier (`_`, spaces, punctuation) and at lower-to-upper case changes, then
/// joined in camel case. Acronyms that Swift spells in one case (`id`, `url`, `uuid`…)
/// are upper-cased after the first word, as the API Design Guidelines ask:
/// `user_id` → `userID`. Reserved words are escaped with backticks.
enum Naming {
    /// Words written in one case in Swift names.
    static let acronyms: Set<String> = ["id", "url", "uri", "uuid", "ip", "json", "xml", "html", "http", "https", "api", "sql"]

    /// Words that must be escaped to be used as a property name.
    static let reservedWords: Set<String> = [
        "Any", "Protocol", "Self", "Type", "as", "associatedtype", "break", "case", "catch", "class", "continue",
        "default", "defer", "deinit", "do", "else", "enum", "extension", "fallthrough", "false", "fileprivate",
        "for", "func", "guard", "if", "import", "in", "init", "inout", "internal", "is", "let", "nil", "open",
        "operator", "precedencegroup", "private", "protocol", "public", "repeat", "rethrows", "return", "self",
        "some", "static", "struct", "subscript", "super", "switch", "throw", "throws", "true", "try", "typealias",
        "var", "where", "while",
    ]

    /// The words of `name`, lower-cased: `"UserID"` → `["user", "id"]`, `"HTTPLogs"` →
    /// `["http", "logs"]`, `"event log"` → `["event", "log"]`.
    static func words(_ name: String) -> [String] {
        var words = [String]()
        var current = ""
        var previous: Character?
        func finish() {
            if !current.isEmpty { words.append(current.lowercased()) }
            current = ""
        }
        let characters = Array(name)
        for (position, character) in characters.enumerated() {
            guard character.isASCII && (character.isLetter || character.isNumber) else {
                finish()
                previous = nil
                continue
            }
            if character.isUppercase, let previous {
                // "userID" splits before "I"; "HTTPLogs" before "L" (the end of an acronym).
                let next = position + 1 < characters.count ? characters[position + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    finish()
                }
            }
            current.append(character)
            previous = character
        }
        finish()
        return words
    }

    /// `words` joined in camel case, the first word lower-case (`lowerFirst`) or capitalized.
    static func camelCase(_ words: [String], lowerFirst: Bool) -> String {
        var result = ""
        for (position, word) in words.enumerated() {
            if position == 0 && lowerFirst {
                result += word
            } else if acronyms.contains(word) {
                result += word.uppercased()
            } else {
                result += word.prefix(1).uppercased() + word.dropFirst()
            }
        }
        return result
    }

    /// The English singular of a plural table-name word, by the common rules only
    /// (`users` → `user`, `categories` → `category`, `boxes` → `box`, `status` stays).
    static func singular(_ word: String) -> String {
        let irregular = ["people": "person", "children": "child", "men": "man", "women": "woman", "data": "data"]
        if let singular = irregular[word] { return singular }
        for ending in ["ss", "us", "is"] where word.hasSuffix(ending) { return word }
        if word.hasSuffix("ies") && word.count > 3 { return String(word.dropLast(3)) + "y" }
        for ending in ["sses", "xes", "ches", "shes", "zzes"] where word.hasSuffix(ending) {
            return String(word.dropLast(2))
        }
        if word.hasSuffix("s") && word.count > 1 { return String(word.dropLast()) }
        return word
    }

    /// The type-name stem of a table: its words, the last one singular, in upper camel
    /// case (`user_tags` → `UserTag`), prefixed with `T` when it would start with a digit.
    static func typeStem(ofTable table: String) -> String {
        var parts = words(table)
        if let last = parts.popLast() { parts.append(singular(last)) }
        let stem = camelCase(parts, lowerFirst: false)
        if stem.isEmpty { return "Table" }
        return stem.first?.isNumber == true ? "T" + stem : stem
    }

    /// The property name of a column (`created_at` → `createdAt`), before escaping:
    /// `column` plus its position when nothing usable is left, `c` in front of a
    /// leading digit, `selfColumn` for `self`.
    static func propertyName(ofColumn column: String, position: Int) -> String {
        let name = camelCase(words(column), lowerFirst: true)
        if name.isEmpty { return "column\(position + 1)" }
        // A parameter named `self` would hide the instance in the memberwise initializer.
        if name == "self" { return "selfColumn" }
        return name.first?.isNumber == true ? "c" + name : name
    }

    /// `name` as it must be written in a declaration (backticks around reserved words).
    static func escaped(_ name: String) -> String {
        reservedWords.contains(name) ? "`\(name)`" : name
    }

    /// `name` as an argument label at a call site: keywords need no backticks there,
    /// except the three that would read as parameter modifiers.
    static func argumentLabel(_ name: String) -> String {
        ["inout", "var", "let"].contains(name) ? "`\(name)`" : name
    }

    /// `text` as a Swift string literal.
    static func stringLiteral(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                literal += "\\u{\(String(scalar.value, radix: 16))}"
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "\""
    }
}
