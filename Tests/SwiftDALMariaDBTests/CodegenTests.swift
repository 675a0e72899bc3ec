import Foundation
import SwiftDAL
import SwiftDALCodegen
import SwiftDALMariaDB
import Testing

/// `swiftdal-gen --mysql`: the generator reads MariaDB's catalog (`information_schema`).
@Suite struct MariaDBCodegenTests {
    @Test func theGeneratorReadsAMariaDBCatalog() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.executeScript(
                """
                CREATE TABLE products(id BIGINT AUTO_INCREMENT PRIMARY KEY, sku VARCHAR(40) NOT NULL UNIQUE,
                    price DECIMAL(10,2) NOT NULL DEFAULT 0, photo BLOB, ref UUID, added_at DATETIME(6) NOT NULL,
                    active TINYINT(1), attributes JSON, weight DOUBLE, stock INT NOT NULL, big BIGINT UNSIGNED,
                    kind ENUM('a', 'b'));
                CREATE TABLE codes(code VARCHAR(20) PRIMARY KEY, label VARCHAR(40),
                    changed_at TIMESTAMP(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),
                    touched DATETIME NULL ON UPDATE current_timestamp());
                CREATE TABLE payments(payment_id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, amount DECIMAL(5,2));
                CREATE VIEW cheap AS SELECT sku, price FROM products WHERE price < 10;
                """)
        }
        let generator = EntityGenerator()
        let models = try pool.read { db in
            try ["products", "codes", "cheap", "payments"].map { try generator.model(of: $0, in: db) }
        }
        func property(_ model: EntityModel, _ column: String) -> EntityModel.Property? {
            model.properties.first { $0.column == column }
        }
        let products = models[0]
        #expect(property(products, "id")?.isAssignedByDatabase == true)
        #expect(property(products, "id")?.isOptional == true)
        #expect(property(products, "sku")?.isOptional == false)
        #expect(property(products, "price")?.typeName == "Decimal")
        #expect(property(products, "photo")?.typeName == "Data")
        #expect(property(products, "ref")?.typeName == "UUID")
        #expect(property(products, "added_at")?.typeName == "Date")
        #expect(property(products, "active")?.typeName == "Bool")
        #expect(property(products, "attributes")?.typeName == "String")
        #expect(property(products, "weight")?.typeName == "Double")
        #expect(property(products, "stock")?.typeName == "Int64")
        #expect(property(products, "big")?.typeName == "Decimal")  // past Int64.max: exact digits
        #expect(property(products, "kind")?.typeName == "String")
        #expect(property(models[1], "code")?.isOptional == false)  // a text key is the entity's to give
        #expect(models[2].readOnlyReason == .view)
        // An assigned key is the Int64 insert2 returns and findById takes, unsigned or not.
        #expect(property(models[3], "payment_id")?.typeName == "Int64")
        #expect(property(models[3], "payment_id")?.isAssignedByDatabase == true)
        let source = try pool.read { db in try generator.source(in: db, origin: "test") }
        #expect(source.contains("public final class ProductDAL: BaseDAL<ProductInfo>"))
        #expect(source.contains("public final class CodeDAL: BaseDAL<CodeInfo>"))
        #expect(source.contains("public final class CheapDAL: ReadOnlyDAL<CheapInfo>"))
        // The comments say the columns as the schema declares them.
        #expect(source.contains("Column `id` (bigint(20) NOT NULL AUTO_INCREMENT)."), "\(source)")
        #expect(source.contains("Column `price` (decimal(10,2) NOT NULL DEFAULT 0.00)."))
        // What the server writes on an update of the row, with a default or without one.
        #expect(
            source.contains(
                "Column `changed_at` (timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6))."
            ), "\(source)")
        #expect(source.contains("Column `touched` (datetime ON UPDATE current_timestamp())."))
        let columns = try pool.read { try $0.columns(in: "codes") }
        #expect(columns.map(\.onUpdateSQL) == [nil, nil, "current_timestamp(6)", "current_timestamp()"])
    }
}
