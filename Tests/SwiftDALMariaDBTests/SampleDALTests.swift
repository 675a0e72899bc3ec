import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// The sample `UserDAL` (BaseDAL's SQL, unchanged) on MariaDB.
@Suite struct MariaDBSampleDALTests {
    /// `users` as the sample schema has it, in MariaDB's DDL.
    private func makeUsers() throws -> (MariaDBPool, OutsideView) {
        let (pool, outside) = try makeMariaDBPool()
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE users(id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100) NOT NULL,
                        full_name VARCHAR(200), email VARCHAR(200) NOT NULL UNIQUE, age INT NOT NULL DEFAULT 0 CHECK (age >= 0),
                        score DOUBLE NOT NULL DEFAULT 0, bio TEXT, avatar BLOB,
                        created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))
                    """)
        }
        return (pool, outside)
    }

    @Test func userDALFindsCountsAndChecksUsers() throws {
        let (pool, outside) = try makeUsers()
        defer { try? pool.close() }
        let users = UserDAL(database: pool)
        let created = Date(timeIntervalSince1970: 1_700_000_000.5)
        try users.insert(
            UserInfo(
                id: 1, name: "ann", fullName: "Ann Lee", email: "ann@example.com", age: 31, score: 1.5, bio: nil,
                avatar: Data([1, 2]), createdAt: created))
        try users.insert(UserInfo(id: 2, name: "bob", email: "bob@example.com", age: 25, createdAt: created))
        #expect(try outside.sql("SELECT COUNT(*) FROM users") == "2")
        let ann = try #require(try users.findById(Int64(1)))
        #expect(ann.fullName == "Ann Lee")
        #expect(ann.avatar == Data([1, 2]))
        #expect(ann.createdAt == created)
        #expect(try users.find(condition: "age > \(30)").map(\.name) == ["ann"])
        #expect(try users.getRecordCount() == 2)
        #expect(try users.getRecordCount(condition: "name LIKE \("b%")") == 1)
        #expect(try users.isExist(fieldName: "email", value: "bob@example.com"))
        #expect(try !users.isExist(fieldName: "email", value: "eve@example.com"))
        #expect(try users.findByEmail("bob@example.com")?.id == 2)
    }

    /// findByIds binds every value of a composite key, and one statement binds at most
    /// 65,535 (the protocol's limit): 32,768 two-column keys are refused before any SQL
    /// is sent; 32,767 are looked up in one statement.
    @Test func findByIdsRefusesMoreKeyValuesThanOneStatementBinds() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE user_tags(user_id BIGINT NOT NULL, tag VARCHAR(50) NOT NULL,
                        PRIMARY KEY (user_id, tag))
                    """)
            try db.execute(sql: "INSERT INTO user_tags VALUES (7, 'vip')")
        }
        let tags = UserTagDAL(database: pool)
        let keys = (0..<32_768).map { CompositeKey(Int64($0), "vip") }
        let refused = #expect(throws: DALError.self) { _ = try tags.findByIds(keys) }
        #expect(refused?.code == .invalidValue)
        #expect(try tags.findByIds(Array(keys.dropLast())).map(\.userID) == [7])
    }

    /// insert2 reads the new key back with `INSERT … RETURNING` (MariaDB 10.5+), and the
    /// row is there, seen from outside.
    @Test func userDALInsert2() throws {
        let (pool, outside) = try makeUsers()
        defer { try? pool.close() }
        let users = UserDAL(database: pool)
        let id = try users.insert2(UserInfo(name: "cy", email: "cy@example.com", age: 40))
        #expect(try users.findById(id)?.name == "cy")
        #expect(try outside.sql("SELECT name FROM users WHERE id = \(id)") == "cy")
    }

    /// BaseDAL's statements that differ by engine, in MariaDB's dialect: upsert (`ON
    /// DUPLICATE KEY UPDATE`), key lists, LIKE patterns with their wildcards escaped, and
    /// the bulk path's fallback; every outcome checked against the rows from outside.
    @Test func baseDALStatementsInMariaDBsDialect() throws {
        let (pool, outside) = try makeUsers()
        defer { try? pool.close() }
        let users = UserDAL(database: pool)
        _ = try users.insertRange([
            UserInfo(id: 1, name: "ann", email: "ann@example.com", age: 31),
            UserInfo(id: 2, name: "bob", email: "bob@example.com", age: 25)
        ])
        // copyRows answers nil (no bulk path): bulkInsert falls back to INSERTs.
        #expect(try users.bulkInsert([UserInfo(id: 5, name: "eve", email: "eve@example.com", age: 50)]) == 1)
        #expect(try users.getRecordCount() == 3)
        try users.upsert(UserInfo(id: 1, name: "ann2", email: "ann@example.com", age: 32))
        #expect(try outside.sql("SELECT name, age FROM users WHERE id = 1") == "ann2\t32")
        try users.upsert(UserInfo(id: 3, name: "cy", email: "cy@example.com", age: 40))
        #expect(try outside.sql("SELECT name FROM users WHERE id = 3") == "cy")
        #expect(try users.findWithPager(pager: PagerInfo(pageIndex: 1, pageSize: 1)).items.count == 1)
        #expect(try users.findByIds([Int64(1), Int64(2), Int64(99)]).compactMap(\.id).sorted() == [1, 2])
        #expect(try users.search(keyword: "an").map(\.name) == ["ann2"])
        // Wildcards and the escape character in a keyword match only themselves.
        try users.insert(UserInfo(id: 6, name: "50%_off!", email: "sale@example.com", age: 20))
        #expect(try users.find(condition: "name LIKE \(containing: "%_off!")").compactMap(\.id) == [6])
        #expect(try users.find(condition: "name LIKE \(containing: "0!")").isEmpty)
    }

    /// The sample migrations run on MariaDB in its DDL (text in a key as VARCHAR, the
    /// rowid alias as AUTO_INCREMENT, no WITHOUT ROWID), every step recorded in order.
    @Test func sampleMigrations() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        try SampleSchema.migrator.migrate(pool)
        #expect(
            try outside.sql("SELECT id FROM swiftdal_migrations ORDER BY position")
                == SampleSchema.migrator.migrations.map(\.id).joined(separator: "\n"))
        #expect(
            try outside.sql(
                "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'user_tags' AND COLUMN_NAME = 'tag'"
            ) == "varchar")
    }
}
