import SwiftDALConnection
import SwiftDALMariaDB
import SwiftDALPostgres
import Testing

/// A script's statements under PostgreSQL's reading (dollar quotes, nested comments, `--`
/// ended by a carriage return, `BEGIN ATOMIC` bodies) and MariaDB's (compound statements,
/// `END IF`/`END CASE`, `BEGIN NOT ATOMIC` blocks whose statements run at once, backslash
/// escapes, executable comments), as each engine's dialect splits it: the statement that
/// ends or starts a transaction is found wherever it stands, and names that look like
/// keywords are names. (SQLite's: `TransactionControlTests`.)
@Suite struct ScriptSplitTests {
    @Test func aPostgreSQLScriptSplitsAsTheServerReadsIt() {
        let postgresCases: [(String, String?)] = [
            ("CREATE TABLE shifts(id int, begin text); COMMIT", "COMMIT"),
            ("CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END; SELECT f()", nil),
            ("CREATE FUNCTION f() RETURNS int AS $$ BEGIN; COMMIT; END $$ LANGUAGE plpgsql; SELECT 1", nil),
            ("CREATE OR REPLACE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC SELECT 1; END; END", "END"),
            ("INSERT INTO t VALUES (1); /* a /* b */ c */ COMMIT; BEGIN", "COMMIT"),
            ("SELECT 1;-- done\rCOMMIT", "COMMIT"), ("SELECT E'a\\'; COMMIT'", nil)
        ]
        expectControl(postgresCases, DatabaseEngine.postgres)
    }

    @Test func aMariaDBScriptSplitsAsTheServerReadsIt() {
        let mariadbCases: [(String, String?)] = [
            (
                "CREATE PROCEDURE p(x INT) BEGIN CASE x WHEN 1 THEN SELECT 1; ELSE SELECT 2; END CASE; END; "
                    + "COMMIT; START TRANSACTION", "COMMIT"
            ),
            (
                "CREATE DEFINER=`a`@`%` PROCEDURE p() BEGIN IF 1 THEN SELECT 1; END IF; WHILE 0 DO SELECT 2; "
                    + "END WHILE; END; CALL p()", nil
            ),
            ("CREATE PROCEDURE c(p INT) BEGIN UPDATE shifts SET end = NOW() WHERE id = p; COMMIT; END", nil),
            ("CREATE PROCEDURE c() BEGIN IF 1 THEN SELECT 1; END /* x */ IF; COMMIT; END", nil),
            ("BEGIN NOT ATOMIC INSERT INTO t VALUES (1); ROLLBACK; START TRANSACTION; END", "ROLLBACK"),
            ("BEGIN NOT ATOMIC SELECT 1; SELECT 2; END; SELECT 3", nil),
            ("INSERT INTO notes VALUES ('it\\'s; commit later')", nil),
            ("# a note\nCOMMIT", "COMMIT")
        ]
        expectControl(mariadbCases, DatabaseEngine.mariadb)
        // A versioned comment that reads two ways hides what runs: no statement is read.
        #expect(DatabaseEngine.mariadb.dialect.scriptStatements("SELECT 1 /*!99999 ( */; COMMIT") == nil)
    }

    /// Expects each script's first transaction control, as `engine` splits it, to be the
    /// word given.
    private func expectControl(_ cases: [(String, String?)], _ engine: DatabaseEngine) {
        for (script, word) in cases {
            let statements = engine.dialect.scriptStatements(script)
            #expect(statements?.lazy.compactMap { TransactionControl.word(of: $0) }.first == word, "\(script)")
        }
    }
}
