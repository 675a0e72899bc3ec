import CSwiftDALSQLite
import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

@Suite struct ErrorTests {
    private func constraintDatabase() throws -> Database {
        let db = try Database.inMemory()
        try db.executeScript(
            """
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(
              id INTEGER PRIMARY KEY,
              code TEXT NOT NULL UNIQUE,
              n INTEGER CHECK (n > 0),
              parent_id INTEGER REFERENCES parent(id)
            );
            CREATE TABLE pair(a INTEGER, b INTEGER, PRIMARY KEY (a, b)) WITHOUT ROWID;
            INSERT INTO parent VALUES (1);
            INSERT INTO child(code, n, parent_id) VALUES ('x', 1, 1);
            INSERT INTO pair VALUES (1, 1);
            """)
        return db
    }

    @Test func aResultCodeReadsAsSQLiteDescribesIt() {
        // The connection module (which does not link SQLite) spells SQLite's descriptions
        // itself; checked against the library for every primary code and a few extended ones.
        // SQLITE_INTERNAL (2), which SQLite calls an "unknown error", reads "internal error".
        for code in Array(Int32(0)...28).filter({ $0 != 2 }) + [100, 101, 516, 1034, 2067] {
            let sqlite = sqlite3_errstr(code).map { String(cString: $0) } ?? "?"
            #expect(ResultCode(rawValue: code).description == "\(sqlite) (code \(code))")
        }
        #expect(ResultCode.internal.description == "internal error (code 2)")
    }

    @Test func aResultCodeDescribesItsFamilyInWordsAndItsNumber() {
        #expect(ResultCode.busy.description == "database is locked (code 5)")
        #expect(ResultCode.constraintUnique.description == "constraint failed (code 2067)")
        #expect(ResultCode.ioErrorFsync.description == "disk I/O error (code 1034)")
        #expect(ResultCode.done.description == "no more rows available (code 101)")
        #expect(ResultCode(rawValue: 1234).description == "unknown error (code 1234)")
        #expect(ResultCode(rawValue: 4 | 2 << 8).description == "abort due to ROLLBACK (code 516)")
    }

    @Test func eachConstraintKindIsDistinguishable() throws {
        let db = try constraintDatabase()
        let unique = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO child(code, n) VALUES ('x', 1)") }
        #expect(unique?.constraintKind == .unique)
        #expect(unique?.code == .constraintUnique)
        #expect(unique?.primaryCode == .constraint)
        #expect(unique?.message.contains("child.code") == true)
        let notNull = #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO child(code, n) VALUES (NULL, 1)")
        }
        #expect(notNull?.constraintKind == .notNull)
        let check = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO child(code, n) VALUES ('y', 0)") }
        #expect(check?.constraintKind == .check)
        let foreignKey = #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO child(code, n, parent_id) VALUES ('z', 1, 99)")
        }
        #expect(foreignKey?.constraintKind == .foreignKey)
        let primaryKey = #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO child(id, code, n) VALUES (1, 'w', 1)")
        }
        #expect(primaryKey?.constraintKind == .primaryKey)
        let compositeKey = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO pair VALUES (1, 1)") }
        #expect(compositeKey?.constraintKind == .primaryKey)
        let syntax = #expect(throws: SQLiteError.self) { try db.execute(sql: "SELEKT 1") }
        #expect(syntax?.constraintKind == nil)
        #expect(syntax?.code == .error)
    }

    @Test func anErrorsLocalizedDescriptionIsItsDescription() throws {
        let db = try constraintDatabase()
        let sqlite = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO child(code, n) VALUES ('x', 1)") }
        #expect(sqlite?.localizedDescription == sqlite?.description)
        #expect(sqlite?.localizedDescription.contains("UNIQUE constraint failed") == true)
        let dal = DALError(.invalidColumn, "table users has no column named nope")
        #expect(dal.localizedDescription == dal.description)
        #expect((dal as any Error).localizedDescription == dal.description)
        // What a log shows names the table and the column, and the SQL.
        let named = DALError(.conversionFailed, "not an integer", table: "users", column: "age", sql: "SELECT age")
        #expect(
            named.description == "DALError.conversionFailed: not an integer [table users] [column age] — `SELECT age`")
        #expect(named.localizedDescription == named.description)
    }

    /// A table locked by the connection's own statement in flight (SQLITE_LOCKED: dropping
    /// a table that a query still reads) is a lock, retryable as a busy database is, and
    /// answered 503; a constraint is neither.
    @Test func aLockedTableIsRetryable() throws {
        let db = try constraintDatabase()
        try db.executeScript("CREATE TABLE scratch(x); INSERT INTO scratch VALUES (1), (2);")
        let locked = #expect(throws: SQLiteError.self) {
            try db.forEachRow("SELECT x FROM scratch") { _ in try db.execute("DROP TABLE scratch") }
        }
        #expect(locked?.primaryCode == .locked, "\(String(describing: locked))")
        #expect(locked?.isRetryable == true)
        #expect(locked.map(httpStatus(for:)) == 503)
        let unique = #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO child(code, n) VALUES ('x', 1)")
        }
        #expect(unique?.isRetryable == false)
    }

    /// Each SQLite failure falls into the category a service decides on without reading
    /// result codes: a deferred transaction whose snapshot went stale is a conflict (run the
    /// whole transaction again), a file that cannot be opened a connection failure, a file
    /// that is not a database a corrupt one, a value over the length limit an invalid value.
    @Test func sqliteFailuresFallIntoTheCategoryAServiceDecidesOn() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("categories.sqlite")
        let first = try Database(path: path)
        try makeUsersTable(first)
        let second = try Database(path: path)
        let stale = #expect(throws: SQLiteError.self) {
            try first.inTransaction(.deferred) {
                _ = try first.fetchScalar(Int.self, "SELECT COUNT(*) FROM users")
                try second.execute("INSERT INTO users(name) VALUES ('other')")
                try first.execute("INSERT INTO users(name) VALUES ('mine')")
            }
        }
        #expect(stale?.code == .busySnapshot)
        #expect(stale?.category == .conflict)
        let unopenable = #expect(throws: SQLiteError.self) {
            _ = try Database(path: directory.file("no/such/dir/db.sqlite"))
        }
        #expect(unopenable?.category == .connection)
        let garbage = directory.file("garbage.sqlite")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: garbage))
        let notADatabase = #expect(throws: SQLiteError.self) { _ = try Database(path: garbage) }
        #expect(notADatabase?.code == .notADatabase)
        #expect(notADatabase?.category == .corrupt)
        var configuration = Configuration()
        configuration.maximumValueLength = 1000
        let limited = try Database.inMemory(configuration: configuration)
        try makeUsersTable(limited)
        let tooLong = #expect(throws: SQLiteError.self) {
            try limited.execute("INSERT INTO users(name) VALUES (\(String(repeating: "x", count: 2000)))")
        }
        #expect(tooLong?.code.primary == .tooBig)
        #expect(tooLong?.category == .invalidValue)
        try first.close()
        try second.close()
    }

    @Test func errorsArePatternMatchableInCatch() throws {
        let db = try constraintDatabase()
        var caught = ""
        do {
            try db.execute("INSERT INTO child(code, n) VALUES ('x', 1)")
        } catch SQLiteError.constraintNotNull {
            caught = "not null"
        } catch SQLiteError.constraintUnique {
            caught = "unique"
        }
        #expect(caught == "unique")
        do {
            try db.execute("INSERT INTO child(code, n) VALUES ('x', 1)")
        } catch ResultCode.constraint {
            caught = "any constraint"
        }
        #expect(caught == "any constraint")
        do {
            _ = try db.fetchOne("SELECT 1 AS a").map { try $0.value(named: "b") }
        } catch DALError.Code.invalidColumn {
            caught = "invalid column"
        }
        #expect(caught == "invalid column")
    }

    @Test func errorCarriesTheSQLAndKeepsArgumentsOutOfItsDescription() throws {
        let db = try constraintDatabase()
        let secret = "secret-personal-data"
        let error = try #require(throws: SQLiteError.self) {
            try db.execute("INSERT INTO child(code, n) VALUES (\(secret), 0)")
        }
        #expect(error.sql == "INSERT INTO child(code, n) VALUES (?, 0)")
        // No default rendering shows a bound value: print, String(reflecting:) (what an
        // uncaught error prints), string interpolation, dump. Only the explicit opt-in does.
        #expect(!error.description.contains(secret))
        #expect(!error.debugDescription.contains(secret))
        #expect(!String(reflecting: error).contains(secret))
        #expect(!"\(error)".contains(secret))
        var dumped = ""
        dump(error, to: &dumped)
        #expect(!dumped.contains(secret))
        #expect(dumped.contains("CHECK constraint failed"))
        #expect(error.descriptionIncludingArguments.contains(secret))
        #expect(error.arguments?.positionalValues == [.text(secret)])
    }

    @Test func dalErrorsLeaveValuesOutOfTheirMessages() throws {
        let overflow = try #require(throws: DALError.self) { _ = try UInt64.max.databaseValue() }
        #expect(!overflow.description.contains(String(UInt64.max)))
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(d TEXT)")
        let farDate = Date(timeIntervalSince1970: 1e15)
        let dateError = try #require(throws: DALError.self) { try db.execute("INSERT INTO t VALUES (\(farDate))") }
        #expect(dateError.code == .invalidValue)
        #expect(!dateError.description.contains("1000000000000000"))
    }

    @Test func errorsAreThrownAndTheConnectionKeepsWorking() throws {
        let db = try constraintDatabase()
        for _ in 0..<20 {
            #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO child(code, n) VALUES ('x', 1)") }
            #expect(throws: SQLiteError.self) { try db.execute(sql: "SELECT * FROM missing_table") }
        }
        try db.execute("INSERT INTO child(code, n) VALUES ('fresh', 1)")
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM child") == 2)
    }
}
