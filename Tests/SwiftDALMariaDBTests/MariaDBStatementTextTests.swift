import Foundation
import SwiftDAL
import SwiftDALMariaDB
import Testing

/// The connection's rewriting of SwiftDAL's placeholders, through a real server: what each
/// form binds (the rewriting itself is internal).
@Suite struct MariaDBPlaceholderTests {
    @Test func literalsCommentsAndQuotedNamesAreLeftAlone() throws {
        let (pool, _) = try makeMariaDBPool()
        defer { try? pool.close() }
        let values = try pool.read { db -> [DatabaseValue?] in
            [
                try db.fetchScalar(DatabaseValue.self, SQL(sql: #"SELECT 'it\'s ?' /* ? */ # ?"#)),
                try db.fetchScalar(
                    DatabaseValue.self, SQL(sql: "SELECT `a?` FROM (SELECT ? AS `a?`) t", arguments: [7])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT ?1 + ?1 + ?", arguments: [1, 10])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT :a + :a", arguments: ["a": 2])),
                try db.fetchScalar(
                    DatabaseValue.self, SQL(sql: #"SELECT "a\" FROM (SELECT ? AS "a\") t"#, arguments: [8]))
            ]
        }
        #expect(values == [.text("it's ?"), .integer(7), .integer(12), .integer(4), .integer(8)])
        // Read as the server reads them: `/*! … */` (no version) is code, parameters
        // included; a versioned one may be skipped, so it is a comment; `--` then a
        // control character (DEL too) is a comment.
        let asTheServer = try pool.read { db -> [DatabaseValue?] in
            [
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT 1 /*! + ? */", arguments: [5])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT 1 /*M! + :a */ + :a", arguments: ["a": 2])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT 1 /*!99999 + ? */")),
                // Fewer than five digits are no version: code, its parameter included.
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT ? + /*!1 + ? + */ 0", arguments: [2, 3])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT ? --\u{7F} + ?\n", arguments: [3])),
                try db.fetchScalar(DatabaseValue.self, SQL(sql: "SELECT ? --\u{01}?\n + 1", arguments: [3]))
            ]
        }
        #expect(asTheServer == [.integer(6), .integer(5), .integer(1), .integer(6), .integer(3), .integer(4)])
        #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(Int.self, SQL(sql: "SELECT 1 /*! + ? ", arguments: [1])) }
        }
        #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(Int.self, SQL(sql: "SELECT ? + :a", arguments: [1])) }
        }
        #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(Int.self, SQL(sql: "SELECT ?", arguments: [1, 2])) }
        }
        #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(String.self, SQL(sql: "SELECT 'open")) }
        }
    }
}

/// What a statement does to a transaction, read from its first word past blanks and
/// comments as MariaDB reads them (no server needed).
@Suite struct MariaDBStatementRoleTests {
    @Test func theRoleIsReadPastComments() {
        let cases: [(sql: String, role: MariaDBStatementRole)] = [
            ("COMMIT", .commit), ("-- done\nCOMMIT", .commit), ("# done\r\nrollback", .rollback),
            ("/* a */ /* b */ Select 1", .read), ("--\tx\nCOMMIT", .commit), ("-- x", .write),
            // `--` without a blank after it is not a comment (it is two minus signs).
            ("--x\nCOMMIT", .write),
            // An executable comment runs: it is part of the statement, not skipped.
            ("/*! COMMIT */ SELECT 1", .write), ("/*M! COMMIT */ SELECT 1", .write),
            ("/*Maybe*/ COMMIT", .commit), ("/* unterminated COMMIT", .write),
            ("-- x\nROLLBACK TO SAVEPOINT s", .other), ("  \n START TRANSACTION", .other),
            // A `TO` counts only as ROLLBACK's next word (after an optional WORK).
            ("ROLLBACK -- back to the start", .rollback), ("ROLLBACK WORK /* to */ TO s", .other),
            ("rollback work to savepoint s", .other), ("ROLLBACK AND NO CHAIN", .rollback),
            ("ROLLBACK TRANSACTION TO SAVEPOINT s", .other), ("rollback transaction", .rollback)
        ]
        for (sql, role) in cases {
            #expect(MariaDBStatementRole(of: sql) == role, "\(sql.debugDescription)")
        }
    }
}
