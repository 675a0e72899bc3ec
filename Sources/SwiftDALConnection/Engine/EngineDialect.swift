/// The SQL an engine needs written its own way, for the layers above the connection
/// (issue 25's seam: an engine is a module that brings its connection and its dialect,
/// and nothing above branches on which engine it is). Each engine provides one:
/// ``SQLiteEngineDialect`` here, `PostgresEngineDialect` in `SwiftDALPostgres`; a
/// connection's is ``Database/dialect``.
///
/// Today it holds what the migrator needs (the lock that serializes instances, the
/// history table, how a step runs); the statements BaseDAL writes move here next.
@usableFromInline
package protocol EngineDialect: Sendable {
    /// Takes the lock that lets one service instance migrate while the others wait (held
    /// by the session of `db`; `key` names it). An engine whose step transactions already
    /// serialize writers takes none.
    func lockMigrations(_ db: Database, key: Int64) throws
    /// Releases ``lockMigrations(_:key:)``'s lock. When it throws, the caller closes the
    /// connection instead of lending it again (the server releases a session's lock as the
    /// session ends).
    func unlockMigrations(_ db: Database, key: Int64) throws
    /// The statement that creates the migration history table `quotedTable` if it is
    /// missing: `id` (the step's name, the key) and `applied_at`, and whatever keeps the
    /// order the steps were applied in (see ``migrationHistoryOrder``).
    func createMigrationHistory(_ quotedTable: String) -> String
    /// The expression the history is ordered by to list steps in the order they were
    /// applied.
    var migrationHistoryOrder: String { get }
    /// Runs a migration step in a transaction of its own: `body` (the step, then its
    /// record in the history), with foreign keys relaxed as the engine can when
    /// `disablesForeignKeys`, and checked before the commit where the engine does not
    /// check them itself. Rolls back and throws when anything fails.
    func runMigrationStep(_ db: Database, disablesForeignKeys: Bool, _ body: () throws -> Void) throws
    /// Whether a table is changed by rebuilding it (create a copy, move the rows, drop,
    /// rename: SQLite's way around its `ALTER TABLE`) rather than altered in place.
    var rebuildsTables: Bool { get }
    /// The names a query plan (``Database/queryPlan(of:)``'s lines, as the engine prints
    /// them) reads whole: the full scans a query-plan guard reports.
    func scannedNames(inPlan plan: [String]) -> [String]
    /// Whether ``scannedNames(inPlan:)`` may give a statement's alias for a table rather
    /// than the table's name (SQLite prints the alias): a name that is no table's still
    /// counts as a scan then.
    var planNamesAliases: Bool { get }
}

/// Reading the text of query plans, for the engines' dialects.
package enum QueryPlanText {
    /// The first name in `text`: a double-quoted identifier (its `""` read as `"`), or a
    /// word up to a space.
    package static func firstName(in text: Substring) -> String? {
        if text.hasPrefix("\"") {
            var name = ""
            var index = text.index(after: text.startIndex)
            while index < text.endIndex {
                let character = text[index]
                index = text.index(after: index)
                if character == "\"" {
                    guard index < text.endIndex, text[index] == "\"" else { return name }
                    index = text.index(after: index)
                }
                name.append(character)
            }
            return nil
        }
        let word = text.prefix(while: { $0 != " " })
        return word.isEmpty ? nil : String(word)
    }
}

extension Database {
    /// The SQL dialect of this connection's engine (see ``EngineDialect``).
    package var dialect: any EngineDialect {
        engineConnection?.dialect ?? SQLiteEngineDialect()
    }
}
