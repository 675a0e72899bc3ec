import Foundation

/// How table and column names become Swift names in generated code.
///
/// Names are split into words at every character that Swift does not accept in an
/// identifier (spaces, punctuation, symbols; see ``SwiftIdentifier/isKept(_:)``), at `_`,
/// and at lower-to-upper case changes, then joined in camel case: letters of every
/// script, digits, emoji and combining marks are kept (`客户` stays `客户`). Acronyms
/// that Swift spells in one case (`id`, `url`, `uuid`…) are upper-cased after the first
/// word, as the API Design Guidelines ask: `user_id` → `userID`. Keywords are escaped
/// with backticks when written (``SwiftIdentifier/escaped(_:)``).
enum Naming {
    /// Words written in one case in Swift names.
    static let acronyms: Set<String> = [
        "id", "url", "uri", "uuid", "ip", "json", "xml", "html", "http", "https", "api", "sql"
    ]

    /// Property names that would clash with a member the generated entity already has,
    /// and what is used instead: a parameter named `self` hides the instance in the
    /// memberwise initializer, and a property `hashValue` makes `Hashable`'s ambiguous.
    /// (Static members such as `tableName`, and methods such as `hash(into:)`, do not
    /// clash with a stored property of the same base name.)
    static let clashingMemberNames: [String: String] = ["self": "selfColumn", "hashValue": "hashValueColumn"]

    /// The words of `name`, lower-cased: `"UserID"` → `["user", "id"]`, `"HTTPLogs"` →
    /// `["http", "logs"]`, `"event log"` → `["event", "log"]`, `"客户 订单"` → `["客户", "订单"]`.
    static func words(_ name: String) -> [String] {
        var words = [String]()
        var current = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        func finish() {
            if !current.isEmpty { words.append(String(current).lowercased()) }
            current = String.UnicodeScalarView()
        }
        let scalars = Array(name.unicodeScalars)
        for (position, scalar) in scalars.enumerated() {
            guard scalar != "_" && SwiftIdentifier.isKept(scalar) else {
                finish()
                previous = nil
                continue
            }
            if scalar.properties.isUppercase, let previous {
                // "userID" splits before "I"; "HTTPLogs" before "L" (the end of an acronym).
                let next = scalars[(position + 1)...].first { !isMark($0) }
                if previous.properties.isLowercase || previous.properties.numericType != nil
                    || (previous.properties.isUppercase && next?.properties.isLowercase == true)
                {
                    finish()
                }
            }
            current.append(scalar)
            // A combining mark belongs to the letter before it: it decides no split.
            if !isMark(scalar) { previous = scalar }
        }
        finish()
        return words
    }

    /// Whether `scalar` is a combining mark.
    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
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
        if let singular = irregularSingulars[word] { return singular }
        for ending in ["ss", "us", "is"] where word.hasSuffix(ending) { return word }
        if word.hasSuffix("ies") {
            // `movies` → `movie`, `ties` → `tie`; otherwise `categories` → `category`.
            let withoutS = String(word.dropLast())
            if word.count <= 4 || ieNouns.contains(where: { withoutS.hasSuffix($0) }) { return withoutS }
            return String(word.dropLast(3)) + "y"
        }
        // `statuses` → `status`, `aliases` → `alias` (but `houses` → `house`, `cases` → `case`).
        for ending in ["tuses", "buses", "nuses", "ruses", "puses", "suses", "iases"] where word.hasSuffix(ending) {
            return String(word.dropLast(2))
        }
        for ending in ["sses", "xes", "ches", "shes", "zzes"] where word.hasSuffix(ending) {
            return String(word.dropLast(2))
        }
        if word.hasSuffix("s") && word.count > 1 { return String(word.dropLast()) }
        return word
    }

    /// Plurals no ending rule reads: irregular ones, and those that are their own singular.
    static let irregularSingulars = [
        "people": "person", "children": "child", "men": "man", "women": "woman", "data": "data", "media": "media",
        "series": "series", "species": "species", "news": "news", "analyses": "analysis", "crises": "crisis",
        "theses": "thesis", "indices": "index", "matrices": "matrix", "vertices": "vertex", "criteria": "criterion",
        "heroes": "hero", "potatoes": "potato", "tomatoes": "tomato", "echoes": "echo", "abuses": "abuse"
    ]

    /// Nouns ending in `ie`, whose plural `-ies` keeps the `ie` (`movies`, `cookies`).
    static let ieNouns = [
        "movie", "cookie", "calorie", "zombie", "rookie", "selfie", "brownie", "goalie", "genie", "prairie",
        "sortie", "hippie", "auntie", "smoothie", "freebie", "newbie", "walkie", "talkie", "pixie", "birdie"
    ]

    /// The type-name stem of a table: its words, the last one singular, in upper camel
    /// case (`user_tags` → `UserTag`, `客户` → `客户`), prefixed with `T` when it would not
    /// start an identifier (a digit, a combining mark), `Table` when nothing is left.
    static func typeStem(ofTable table: String) -> String {
        var parts = words(table)
        if let last = parts.popLast() { parts.append(singular(last)) }
        let stem = identifier(camelCase(parts, lowerFirst: false))
        if stem.isEmpty { return "Table" }
        return composed(startsIdentifier(stem) ? stem : "T" + stem)
    }

    /// The property name of a column (`created_at` → `createdAt`), before escaping:
    /// `column` plus its position when nothing usable is left, `c` in front of what
    /// cannot start an identifier (`2fa` → `c2fa`), and the replacements of
    /// ``clashingMemberNames`` (`self` → `selfColumn`).
    static func propertyName(ofColumn column: String, position: Int) -> String {
        let name = identifier(camelCase(words(column), lowerFirst: true))
        if name.isEmpty { return "column\(position + 1)" }
        if let replacement = clashingMemberNames[name] { return replacement }
        return composed(startsIdentifier(name) ? name : "c" + name)
    }

    /// `text` without the scalars a name does not keep (a case mapping may, in theory,
    /// make one: the result is checked rather than trusted).
    private static func identifier(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.filter(SwiftIdentifier.isKept))
        return String(scalars)
    }

    /// `name` in Unicode normalization form C (`e` + U+0301 becomes `é`, as keyboards
    /// type it): the compiler compares identifiers scalar by scalar, without normalizing,
    /// so a decomposed name could not be typed to use it. The result is checked again.
    private static func composed(_ name: String) -> String {
        identifier(name.precomposedStringWithCanonicalMapping)
    }

    /// Whether the first scalar of `name` may start an identifier.
    private static func startsIdentifier(_ name: String) -> Bool {
        name.unicodeScalars.first.map(SwiftIdentifier.isHead) ?? false
    }
}
