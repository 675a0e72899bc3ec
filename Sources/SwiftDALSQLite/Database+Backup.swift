internal import CSwiftDALSQLite
public import SwiftDALConnection

extension Database {
    /// Copies this whole database into `destination` with SQLite's online backup API,
    /// replacing its content. Other connections may keep reading and writing meanwhile.
    ///
    /// For example, `try db.backup(to: Database.inMemory())`.
    public func backup(to destination: Database) throws {
        let source = try sqliteConnection(for: "a backup").openHandle()
        let targetConnection = try destination.sqliteConnection(for: "a backup")
        let target = try targetConnection.openHandle()
        guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw SQLiteError(connection: target, code: sqlite3_errcode(target), sql: nil)
        }
        var code = SQLITE_OK
        var retries = 0
        repeat {
            code = sqlite3_backup_step(backup, -1)
            if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                retries += 1
                sqlite3_sleep(5)
            }
        } while (code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED) && retries < 1000
        let finish = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            throw SQLiteError(connection: target, code: code, sql: nil)
        }
        guard finish == SQLITE_OK else {
            throw SQLiteError(connection: target, code: finish, sql: nil)
        }
        targetConnection.clearStatementCacheUnchecked()
    }

    /// Copies this whole database into a file at `path` (created or replaced), using the
    /// online backup API. The copy is one self-contained file in rollback-journal mode
    /// (`DELETE`), whatever the source's mode: it opens read-only anywhere, on read-only
    /// media too (a file in WAL mode needs its `-shm` beside it); a ``DatabasePool``
    /// opening it sets WAL again.
    ///
    /// For example, `try db.backup(toPath: "/var/backups/app-\(day).sqlite")`.
    public func backup(toPath path: String) throws {
        let destination = try Database(path: path, mode: .readWrite, configuration: Configuration())
        try backup(to: destination)
        // The backup copies the source's header, WAL mode included (a destination opened
        // in DELETE mode still ends up marked WAL): leaving WAL rewrites it.
        _ = try destination.fetchScalar(String.self, "PRAGMA journal_mode = DELETE")
        try destination.close()
    }
}
