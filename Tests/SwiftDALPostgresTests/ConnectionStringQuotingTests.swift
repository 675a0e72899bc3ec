import Testing

@testable import SwiftDALPostgres

/// A multi-host connection string is split into one string per host, each setting
/// single-quoted again: every quote and backslash of a value escaped, also one a combining
/// mark follows (one `Character` with it, but two characters to libpq).
@Suite struct ConnectionStringQuotingTests {
    @Test func everyQuoteAndBackslashOfAValueIsEscaped() throws {
        #expect(PostgresConnect.quoted("p'\u{301}w\\\u{301}x'y") == "p\\'\u{301}w\\\\\u{301}x\\'y")
        let password = "p'\u{301}wSECRET\\\u{301}"
        let strings = try #require(
            PostgresConnect.singleHostStrings("host=a,b port=5432 password='p\\'\u{301}wSECRET\\\\\u{301}'"))
        #expect(strings.count == 2)
        for string in strings {
            #expect(string.contains("password='\(PostgresConnect.quoted(password))'"), "\(string)")
            // Read back as one setting: the same password, whole.
            let again = try #require(PostgresConnect.singleHostStrings(string.replacing("host='", with: "host='z,")))
            #expect(again.allSatisfy { $0.contains("password='\(PostgresConnect.quoted(password))'") })
        }
    }
}
