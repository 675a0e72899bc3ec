import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

/// A copy of a committed fixture in a temporary directory, opened as a queue.
private func fixtureCopy(_ name: String, in directory: TemporaryDirectory) throws -> DatabaseQueue {
    let path = directory.file(name)
    try FileManager.default.copyItem(atPath: fixturesDirectory + "/" + name, toPath: path)
    return try DatabaseQueue(path: path)
}

private func schema(_ queue: DatabaseQueue) throws -> String {
    try queue.read { try SampleFixtures.schemaText($0) }
}

private let currentSchema: String =
    (try? String(contentsOfFile: fixturesDirectory + "/schema.sql", encoding: .utf8)) ?? ""

@Suite struct MigrationTests {
    @Test func aFreshDatabaseGetsEveryMigrationAndRerunningIsANoOp() throws {
        let queue = try DatabaseQueue.inMemory()
        #expect(try SampleSchema.migrator.pendingMigrations(queue) == SampleSchema.versions)
        #expect(try SampleSchema.migrator.migrate(queue) == SampleSchema.versions)
        #expect(try SampleSchema.migrator.migrate(queue).isEmpty)
        #expect(try SampleSchema.migrator.pendingMigrations(queue).isEmpty)
        #expect(try schema(queue) == currentSchema)
        #expect(try queue.read { try $0.tableNames() } == ["orders", "swiftdal_migrations", "user_tags", "users"])
    }

    @Test(arguments: ["sample-v1.sqlite", "sample-v2.sqlite"])
    func olderFixturesUpgradeToTheCurrentSchemaKeepingTheirData(_ fixture: String) throws {
        let directory = try TemporaryDirectory()
        let queue = try fixtureCopy(fixture, in: directory)
        let before = try queue.read { db in
            (
                try db.fetchAll("SELECT id, name, email, age, score, bio, created_at FROM users ORDER BY id").map(
                    \.values),
                try db.fetchAll("SELECT id, user_id, product, quantity, unit_price, placed_at FROM orders ORDER BY id")
                    .map(\.values)
            )
        }
        let pending = try SampleSchema.migrator.pendingMigrations(queue)
        #expect(!pending.isEmpty)
        #expect(try SampleSchema.migrator.migrate(queue) == pending)
        #expect(try schema(queue) == currentSchema)
        let after = try queue.read { db in
            (
                try db.fetchAll("SELECT id, name, email, age, score, bio, created_at FROM users ORDER BY id").map(
                    \.values),
                try db.fetchAll("SELECT id, user_id, product, quantity, unit_price, placed_at FROM orders ORDER BY id")
                    .map(\.values)
            )
        }
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        #expect(before.0.count == 8 && before.1.count == 8)
        // The DALs work on the upgraded database, and the entities match it.
        let users = UserDAL(database: queue)
        let orders = OrderDAL(database: queue)
        try SampleSchema.verify(users: users, orders: orders, tags: UserTagDAL(database: queue))
        #expect(try users.findByEmail("chloe@example.com")?.name == "chloé")
        #expect(try orders.totalSpent(by: 1) == Decimal(string: "73.87"))
        #expect(try queue.read { try $0.fetchScalar(String.self, "PRAGMA integrity_check") } == "ok")
    }

    @Test func pendingMigrationsAreListedWithoutBeingApplied() throws {
        let directory = try TemporaryDirectory()
        let queue = try fixtureCopy("sample-v1.sqlite", in: directory)
        let before = try schema(queue)
        #expect(try SampleSchema.migrator.pendingMigrations(queue) == Array(SampleSchema.versions.dropFirst()))
        #expect(try schema(queue) == before)
    }

    @Test func aFailingMigrationRollsBackAndLeavesThePreviousVersionIntact() throws {
        let directory = try TemporaryDirectory()
        let queue = try fixtureCopy("sample-v2.sqlite", in: directory)
        // Version 2 allows a zero quantity; version 3's CHECK does not: its rebuild fails midway.
        try queue.write { db in
            try db.execute(
                "INSERT INTO orders(user_id, product, quantity, unit_price, placed_at) VALUES (1, 'free sample', 0, '0', '2024-06-01 00:00:00')"
            )
        }
        let before = try schema(queue)
        let error = #expect(throws: DALError.self) { try SampleSchema.migrator.migrate(queue) }
        #expect(error?.message.contains("3-orders-quantity-check") == true)
        #expect(error?.message.contains("rolled back") == true)
        #expect(try schema(queue) == before)
        #expect(try queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM orders") } == 9)
        #expect(try SampleSchema.migrator.pendingMigrations(queue) == ["3-orders-quantity-check"])
        #expect(try queue.read { try $0.fetchScalar(Bool.self, "PRAGMA foreign_keys") } == true)
        // Fix the data, and the same migration goes through.
        try queue.write { try $0.execute("UPDATE orders SET quantity = 1 WHERE quantity = 0") }
        #expect(try SampleSchema.migrator.migrate(queue) == ["3-orders-quantity-check"])
        #expect(try schema(queue) == currentSchema)
    }

    @Test func aDatabaseMigratedByANewerAppIsRefused() throws {
        let queue = try DatabaseQueue.inMemory()
        try SampleSchema.migrator.migrate(queue)
        var older = Migrator()
        for migration in SampleSchema.migrator.migrations.prefix(2) {
            older.register(migration.id) { _ in }
        }
        let error = #expect(throws: DALError.self) { try older.migrate(queue) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("newer") == true)
        #expect(error?.message.contains("3-orders-quantity-check") == true)
        #expect(#expect(throws: DALError.self) { _ = try older.pendingMigrations(queue) }?.code == .schemaMismatch)
    }

    @Test func foreignKeysAreCheckedAfterEachMigration() throws {
        var migrator = Migrator()
        migrator.register("1") { db in
            try db.execute(sql: "CREATE TABLE parent(id INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id))")
        }
        migrator.register("2-orphan", disablesForeignKeys: true) { db in
            try db.execute(sql: "INSERT INTO child(parent_id) VALUES (42)")
        }
        let queue = try DatabaseQueue.inMemory()
        let error = #expect(throws: DALError.self) { try migrator.migrate(queue) }
        #expect(error?.message.contains("foreign key violation") == true)
        #expect(try queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM child") } == 0)
        #expect(try migrator.pendingMigrations(queue) == ["2-orphan"])
    }

    @Test func misuseIsAClearError() throws {
        var duplicate = Migrator()
        duplicate.register("same") { _ in }
        duplicate.register("same") { _ in }
        let queue = try DatabaseQueue.inMemory()
        #expect(#expect(throws: DALError.self) { try duplicate.migrate(queue) }?.message.contains("twice") == true)
        #expect(
            #expect(throws: DALError.self) { try SampleSchema.migrator.migrate(queue, upTo: "nope") }?.code
                == .invalidValue)
        let insideTransaction = #expect(throws: DALError.self) {
            try queue.write { (db: Database) -> Void in
                _ = try SampleSchema.migrator.migrate(db)
            }
        }
        #expect(insideTransaction?.code == .invalidSQL)
        var rebuild = Migrator()
        rebuild.register("1") { db in try db.execute(sql: "CREATE TABLE t(a INTEGER)") }
        rebuild.register("2") { db in
            try db.rebuild(table: TableDefinition("t") { $0.column("a", .integer, notNull: true) })
        }
        let error = #expect(throws: DALError.self) { try rebuild.migrate(queue) }
        #expect(error?.message.contains("disablesForeignKeys") == true)
    }

    @Test func migrateUpToATargetStopsThere() throws {
        let queue = try DatabaseQueue.inMemory()
        #expect(try SampleSchema.migrator.migrate(queue, upTo: SampleSchema.versions[0]) == [SampleSchema.versions[0]])
        #expect(try queue.read { try $0.tableExists("user_tags") } == false)
        // SQLite's names ignore ASCII case: so does the check.
        #expect(try queue.read { try $0.tableExists("users") && $0.tableExists("USERS") && !$0.tableExists("user") })
        #expect(try SampleSchema.migrator.migrate(queue).count == 2)
    }
}
