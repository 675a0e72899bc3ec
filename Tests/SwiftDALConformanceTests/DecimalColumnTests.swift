import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// A priced item, its table derived from its `Codable` conformance.
private struct Priced: Entity, Codable, Equatable {
    static let tableName = "priced"
    var id: Int64?
    var name: String
    var price: Decimal
}

/// A `Decimal` column: derived as `TEXT` (exact, compared as text), changed to `.numeric`
/// to compare and sort as numbers, on every engine.
@Suite struct DecimalColumnTests {
    private func database(_ engine: Engine) throws -> (any DatabaseWriter, TemporaryDirectory?) {
        switch engine {
        case .sqlite:
            let directory = try TemporaryDirectory()
            return (try DatabasePool(path: directory.file("priced.sqlite")), directory)
        case .postgres:
            return (try makePostgresPool(), nil)
        case .mariadb:
            return (try MariaDBPool(url: SharedMariaDB.makeDatabase().url), nil)
        }
    }

    /// What AddingATableDAL promises: a derived `Decimal` column is `TEXT`, where `<` and
    /// `ORDER BY` compare characters; `changeType(ofColumn:to: .numeric)` makes them compare
    /// numbers, the values read back equal to those written, and an update is written.
    @Test(arguments: Engine.allCases)
    func aDecimalColumnMadeNumericComparesAsNumbers(_ engine: Engine) throws {
        let (database, directory) = try database(engine)
        defer {
            try? database.close()
            _ = directory
        }
        var derived = try TableDefinition(deriving: Priced.self)
        #expect(derived.column(named: "price")?.type == .text)
        #expect(throws: DALError.self) { try derived.changeType(ofColumn: "cost", to: .numeric) }
        var asText = derived
        asText.name = "priced_text"
        try derived.changeType(ofColumn: "price", to: .numeric)
        #expect(derived.column(named: "price")?.type == .numeric)
        #expect(derived.column(named: "price")?.isNotNull == true)
        try database.write { db in
            try db.create(derived)
            try db.create(asText)
        }
        let prices = ["49.9", "199", "17.5", "1234567.89"].compactMap { Decimal(string: $0) }
        let dal = BaseDAL<Priced>(database: database)
        for (index, price) in prices.enumerated() { _ = try dal.insert2(Priced(name: "p\(index)", price: price)) }
        #expect(try dal.getRecordCount(condition: "price < \(Decimal(100))") == 2)
        #expect(try dal.getAll(orderBy: "price DESC").map(\.name) == ["p3", "p1", "p0", "p2"])
        #expect(try dal.getAll(orderBy: "price").map(\.price) == prices.sorted())
        var item = try #require(try dal.findSingle(condition: "name = \("p1")"))
        item.price = Decimal(string: "199.05") ?? 0
        try dal.update(item)
        #expect(try dal.findById(item.id ?? 0)?.price == Decimal(string: "199.05"))
        // The text column keeps the digits, and compares them as text.
        try database.write { db in
            for (index, price) in prices.enumerated() {
                try db.execute("INSERT INTO priced_text(name, price) VALUES (\("p\(index)"), \(price))")
            }
        }
        let textOrder = try database.read { db in
            try db.fetchColumn(String.self, "SELECT name FROM priced_text ORDER BY price DESC")
        }
        #expect(textOrder == ["p0", "p1", "p2", "p3"])  // "49.9" > "199" > "17.5" > "1234567.89"
    }
}
