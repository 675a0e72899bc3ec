import Foundation

/// What the engines share about the text that names a server: a URI
/// (`postgresql://`, `mysql://`, `mariadb://`) or a libpq keyword string.
package enum ConnectionText {
    /// `text` without its password, for what is printed or written to a file: a URI's
    /// `user:password@` loses `:password`, a URI's `password=` parameter is dropped, and so
    /// is a keyword string's `password=…` (quoted or not, escaped or not). Where the text
    /// cannot be read, everything from the word `password` on is left out.
    ///
    /// Read the way the most lenient of the engines' parsers reads it, so that nothing a
    /// parser takes for the password is left: libpq reads a URI's user information up to
    /// its first `@` or `/` (a raw `?` or `#` in the password included), MariaDB's URL
    /// parser up to its last `@`; a keyword's value may follow a quoted one without a space,
    /// and an unquoted value takes backslash escapes.
    ///
    /// For example, `ConnectionText.withoutPassword("mysql://app:s3cret@db/shop?socket=/s")`
    /// is `"mysql://app@db/shop?socket=/s"`, and
    /// `ConnectionText.withoutPassword("host=/tmp password='a b' dbname=shop")` is
    /// `"host=/tmp dbname=shop"`.
    package static func withoutPassword(_ text: String) -> String {
        if let authorityStart = uriAuthorityStart(text) {
            return uriWithoutPassword(text, authorityStart: authorityStart)
        }
        return keywordsWithoutPassword(text)
    }

    /// Where a URI's authority starts: after `scheme://` at the start of `text` (a scheme
    /// is a letter, then letters, digits, `+`, `-` or `.`); `nil` when `text` is no URI.
    private static func uriAuthorityStart(_ text: String) -> String.Index? {
        guard let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return separator.upperBound
    }

    /// A URI without the password of its user information and of its query.
    private static func uriWithoutPassword(_ uri: String, authorityStart: String.Index) -> String {
        // The user information ends at the last @ before the query: a password with a raw
        // `/` and `@` (`u:p@ss/x@h/db`) has libpq read a host out of it, which must not be
        // shown either (a database name with an @ in it loses its host here, nothing more).
        // (A `?` or `#` before the path's first `/` is the password's, as libpq reads it.)
        let slash = uri[authorityStart...].firstIndex(of: "/") ?? uri.endIndex
        let queryStart = uri[slash...].firstIndex(where: { $0 == "?" || $0 == "#" }) ?? uri.endIndex
        var result = String(uri[..<authorityStart])
        var rest = uri[authorityStart...]
        if let at = uri[authorityStart..<queryStart].lastIndex(of: "@") {
            let userInformation = uri[authorityStart..<at]
            result += userInformation.firstIndex(of: ":").map { userInformation[..<$0] } ?? userInformation
            rest = uri[at...]
        }
        guard let question = rest.firstIndex(of: "?") else { return result + rest }
        result += rest[..<question]
        let fragmentStart = rest[question...].firstIndex(of: "#") ?? rest.endIndex
        let kept = rest[rest.index(after: question)..<fragmentStart]
            .split(separator: "&", omittingEmptySubsequences: false)
            .filter { parameter in
                let name = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                return (name.removingPercentEncoding ?? String(name)).lowercased() != "password"
            }
        if !kept.isEmpty { result += "?" + kept.joined(separator: "&") }
        return result + rest[fragmentStart...]
    }

    /// A libpq keyword string without its `password=…`, read as libpq reads it: white
    /// space, a keyword, `=` (white space around it allowed), a value quoted with `'`
    /// (backslash escapes inside) or unquoted up to white space (backslash escapes too).
    /// The other pairs are kept as written, one space apart.
    private static func keywordsWithoutPassword(_ text: String) -> String {
        let bytes = Array(text.utf8)
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        var kept = [String]()
        var index = 0
        while true {
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count else { break }
            let pairStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "="), !isSpace(bytes[index]) { index += 1 }
            let keyword = String(decoding: bytes[pairStart..<index], as: UTF8.self)
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                return unreadable(text)  // libpq refuses it: "missing = after keyword"
            }
            index += 1
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            if index < bytes.count, bytes[index] == UInt8(ascii: "'") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "'") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count else { return unreadable(text) }  // unterminated
                index += 1
            } else {
                while index < bytes.count, !isSpace(bytes[index]) {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
            }
            index = min(index, bytes.count)
            if keyword.lowercased() != "password" {
                kept.append(String(decoding: bytes[pairStart..<index], as: UTF8.self))
            }
        }
        return kept.joined(separator: " ")
    }

    /// A text that cannot be read as a keyword string: up to the word `password`, which
    /// may begin what follows it.
    private static func unreadable(_ text: String) -> String {
        guard let password = text.range(of: "password", options: .caseInsensitive) else { return text }
        return String(text[..<password.lowerBound]).trimmingCharacters(in: .whitespaces)
    }
}
