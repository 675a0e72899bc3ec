import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

@Suite struct TraceAndBackupTests {
    @Test func traceReportsSQLWithoutValuesAndADuration() throws {
        let events = Locked<[TraceEvent]>([])
        var configuration = Configuration()
        configuration.trace = { event in events.withLock { $0.append(event) } }
        let db = try Database.inMemory(configuration: configuration)
        try makeUsersTable(db)
        try db.execute("INSERT INTO users(name) VALUES (\("private-name"))")
        let traced = events.withLock { $0 }
        let insert = traced.first { $0.sql.hasPrefix("INSERT") }
        #expect(insert?.sql == "INSERT INTO users(name) VALUES (?)")
        #expect(insert.map { $0.duration >= .zero } == true)
        #expect(!traced.contains { $0.sql.contains("private-name") })
    }

    @Test func onlineBackupCopiesEverythingWhileThePoolStaysUsable() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("source.sqlite"))
        try pool.write { db in
            try makeUsersTable(db)
            for index in 0..<100 {
                try db.execute("INSERT INTO users(name, data) VALUES (\("u\(index)"), \(Data([UInt8(index)])))")
            }
        }
        let target = directory.file("backup.sqlite")
        try pool.backup(toPath: target)
        try pool.write { try $0.execute("INSERT INTO users(name) VALUES ('after')") }
        let copy = try Database(path: target, mode: .readOnly)
        #expect(try copy.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 100)
        #expect(try copy.fetchScalar(String.self, "PRAGMA integrity_check") == "ok")
        #expect(try copy.fetchScalar(Data.self, "SELECT data FROM users WHERE name = 'u42'") == Data([42]))
        // One self-contained file in rollback-journal mode, though the pool's is WAL: the
        // header's read and write versions (bytes 18 and 19) say 1, not 2, and nothing is beside it.
        #expect(try copy.fetchScalar(String.self, "PRAGMA journal_mode") == "delete")
        let header = try Data(contentsOf: URL(fileURLWithPath: target)).prefix(20)
        #expect(Array(header.suffix(2)) == [1, 1])
        #expect(!FileManager.default.fileExists(atPath: target + "-wal"))
    }

    /// A passive checkpoint (the default) copies what it can past a reader of an older
    /// snapshot and says it is incomplete; a full one waits for that reader and throws
    /// SQLITE_BUSY. A database not in WAL mode has no log: 0 frames, complete.
    @Test func checkpointModesTreatAReaderOfAnOlderSnapshotAsDocumented() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("wal.sqlite")
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(20)
        let writer = try Database(path: path, configuration: configuration)
        let reader = try Database(path: path, configuration: configuration)
        try makeUsersTable(writer)
        try writer.execute("INSERT INTO users(name) VALUES ('a')")
        try reader.inTransaction {
            #expect(try reader.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 1)
            try writer.execute("INSERT INTO users(name) VALUES ('b')")
            let passive = try writer.checkpoint()
            #expect(!passive.isComplete && passive.logFrames > passive.checkpointedFrames, "\(passive)")
            let error = #expect(throws: SQLiteError.self) { try writer.checkpoint(.full) }
            #expect(error?.primaryCode == .busy)
        }
        #expect(try writer.checkpoint(.full).isComplete)
        try reader.close()
        try writer.close()

        var rollback = Configuration()
        rollback.journalMode = .delete
        let plain = try Database(path: directory.file("plain.sqlite"), configuration: rollback)
        try makeUsersTable(plain)
        #expect(try plain.checkpoint(.truncate) == CheckpointResult(logFrames: 0, checkpointedFrames: 0))
        try plain.close()
    }
}
