import Foundation
import SwiftDALConnection

/// MariaDB's ``SwiftDAL/EngineDialect``.
///
/// What the SQL lexicon must assume of a SwiftDAL session (see ``MariaDBConnection``):
/// `"…"` is an identifier (`ANSI_QUOTES`), `` `…` `` too; strings are `'…'`, where a
/// backslash escapes the next character (`NO_BACKSLASH_ESCAPES` is not set) and `''` is
/// a quote; comments are `-- ` (white space or a control character after the dashes), `#`
/// to the end of the line, and `/* */` (not nested; `/*! … */` is executed by the server,
/// or skipped when it names a version the server does not run).
struct MariaDBEngineDialect: EngineDialect {
    /// The name of the lock for `key`: `GET_LOCK` names are server-wide, so the
    /// database's name is part of it (two databases on one server migrate independently).
    static func lockName(_ key: Int64) -> SQL {
        "CONCAT('swiftdal.', LEFT(DATABASE(), 30), '.', \(String(key)))"
    }

    /// A named lock of the session (`GET_LOCK`): several service instances may start at
    /// once, and one migrates while the others wait (at most `limit`, in whole seconds,
    /// at least one, then a ``SwiftDAL/DALError/Code/timeout``), then find nothing left
    /// to do.
    func lockMigrations(_ db: Database, key: Int64, waitingAtMost limit: Duration) throws {
        let lockName = Self.lockName(key)
        let nanoseconds = limit.clampedNanoseconds
        let seconds = min(max(1, nanoseconds / 1_000_000_000 + (nanoseconds % 1_000_000_000 > 0 ? 1 : 0)), 31_536_000)
        let got = try db.fetchScalar(Int.self, "SELECT GET_LOCK(\(sql: lockName), \(seconds))")
        guard got == 1 else {
            throw DALError(.timeout, "another instance held the migration lock for \(limit); nothing was migrated")
        }
    }

    func unlockMigrations(_ db: Database, key: Int64) throws {
        let lockName = Self.lockName(key)
        _ = try db.fetchScalar(Int.self, "SELECT RELEASE_LOCK(\(sql: lockName))")
    }

    func createMigrationHistory(_ quotedTable: String) -> String {
        "CREATE TABLE IF NOT EXISTS \(quotedTable) (id VARCHAR(255) NOT NULL PRIMARY KEY, "
            + "applied_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), "
            + "position BIGINT NOT NULL AUTO_INCREMENT UNIQUE) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"
    }

    /// An `AUTO_INCREMENT` column: a table has no insertion order of its own.
    var migrationHistoryOrder: String { "position" }

    /// In a transaction of its own, with `foreign_key_checks = 0` around it when
    /// `disablesForeignKeys` (a session setting, restored afterwards, on every path).
    ///
    /// MariaDB's DDL is not transactional: each `CREATE`, `ALTER`, `DROP` commits the
    /// transaction open before it, with everything the step ran so far, and what follows
    /// runs outside a transaction. A step that fails after some DDL therefore leaves all it
    /// ran up to the failure applied, and the step unrecorded in the history (its record is
    /// the last statement); a step without DDL is rolled back whole. Which of the two
    /// happened is read from the server (its transaction still open when the step failed,
    /// or not) and said in the error. Write steps that can run again (`IF NOT EXISTS`), one
    /// DDL statement each.
    func runMigrationStep(_ db: Database, disablesForeignKeys: Bool, _ body: () throws -> Void) throws {
        if disablesForeignKeys { try db.execute(sql: "SET foreign_key_checks = 0") }
        defer {
            if disablesForeignKeys { _ = try? db.execute(sql: "SET foreign_key_checks = 1") }
        }
        var committedByDDL = false
        do {
            try db.inTransaction(.immediate) {
                do {
                    // The step's DDL commits on its own, and its history record follows.
                    try db.toleratingImplicitCommits(body)
                } catch {
                    committedByDDL = !db.isInTransaction
                    throw error
                }
            }
        } catch let error as DALError where committedByDDL {
            var failure = error
            failure.message = Self.partlyApplied + error.message
            throw failure
        } catch  where committedByDDL {
            throw DALError(.schemaMismatch, Self.partlyApplied + "\(error)", underlying: error)
        }
    }

    /// What an error of a step that DDL had committed starts with.
    static let partlyApplied =
        "its DDL committed what it ran, so everything up to the failure stays applied (MariaDB's DDL is not "
        + "transactional): "

    /// `ALTER TABLE` changes columns, types and constraints in place.
    var rebuildsTables: Bool { false }

    /// The `table=` of the lines whose `type=ALL` (a full table scan), or `type=index`
    /// while filtering rows (`Using where`): the whole index read to find the matches, as
    /// MariaDB plans an `UPDATE` whose condition no index serves (its primary key, which
    /// holds the rows, read from end to end). An index read in order without a filter (an
    /// `ORDER BY` key with a `LIMIT`) stops at the limit, and passes. See
    /// ``MariaDBConnection/queryPlan(of:)`` for the lines' form.
    func scannedNames(inPlan plan: [String]) -> [String] {
        plan.compactMap { line in
            let scans = line.contains(" type=ALL ") || (line.contains(" type=index ") && line.contains("Using where"))
            guard scans, let table = line.range(of: " table=") else { return nil }
            return QueryPlanText.firstName(in: line[table.upperBound...])
        }
    }

    /// EXPLAIN names a table by its alias when the statement gives one.
    var planNamesAliases: Bool { true }
}

extension MariaDBEngineDialect {
    // MARK: BaseDAL's statements

    /// SwiftDAL's sessions (`ANSI_QUOTES`, backslash escapes), a session whose `sql_mode`
    /// lost `ANSI_QUOTES` (`"…"` a string), and one that set `NO_BACKSLASH_ESCAPES`: the
    /// scope check encloses a condition only when all three read it alike.
    var lexicons: [SQLLexicon] { [.mariadb, .mariadbWithoutANSIQuotes, .mariadbWithoutBackslashEscapes] }

    /// No clause at all: the upsert's `INSERT` is a plain one. MariaDB's only upsert,
    /// `ON DUPLICATE KEY UPDATE`, fires on a conflict over *any* unique key, not only the
    /// primary key: a new row whose `email` another row holds would update that other row
    /// (the conformance suite caught `upsertRange` doing so, where PostgreSQL and SQLite
    /// throw a unique violation). And it has no `WHERE` for a scope's guard (an assignment
    /// that sets the key to `NULL` where the guard fails is not refused: MariaDB stores the
    /// column's implicit default, and another tenant's row was overwritten in a test).
    ///
    /// BaseDAL reaches this insert only after finding no row with the key (inside the
    /// scope), with the key's rows locked (`FOR UPDATE`, which in InnoDB also locks the gap
    /// where the key would be, under the default `REPEATABLE READ`): a conflict on another
    /// unique key throws its duplicate-key error (1062), as on the other engines; one on
    /// the primary key is a row outside the scope, which
    /// ``isUpsertRefusal(_:conflictColumns:)`` reads as the refusal it is (or, without a
    /// scope under `READ COMMITTED`, a row inserted since: a duplicate key, not a lost write).
    func upsertClause(conflictColumns: [String], updateColumns: [String], where condition: String?) -> String {
        ""
    }

    /// `VALUES("c")` (MariaDB has no `excluded`).
    func insertedValue(ofQuoted quotedColumn: String) -> String { "VALUES(\(quotedColumn))" }

    /// A guarded upsert's refusal: its plain `INSERT` met the primary key of a row outside
    /// the scope (1062 on `PRIMARY`).
    func isUpsertRefusal(_ error: any Error, conflictColumns: [String]) -> Bool {
        guard let error = error as? MariaDBError else { return false }
        return error.code == 1062 && error.constraint == "PRIMARY"
    }

    /// `"id" IN (?, ?, …)`, or `("a", "b") IN ((?, ?), …)`, every value bound (at most
    /// 65,535 in one statement).
    func keyListPredicate(columns: [String], types: [String], keys: [[DatabaseValue]]) throws -> SQL {
        guard columns.count == 1 else {
            return try valuesListPredicate(columns: columns, keys: keys, limit: 65_535, valuesKeyword: false)
        }
        guard keys.count <= 65_535 else {
            throw DALError(.invalidValue, "findByIds binds at most 65535 key values at once on this engine")
        }
        var arguments = StatementArguments()
        arguments.append(converted: keys.map { $0[0] })
        let list = Array(repeating: "?", count: keys.count).joined(separator: ", ")
        return SQL(sql: "\(quote(columns[0])) IN (\(list))", arguments: arguments)
    }

    var lockForUpdateClause: String { " FOR UPDATE" }
    /// `INSERT … RETURNING` (MariaDB 10.5 and later).
    var returnsInsertedKeys: Bool { true }
    /// `NULL` sorts first in an ascending order, as on SQLite.
    var sortsNullsFirst: Bool { true }
    /// MariaDB's range optimizer does not read `(a, id) > (?, ?)` as an index range: with
    /// it, a page after a cursor scanned the index from its start (`EXPLAIN`: type
    /// `index`), so a deep page cost as much as an offset. The expanded form with its
    /// leading `a >= ?` is a `range`.
    var seeksWithRowValues: Bool { false }

    // MARK: Tables and the catalog

    /// `BIGINT`, `DOUBLE`, `LONGTEXT`, `LONGBLOB`, `DECIMAL(65,30)`; text and bytes in a key
    /// or index are `VARCHAR(255)` and `VARBINARY(255)` (InnoDB indexes no `LONGTEXT`).
    /// Text compares as the table's collation: create the database with
    /// `CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin` for exact `=` (the default
    /// collations ignore case, accents and trailing spaces).
    func columnType(affinity: String, inKey: Bool) -> String {
        switch affinity {
        case "INTEGER": "BIGINT"
        case "REAL": "DOUBLE"
        case "TEXT": inKey ? "VARCHAR(255)" : "LONGTEXT"
        case "BLOB": inKey ? "VARBINARY(255)" : "LONGBLOB"
        default: "DECIMAL(65,30)"
        }
    }

    /// Keys are never reused by InnoDB's counter while the server runs.
    func generatedKeyClause(autoincrement: Bool) -> String { " AUTO_INCREMENT PRIMARY KEY" }

    /// (No rowid tables.)
    var declaresWithoutRowID: Bool { false }

    /// DDL commits at once.
    var rollsBackDDL: Bool { false }

    /// SQLite's `BINARY` is `utf8mb4_nopad_bin`, its `RTRIM` (trailing spaces ignored)
    /// `utf8mb4_bin`; `NOCASE` (ASCII case folded, nothing else) has no equivalent: the
    /// `_ci` collations also fold accents.
    func collation(_ name: String, table: String) throws -> String {
        switch name.uppercased() {
        case "BINARY": return "utf8mb4_nopad_bin"
        case "RTRIM": return "utf8mb4_bin"
        case "NOCASE":
            throw DALError(
                .unsupportedOperation,
                "MariaDB has no NOCASE collation (its _ci collations also ignore accents): name one, such as "
                    + "utf8mb4_general_nopad_ci, or compare with LOWER()",
                table: table)
        default:
            let plain = name.utf8.allSatisfy { SQLLexicon.isWordByte($0) }
            return plain ? name : quote(name)
        }
    }

    func tableNames(_ db: Database) throws -> [String] {
        try db.fetchColumn(
            String.self,
            """
            SELECT TABLE_NAME FROM information_schema.TABLES
            WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY BINARY TABLE_NAME
            """)
    }

    /// The base tables and views of the connection's database.
    func schemaObjectNames(_ db: Database) throws -> [String] {
        try db.fetchColumn(
            String.self,
            """
            SELECT TABLE_NAME FROM information_schema.TABLES
            WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'VIEW') ORDER BY BINARY TABLE_NAME
            """)
    }

    /// From `information_schema`: `STATISTICS` (the primary key is `pk`, a `UNIQUE`
    /// constraint's index `u`, any other `c`, including the index MariaDB makes for a
    /// foreign key) and `REFERENTIAL_CONSTRAINTS`.
    func describe(table name: String, columns: [ColumnInfo], _ db: Database) throws -> TableDescription {
        let indexRows = try db.fetchAll(
            """
            SELECT s.INDEX_NAME, s.NON_UNIQUE = 0, s.COLUMN_NAME,
                   EXISTS(SELECT 1 FROM information_schema.TABLE_CONSTRAINTS c
                          WHERE c.TABLE_SCHEMA = s.TABLE_SCHEMA AND c.TABLE_NAME = s.TABLE_NAME
                            AND c.CONSTRAINT_NAME = s.INDEX_NAME AND c.CONSTRAINT_TYPE = 'UNIQUE')
            FROM information_schema.STATISTICS s
            WHERE s.TABLE_SCHEMA = DATABASE() AND BINARY s.TABLE_NAME = \(name)
            ORDER BY BINARY s.INDEX_NAME, s.SEQ_IN_INDEX
            """
        ) { row in
            (
                name: try row.decode(String.self, at: 0), isUnique: try row.decode(Bool.self, at: 1),
                column: try row.decode(String.self, at: 2), isConstraint: try row.decode(Bool.self, at: 3)
            )
        }
        var indexes = [IndexInfo]()
        for row in indexRows where indexes.last?.name != row.name {
            let origin = row.name == "PRIMARY" ? "pk" : row.isConstraint ? "u" : "c"
            indexes.append(
                IndexInfo(
                    name: row.name, isUnique: row.isUnique, origin: origin,
                    columns: indexRows.filter { $0.name == row.name }.map(\.column)))
        }
        let keyRows = try db.fetchAll(
            """
            SELECT k.CONSTRAINT_NAME, k.REFERENCED_TABLE_NAME, k.COLUMN_NAME, k.REFERENCED_COLUMN_NAME,
                   r.UPDATE_RULE, r.DELETE_RULE
            FROM information_schema.KEY_COLUMN_USAGE k
            JOIN information_schema.REFERENTIAL_CONSTRAINTS r
              ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
             AND r.TABLE_NAME = k.TABLE_NAME
            WHERE k.TABLE_SCHEMA = DATABASE() AND BINARY k.TABLE_NAME = \(name)
            ORDER BY BINARY k.CONSTRAINT_NAME, k.ORDINAL_POSITION
            """
        ) { row in
            (
                name: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1),
                from: try row.decode(String.self, at: 2), to: try row.decode(String.self, at: 3),
                onUpdate: try row.decode(String.self, at: 4), onDelete: try row.decode(String.self, at: 5)
            )
        }
        var foreignKeys = [ForeignKeyInfo]()
        var seen = Set<String>()
        for row in keyRows where seen.insert(row.name).inserted {
            let parts = keyRows.filter { $0.name == row.name }
            foreignKeys.append(
                ForeignKeyInfo(
                    columns: parts.map(\.from), table: row.table, referencedColumns: parts.map(\.to),
                    onUpdate: row.onUpdate, onDelete: row.onDelete))
        }
        return TableDescription(name: name, columns: columns, indexes: indexes, foreignKeys: foreignKeys)
    }

    /// The single-column primary key that is `AUTO_INCREMENT` (the catalog's columns give
    /// its default as `AUTO_INCREMENT`).
    func generatedKeyColumn(of description: TableDescription) -> String? {
        let key = description.primaryKey
        guard key.count == 1, let column = description.columns.first(where: { $0.name == key[0] }) else { return nil }
        return column.defaultValueSQL == "AUTO_INCREMENT" ? key[0] : nil
    }

    /// MariaDB's column types (`COLUMN_TYPE`, as `information_schema` writes it): integers
    /// `Int64` (`tinyint(1)` and `bit(1)`: `Bool`; `bigint unsigned` and `bit(64)`, which
    /// may exceed `Int64.max`: `Decimal`), `float`/`double` `Double`, `decimal` `Decimal`,
    /// dates and times of day with a date `Date`, bytes `Data`, `uuid` `UUID`, and
    /// everything else (text, `time`, `enum`, `set`, `json`) `String`.
    func swiftType(forDeclaredType declaredType: String) -> (name: String, needsFoundation: Bool) {
        let type = declaredType.lowercased()
        let base = String(type.prefix { $0.isLetter })
        let unsigned = type.contains("unsigned")
        switch base {
        case "tinyint" where type.hasPrefix("tinyint(1)"): return ("Bool", false)
        case "bit" where type == "bit(1)": return ("Bool", false)
        case "bit" where type == "bit(64)": return ("Decimal", true)
        case "bigint" where unsigned: return ("Decimal", true)
        case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "bit", "year": return ("Int64", false)
        case "float", "double", "real": return ("Double", false)
        case "decimal", "numeric", "dec", "fixed": return ("Decimal", true)
        case "date", "datetime", "timestamp": return ("Date", true)
        case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob": return ("Data", true)
        case "uuid": return ("UUID", true)
        default: return ("String", false)
        }
    }
}

extension SQLLexicon {
    /// MariaDB as SwiftDAL's sessions read SQL: `ANSI_QUOTES` (`"…"` a name), `` `…` ``
    /// names, backslash escapes in strings, `-- ` (white space or a control character,
    /// `DEL` included, after the dashes) and `#` comments, `/* */` not nested, `/*! … */`
    /// and `/*M! … */` executed (each read as one region of self-contained code; a
    /// versioned one, which an older server skips, must end alike both ways).
    static let mariadb = SQLLexicon(mariadbRules(ansiQuotes: true, backslashEscapes: true))
    /// A session whose `sql_mode` lost `ANSI_QUOTES`: `"…"` is a string.
    static let mariadbWithoutANSIQuotes = SQLLexicon(mariadbRules(ansiQuotes: false, backslashEscapes: true))
    /// A session that set `NO_BACKSLASH_ESCAPES`.
    static let mariadbWithoutBackslashEscapes = SQLLexicon(mariadbRules(ansiQuotes: true, backslashEscapes: false))

    private static func mariadbRules(ansiQuotes: Bool, backslashEscapes: Bool) -> Rules {
        var rules = Rules()
        rules.backslashEscapesInEveryString = backslashEscapes
        rules.doubleQuotedNames = ansiQuotes
        rules.backtickNames = true
        rules.lineCommentNeedsSpace = true
        rules.hashComments = true
        rules.executableComments = true
        return rules
    }
}
