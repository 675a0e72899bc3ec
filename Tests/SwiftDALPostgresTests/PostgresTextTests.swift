import Foundation
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import Testing

/// The text-format parsers that read libpq's values in place (no server needed).
@Suite struct PostgresTextTests {
    /// Parses `text` as libpq hands it over: followed by a NUL.
    private func double(_ text: String) -> Double? {
        let bytes = Array(text.utf8) + [0]
        return bytes.withUnsafeBufferPointer { PostgresText.double(UnsafeBufferPointer(rebasing: $0.dropLast())) }
    }

    /// What the C library reads (correctly rounded), the reference for every case.
    private func reference(_ text: String) -> Double? {
        Double(text).flatMap { $0.isNaN ? nil : $0 }
    }

    /// A statement's first word is read past blanks, parentheses and comments (nested
    /// block comments included), and never past the end of an unterminated one.
    @Test func aStatementsFirstWordIsReadPastComments() {
        let cases: [(sql: String, word: String)] = [
            ("COMMIT", "commit"), ("  \n\t(SELECT 1)", "select"), ("-- done\nCOMMIT", "commit"),
            ("--\r\nrollback", "rollback"), ("/* a */ /* b /* nested */ still b */ End", "end"),
            ("/**/Select", "select"), ("-- only a comment", ""), ("/* unterminated COMMIT", ""),
            ("/* x */ -- y\n ( ( values (1)))", "values"), ("- 1", ""), ("/ 2", ""), ("", ""),
            ("savepointed", "savepointe")
        ]
        for (sql, word) in cases {
            #expect(StatementStart.firstWord(of: sql, limit: 10).word == word, "\(sql.debugDescription)")
        }
        #expect(StatementStart.firstWord(of: "-- c\nROLLBACK TO x", limit: 10).end == 13)
        #expect(
            StatementStart.packedFirstWord(of: "/* report */ SELECT 1") == StatementStart.packedFirstWord(of: "select"))
        #expect(StatementStart.packedFirstWord(of: "-- x\nsavepoint a") == 0)  // longer than six letters
        // A ROLLBACK undoes part of the transaction only when its next words say TO.
        for (sql, partial) in [
            ("ROLLBACK TO s", true), ("rollback work to savepoint s", true), ("ROLLBACK TRANSACTION TO s", true),
            ("ROLLBACK /* to */ TO s", true), ("ROLLBACK -- back to the start", false), ("ROLLBACK", false),
            ("ROLLBACK AND CHAIN", false), ("ROLLBACK PREPARED 'to'", false)
        ] {
            let end = StatementStart.firstWord(of: sql, limit: 10).end
            #expect(StatementStart.rollsBackToASavepoint(sql, after: end) == partial, "\(sql)")
            #expect(StatementStart.rollsBackAPreparedTransaction(sql, after: end) == sql.contains("PREPARED"))
        }
    }

    @Test func everyDoubleReadsBackToTheSameBits() {
        var generator = SystemRandomNumberGenerator()
        var checked = 0
        var wrong = [String]()
        for _ in 0..<100_000 {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            // PostgreSQL's shortest digits (Swift writes the same digits), and 17 digits.
            for text in [value.description, String(format: "%.17g", value), String(format: "%.6e", value)] {
                if double(text)?.bitPattern != reference(text)?.bitPattern { wrong.append(text) }
                checked += 1
            }
        }
        #expect(checked > 250_000)
        #expect(wrong.isEmpty, "\(wrong.count) read wrong, the first: \(wrong.prefix(5))")
    }

    @Test func decimalsOfEveryLengthAndExponentReadLikeStrtod() {
        var generator = SystemRandomNumberGenerator()
        var wrong = [String]()
        for _ in 0..<100_000 {
            let digitCount = Int.random(in: 1...20, using: &generator)
            var digits = String(
                (0..<digitCount).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            if Bool.random(using: &generator), digitCount > 1 {
                digits.insert(".", at: digits.index(digits.startIndex, offsetBy: Int.random(in: 1..<digitCount)))
            }
            let exponent = Int.random(in: -40...40, using: &generator)
            let sign = Bool.random(using: &generator) ? "-" : ""
            for text in [sign + digits, "\(sign)\(digits)e\(exponent)", "\(sign)\(digits)E+\(abs(exponent))"]
            where double(text)?.bitPattern != reference(text)?.bitPattern {
                wrong.append(text)
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) read wrong, the first: \(wrong.prefix(5))")
    }

    @Test func edgesAndMalformedInput() {
        #expect(double("-0")?.sign == .minus)
        #expect(double("0") == 0)
        #expect(double("9007199254740993") == 9_007_199_254_740_992)  // 2^53 + 1 rounds to even
        // 17 digits (more than 53 bits): rounding them to a double first, then dividing,
        // would round twice and miss by one unit.
        #expect(double("44667375401.9253275") == 44_667_375_401.925_33)
        #expect(double("1e22") == 1e22)
        #expect(double("1e23") == 1e23)
        #expect(double("4.9406564584124654e-324") == .leastNonzeroMagnitude)
        #expect(double("1.7976931348623157e+308") == .greatestFiniteMagnitude)
        #expect(double("Infinity") == .infinity)
        #expect(double("-Infinity") == -.infinity)
        #expect(double(".5") == 0.5)
        #expect(double("1.") == 1)
        for bad in ["NaN", "", "-", ".", "e5", "1e", "1e+", "1x", "1.5.5", "--1", "1e5x"] {
            #expect(double(bad) == nil, "\(bad)")
        }
    }

    @Test func integersAcceptExactlyTheInt64Range() {
        func integer(_ text: String) -> Int64? {
            Array(text.utf8).withUnsafeBufferPointer { PostgresText.integer($0) }
        }
        #expect(integer("9223372036854775807") == .max)
        #expect(integer("-9223372036854775808") == .min)
        #expect(integer("9223372036854775808") == nil)
        #expect(integer("-9223372036854775809") == nil)
        #expect(integer("-0") == 0)
        // Either side of the 18-digit fast path, and a long run of leading zeros.
        #expect(integer("999999999999999999") == 999_999_999_999_999_999)
        #expect(integer("-999999999999999999") == -999_999_999_999_999_999)
        #expect(integer("1000000000000000000") == 1_000_000_000_000_000_000)
        #expect(integer("00000000000000000000042") == 42)
        #expect(integer("12345678901234567a") == nil)
        for bad in ["", "-", "1.0", "+1", " 1", "1e3"] { #expect(integer(bad) == nil, "\(bad)") }
    }
}
