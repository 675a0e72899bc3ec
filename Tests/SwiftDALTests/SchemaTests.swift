import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct SchemaTests {
    private let everything = TableDefinition("accounts") { t in
        t.column("id", .integer)
        t.column("owner", .text, notNull: true, collation: "NOCASE")
        t.column("currency", .text, notNull: true, default: .value("EUR"), check: "length(currency) = 3")
        t.column("note", .text, default: .value("it's \"quoted\"\u{0}!"))
        t.column("balance", .integer, notNull: true, default: .value(0))
        t.column("ratio", .real, default: .value(0.5))
        t.column("opened_at", .text, notNull: true, default: .expression("CURRENT_TIMESTAMP"))
        t.column("parent_id", .integer)
        t.primaryKey(["id"], autoincrement: true)
        t.unique(["owner", "currency"])
        t.check("balance >= -1000")
        t.foreignKey(["parent_id"], references: "accounts", columns: ["id"], onDelete: .setNull, onUpdate: .cascade)
        t.index("accounts_owner", on: ["owner"])
        t.index("accounts_parent", on: ["parent_id", "currency"], unique: true)
    }

    @Test func aTableIsCreatedFromItsDefinitionWithEveryConstraint() throws {
        let db = try Database.inMemory()
        try db.create(everything)
        try db.create(everything, ifNotExists: true)
        #expect(throws: SQLiteError.self) { try db.create(everything) }
        #expect(try db.tableNames().contains("accounts"))
        let id = try db.insert("INSERT INTO accounts(owner) VALUES ('Ann')")
        let row = try #require(try db.fetchOne("SELECT * FROM accounts WHERE id = \(id)"))
        #expect(try row.decode(String.self, named: "currency") == "EUR")
        #expect(try row.decode(String.self, named: "note") == "it's \"quoted\"\u{0}!")
        #expect(try row.decode(Double.self, named: "ratio") == 0.5)
        #expect(try row.decode(Date?.self, named: "opened_at") != nil)
        #expect(
            #expect(throws: SQLiteError.self) {
                try db.execute("INSERT INTO accounts(owner, currency) VALUES ('x', 'EURO')")
            }?.constraintKind
                == .check)
        #expect(
            #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO accounts(owner) VALUES ('ANN')") }?
                .constraintKind == .unique)
        #expect(
            #expect(throws: SQLiteError.self) {
                try db.execute("INSERT INTO accounts(owner, balance) VALUES ('b', -5000)")
            }?.constraintKind
                == .check)
        #expect(
            #expect(throws: SQLiteError.self) {
                try db.execute("INSERT INTO accounts(owner, parent_id) VALUES ('c', 99)")
            }?.constraintKind
                == .foreignKey)
        try db.execute("INSERT INTO accounts(owner, parent_id) VALUES ('child', \(id))")
        try db.execute("DELETE FROM accounts WHERE id = \(id)")
        // ON DELETE SET NULL.
        #expect(try db.fetchScalar(Int64.self, "SELECT parent_id FROM accounts WHERE owner = 'child'") == nil)
        // AUTOINCREMENT: ids of deleted rows are never reused, even once the table is empty
        // (without it, the next id would be 1 again).
        try db.execute("DELETE FROM accounts")
        #expect(try db.insert("INSERT INTO accounts(owner) VALUES ('next')") == id + 2)
    }

    @Test func describeReadsColumnsIndexesAndForeignKeysFromTheDatabase() throws {
        let db = try Database.inMemory()
        try db.create(everything)
        let description = try db.describe(table: "accounts")
        #expect(
            description.columns.map(\.name) == [
                "id", "owner", "currency", "note", "balance", "ratio", "opened_at", "parent_id"
            ])
        #expect(description.primaryKey == ["id"])
        let currency = try #require(description.columns.first { $0.name == "currency" })
        #expect(currency.declaredType == "TEXT" && currency.isNotNull && currency.defaultValueSQL == "'EUR'")
        #expect(description.indexes.first { $0.name == "accounts_parent" }?.columns == ["parent_id", "currency"])
        #expect(description.indexes.first { $0.name == "accounts_parent" }?.isUnique == true)
        #expect(description.indexes.contains { $0.origin == "u" && $0.columns == ["owner", "currency"] })
        let key = try #require(description.foreignKeys.first)
        #expect(
            key.table == "accounts" && key.columns == ["parent_id"] && key.onDelete == "SET NULL"
                && key.onUpdate == "CASCADE")
        try db.drop(table: "accounts")
        try db.drop(table: "accounts", ifExists: true)
        #expect(try db.tableNames().isEmpty)
        #expect(#expect(throws: DALError.self) { _ = try db.describe(table: "accounts") }?.code == .schemaMismatch)
    }

    /// A column added to a table that has rows keeps its definition's constraints: its
    /// default fills the rows already there, and NOT NULL and CHECK refuse what they refuse.
    @Test func anAddedColumnKeepsItsDefaultNotNullAndCheck() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE wallets(id INTEGER PRIMARY KEY, owner TEXT)")
        try db.execute(sql: "INSERT INTO wallets(owner) VALUES ('ann')")
        try db.addColumn(
            ColumnDefinition(
                name: "currency", type: .text, isNotNull: true, defaultValue: .value("EUR"),
                check: "length(currency) = 3"),
            to: "wallets")
        #expect(try db.fetchScalar(String.self, "SELECT currency FROM wallets") == "EUR")
        let tooLong = #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO wallets(owner, currency) VALUES ('bob', \("EURO"))")
        }
        #expect(tooLong?.constraintKind == .check)
        let missing = #expect(throws: SQLiteError.self) {
            try db.execute(sql: "INSERT INTO wallets(owner, currency) VALUES ('cy', NULL)")
        }
        #expect(missing?.constraintKind == .notNull)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM wallets") == 1)
    }

    @Test func definitionsNamingMissingColumnsAreRefused() throws {
        let badKey = TableDefinition("t") { t in
            t.column("a", .integer)
            t.primaryKey(["b"])
        }
        #expect(#expect(throws: DALError.self) { _ = try badKey.createStatements() }?.column == "b")
        let badIndex = TableDefinition("t") { t in
            t.column("a", .integer)
            t.index("t_x", on: ["x"])
        }
        #expect(#expect(throws: DALError.self) { _ = try badIndex.createStatements() }?.code == .invalidColumn)
        #expect(
            #expect(throws: DALError.self) { _ = try TableDefinition("empty").createStatements() }?.code
                == .schemaMismatch)
        let hostile = TableDefinition("a\"; DROP TABLE users; --") { t in t.column("b\"c", .text) }
        let db = try Database.inMemory()
        try db.create(hostile)
        #expect(try db.tableNames() == ["a\"; DROP TABLE users; --"])
    }

    @Test func codableEntitiesDeriveTheirTable() throws {
        let definition = try Note.tableDefinition()
        let types = Dictionary(uniqueKeysWithValues: definition.columns.map { ($0.name, $0.type) })
        let notNull = Dictionary(uniqueKeysWithValues: definition.columns.map { ($0.name, $0.isNotNull) })
        #expect(
            definition.columns.map(\.name) == [
                "id", "title", "body", "payload", "tags", "meta", "createdAt", "rating", "pinned", "counter",
                "reference"
            ])
        #expect(
            types == [
                "id": .integer, "title": .text, "body": .text, "payload": .blob, "tags": .text, "meta": .text,
                "createdAt": .text, "rating": .real, "pinned": .integer, "counter": .integer, "reference": .text
            ])
        #expect(
            notNull["title"] == true && notNull["body"] == false && notNull["tags"] == true && notNull["meta"] == false)
        #expect(definition.primaryKey == ["id"])
        let tags = try UserTag.tableDefinition()
        #expect(tags.primaryKey == ["user_id", "tag"])
        // The derived table works with the DAL.
        let queue = try DatabaseQueue.inMemory()
        try queue.write { try $0.create(table: Note.self) }
        let notes = NoteDAL(database: queue)
        try notes.verifySchema()
        let id = try notes.insert2(note("derived"))
        #expect(try notes.findById(id)?.title == "derived")
    }

    @Test func schemaChecksNameEveryMismatch() throws {
        struct Drifted: Entity, Codable {
            static let tableName = "users"
            var id: Int64?
            var name: String?  // nullable here, NOT NULL without a default in the table
            var email: Int  // an integer stored into a TEXT column comes back as text
            var nickname: String  // missing from the table
            var bio: Double?  // a real stored into a TEXT column comes back as text
        }
        let sample = try Sample()
        try sample.users.verifySchema()
        let error = #expect(throws: DALError.self) { try BaseDAL<Drifted>(database: sample.queue).verifySchema() }
        #expect(error?.code == .schemaMismatch)
        let message = error?.message ?? ""
        #expect(message.contains("column name is NOT NULL without a default, but the entity may hold nil"))
        #expect(message.contains("column email: TEXT has TEXT affinity"))
        #expect(message.contains("column bio: TEXT has TEXT affinity: SQLite would store the entity's REAL values"))
        #expect(message.contains("column nickname is missing"))
        #expect(message.contains("column age") == false)  // has a default: not a problem
        let missing = try sample.queue.read {
            try $0.schemaMismatches(for: TableDefinition("ghosts") { $0.column("a", .text) })
        }
        #expect(missing == ["table ghosts does not exist"])
        #expect(throws: DALError.self) { try sample.queue.read { try $0.checkSchema(of: Drifted.self) } }
    }

    /// The async form checks as the synchronous one does: a matching table passes, a
    /// drifted entity throws the same mismatch.
    @Test func theAsyncSchemaCheckReportsWhatTheSynchronousOneDoes() async throws {
        struct Drifted: Entity, Codable {
            static let tableName = "users"
            var id: Int64?
            var nickname: String  // missing from the table
        }
        let sample = try Sample()
        try await sample.users.verifySchema()
        let error = await #expect(throws: DALError.self) {
            try await BaseDAL<Drifted>(database: sample.queue).verifySchema()
        }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("column nickname is missing") == true)
    }

    /// A derived definition is checked as it is made: a primary key naming no property
    /// of the entity is refused there, naming the column, not later in a DAL's call.
    @Test func aDerivedDefinitionWithAnUnknownKeyColumnIsRefused() throws {
        struct Ticket: Entity, Codable {
            static let tableName = "tickets"
            static let primaryKey = ["ticket_id"]
            var id: Int64
            var title: String
        }
        let error = #expect(throws: DALError.self) { _ = try TableDefinition(deriving: Ticket.self) }
        #expect(error?.code == .invalidColumn && error?.column == "ticket_id", "\(String(describing: error))")
    }

    /// A default set on a derived definition is in the table's DDL (read back from
    /// SQLite's own description of the column), and fills a row written without it; an
    /// unknown column is refused.
    @Test func aDefaultSetOnADerivedDefinitionReachesTheTable() throws {
        struct Order: Entity, Codable {
            static let tableName = "orders_t"
            var id: Int64?
            var customer: String
            var status: String?  // nil: the column's default
        }
        var definition = try TableDefinition(deriving: Order.self)
        try definition.setDefault(.value("new"), ofColumn: "status")
        let unknown = #expect(throws: DALError.self) { try definition.setDefault(.value(1), ofColumn: "nope") }
        #expect(unknown?.code == .invalidColumn)
        let queue = try DatabaseQueue.inMemory()
        try queue.write { try $0.create(definition) }
        let declared = try queue.read { db in
            try db.fetchScalar(
                String.self, "SELECT dflt_value FROM pragma_table_info('orders_t') WHERE name = 'status'")
        }
        #expect(declared == "'new'")
        let orders = BaseDAL<Order>(database: queue)
        let id = try orders.insert2(Order(customer: "ann", status: nil))
        #expect(try orders.findById(id)?.status == "new")
        try definition.setDefault(nil, ofColumn: "status")
        #expect(definition.columns.first { $0.name == "status" }?.defaultValue == nil)
    }

    @Test func schemaChecksFollowSQLiteAffinityAndReportOnlyWhatWouldFail() throws {
        // What a real schema holds (Northwind/Chinook style): every mapping below works.
        struct Product: Entity, Codable {
            static let tableName = "products"
            static let primaryKey = ["sku"]
            var sku: String  // TEXT PRIMARY KEY: nullable for SQLite, never NULL here
            var price: Double  // NUMERIC column
            var exact: Decimal  // DECIMAL(10,2) column
            var weight: Int?  // REAL column: integers come back exactly
            var addedAt: Date  // DATETIME column (NUMERIC affinity; dates never look like numbers)
            var stock: Int?  // NOT NULL DEFAULT 0: nil means the default
            var photo: Data?  // untyped column
        }
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE products(sku TEXT PRIMARY KEY, price NUMERIC NOT NULL, exact DECIMAL(10,2) NOT NULL, weight REAL,
                        addedAt DATETIME NOT NULL, stock INTEGER NOT NULL DEFAULT 0, photo)
                    """)
        }
        let products = BaseDAL<Product>(database: queue)
        try products.verifySchema()
        let product = Product(
            sku: "K-1", price: 9.5, exact: Decimal(string: "4.99")!, weight: 3, addedAt: Date(timeIntervalSince1970: 0),
            stock: nil, photo: nil)
        try products.insert(product)
        let stored = try #require(try products.findById("K-1"))
        #expect(stored.stock == 0)
        #expect(stored.exact == Decimal(string: "4.99"))
        #expect(stored.weight == 3)
        // What would fail is still reported: a number into a TEXT column, text into INTEGER or REAL.
        struct Wrong: Entity, Codable {
            static let tableName = "products"
            static let primaryKey = ["sku"]
            var sku: Int
            var price: Double
            var exact: Decimal
            var weight: String
            var addedAt: Date
        }
        let error = #expect(throws: DALError.self) { try BaseDAL<Wrong>(database: queue).verifySchema() }
        #expect(error?.message.contains("column sku: TEXT has TEXT affinity") == true)
        #expect(error?.message.contains("column weight: REAL has REAL affinity") == true)
        #expect(error?.message.contains("price") == false)
        #expect(error?.message.contains("addedAt") == false)
    }

    /// verifySchema checks the table a DAL subclass names, not its entity's: an entity
    /// mapped onto another table (an archive of the same columns) is checked there.
    @Test func verifySchemaChecksTheTableTheDALNames() throws {
        struct Note: Entity, Codable {
            static let tableName = "notes"
            var id: Int64?
            var body: String
        }
        final class ArchivedNoteDAL: BaseDAL<Note>, @unchecked Sendable {
            override var tableName: String { "archived_notes" }
        }
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE archived_notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY)")  // no body: the entity's table differs
        }
        try ArchivedNoteDAL(database: queue).verifySchema()
        #expect(throws: DALError.self) { try BaseDAL<Note>(database: queue).verifySchema() }
    }

    @Test func explicitEntitiesWithoutADefinitionSayWhatIsMissing() throws {
        struct Bare: Entity {
            static let tableName = "bare"
            init(row: RowView) throws {}
            func encodeColumns(to columns: inout ColumnValues) throws {}
        }
        let error = #expect(throws: DALError.self) { _ = try Bare.tableDefinition() }
        #expect(error?.message.contains("tableDefinition()") == true)
    }
}
