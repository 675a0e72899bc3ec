import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

@Suite struct OpeningTests {
    @Test func fileIsCreatedWithTheDefaultSettings() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new.sqlite")
        let db = try Database(path: path)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try db.fetchScalar(String.self, "PRAGMA journal_mode") == "wal")
        #expect(try db.fetchScalar(Int.self, "PRAGMA foreign_keys") == 1)
        #expect(try db.fetchScalar(Int.self, "PRAGMA busy_timeout") == 5000)
        #expect(try db.fetchScalar(Int.self, "PRAGMA synchronous") == 2)
        try db.close()
        #expect(db.isClosed)
        #expect(#expect(throws: DALError.self) { try db.execute(sql: "SELECT 1") }?.code == .connectionClosed)
    }

    @Test func userPragmasAndPrepareHookRun() throws {
        var configuration = Configuration()
        configuration.pragmas = [Pragma(name: "cache_size", value: "-4000"), Pragma(name: "user_version", value: "7")]
        configuration.synchronous = .normal
        configuration.prepareDatabase = { db in try db.execute(sql: "CREATE TEMP TABLE hooked(x)") }
        let db = try Database.inMemory(configuration: configuration)
        #expect(try db.fetchScalar(Int.self, "PRAGMA cache_size") == -4000)
        #expect(try db.fetchScalar(Int.self, "PRAGMA user_version") == 7)
        #expect(try db.fetchScalar(Int.self, "PRAGMA synchronous") == 1)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM temp.hooked") == 0)
    }

    @Test func hostilePragmasAreRefused() throws {
        for pragma in [
            Pragma(name: "cache_size; DROP TABLE x", value: "1"), Pragma(name: "cache_size", value: "1; DROP TABLE x"),
            // A value is a word or a number: no space, quote, parenthesis or comment.
            Pragma(name: "cache_size", value: "1 -- x"), Pragma(name: "journal_mode", value: "'wal'"),
            Pragma(name: "cache_size", value: "(1)"), Pragma(name: "cache_size", value: "1 "),
            Pragma(name: "cache_size", value: "")
        ] {
            var configuration = Configuration()
            configuration.pragmas = [pragma]
            let error = #expect(throws: DALError.self) { _ = try Database.inMemory(configuration: configuration) }
            #expect(error?.code == .invalidValue || error?.code == .invalidIdentifier, "\(pragma)")
        }
    }

    @Test func readOnlyConnectionsCannotWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("ro.sqlite")
        let writer = try Database(path: path)
        try makeUsersTable(writer)
        let reader = try Database(path: path, mode: .readOnly)
        let error = #expect(throws: SQLiteError.self) { try reader.execute("INSERT INTO users(name) VALUES ('x')") }
        #expect(error?.code.primary == .readOnly)
        #expect(try reader.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 0)
        let missing = #expect(throws: SQLiteError.self) {
            _ = try Database(path: directory.file("absent.sqlite"), mode: .readOnly)
        }
        #expect(missing?.code.primary == .cannotOpen)
    }

    @Test func missingDirectoryIsAClearError() throws {
        let directory = try TemporaryDirectory()
        let error = #expect(throws: SQLiteError.self) {
            _ = try Database(path: directory.file("no/such/dir/db.sqlite"))
        }
        #expect(error?.code.primary == .cannotOpen)
        #expect(error?.message.contains("no/such/dir") == true)
    }

    @Test func aFileThatIsNotADatabaseFailsAtOpen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("garbage.sqlite")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(
            to: URL(fileURLWithPath: path))
        let error = #expect(throws: SQLiteError.self) { _ = try Database(path: path) }
        #expect(error?.code == .notADatabase)
    }

    @Test func templateIsCopiedOnlyWhenTheDatabaseIsMissingAndNeverModified() throws {
        let directory = try TemporaryDirectory()
        let template = directory.file("template.sqlite")
        let seed = try Database(
            path: template,
            configuration: {
                var c = Configuration()
                c.journalMode = .delete
                return c
            }())
        try makeUsersTable(seed)
        try seed.execute("INSERT INTO users(name) VALUES ('seed')")
        try seed.close()
        let templateBytes = try Data(contentsOf: URL(fileURLWithPath: template))

        let path = directory.file("live.sqlite")
        let queue = try DatabaseQueue(path: path, template: template)
        try queue.write { db in try db.execute("INSERT INTO users(name) VALUES ('added')") }
        try queue.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: template)) == templateBytes)

        // A second open reuses the live file: the added row is still there.
        #expect(try Database.copyTemplateIfMissing(template, to: path) == false)
        let again = try DatabaseQueue(path: path, template: template)
        #expect(
            try again.read { try $0.fetchColumn(String.self, "SELECT name FROM users ORDER BY id") } == [
                "seed", "added"
            ])
        #expect(
            #expect(throws: DALError.self) {
                try Database.copyTemplateIfMissing(directory.file("nope.sqlite"), to: directory.file("x.sqlite"))
            }?.code == .fileSystem)
    }

    /// Copying a template leaves the directory holding the template and the copy, nothing
    /// else: the temporary file the copy was written to is gone.
    @Test func copyingATemplateLeavesNoTemporaryFileBehind() throws {
        let directory = try TemporaryDirectory()
        let template = directory.file("template.sqlite")
        let seed = try Database(path: template)
        try makeUsersTable(seed)
        try seed.close()
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(try Database.copyTemplateIfMissing(template, to: directory.file("live.sqlite")))
        let after = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(Set(after) == Set(before + ["live.sqlite"]))
    }

    @Test func inMemoryCopyOfAFileLeavesTheFileUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("fixture.sqlite")
        let fixture = try Database(path: path)
        try makeUsersTable(fixture)
        try fixture.execute("INSERT INTO users(name) VALUES ('one')")
        try fixture.close()
        let copy = try Database.inMemoryCopy(of: path)
        try copy.execute("DELETE FROM users")
        #expect(try copy.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 0)
        let reopened = try Database(path: path, mode: .readOnly)
        #expect(try reopened.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 1)
    }

    @Test func closeReportsOpenStatementsInsteadOfLeakingThem() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        let statement = try db.makeStatement(sql: "SELECT * FROM users")
        let error = #expect(throws: DALError.self) { try db.close() }
        #expect(error?.code == .statementsStillOpen)
        #expect(error?.message.contains("SELECT * FROM users") == true)
        #expect(!db.isClosed)
        #expect(try statement.fetchAll().isEmpty)
        _ = consume statement
        try db.close()
        #expect(db.isClosed)
    }

    @Test func pathsWithSpacesAndNonASCIICharactersWork() throws {
        let directory = try TemporaryDirectory()
        let subdirectory = directory.file("dossier données ü")
        try FileManager.default.createDirectory(atPath: subdirectory, withIntermediateDirectories: true)
        let path = subdirectory + "/base de données 🚀.sqlite"
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try makeUsersTable(db) }
        try queue.close()
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
