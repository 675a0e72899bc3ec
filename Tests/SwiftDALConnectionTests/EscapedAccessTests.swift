import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

/// A connection, statement, cursor or row view that escapes the closure it was lent to
/// must throw `accessEnded` when used later, never touch a connection another thread is
/// using (that crashed inside libsqlite3), and never read a pinned, stale snapshot.
@Suite struct EscapedAccessTests {
    /// A pool with one reader, so that every read uses the same connection.
    private func singleReaderPool(_ directory: TemporaryDirectory) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.maximumReaderCount = 1
        let pool = try DatabasePool(path: directory.file("escape.sqlite"), configuration: configuration)
        try pool.write { db in
            try makeUsersTable(db)
            for index in 0..<50 { try db.execute("INSERT INTO users(name, age) VALUES (\("u\(index)"), \(index))") }
        }
        return pool
    }

    @Test func anEscapedConnectionThrowsWhileAnotherThreadUsesIt() throws {
        let directory = try TemporaryDirectory()
        let pool = try singleReaderPool(directory)
        let escaped = try pool.read { $0 }
        let stop = Locked(false)
        let reads = Locked(0)
        let reader = Thread {
            while !stop.withLock({ $0 }) {
                if (try? pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") }) == 50 {
                    reads.withLock { $0 += 1 }
                }
            }
        }
        reader.start()
        while reads.withLock({ $0 }) < 5 { Thread.sleep(forTimeInterval: 0.001) }
        for _ in 0..<300 {
            #expect(
                #expect(throws: DALError.self) { _ = try escaped.fetchAll("SELECT * FROM users") }?.code == .accessEnded
            )
            #expect(#expect(throws: DALError.self) { _ = try escaped.execute(sql: "SELECT 1") }?.code == .accessEnded)
            #expect(
                #expect(throws: DALError.self) { _ = try escaped.makeStatement(sql: "SELECT 1") }?.code == .accessEnded)
            #expect(#expect(throws: DALError.self) { _ = try escaped.lastInsertedRowID }?.code == .accessEnded)
            #expect(#expect(throws: DALError.self) { try escaped.clearStatementCache() }?.code == .accessEnded)
            #expect(!escaped.isInTransaction)
        }
        stop.withLock { $0 = true }
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        #expect(reads.withLock { $0 } >= 5)
        // The pool is unharmed, and closing the pooled connection directly is refused.
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == 50)
        #expect(#expect(throws: DALError.self) { try escaped.close() }?.code == .accessEnded)
        try pool.close()
    }

    @Test func anEscapedStatementThrowsAndIsFinalizedByTheNextHolder() throws {
        let directory = try TemporaryDirectory()
        let pool = try singleReaderPool(directory)
        var statement: Statement? = try pool.read { try $0.makeStatement(sql: "SELECT name FROM users WHERE age = ?") }
        #expect(#expect(throws: DALError.self) { _ = try statement?.fetchAll(arguments: [1]) }?.code == .accessEnded)
        #expect(#expect(throws: DALError.self) { _ = try statement?.execute(arguments: [1]) }?.code == .accessEnded)
        #expect(#expect(throws: DALError.self) { _ = try statement?.columnNames }?.code == .accessEnded)
        // Released here, on a thread that does not hold the connection: finalized later,
        // by the next read, so that closing the pool finds no statement left open.
        statement = nil
        #expect(try pool.read { try $0.fetchScalar(String.self, "SELECT name FROM users WHERE age = 3") } == "u3")
        try pool.close()
    }

    @Test func anEscapedCursorThrowsAndDoesNotPinASnapshot() throws {
        let directory = try TemporaryDirectory()
        let pool = try singleReaderPool(directory)
        let cursor = try pool.read { db -> RowCursor in
            let cursor = try db.makeCursor("SELECT name FROM users ORDER BY id")
            _ = try cursor.next()  // mid-iteration: the statement holds the read snapshot
            return cursor
        }
        #expect(#expect(throws: DALError.self) { _ = try cursor.next() }?.code == .accessEnded)
        #expect(#expect(throws: DALError.self) { _ = try cursor.columnNames }?.code == .accessEnded)
        // A write, then a read on the same (only) reader connection sees it: the escaped
        // cursor's statement was reset when its access ended.
        try pool.write { db in try db.execute("INSERT INTO users(name, age) VALUES (\("late"), 99)") }
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == 51)
        // Even inside a later access on the same thread and connection, it stays dead.
        try pool.read { _ in #expect(#expect(throws: DALError.self) { _ = try cursor.next() }?.code == .accessEnded) }
        try pool.close()
    }

    @Test func aCursorThatOutlivesItsPoolThrowsInsteadOfCrashing() throws {
        let directory = try TemporaryDirectory()
        let recorder = Locked(0)
        var configuration = Configuration()
        configuration.trace = { _ in recorder.withLock { $0 += 1 } }  // a callback that must never run on freed memory
        var pool: DatabasePool? = try DatabasePool(path: directory.file("gone.sqlite"), configuration: configuration)
        try pool?.write { try makeUsersTable($0) }
        try pool?.write { try $0.execute("INSERT INTO users(name) VALUES ('a'), ('b')") }
        let cursor = try #require(
            try pool?.read { db -> RowCursor in
                let cursor = try db.makeCursor("SELECT name FROM users")
                _ = try cursor.next()
                return cursor
            })
        pool = nil
        #expect(throws: DALError.self) { _ = try cursor.next() }
        #expect(throws: DALError.self) { _ = try cursor.next() }
    }

    @Test func aRowViewReadAfterItsRowThrowsInsteadOfReadingAnotherRow() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        try db.execute("INSERT INTO users(name, age) VALUES ('first', 1), ('second', 2)")
        var first: RowView?
        var readLater: [String] = []
        try db.forEachRow("SELECT name FROM users ORDER BY id") { row in
            if let first {
                // The first row's view, read while the statement is on the second row.
                #expect(
                    #expect(throws: DALError.self) { _ = try first.decode(String.self, at: 0) }?.code == .accessEnded)
                #expect(#expect(throws: DALError.self) { _ = try first.copy() }?.code == .accessEnded)
                #expect(
                    #expect(throws: DALError.self) { _ = try first.columnIndex(named: "name") }?.code == .accessEnded)
            } else {
                first = row
            }
            readLater.append(try row.decode(String.self, at: 0))
        }
        #expect(readLater == ["first", "second"])
        #expect(
            #expect(throws: DALError.self) { _ = try first?.decode(String.self, named: "name") }?.code == .accessEnded)
        #expect(#expect(throws: DALError.self) { _ = try first?.count }?.code == .accessEnded)
        // A kept view no longer keeps its statement, or its connection's close, open (before
        // its rows were read apart from the statement, `close()` threw statementsStillOpen):
        // the statement is finalized, the connection closed, and the view still throws.
        try db.clearStatementCache()
        try db.close()
        #expect(#expect(throws: DALError.self) { _ = try first?.decode(String.self, at: 0) }?.code == .accessEnded)
        #expect(#expect(throws: DALError.self) { _ = try first?.copy() }?.code == .accessEnded)
    }

    @Test func aConnectionHandedToAQueueCannotBeUsedDirectlyAnyMore() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(x)")
        let statement = try db.makeStatement(sql: "SELECT x FROM t")
        let queue = try DatabaseQueue(db)
        #expect(
            #expect(throws: DALError.self) { try db.execute(sql: "INSERT INTO t VALUES (1)") }?.code == .accessEnded)
        #expect(#expect(throws: DALError.self) { _ = try statement.fetchAll() }?.code == .accessEnded)
        #expect(#expect(throws: DALError.self) { _ = try DatabaseQueue(db) }?.code == .accessEnded)
        try queue.write { try $0.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try queue.read { try $0.fetchColumn(Int.self, "SELECT x FROM t") } == [2])
        let escaped = try queue.read { $0 }
        #expect(#expect(throws: DALError.self) { _ = try escaped.fetchOne("SELECT 1") }?.code == .accessEnded)
    }

    @Test func aConnectionYouOpenedStaysYoursAcrossStatementsAndCursors() throws {
        // Not lent by anyone: statements and cursors live as long as you keep them.
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(x)")
        let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (?)")
        for value in 1...3 { try insert.execute(arguments: [value]) }
        let cursor = try db.makeCursor("SELECT x FROM t ORDER BY x")
        #expect(try cursor.next()?.decode(Int.self, at: 0) == 1)
        #expect(try cursor.next()?.decode(Int.self, at: 0) == 2)
    }
}
