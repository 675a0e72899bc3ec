import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

@Suite struct MariaDBErrorTests {
    private func makeSchema() throws -> (MariaDBPool, OutsideView) {
        let (pool, outside) = try makeMariaDBPool()
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE parent(id BIGINT PRIMARY KEY, email VARCHAR(100) NOT NULL,
                        age INT NOT NULL DEFAULT 0, CONSTRAINT parent_email UNIQUE (email),
                        CONSTRAINT age_positive CHECK (age >= 0))
                    """)
            try db.execute(
                sql: """
                    CREATE TABLE child(id BIGINT PRIMARY KEY, parent_id BIGINT NOT NULL,
                        CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent(id))
                    """)
            try db.execute("INSERT INTO parent VALUES (1, \("secret@example.com"), 30)")
            try db.execute(sql: "INSERT INTO child VALUES (1, 1)")
        }
        return (pool, outside)
    }

    /// The schema with a second parent row, and a `log` table.
    private func makeSchemaWithTwoParentsAndALog() throws -> (MariaDBPool, OutsideView) {
        let (pool, outside) = try makeSchema()
        try pool.write { db in
            try db.execute(sql: "INSERT INTO parent VALUES (2, 'b@example.com', 1)")
            try db.execute(sql: "CREATE TABLE log(name VARCHAR(10) PRIMARY KEY)")
        }
        return (pool, outside)
    }

    /// A write holding the lock of `parent` row 1 (see ``holdingLocks(_:_:)``).
    private func holdingParentOne(_ pool: MariaDBPool) throws -> (StartedThread<Void>, DispatchSemaphore) {
        try holdingLocks(pool, "UPDATE parent SET age = 5 WHERE id = 1")
    }

    /// In `db`'s transaction, sets both parents' age to 7, waiting at most a second for
    /// row 1's lock: the error number of that update (1205 when the lock stayed held), or
    /// `nil` when it ran.
    private func updatingBothParents(_ db: Database) throws -> Int? {
        try db.execute(sql: "SET SESSION innodb_lock_wait_timeout = 1")
        try db.execute(sql: "UPDATE parent SET age = 7 WHERE id = 2")
        do {
            try db.execute(sql: "UPDATE parent SET age = 7 WHERE id = 1")
            return nil
        } catch let error as MariaDBError {
            // A lock wait timeout is worth retrying (the lock's holder ends), as a deadlock is.
            if error.code == 1205 { #expect(error.isRetryable, "\(error)") }
            return error.code
        }
    }

    @Test func constraintViolationsAreTypedAndNameTheirObjectsWithoutValues() throws {
        let (pool, _) = try makeSchema()
        defer { try? pool.close() }
        func failure(_ sql: SQL) -> MariaDBError? {
            #expect(throws: MariaDBError.self) { try pool.write { try $0.execute(sql) } }
        }
        let unique = failure("INSERT INTO parent VALUES (2, \("secret@example.com"), 1)")
        #expect(unique?.code == 1062)
        #expect(unique?.constraintKind == .unique)
        #expect(unique?.constraint == "parent_email")
        #expect(unique?.description.contains("secret") == false)
        // A value that itself reads like the message's tail is neither shown nor taken for
        // the key's name.
        let hostile = "x' for key 'SECRET-TOKEN-123"
        try pool.write { try $0.execute("INSERT INTO parent VALUES (5, \(hostile), 1)") }
        let echoed = failure("INSERT INTO parent VALUES (6, \(hostile), 1)")
        #expect(echoed?.code == 1062)
        #expect(echoed?.constraint == "parent_email")
        #expect(echoed?.columns == ["email"])
        #expect(echoed.map { "\($0) \(String(reflecting: $0))" }?.contains("SECRET") == false)
        let primary = failure("INSERT INTO parent VALUES (1, \("other@example.com"), 1)")
        #expect(primary?.constraintKind == .primaryKey)
        let notNull = failure("INSERT INTO parent VALUES (3, \(nil as String?), 1)")
        #expect(notNull?.code == 1048)
        #expect(notNull?.constraintKind == .notNull)
        #expect(notNull?.column == "email")
        let check = failure("INSERT INTO parent VALUES (4, \("x@example.com"), \(-5))")
        #expect(check?.code == 4025)
        #expect(check?.constraintKind == .check)
        #expect(check?.constraint == "age_positive")
        #expect(check?.table == "parent")
        let childless = failure("INSERT INTO child VALUES (2, \(99))")
        #expect(childless?.code == 1452)
        #expect(childless?.constraintKind == .foreignKey)
        #expect(childless?.table == "child")
        #expect(childless?.constraint == "child_parent")
        #expect(childless?.column == "parent_id")
        let parentInUse = failure("DELETE FROM parent WHERE id = \(1)")
        #expect(parentInUse?.code == 1451)
        #expect(parentInUse?.constraintKind == .foreignKey)
        // The shared `catch` patterns match.
        do {
            try pool.write { try $0.execute("INSERT INTO parent VALUES (1, \("a@b.c"), 1)") }
        } catch SQLiteError.constraintPrimaryKey {
        } catch {
            Issue.record("not caught as a primary key violation: \(error)")
        }
        // A data error quotes the value refused: left out.
        let data = failure("INSERT INTO parent VALUES (5, \("d@example.com"), \("not a number 4111"))")
        #expect(data?.description.contains("4111") == false)
        #expect(data?.resultCode == .mismatch)
        // A value too long or out of range: the message names the column (kept), never the value.
        let tooLong = failure("INSERT INTO parent VALUES (7, \(String(repeating: "long-secret", count: 20)), 1)")
        #expect(tooLong?.code == 1406)
        #expect(tooLong?.column == "email")
        #expect(tooLong?.description.contains("'email'") == true)
        #expect(tooLong?.description.contains("long-secret") == false)
        let outOfRange = failure("INSERT INTO parent VALUES (8, \("r@example.com"), \(Int64.max))")
        #expect(outOfRange?.code == 1264)
        #expect(outOfRange?.column == "age")
        #expect(outOfRange?.description.contains(String(Int64.max)) == false)
    }

    @Test func aDeadlockIsRetryable() async throws {
        let (pool, _) = try makeSchema()
        defer { try? pool.close() }
        try await pool.write { db in _ = try db.execute(sql: "INSERT INTO parent VALUES (2, 'b@example.com', 1)") }
        // Two transactions lock rows 1 and 2 in opposite orders.
        let first = Task.detached {
            try await blocking {
                try pool.write { db in
                    try db.execute(sql: "UPDATE parent SET age = 10 WHERE id = 1")
                    Thread.sleep(forTimeInterval: 0.5)
                    try db.execute(sql: "UPDATE parent SET age = 10 WHERE id = 2")
                }
            }
        }
        let second = Task.detached {
            try await blocking {
                try pool.write { db in
                    try db.execute(sql: "UPDATE parent SET age = 20 WHERE id = 2")
                    Thread.sleep(forTimeInterval: 0.5)
                    try db.execute(sql: "UPDATE parent SET age = 20 WHERE id = 1")
                }
            }
        }
        var errors = [any Error]()
        for task in [first, second] {
            do { try await task.value } catch { errors.append(error) }
        }
        #expect(errors.count == 1)
        let deadlock = errors.first as? MariaDBError
        #expect(deadlock?.code == 1213)
        #expect(deadlock?.isRetryable == true)
    }

    /// Two writes lock rows 1 and 2, then each asks for the other's: a deadlock, certain
    /// once both wait. Each body catches the deadlock and goes on. InnoDB rolled the
    /// victim's whole transaction back, and MariaDB would run its next statements in
    /// autocommit mode, each committing on its own, and answer its `COMMIT` with success:
    /// the victim's `INSERT` must be refused and its write must throw the deadlock. Checked
    /// from outside: only the winner's rows are there.
    /// Under `innodb_snapshot_isolation`, a write to a row another session changed since
    /// the transaction read it fails with 1020 and InnoDB rolls the whole transaction back.
    /// A body that catches it (inside a savepoint, as for any nested failure) and goes on
    /// must not see its later statements committed one by one and the call reported as
    /// committed: the write throws, and the table (read from outside) holds none of it.
    @Test func aWriteConflictCaughtInsideAWriteFailsTheWriteAndWritesNothing() throws {
        let server = try MariaDBServer.start(options: ["--innodb-snapshot-isolation=ON"])
        defer { server.stop() }
        var configuration = MariaDBConfiguration()
        configuration.readTimeout = .seconds(20)
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration)
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY, v INT NOT NULL)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 0), (2, 0)")
        }
        let database = try #require(try pool.read { try $0.fetchScalar(String.self, "SELECT DATABASE()") })
        var nested: MariaDBError?
        let error = #expect(throws: MariaDBError.self) {
            try pool.write { db in
                try db.execute(sql: "UPDATE t SET v = 5 WHERE id = 2")
                _ = try db.fetchScalar(Int.self, "SELECT v FROM t WHERE id = 1")
                try server.sql("UPDATE t SET v = 1 WHERE id = 1", database: database)  // another session
                do {
                    try db.inSavepoint { try db.execute(sql: "UPDATE t SET v = 7 WHERE id = 1") }
                } catch let error as MariaDBError {
                    nested = error
                }
                try db.execute(sql: "INSERT INTO t VALUES (3, 3)")
            }
        }
        #expect(nested?.code == 1020)
        #expect(error?.code == 1020)
        #expect(error?.isRetryable == true)
        #expect(
            try server.sql("SELECT id, v FROM t ORDER BY id", database: database)
                .trimmingCharacters(in: .whitespacesAndNewlines) == "1\t1\n2\t0")
        // The connection serves the next write.
        try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (4, 4)") }
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") } == 3)
    }

    @Test func aDeadlockCaughtInsideAWriteFailsTheWriteAndWritesNothingAfterIt() throws {
        let (pool, outside) = try makeSchemaWithTwoParentsAndALog()
        defer { try? pool.close() }
        let locked = (first: DispatchSemaphore(value: 0), second: DispatchSemaphore(value: 0))
        struct Outcome: Sendable {
            var caughtDeadlock = false
            var insertError: Int?
            var compoundError: Int?
            var writeError: Int?
        }
        @Sendable func transfer(_ name: String, own: Int, other: Int, age: Int) -> Outcome {
            let (mine, theirs) = own == 1 ? (locked.first, locked.second) : (locked.second, locked.first)
            var outcome = Outcome()
            do {
                try pool.write { db in
                    try db.execute("UPDATE parent SET age = \(age) WHERE id = \(own)")
                    mine.signal()
                    guard theirs.wait(timeout: .now() + 120) == .success else { return }
                    do {
                        try db.execute("UPDATE parent SET age = \(age) WHERE id = \(other)")
                    } catch let error as MariaDBError where error.code == 1213 {
                        outcome.caughtDeadlock = true
                    }
                    do {
                        try db.execute("INSERT INTO log VALUES (\(name))")
                    } catch {
                        outcome.insertError = (error as? MariaDBError)?.code ?? -1
                    }
                    // A compound statement is not a new transaction: refused too.
                    do {
                        try db.execute(sql: "BEGIN NOT ATOMIC INSERT INTO log VALUES ('c-\(name)'); END")
                    } catch {
                        outcome.compoundError = (error as? MariaDBError)?.code ?? -1
                    }
                }
            } catch {
                outcome.writeError = (error as? MariaDBError)?.code ?? -1
                #expect((error as? MariaDBError)?.isRetryable == true)
            }
            return outcome
        }
        let first = StartedThread { transfer("first", own: 1, other: 2, age: 10) }
        let second = StartedThread { transfer("second", own: 2, other: 1, age: 20) }
        let outcomes = [try first.result(), try second.result()]
        let victims = outcomes.filter(\.caughtDeadlock)
        try #require(victims.count == 1)
        #expect(victims[0].insertError == 1213)
        #expect(victims[0].compoundError == 1213)
        #expect(victims[0].writeError == 1213)
        let winnerIndex = outcomes[0].caughtDeadlock ? 1 : 0
        #expect(outcomes[winnerIndex].writeError == nil)
        #expect(outcomes[winnerIndex].insertError == nil)
        #expect(outcomes[winnerIndex].compoundError == nil)
        let winner = winnerIndex == 0 ? (name: "first", age: 10) : (name: "second", age: 20)
        #expect(try outside.sql("SELECT name FROM log ORDER BY name") == "c-\(winner.name)\n\(winner.name)")
        #expect(try outside.sql("SELECT age FROM parent ORDER BY id") == "\(winner.age)\n\(winner.age)")
        // The connection the victim used serves the next writes.
        for id in 3...4 {
            try pool.write { db in try db.execute("INSERT INTO log VALUES (\("next\(id)"))") }
        }
        #expect(try outside.sql("SELECT COUNT(*) FROM log") == "4")
    }

    /// A lock wait timeout (1205) rolls back only the statement, under MariaDB's default
    /// `innodb_rollback_on_timeout = OFF`: the transaction goes on (the connection asks the
    /// server), and the body's later statements and its `COMMIT` are written.
    @Test func aLockWaitTimeoutCaughtInsideAWriteKeepsTheTransaction() throws {
        let (pool, outside) = try makeSchemaWithTwoParentsAndALog()
        defer { try? pool.close() }
        let (holder, done) = try holdingParentOne(pool)
        defer { done.signal() }
        var timedOut: Int?
        try pool.write { db in
            timedOut = try updatingBothParents(db)
            try db.execute(sql: "INSERT INTO log VALUES ('after')")
        }
        done.signal()
        #expect(throws: CancellationError.self) { try holder.result() }
        #expect(timedOut == 1205)
        #expect(try outside.sql("SELECT age FROM parent ORDER BY id") == "30\n7")
        #expect(try outside.sql("SELECT name FROM log") == "after")
    }

    /// Under `innodb_rollback_on_timeout = ON` (a server started with it), a lock wait
    /// timeout (1205) rolls the whole transaction back. The connection asks the server
    /// (`@@in_transaction`) and finds it ended: the body's later statement and the write
    /// throw that 1205, and nothing of the write is written (checked from outside); the
    /// pool serves the next write.
    @Test func aLockWaitTimeoutUnderRollbackOnTimeoutWritesNothingAfterIt() throws {
        let server = try MariaDBServer.start(options: ["--innodb-rollback-on-timeout=ON"])
        defer { server.stop() }
        let database = try server.makeDatabaseName()
        var configuration = MariaDBConfiguration()
        configuration.readTimeout = .seconds(20)
        let pool = try MariaDBPool(url: server.url(database: database), configuration: configuration)
        defer { try? pool.close() }
        let outside = OutsideView(server: server, database: database)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE parent(id BIGINT PRIMARY KEY, age INT NOT NULL)")
            try db.execute(sql: "INSERT INTO parent VALUES (1, 30), (2, 30)")
            try db.execute(sql: "CREATE TABLE log(name VARCHAR(10) PRIMARY KEY)")
        }
        let (holder, done) = try holdingParentOne(pool)
        defer { done.signal() }
        var timedOut: Int?
        var after: Int?
        let failure = #expect(throws: MariaDBError.self) {
            try pool.write { db in
                timedOut = try updatingBothParents(db)
                do {
                    try db.execute(sql: "INSERT INTO log VALUES ('after')")
                } catch let error as MariaDBError {
                    after = error.code
                }
            }
        }
        done.signal()
        #expect(throws: CancellationError.self) { try holder.result() }
        #expect(timedOut == 1205)
        #expect(after == 1205)
        #expect(failure?.code == 1205, "\(String(describing: failure))")
        #expect(try outside.sql("SELECT age FROM parent ORDER BY id") == "30\n30")
        #expect(try outside.sql("SELECT COUNT(*) FROM log") == "0")
        try pool.write { db in try db.execute(sql: "INSERT INTO log VALUES ('next')") }
        #expect(try outside.sql("SELECT name FROM log") == "next")
    }

    @Test func aSessionKilledOnTheServerBreaksTheConnectionAndThePoolReplacesIt() throws {
        let (pool, outside) = try makeMariaDBPool(
            {
                var configuration = MariaDBConfiguration()
                configuration.maximumConnections = 1
                return configuration
            }())
        defer { try? pool.close() }
        let id = try pool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") }
        try outside.sql("KILL CONNECTION \(id ?? 0)")
        // Seen while idle (a poll of the socket, no round trip): replaced before it is lent.
        let next = try pool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") }
        #expect(next != nil && next != id)
    }

    /// A batch whose session an administrator kills part way (`KILL CONNECTION` from
    /// outside while item 50 is made) throws a connection failure that names no item (no
    /// row caused it), and nothing of it was written: whether its inserts go as one bulk
    /// execution (made first, sent on the dead session) or one statement per row
    /// (`INSERT IGNORE`, never in bulk: the first fifty ran, then the session died).
    @Test func aBatchWhoseSessionIsKilledPartWayNamesNoItem() throws {
        let (pool, outside) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try pool.write { db in try db.execute(sql: "CREATE TABLE pairs(a INT)") }
        for verb in ["INSERT", "INSERT IGNORE"] {
            let failure = #expect(throws: MariaDBError.self) {
                try pool.write { db in
                    let session = try db.fetchScalar(Int.self, "SELECT CONNECTION_ID()") ?? 0
                    _ = try db.executeBatch(count: 100) { (index: Int) -> SQL in
                        if index == 50 { try outside.sql("KILL CONNECTION \(session)") }
                        return SQL(sql: "\(verb) INTO pairs(a) VALUES (?)", arguments: [index])
                    }
                }
            }
            #expect(failure?.isConnectionFailure == true, "\(verb): \(String(describing: failure))")
            #expect(failure?.batchIndex == nil, "\(verb): \(String(describing: failure))")
            #expect(try outside.sql("SELECT COUNT(*) FROM pairs") == "0", "\(verb)")
        }
    }

    /// A write whose session an administrator killed part way (`KILL CONNECTION` from
    /// outside), its next statement's error caught: the COMMIT is refused before it is
    /// sent, so the call reports a connection failure, not an unknown outcome. Nothing of
    /// it was written (checked from outside), and the pool serves the next write.
    @Test func aCommitRefusedOnABrokenConnectionIsReportedNotCommitted() throws {
        let (pool, outside) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE k(id INT PRIMARY KEY)")
            try db.execute(sql: "INSERT INTO k VALUES (1)")
        }
        let failure = #expect(throws: MariaDBError.self) {
            try pool.write { db in
                try db.execute("INSERT INTO k VALUES (\(2))")
                let session = try db.fetchScalar(Int.self, "SELECT CONNECTION_ID()") ?? 0
                try outside.sql("KILL CONNECTION \(session)")
                _ = try? db.execute("INSERT INTO k VALUES (\(3))")  // the session is gone
            }
        }
        #expect(failure?.category == .connection, "\(String(describing: failure))")
        #expect(failure?.description.contains("not sent") == true, "\(String(describing: failure))")
        #expect(try outside.sql("SELECT GROUP_CONCAT(id ORDER BY id) FROM k") == "1")
        try pool.write { db in try db.execute("INSERT INTO k VALUES (\(4))") }
        #expect(try outside.sql("SELECT GROUP_CONCAT(id ORDER BY id) FROM k") == "1,4")
    }
}

/// Every error number SwiftDAL names has its category; one it does not is `.other`.
@Suite struct MariaDBErrorCategoryTests {
    /// A procedure whose later statement fails after its first result was sent (a
    /// deadlock there would have ended the transaction; here a `SIGNAL`): the `CALL`
    /// throws that error instead of returning the first result, and the connection runs
    /// the next statement.
    @Test func aProcedureFailingAfterItsFirstResultThrows() throws {
        let (pool, _) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(
                sql: "CREATE PROCEDURE later() BEGIN SELECT 1; SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'late'; END")
        }
        let error = #expect(throws: MariaDBError.self) {
            try pool.write { db in try db.fetchColumn(Int.self, "CALL later()") }
        }
        #expect(error?.code == 1644)
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT 2") } == 2)
    }

    /// A statement whose result fails part way (here a subquery that returns two rows for
    /// the second row of the result: rows are sent, then the error) throws that error, and
    /// the same cached statement runs again at once. (Connector/C leaves a statement whose
    /// stored read failed waiting for rows; its next execution read the wire for them until
    /// the read timeout, then lost the connection. The same happens to a statement stopped
    /// by `KILL QUERY` while its rows stream.) Both ways a result is read: a `SELECT`'s off
    /// the wire row by row, a procedure's stored first.
    @Test func aStatementWhoseResultFailedPartWayRunsAgain() throws {
        let (pool, _) = try makeOneConnectionPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE m(k INT, v INT)")
            try db.execute(sql: "INSERT INTO t VALUES (1), (2), (3)")
            try db.execute(sql: "INSERT INTO m VALUES (1, 10), (2, 20), (2, 21), (3, 30)")
            try db.execute(
                sql: "CREATE PROCEDURE p(lim INT) SELECT t.id, (SELECT v FROM m WHERE m.k = t.id AND m.v < lim) "
                    + "FROM t ORDER BY t.id")
        }
        let started = ContinuousClock.now
        let queries: [(Int) -> SQL] = [
            { limit in "SELECT t.id, (SELECT v FROM m WHERE m.k = t.id AND m.v < \(limit)) FROM t ORDER BY t.id" },
            { limit in "CALL p(\(limit))" }
        ]
        for query in queries {
            for _ in 0..<3 {
                let failed = #expect(throws: MariaDBError.self) {
                    try pool.read { db in try db.fetchAll(query(100)) { try $0.decode(Int.self, at: 0) } }
                }
                #expect(failed?.code == 1242)  // Subquery returns more than 1 row
                let ids = try pool.read { db in try db.fetchAll(query(21)) { try $0.decode(Int.self, at: 0) } }
                #expect(ids == [1, 2, 3])
            }
        }
        #expect(ContinuousClock.now - started < .seconds(20), "a statement waited for its read timeout")
    }

    @Test func eachNamedNumberHasItsCategory() {
        let expected: [(Int, DatabaseErrorCategory)] = [
            (1062, .constraint), (1451, .constraint), (1048, .constraint), (4025, .constraint), (1213, .conflict),
            (1020, .conflict), (1205, .busy), (2006, .connection), (2013, .connection), (1927, .connection),
            (4031, .connection),
            (1317, .interrupted), (1792, .readOnly),
            (1064, .invalidStatement), (1146, .invalidStatement), (1690, .invalidValue), (1406, .invalidValue),
            (1114, .resourceExhausted), (1040, .resourceExhausted), (1045, .permission), (1142, .permission),
            (1105, .other)
        ]
        for (code, category) in expected {
            let error = MariaDBError(code: code, sqlState: "HY000", message: "m")
            #expect(error.category == category, "\(code)")
            #expect((error as any DatabaseError).category == category, "\(code), through the protocol")
        }
        // Worth running again: a deadlock, a lock wait timeout, a write conflict, too many
        // connections; nothing else of the list.
        for (code, _) in expected {
            let error = MariaDBError(code: code, sqlState: "HY000", message: "m")
            #expect(error.isRetryable == [1213, 1205, 1020, 1040].contains(code), "\(code)")
        }
    }
}
