import Foundation
import SwiftDAL
import SwiftDALMariaDB
import Testing

/// The connection's rewriting of SwiftDAL's placeholders, through a real server: what each
/// form binds (the rewriting itself is internal).
@Suite struct MariaDBPlaceholderTests {
    @Test func literalsCommentsAndQuotedNamesAreLeftAlone() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        let values = try pool.read { db -> [DatabaseValue?] in
            [
                try db.fetchScalar(DatabaseValue.self, SQL(sql: #"SELECT 'it\'s ?' /* ? */ # ?"#)),
                try db.fetchScalar(
                    DatabaseValue.self, SQL(sql: "SELECT `a?` FROM (SELECT ? AS `a?`) t", arguments: [7])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT ?1 + ?1 + ?", arguments: [1, 10])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT :a + :a", arguments: ["a": 2])),
                try db.fetchScalar(
                    DatabaseValue.self, SQL(sql: #"SELECT "a\" FROM (SELECT ? AS "a\") t"#, arguments: [8]))
            ]
        }
        #expect(values == [.text("it's ?"), .integer(7), .integer(12), .integer(4), .integer(8)])
        #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(Int.self, SQL(sql: "SELECT ? + :a", arguments: [1])) }
        }
        #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(Int.self, SQL(sql: "SELECT ?", arguments: [1, 2])) }
        }
        #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(String.self, SQL(sql: "SELECT 'open")) }
        }
    }
}
