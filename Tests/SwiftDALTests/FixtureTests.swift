import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

@Suite struct FixtureTests {
    private func dump(_ db: Database) throws -> [String] {
        var lines = try db.fetchColumn(String.self, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
        for table in ["users", "orders", "user_tags"] {
            lines += try db.fetchAll(SQL(sql: "SELECT * FROM \(quoteIdentifier(table)) ORDER BY 1, 2")).map(\.description)
        }
        return lines
    }

    @Test func committedSampleDatabaseMatchesSchemaAndSeedFiles() throws {
        let rebuilt = try Database.inMemory()
        try rebuilt.executeScript(String(contentsOfFile: fixturesDirectory + "/schema.sql", encoding: .utf8))
        try rebuilt.executeScript(String(contentsOfFile: fixturesDirectory + "/seed.sql", encoding: .utf8))
        let committed = try Database(path: sampleDatabase, mode: .readOnly)
        #expect(try dump(committed) == dump(rebuilt))
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
}
