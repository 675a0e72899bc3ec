/// The database engine behind a connection: its name and the SQL it speaks.
///
/// Each engine's module declares its own value (`sqlite` in `SwiftDALSQLite`, `postgres` in
/// `SwiftDALPostgres`, `mariadb` in `SwiftDALMariaDB`), so a new engine adds a value
/// without breaking a `switch` over the ones a service knows, which ends in `default:`.
/// Two values are equal when their names are. For example:
///
/// ```swift
/// if db.engine == .sqlite { … }
/// switch db.engine {
/// case .sqlite: …
/// default: …
/// }
/// ```
public struct DatabaseEngine: Sendable, Hashable, CustomStringConvertible {
    /// The engine's name, as configuration and reports spell it: `"sqlite"`, `"postgres"`.
    public let rawValue: String
    /// The SQL the layers above write this engine's way.
    @usableFromInline
    package let dialect: any EngineDialect

    /// An engine named `rawValue` that speaks `dialect` (an engine's module declares its
    /// value once, as a static member, and the rest of the code uses that).
    package init(rawValue: String, dialect: any EngineDialect) {
        self.rawValue = rawValue
        self.dialect = dialect
    }

    /// The engine's name: `"sqlite"`, `"postgres"`.
    public var description: String { rawValue }

    /// Whether two values name the same engine.
    ///
    /// For example, `db.engine == .sqlite`.
    public static func == (lhs: DatabaseEngine, rhs: DatabaseEngine) -> Bool { lhs.rawValue == rhs.rawValue }

    /// Hashes the engine's name (equal engines hash alike).
    ///
    /// For example, `Set([DatabaseEngine.sqlite, db.engine]).count`.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

/// How isolated a transaction is from concurrent ones, on engines that offer a choice
/// (PostgreSQL). SQLite transactions are always serializable, and ignore it.
///
/// For example, `try db.inTransaction(.immediate, isolation: .serializable) { … }`.
public enum IsolationLevel: String, Sendable, Hashable {
    /// Each statement sees what was committed before it started (PostgreSQL's default).
    case readCommitted = "READ COMMITTED"
    /// Every statement sees the snapshot taken at the transaction's first statement.
    case repeatableRead = "REPEATABLE READ"
    /// As if transactions ran one after another; a conflict fails with a serialization
    /// failure that the caller retries (`error.isRetryable`).
    case serializable = "SERIALIZABLE"
}

/// A connection to an engine, as the ``Database`` wrapping it sees it: SQLite's
/// (`SQLiteConnection`, in `SwiftDALSQLite`), PostgreSQL's (`SwiftDALPostgres`),
/// MariaDB's (`SwiftDALMariaDB`). Everything above the connection layer (``Database``,
/// `BaseDAL`) stays the same for every engine. Adding an engine: see `CONTRIBUTING.md`.
@usableFromInline
package protocol EngineConnection: AnyObject {
    /// Which engine this is.
    var engine: DatabaseEngine { get }
    /// Whether the engine's statements tell the observer of each execution themselves
    /// (SQLite's, as they step and reset); otherwise ``Database`` reports around each call
    /// and ``runBatch(count:_:row:ended:)``'s `ended`.
    var reportsItsStatements: Bool { get }
    /// Whether ``copyRows(into:columns:blobColumns:count:_:)`` has a bulk statement to run
    /// (PostgreSQL's `COPY`); otherwise `bulkInsert` inserts the rows as a batch.
    var hasBulkPath: Bool { get }
    /// Whether ``stream(_:fetchSize:_:)`` needs an open transaction (a server cursor's),
    /// ``Database`` then opening a read-only one around a stream started outside any.
    var streamsInATransaction: Bool { get }
    /// Runs one statement (placeholders `?`, `?NNN`, `:name`, `@name`), calling `body`
    /// with each row it returns; returns the number of rows it changed.
    func run(_ query: SQL, _ body: (RowView) throws -> Void) throws -> Int
    /// Runs `count` statements, the one at each position made by `query` (ahead of running
    /// it, when the engine pipelines or sends a bulk execution), one after the other,
    /// calling `row` with each row they return and the statement's position; returns the
    /// rows they changed (or returned) in all. Inside a transaction an engine may pipeline
    /// them (send them without waiting for each one's result), or send a run of them with
    /// one text as one bulk execution (MariaDB's). The first engine error
    /// thrown carries the failing statement's position (``DatabaseError/batchIndex``), unless
    /// a bulk execution failed as a whole (a deadlock, a lock wait timeout); after it
    /// nothing of the batch has run. `ended`, when given, is told of each statement that was
    /// sent (a bulk execution once), as it ends.
    func runBatch(
        count: Int, _ query: (Int) throws -> SQL, row: (Int, RowView) throws -> Void, ended: BatchStatementEnded?
    ) throws -> Int
    /// Loads `count` rows into `table` (quoted) with one bulk statement (PostgreSQL: `COPY
    /// … FROM STDIN`), `columns` (unquoted names) each row's, `row(index, &values)` filling
    /// a row's values in that order; returns the rows loaded, or `nil`, before sending
    /// anything, when the bulk statement would not do what `INSERT`s would for this table
    /// and these columns (`blobColumns`: the positions where some row holds bytes). Runs
    /// inside the open transaction. An engine error names the failing row
    /// (``DatabaseError/batchIndex``) when the engine tells it.
    func copyRows(
        into table: String, columns: [String], blobColumns: Set<Int>, count: Int,
        _ row: (Int, inout [DatabaseValue]) throws -> Void
    ) throws -> Int?
    /// Runs a query inside the open transaction, reading its rows `fetchSize` at a time
    /// (never the whole result at once) and calling `body` with each; returns the number
    /// of rows read. A throw from `body` stops the query.
    func stream(_ query: SQL, fetchSize: Int, _ body: (RowView) throws -> Void) throws -> Int
    /// Runs a script of several statements, without arguments.
    func executeScript(_ script: String) throws
    /// Whether a transaction is open.
    var isInTransaction: Bool { get }
    /// Whether the connection can break or be ended by its server (a server engine's): when
    /// `false` (SQLite's), ``isBroken`` and ``wasClosedWhileIdle()`` are never asked.
    var mayBreak: Bool { get }
    /// Whether the connection failed in a way that makes it unusable (dropped by pools).
    var isBroken: Bool { get }
    /// Whether the server ended the session while the connection sat idle in its pool (a
    /// restart, an administrator's `pg_terminate_backend`): looked at, without waiting,
    /// before the connection is lent, so that a call never sends its statement into a
    /// session that is already gone (whose outcome it could then not know).
    func wasClosedWhileIdle() -> Bool
    /// How many statements have completed on this connection (a pool tells from it whether
    /// a failed access had already received rows).
    var completedStatements: Int { get }
    /// How many results this connection has read in binary (PostgreSQL's binary format;
    /// 0 for an engine without one): tells the tests when a statement's results switch.
    var binaryResults: Int { get }
    /// The statement that opens a transaction of `kind` at `isolation` (`nil`: the
    /// engine's choice for that kind), read-only when `readOnly`.
    func beginStatement(_ kind: TransactionKind, isolation: IsolationLevel?, readOnly: Bool) -> String
    /// The columns of a table or view, in order; throws `schemaMismatch` when missing.
    func columns(in table: String) throws -> [ColumnInfo]
    /// The kind of a table or view; throws `schemaMismatch` when missing.
    func tableKind(of table: String) throws -> TableKind
    /// The column of `table` that is its rowid under another name (SQLite's `INTEGER
    /// PRIMARY KEY`), if one is: `nil` for engines without rowids (the default).
    func rowIDAlias(in table: String) throws -> String?
    /// Whether a table or view named `name` exists.
    func tableExists(_ name: String) throws -> Bool
    /// The number of prepared statements the connection keeps.
    var cachedStatementCount: Int { get }
    /// Forgets the prepared statements (after a schema change).
    func clearStatementCache() throws
    /// Asks the server to stop the statement running now (callable from any thread; never
    /// blocks: the request is sent from a thread of its own).
    func cancelRunningStatement()
    /// How long a statement asked to stop may take to end before its connection is
    /// abandoned (``abandon()``); `nil` when a stop is immediate (SQLite's interrupt).
    var interruptGracePeriod: Duration? { get }
    /// Shuts the connection's socket down, so that a statement waiting for a server that
    /// does not answer fails at once; the connection is broken afterwards. Callable from
    /// any thread while a call holds the connection; never blocks.
    func abandon()
    /// Forgets a cancel request once the call it was made for has ended (the connection
    /// goes back to its pool): until then, statements about to be sent fail at once. Waits
    /// (at most the grace period) for a request still on its way, so that it cannot stop
    /// the connection's next statement; a connection whose request never completes is
    /// broken afterwards.
    func clearCancelRequest()
    /// Called as the access holding the connection ends, before another may begin, when
    /// the engine asked for it during the access (`ConnectionAccess.endsWithCleanup`):
    /// SQLite resets the statements of cursors left open, so that none pins a snapshot or
    /// a lock. (The flag is this module's: an engine of another module that needs it will
    /// need a `package` way to set it; PostgreSQL's and MariaDB's streams end with their call.)
    func accessEnding()
    /// The first statement that committed the connection's transaction on its own since
    /// the transaction began (MariaDB's DDL, `LOCK TABLES`); cleared by the call. Asked as a
    /// transaction of ``Database`` ends (its `COMMIT` or `ROLLBACK` sent), so that a failed
    /// one is never reported as rolled back.
    func takeImplicitCommit() -> String?
    /// Whether a statement may commit the connection's transaction on its own (MariaDB);
    /// read once, so that other engines never ask ``takeImplicitCommit()``.
    var mayCommitImplicitly: Bool { get }
    /// Does not note statements that commit the transaction on their own while `tolerate`
    /// is true (a migration step's DDL, which its migrator reports itself).
    func tolerateImplicitCommits(_ tolerate: Bool)
    /// The plan the engine would use for `sql`, whatever the parameters' values, one line
    /// per node, as the engine prints it.
    func queryPlan(of sql: String) throws -> [String]
    /// Closes the connection.
    func close()
    /// Before a connection its user opened directly closes (``close()`` follows): throws
    /// when what it made is still open (SQLite: ``DALError/Code/statementsStillOpen``, and
    /// the connection stays open and usable), or closes it. By default nothing refuses.
    func closeRefusingOpenStatements() throws
}

extension EngineConnection {
    package func closeRefusingOpenStatements() throws {}
    package func rowIDAlias(in table: String) throws -> String? { nil }
    /// SQLite and PostgreSQL commit a transaction only at its `COMMIT`.
    @usableFromInline package func takeImplicitCommit() -> String? { nil }
    @usableFromInline package var mayCommitImplicitly: Bool { false }
    @usableFromInline package func tolerateImplicitCommits(_ tolerate: Bool) {}
}

/// Told of each statement of a batch (``EngineConnection/runBatch(count:_:ended:)``) as it
/// ends: its SQL as the caller wrote it (the text `query` made, not the text an engine
/// sends, so that the same statement reads the same alone and in a batch), when it was
/// sent, the rows it changed, and its error.
@usableFromInline
package typealias BatchStatementEnded = (
    _ sql: String, _ sent: MonotonicTime, _ rowCount: Int, _ error: (any Error)?
) -> Void

/// The rows of one result of an engine connection, read by ``RowView``: all of them (a
/// PostgreSQL result), or only the current one (SQLite's statement and MariaDB's result,
/// read in place). `row` is the number a ``RowView`` was made with: a row's index in the
/// result, or, for rows read in place, the token of the row that was current then. A view
/// of a row that is no longer current throws ``DALError/Code/accessEnded`` (SQLite), or
/// finds `.other` in the typed reads and ``DALError/Code/accessEnded`` in
/// ``value(row:column:)`` (MariaDB).
@usableFromInline
package protocol EngineRows: AnyObject {
    /// The result's columns (built once per result).
    var layout: ColumnLayout { get }
    /// The number of rows the result holds (0 when not known: a cursor's).
    var rowCount: Int { get }
    /// The value of `column` (0-based) in row `row` (its number in the result), as SQLite's
    /// storage classes.
    func value(row: Int, column: Int) throws -> DatabaseValue
    /// The value when it reads as an INTEGER, `.null`, or `.other` (for ``value(row:column:)``).
    func integerColumn(row: Int, column: Int) throws -> TypedColumn<Int64>
    /// The value when it reads as a REAL, `.null`, or `.other`.
    func realColumn(row: Int, column: Int) throws -> TypedColumn<Double>
    /// The value when it reads as TEXT, `.null`, or `.other`.
    func textColumn(row: Int, column: Int) throws -> TypedColumn<String>
    /// Throws when row `row` can no longer be read (a view kept past its row); by default
    /// never.
    func checkRow(_ row: Int) throws
    /// The 0-based index of the column `name` (exact match first, then ASCII
    /// case-insensitive), or `nil`; by default the layout's.
    func columnIndex(row: Int, named name: String) throws -> Int?
}

extension EngineRows {
    package func checkRow(_ row: Int) throws {}

    package func columnIndex(row: Int, named name: String) throws -> Int? {
        try checkRow(row)
        return layout.index(of: name)
    }
}

/// A statement an engine steps in the caller's frame (SQLite's): ``Database``'s generic
/// reads (`fetchAll`, `fetchFirst`, `forEachRow`) step it themselves, inlined into the
/// caller and specialized for its row mapping, instead of handing a closure to
/// ``EngineConnection/run(_:_:)``.
@usableFromInline
package protocol SteppedStatement: AnyObject {
    /// The box ``RowView``s of this statement's rows read through (made once per statement).
    var result: EngineResult { get }
    /// Steps to the next row: its token (for ``RowView/init(result:row:)``), or `nil` once
    /// there are no more rows. `query` is the statement's query (for its errors).
    func step(_ query: SQL) throws -> Int?
    /// Resets the statement after its last row was read (clears its bindings' use).
    func finish() throws
    /// Resets the statement after `error` stopped its reading.
    func finish(after error: any Error)
}

/// An engine connection whose statements ``Database`` steps in the caller's frame.
///
/// ``Database`` then runs none of its reads through ``EngineConnection/run(_:_:)``: the
/// engine's statements report themselves to the observer (``EngineConnection/reportsItsStatements``
/// is `true`), and the engine counts the rows changed (``changes``).
@usableFromInline
package protocol SteppingConnection: EngineConnection {
    /// The statement for `query`, bound and ready to step; the caller ends it with
    /// ``SteppedStatement/finish()`` or ``SteppedStatement/finish(after:)``.
    func start(_ query: SQL) throws -> any SteppedStatement
    /// The rows changed by the last statement that changed rows.
    var changes: Int { get throws }
    // The reads that are not generic are served by the engine itself, in one call (one
    // protocol call instead of one per step: callgrind, W5 and W6).
    /// Runs `query` to its end; returns the rows it changed.
    func execute(_ query: SQL) throws -> Int
    /// The first column of `query`'s first row, or `nil` when there is no row.
    func firstValue(_ query: SQL) throws -> DatabaseValue?
    /// The first column of every row of `query`.
    func firstColumn(_ query: SQL) throws -> [DatabaseValue]
    /// Every row of `query`, copied.
    func fetchRows(_ query: SQL) throws -> [Row]
    /// The first row of `query`, copied, or `nil`.
    func fetchFirstRow(_ query: SQL) throws -> Row?
    /// The names of the columns `sql`'s statement returns (for an error's text).
    func columnNames(of sql: String) throws -> [String]
}
