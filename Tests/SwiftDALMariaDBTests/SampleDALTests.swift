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

    /// insert2 needs the new key: BaseDAL's dialect for an engine other than PostgreSQL
    /// is SQLite's (the rowid), which MariaDB has not; MariaDB 10.5+ has `INSERT …
    /// RETURNING`, which a MariaDB SQL dialect would use (being moved by another change).
    @Test func userDALInsert2() throws {
        let (pool, _) = try makeUsers()
        defer { try? pool.close() }
        let users = UserDAL(database: pool)
        withKnownIssue("BaseDAL's dialect for MariaDB is SQLite's: insert2 asks for a rowid") {
            let id = try users.insert2(UserInfo(name: "cy", email: "cy@example.com", age: 40))
            #expect(try users.findById(id)?.name == "cy")
        }
    }

    /// BaseDAL statements that do not run on MariaDB yet, while BaseDAL's SQL dialect is
    /// being moved to the engines (each names the statement in its known issue).
    @Test func baseDALStatementsWrittenForSQLite() throws {
        let (pool, _) = try makeUsers()
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
        #expect(try users.findById(Int64(1))?.name == "ann2")
        #expect(try users.findWithPager(pager: PagerInfo(pageIndex: 1, pageSize: 1)).items.count == 1)
        withKnownIssue("upsert of a new row: `INSERT … ON CONFLICT(\"id\") DO UPDATE …` is not MariaDB's syntax") {
            try users.upsert(UserInfo(id: 3, name: "cy", email: "cy@example.com", age: 40))
        }
        withKnownIssue("findByIds: `(\"id\") IN (SELECT value FROM json_each(?))`: MariaDB has no json_each") {
            let found = try users.findByIds([Int64(1), Int64(2)])
            #expect(found.count == 2)
        }
        withKnownIssue("search: `LIKE ? ESCAPE '\\'` is an open literal where backslashes escape (MariaDB's default)") {
            let found = try users.search(keyword: "an")
            #expect(found.count == 1)
        }
    }

    /// The sample migrations: step 1 runs; step 2's `CREATE TABLE … WITHOUT ROWID` is
    /// SQLite's, and its `ALTER TABLE`s before it stay applied (MariaDB's DDL commits).
    @Test func sampleMigrations() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        withKnownIssue("SampleSchema step 2: CREATE TABLE user_tags … WITHOUT ROWID") {
            try SampleSchema.migrator.migrate(pool)
        }
        #expect(try outside.sql("SELECT id FROM swiftdal_migrations ORDER BY position") == "1-create-users-and-orders")
    }
}
