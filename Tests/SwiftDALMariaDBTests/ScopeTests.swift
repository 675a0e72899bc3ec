import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// A tenant's note, soft-deleted.
private struct TenantNote: Entity, Codable, Hashable {
    static let tableName = "notes"
    var id: Int64?
    var tenantID: Int64?
    var title: String
    var deletedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, title
        case tenantID = "tenant_id"
        case deletedAt = "deleted_at"
    }
}

private final class TenantNoteDAL: BaseDAL<TenantNote>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "tenant_id", softDeleteColumn: "deleted_at") }
}

/// A scope on MariaDB, whose upsert (`ON DUPLICATE KEY UPDATE`) has no `WHERE`: the guard
/// lives in the clause, and a row outside the scope is refused, never overwritten.
@Suite struct MariaDBScopeTests {
    @Test func anUpsertOntoAnotherTenantsKeyIsRefusedAndWritesNothing() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE notes (id BIGINT AUTO_INCREMENT PRIMARY KEY, tenant_id BIGINT NOT NULL,
                        title VARCHAR(100) NOT NULL, deleted_at DATETIME(3),
                        UNIQUE KEY notes_title (tenant_id, title))
                    """)
        }
        let one = TenantNoteDAL(database: pool, tenant: Int64(1))
        let two = TenantNoteDAL(database: pool, tenant: Int64(2))
        try one.insert(TenantNote(id: 10, title: "one's"))
        let stolen = TenantNote(id: 10, title: "two's")
        #expect(#expect(throws: DALError.self) { try two.upsert(stolen) }?.code == .scopeViolation)
        #expect(#expect(throws: DALError.self) { try two.upsertRange([stolen]) }?.code == .scopeViolation)
        #expect(try outside.sql("SELECT tenant_id, title FROM notes") == "1\tone's")
        // Inside the scope: an insert, then an update, and a soft-deleted row is outside it.
        try two.upsert(TenantNote(id: 20, title: "new"))
        try two.upsert(TenantNote(id: 20, title: "renamed"))
        #expect(try outside.sql("SELECT tenant_id, title FROM notes WHERE id = 20") == "2\trenamed")
        #expect(try two.deleteById(Int64(20)))
        #expect(
            #expect(throws: DALError.self) { try two.upsert(TenantNote(id: 20, title: "back")) }?.code
                == .scopeViolation)
        #expect(try outside.sql("SELECT title, deleted_at IS NOT NULL FROM notes WHERE id = 20") == "renamed\t1")
        // A conflict on another unique key is the duplicate key it is, not a refusal.
        try two.insert(TenantNote(id: 30, title: "taken"))
        let duplicate = #expect(throws: MariaDBError.self) { try two.upsert(TenantNote(id: 31, title: "taken")) }
        #expect(duplicate?.code == 1062)
        #expect(duplicate?.constraint == "notes_title")
        #expect(try outside.sql("SELECT COUNT(*) FROM notes WHERE id = 31") == "0")
    }

    /// Conditions whose parentheses hide in MariaDB's own quoting and comments (`#` and
    /// `-- ` comments, backslash escapes, backtick names, `/*! … */` code): each is refused,
    /// fails as SQL, or stays inside the tenant; nothing of the other tenant is read or
    /// changed (checked from outside).
    @Test func aConditionThatHidesAParenthesisInMariaDBsQuotingIsRefused() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE notes (id BIGINT AUTO_INCREMENT PRIMARY KEY, tenant_id BIGINT NOT NULL,
                        title VARCHAR(100) NOT NULL, deleted_at DATETIME(3))
                    """)
        }
        let one = TenantNoteDAL(database: pool, tenant: Int64(1))
        let two = TenantNoteDAL(database: pool, tenant: Int64(2))
        _ = try one.insertRange([TenantNote(title: "a"), TenantNote(title: "b")])
        _ = try two.insertRange([TenantNote(title: "c"), TenantNote(title: "d")])
        let hiding = [
            "1=1 # (\n) OR 1=1 OR (\n1=1 # )\n",
            "1=1 -- (\n) OR 1=1 OR (\n1=1 -- )\n",
            #"'\'' = 'a' OR 1=1) OR (1=1 OR '\'' = 'b'"#,
            "` ( ` = 1) OR (1 = 1 OR ` ) ` = 1",
            "1=1 /*! ) OR 1=1 OR (1=1 */",
            "1=1 /*M! ) OR 1=1 OR (1=1 */",
            "1=1 --x ) OR 1=1 OR ( --x 1"
        ]
        for text in hiding {
            let condition = SQL(sql: text)
            if let found = try? one.find(condition: condition) {
                #expect(found.allSatisfy { $0.tenantID == 1 }, "\(text) crossed the tenant")
            }
            if let count = try? one.getRecordCount(condition: condition) { #expect(count <= 2, "\(text)") }
            _ = try? one.deleteByCondition(condition)
        }
        #expect(
            try outside.sql("SELECT title FROM notes WHERE tenant_id = 2 AND deleted_at IS NULL ORDER BY id") == "c\nd")
    }
}
