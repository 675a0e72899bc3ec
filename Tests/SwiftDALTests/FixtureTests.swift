import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct FixtureTests {
    /// Schema and contents of a database, comparable across builds (migration
    /// timestamps left out).
    private func dump(_ path: String) throws -> [String] {
        let db = try Database(path: path, mode: .readOnly)
        var lines = [try SampleFixtures.schemaText(db)]
        lines += try db.fetchColumn(String.self, "SELECT id FROM swiftdal_migrations ORDER BY rowid")
        for table in try db.tableNames() where table != "swiftdal_migrations" {
            lines += try db.fetchAll(SQL(sql: "SELECT * FROM \(quoteIdentifier(table)) ORDER BY 1, 2")).map(
                \.description)
        }
        return lines
    }

    @Test func committedFixturesAreWhatTheMigrationsAndSeedsBuild() throws {
        let directory = try TemporaryDirectory()
        for seed in ["seed-v1.sql", "seed-v2.sql"] {
            try FileManager.default.copyItem(atPath: fixturesDirectory + "/" + seed, toPath: directory.file(seed))
        }
        try SampleFixtures.build(in: directory.path)
        for database in ["sample-v1.sqlite", "sample-v2.sqlite", "sample.sqlite"] {
            #expect(try dump(fixturesDirectory + "/" + database) == dump(directory.file(database)), "\(database)")
        }
        let schema = try String(contentsOfFile: fixturesDirectory + "/schema.sql", encoding: .utf8)
        #expect(schema == (try String(contentsOfFile: directory.file("schema.sql"), encoding: .utf8)))
        let committed = try Database(path: sampleDatabase, mode: .readOnly)
        #expect(try committed.fetchScalar(String.self, "PRAGMA integrity_check") == "ok")
        #expect(try committed.fetchAll("PRAGMA foreign_key_check").isEmpty)
    }

    @Test func testsNeverModifyTheCommittedFixture() throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: sampleDatabase))
        let sample = try Sample()
        _ = try sample.users.deleteByCondition("1 = 1")
        #expect(try sample.users.getRecordCount() == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sampleDatabase)) == before)
    }

    @Test func sampleEntitiesMatchTheirTables() throws {
        let sample = try Sample()
        try SampleSchema.verify(users: sample.users, orders: sample.orders, tags: sample.tags)
    }
}
