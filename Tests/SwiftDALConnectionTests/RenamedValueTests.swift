import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

/// A type written for the old protocol name, `SQLiteValueConvertible`, with its old
/// requirement names: it must keep storing and reading values for one release.
@available(*, deprecated, message: "exercises the deprecated SQLiteValueConvertible on purpose")
private enum LegacyStatus: String, SQLiteValueConvertible {
    case active, banned

    func sqliteValue() throws -> DatabaseValue { .text(rawValue) }

    init?(sqliteValue: DatabaseValue) {
        guard case .text(let text) = sqliteValue else { return nil }
        self.init(rawValue: text)
    }
}

/// Runs the legacy type through a protocol whose witness is deprecated, so that the test
/// itself uses no deprecated name (warnings are errors in CI).
private protocol LegacyRoundTrip {
    static func roundTrip(_ db: Database) throws -> [String]
}

private enum LegacyCheck: LegacyRoundTrip {
    @available(*, deprecated, message: "exercises the deprecated SQLiteValueConvertible on purpose")
    static func roundTrip(_ db: Database) throws -> [String] {
        try db.execute(sql: "CREATE TABLE accounts (id INTEGER PRIMARY KEY, status TEXT NOT NULL)")
        try db.execute(sql: "INSERT INTO accounts (status) VALUES (?), (?)", arguments: [LegacyStatus.banned, "active"])
        let read = try db.fetchAll("SELECT status FROM accounts ORDER BY id") { row in
            try row.decode(LegacyStatus.self, at: 0)
        }
        let unknown = LegacyStatus(databaseValue: .text("gone"))
        return read.map(\.rawValue) + [unknown == nil ? "nil" : "converted"]
    }
}

@Suite struct RenamedValueTests {
    /// `SQLiteValue` and `SQLiteValueConvertible` became `DatabaseValue` and
    /// `DatabaseValueConvertible`; a type conforming to the old protocol with the old
    /// requirement names stores and reads as before.
    @Test func aTypeWrittenForTheOldProtocolNameStillStoresAndReads() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.file("legacy.sqlite"))
        let values = try queue.write { db in try (LegacyCheck.self as any LegacyRoundTrip.Type).roundTrip(db) }
        #expect(values == ["banned", "active", "nil"])
    }
}
