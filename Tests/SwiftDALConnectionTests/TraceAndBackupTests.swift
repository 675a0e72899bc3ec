import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@Suite struct TraceAndBackupTests {
    @Test func traceReportsSQLWithoutValuesAndADuration() throws {
        let events = LockedEvents()
        var configuration = Configuration()
        configuration.trace = { events.append($0) }
        let db = try Database.inMemory(configuration: configuration)
        try makeUsersTable(db)
        try db.execute("INSERT INTO users(name) VALUES (\("private-name"))")
        let insert = events.all.first { $0.sql.hasPrefix("INSERT") }
        #expect(insert?.sql == "INSERT INTO users(name) VALUES (?)")
        #expect(insert.map { $0.duration >= .zero } == true)
        #expect(!events.all.contains { $0.sql.contains("private-name") })
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
    }
}

final class LockedEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [TraceEvent] = []
    func append(_ event: TraceEvent) { lock.withLock { events.append(event) } }
    var all: [TraceEvent] { lock.withLock { events } }
}
