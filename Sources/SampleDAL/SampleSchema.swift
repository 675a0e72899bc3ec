import Foundation
public import SwiftDAL

/// The sample database's schema history, as migrations. Each step is a snapshot of that
/// moment (it never refers to today's entity definitions, which keep changing):
///
/// 1. `users` and `orders` (a foreign key to users, `ON DELETE CASCADE`);
/// 2. `ALTER TABLE users` adds `full_name` and `avatar`; `user_tags` (composite key);
/// 3. `orders` gets `CHECK (quantity > 0)` and an index on `user_id` (rebuilt with
///    SQLite's create-copy-drop-rename; altered in place on PostgreSQL).
///
/// The same migrations run on SQLite and PostgreSQL: tables come from definitions, and
/// where the SQL differs the step says so (a step is a snapshot: its SQLite text stays
/// as it was written, so existing databases and new ones get the same schema).
///
/// For example, `try SampleSchema.migrator.migrate(pool)` creates or upgrades a database.
public enum SampleSchema {
    /// The three migrations above, in order: `try SampleSchema.migrator.migrate(database)`.
    public static let migrator: Migrator = {
        var migrator = Migrator()
        migrator.register("1-create-users-and-orders") { db in
            try db.create(
                TableDefinition("users") { t in
                    t.column("id", .integer)
                    t.column("name", .text, notNull: true)
                    t.column("email", .text, notNull: true, unique: true)
                    t.column("age", .integer, notNull: true, default: .value(0), check: "age >= 0")
                    t.column("score", .real, notNull: true, default: .value(0))
                    t.column("bio", .text)
                    t.column("created_at", .text, notNull: true, default: .expression("CURRENT_TIMESTAMP"))
                    t.primaryKey(["id"])
                    t.index("users_age", on: ["age"])
                })
            try db.create(ordersVersion1)
        }
        migrator.register("2-add-full-name-avatar-and-tags") { db in
            try db.execute(sql: "ALTER TABLE users ADD COLUMN full_name TEXT")
            // (A step's SQL never changes once released: written when only SQLite existed,
            // with the blob type each engine spells its way, BYTEA on PostgreSQL.
            // `db.addColumn(_:to:)` writes each engine's type for new steps.)
            try db.execute(sql: "ALTER TABLE users ADD COLUMN avatar \(ColumnType.blob.sql(in: db.engine))")
            try db.create(
                TableDefinition("user_tags") { t in
                    t.column("user_id", .integer, notNull: true)
                    t.column("tag", .text, notNull: true)
                    t.primaryKey(["user_id", "tag"])
                    t.foreignKey(["user_id"], references: "users", columns: ["id"], onDelete: .cascade)
                    t.isWithoutRowID = true
                })
        }
        migrator.register("3-orders-quantity-check", disablesForeignKeys: true) { db in
            if db.engine == .sqlite {
                // SQLite's ALTER TABLE cannot add a constraint: the table is rebuilt.
                try db.rebuild(table: ordersVersion3)
            } else {
                try db.execute(sql: "ALTER TABLE orders ADD CHECK (quantity > 0)")
                try db.execute(sql: "CREATE INDEX orders_user ON orders (user_id)")
            }
        }
        return migrator
    }()

    static let ordersVersion1 = TableDefinition("orders") { t in
        t.column("id", .integer)
        t.column("user_id", .integer, notNull: true)
        t.column("product", .text, notNull: true)
        t.column("quantity", .integer, notNull: true)
        t.column("unit_price", .text, notNull: true)
        t.column("placed_at", .text, notNull: true)
        t.primaryKey(["id"])
        t.foreignKey(["user_id"], references: "users", columns: ["id"], onDelete: .cascade)
    }

    static let ordersVersion3 = TableDefinition("orders") { t in
        t.column("id", .integer)
        t.column("user_id", .integer, notNull: true)
        t.column("product", .text, notNull: true)
        t.column("quantity", .integer, notNull: true, check: "quantity > 0")
        t.column("unit_price", .text, notNull: true)
        t.column("placed_at", .text, notNull: true)
        t.primaryKey(["id"])
        t.foreignKey(["user_id"], references: "users", columns: ["id"], onDelete: .cascade)
        t.index("orders_user", on: ["user_id"])
    }

    /// The names of the migrations, in order.
    public static var versions: [String] { migrator.migrations.map(\.id) }

    /// Checks the three sample entities against their tables (startup check).
    ///
    /// For example, `try SampleSchema.verify(users: users, orders: orders, tags: tags)`.
    public static func verify(users: UserDAL, orders: OrderDAL, tags: UserTagDAL) throws {
        try users.verifySchema()
        try orders.verifySchema()
        try tags.verifySchema()
    }
}

/// Builds the committed fixture databases from the migrations and the seed files, so
/// that their schema never comes from hand-written SQL:
/// `sample-v1.sqlite` (after migration 1, with data), `sample-v2.sqlite` (after 2),
/// `sample.sqlite` (current), and `schema.sql`, the current schema for people to read.
///
/// For example, `try SampleFixtures.build(in: "Fixtures")` (what
/// `swift run swiftdal-demo --make-fixtures Fixtures` does).
public enum SampleFixtures {
    /// Writes the fixture databases and `schema.sql` into `directory`, from the seed files `seed-v1.sql` and `seed-v2.sql` found there; throws the first SQLite or file-system error.
    public static func build(in directory: String) throws {
        let seed1 = try String(contentsOfFile: directory + "/seed-v1.sql", encoding: .utf8)
        let seed2 = try String(contentsOfFile: directory + "/seed-v2.sql", encoding: .utf8)
        let versions = SampleSchema.versions
        try make(directory + "/sample-v1.sqlite", upTo: versions[0], seeds: [seed1])
        try make(directory + "/sample-v2.sqlite", upTo: versions[1], seeds: [seed1, seed2])
        let current = try make(directory + "/sample.sqlite", upTo: nil, seeds: [seed1, seed2])
        try current.write(toFile: directory + "/schema.sql", atomically: true, encoding: .utf8)
    }

    /// The schema of a database as SQL text (what `schema.sql` holds).
    public static func schemaText(_ db: Database) throws -> String {
        let statements = try db.fetchColumn(
            String.self,
            """
            SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, name
            """)
        return "-- The sample schema after every migration of SampleSchema (generated: do not edit;\n"
            + "-- run `swift run swiftdal-demo --make-fixtures Fixtures`).\n"
            + statements.map { $0 + ";\n" }.joined(separator: "\n")
    }

    @discardableResult
    private static func make(_ path: String, upTo target: String?, seeds: [String]) throws -> String {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var configuration = Configuration()
        configuration.journalMode = .delete
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try SampleSchema.migrator.migrate(queue, upTo: target)
        try queue.write { db in
            for seed in seeds { try db.executeScript(seed) }
        }
        let schema = try queue.read { try schemaText($0) }
        try queue.reentrantWrite { db in try db.execute(sql: "VACUUM") }  // VACUUM runs outside any transaction
        try queue.close()
        return schema
    }
}
