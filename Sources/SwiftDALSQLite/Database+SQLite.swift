internal import CSwiftDALSQLite
import Foundation
public import SwiftDALConnection

/// What `sqlite3_last_insert_rowid` is set to before an insert: still there afterwards
/// means that the insert produced no rowid (a rowid of `Int64.min` is never assigned).
let noRowIDSentinel = Int64.min

// SQLite's own part of `Database`: opening a file, and what only SQLite has (rowids,
// prepared statements you own, cursors over a stepped statement, backup, checkpoints).
// On another engine each of these throws `unsupportedOperation`.

extension Database {
    /// The SQLite connection, when this is one.
    var sqlite: SQLiteConnection? { connection as? SQLiteConnection }

    /// Calls `body` with the SQLite connection, without retaining it, or returns `nil` on a
    /// server engine (the per-call path of ``insert(_:)``: a dynamic cast and a retain cost
    /// ~60 instructions a row, callgrind, W1).
    @inline(__always)
    func withSQLite<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T? {
        guard ObjectIdentifier(type(of: connection)) == ObjectIdentifier(SQLiteConnection.self) else { return nil }
        return try Unmanaged.passUnretained(unsafeDowncast(connection, to: SQLiteConnection.self))
            ._withUnsafeGuaranteedRef(body)
    }

    /// Opens (creating if missing, unless `mode` is `.readOnly`) the database at `path`.
    /// The directory must exist.
    ///
    /// For example, `let db = try Database(path: "/tmp/app.sqlite", mode: .readWrite)`.
    public convenience init(path: String, mode: Mode = .readWrite, configuration: Configuration = Configuration())
        throws
    {
        try self.init(path: path, isMemory: false, mode: mode, configuration: configuration)
    }

    /// Opens a private, empty in-memory database.
    ///
    /// For example, `let db = try Database.inMemory()`.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> Database {
        try Database(path: ":memory:", isMemory: true, mode: .readWrite, configuration: configuration)
    }

    /// Opens an in-memory copy of the database file at `path` (read through the online
    /// backup API): changes never reach the file. Handy for tests over fixtures.
    ///
    /// For example, `let db = try Database.inMemoryCopy(of: "Fixtures/sample.sqlite")`.
    public static func inMemoryCopy(of path: String, configuration: Configuration = Configuration()) throws -> Database
    {
        let source = try Database(path: path, mode: .readOnly, configuration: configuration)
        let copy = try Database.inMemory(configuration: configuration)
        try source.backup(to: copy)
        try source.close()
        return copy
    }

    /// Opens a SQLite connection and applies the configuration; `owned`: by a queue or
    /// pool, which lends it to one thread per access.
    convenience init(path: String, isMemory: Bool, mode: Mode, configuration: Configuration, owned: Bool = false)
        throws
    {
        let access = ConnectionAccess(
            path: path, observation: StatementObservation.make(configuration, engine: .sqlite, database: path))
        let connection = try SQLiteConnection(
            path: path, isMemory: isMemory, mode: mode, configuration: configuration, access: access)
        self.init(
            connection: connection, access: access, path: path, isReadOnly: mode == .readOnly,
            configuration: configuration)
        do {
            try setUp(isMemory: isMemory)
        } catch {
            access.markClosed()
            connection.close()
            throw error
        }
        if owned { access.becomeOwned() }
    }

    private func setUp(isMemory: Bool) throws {
        // Reading the schema first turns "not a database" and corruption into an error
        // at open, not at the first query.
        _ = try fetchScalar(Int.self, "PRAGMA schema_version")
        try execute(sql: "PRAGMA foreign_keys = \(configuration.foreignKeysEnabled ? "ON" : "OFF")")
        if !isMemory && !isReadOnly {
            // Changing the journal mode takes locks without calling the busy handler: when
            // several processes open a new file at once, it is retried until the busy
            // timeout, like any other statement.
            let mode = try retryingWhileBusy {
                try fetchScalar(String.self, SQL(sql: "PRAGMA journal_mode = \(configuration.journalMode.rawValue)"))
            }
            guard mode?.uppercased() == configuration.journalMode.rawValue else {
                throw DALError(
                    .invalidValue,
                    "journal mode \(configuration.journalMode.rawValue) could not be set (SQLite kept \(mode ?? "none"))"
                )
            }
        }
        try execute(sql: "PRAGMA synchronous = \(configuration.synchronous.rawValue)")
        if let limit = configuration.journalSizeLimit, !isReadOnly {
            _ = try fetchScalar(Int.self, SQL(sql: "PRAGMA journal_size_limit = \(max(-1, limit))"))
        }
        for pragma in configuration.pragmas {
            try forEachRow(SQL(sql: pragma.sql())) { _ in }
        }
        try configuration.prepareDatabase?(self)
    }

    /// Runs `body` again while it fails with `SQLITE_BUSY` or `SQLITE_LOCKED`, until the
    /// busy timeout has passed: for the few statements SQLite runs without its busy
    /// handler (changing the journal mode).
    func retryingWhileBusy<T>(_ body: () throws -> T) throws -> T {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: configuration.busyTimeout)
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.primaryCode == .busy || error.primaryCode == .locked {
                guard clock.now < deadline else { throw error }
                Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }

    /// The SQLite connection, after the access check; throws
    /// ``DALError/Code/unsupportedOperation`` (naming `what` and `instead`) on another engine.
    func sqliteConnection(for what: String, instead: String? = nil, sql: String? = nil) throws -> SQLiteConnection {
        try access.check()
        guard let sqlite else { throw notSQLite(what, instead: instead, sql: sql) }
        return sqlite
    }

    /// The error for `what`, SQLite's, asked of another engine's connection.
    private func notSQLite(_ what: String, instead: String?, sql: String?) -> DALError {
        DALError(
            .unsupportedOperation,
            "\(what) is SQLite's; the connection is \(connection.engine)" + (instead.map { ": \($0)" } ?? ""), sql: sql)
    }

    /// Executes an `INSERT` of one row and returns the new row's rowid.
    ///
    /// Throws ``DALError/Code/noRowID`` when the statement produced no rowid: an insert
    /// into a `WITHOUT ROWID` table or a view, one that inserted nothing (`OR IGNORE`),
    /// or one that inserted several rows. (`sqlite3_last_insert_rowid` would then still
    /// hold an earlier insert's rowid, maybe of another table.) The statement has run
    /// when this error is thrown: inside a transaction, roll it back if that matters.
    ///
    /// For example, `let id = try db.insert("INSERT INTO users(name) VALUES (\(name))")`.
    @discardableResult
    public func insert(_ query: SQL) throws -> Int64 {
        guard let rowID = try withSQLite({ try $0.insert(query) }) else {
            try access.check()
            throw notSQLite(
                "a rowid", instead: "add RETURNING to the INSERT and read it with fetchScalar", sql: query.sql)
        }
        return rowID
    }

    /// The rowid of the last row inserted on this connection (`sqlite3_last_insert_rowid`),
    /// as a full 64-bit value. It is not reset by statements that insert nothing, and a
    /// `WITHOUT ROWID` table has no rowid: prefer ``insert(_:)``'s result, or `RETURNING`.
    ///
    /// For example, `try db.execute("INSERT …"); let id = try db.lastInsertedRowID`.
    public var lastInsertedRowID: Int64 {
        get throws {
            let sqlite = try sqliteConnection(for: "a rowid", instead: "use INSERT … RETURNING")
            return sqlite3_last_insert_rowid(try sqlite.openHandle())
        }
    }

    /// Prepares a statement that you own (not cached): it is finalized when released.
    ///
    /// For example, `let statement = try db.makeStatement(sql: "SELECT * FROM t WHERE id = ?")`.
    public func makeStatement(sql: String) throws -> Statement {
        let handle = try sqliteConnection(for: "a statement you prepare yourself", sql: sql).openHandle()
        return try Statement.prepare(database: handle, sql: sql, persistent: false, access: access, epoch: access.epoch)
    }

    /// A cursor that streams the rows of `query`. See ``RowCursor``.
    ///
    /// For example, `let cursor = try db.makeCursor("SELECT * FROM events")`.
    public func makeCursor(_ query: SQL) throws -> RowCursor {
        let sqlite = try sqliteConnection(for: "a cursor", instead: "use forEachRow", sql: query.sql)
        let statement = try sqlite.cachedStatement(query.sql)
        guard statement.isReadOnly else {
            // A write's changes are made at its first step and committed (in autocommit) when
            // the statement halts, which for an abandoned cursor is a reset whose failure
            // could not be reported: a cursor only ever reads.
            throw DALError(
                .invalidSQL,
                "a cursor streams the rows of a query; run a statement that writes (even with RETURNING) "
                    + "with execute, fetchAll or forEachRow", sql: query.sql)
        }
        return try RowCursor(database: self, connection: sqlite, statement: statement, arguments: query.arguments)
    }
}
