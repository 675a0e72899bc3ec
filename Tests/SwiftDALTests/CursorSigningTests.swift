import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@testable import SwiftDAL

/// Page cursors as tokens: the signing key, refusal before any SQL, the token's forms.
@Suite struct CursorSigningTests {
    @Test func aSigningKeyNeedsSixteenBytesAndNeverShowsItsSecret() throws {
        #expect(#expect(throws: DALError.self) { _ = try CursorSigningKey(secret: "too short") }?.code == .invalidValue)
        #expect(
            #expect(throws: DALError.self) { _ = try CursorSigningKey(secret: [UInt8](repeating: 1, count: 15)) }?.code
                == .invalidValue)
        let key = try CursorSigningKey(secret: "sixteen bytes ok")
        #expect(!"\(key)".contains("sixteen"))
        #expect("\(CursorSigningKey.processDefault)" == "CursorSigningKey(…)")
    }

    /// The process default key is made of 32 random bytes, so that no one can rebuild it and
    /// sign a cursor of their own: its secret is not one a guesser tries first (a byte
    /// repeated, all zeros, a counting sequence), and each secret made is new.
    @Test func theProcessDefaultKeyComesFromThirtyTwoRandomBytes() throws {
        var guesses = (0...255).map { [UInt8](repeating: UInt8($0), count: 32) }
        guesses.append((0..<32).map { UInt8($0) })
        guesses.append(Array("SwiftDAL page cursor v1".utf8))
        for guess in guesses {
            #expect(
                CursorSigningKey.processDefault.macKey != (try CursorSigningKey(secret: guess)).macKey,
                "the default key is made from \(guess)")
        }
        let secrets = (0..<8).map { _ in CursorSigningKey.randomSecret() }
        #expect(secrets.allSatisfy { $0.count == 32 })
        #expect(Set(secrets).count == secrets.count)  // each one new
        // 32 bytes drawn at random hold ~30 different values (fewer than 16: p < 1e-12).
        #expect(secrets.allSatisfy { Set($0).count >= 16 }, "\(secrets)")
    }

    /// A refused cursor is refused before any SQL runs: the recorder sees no statement.
    @Test func aRefusedCursorRunsNoSQL() throws {
        let sample = try Sample()
        let page = try sample.users.findPage(limit: 2, condition: "age > \(0)", orderBy: "age DESC")
        let token = try #require(page.nextCursor?.token)
        sample.recorder.reset()
        for bad in [String(token.dropLast()), token + "AA", "' OR 1=1; DROP TABLE users; --", ""] {
            #expect(
                #expect(throws: DALError.self) {
                    _ = try sample.users.findPage(
                        after: PageCursor(bad), limit: 2, condition: "age > \(0)", orderBy: "age DESC")
                }?
                .code == .invalidCursor)
        }
        #expect(
            #expect(throws: DALError.self) {
                _ = try sample.users.findPage(after: PageCursor(token), limit: 2, orderBy: "age DESC")
            }?.code
                == .invalidCursor)
        #expect(sample.recorder.all.isEmpty, "\(sample.recorder.all)")
        // The same token with the same query is accepted, and bound: the SQL holds no value.
        let next = try sample.users.findPage(
            after: PageCursor(token), limit: 2, condition: "age > \(0)", orderBy: "age DESC")
        #expect(next.items.count == 2)
        let sql = try #require(sample.recorder.last)
        #expect(
            sql.contains(#"WHERE (age > ?) AND (("age", "id") < (?, ?)) ORDER BY "age" DESC, "id" DESC LIMIT ?"#),
            "\(sql)")
        #expect(try sample.users.getRecordCount() == 8)
    }

    @Test func aCursorSurvivesAsItsTokenTextAndAsJSON() throws {
        let sample = try Sample()
        let page = try sample.users.findPage(limit: 3, orderBy: "name")
        let cursor = try #require(page.nextCursor)
        let json = try JSONEncoder().encode(cursor)
        #expect(String(decoding: json, as: UTF8.self) == "\"\(cursor.token)\"")
        let decoded = try JSONDecoder().decode(PageCursor.self, from: json)
        let viaJSON = try sample.users.findPage(after: decoded, limit: 3, orderBy: "name")
        let viaText = try sample.users.findPage(after: PageCursor(cursor.description), limit: 3, orderBy: "name")
        #expect(viaJSON.items == viaText.items)
        #expect(
            viaJSON.items.compactMap(\.id)
                == Array(try sample.users.getAll(orderBy: "name, id").compactMap(\.id)[3..<6]))
        #expect(cursor.token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })  // URL-safe
    }
}
