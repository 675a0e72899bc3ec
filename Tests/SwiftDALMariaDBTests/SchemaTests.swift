import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// Tables from `TableDefinition` in MariaDB's DDL, and what the catalog says of them.
@Suite struct MariaDBSchemaTests {
    @Test func aTableDefinitionIsCreatedInMariaDBsDDLAndDescribedBack() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        let owners = TableDefinition("owners") { t in
            t.column("id", .integer)
            t.column("handle", .text, notNull: true, unique: true)
            t.primaryKey(["id"])
        }
        let pets = TableDefinition("pets") { t in
            t.column("owner_id", .integer, notNull: true)
            t.column("name", .text, notNull: true)
            t.column("notes", .text)
            t.column("photo", .blob)
            t.column("weight", .real, default: .value(.real(1.5)))
            t.primaryKey(["owner_id", "name"])
            t.foreignKey(["owner_id"], references: "owners", columns: ["id"], onDelete: .cascade)
            t.index("pets_notes_free", on: ["owner_id"])
            t.isWithoutRowID = true
        }
        let description = try pool.write { db in
            try db.create(owners)
            try db.create(pets)
            try db.execute(sql: "INSERT INTO owners (handle) VALUES ('ann')")
            try db.execute(sql: "INSERT INTO pets (owner_id, name) VALUES (1, 'rex')")
            return (
                tables: try db.tableNames(), pets: try db.describe(table: "pets"),
                owners: try db.describe(table: "owners")
            )
        }
        #expect(description.tables == ["owners", "pets"])
        // The key's text is bounded (InnoDB indexes no LONGTEXT); free text is LONGTEXT.
        let types = try outside.sql(
            "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
                + "AND TABLE_NAME = 'pets' ORDER BY ORDINAL_POSITION")
        #expect(types == "owner_id\tbigint\nname\tvarchar\nnotes\tlongtext\nphoto\tlongblob\nweight\tdouble")
        #expect(try outside.sql("SELECT weight FROM pets") == "1.5")
        #expect(description.pets.primaryKey == ["owner_id", "name"])
        #expect(description.pets.indexes.contains { $0.origin == "pk" && $0.columns == ["owner_id", "name"] })
        #expect(description.pets.indexes.contains { $0.name == "pets_notes_free" && $0.origin == "c" })
        #expect(
            description.pets.foreignKeys == [
                ForeignKeyInfo(
                    columns: ["owner_id"], table: "owners", referencedColumns: ["id"], onUpdate: "NO ACTION",
                    onDelete: "CASCADE")
            ])
        #expect(description.owners.indexes.contains { $0.isUnique && $0.columns == ["handle"] })
        // The integer key is AUTO_INCREMENT (the catalog's columns say so).
        #expect(description.owners.columns.first { $0.name == "id" }?.defaultValueSQL == "AUTO_INCREMENT")
        // SQLite's NOCASE has no MariaDB equivalent: refused with a clear error.
        let nocase = TableDefinition("tags") { t in t.column("name", .text, collation: "NOCASE") }
        #expect(throws: DALError.self) { try pool.write { db in try db.create(nocase) } }
    }
}
