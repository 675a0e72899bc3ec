import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

@Suite struct MariaDBTransactionTests {
    @Test func aTransactionRolledBackLeavesNoRowSeenFromASecondConnection() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { try $0.execute(sql: "CREATE TABLE notes(id BIGINT AUTO_INCREMENT PRIMARY KEY, body TEXT)") }
        #expect(throws: TestFailure.self) {
            try pool.write { db in
                #expect(db.isInTransaction)
                try db.execute("INSERT INTO notes(body) VALUES (\("kept?"))")
                #expect(try outside.sql("SELECT COUNT(*) FROM notes") == "0")  // not committed yet
                throw TestFailure()
            }
        }
        #expect(try outside.sql("SELECT COUNT(*) FROM notes") == "0")
        try pool.write { db in try db.execute("INSERT INTO notes(body) VALUES (\("committed"))") }
        #expect(try outside.sql("SELECT body FROM notes") == "committed")
        // Savepoints: the inner throw undoes the inner work only.
        try pool.write { db in
            try db.execute("INSERT INTO notes(body) VALUES (\("outer"))")
            _ = try? db.inSavepoint {
                try db.execute("INSERT INTO notes(body) VALUES (\("inner"))")
                throw TestFailure()
            }
        }
        #expect(try outside.sql("SELECT body FROM notes ORDER BY id") == "committed\nouter")
        // No transaction left open, reads are read-only.
        try pool.read { db in
            #expect(db.isInTransaction)
            #expect(throws: MariaDBError.self) { try db.execute(sql: "INSERT INTO notes(body) VALUES ('x')") }
        }
        let isolation = try pool.write(isolation: .serializable) { db -> String? in
            try db.fetchScalar(String.self, "SELECT @@tx_isolation")
        }
        #expect(isolation != nil)
    }

    /// `write(isolation:)` runs its transaction at the level it names, not the pool's
    /// default: at read committed a row another session commits meanwhile is seen by the
    /// transaction's next read; at repeatable read (the server's default) it is not.
    @Test func aWriteRunsAtTheIsolationLevelItNames() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE levels(id INT PRIMARY KEY) ENGINE=InnoDB") }
        func countsBeforeAndAfterAnOutsideInsert(_ isolation: IsolationLevel, id: Int) throws -> [Int?] {
            try pool.write(isolation: isolation) { db in
                let before = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM levels")
                try outside.sql("INSERT INTO levels(id) VALUES (\(id))")
                return [before, try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM levels")]
            }
        }
        #expect(try countsBeforeAndAfterAnOutsideInsert(.readCommitted, id: 1) == [0, 1])
        #expect(try countsBeforeAndAfterAnOutsideInsert(.repeatableRead, id: 2) == [1, 1])
        #expect(try countsBeforeAndAfterAnOutsideInsert(.readCommitted, id: 3) == [2, 3])
    }

    /// `insert2` on a `BIGINT UNSIGNED AUTO_INCREMENT` key past `Int64.max`: the key does not
    /// fit the `Int64` it returns, so it throws `noRowID` and its insert is undone (a trial's
    /// row was committed while the call threw, and a retry wrote it twice); inside a write,
    /// the rest of the write stands. Checked from a second session.
    @Test func insert2OfAKeyAboveInt64MaxThrowsAndInsertsNothing() throws {
        struct Big: Entity, Codable {
            static let tableName = "bigs"
            var id: Int64?
            var v: String
        }
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        _ = try outside.sql(
            "CREATE TABLE bigs(id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10) NOT NULL) "
                + "AUTO_INCREMENT = 9223372036854775807")
        let bigs = BaseDAL<Big>(database: pool)
        #expect(try bigs.insert2(Big(v: "first")) == Int64.max)
        let error = #expect(throws: DALError.self) { try bigs.insert2(Big(v: "second")) }
        #expect(error?.code == .noRowID, "\(String(describing: error))")
        #expect(try outside.sql("SELECT v FROM bigs ORDER BY id") == "first")
        try pool.write { db in
            try db.execute("INSERT INTO bigs(id, v) VALUES (\(5), \("five"))")
            #expect(throws: DALError.self) { try bigs.insert2(Big(v: "third")) }
        }
        #expect(try outside.sql("SELECT v FROM bigs ORDER BY id") == "five\nfirst")
    }

    /// The ways a transaction ends early inside a `write`, each followed by a failure:
    /// DDL that fails (MariaDB commits before it runs DDL, and keeps that commit), and a
    /// `COMMIT` inside an executable comment (the body's own plain `COMMIT`, `BEGIN` and
    /// `START TRANSACTION` are refused before they are sent: `aTransactionsBodyCannotEndOrStartOne`).
    /// None is reported as rolled back: each throws `committedImplicitly`, and a statement
    /// after a failed DDL is not refused as though the server had rolled back. Checked from
    /// a second session.
    @Test(arguments: [
        "CREATE TABLE notes(a INT)", "ALTER TABLE notes ADD COLUMN body TEXT", "DROP TABLE no_such_table",
        "TRUNCATE TABLE no_such_table", "/*! COMMIT */"
    ])
    func anEarlyEndFollowedByAFailureIsNeverReportedAsRolledBack(statement: String) throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { try $0.execute(sql: "CREATE TABLE notes(id BIGINT AUTO_INCREMENT PRIMARY KEY, body TEXT)") }
        let error = #expect(throws: DALError.self) {
            try pool.write { db in
                try db.execute("INSERT INTO notes(body) VALUES (\("first"))")
                _ = try? db.execute(sql: statement)  // fails for the DDL
                try db.execute("INSERT INTO notes(body) VALUES (\("second"))")
                throw TestFailure()
            }
        }
        #expect(error?.code == .committedImplicitly, "\(statement): \(String(describing: error))")
        #expect(error?.underlying is TestFailure, "\(statement)")
        let stored = try outside.sql("SELECT body FROM notes ORDER BY id")
        // What is there: "first" (committed at the early end) and, for an early end that
        // leaves no transaction, "second" (run on its own). Never nothing: that would be a rollback.
        #expect(stored.hasPrefix("first"), "\(statement): \(stored)")
    }

    /// A statement that commits the transaction on its own (DDL, `LOCK TABLES`) inside a
    /// `write` that then fails: the call never says "rolled back" (a trial's `write` threw
    /// its own error with both its rows committed); it throws `committedImplicitly`, the
    /// statement and the failure in it. A `write` that returns committed all of it. A
    /// `LOCK TABLES` does not outlive its `write`: the next call on the one connection,
    /// and a second session, write at once. Checked from a second connection.
    @Test func aTransactionThatDDLCommittedIsNeverReportedAsRolledBack() throws {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = 1
        let (pool, outside) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        try pool.write { try $0.execute(sql: "CREATE TABLE notes(id BIGINT AUTO_INCREMENT PRIMARY KEY, body TEXT)") }
        let error = #expect(throws: DALError.self) {
            try pool.write { db in
                try db.execute("INSERT INTO notes(body) VALUES (\("before"))")
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS scratch(a INT)")
                try db.execute("INSERT INTO notes(body) VALUES (\("after"))")
                throw TestFailure()
            }
        }
        #expect(error?.code == .committedImplicitly)
        #expect(error?.underlying is TestFailure)
        #expect(error?.sql?.contains("CREATE TABLE") == true)
        #expect(error.map { "\($0)" }?.contains("before") == false)  // no value in the text
        #expect(try outside.sql("SELECT body FROM notes ORDER BY id") == "before\nafter")
        // A transaction that fails without such a statement still rolls back, and says nothing more.
        #expect(throws: TestFailure.self) {
            try pool.write { db in
                try db.execute("INSERT INTO notes(body) VALUES (\("undone"))")
                throw TestFailure()
            }
        }
        // One that returns committed all of it.
        try pool.write { db in
            try db.execute("INSERT INTO notes(body) VALUES (\("third"))")
            try db.execute(sql: "DROP TABLE scratch")
        }
        #expect(try outside.sql("SELECT body FROM notes ORDER BY id") == "before\nafter\nthird")
        // LOCK TABLES: unlocked as its write ends.
        try pool.write { db in
            try db.execute(sql: "LOCK TABLES notes WRITE")
            try db.execute("INSERT INTO notes(body) VALUES (\("locked"))")
        }
        // A lock left held would make this fail after 5 s (not hang: the default waits a day).
        try outside.sql("SET SESSION lock_wait_timeout = 5; INSERT INTO notes(body) VALUES ('outside')")
        try pool.write { db in try db.execute(sql: "CREATE TABLE other(a INT)") }
        try pool.write { db in try db.execute(sql: "INSERT INTO other VALUES (1)") }
        #expect(try outside.sql("SELECT COUNT(*) FROM notes") == "5")
        #expect(try outside.sql("SELECT COUNT(*) FROM other") == "1")
    }

    /// SQL written for SQLite (`ROLLBACK TRANSACTION TO SAVEPOINT x`, `COMMIT TRANSACTION`,
    /// which MariaDB does not know) runs in MariaDB's spelling: checked on the rows, from
    /// a second connection.
    @Test func transactionControlInSQLitesSpellingRuns() throws {
        let (pool, outside) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { try $0.execute(sql: "CREATE TABLE notes(id BIGINT AUTO_INCREMENT PRIMARY KEY, body TEXT)") }
        try pool.write { db in
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('before')")
            try db.execute(sql: "SAVEPOINT s")
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('undone')")
            try db.execute(sql: "ROLLBACK TRANSACTION TO SAVEPOINT s")
            try db.execute(sql: "RELEASE SAVEPOINT s")
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('after')")
        }
        #expect(try outside.sql("SELECT body FROM notes ORDER BY id") == "before\nafter")
        // A comment inside keeps its line: the rollback still goes to the savepoint only, and
        // what came before the savepoint is committed.
        try pool.write { db in
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('before the mark')")
            try db.execute(sql: "SAVEPOINT s")
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('undone')")
            try db.execute(sql: "ROLLBACK TRANSACTION -- to the mark\nTO SAVEPOINT s")
        }
        #expect(try outside.sql("SELECT body FROM notes ORDER BY id") == "before\nafter\nbefore the mark")
        try pool.reentrantWrite { db in
            try db.execute(sql: "START TRANSACTION")
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('committed by the statement')")
            try db.execute(sql: "COMMIT TRANSACTION")
            #expect(try outside.sql("SELECT COUNT(*) FROM notes") == "4")
        }
        // Written after comments (and with a comment after the verb), they run as written.
        try pool.reentrantWrite { db in
            try db.execute(sql: "START TRANSACTION")
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('rolled back')")
            try db.execute(sql: "# undo\nROLLBACK -- all of it")
            try db.execute(sql: "START TRANSACTION")
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('kept')")
            try db.execute(sql: "-- done\n/* at last */ COMMIT")
        }
        #expect(
            try outside.sql("SELECT body FROM notes ORDER BY id")
                == "before\nafter\nbefore the mark\ncommitted by the statement\nkept")
    }

    @Test func anUpdateReportsTheRowsItMatchedEvenWhenUnchanged() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        let changed = try pool.write { db -> Int in
            try db.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY, v INT)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 5), (2, 5)")
            return try db.execute(sql: "UPDATE t SET v = 5")
        }
        #expect(changed == 2)
    }

    /// MariaDB 10.5+ returns an insert's new key with `RETURNING` (what a MariaDB SQL
    /// dialect's insert2 would use).
    @Test func anInsertReturnsItsNewKey() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        let ids = try pool.write { db -> [Int64?] in
            try db.execute(sql: "CREATE TABLE k(id BIGINT AUTO_INCREMENT PRIMARY KEY, v TEXT)")
            return try (0..<3).map { value in
                try db.fetchScalar(Int64.self, "INSERT INTO k(v) VALUES (\(String(value))) RETURNING id")
            }
        }
        #expect(ids == [1, 2, 3])
    }

    @Test func aStreamReadsRowsThroughACursor() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE s(id INT PRIMARY KEY, v VARCHAR(10))")
            try db.execute(
                sql: "INSERT INTO s SELECT seq, CONCAT('v', seq) FROM seq_1_to_1000")
        }
        var seen = 0
        var last = ""
        try pool.read { db in
            try db.streamRows("SELECT id, v FROM s WHERE id > \(10) ORDER BY id", fetchSize: 64) { row in
                seen += 1
                last = try row.decode(String.self, at: 1)
                // The connection runs other statements between the cursor's rows.
                if seen == 1 { #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM s") == 1000) }
            }
        }
        #expect(seen == 990)
        #expect(last == "v1000")
    }

    /// A cursor whose session the server ends part way (an administrator's `KILL
    /// CONNECTION` from another session, after 100 rows) throws a connection error after
    /// the rows it delivered, in order and each once; the pool then lends a new session.
    @Test func aStreamWhoseSessionIsKilledPartWayThrowsAfterItsRows() throws {
        let (pool, outside) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE s(id INT PRIMARY KEY, v VARCHAR(10))")
            try db.execute(sql: "INSERT INTO s SELECT seq, CONCAT('v', seq) FROM seq_1_to_2000")
        }
        var ids = [Int]()
        var killed: Int?
        var streamReturned = false
        let started = ContinuousClock.now
        let failure = #expect(throws: MariaDBError.self) {
            try pool.read { db in
                let session = try db.fetchScalar(Int.self, "SELECT CONNECTION_ID()")
                try db.streamRows("SELECT id, v FROM s ORDER BY id", fetchSize: 64) { row in
                    ids.append(try row.decode(Int.self, at: 0))
                    if ids.count == 100 {
                        try outside.sql("KILL CONNECTION \(session ?? 0)")
                        killed = session
                    }
                }
                streamReturned = true  // the stream itself must throw, not end as if its rows ran out
            }
        }
        #expect(!streamReturned)
        #expect(failure?.isConnectionFailure == true, "\(String(describing: failure))")
        #expect(failure?.category == .connection)
        #expect(ContinuousClock.now - started < .seconds(20), "the stream waited for its read timeout")
        #expect(ids.count >= 100 && ids.count < 2000)
        #expect(ids == Array(1...ids.count))
        let next = try pool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") }
        #expect(killed != nil && next != nil && next != killed)
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM s") } == 2000)
    }

    @Test func catalogAndPlanQueries() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE items(id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL DEFAULT 'x', note TEXT)"
            )
            try db.execute(sql: "CREATE VIEW item_names AS SELECT name FROM items")
        }
        try pool.read { db in
            let columns = try db.columns(in: "items")
            #expect(columns.map(\.name) == ["id", "name", "note"])
            #expect(columns[0].primaryKeyIndex == 1)
            #expect(columns[0].defaultValueSQL == "AUTO_INCREMENT")
            #expect(columns[1].isNotNull)
            #expect(columns[1].defaultValueSQL == "'x'")
            #expect(columns[2].defaultValueSQL == nil)
            #expect(try db.tableExists("items"))
            #expect(try !db.tableExists("ITEMS"))
            #expect(try db.tableKind(of: "item_names") == .view)
            let plan = try db.queryPlan(of: "SELECT * FROM items i WHERE note = ?")
            #expect(plan.count == 1)
            #expect(plan.first?.contains("type=ALL") == true)
        }
    }
}
