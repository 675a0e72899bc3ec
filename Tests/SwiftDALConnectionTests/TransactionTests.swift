import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

/// A connection to the database file at `path`, where it runs `table` (the test's table
/// `t`), and a second connection that sees the file from outside (a promise about the
/// rows is checked there, not through the connection under test).
private func tableAndOutsideView(
    at path: String, table: String = "CREATE TABLE t(id INTEGER PRIMARY KEY)"
) throws -> (db: Database, outside: Database) {
    let db = try Database(path: path)
    let outside = try Database(path: path)
    try db.execute(sql: table)
    return (db, outside)
}

/// The ``DALError`` code `run` throws; `nil` when it throws none (or another error).
private func errorCode(_ run: () throws -> Void) -> DALError.Code? {
    do {
        try run()
        return nil
    } catch {
        return (error as? DALError)?.code
    }
}

@Suite struct TransactionTests {
    @Test func commitsOnReturnAndRollsBackOnThrow() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        try db.inTransaction(.immediate) { try db.execute("INSERT INTO users(name) VALUES ('kept')") }
        #expect(throws: TestFailure.self) {
            try db.inTransaction {
                try db.execute("INSERT INTO users(name) VALUES ('dropped')")
                throw TestFailure()
            }
        }
        #expect(try db.fetchColumn(String.self, "SELECT name FROM users") == ["kept"])
        #expect(!db.isInTransaction)
    }

    /// On SQLite each statement knows at its preparation whether it would end or start a
    /// transaction, and refuses its first step inside a transaction's body, however it is
    /// run: a statement prepared by hand (`makeStatement`), a cached one run again, one
    /// SQLite cannot even prepare (`COMMIT WORK`). Nothing is committed early (counted from
    /// a second connection), the body's error rolls the rest back, and the same statement
    /// runs outside a body.
    @Test func aStatementThatWouldEndTheTransactionIsRefusedAtItsFirstStep() throws {
        let directory = try TemporaryDirectory()
        let (db, outside) = try tableAndOutsideView(at: directory.file("refused.sqlite"))
        let commit = try db.makeStatement(sql: "COMMIT")
        var refusals = [DALError.Code?]()
        var countInside: Int?
        let thrown = errorCode {
            try db.inTransaction(.immediate) {
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                refusals.append(errorCode { _ = try commit.execute() })
                refusals.append(errorCode { try db.execute(sql: "COMMIT") })
                refusals.append(errorCode { try db.execute(sql: "COMMIT") })  // cached
                refusals.append(errorCode { try db.execute(sql: "commit work") })
                countInside = try outside.fetchScalar(Int.self, "SELECT count(*) FROM t")
                throw DALError(.invalidValue, "the body's own error")
            }
        }
        #expect(thrown == .invalidValue)
        #expect(countInside == 0)
        #expect(refusals == Array(repeating: .unsupportedOperation, count: 4))
        #expect(try outside.fetchScalar(Int.self, "SELECT count(*) FROM t") == 0)
        #expect(!db.isInTransaction)
        // Outside a body the same statements run.
        try db.execute(sql: "BEGIN")
        try db.execute(sql: "INSERT INTO t VALUES (2)")
        _ = try commit.execute()
        #expect(try outside.fetchColumn(Int.self, "SELECT id FROM t") == [2])
    }

    /// A savepoint outside any transaction begins one on SQLite: its closure may not end it
    /// either, however deep (a nested `inTransaction` is a savepoint inside it). The
    /// `COMMIT` is refused, the error undoes the savepoint, nothing is written (counted
    /// from a second connection), and no transaction is left open.
    @Test func aSavepointThatBeginsTheTransactionGuardsItsClosureToo() throws {
        let directory = try TemporaryDirectory()
        let (db, outside) = try tableAndOutsideView(at: directory.file("savepoint.sqlite"))
        let code = errorCode {
            try db.inSavepoint {
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                try db.inTransaction { try db.execute(sql: "COMMIT") }
            }
        }
        #expect(code == .unsupportedOperation)
        #expect(try outside.fetchScalar(Int.self, "SELECT count(*) FROM t") == 0)
        #expect(!db.isInTransaction)
        // Outside any closure, the connection controls its transactions by hand.
        try db.execute(sql: "BEGIN")
        try db.execute(sql: "INSERT INTO t VALUES (2)")
        try db.execute(sql: "COMMIT")
        #expect(try outside.fetchColumn(Int.self, "SELECT id FROM t") == [2])
    }

    /// A constraint declared `ON CONFLICT ROLLBACK` rolls the whole transaction back, and
    /// SQLite would run the next statements in autocommit mode, each committing on its own,
    /// with the `COMMIT` after them failing. A body that catches the error and goes on: its
    /// next statement is refused with that error (so is the `COMMIT`), the call throws,
    /// nothing is written (seen from a second connection), and the connection goes on.
    @Test func aTransactionSQLiteRolledBackOnItsOwnWritesNothingMore() throws {
        let directory = try TemporaryDirectory()
        let (db, outside) = try tableAndOutsideView(
            at: directory.file("rolled.sqlite"),
            table: "CREATE TABLE t(id INTEGER PRIMARY KEY ON CONFLICT ROLLBACK, v TEXT)")
        var conflict: SQLiteError?
        var refused: SQLiteError?
        func failure(_ sql: String) -> SQLiteError? {
            do {
                try db.execute(sql: sql)
                return nil
            } catch {
                return error as? SQLiteError
            }
        }
        let thrown = #expect(throws: SQLiteError.self) {
            try db.inTransaction(.immediate) {
                try db.execute(sql: "INSERT INTO t VALUES (1, 'first')")
                conflict = failure("INSERT INTO t VALUES (1, 'x')")
                refused = failure("INSERT INTO t VALUES (2, 'y')")
                // A body that swallows every error: its COMMIT is refused.
                _ = try? db.execute(sql: "INSERT INTO t VALUES (3, 'z')")
            }
        }
        #expect(conflict?.code == .constraintPrimaryKey)
        #expect(refused?.code == .constraintPrimaryKey)
        #expect(thrown?.code == .constraintPrimaryKey)
        #expect(refused?.message.contains("rolled the transaction back") == true)
        #expect(try outside.fetchScalar(Int.self, "SELECT count(*) FROM t") == 0)
        #expect(!db.isInTransaction)
        try db.inTransaction(.immediate) { try db.execute(sql: "INSERT INTO t VALUES (4, 'next')") }
        #expect(try outside.fetchColumn(Int.self, "SELECT id FROM t") == [4])
        // A script in the transaction is refused too; a trigger's RAISE(ROLLBACK) inside a
        // savepoint ends the whole transaction as well.
        try db.execute(
            sql: "CREATE TRIGGER guard BEFORE INSERT ON t WHEN NEW.v = 'bad' BEGIN SELECT RAISE(ROLLBACK, 'bad'); END")
        var scriptRefused = false
        #expect(throws: SQLiteError.self) {
            try db.inTransaction(.immediate) {
                try db.execute(sql: "INSERT INTO t VALUES (5, 'good')")
                _ = try? db.inSavepoint { try db.execute(sql: "INSERT INTO t VALUES (6, 'bad')") }
                scriptRefused = (try? db.executeScript("INSERT INTO t VALUES (7, 'script')")) == nil
                try db.execute(sql: "INSERT INTO t VALUES (8, 'after')")
            }
        }
        #expect(scriptRefused)
        #expect(try outside.fetchColumn(Int.self, "SELECT id FROM t") == [4])
    }

    /// A script that begins a transaction itself and fails at an `ON CONFLICT ROLLBACK`
    /// constraint: SQLite rolled back what the script wrote, and the statements sent after
    /// it are refused until a `ROLLBACK` (a script of one, comments and all, counts), so
    /// that none commits on its own. Control statements behind a comment are read as
    /// such: a commented `BEGIN` opens a transaction the same constraint then ends.
    /// Everything checked from a second connection.
    @Test func aTransactionAScriptBeganAndSQLiteRolledBackWritesNothingMore() throws {
        let directory = try TemporaryDirectory()
        let (db, outside) = try tableAndOutsideView(
            at: directory.file("script.sqlite"),
            table: "CREATE TABLE t(id INTEGER PRIMARY KEY ON CONFLICT ROLLBACK, v TEXT)")
        let scriptFailure = #expect(throws: SQLiteError.self) {
            try db.executeScript("BEGIN; INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (1, 'b')")
        }
        #expect(scriptFailure?.code == .constraintPrimaryKey)
        #expect(db.isInTransaction, "the transaction is seen open until it is rolled back here")
        let refused = #expect(throws: SQLiteError.self) { try db.execute(sql: "INSERT INTO t VALUES (2, 'c')") }
        #expect(refused?.message.contains("rolled the transaction back") == true)
        #expect(throws: SQLiteError.self) { try db.executeScript("INSERT INTO t VALUES (3, 'd')") }
        #expect(try outside.fetchScalar(Int.self, "SELECT count(*) FROM t") == 0)
        // Only a script of a lone ROLLBACK ends it (a statement after it, even without a
        // `;`, is refused rather than skipped).
        #expect(throws: SQLiteError.self) { try db.executeScript("ROLLBACK\nINSERT INTO t VALUES (9, 'x')") }
        #expect(throws: SQLiteError.self) { try db.executeScript("ROLLBACK; INSERT INTO t VALUES (9, 'x')") }
        try db.executeScript("/* the owner ends it */ ROLLBACK;")
        #expect(!db.isInTransaction)
        try db.execute(sql: "INSERT INTO t VALUES (4, 'e')")
        #expect(try outside.fetchColumn(Int.self, "SELECT id FROM t") == [4])

        try db.execute(sql: "-- a comment first\nBEGIN IMMEDIATE")
        try db.execute(sql: "INSERT INTO t VALUES (5, 'f')")
        #expect(throws: SQLiteError.self) { try db.execute(sql: "INSERT INTO t VALUES (5, 'g')") }
        #expect(throws: SQLiteError.self) { try db.execute(sql: "INSERT INTO t VALUES (6, 'h')") }
        #expect(db.isInTransaction)
        try db.execute(sql: "/* c */ ROLLBACK")
        #expect(!db.isInTransaction)
        #expect(try outside.fetchColumn(Int.self, "SELECT id FROM t") == [4])
    }

    @Test func leadingWordsSkipCommentsAndSeeWhatFollows() {
        #expect(Statement.leadingWords(of: "  /* a */ -- b\n rollback to sp").words == ["ROLLBACK", "TO", "SP"])
        #expect(Statement.leadingWords(of: "ROLLBACK; -- done\n", seeingWhatFollows: true).more == false)
        #expect(Statement.leadingWords(of: "ROLLBACK; SELECT 1", seeingWhatFollows: true).more == true)
        #expect(Statement.leadingWords(of: "SELECT 'a;b', 1, 2, 3", limit: 2).words == ["SELECT", ""])
        #expect(Statement.isWholeRollback(Statement.leadingWords(of: "/**/ROLLBACK TRANSACTION").words))
        #expect(!Statement.isWholeRollback(Statement.leadingWords(of: "ROLLBACK TRANSACTION TO sp").words))
        #expect(Statement.leadingWords(of: "/* unterminated").words.isEmpty)
        #expect(Statement.leadingWords(of: "").words.isEmpty)
    }

    /// The same on a pool, whose body swallows the error: the write throws, nothing is
    /// written, and the connection serves the next write.
    @Test func aPoolWriteSQLiteRolledBackOnItsOwnThrows() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("rolled-pool.sqlite"))
        try pool.write { try $0.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY ON CONFLICT ROLLBACK)") }
        #expect(throws: SQLiteError.self) {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                _ = try? db.execute(sql: "INSERT INTO t VALUES (1)")
                _ = try? db.execute(sql: "INSERT INTO t VALUES (2)")
            }
        }
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT count(*) FROM t") } == 0)
        try pool.write { try $0.execute(sql: "INSERT INTO t VALUES (3)") }
        #expect(try pool.read { try $0.fetchColumn(Int.self, "SELECT id FROM t") } == [3])
    }

    @Test func everyTransactionKindWorks() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.file("kinds.sqlite"))
        try makeUsersTable(db)
        for kind in [TransactionKind.deferred, .immediate, .exclusive] {
            try db.inTransaction(kind) { try db.execute("INSERT INTO users(name) VALUES (\(kind.rawValue))") }
        }
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 3)
    }

    @Test func nestedTransactionsAreSavepoints() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        try db.inTransaction {
            try db.execute("INSERT INTO users(name) VALUES ('outer')")
            #expect(throws: TestFailure.self) {
                try db.inTransaction {
                    try db.execute("INSERT INTO users(name) VALUES ('inner-undone')")
                    throw TestFailure()
                }
            }
            try db.inTransaction {
                try db.execute("INSERT INTO users(name) VALUES ('inner-kept')")
                try db.inSavepoint { try db.execute("INSERT INTO users(name) VALUES ('deepest')") }
            }
        }
        #expect(
            try db.fetchColumn(String.self, "SELECT name FROM users ORDER BY id") == ["outer", "inner-kept", "deepest"])
    }

    @Test func anOuterRollbackUndoesReleasedSavepoints() throws {
        let db = try Database.inMemory()
        try makeUsersTable(db)
        #expect(throws: TestFailure.self) {
            try db.inTransaction {
                try db.inTransaction { try db.execute("INSERT INTO users(name) VALUES ('nested')") }
                throw TestFailure()
            }
        }
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 0)
    }

    @Test func deferredReadThenWriteGetsBusySnapshotButWriteBlocksDoNot() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("busy.sqlite")
        let first = try Database(path: path)
        try makeUsersTable(first)
        let second = try Database(path: path)
        // The classic mistake: a deferred transaction that reads, then writes after another
        // connection committed. SQLite refuses at once, whatever the busy timeout.
        let error = #expect(throws: SQLiteError.self) {
            try first.inTransaction(.deferred) {
                _ = try first.fetchScalar(Int.self, "SELECT COUNT(*) FROM users")
                try second.execute("INSERT INTO users(name) VALUES ('other')")
                try first.execute("INSERT INTO users(name) VALUES ('mine')")
            }
        }
        #expect(error?.code == .busySnapshot)
        // IMMEDIATE takes the write lock up front: the same sequence succeeds.
        try first.inTransaction(.immediate) {
            _ = try first.fetchScalar(Int.self, "SELECT COUNT(*) FROM users")
            try first.execute("INSERT INTO users(name) VALUES ('mine')")
        }
        #expect(try second.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 2)
    }

    @Test func writeClosuresCommitOrRollBack() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { try makeUsersTable($0) }
        #expect(throws: TestFailure.self) {
            try queue.write { db in
                try db.execute("INSERT INTO users(name) VALUES ('x')")
                throw TestFailure()
            }
        }
        #expect(try queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == 0)
    }

    /// A failed ROLLBACK (out of memory) can leave a connection inside its transaction;
    /// here the leftover is made by hand. The next access must not join it: it is rolled
    /// back, and the new write commits on its own.
    @Test func aLeftoverTransactionIsDiscardedBeforeTheConnectionIsUsedAgain() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("leftover.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { try makeUsersTable($0) }
        try queue.reentrantWrite { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            try db.execute("INSERT INTO users(name) VALUES ('half-done')")
        }
        try queue.write { db in try db.execute("INSERT INTO users(name) VALUES ('committed')") }
        #expect(try queue.read { try $0.fetchColumn(String.self, "SELECT name FROM users") } == ["committed"])
        try queue.close()
        let reopened = try Database(path: path)
        #expect(try reopened.fetchColumn(String.self, "SELECT name FROM users") == ["committed"])

        let pool = try DatabasePool(path: directory.file("leftover-pool.sqlite"))
        try pool.write { try makeUsersTable($0) }
        try pool.reentrantWrite { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            try db.execute("INSERT INTO users(name) VALUES ('half-done')")
        }
        try pool.write { db in try db.execute("INSERT INTO users(name) VALUES ('committed')") }
        #expect(try pool.read { try $0.fetchColumn(String.self, "SELECT name FROM users") } == ["committed"])
    }
}

@Suite struct TransactionControlTests {
    /// The statements a transaction's body may not send, told by their first words: past
    /// blanks and comments, in any case, and not the look-alikes (a savepoint's rollback,
    /// MariaDB's compound `BEGIN NOT ATOMIC`, a prepared statement's `PREPARE`, an
    /// executable comment whose text the server runs and checks itself).
    @Test(
        arguments: [
            ("COMMIT", "COMMIT"), ("commit work", "COMMIT"), ("  end", "END"), ("ABORT", "ABORT"),
            ("ROLLBACK", "ROLLBACK"), ("rollback transaction", "ROLLBACK"), ("ROLLBACK AND CHAIN", "ROLLBACK"),
            ("BEGIN", "BEGIN"), ("BEGIN IMMEDIATE TRANSACTION", "BEGIN"), ("begin;", "BEGIN"),
            ("START TRANSACTION READ ONLY", "START TRANSACTION"), ("PREPARE TRANSACTION 'x'", "PREPARE TRANSACTION"),
            ("/* a */ -- b\n# c\n\tCOMMIT", "COMMIT"), ("COMMIT/* c */", "COMMIT"),
            ("ROLLBACK TO SAVEPOINT s", nil), ("ROLLBACK WORK TO s", nil), ("ROLLBACK TRANSACTION TO SAVEPOINT s", nil),
            ("BEGIN NOT ATOMIC SELECT 1; END", nil), ("PREPARE q AS SELECT 1", nil), ("START SLAVE", nil),
            ("SAVEPOINT s", nil), ("RELEASE SAVEPOINT s", nil), ("SELECT 'COMMIT'", nil), ("COMMITTED", nil),
            ("/*! COMMIT */", nil), ("", nil), ("-- only a comment", nil), ("INSERT INTO t VALUES (1)", nil),
            ("(SELECT 1)", nil), ("ENDS", nil)
        ] as [(String, String?)])
    func theWordsThatEndOrStartATransaction(sql: String, word: String?) {
        #expect(TransactionControl.word(of: sql) == word, "\(sql)")
        // The cheap first look never rules out what the whole look finds.
        if word != nil { #expect(TransactionControl.mayControl(sql), "\(sql)") }
    }

    /// A script's statements, split as each engine reads it: the one that ends or starts a
    /// transaction is found wherever it stands; a `;` inside a literal, a quoted name, a
    /// comment, a dollar quote or the body of a trigger or a routine splits nothing, so
    /// that none of those is taken for control; names that look like keywords (`begin`,
    /// `end`) are names. SQLite splits as `sqlite3_complete` does.
    @Test(
        arguments: [
            ("INSERT INTO t VALUES (1); COMMIT; INSERT INTO t VALUES (2)", "COMMIT"),
            ("INSERT INTO t VALUES (1);\n  -- done\n  rollback", "ROLLBACK"),
            ("SELECT 1;;BEGIN", "BEGIN"), ("END", "END"),
            ("INSERT INTO t VALUES ('a; COMMIT'); SELECT \"b;COMMIT\"", nil),
            ("SELECT 1 /* ; COMMIT */; -- ; ROLLBACK\nSELECT 2", nil),
            (
                "CREATE TABLE s(id INTEGER PRIMARY KEY, start TEXT, end TEXT); CREATE TRIGGER r AFTER INSERT ON s "
                    + "BEGIN UPDATE s SET end = CASE WHEN new.start > 1 THEN 1 ELSE 2 END WHERE id = new.id; "
                    + "DELETE FROM u; END; CREATE TABLE v(y)", nil
            ),
            ("CREATE TRIGGER r AFTER INSERT ON t BEGIN DELETE FROM u; END; COMMIT", "COMMIT"),
            ("CREATE TABLE shifts(id INTEGER, begin TEXT); COMMIT; BEGIN;", "COMMIT"),
            ("SELECT 'unclosed; COMMIT", nil), ("SAVEPOINT a; ROLLBACK TO a; RELEASE a", nil)
        ] as [(String, String?)])
    func theStatementOfASQLiteScriptThatEndsOrStartsATransaction(script: String, word: String?) {
        #expect(control(in: SQLiteEngineDialect().scriptStatements(script)) == word, "\(script)")
    }

    /// A literal holding many `;` is read once (only a `;` outside literals asks SQLite
    /// whether the statement is complete): a data script splits in linear time.
    @Test func aScriptWhoseLiteralsHoldManySemicolonsSplitsAtItsOwn() {
        let data = String(repeating: "a;", count: 50_000)
        let statements = SQLiteEngineDialect().scriptStatements("INSERT INTO t VALUES ('\(data)'); COMMIT")
        #expect(statements?.count == 2)
        #expect(control(in: statements) == "COMMIT")
    }

    /// The first statement of `statements` that ends or starts a transaction.
    private func control(in statements: [String]?) -> String? {
        statements?.lazy.compactMap { TransactionControl.word(of: $0) }.first
    }
}
