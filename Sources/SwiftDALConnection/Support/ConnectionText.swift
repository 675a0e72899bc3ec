import Foundation

/// What the engines share about the text that names a server: a URI
/// (`postgresql://`, `mysql://`, `mariadb://`) or a libpq keyword string.
package enum ConnectionText {
    /// `text` without its password, for what is printed or written to a file: a URI's
    /// `user:password@` loses `:password`, a URI's `password=` parameter is dropped, and so
    /// is a keyword string's `password=…` (quoted or not). Anything else is kept as it is.
    ///
    /// For example, `ConnectionText.withoutPassword("mysql://app:s3cret@db/shop?socket=/s")`
    /// is `"mysql://app@db/shop?socket=/s"`, and
    /// `ConnectionText.withoutPassword("host=/tmp password='a b' dbname=shop")` is
    /// `"host=/tmp dbname=shop"`.
    package static func withoutPassword(_ text: String) -> String {
        if let scheme = text.range(of: "://") {
            return uriWithoutPassword(text, authorityStart: scheme.upperBound)
        }
        return keywordsWithoutPassword(text)
    }

    /// A URI without the password of its user information and of its query.
    private static func uriWithoutPassword(_ uri: String, authorityStart: String.Index) -> String {
        let rest = uri[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? uri.endIndex
        var result = String(uri[..<authorityStart])
        let authority = uri[authorityStart..<authorityEnd]
        // The last @ ends the user information: a password with an unencoded @ goes too.
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            result += authority[..<colon] + authority[at...]
        } else {
            result += authority
        }
        let afterAuthority = uri[authorityEnd...]
        guard let question = afterAuthority.firstIndex(of: "?") else { return result + afterAuthority }
        result += afterAuthority[..<question]
        let fragmentStart = afterAuthority[question...].firstIndex(of: "#") ?? afterAuthority.endIndex
        let kept = afterAuthority[afterAuthority.index(after: question)..<fragmentStart]
            .split(separator: "&", omittingEmptySubsequences: false)
            .filter { parameter in
                let name = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                return name.removingPercentEncoding?.lowercased() != "password"
            }
        if !kept.isEmpty { result += "?" + kept.joined(separator: "&") }
        return result + afterAuthority[fragmentStart...]
    }

    /// A libpq keyword string without its `password=…` (a quoted value may hold spaces and
    /// backslash escapes; an unquoted one ends at a space).
    private static func keywordsWithoutPassword(_ text: String) -> String {
        let pattern = #"(^|\s)password\s*=\s*('([^'\\]|\\.)*('|$)|[^\s']*)"#
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return text }
        let range = NSRange(text.startIndex..., in: text)
        return expression.stringByReplacingMatches(in: text, range: range, withTemplate: "$1")
            .trimmingCharacters(in: .whitespaces)
    }
}
