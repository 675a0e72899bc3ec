import Foundation
import SwiftDAL
import SwiftDALCodegen
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

/// SQLite's generated columns (`GENERATED ALWAYS AS (…) VIRTUAL|STORED`), which
/// `pragma_table_info` hides: seen as columns of the table, read, and never written.
@Suite struct GeneratedColumnTests {
    private static let createOrders = """
        CREATE TABLE "Orders"(
            id INTEGER PRIMARY KEY,
            "First Name" TEXT NOT NULL,
            qty INTEGER NOT NULL,
            price REAL NOT NULL CHECK (CAST(price AS INTEGER) >= 0),
            "Total" REAL GENERATED ALWAYS AS (qty * (price + 0)) STORED, -- a comment with ) , AS (
            label TEXT AS ('(' || "First Name" || ', x)') VIRTUAL,
            note TEXT /* AS (1) */
        )
        """

    /// The expressions as the CREATE TABLE writes them, through strings, comments, quoted
    /// names and nested parentheses; columns that are not generated have none.
    @Test func expressionsAreReadFromTheTablesText() {
        let expressions = GeneratedColumns.expressions(in: Self.createOrders)
        #expect(expressions == ["total": "qty * (price + 0)", "label": "'(' || \"First Name\" || ', x)'"])
        let quoted = GeneratedColumns.expressions(
            in: "CREATE TABLE t([my col] INT, `b``q` AS ([my col] + 1), \"c\"\"d\" INT GENERATED ALWAYS AS (2) STORED)")
        #expect(quoted == ["b`q": "[my col] + 1", "c\"d": "2"])
        #expect(GeneratedColumns.expressions(in: "CREATE TABLE t(a INT") == [:])
        // A form feed is white space to SQLite, as to its lexicon.
        #expect(GeneratedColumns.expressions(in: "CREATE TABLE t(a INT,\u{0C}b AS (a)\u{0C}STORED)") == ["b": "a"])
    }

    @Test func generatedColumnsAreReadAndNeverWritten() throws {
        struct Order: Entity, Codable {
            static let tableName = "Orders"
            var id: Int64?
            var firstName: String
            var qty: Int
            var price: Double
            var total: Double?
            var label: String?
            var note: String?
            enum CodingKeys: String, CodingKey {
                case id, qty, price, label, note
                case firstName = "First Name"
                case total = "Total"
            }
        }
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.file("orders.sqlite"))
        try queue.write { try $0.execute(sql: Self.createOrders) }

        let columns = try queue.read { try $0.columns(in: "Orders") }
        #expect(columns.map(\.name) == ["id", "First Name", "qty", "price", "Total", "label", "note"])
        #expect(columns.filter(\.isGenerated).map(\.name) == ["Total", "label"])
        #expect(
            columns.first { $0.name == "Total" }?.defaultValueSQL == "GENERATED ALWAYS AS (qty * (price + 0)) STORED")
        #expect(
            columns.first { $0.name == "label" }?.defaultValueSQL
                == "GENERATED ALWAYS AS ('(' || \"First Name\" || ', x)') VIRTUAL")

        let orders = BaseDAL<Order>(database: queue)
        let id = try orders.insert2(Order(firstName: "Ann", qty: 3, price: 2.5, total: 999, label: "forged"))
        var order = try #require(try orders.findById(id))
        #expect(order.total == 7.5)
        #expect(order.label == "(Ann, x)")
        order.qty = 4
        order.total = 1  // ignored: the database computes it
        #expect(try orders.update(order))
        order.total = 2
        #expect(try orders.update(order))  // nothing else changed: nothing written, no error
        try orders.insertRange([Order(firstName: "Bo", qty: 1, price: 1, total: 5)])

        // Read from a connection of its own: what the file holds.
        let outside = try Database(path: directory.file("orders.sqlite"))
        defer { try? outside.close() }
        let stored = try outside.fetchAll(#"SELECT "First Name", "Total", label FROM "Orders" ORDER BY id"#) {
            "\(try $0.decode(String.self, at: 0))=\(try $0.decode(Double.self, at: 1))/\(try $0.decode(String.self, at: 2))"
        }
        #expect(stored == ["Ann=10.0/(Ann, x)", "Bo=1.0/(Bo, x)"])

        // An explicit mapping that names a generated column reads it (it was refused as a
        // column the table does not have).
        struct Totals: Entity {
            static let tableName = "Orders"
            static let columnNames: [String]? = ["id", "Total"]
            var id: Int64?
            var total: Double?
            init(id: Int64?, total: Double?) {
                self.id = id
                self.total = total
            }
            init(row: RowView) throws {
                id = try row.decode(Int64?.self, at: 0)
                total = try row.decode(Double?.self, at: 1)
            }
            func encodeColumns(to columns: inout ColumnValues) throws {
                try columns.encode(id, for: "id")
                try columns.encode(total, for: "Total")
            }
        }
        #expect(try BaseDAL<Totals>(database: queue).findById(id)?.total == 10)

        let source = try queue.read { try EntityGenerator().source(in: $0, origin: "test") }
        #expect(source.contains("Computed by the database: read, never written"))
        #expect(source.contains("\"Total\""))
    }

    /// An explicit entity (its own columnNames and encodeColumns) that encodes every
    /// column, generated ones in the middle included, writes each other column by its own
    /// name: the generated ones are left out, and the column after them keeps its value.
    @Test func anExplicitEntityWritesTheColumnsAroundTheGeneratedOnes() throws {
        struct FullOrder: Entity {
            static let tableName = "Orders"
            static let columnNames: [String]? = ["id", "First Name", "qty", "price", "Total", "label", "note"]
            var id: Int64?
            var firstName: String
            var qty: Int
            var price: Double
            var total: Double?
            var label: String?
            var note: String?
            init(firstName: String, qty: Int, price: Double, total: Double?, label: String?, note: String?) {
                self.firstName = firstName
                self.qty = qty
                self.price = price
                self.total = total
                self.label = label
                self.note = note
            }
            init(row: RowView) throws {
                id = try row.decode(Int64?.self, at: 0)
                firstName = try row.decode(String.self, at: 1)
                qty = try row.decode(Int.self, at: 2)
                price = try row.decode(Double.self, at: 3)
                total = try row.decode(Double?.self, at: 4)
                label = try row.decode(String?.self, at: 5)
                note = try row.decode(String?.self, at: 6)
            }
            func encodeColumns(to columns: inout ColumnValues) throws {
                try columns.encode(id, for: "id")
                try columns.encode(firstName, for: "First Name")
                try columns.encode(qty, for: "qty")
                try columns.encode(price, for: "price")
                try columns.encode(total, for: "Total")
                try columns.encode(label, for: "label")
                try columns.encode(note, for: "note")
            }
        }
        let queue = try DatabaseQueue.inMemory()
        try queue.write { try $0.execute(sql: Self.createOrders) }
        let orders = BaseDAL<FullOrder>(database: queue)
        let id = try orders.insert2(
            FullOrder(firstName: "Ann", qty: 2, price: 1.5, total: 99, label: "forged", note: "kept"))
        var stored = try #require(try orders.findById(id))
        #expect(stored.firstName == "Ann" && stored.qty == 2 && stored.price == 1.5)
        #expect(stored.total == 3 && stored.label == "(Ann, x)" && stored.note == "kept")
        stored.note = "changed"
        #expect(try orders.update(stored))
        #expect(try orders.findById(id)?.note == "changed")
    }

    /// What SchemaAndMigrations.md says of a Codable entity's names on reads: an optional
    /// property whose column the table lacks reads `nil`, a non-optional one throws, and
    /// `verifySchema()` names it.
    @Test func aCodableEntitysMissingColumnReadsNilOrThrowsAndTheCheckNamesIt() throws {
        struct Loose: Entity, Codable {
            static let tableName = "Orders"
            var id: Int64?
            var nope: String?
        }
        struct Strict: Entity, Codable {
            static let tableName = "Orders"
            var id: Int64?
            var nope: String
        }
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: Self.createOrders)
            try db.execute(sql: #"INSERT INTO "Orders"("First Name", qty, price) VALUES ('Ann', 1, 1)"#)
        }
        #expect(try BaseDAL<Loose>(database: queue).findById(1)?.nope == nil)
        #expect(throws: (any Error).self) { try BaseDAL<Strict>(database: queue).findById(1) }
        let mismatch = #expect(throws: DALError.self) { try BaseDAL<Loose>(database: queue).verifySchema() }
        #expect(mismatch?.message.contains("column nope is missing") == true)
    }
}
