import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

@Suite struct CursorTests {
    @Test func cursorStreamsEveryRowInOrder() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(n INTEGER)")
        try db.inTransaction {
            for n in 0..<1000 { try db.execute("INSERT INTO t VALUES (\(n))") }
        }
        let cursor = try db.makeCursor("SELECT n FROM t ORDER BY n")
        var expected = 0
        while let row = try cursor.next() {
            #expect(try row.decode(Int.self, at: 0) == expected)
            expected += 1
        }
        #expect(expected == 1000)
        #expect(try cursor.next() == nil)
        var sum = 0
        let second = try db.makeCursor("SELECT n FROM t")
        while try second.next({ sum += try $0.decode(Int.self, at: 0) }) {}
        #expect(sum == 999 * 1000 / 2)
    }

    @Test func anErrorMidIterationLeavesNoStatementOpen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("midway.sqlite")
        let db = try Database(path: path)
        try makeUsersTable(db)
        try db.inTransaction {
            for index in 0..<10 { try db.execute("INSERT INTO users(name) VALUES (\("u\(index)"))") }
        }
        #expect(throws: TestFailure.self) {
            try db.forEachRow("SELECT * FROM users") { row in
                if try row.decode(Int.self, named: "id") == 3 { throw TestFailure() }
            }
        }
        // Another connection can write: no read lock is left behind...
        let other = try Database(
            path: path,
            configuration: {
                var c = Configuration()
                c.busyTimeout = .zero
                return c
            }())
        try other.execute(sql: "INSERT INTO users(name) VALUES ('other')")
        // ... including when a cursor is abandoned midway.
        do {
            let cursor = try db.makeCursor("SELECT * FROM users")
            _ = try cursor.next()
        }
        try other.inTransaction(.exclusive) { try other.execute(sql: "DELETE FROM users WHERE name = 'other'") }
        try other.close()
        // And close succeeds: nothing was leaked.
        try db.close()
    }

    @Test func aCachedStatementUnderALiveCursorIsNotReused() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(n INTEGER)")
        for n in 1...3 { try db.execute("INSERT INTO t VALUES (\(n))") }
        let outer = try db.makeCursor("SELECT n FROM t ORDER BY n")
        var pairs = [String]()
        while let row = try outer.next() {
            let n = try row.decode(Int.self, at: 0)
            // The same SQL again, while the outer cursor still steps its statement.
            let inner = try db.fetchAll("SELECT n FROM t ORDER BY n").count
            pairs.append("\(n):\(inner)")
        }
        #expect(pairs == ["1:3", "2:3", "3:3"])
    }
}
