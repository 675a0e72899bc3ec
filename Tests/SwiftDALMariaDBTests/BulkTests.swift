import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALConnection
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// A batch's one-row `INSERT`s go to MariaDB as bulk executions (`COM_STMT_BULK_EXECUTE`), a
/// thousand rows per round trip. Each test runs on a server of its own, whose `Com_insert`
/// counter (one per executed `INSERT`, a bulk one included) is read from outside the pool:
/// no other session writes there.
@Suite struct MariaDBBulkTests {
    /// A server of its own started with `options`, a database on it with the sample `users`
    /// table, and a pool of one connection on that database.
    private func start(_ options: [String]) throws -> (MariaDBServer, MariaDBPool, database: String) {
        let server = try MariaDBServer.start(options: options)
        do {
            let database = try server.makeDatabaseName()
            var configuration = MariaDBConfiguration()
            configuration.maximumConnections = 1
            configuration.readTimeout = .seconds(30)
            let pool = try MariaDBPool(url: server.url(database: database), configuration: configuration)
            try pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE users(id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100) NOT NULL,
                            full_name VARCHAR(200), email VARCHAR(200) NOT NULL UNIQUE, age INT NOT NULL DEFAULT 0,
                            score DOUBLE NOT NULL DEFAULT 0, bio LONGTEXT, avatar BLOB,
                            created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))
                        """)
            }
            return (server, pool, database)
        } catch {
            server.stop()
            throw error
        }
    }

    /// The `INSERT`s the server has executed so far (a bulk execution counts once).
    private func insertsExecuted(_ server: MariaDBServer) throws -> Int {
        let printed = try server.sql("SHOW GLOBAL STATUS LIKE 'Com_insert'")
        return Int(printed.split(separator: "\t").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
    }

    private func user(_ prefix: String, _ index: Int, bio: String? = nil) -> UserInfo {
        UserInfo(
            name: "\(prefix)\(index)", fullName: index % 3 == 0 ? nil : "Zoë 😀 \(index)",
            email: "\(prefix)\(index)@example.com", age: index % 90, score: Double(index) * 0.1,
            bio: bio ?? (index % 5 == 0 ? nil : index % 7 == 0 ? "" : "bio\u{0}\(index)"),
            avatar: index % 4 == 0 ? nil : Data([UInt8(index % 256), 0, 255]),
            createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index) + 0.125))
    }

    /// 2,500 rows go as three bulk executions (1,000, 1,000, 500 rows) and every value is
    /// stored exactly (`NULL`s, empty and 4-byte text, a NUL byte, bytes, fractions of a
    /// second). Rows of 100 KB go as runs that fit half the server's `max_allowed_packet`
    /// (here 1 MiB: five rows a run), and a run of values of another kind starts a new bulk
    /// execution.
    @Test func insertRangeSendsAThousandRowsARoundTripAndStoresEveryValue() throws {
        let (server, pool, database) = try start(["--max-allowed-packet=1M"])
        defer {
            try? pool.close()
            server.stop()
        }
        let users = UserDAL(database: pool)
        let rows = (0..<2_500).map { user("u", $0) }
        let before = try insertsExecuted(server)
        #expect(try users.insertRange(rows) == 2_500)
        #expect(try insertsExecuted(server) - before == 3)
        let stored = try users.find(condition: "email LIKE \("u%")", orderBy: "id")
        #expect(stored.count == 2_500)
        #expect(
            stored.map {
                var row = $0
                row.id = nil
                return row
            } == rows)
        #expect(
            try server.sql("SELECT HEX(full_name) FROM users WHERE email = 'u1@example.com'", database: database)
                == Data("Zoë 😀 1".utf8).map { String(format: "%02X", $0) }.joined() + "\n")
        #expect(
            try server.sql("SELECT HEX(avatar), HEX(bio) FROM users WHERE email = 'u2@example.com'", database: database)
                == "0200FF\t62696F0032\n")
        #expect(try server.sql("SELECT COUNT(*) FROM information_schema.INNODB_TRX") == "0\n")

        // Large rows: runs of five (5 × 100 KB fits 512 KiB, six do not), 24 rows in five runs.
        // (Their avatars and full names are NULL in every row of a run.)
        let big = (0..<24).map {
            var row = user("big", $0, bio: String(repeating: "x", count: 100_000))
            row.avatar = nil
            row.fullName = nil
            return row
        }
        let beforeBig = try insertsExecuted(server)
        #expect(try users.insertRange(big) == 24)
        #expect(try insertsExecuted(server) - beforeBig == 5)
        #expect(
            try server.sql("SELECT SUM(LENGTH(bio)) FROM users WHERE email LIKE 'big%'", database: database)
                == "2400000\n")
        #expect(
            try server.sql(
                "SELECT SUM(avatar IS NULL), SUM(full_name IS NULL) FROM users WHERE email LIKE 'big%'",
                database: database) == "24\t24\n")

        // Values of another kind than the run's end it: the integers 1 and 2 go in one bulk
        // execution, 2.5 alone, "x" and NULL together, 3 alone, the bytes alone.
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE mixed(position INT NOT NULL, v VARCHAR(20))")
        }
        let values: [(any DatabaseValueConvertible)?] = [1, 2, 2.5, "x", nil, 3, Data("y".utf8)]
        let beforeMixed = try insertsExecuted(server)
        try pool.write { db in
            try db.inTransaction(.immediate) {
                _ = try db.executeBatch(count: values.count) { index in
                    SQL(sql: "INSERT INTO mixed(position, v) VALUES (?, ?)", arguments: [index, values[index]])
                }
            }
        }
        #expect(try insertsExecuted(server) - beforeMixed == 5)
        #expect(
            try server.sql("SELECT position, IFNULL(v, 'NULL') FROM mixed ORDER BY position", database: database)
                == "0\t1\n1\t2\n2\t2.5\n3\tx\n4\tNULL\n5\t3\n6\ty\n")

        // Only statements that insert one row each go in bulk (their count is the rows);
        // the others run one by one, and the batch returns the rows they changed.
        let cases: [(sql: String, arguments: (Int) -> StatementArguments, changed: Int, executions: Int)] = [
            ("insert into `mixed` (position, v) values (?, ?)", { [100 + $0, "bulk"] }, 3, 1),
            ("INSERT IGNORE INTO mixed(position, v) VALUES (?, ?)", { [200 + $0, "ignore"] }, 3, 3),
            ("INSERT INTO mixed(position, v) VALUES (?, ?), (?, ?)", { [300 + $0, "a", 310 + $0, "b"] }, 6, 3),
            ("INSERT INTO mixed(position, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = 'u'", { [400 + $0, "c"] }, 3, 3),
            ("/* c */ INSERT INTO mixed(position, v) VALUES (?, ?)", { [500 + $0, "comment"] }, 3, 3),
            ("INSERT INTO \(database) . mixed (position, v) VALUES (?, ?)", { [600 + $0, "schema"] }, 3, 1)
        ]
        for (sql, arguments, changed, executions) in cases {
            let before = try insertsExecuted(server)
            let written = try pool.write { db in
                try db.inTransaction(.immediate) {
                    try db.executeBatch(count: 3) { SQL(sql: sql, arguments: arguments($0)) }
                }
            }
            #expect(written == changed, "\(sql)")
            #expect(try insertsExecuted(server) - before == executions, "\(sql)")
        }
        #expect(try server.sql("SELECT COUNT(*) FROM mixed WHERE position >= 100", database: database) == "21\n")
    }

    /// A row that fails (here a `NULL` for a `NOT NULL` column) is named by its index on every
    /// table. Only a table that undoes a failed statement entirely (InnoDB, without
    /// triggers) gets bulk executions: the failed one left nothing, and its rows ran again
    /// one by one up to the failing one (five rows inside the transaction, not ten). A table
    /// that is not transactional (Aria), or one with a trigger (which may write to such a
    /// table), gets a statement per row, so that nothing is written twice.
    @Test func onlyATableThatUndoesAFailureGetsBulkExecutionsAndEveryFailureNamesItsRow() throws {
        let (server, pool, database) = try start([])
        defer {
            try? pool.close()
            server.stop()
        }
        try pool.write { db in
            try db.executeScript(
                """
                CREATE TABLE plain(n INT NOT NULL, note VARCHAR(20)) ENGINE=InnoDB;
                CREATE TABLE aria(n INT NOT NULL, note VARCHAR(20)) ENGINE=Aria;
                CREATE TABLE triggered(n INT NOT NULL, note VARCHAR(20)) ENGINE=InnoDB;
                CREATE TABLE seen(n INT) ENGINE=InnoDB;
                CREATE TRIGGER seen_insert AFTER INSERT ON triggered FOR EACH ROW INSERT INTO seen VALUES (NEW.n)
                """)
        }
        /// Ten rows into `table` in a transaction, row `failing` a NULL; `inside`: the rows in
        /// the table seen inside the transaction when the batch failed.
        func batch(_ table: String, failingAt failing: Int?, inside: inout Int) throws {
            try pool.write { db in
                try db.inTransaction(.immediate) {
                    do {
                        _ = try db.executeBatch(count: 10) { index in
                            SQL(
                                sql: "INSERT INTO \(table)(n, note) VALUES (?, ?)",
                                arguments: [index == failing ? nil : index, "row"])
                        }
                    } catch {
                        inside = try db.fetchScalar(Int.self, SQL(sql: "SELECT COUNT(*) FROM \(table)")) ?? -1
                        throw error
                    }
                }
            }
        }
        // Succeeding: one bulk execution into the InnoDB table, a statement per row elsewhere.
        for (table, executions) in [("plain", 1), ("aria", 10)] {
            let before = try insertsExecuted(server)
            var inside = -1
            try batch(table, failingAt: nil, inside: &inside)
            #expect(try insertsExecuted(server) - before == executions, "\(table)")
            try server.sql("DELETE FROM \(table)", database: database)
        }
        for (table, kept) in [("plain", "0"), ("aria", "5"), ("triggered", "0")] {
            let before = try insertsExecuted(server)
            var insideTheTransaction = -1
            let error = #expect(throws: (any Error).self) {
                try batch(table, failingAt: 5, inside: &insideTheTransaction)
            }
            let failure = error as? any DatabaseError
            #expect(failure?.constraintKind == .notNull, "\(table)")
            #expect(failure?.batchIndex == 5, "\(table)")
            #expect(insideTheTransaction == 5, "\(table)")
            #expect(try server.sql("SELECT COUNT(*) FROM \(table)", database: database) == kept + "\n", "\(table)")
            // InnoDB: the bulk execution, then the rows up to the failing one; Aria: a statement
            // per row up to the failing one. (The trigger's own INSERTs count too: not compared.)
            if table != "triggered" {
                #expect(try insertsExecuted(server) - before == (table == "plain" ? 7 : 6), "\(table)")
            }
        }
        #expect(try server.sql("SELECT COUNT(*) FROM seen", database: database) == "0\n")
    }

    /// A server that logs statements for replication (`binlog_format=STATEMENT`) refuses bulk
    /// executions (4033): the batch runs one statement at a time instead, writes every row,
    /// and the connection sends no more bulk executions.
    @Test func aServerThatRefusesBulkExecutionsGetsOneStatementARow() throws {
        let (server, pool, database) = try start(["--log-bin=binlog", "--binlog-format=STATEMENT", "--server-id=1"])
        defer {
            try? pool.close()
            server.stop()
        }
        let users = UserDAL(database: pool)
        let before = try insertsExecuted(server)
        #expect(try users.insertRange((0..<50).map { user("first", $0) }) == 50)
        let first = try insertsExecuted(server) - before
        #expect(first == 51)  // the refused bulk execution, then the 50 rows one by one
        let beforeSecond = try insertsExecuted(server)
        #expect(try users.insertRange((0..<50).map { user("second", $0) }) == 50)
        #expect(try insertsExecuted(server) - beforeSecond == 50)
        #expect(try server.sql("SELECT COUNT(*) FROM users", database: database) == "100\n")
        let stored = try users.find(condition: "email LIKE \("second%")", orderBy: "id")
        #expect(
            stored.map {
                var row = $0
                row.id = nil
                return row
            } == (0..<50).map { user("second", $0) })
    }
}
