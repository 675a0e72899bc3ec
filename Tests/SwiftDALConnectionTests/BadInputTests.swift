import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

@Suite struct BadInputTests {
    private func populatedFile(_ directory: TemporaryDirectory, rows: Int = 2000) throws -> String {
        let path = directory.file("real.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        let db = try Database(path: path, configuration: configuration)
        try makeUsersTable(db)
        try db.inTransaction {
            for index in 0..<rows {
                try db.execute(
                    "INSERT INTO users(name, email, age, data) VALUES (\("user\(index)"), \("u\(index)@x"), \(index), \(Data(repeating: 7, count: 100)))"
                )
            }
        }
        try db.close()
        return path
    }

    @Test func aTruncatedDatabaseGivesCorruptionErrorsAndTheProcessGoesOn() throws {
        let directory = try TemporaryDirectory()
        let path = try populatedFile(directory)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
        var failure: SQLiteError?
        do {
            let db = try Database(path: path, mode: .readOnly)
            _ = try db.fetchAll("SELECT * FROM users")
            _ = try db.fetchScalar(String.self, "PRAGMA integrity_check")
        } catch let error as SQLiteError {
            failure = error
        }
        #expect(failure?.code.primary == .corrupt)
        let fresh = try Database.inMemory()
        #expect(try fresh.fetchScalar(Int.self, "SELECT 1") == 1)
    }

    @Test func aCorruptedPageIsReportedNotCrashedOn() throws {
        let directory = try TemporaryDirectory()
        let path = try populatedFile(directory)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // Overwrite the middle of the file (b-tree pages) with garbage.
        let start = bytes.count / 3
        for offset in start..<(start + 8192) { bytes[offset] = UInt8(truncatingIfNeeded: offset &* 131) }
        try bytes.write(to: URL(fileURLWithPath: path))
        let db = try Database(path: path, mode: .readOnly)
        var outcome = ""
        do {
            _ = try db.fetchAll("SELECT * FROM users")
            outcome = try db.fetchScalar(String.self, "PRAGMA integrity_check") ?? "nil"
        } catch let error as SQLiteError {
            outcome = "error \(error.code.primary.rawValue)"
        }
        // Either SQLite notices on reading (SQLITE_CORRUPT) or the integrity check does.
        #expect(outcome == "error 11" || (outcome != "ok" && !outcome.isEmpty), "\(outcome)")
    }

    // A read-only file opened by a non-root user is checked by CI and .ci/reliability,
    // which run `swiftdal-crash readonly-probe` as nobody (root ignores file modes); the
    // typed SQLITE_READONLY of a read-only connection is covered in OpeningTests.

    @Test func aFullDiskFailsTheStatementKeepsEveryAcknowledgedWriteAndRecovers() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.file("full.sqlite"))
        try queue.write { try makeUsersTable($0) }
        try queue.write { db in try db.execute(sql: "PRAGMA max_page_count = 40") }
        var acknowledged = 0
        var full: SQLiteError?
        for index in 0..<10_000 {
            do {
                try queue.write { db in
                    try db.execute(
                        "INSERT INTO users(name, data) VALUES (\("row\(index)"), \(Data(repeating: 1, count: 500)))")
                }
                acknowledged += 1
            } catch let error as SQLiteError {
                full = error
                break
            }
        }
        #expect(full?.code.primary == .full)
        #expect(acknowledged > 0)
        try queue.read { db throws -> Void in
            #expect(try db.fetchScalar(String.self, "PRAGMA integrity_check") == "ok")
            #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == acknowledged)
        }
        // Room again: the same connection keeps working.
        try queue.write { db in try db.execute(sql: "PRAGMA max_page_count = 100000") }
        try queue.write { db in try db.execute("INSERT INTO users(name) VALUES ('after')") }
        #expect(try queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == acknowledged + 1)
    }

    @Test func valuesOverTheSizeLimitAreTypedErrors() throws {
        var configuration = Configuration()
        configuration.maximumValueLength = 1000
        let db = try Database.inMemory(configuration: configuration)
        try makeUsersTable(db)
        let text = #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO users(name) VALUES (\(String(repeating: "x", count: 2000)))")
        }
        #expect(text?.code.primary == .tooBig)
        let blob = #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO users(name, data) VALUES ('b', \(Data(count: 5000)))")
        }
        #expect(blob?.code.primary == .tooBig)
        let produced = #expect(throws: SQLiteError.self) { _ = try db.fetchOne("SELECT zeroblob(100000)") }
        #expect(produced?.code.primary == .tooBig)
        try db.execute("INSERT INTO users(name) VALUES (\(String(repeating: "x", count: 900)))")
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 1)
    }

    @Test func infinitiesAreStoredAndNaNIsRefused() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(v REAL)")
        try db.execute("INSERT INTO t VALUES (\(Double.infinity)), (\(-Double.infinity))")
        #expect(try db.fetchColumn(Double.self, "SELECT v FROM t ORDER BY v") == [-.infinity, .infinity])
        #expect(
            #expect(throws: DALError.self) { try db.execute("INSERT INTO t VALUES (\(Double.nan))") }?.code
                == .invalidValue)
        #expect(
            #expect(throws: DALError.self) { try db.execute("INSERT INTO t VALUES (\(Float.nan))") }?.code
                == .invalidValue)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") == 2)
    }
}
