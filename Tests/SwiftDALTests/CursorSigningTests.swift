import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALTestSupport
import Testing

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
