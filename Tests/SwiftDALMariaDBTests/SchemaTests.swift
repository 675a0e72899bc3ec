import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// Tables from `TableDefinition` in MariaDB's DDL, and what the catalog says of them.
@Suite struct MariaDBSchemaTests {
    /// A generated column (virtual or stored) is read, never written: inserts and updates
    /// leave it out (MariaDB refuses a value for it), checked from a second session.
    @Test func aGeneratedColumnIsReadAndNeverWritten() throws {
        struct Film: Entity, Codable {
            static let tableName = "films"
            var id: Int64?
            var title: String
            var titleLength: Int?
            var upperTitle: String?
            enum CodingKeys: String, CodingKey {
                case id, title
                case titleLength = "title_length"
                case upperTitle = "upper_title"
            }
        }
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        _ = try outside.sql(
            "CREATE TABLE films(id BIGINT AUTO_INCREMENT PRIMARY KEY, title VARCHAR(50) NOT NULL, "
                + "title_length INT AS (CHAR_LENGTH(title)) VIRTUAL, "
                + "upper_title VARCHAR(50) GENERATED ALWAYS AS (UPPER(title)) STORED)")
        let films = BaseDAL<Film>(database: pool)
        let first = try films.insert2(Film(title: "Alien", titleLength: 99, upperTitle: "x"))
        var copy = try #require(try films.findById(first))
        #expect(copy.titleLength == 5)
        #expect(copy.upperTitle == "ALIEN")
        copy.id = nil
        copy.id = try films.insert2(copy)
        copy.title = "Heat"
        copy.titleLength = 1
        #expect(try films.update(copy))
        #expect(
            try outside.sql("SELECT title, title_length, upper_title FROM films ORDER BY id")
                == "Alien\t5\tALIEN\nHeat\t4\tHEAT")
        let columns = try pool.read { db in try db.columns(in: "films") }
        #expect(columns.filter(\.isGenerated).map(\.name) == ["title_length", "upper_title"])
    }

    /// A column the server sets on update (`ON UPDATE current_timestamp(6)`) is set when
    /// `update` changes another column (BaseDAL writes only what changed), written as
    /// given when the entity changes it, and untouched by an update that changes nothing;
    /// checked from a second session.
    @Test func aColumnSetOnUpdateIsSetByTheServerUnlessTheEntityChangesIt() throws {
        struct Stamped: Entity, Codable {
            static let tableName = "stamped"
            var id: Int64?
            var title: String
            var changedAt: Date?
            enum CodingKeys: String, CodingKey {
                case id, title
                case changedAt = "changed_at"
            }
        }
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        _ = try outside.sql(
            "CREATE TABLE stamped(id BIGINT AUTO_INCREMENT PRIMARY KEY, title VARCHAR(50) NOT NULL, "
                + "changed_at TIMESTAMP(6) NOT NULL DEFAULT '2000-01-01 00:00:00' ON UPDATE current_timestamp(6))")
        let stamped = BaseDAL<Stamped>(database: pool)
        let id = try stamped.insert2(Stamped(title: "draft"))
        let stampedAt = "SELECT UNIX_TIMESTAMP(changed_at) > UNIX_TIMESTAMP('2001-01-01') FROM stamped"
        #expect(try outside.sql(stampedAt) == "0")  // the default
        var row = try #require(try stamped.findById(id))
        #expect(try stamped.update(row))  // nothing changed: nothing written
        #expect(try outside.sql(stampedAt) == "0")
        row.title = "final"
        #expect(try stamped.update(row))
        #expect(try outside.sql(stampedAt) == "1")  // set by the server
        row = try #require(try stamped.findById(id))
        row.title = "again"
        row.changedAt = Date(timeIntervalSince1970: 1_000_000_000)
        #expect(try stamped.update(row))
        #expect(try outside.sql("SELECT title, UNIX_TIMESTAMP(changed_at) FROM stamped") == "again\t1000000000.000000")
        #expect(
            try pool.read { try $0.columns(in: "stamped") }.map(\.onUpdateSQL) == [nil, nil, "current_timestamp(6)"])
    }

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
