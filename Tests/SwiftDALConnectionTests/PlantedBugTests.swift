import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

/// Deterministic tests for bugs that were planted in the library and got through the
/// other suites (issue 13, item 9); `.ci/mutants` plants each of them again and checks
/// that these tests fail.
@Suite struct PlantedBugTests {
    /// `child.parent_id` is checked only at COMMIT (or when an autocommit statement ends).
    private func deferredForeignKeyTables(_ db: Database) throws {
        try db.executeScript(
            """
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(
              id INTEGER PRIMARY KEY,
              parent_id INTEGER NOT NULL REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED
            );
            """)
    }

    private func rowCounts(_ db: Database) throws -> [Int] {
        [
            try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM parent") ?? -1,
            try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM child") ?? -1
        ]
    }

    /// Planted bug: the rollback removed from `inTransaction`'s body catch. A queue or
    /// pool hides it (the next access discards the leftover transaction); a connection
    /// opened directly does not.
    @Test func aThrowingBodyRollsBackOnAConnectionOpenedDirectly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("direct.sqlite")
        for db in [try Database.inMemory(), try Database(path: path)] {
            try makeUsersTable(db)
            #expect(throws: TestFailure.self) {
                try db.inTransaction(.immediate) {
                    try db.execute("INSERT INTO users(name) VALUES ('dropped')")
                    throw TestFailure()
                }
            }
            #expect(!db.isInTransaction)
            #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 0)
        }
        // The file's write lock was released: another connection writes at once.
        var noWaiting = Configuration()
        noWaiting.busyTimeout = .zero
        let other = try Database(path: path, configuration: noWaiting)
        try other.inTransaction(.immediate) { try other.execute("INSERT INTO users(name) VALUES ('other')") }
        #expect(try other.fetchColumn(String.self, "SELECT name FROM users") == ["other"])
    }

    /// Planted bug: `BEGIN` sent without its kind. An immediate or exclusive transaction
    /// takes the file's write lock as it begins, before it writes (another connection,
    /// not waiting, is refused at once); a deferred one takes none until it writes.
    @Test func aTransactionsKindTakesTheWriteLockAsItBegins() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("kinds.sqlite")
        let db = try Database(path: path)
        try makeUsersTable(db)
        var noWaiting = Configuration()
        noWaiting.busyTimeout = .zero
        let other = try Database(path: path, configuration: noWaiting)
        for kind in [TransactionKind.immediate, .exclusive] {
            try db.inTransaction(kind) {
                let refused = #expect(throws: SQLiteError.self) { try other.inTransaction(.immediate) {} }
                #expect(refused?.resultCode == .busy, "\(kind): \(String(describing: refused))")
            }
        }
        try db.inTransaction(.deferred) {
            _ = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users")
            try other.inTransaction(.immediate) { try other.execute("INSERT INTO users(name) VALUES ('other')") }
        }
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 1)
    }

    /// Planted bug: the writer mutex removed from `DatabasePool`. Thread A holds a write
    /// closure while thread B calls `write`: B must not enter until A has left.
    @Test func aSecondWriteWaitsUntilTheFirstHasLeftThePool() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("writers.sqlite"))
        try pool.write { try $0.execute(sql: "CREATE TABLE log(id INTEGER PRIMARY KEY, who TEXT NOT NULL)") }
        let aInside = DispatchSemaphore(value: 0)
        let bCalling = DispatchSemaphore(value: 0)
        let bEntered = DispatchSemaphore(value: 0)
        let aLeft = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let problems = ProblemLog()
        finished.enter()
        Thread {
            do {
                try pool.write { db in
                    try db.execute("INSERT INTO log(who) VALUES ('a1')")
                    aInside.signal()
                    problems.expect(bCalling.wait(timeout: .now() + 30) == .success, "B never called write")
                    // B is calling write: for this bounded time it must stay out.
                    if bEntered.wait(timeout: .now() + 1) == .success {
                        problems.add("B entered the writer while A was inside")
                        throw TestFailure()  // without touching the connection B now uses
                    }
                    try db.execute("INSERT INTO log(who) VALUES ('a2')")
                }
            } catch {
                problems.add("A: \(error)")
            }
            aLeft.signal()
            finished.leave()
        }.start()
        finished.enter()
        Thread {
            if aInside.wait(timeout: .now() + 30) == .success {
                bCalling.signal()
                do {
                    try pool.write { db in
                        bEntered.signal()
                        problems.expect(aLeft.wait(timeout: .now() + 30) == .success, "A never left")
                        try db.execute("INSERT INTO log(who) VALUES ('b')")
                    }
                } catch {
                    problems.add("B: \(error)")
                }
            } else {
                problems.add("A never entered")
            }
            finished.leave()
        }.start()
        #expect(finished.wait(timeout: .now() + 60) == .success)
        #expect(problems.all.isEmpty, "\(problems.all)")
        let rows = try pool.read { try $0.fetchColumn(String.self, "SELECT who FROM log ORDER BY id") }
        #expect(rows == ["a1", "a2", "b"])
        try pool.close()
    }

    /// Planted bug: `sqlite3_reset`'s result ignored. `fetchOne` steps once, gets the
    /// `RETURNING` row, then resets the statement while it is still running: that halts
    /// the autocommit insert, which commits, and the deferred foreign key fails there.
    @Test func aResetThatCommitsAndFailsADeferredForeignKeyThrows() throws {
        let db = try Database.inMemory()
        try deferredForeignKeyTables(db)
        let error = #expect(throws: SQLiteError.self) {
            _ = try db.fetchOne("INSERT INTO child(parent_id) VALUES (999) RETURNING id")
        }
        #expect(error?.code == .constraintForeignKey)
        #expect(try rowCounts(db) == [0, 0])
        #expect(!db.isInTransaction)
        // The same cached statement works once the parent exists.
        try db.execute("INSERT INTO parent(id) VALUES (999)")
        let row = try #require(try db.fetchOne("INSERT INTO child(parent_id) VALUES (999) RETURNING id"))
        #expect(try row.decode(Int64.self, at: 0) == 1)
        #expect(try rowCounts(db) == [1, 1])
    }

    /// Planted bug: a failed COMMIT swallowed by `inTransaction`. The deferred foreign
    /// key fails at COMMIT: the caller must get the error, no transaction may stay open,
    /// and the transaction's writes must be gone.
    @Test func aFailedCommitThrowsLeavesNoTransactionOpenAndLosesTheWrites() throws {
        let db = try Database.inMemory()
        try deferredForeignKeyTables(db)
        let direct = #expect(throws: SQLiteError.self) {
            try db.inTransaction(.immediate) {
                try db.execute("INSERT INTO parent(id) VALUES (1)")
                try db.execute("INSERT INTO child(parent_id) VALUES (999)")
            }
        }
        #expect(direct?.code == .constraintForeignKey)
        #expect(!db.isInTransaction)
        #expect(try rowCounts(db) == [0, 0])

        let directory = try TemporaryDirectory()
        let writers: [any DatabaseWriter] = [
            try DatabasePool(path: directory.file("commit-pool.sqlite")),
            try DatabaseQueue(path: directory.file("commit-queue.sqlite"))
        ]
        for writer in writers {
            try writer.write { try deferredForeignKeyTables($0) }
            let error = #expect(throws: SQLiteError.self) {
                try writer.write { db in
                    try db.execute("INSERT INTO parent(id) VALUES (1)")
                    try db.execute("INSERT INTO child(parent_id) VALUES (999)")
                }
            }
            #expect(error?.code == .constraintForeignKey, "\(type(of: writer))")
            #expect(try writer.read { try rowCounts($0) } == [0, 0], "\(type(of: writer))")
            try writer.write { db in
                try db.execute("INSERT INTO parent(id) VALUES (999)")
                try db.execute("INSERT INTO child(parent_id) VALUES (999)")
            }
            #expect(try writer.read { try rowCounts($0) } == [1, 1], "\(type(of: writer))")
            try writer.close()
        }
    }

    /// Planted bug: a cached statement handed out while a cursor still steps it (the
    /// inner query continues the cursor's statement, then resets it, and the cursor starts
    /// over). The loop is bounded, so the bug fails the test instead of hanging it.
    @Test func aCachedStatementIsNeverSharedWithALiveCursor() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(n INTEGER)")
        for n in 1...3 { try db.execute("INSERT INTO t VALUES (\(n))") }
        let outer = try db.makeCursor("SELECT n FROM t ORDER BY n")
        var seen = [Int]()
        while seen.count < 10, let row = try outer.next() {
            seen.append(try row.decode(Int.self, at: 0))
            #expect(try db.fetchColumn(Int.self, "SELECT n FROM t ORDER BY n") == [1, 2, 3])
        }
        #expect(seen == [1, 2, 3])
    }

    /// Planted bug: the access guard removed (`ConnectionAccess.check` always passing). A
    /// connection returned out of its closure must throw, not run SQL on a connection
    /// that no thread holds.
    @Test func aConnectionThatEscapedItsClosureThrowsAccessEnded() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("escape.sqlite"))
        try pool.write { try $0.execute(sql: "CREATE TABLE t(x INTEGER)") }
        let reader = try pool.read { $0 }
        #expect(#expect(throws: DALError.self) { _ = try reader.fetchOne("SELECT 1") }?.code == .accessEnded)
        let writer = try pool.write { $0 }
        #expect(#expect(throws: DALError.self) { try writer.execute("INSERT INTO t VALUES (1)") }?.code == .accessEnded)
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") } == 0)

        let queue = try DatabaseQueue.inMemory()
        let escaped = try queue.read { $0 }
        #expect(#expect(throws: DALError.self) { _ = try escaped.fetchOne("SELECT 1") }?.code == .accessEnded)
        try pool.close()
    }
}

/// Problems seen on other threads, reported by the test's thread.
final class ProblemLog: Sendable {
    private let problems = Locked<[String]>([])

    func add(_ problem: String) { problems.withLock { $0.append(problem) } }
    func expect(_ condition: Bool, _ problem: String) { if !condition { add(problem) } }
    var all: [String] { problems.withLock { $0 } }
}

@Suite struct CursorWriteTests {
    /// A cursor over an autocommit `INSERT … RETURNING` abandoned after its first row: the
    /// reset when the cursor is released (or its access ends) halts the insert, which
    /// commits, and a deferred foreign key fails there, where no error can be reported.
    /// So a cursor refuses statements that write: the write runs with `fetchAll`, whose
    /// failure is thrown.
    @Test func aCursorRefusesAWriteAndFetchAllReportsItsFailedCommit() throws {
        let db = try Database.inMemory()
        try db.executeScript(
            """
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(
              id INTEGER PRIMARY KEY,
              parent_id INTEGER NOT NULL REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED
            );
            """)
        let refused = #expect(throws: DALError.self) {
            _ = try db.makeCursor("INSERT INTO child(parent_id) VALUES (999) RETURNING id")
        }
        #expect(refused?.code == .invalidSQL)
        #expect(
            #expect(throws: SQLiteError.self) {
                _ = try db.fetchAll("INSERT INTO child(parent_id) VALUES (999) RETURNING id")
            }?.code
                == .constraintForeignKey)
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM child") == 0)
        // Reads still stream.
        let cursor = try db.makeCursor("SELECT id FROM parent")
        #expect(try cursor.next() == nil)
    }
}
