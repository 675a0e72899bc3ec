import Foundation
import SwiftDAL
import SwiftDALTestSupport
import Testing

@testable import SwiftDALConnection
@testable import SwiftDALMariaDB

@Suite struct MariaDBValueTests {
    @Test func valuesOfEveryTypeRoundTripThroughARealServer() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE t(id BIGINT AUTO_INCREMENT PRIMARY KEY, i INT, b BOOLEAN, d DOUBLE, f FLOAT,
                        s VARCHAR(100), txt TEXT, blob_value BLOB, bin VARBINARY(10), at DATETIME(6), ts TIMESTAMP(3) NULL,
                        day DATE, tm TIME(6), n DECIMAL(38, 9), j JSON, bits BIT(12), e ENUM('red', 'green'),
                        st SET('a', 'b'), u UUID, y YEAR)
                    """)
        }
        let uuid = UUID()
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        let decimal = try #require(Decimal(string: "12345678901234567890.123456789"))
        try pool.write { db in
            try db.execute(
                """
                INSERT INTO t(i, b, d, f, s, txt, blob_value, bin, at, ts, day, tm, n, j, bits, e, st, u, y)
                VALUES (\(Int32.min), \(true), \(0.1), \(0.5), \("é😀'\"\\"), \("a\u{0}b 𝄞"), \(Data([0, 255, 10])),
                        \(Data()), \(date), \(date), \("2024-02-29"), \("-838:59:59.000000"), \(decimal), \(#"{"a": 1}"#),
                        b'101', \("green"), \("a,b"), \(uuid), 2024)
                """)
        }
        let row = try #require(try pool.read { try $0.fetchOne("SELECT * FROM t") })
        #expect(try row.decode(Int64.self, named: "id") == 1)
        #expect(try row.decode(Int32.self, named: "i") == Int32.min)
        #expect(try row.decode(Bool.self, named: "b") == true)
        #expect(try row.decode(Double.self, named: "d") == 0.1)
        #expect(try row.decode(Double.self, named: "f") == 0.5)
        #expect(try row.decode(String.self, named: "s") == "é😀'\"\\")
        #expect(try row.decode(String.self, named: "txt") == "a\u{0}b 𝄞")
        #expect(try row.decode(Data.self, named: "blob_value") == Data([0, 255, 10]))
        #expect(try row.decode(Data.self, named: "bin") == Data())
        #expect(try row.decode(Date.self, named: "at") == date)
        #expect(try row.decode(String.self, named: "at") == "2023-11-14 22:13:20.123000")
        #expect(try row.decode(Date.self, named: "ts") == date)
        #expect(try row.decode(String.self, named: "day") == "2024-02-29")
        #expect(try row.decode(Date.self, named: "day") == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(try row.decode(String.self, named: "tm") == "-838:59:59.000000")
        #expect(try row.decode(Decimal.self, named: "n") == decimal)
        #expect(try row.decode(String.self, named: "n") == "12345678901234567890.123456789")
        #expect(try row.decode(String.self, named: "j") == #"{"a": 1}"#)
        #expect(try row.decode(Int.self, named: "bits") == 5)
        #expect(try row.decode(String.self, named: "e") == "green")
        #expect(try row.decode(String.self, named: "st") == "a,b")
        #expect(try row.decode(UUID.self, named: "u") == uuid)
        #expect(try row.decode(Int.self, named: "y") == 2024)
        // NULL, empty text and an empty blob stay three values.
        try pool.write { db in try db.execute("INSERT INTO t(s, blob_value) VALUES (\(""), \(Data()))") }
        let second = try #require(try pool.read { try $0.fetchOne("SELECT s, blob_value, i FROM t WHERE id = 2") })
        #expect(try second.decode(String?.self, named: "s") == "")
        #expect(try second.decode(Data?.self, named: "blob_value") == Data())
        #expect(try second.decode(Int?.self, named: "i") == nil)
    }

    /// Every integer width, signed and unsigned, at its extremes; an unsigned BIGINT above
    /// Int64.max reads as its exact digits (TEXT), never wrapped: an Int64 read of it is a
    /// conversion error.
    @Test func integersOfEveryWidthReadExactlyAndUnsignedNeverWraps() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE n(t TINYINT, ut TINYINT UNSIGNED, s SMALLINT, us SMALLINT UNSIGNED, m MEDIUMINT,
                        um MEDIUMINT UNSIGNED, i INT, ui INT UNSIGNED, b BIGINT, ub BIGINT UNSIGNED)
                    """)
            try db.execute(
                sql: """
                    INSERT INTO n VALUES (-128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
                        -9223372036854775808, 18446744073709551615),
                        (127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 9223372036854775807)
                    """)
        }
        let rows = try pool.read { try $0.fetchAll("SELECT * FROM n ORDER BY t") }
        #expect(rows.count == 2)
        let low = rows[0]
        #expect(try low.decode(Int.self, named: "t") == -128)
        #expect(try low.decode(Int.self, named: "ut") == 255)
        #expect(try low.decode(Int.self, named: "s") == -32768)
        #expect(try low.decode(Int.self, named: "us") == 65535)
        #expect(try low.decode(Int.self, named: "m") == -8_388_608)
        #expect(try low.decode(Int.self, named: "um") == 16_777_215)
        #expect(try low.decode(Int64.self, named: "i") == Int64(Int32.min))
        #expect(try low.decode(Int64.self, named: "ui") == Int64(UInt32.max))
        #expect(try low.decode(Int64.self, named: "b") == Int64.min)
        #expect(try low.decode(String.self, named: "ub") == "18446744073709551615")
        #expect(try low.decode(Decimal.self, named: "ub") == Decimal(string: "18446744073709551615"))
        #expect(throws: DALError.self) { _ = try low.decode(Int64.self, named: "ub") }
        #expect(try rows[1].decode(Int64.self, named: "ub") == Int64.max)
        #expect(try rows[1].decode(Int64.self, named: "b") == Int64.max)
        // BIT(64) with its top bit set: its digits, like an unsigned BIGINT.
        let bits = try pool.write { db -> [DatabaseValue?] in
            try db.execute(sql: "CREATE TABLE bits(b BIT(64))")
            try db.execute(sql: "INSERT INTO bits VALUES (b'1' << 63 | 1), (b'101')")
            return try db.fetchAll("SELECT b FROM bits ORDER BY b").map { try $0.decode(DatabaseValue?.self, at: 0) }
        }
        #expect(bits == [.integer(5), .text("9223372036854775809")])
        // Bound values at the extremes, through the binary protocol both ways.
        let echoed = try pool.read { db in
            try db.fetchScalar(Int64.self, "SELECT CAST(\(Int64.min) AS SIGNED) + 0 * \(Int64.max)")
        }
        #expect(echoed == Int64.min)
    }

    /// A prepared statement keeps its result's binding between executions only while the
    /// result's columns stay the same: after an `ALTER TABLE`, the same statement reads the
    /// new columns. Values around the binding's inline slot (128 bytes) read whole.
    @Test func aStatementsResultFollowsItsTableAndLongValuesReadWhole() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1  // one connection: one statement cache
        let (pool, outside) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        try pool.write { db in try db.execute("CREATE TABLE notes(id BIGINT PRIMARY KEY, body LONGTEXT, data LONGBLOB)")
        }
        let bodies = [127, 128, 129, 4_000].map {
            String(repeating: "é", count: $0 / 2) + String(repeating: "x", count: $0 % 2)
        }
        for (index, body) in bodies.enumerated() {
            let data = Data((0..<(body.utf8.count)).map { UInt8($0 % 256) })
            try pool.write { db in try db.execute("INSERT INTO notes VALUES (\(index), \(body), \(data))") }
        }
        let query: SQL = "SELECT * FROM notes ORDER BY id"
        let before = try pool.read { db in try db.fetchAll(query) }
        #expect(before.map(\.columnNames) == Array(repeating: ["id", "body", "data"], count: 4))
        #expect(try before.map { try $0.decode(String.self, at: 1) } == bodies)
        #expect(try before.map { try $0.decode(Data.self, at: 2).count } == bodies.map(\.utf8.count))
        try pool.write { db in
            try db.execute("ALTER TABLE notes ADD COLUMN rank INT NOT NULL DEFAULT 7, MODIFY body VARCHAR(5000)")
        }
        let after = try pool.read { db in try db.fetchAll(query) }
        #expect(after.first?.columnNames == ["id", "body", "data", "rank"])
        #expect(try after.map { try $0.decode(Int.self, at: 3) } == [7, 7, 7, 7])
        #expect(try after.map { try $0.decode(String.self, named: "body") } == bodies)
        try pool.write { db in try db.execute("ALTER TABLE notes DROP COLUMN data") }
        #expect(try pool.read { db in try db.fetchAll(query) }.first?.columnNames == ["id", "body", "rank"])
        // A write whose result changed shape ran once, never twice, and says so: in a
        // transaction, which the error rolls back; outside one (a statement of its own),
        // committed.
        func insert(_ id: Int) throws -> [Row] {
            try pool.write { db in try db.fetchAll("INSERT INTO notes(id, body) VALUES (\(id), 'r') RETURNING *") }
        }
        #expect(try insert(10).first?.columnNames == ["id", "body", "rank"])
        try pool.write { db in try db.execute("ALTER TABLE notes ADD COLUMN extra INT") }
        let rolledBack = #expect(throws: DALError.self) { _ = try insert(11) }
        #expect(rolledBack?.code == .schemaMismatch)
        #expect("\(String(describing: rolledBack))".contains("rolls back"))
        #expect(try outside.sql("SELECT COUNT(*) FROM notes WHERE id = 11") == "0")
        #expect(try insert(12).first?.columnNames == ["id", "body", "rank", "extra"])
    }

    /// Rows are read in place from the statement's binding, one at a time: inside the
    /// reading of a result the connection runs other statements and the same statement
    /// again (its own rows stay right, long values included), and a view kept past its row
    /// throws instead of reading another row.
    @Test func rowsReadInPlaceSurviveStatementsRunBetweenThemAndEscapedViewsThrow() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1  // one connection: one statement cache
        let (pool, outside) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        let long = String(repeating: "ü", count: 300)  // past the binding's 128-byte slot
        try pool.write { db in
            try db.execute("CREATE TABLE items(id BIGINT PRIMARY KEY, body LONGTEXT, n DOUBLE)")
            for id in 1...4 {
                try db.execute("INSERT INTO items VALUES (\(id), \(long + String(id)), \(Double(id) / 2))")
            }
        }
        let query: SQL = "SELECT id, body, n FROM items ORDER BY id"
        var seen: [(Int, String, Double, Int)] = []
        var inner: [Int] = []
        try pool.write { db in
            try db.forEachRow(query) { row in
                let id: Int = try row[0]
                // The same statement (its text) and another one, before this row is read.
                inner.append(try db.fetchAll(query).count)
                try db.execute("INSERT INTO items VALUES (\(id + 10), 'inner', 0)")
                let count = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM items") ?? -1
                seen.append((id, try row[1], try row[2], count))
            }
        }
        #expect(seen.map(\.0) == [1, 2, 3, 4])
        #expect(seen.map(\.1) == (1...4).map { long + String($0) })
        #expect(seen.map(\.2) == [0.5, 1, 1.5, 2])
        #expect(seen.map(\.3) == [5, 6, 7, 8])
        #expect(inner == [4, 5, 6, 7])
        #expect(try outside.sql("SELECT COUNT(*) FROM items") == "8")
        // Every result read is freed when its reading ends (read whole, left after its first
        // row, or stopped by a throw; read off the wire, buffered part way for a statement
        // run inside its reading, or a procedure's): Connector/C holds none of their rows
        // afterwards.
        try pool.write { db in
            try db.execute(sql: "CREATE PROCEDURE items_p() SELECT id, body, n FROM items ORDER BY id")
        }
        let held = try pool.read { db -> [Int] in
            func held() -> Int { (db.connection as? MariaDBConnection)?.rowsHeldByStatements ?? -1 }
            var counts: [Int] = []
            for query in [query, "CALL items_p()"] as [SQL] {
                _ = try db.fetchAll(query)
                counts.append(held())
                _ = try db.fetchOne(query)
                counts.append(held())
                struct Stop: Error {}
                _ = try? db.forEachRow(query) { _ in throw Stop() }
                counts.append(held())
                var buffered = -1
                try db.forEachRow(query) { row in
                    guard try row.decode(Int.self, at: 0) == 1 else { return }
                    _ = try db.fetchScalar(Int.self, "SELECT 1")
                    buffered = held()
                }
                counts += [buffered, held()]
            }
            return counts
        }
        // Only while a result is buffered part way are its rows held (the seven not yet read,
        // counted with the one read off the wire; a procedure's result is copied out whole
        // before its first row is read, and freed at once).
        #expect(held == [0, 0, 0, 8, 0, 0, 0, 0, 0, 0])
        // A view kept past its row, then past its result: an error, never another row's values.
        for streamed in [false, true] {
            let (kept, read) = try pool.read { db -> (Int?, Result<Int, any Error>) in
                var first: RowView?
                var afterFirst: Result<Int, any Error> = .success(-1)
                let visit: (RowView) throws -> Void = { row in
                    if let first {
                        if case .success(-1) = afterFirst { afterFirst = Result { try first.decode(Int.self, at: 0) } }
                    } else {
                        first = row
                    }
                }
                if streamed {
                    try db.streamRows(query, fetchSize: 2, visit)
                } else {
                    try db.forEachRow(query, visit)
                }
                return (try? first?.decode(Int.self, at: 0), afterFirst)
            }
            #expect(kept == nil, "streamed: \(streamed)")
            #expect(throws: DALError.self) { _ = try read.get() }
            #expect((try? read.get()) == nil)
            if case .failure(let error as DALError) = read { #expect(error.code == .accessEnded) }
        }
    }

    /// A result's rows are read off the wire as they are fetched: Connector/C holds none of
    /// them while they are read. A statement sent inside the reading (a nested read, a
    /// write) buffers the rest first, and the reading goes on from the buffer with every
    /// value right, the current row's long one (read after the nested statement) included.
    /// The session's transaction status during and after such reads stays right (the
    /// result's end is read by Connector/C's fetch, which does not take the status from it).
    @Test func aResultIsReadOffTheWireUntilAnotherStatementIsSent() throws {
        let (pool, outside) = try makeOneConnectionPool()
        defer { try? pool.close() }
        let long = String(repeating: "é", count: 200)  // 400 bytes: longer than a binding's slot
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE w(id INT PRIMARY KEY, v TEXT)")
            try db.execute(sql: "CREATE TABLE notes(id INT PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO w SELECT seq, CONCAT('\(long)', seq) FROM seq_1_to_3000")
        }
        var held: [Int] = []
        var values: [String] = []
        var nested: [Int?] = []
        var inTransaction: [Bool] = []
        for inside in [false, true] {
            held = []
            values = []
            let read = { (db: Database) in
                func heldRows() -> Int { (db.connection as? MariaDBConnection)?.rowsHeldByStatements ?? -1 }
                try db.forEachRow("SELECT id, v FROM w ORDER BY id") { row in
                    let id: Int = try row[0]
                    if id == 1 || id == 9 { held.append(heldRows()) }
                    if id == 10 {
                        nested.append(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM w"))
                        held.append(heldRows())
                    }
                    if id == 20 { try db.execute("INSERT INTO notes VALUES (\(inside ? 2 : 1))") }
                    values.append(try row[1])
                }
                inTransaction.append(db.isInTransaction)
            }
            if inside { try pool.write(read) } else { try pool.reentrantWrite(read) }  // autocommit: no transaction
            #expect(held.count == 3 && held[0] == 0 && held[1] == 0 && held[2] >= 2990, "\(held)")
            #expect(values == (1...3000).map { long + String($0) })
        }
        let after = try pool.reentrantWrite { db -> [Bool] in
            var seen: [Bool] = []
            try db.forEachRow("INSERT INTO notes VALUES (7) RETURNING id") { _ in seen.append(db.isInTransaction) }
            seen.append(db.isInTransaction)
            try db.forEachRow("SELECT id FROM notes FOR UPDATE") { _ in }
            seen.append(db.isInTransaction)
            try db.forEachRow("DELETE FROM notes WHERE id = 7 RETURNING id") { _ in }
            seen.append(db.isInTransaction)
            return seen
        }
        #expect(after == [false, false, false, false])
        #expect(nested == [3000, 3000])
        #expect(inTransaction == [false, true])
        #expect(try outside.sql("SELECT GROUP_CONCAT(id ORDER BY id) FROM notes") == "1,2")
    }

    /// A result read off the wire whose session is killed part way, then buffered for a
    /// statement sent inside its reading: that statement meets the lost connection, and the
    /// reading, when it goes on, throws the connection failure at once (no wait for the
    /// read timeout, no row past the ones read, nothing passed off as the result's end).
    @Test func aResultBufferedFromAKilledSessionThrowsTheFailure() throws {
        let (pool, outside) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE w(id INT PRIMARY KEY, v TEXT)")
            // About 6 MB: more than the socket buffers hold, so the server is still
            // sending when the session is killed.
            try db.execute(sql: "INSERT INTO w SELECT seq, REPEAT('x', 3000) FROM seq_1_to_2000")
        }
        var ids: [Int] = []
        var nested: (any Error)?
        let started = ContinuousClock.now
        let failure = #expect(throws: MariaDBError.self) {
            try pool.reentrantRead { db in
                let session = try db.fetchScalar(Int.self, "SELECT CONNECTION_ID()") ?? 0
                try db.forEachRow("SELECT id, v FROM w ORDER BY id") { row in
                    ids.append(try row.decode(Int.self, at: 0))
                    guard ids.count == 10 else { return }
                    try outside.sql("KILL CONNECTION \(session)")
                    do {
                        _ = try db.fetchScalar(Int.self, "SELECT 1")
                    } catch {
                        nested = error  // caught: the reading goes on
                    }
                }
            }
        }
        #expect(failure?.isConnectionFailure == true, "\(String(describing: failure))")
        #expect((nested as? MariaDBError)?.isConnectionFailure == true, "\(String(describing: nested))")
        #expect(ContinuousClock.now - started < .seconds(20), "the reading waited for its read timeout")
        #expect(ids == Array(1...10))
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM w") } == 2000)
    }

    /// A table `t` of 3,000 rows whose query ``failingPartWay`` sends rows (about 300 KB,
    /// more than one network buffer) and then, at row 3,000, error 1242 (its subquery
    /// returns two rows there); `log`, empty.
    private static func makeResultThatFailsPartWay(_ pool: MariaDBPool) throws {
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE m(k INT, v INT)")
            try db.execute(sql: "CREATE TABLE log(id INT PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO t SELECT seq FROM seq_1_to_3000")
            try db.execute(sql: "INSERT INTO m SELECT seq, seq FROM seq_1_to_3000")
            try db.execute(sql: "INSERT INTO m VALUES (3000, 0)")
        }
    }

    private static let failingPartWay: SQL =
        "SELECT t.id, REPEAT('x', 100), (SELECT v FROM m WHERE m.k = t.id) FROM t ORDER BY t.id"

    /// A statement sent inside the reading of a result that then fails (its rest buffered
    /// for it, the error found there) is not sent: it throws the failure (outside a
    /// transaction it would have committed on its own, and after a deadlock inside one
    /// too). The reading throws it as well. Checked from outside: nothing was written.
    @Test func aStatementSentInsideAReadingThatFailsIsNotSent() throws {
        let (pool, outside) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try Self.makeResultThatFailsPartWay(pool)
        var ids: [Int] = []
        var nested: (any Error)?
        let failure = #expect(throws: MariaDBError.self) {
            try pool.reentrantWrite { db in  // no transaction: each write commits on its own
                try db.forEachRow(Self.failingPartWay) { row in
                    ids.append(try row.decode(Int.self, at: 0))
                    guard ids.count == 1 else { return }
                    do {
                        try db.execute("INSERT INTO log VALUES (\(1))")
                    } catch {
                        nested = error  // caught: the reading goes on
                    }
                }
            }
        }
        #expect(failure?.code == 1242, "\(String(describing: failure))")
        #expect((nested as? MariaDBError)?.code == 1242, "\(String(describing: nested))")
        #expect(ids == [1])
        #expect(try outside.sql("SELECT COUNT(*) FROM log") == "0")
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") } == 3000)
    }

    /// Leaving the rows of a result read off the wire early (the closure throws) reads the
    /// rest off the wire: an error the server sends there (the statement failed after the
    /// rows seen) is thrown instead of the closure's, not dropped; without one, the
    /// closure's error is thrown. Either way the connection serves the next call.
    @Test func leavingARowsReadingEarlyThrowsAnErrorInTheRest() throws {
        let (pool, _) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try Self.makeResultThatFailsPartWay(pool)
        struct Found: Error {}
        for query in [Self.failingPartWay, "SELECT id, REPEAT('x', 100) FROM t ORDER BY id"] {
            var seen = 0
            do {
                try pool.read { db in
                    try db.forEachRow(query) { _ in
                        seen += 1
                        throw Found()
                    }
                }
                Issue.record("the reading did not throw")
            } catch let error as MariaDBError {
                #expect(query.sql == Self.failingPartWay.sql && error.code == 1242, "\(error)")
            } catch {
                #expect(query.sql != Self.failingPartWay.sql && error is Found, "\(error)")
            }
            #expect(seen == 1)
            let held = try pool.read { db in (db.connection as? MariaDBConnection)?.rowsHeldByStatements }
            #expect(held == 0)
            #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") } == 3000)
        }
    }

    /// A statement whose result was empty runs again, on the same connection, with rows
    /// and without (a freed empty result must not leave the statement waiting for rows):
    /// read off the wire (a `SELECT`) or stored first (a `SHOW`). A read time limit turns
    /// a wait into a failure.
    @Test func aStatementWhoseResultWasEmptyRunsAgain() throws {
        let (pool, _) = try makeOneConnectionPool()  // one connection: one statement cache
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute("CREATE TABLE kv(id BIGINT PRIMARY KEY, name VARCHAR(20))")
            try db.execute("INSERT INTO kv VALUES (1, 'a'), (2, 'b')")
        }
        let found = try pool.write { db in
            try [0, 1, 3, 2, 0].map { id in
                try db.fetchScalar(String.self, "SELECT name FROM kv WHERE id = \(id) FOR UPDATE") ?? "-"
            }
        }
        #expect(found == ["-", "a", "-", "b", "-"])
        #expect(try pool.read { db in try db.fetchAll("SELECT * FROM kv WHERE id > \(5)").count } == 0)
        #expect(try pool.read { db in try db.fetchAll("SELECT * FROM kv WHERE id > \(0)").count } == 2)
        let shown = try pool.read { db in
            try ["no_such_table%", "no_such%", "kv", "no_such_table%"].map { pattern in
                try db.fetchAll(SQL(sql: "SHOW TABLES LIKE '\(pattern)'")).count
            }
        }
        #expect(shown == [0, 0, 1, 0])
    }

    /// A prepared statement is bound again only when its parameters' binds change: one
    /// statement run with values of changing types, lengths and NULLs reads each back.
    @Test func oneStatementRunWithChangingValuesBindsEachRight() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1  // one connection: one statement cache
        let (pool, _) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        let values: [DatabaseValue] = [
            .integer(7), .integer(-8), .text("ab"), .text("cd"), .text("longer é"), .null, .real(2.5), .integer(9),
            .blob(Data([0, 255])), .text(String(repeating: "x", count: 70_000)), .integer(10), .text("ef")
        ]
        let echoed = try pool.read { db in
            try values.map { value in
                try db.fetchOne(
                    SQL(sql: "SELECT ? AS v, ? AS w", arguments: StatementArguments(values: [value, value]))
                )
                .map { try [$0.decode(DatabaseValue.self, at: 0), $0.decode(DatabaseValue.self, at: 1)] }
            }
        }
        #expect(echoed == values.map { [$0, $0] })
    }

    /// A NULL is bound as NULL whatever was bound at its place before (by this statement or
    /// another on the connection): the server types `COALESCE(?, 0)` by its parameter, and
    /// a NULL that kept an earlier text's or double's type read back as text or a double.
    @Test func aNullTakesNoTypeFromTheValueBoundBeforeIt() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1  // one connection: one set of binds
        let (pool, _) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        let read = try pool.read { db in
            try [DatabaseValue.text("abc"), .real(2.5), .blob(Data([1])), .integer(7)].flatMap { before in
                let earlier = try db.fetchOne(SQL(sql: "SELECT ? AS v", arguments: StatementArguments(value: before)))
                let coalesced = SQL(sql: "SELECT COALESCE(?, 0) AS v", arguments: StatementArguments(value: .null))
                return try [earlier, db.fetchOne(coalesced), db.fetchOne(coalesced)].map {
                    try $0?.decode(DatabaseValue.self, at: 0)
                }
            }
        }
        #expect(
            read == [
                .text("abc"), .integer(0), .integer(0), .real(2.5), .integer(0), .integer(0),
                .blob(Data([1])), .integer(0), .integer(0), .integer(7), .integer(0), .integer(0)
            ])
    }

    /// The binds of one `INSERT` stay the same while its values change length within a
    /// size class, turn NULL and back, or change type (the lengths and NULL indicators are
    /// read at each execution): every row is written as given, checked from outside.
    @Test func oneInsertRunWithChangingLengthsAndNullsWritesEachRow() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1  // one connection: one statement cache
        let (pool, outside) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(id BIGINT PRIMARY KEY, a LONGTEXT, b LONGTEXT)") }
        func text(_ count: Int, _ letter: String) -> DatabaseValue { .text(String(repeating: letter, count: count)) }
        // Lengths across the classes' edges (16|17, 32|33), empty text, NULL before and
        // after text, and an integer where text was (stored as its text by the column).
        let rows: [(DatabaseValue, DatabaseValue)] = [
            (text(16, "a"), text(3, "b")), (text(17, "c"), .null), (.null, text(33, "d")),
            (text(1, "e"), text(32, "f")),
            (.text(""), .null), (.null, .null), (.integer(42), text(16, "g")), (text(5_000, "h"), text(2, "i")),
            (text(2, "j"), text(17, "k")), (.null, .text("é"))
        ]
        try pool.write { db in
            for (index, row) in rows.enumerated() {
                try db.execute(
                    SQL(
                        sql: "INSERT INTO t(id, a, b) VALUES (?, ?, ?)",
                        arguments: StatementArguments(values: [.integer(Int64(index)), row.0, row.1])))
            }
        }
        func shown(_ value: DatabaseValue) -> String {
            switch value {
            case .null: "NULL"
            case .integer(let integer): String(integer)
            case .text(let text): "\(text.utf8.count):" + (text.utf8.first.map { String(format: "%02X", $0) } ?? "")
            default: "?"
            }
        }
        let expected = rows.enumerated().map { "\($0.offset)\t\(shown($0.element.0))\t\(shown($0.element.1))" }
        let written = try outside.sql(
            """
            SELECT id, IF(a IS NULL, 'NULL', IF(a = '42', a, CONCAT(OCTET_LENGTH(a), ':', LEFT(HEX(a), 2)))),
            IF(b IS NULL, 'NULL', CONCAT(OCTET_LENGTH(b), ':', LEFT(HEX(b), 2))) FROM t ORDER BY id
            """)
        #expect(written.split(separator: "\n").map(String.init) == expected)
    }

    /// A procedure's result (a `CALL` sends it, then a status of its own, and Connector/C
    /// resets the statement's result binding) read again and again on one connection, and
    /// a column renamed under a cached statement read by its new name.
    @Test func aProcedureCalledAgainAndARenamedColumnReadRight() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1  // one connection: one statement cache
        let (pool, _) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute("CREATE TABLE kv(id BIGINT PRIMARY KEY, name VARCHAR(20))")
            try db.execute("INSERT INTO kv VALUES (1, 'a'), (2, 'b')")
            try db.executeScript("CREATE PROCEDURE two_rows() SELECT id, name FROM kv ORDER BY id")
        }
        for _ in 0..<3 {
            let rows = try pool.write { db in try db.fetchAll("CALL two_rows()") }
            #expect(try rows.map { try $0.decode(Int.self, named: "id") } == [1, 2])
            #expect(try rows.map { try $0.decode(String.self, named: "name") } == ["a", "b"])
            #expect(try pool.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM kv") } == 2)
        }
        let query: SQL = "SELECT * FROM kv ORDER BY id"
        #expect(try pool.read { db in try db.fetchAll(query) }.first?.columnNames == ["id", "name"])
        try pool.write { db in try db.execute("ALTER TABLE kv RENAME COLUMN name TO title") }
        let renamed = try pool.read { db in try db.fetchAll(query) }
        #expect(renamed.first?.columnNames == ["id", "title"])
        #expect(try renamed.map { try $0.decode(String.self, named: "title") } == ["a", "b"])
        // Long names, renamed to names of the same length differing in one byte: inside
        // an eight-byte block, then in the tail after the blocks (names compare eight bytes
        // at a time).
        for (old, new) in [
            ("title", "a_long_title_one_x"), ("a_long_title_one_x", "a_long_tiXle_one_x"),
            ("a_long_tiXle_one_x", "a_long_tiXle_one_y")
        ] {
            try pool.write { db in try db.execute(sql: "ALTER TABLE kv RENAME COLUMN \(old) TO \(new)") }
            #expect(try pool.read { db in try db.fetchAll(query) }.first?.columnNames == ["id", new])
        }
    }

    @Test func fourByteCharactersAndBinaryExactComparisons() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE w(word VARCHAR(20) PRIMARY KEY)")
            for word in ["😀", "a", "A", "a "] { try db.execute("INSERT INTO w VALUES (\(word))") }
        }
        // utf8mb4_nopad_bin (the test database's collation): exact, case and trailing spaces count.
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM w WHERE word = \("a")") } == 1)
        #expect(try pool.read { try $0.fetchScalar(String.self, "SELECT word FROM w WHERE word = \("😀")") } == "😀")
        let session = try pool.read { db in
            try db.fetchOne(
                SQL(
                    sql: "SELECT @@character_set_client, @@collation_connection, @@time_zone, @@sql_mode, "
                        + "@@autocommit, @@net_write_timeout"))
        }
        let values = try #require(session)
        #expect(try values.decode(String.self, at: 0) == "utf8mb4")
        #expect(try values.decode(String.self, at: 1) == "utf8mb4_nopad_bin")
        #expect(try values.decode(String.self, at: 2) == "+00:00")
        #expect(try values.decode(String.self, at: 3).contains("STRICT_ALL_TABLES"))
        #expect(try values.decode(String.self, at: 3).contains("ANSI_QUOTES"))
        #expect(try values.decode(Int.self, at: 4) == 1)
        #expect(try values.decode(Int.self, at: 5) == MariaDBConnection.netWriteTimeout)
    }

    @Test func placeholdersOfEveryFormAreBound() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        let results = try pool.write { db -> [DatabaseValue?] in
            [
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT ?2 - ?1", arguments: [1, 10])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT :a * @b - $a", arguments: ["a": 3, "b": 5])),
                try db.fetchScalar(
                    DatabaseValue.self, SQL(sql: "SELECT '?' || \"x\" FROM (SELECT 1 AS \"x\") s -- ?\n")),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT @@autocommit"))
            ]
        }
        #expect(results == [.integer(9), .integer(12), .text("?1"), .integer(1)])
    }
}
