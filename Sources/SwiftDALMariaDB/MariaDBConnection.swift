internal import CSwiftDALMariaDB
import Foundation
import SwiftDALConnection
import Synchronization

/// One Connector/C connection (`MYSQL*`) to MariaDB, used by one thread at a time (a
/// ``MariaDBPool`` lends it inside a ``SwiftDAL/Database``). Statements run as server-side
/// prepared statements (`mysql_stmt_*`), cached per connection by their text, values
/// always bound; results are read in the binary protocol (see ``MariaDBColumnKind`` for
/// the type mapping). Transaction control and `SET` statements without arguments go
/// through the text protocol.
///
/// The session, set at connection:
/// - `SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin`: UTF-8 with 4-byte characters both ways;
///   comparisons between values that carry no collation of their own (parameters,
///   literals) are binary-exact, trailing spaces included (`utf8mb4_bin` is PAD SPACE:
///   `'a' = 'a '` holds there). A column compares by its own collation: `=` is
///   binary-exact only on `utf8mb4_nopad_bin` (or binary) columns; `utf8mb4_bin` ignores
///   trailing spaces, MariaDB's default `utf8mb4_general_ci` also case. Create the
///   database (or tables) with `utf8mb4_nopad_bin` to compare as SQLite and PostgreSQL
///   (`"C"`) do. (MariaDB-only: MySQL 8 has no `nopad` collations.)
/// - `time_zone = '+00:00'`: `TIMESTAMP`s read and written in UTC, `NOW()` in UTC.
/// - `sql_mode` = ``sessionSQLMode``: strict (a value that does not fit fails instead of
///   being truncated or zeroed), `ANSI_QUOTES` (`"name"` is an identifier, as SwiftDAL
///   quotes them; strings are `'…'` only), `PIPES_AS_CONCAT`, no zero dates,
///   `NO_AUTO_VALUE_ON_ZERO` (a key of 0 given by the caller is stored as 0, as SQLite and
///   PostgreSQL store it; only `NULL`, or leaving the column out, makes a new key).
///   `NO_BACKSLASH_ESCAPES` is *not* set: a backslash escapes inside `'…'`, which the
///   lexicon must assume (values are always bound, never pasted).
/// - `autocommit = 1`: a statement outside a transaction commits on its own.
/// - `net_write_timeout = 600`: a result is read off the wire row by row, so a row closure
///   that takes long (a call to another service per row) keeps the server waiting to send
///   the rest; it gives up on the session after this long without progress (its default,
///   60 s, would end the session under a slow closure; Connector/J raises it the same way
///   while streaming).
final class MariaDBConnection: EngineConnection {
    private var mysql: UnsafeMutablePointer<MYSQL>?
    private let endpoint: MariaDBEndpoint
    private let configuration: MariaDBConfiguration
    /// What the connection is called in errors (socket or host, database; no password).
    let name: String
    /// The server's id of this session (`CONNECTION_ID()`), for `KILL QUERY`.
    let connectionID: UInt
    private var statements: [String: PreparedStatement] = [:]
    /// The statement used last and its SQL: a call repeating it (a lookup in a loop)
    /// finds it without hashing its text.
    private var lastStatement: (sql: String, statement: PreparedStatement)?
    /// The statement whose rows are being read off the wire now (by a caller up the
    /// stack): the connection cannot send anything else until they are all read.
    private var readingOffTheWire: PreparedStatement?
    private var failed = false
    /// The error on which the server rolled the open transaction back on its own (a
    /// deadlock, 1213), until a `ROLLBACK` ends it on the client's side too. MariaDB then
    /// runs every later statement outside that transaction and answers the `COMMIT` with
    /// success, so they alone would be written: every statement but `ROLLBACK` (or a new
    /// transaction's start) is refused with this error (``checkMaySend(_:role:)``),
    /// `COMMIT` included.
    private var transactionEndedBy: MariaDBError? {
        didSet { markTransaction() }
    }
    /// An error after which the server may have rolled the transaction back (a lock wait
    /// timeout, 1205, does so under `innodb_rollback_on_timeout`, a write conflict, 1020,
    /// under `innodb_snapshot_isolation`; any server error not known to undo only its
    /// statement, ``keepsTheTransaction(_:)``): asked of the server (`@@in_transaction`)
    /// before the next statement is sent.
    private var transactionMayHaveEndedBy: MariaDBError? {
        didSet { markTransaction() }
    }
    /// The statement that committed the open transaction on its own (DDL, `LOCK TABLES`:
    /// the server status said a transaction before it and none after), until the
    /// transaction ends here: ``Database`` then reports a transaction that fails after it
    /// as partly committed, never as rolled back (the statements after it each commit on
    /// their own, as MariaDB runs them).
    private var implicitCommit: String?
    /// Whether ``implicitCommit`` is left unnoted (a migration step's DDL, which the
    /// migrator reports itself).
    private var toleratesImplicitCommits = false
    /// Whether a `LOCK TABLES` ended a transaction: its tables are unlocked as the
    /// transaction ends here (a lock left on a pooled session would hold every later call).
    private var locksTablesTillTransactionEnd = false
    /// Whether the statement `run` sends now is a `START TRANSACTION` or `BEGIN` inside a
    /// transaction (set where transaction control is told apart, read by `run`).
    private var startsANewTransaction = false
    /// Whether either of the two errors above is set: read before every statement, where
    /// testing the optional errors themselves cost ~100 instructions (callgrind, W7 on
    /// MariaDB); kept by their observers.
    private var transactionMarked = false

    private func markTransaction() {
        transactionMarked = transactionEndedBy != nil || transactionMayHaveEndedBy != nil
    }
    /// The connection's socket, for ``abandon()`` and ``wasClosedWhileIdle()``.
    private let socket: Int32
    /// Set by ``abandon()``: the socket is shut down.
    private let abandoned = Atomic<Bool>(false)
    /// Set when the call using the connection was stopped, until its pool takes the
    /// connection back: a statement about to be sent then fails at once; a `ROLLBACK`
    /// still runs, once the `KILL QUERY` has been answered (so that it cannot stop it).
    private let cancelRequested = Atomic<Bool>(false)
    /// The kill requests made for the current call, until they are settled.
    private let killRequests: PendingStopRequests
    /// Ends the session on the server when the connection is given up on mid-statement.
    private let reaper: MariaDBSessionReaper
    /// The session as the reaper finds it on the server (`nil` when the server did not
    /// say which run of it this is: the session is then never killed).
    private let reapable: MariaDBSessionReaper.Session?
    /// Set once the session is handed to ``reaper``.
    private let givenUp = Atomic<Bool>(false)
    /// The buffers every statement's values are bound from, reused.
    private let parameters = MariaDBParameterBinding()
    /// Statements completed for the calls (the connection's own catalog queries aside).
    private(set) var completedStatements = 0
    /// Every result is read through the binary protocol of prepared statements: none switches.
    var binaryResults: Int { 0 }

    /// The server's `net_write_timeout` for every session, in seconds (see the type's documentation).
    static let netWriteTimeout = 600

    /// The `sql_mode` of every session (see the type's documentation).
    static let sessionSQLMode =
        "STRICT_ALL_TABLES,ANSI_QUOTES,PIPES_AS_CONCAT,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,"
        + "NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO"

    static let statementCacheCapacity = 256

    /// A server-side prepared statement, closed when released.
    final class PreparedStatement {
        let handle: UnsafeMutablePointer<MYSQL_STMT>
        let text: MariaDBStatementText
        /// What it does to a transaction (read once, from SwiftDAL's text).
        let role: MariaDBStatementRole
        /// Whether it is transaction or session control (prepared because it had
        /// arguments): without arguments, such a statement goes through the text protocol.
        let isControl: Bool
        /// The binding of its last result, kept while its columns stay the same.
        var resultBinding: MariaDBResultBinding?
        /// Whether its results are read row by row off the wire, as Connector/C reads them
        /// by default (`mysql_stmt_fetch` alone: no copy of the whole result in the
        /// client's memory first). Only for the statements that send one result at most
        /// (`SELECT`, `WITH`, `VALUES`, `TABLE`, and `INSERT`/`UPDATE`/`DELETE`/`REPLACE` with
        /// `RETURNING`): a `CALL`'s further results would not be seen when they are read so.
        let readsOffTheWire: Bool
        /// Why the reading of its rows failed while they were being buffered for another
        /// statement (``MariaDBConnection/bufferUnreadRows()``, which throws it instead of
        /// sending that statement): thrown again by the reading when it next fetches.
        var readFailure: (any Error)?
        /// Whether an execution sent more than one result (a `CALL`'s): Connector/C then
        /// replaces the statement's result binding with an empty one at each execution
        /// without saying so (`bind_result_done` stays set), so it is bound every time.
        var sendsSeveralResults = false
        /// Whether it inserts exactly one row at each execution (``MariaDBStatementText/insertsOneRow``):
        /// the statements a batch runs in bulk.
        lazy var insertsOneRow = text.insertsOneRow
        /// Whether its target table undoes a failed execution entirely (asked of the catalog
        /// once, by the first batch that would run it in bulk): `nil` until then.
        var targetUndoesAFailure: Bool?
        /// The row its results are read from, and the views' handle on it: made with its
        /// first result, used by every execution.
        private(set) var reader: (row: MariaDBFetchedRow, result: EngineResult)? {
            didSet { unretainedReader = reader.map { Unmanaged.passUnretained($0.row) } }
        }
        /// ``reader``'s row, for the reading of every execution without a retain and a
        /// release of the row and its result: ``reader`` holds it for the statement's life
        /// (set once, never cleared).
        private(set) var unretainedReader: Unmanaged<MariaDBFetchedRow>?
        /// A byte copy of the parameters it was last bound with (`mysql_stmt_bind_param`
        /// copies them into the statement): bound again only when they differ, as raw C
        /// binds once (Connector/C then sends the parameters' types once, not at every
        /// execution). The values themselves are read from the buffers at execution.
        private var lastBinds: UnsafeMutableRawPointer?
        private var lastBindBytes = 0

        /// Whether its rows are being read now (by a caller up the stack): running it again
        /// would end that result, so another statement of the same text is prepared.
        var isReading: Bool { reader?.row.isReading ?? false }

        /// Reads the long values of the row being read into its binding (its result is
        /// about to be buffered part way).
        func keepCurrentRowsLongValues() throws { try reader?.row.keepLongValues() }

        /// The row to read a stored result bound by `binding` from, made once.
        func fetchedRow(for binding: MariaDBResultBinding) -> (row: MariaDBFetchedRow, result: EngineResult) {
            if let reader { return reader }
            let row = MariaDBFetchedRow(handle: handle, binding: binding)
            let made = (row: row, result: EngineResult(row))
            reader = made
            return made
        }

        /// Begins reading a result bound by `binding` of `rowCount` rows (0: not known
        /// until read) through ``fetchedRow(for:)``'s row, without handing the row out
        /// (``MariaDBConnection/run(_:_:)`` takes it once, as it reads).
        func beginReading(_ binding: MariaDBResultBinding, rowCount: Int) {
            // The kept row read in place: through `fetchedRow(for:)` the tuple was copied
            // (~36 instructions a statement, callgrind, W7 on MariaDB).
            if let reader = unretainedReader {
                reader._withUnsafeGuaranteedRef { $0.begin(binding, rowCount: rowCount) }
            } else {
                fetchedRow(for: binding).row.begin(binding, rowCount: rowCount)
            }
        }

        init(handle: UnsafeMutablePointer<MYSQL_STMT>, text: MariaDBStatementText, role: MariaDBStatementRole) {
            self.handle = handle
            self.text = text
            self.role = role
            isControl = MariaDBConnection.textProtocolForm(of: text.sql) != nil
            readsOffTheWire = FirstWord.sendingOneResult.contains(FirstWord(text.sql))
        }

        /// Whether `arguments` are bound as given: positional, one per `?`, each in its own
        /// place (then the text's `values(for:)` would return them unchanged). Decided here,
        /// from the text's count read in place: as a method of `text`, the call copied the
        /// text (its string and parameters retained and released) at every execution.
        func bindsInPlace(_ arguments: StatementArguments) -> Bool {
            let count = text.inOrderCount
            return count >= 0 && arguments.positionalCount == count
        }

        /// Whether the statement is bound to exactly `binds` (`count` of them).
        @inline(__always)
        func isBound(to binds: UnsafeMutablePointer<MYSQL_BIND>, count: Int) -> Bool {
            guard let lastBinds, lastBindBytes == count * MemoryLayout<MYSQL_BIND>.stride else { return false }
            return memcmp(lastBinds, binds, lastBindBytes) == 0
        }

        /// Notes that the statement was bound to `binds` (`count` of them).
        func noteBound(to binds: UnsafeMutablePointer<MYSQL_BIND>, count: Int) {
            let bytes = count * MemoryLayout<MYSQL_BIND>.stride
            if bytes > lastBindBytes || lastBinds == nil {
                lastBinds?.deallocate()
                lastBinds = .allocate(byteCount: bytes, alignment: 8)
            }
            lastBinds?.copyMemory(from: binds, byteCount: bytes)
            lastBindBytes = bytes
        }

        /// Forgets the binds noted (a binding failed: the next execution binds again).
        func forgetBound() { lastBindBytes = 0 }

        deinit {
            lastBinds?.deallocate()
            mysql_stmt_close(handle)
        }
    }

    /// Connects to `endpoint` and sets the session up (see the type's documentation).
    init(
        endpoint: MariaDBEndpoint, configuration: MariaDBConfiguration, killSender: StopRequestSender,
        reaper: MariaDBSessionReaper
    ) throws {
        killRequests = PendingStopRequests(sender: killSender)
        self.reaper = reaper
        self.endpoint = endpoint
        self.configuration = configuration
        name = endpoint.name
        // Opening waits on the server before any call's control can stop it: the connect
        // (Connector/C's connect timeout, which also bounds the server's greeting) and the
        // session's setup after it (a watch shuts the socket down) get the connect timeout,
        // or the call's time left if sooner: a synchronous call's limit less its wait in
        // line, or the time an `async` call's control has left (its task's limit cannot be
        // read on this thread, and Connector/C's blocking connect cannot be interrupted
        // once begun).
        func openingLimit() -> Duration {
            let limit = Duration.seconds(endpoint.connectTimeout)
            guard let left = CallLimits.leftForOpening(callTimeout: configuration.callTimeout) else { return limit }
            return min(left, limit)
        }
        // A call stopped meanwhile (its limit, a cancellation) gets its stop's error from
        // the pool (`PoolCore`), whatever the connect's.
        let mysql = try MariaDBConnect.open(
            endpoint, multiStatements: true, connectTimeout: MariaDBEndpoint.seconds(openingLimit()))
        self.mysql = mysql
        let socket = swiftdal_mariadb_socket(mysql)
        self.socket = socket
        connectionID = mysql_thread_id(mysql)
        let limit = openingLimit()
        let watch = SocketWatch(socket: socket, limit: limit)
        reapable = MariaDBSessionReaper.Session(mysql, id: connectionID)
        do {
            try executeScript(
                "SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin, time_zone = '+00:00', sql_mode = '\(Self.sessionSQLMode)', "
                    + "autocommit = 1, net_write_timeout = \(Self.netWriteTimeout)")
            guard watch.finish() else { throw watch.error(otherwise: Self.unfinishedSetup(name, limit)) }
        } catch {
            // The watch first: once it has finished, it cannot shut down a socket number
            // that closing frees for another connection.
            let finished = watch.finish()
            close()
            throw finished ? error : watch.error(otherwise: Self.unfinishedSetup(name, limit))
        }
    }

    private static func unfinishedSetup(_ name: String, _ limit: Duration) -> MariaDBError {
        MariaDBError(
            code: 2013, sqlState: "HY000",
            message: "cannot connect to MariaDB (\(name)): the server did not finish setting up the session within "
                + "\(limit) (the connect timeout, or the call's time limit)")
    }

    deinit {
        close()
    }

    var engine: DatabaseEngine { .mariadb }

    var dialect: any EngineDialect { MariaDBEngineDialect() }

    func close() {
        lastStatement = nil
        statements.removeAll()  // closes them while the connection is open
        if let mysql { mysql_close(mysql) }
        mysql = nil
    }

    private func openConnection() throws -> UnsafeMutablePointer<MYSQL> {
        guard let mysql else { throw DALError(.connectionClosed, "the connection to \(name) is closed") }
        return mysql
    }

    // MARK: State

    var isBroken: Bool { mysql == nil || failed || abandoned.load(ordering: .relaxed) }

    /// A poll of the socket without waiting: an idle session has nothing to read unless
    /// the server closed it (or sent its last error before closing: a `KILL`, a
    /// `wait_timeout`). Never `mysql_ping`, which waits for an answer.
    func wasClosedWhileIdle() -> Bool {
        guard !isBroken else { return true }
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        failed = true
        return true
    }

    /// True too after the server rolled the transaction back on its own, until a `ROLLBACK`
    /// ends it here: the transaction's owner must see it end.
    var isInTransaction: Bool {
        guard let mysql, !failed else { return false }
        if transactionMarked {
            if transactionMayHaveEndedBy != nil, readingOffTheWire == nil, !cancelRequested.load(ordering: .relaxed) {
                askWhetherTheTransactionLives()
                if failed { return false }
            }
            if transactionEndedBy != nil || transactionMayHaveEndedBy != nil { return true }
        }
        return swiftdal_mariadb_server_status(mysql) & swiftdal_mariadb_server_status_in_trans != 0
    }

    // MARK: Stopping

    func cancelRunningStatement() {
        cancelRequested.store(true, ordering: .sequentiallyConsistent)
        // A server that does not say which run it is gets no kill: its statement ends at
        // the grace period, when the connection is given up on.
        guard let reapable else { return }
        killRequests.send { [endpoint] in MariaDBConnect.killQuery(of: reapable, at: endpoint) }
    }

    var interruptGracePeriod: Duration? { configuration.stopGracePeriod }

    /// A session can fail, or be ended by the server.
    var mayBreak: Bool { true }

    /// The session's statements are reported by ``Database`` around each call.
    var reportsItsStatements: Bool { false }

    /// The bulk path: none of its own: `bulkInsert` sends a batch of `INSERT`s.
    var hasBulkPath: Bool { false }

    /// A stream reads through a server cursor, which lives in a transaction.
    var streamsInATransaction: Bool { true }

    /// Nothing to do: a stream's cursor ends with its call.
    func accessEnding() {}

    func abandon() {
        guard !abandoned.exchange(true, ordering: .acquiringAndReleasing), socket >= 0 else { return }
        shutdown(socket, Int32(SHUT_RDWR))
        giveUpOnTheSession()
    }

    /// Hands the session to the pool's reaper, which ends it on the server
    /// (`KILL CONNECTION`): the connection is given up on while its statement may still run
    /// there, holding its transaction's locks (see ``MariaDBSessionReaper``). Never blocks.
    private func giveUpOnTheSession() {
        guard !givenUp.exchange(true, ordering: .acquiringAndReleasing), let reapable else { return }
        reaper.end(reapable)
    }

    func clearCancelRequest() {
        _ = settleKillRequests()
        cancelRequested.store(false, ordering: .sequentiallyConsistent)
    }

    /// Settles the call's kill requests (``PendingStopRequests/settle(waitingAtMost:)``):
    /// whether they did within the grace period. When one is still on its way, the
    /// connection is failed and its session handed to the reaper (its statement may still
    /// run on the server).
    private func settleKillRequests() -> Bool {
        // A connection given up on (its socket shut down when the grace period passed) is
        // never used again: nothing to wait for, and a KILL on its way to a hung server
        // would hold the call another grace period.
        let wait = failed || abandoned.load(ordering: .acquiring) ? .zero : configuration.stopGracePeriod
        guard killRequests.settle(waitingAtMost: wait) else {
            failed = true
            giveUpOnTheSession()
            return false
        }
        return true
    }

    /// Throws when the connection may not send `sql` now: it broke, it was abandoned, or
    /// its call was stopped (only a `ROLLBACK` runs then, once the kill was answered).
    /// (`sql` is read only for an error: the statement's text is not copied on the way.)
    private func checkMaySend(_ sql: @autoclosure () -> String, role: MariaDBStatementRole) throws {
        if failed || abandoned.load(ordering: .acquiring) { throw notSentError(sql()) }
        guard cancelRequested.load(ordering: .sequentiallyConsistent) else {
            return try checkTransactionLives(role, sql())
        }
        guard role == .rollback else {
            throw MariaDBError(
                code: 1317, sqlState: "70100", message: "Query execution was interrupted (the call was stopped)",
                sql: sql())
        }
        guard settleKillRequests() else {
            throw MariaDBError(
                code: 2013, sqlState: "HY000",
                message: "the server did not answer KILL QUERY within \(configuration.stopGracePeriod): the "
                    + "connection is closed, and the server rolls its transaction back as the session ends (the "
                    + "pool ends it with KILL CONNECTION where the server lets it tell the session apart)", sql: sql())
        }
        try checkTransactionLives(role, sql())
    }

    /// Throws when the server rolled the transaction back on its own and `role` is not the
    /// `ROLLBACK` that ends it here (which clears the mark).
    private func checkTransactionLives(_ role: MariaDBStatementRole, _ sql: @autoclosure () -> String) throws {
        guard transactionMarked else { return }
        let sql = sql()
        // A `ROLLBACK` ends it here too; so does a new transaction's start (its implicit
        // commit has nothing to commit: every statement since was refused).
        if role == .rollback || FirstWord(sql) == .start || Self.beginsATransaction(sql) {
            transactionEndedBy = nil
            transactionMayHaveEndedBy = nil
            return
        }
        askWhetherTheTransactionLives()
        if failed { throw notSentError(sql) }
        guard let cause = transactionEndedBy else { return }
        throw MariaDBError(
            code: cause.code, sqlState: cause.sqlState,
            message: cause.message + " (the server rolled the transaction back at that error; every statement but "
                + "ROLLBACK is refused until the transaction ends, and COMMIT would commit nothing)",
            sql: cause.sql)
    }

    /// Whether `sql` is a `BEGIN` that starts a transaction, not the compound statement
    /// `BEGIN NOT ATOMIC … END` (whose statements run in the session's transaction, or one
    /// by one when there is none).
    static func beginsATransaction(_ sql: String) -> Bool {
        let first = FirstWord(sql)
        guard first == .begin else { return false }
        return FirstWord(String(decoding: sql.utf8.dropFirst(first.end), as: UTF8.self)) != .not
    }

    /// After an error that may have ended the transaction (``transactionMayHaveEndedBy``),
    /// asks the server (`@@in_transaction`); marks it ended when it has, or when the
    /// question fails (which only refuses statements).
    private func askWhetherTheTransactionLives() {
        guard let cause = transactionMayHaveEndedBy else { return }
        transactionMayHaveEndedBy = nil
        let open = try? uncounted { () -> Int? in
            var open: Int?
            _ = try executeText("SELECT @@in_transaction") { open = try $0.decode(Int.self, at: 0) }
            return open
        }
        if open != 1 { transactionEndedBy = cause }
    }

    /// Notes an error after which the server may have rolled back the transaction the
    /// session was in (the server status is the last answer's: an error leaves it as it was).
    private func noteTransactionEnd(_ error: MariaDBError) {
        guard !failed, transactionEndedBy == nil, let mysql,
            swiftdal_mariadb_server_status(mysql) & swiftdal_mariadb_server_status_in_trans != 0
        else { return }
        if error.code == 1213 {
            transactionEndedBy = error  // a deadlock: InnoDB rolls the whole transaction back
        } else if error.isFromServer, !Self.keepsTheTransaction(error) {
            // A lock wait timeout (1205) under innodb_rollback_on_timeout, a write conflict
            // under innodb_snapshot_isolation (1020), a full lock table (1206), or an error
            // not known here: the server is asked before the next statement is sent.
            transactionMayHaveEndedBy = error
        }
    }

    /// Whether the server error `error` undoes only the statement that failed, never the
    /// transaction it ran in: the categories of constraints, values, statements that cannot
    /// run, privileges and stopped statements (``MariaDBError/category``), and a few more
    /// numbers of statements that cannot run. Every other error inside a transaction is
    /// asked about (`@@in_transaction`): one round trip on an error path, against reporting
    /// as committed a transaction the server rolled back.
    static func keepsTheTransaction(_ error: MariaDBError) -> Bool {
        switch error.category {
        case .constraint, .invalidValue, .invalidStatement, .permission, .interrupted: true
        // 4033: a bulk execution refused under statement-based binary logging, before it ran.
        default: [1367, 1416, 1109, 1052, 1136, 1241, 1242, 1222, 1327, 1644, 4033].contains(error.code)
        }
    }

    /// The error for a statement refused before it was sent, its connection having broken
    /// (or been abandoned) earlier: it changed nothing, and a `COMMIT` refused so committed
    /// nothing (the server rolls the transaction back as the session ends). So it is never
    /// reported as an unknown outcome.
    private func notSentError(_ sql: String) -> MariaDBError {
        var error = MariaDBError(
            code: 2006, sqlState: "HY000",
            message: "the connection to \(name) is broken (the statement was not sent: nothing of it ran)", sql: sql)
        error.wasSent = false
        return error
    }

    private func brokenError(sql: String?) -> MariaDBError {
        MariaDBError(code: 2006, sqlState: "HY000", message: "the connection to \(name) is broken", sql: sql)
    }

    /// Marks the connection broken after `error`. A failure on the client's side (a read
    /// timeout, a lost connection) may leave the session running on the server, its
    /// statement still holding its transaction's locks: it is handed to the reaper.
    private func fail(after error: MariaDBError) {
        failed = true
        if !error.isFromServer { giveUpOnTheSession() }
    }

    /// The connection's last error (`mysql_errno`), marking it broken when it failed.
    private func connectionError(sql: String?) -> MariaDBError {
        guard let mysql else { return brokenError(sql: sql) }
        let error = MariaDBError(
            code: Int(mysql_errno(mysql)), sqlState: String(cString: mysql_sqlstate(mysql)),
            message: String(cString: mysql_error(mysql)), sql: sql)
        if error.isConnectionFailure || abandoned.load(ordering: .acquiring) { fail(after: error) }
        noteTransactionEnd(error)
        return error
    }

    /// A prepared statement's last error, marking the connection broken when it failed.
    private func statementError(_ handle: UnsafeMutablePointer<MYSQL_STMT>, sql: String) -> MariaDBError {
        var error = MariaDBError(
            code: Int(mysql_stmt_errno(handle)), sqlState: String(cString: mysql_stmt_sqlstate(handle)),
            message: String(cString: mysql_stmt_error(handle)), sql: sql)
        if error.code == 0, let mysql, mysql_errno(mysql) != 0 {
            // An error the server sent in place of a row, read by an unbuffered fetch:
            // Connector/C leaves it on the connection, not on the statement (it read as
            // "error 0" with no message). Results are stored now, and
            // `mysql_stmt_store_result` puts such an error on the statement; kept for any
            // path that reads from the wire.
            error = MariaDBError(
                code: Int(mysql_errno(mysql)), sqlState: String(cString: mysql_sqlstate(mysql)),
                message: String(cString: mysql_error(mysql)), sql: sql)
        }
        if error.isConnectionFailure || abandoned.load(ordering: .acquiring) { fail(after: error) }
        noteTransactionEnd(error)
        guard !failed, [1062, 1586, 1048, 1364].contains(error.code) else { return error }
        // MariaDB's messages name no table for these, and a duplicate only its key's name:
        // the statement's table, and the key's columns from the catalog (an error path only).
        if error.table == nil { error.table = MariaDBError.targetTable(of: sql) }
        if error.code != 1048, error.code != 1364, let table = error.table, let key = error.constraint {
            error.columns = (try? keyColumns(table: table, key: key)) ?? []
        }
        return error
    }

    /// The columns of `table`'s index `key`, in the index's order.
    private func keyColumns(table: String, key: String) throws -> [String] {
        try uncounted {
            var columns = [String]()
            _ = try run(
                SQL(
                    sql: "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() "
                        + "AND BINARY TABLE_NAME = ? AND BINARY INDEX_NAME = ? ORDER BY SEQ_IN_INDEX",
                    arguments: [table, key])
            ) { row in columns.append(try row.decode(String.self, at: 0)) }
            return columns
        }
    }

    /// The error a call sees for `error`: when the connection was lost while a statement
    /// that commits was in flight (a `COMMIT`, or a write outside a transaction), whether it
    /// committed is unknown, and the error says so.
    private func outcome(of error: any Error, role: MariaDBStatementRole, autocommit: Bool, sql: String) -> any Error {
        guard role == .commit || (autocommit && role == .write) else { return error }
        // A statement refused before it was sent (its connection had broken, or was closed)
        // changed nothing: a COMMIT refused so committed nothing.
        if (error as? MariaDBError)?.wasSent == false || (error as? DALError)?.code == .connectionClosed {
            return error
        }
        let lost = abandoned.load(ordering: .acquiring) || (error as? MariaDBError)?.isFromServer == false
        guard lost else { return error }
        return DALError(
            .outcomeUnknown,
            "the connection to \(name) was lost while a statement that commits was in flight: it may or may not "
                + "have committed. Check before retrying (read the row, or use an idempotency key)",
            sql: sql, underlying: error)
    }

    // MARK: Statements

    func run(_ query: SQL, _ body: (RowView) throws -> Void) throws -> Int {
        guard let mysql, swiftdal_mariadb_server_status(mysql) & swiftdal_mariadb_server_status_in_trans != 0 else {
            return try runStatement(query, body)
        }
        let changed: Int
        startsANewTransaction = false
        do {
            changed = try runStatement(query, body)
        } catch {
            // MariaDB commits the open transaction before it runs DDL, and keeps that commit
            // when the DDL then fails (a `CREATE TABLE` of a table that exists): asked of the
            // server, as an error's answer carries no status.
            if FirstWord.committingImplicitly.contains(FirstWord(query.sql)), !failed, transactionEndedBy == nil,
                readingOffTheWire == nil, !cancelRequested.load(ordering: .relaxed), serverHasNoTransaction()
            {
                transactionMayHaveEndedBy = nil
                noteTransactionEnded(by: query.sql)
            }
            throw error
        }
        if swiftdal_mariadb_server_status(mysql) & swiftdal_mariadb_server_status_in_trans == 0 {
            noteTransactionEnded(by: query.sql)
        } else if startsANewTransaction {
            // A new transaction's start commits the open one, and leaves one open.
            noteTransactionEnded(by: query.sql)
        }
        return changed
    }

    /// Whether the server says its session has no transaction open (`@@in_transaction`);
    /// `false` when it cannot be asked.
    private func serverHasNoTransaction() -> Bool {
        let open = try? uncounted { () -> Int? in
            var open: Int?
            _ = try executeText("SELECT @@in_transaction") { open = try $0.decode(Int.self, at: 0) }
            return open
        }
        return open == 0
    }

    /// Notes a transaction that `sql` ended (``implicitCommit``): DDL and other statements
    /// that commit on their own, and the body's own `COMMIT`, `ROLLBACK` or `START
    /// TRANSACTION` inside a transaction of ``SwiftDAL/Database`` (whose own `COMMIT` or
    /// `ROLLBACK`, sent after it asked, leaves a note the next transaction's start clears).
    private func noteTransactionEnded(by sql: String) {
        guard transactionEndedBy == nil else { return }
        if FirstWord(sql) == .lock { locksTablesTillTransactionEnd = true }
        guard !toleratesImplicitCommits else { return }
        if implicitCommit == nil { implicitCommit = sql }
    }

    func takeImplicitCommit() -> String? {
        if locksTablesTillTransactionEnd {
            locksTablesTillTransactionEnd = false
            // A lock left on the session would hold every later call lent it.
            do {
                _ = try uncounted { try executeText("UNLOCK TABLES") { _ in } }
            } catch {
                failed = true
            }
        }
        guard let commit = implicitCommit else { return nil }
        implicitCommit = nil
        return commit
    }

    /// DDL, `LOCK TABLES` and a few more commit the open transaction.
    var mayCommitImplicitly: Bool { true }

    func tolerateImplicitCommits(_ tolerate: Bool) {
        toleratesImplicitCommits = tolerate
    }

    private func runStatement(_ query: SQL, _ body: (RowView) throws -> Void) throws -> Int {
        if readingOffTheWire != nil { try bufferUnreadRows() }
        if let error = query.arguments.conversionError { throw error }
        let autocommit = !isInTransaction
        var statement: PreparedStatement
        if let last = lastStatement, last.sql == query.sql, !(last.statement.isControl && query.arguments.isEmpty) {
            // The statement run last (a lookup in a loop): prepared, its role known.
            statement = last.statement
        } else {
            let role = MariaDBStatementRole(of: query.sql)
            if query.arguments.isEmpty, let text = Self.textProtocolForm(of: query.sql) {
                // A new transaction's start inside one commits it, and leaves one open: the
                // status cannot tell (noted by `run`). Transaction control takes this path.
                if !autocommit, case let first = FirstWord(text), first == .start || first == .begin,
                    first == .start || Self.beginsATransaction(text)
                {
                    startsANewTransaction = true
                }
                do {
                    try checkMaySend(text, role: role)
                    return try executeText(text, body)
                } catch {
                    if role == .rollback, !(error is DALError) { failed = true }
                    throw outcome(of: error, role: role, autocommit: autocommit, sql: text)
                }
            }
            statement = try prepared(query.sql, role: role)
        }
        if statement.isReading {
            // Run inside the reading of its own rows: a statement of its own, not cached.
            statement = try prepare(try MariaDBStatementText(query.sql), role: statement.role)
        }
        let role = statement.role
        // Arguments bound as given are read where they are stored (no array per execution).
        let inPlace = statement.bindsInPlace(query.arguments)
        let values = inPlace ? [] : try statement.text.values(for: query.arguments)
        func execute(_ statement: PreparedStatement) throws -> Executed {
            guard inPlace else { return try values.withUnsafeBufferPointer { try self.execute(statement, $0) } }
            return try query.arguments.withPositionalValues { try self.execute(statement, $0) }
        }
        do {
            try checkMaySend(statement.text.sql, role: role)
            var executed: Executed
            do {
                executed = try execute(statement)
            } catch let error as MariaDBError where error.code == 2057 {
                // The result's columns changed since the statement was prepared (its table
                // was altered): Connector/C cannot read them. Prepared again for any later
                // call; a read runs again now. A write ran (never twice), and the error says
                // so. The result left on the wire is read off first (else: out of sync).
                mysql_stmt_reset(statement.handle)
                statements[query.sql] = nil
                lastStatement = nil
                guard role == .read else {
                    throw DALError(
                        .schemaMismatch,
                        "the statement ran, but its result could not be read: its table was altered since it was "
                            + "prepared (it is prepared again for the next call). "
                            + (autocommit
                                ? "Outside a transaction, its change is committed"
                                : "Its change is part of the transaction, which this error rolls back unless caught"),
                        sql: statement.text.sql, underlying: error)
                }
                statement = try prepared(query.sql, role: role)
                executed = try execute(statement)
            }
            completedStatements += 1
            switch executed {
            case .changed(let affected):
                return affected
            case .rows(let rows):
                let result = EngineResult(rows)
                for row in 0..<rows.rowCount { try body(RowView(result: result, row: row)) }
                return rows.rowCount
            case .stored(let offTheWire):
                guard let reader = statement.unretainedReader else {
                    throw DALError(
                        .unsupportedOperation, "the statement's result has no reader (an internal error of SwiftDAL)")
                }
                let handle = statement.handle
                if offTheWire { readingOffTheWire = statement }
                var readToTheEnd = false
                defer {
                    if readingOffTheWire === statement { readingOffTheWire = nil }
                    statement.readFailure = nil
                    reader._withUnsafeGuaranteedRef { $0.end() }
                    // A result read off the wire to its end holds nothing (no rows were
                    // stored: none was buffered for another statement), and the next
                    // execution starts from it as from a freed one (raw C frees nothing):
                    // Connector/C's free is skipped then (~100 instructions a lookup).
                    if !(offTheWire && readToTheEnd && handle.pointee.result.data == nil) {
                        Self.freeResult(of: statement)  // (keeps the statement alive until then)
                    }
                }
                var count = 0
                while true {
                    let code = mysql_stmt_fetch(handle)
                    if code == swiftdal_mariadb_no_data {
                        readToTheEnd = true
                        break
                    }
                    guard code == 0 || code == swiftdal_mariadb_data_truncated else {
                        if let failure = statement.readFailure { throw failure }  // (cleared on the way out)
                        // The error ended the rows: the connection is free (a duplicate
                        // key's error reads the key's columns from the catalog).
                        if readingOffTheWire === statement { readingOffTheWire = nil }
                        throw statementError(handle, sql: statement.text.sql)
                    }
                    do {
                        let row = reader._withUnsafeGuaranteedRef { $0.advance() }
                        try body(RowView(result: EngineResult(reader.takeUnretainedValue()), row: row))
                    } catch {
                        // Left before the last row: an error the server sends in the rest
                        // (the statement failed after these rows: a deadlock that ended
                        // the transaction) is thrown, not dropped by the free's silent read.
                        if readingOffTheWire === statement, let failure = readRestOffTheWire(statement) {
                            throw failure
                        }
                        throw error
                    }
                    count += 1
                }
                return count
            }
        } catch {
            throw outcome(of: error, role: role, autocommit: autocommit, sql: statement.text.sql)
        }
    }

    /// The text-protocol form of `sql` when it is transaction control or a session
    /// statement (`START`, `COMMIT`, `ROLLBACK`, `SAVEPOINT`, `RELEASE`, `SET`, …), with
    /// SQLite's spelling of a user's own `COMMIT TRANSACTION` or `ROLLBACK TRANSACTION [TO
    /// SAVEPOINT x]` in MariaDB's (``SwiftDAL/Database`` itself writes the spelling all three
    /// engines share). `nil` for anything else (prepared).
    static func textProtocolForm(of sql: String) -> String? {
        // Most statements are none of these: known from the first word, without a split.
        let first = FirstWord(sql)
        guard FirstWord.controls.contains(first) else { return nil }
        guard first == .commit || first == .rollback else { return sql }
        // MariaDB knows `COMMIT [WORK]`, `ROLLBACK [WORK] [TO [SAVEPOINT] x]`, not `TRANSACTION`:
        // SQLite's `TRANSACTION` right after the verb becomes `WORK`, and the rest of the text
        // runs as written (its comments and line breaks with it).
        let next = first.nextWord(in: sql)
        guard next.word == "TRANSACTION" else { return sql }
        var bytes = Array(sql.utf8)
        bytes.replaceSubrange(next.start..<next.end, with: Array("WORK".utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The prepared statement for `sql` (SwiftDAL's text, cached by it, of `role`),
    /// prepared on first use.
    private func prepared(_ sql: String, role: MariaDBStatementRole) throws -> PreparedStatement {
        if let last = lastStatement, last.sql == sql { return last.statement }
        if let statement = statements[sql] {
            lastStatement = (sql, statement)
            return statement
        }
        let text = try MariaDBStatementText(sql)
        if statements.count >= Self.statementCacheCapacity {
            lastStatement = nil
            statements.removeAll()
        }
        let statement = try prepare(text, role: role)
        statements[sql] = statement
        lastStatement = (sql, statement)
        return statement
    }

    /// A new prepared statement for `text`, of `role` (not cached).
    private func prepare(_ text: MariaDBStatementText, role: MariaDBStatementRole) throws -> PreparedStatement {
        let mysql = try openConnection()
        try checkMaySend(text.sql, role: .other)
        guard let handle = mysql_stmt_init(mysql) else { throw connectionError(sql: text.sql) }
        let statement = PreparedStatement(handle: handle, text: text, role: role)  // closes the handle on every path
        guard mysql_stmt_prepare(handle, text.sql, UInt(text.sql.utf8.count)) == 0 else {
            throw statementError(handle, sql: text.sql)
        }
        return statement
    }

    /// What ``execute(_:_:)`` produced.
    private enum Executed {
        /// No result: the rows the statement changed.
        case changed(Int)
        /// A result read whole (a statement of several results).
        case rows(MariaDBRows)
        /// A result whose rows are to be fetched one by one into the statement's binding
        /// and read there: stored by Connector/C first, or read off the wire as they are
        /// fetched (`offTheWire`, see ``PreparedStatement/readsOffTheWire``). The caller
        /// frees it. The row is the statement's (``PreparedStatement/reader``): not
        /// carried here, where every copy of the case retained and released it.
        case stored(offTheWire: Bool)
    }

    /// Executes `statement` with `values`: the rows it changed (matched, for an `UPDATE`,
    /// through `CLIENT_FOUND_ROWS`), or its result: read off the wire as its rows are
    /// fetched when the statement sends one result at most, else stored (read whole, so
    /// that the connection is free for other statements while its rows are read).
    private func execute(
        _ statement: PreparedStatement, _ values: UnsafeBufferPointer<DatabaseValue>
    ) throws -> Executed {
        let handle = statement.handle
        // The text is read only where an error or the results after the first need it: a
        // copy here retained and released it at every execution.
        guard Int(mysql_stmt_param_count(handle)) == values.count else {
            throw DALError(
                .argumentMismatch,
                "the statement has \(mysql_stmt_param_count(handle)) parameter(s) but \(values.count) value(s) were bound",
                sql: statement.text.sql)
        }
        defer { parameters.releaseLargeBuffers() }
        if !values.isEmpty {
            let binds = parameters.bind(values)
            if !statement.isBound(to: binds, count: values.count) {
                guard mysql_stmt_bind_param(handle, binds) == 0 else {
                    statement.forgetBound()
                    throw statementError(handle, sql: statement.text.sql)
                }
                statement.noteBound(to: binds, count: values.count)
            }
        }
        guard mysql_stmt_execute(handle) == 0 else {
            // Connector/C marks the types sent as it builds the request: one that failed on
            // the way may not have carried them, so the next execution binds (and sends) anew.
            statement.forgetBound()
            throw statementError(handle, sql: statement.text.sql)
        }
        guard mysql_stmt_field_count(handle) > 0 else {
            let affected = mysql_stmt_affected_rows(handle)
            return .changed(affected == UInt64.max ? 0 : Int(clamping: affected))
        }
        var stored = false
        defer {
            if !stored {
                Self.freeResult(of: statement)
                drainResults(handle, sql: statement.text.sql)
            }
        }
        let binding: MariaDBResultBinding
        if mysql.map({ mysql_more_results($0) != 0 }) ?? true { statement.sendsSeveralResults = true }
        if let kept = statement.resultBinding, kept.matches(handle) {
            binding = kept
            // Connector/C keeps a result binding from one execution to the next (raw C
            // binds once) unless new metadata reset it (`bind_result_done`), or it made
            // another for a statement of several results (`mariadb_stmt.c`,
            // `mthd_stmt_read_execute_response`).
            if statement.sendsSeveralResults || handle.pointee.bind_result_done == 0,
                mysql_stmt_bind_result(handle, binding.binds) != 0
            {
                throw statementError(handle, sql: statement.text.sql)
            }
        } else {
            guard let made = MariaDBResultBinding(handle) else { throw statementError(handle, sql: statement.text.sql) }
            statement.resultBinding = made
            binding = made
            guard mysql_stmt_bind_result(handle, binding.binds) == 0 else {
                throw statementError(handle, sql: statement.text.sql)
            }
        }
        if statement.readsOffTheWire && !statement.sendsSeveralResults {
            // Fetched as raw C fetches them: each row read off the wire into the binding.
            // Anything sent on the connection before the last row is read buffers the rest
            // first (``bufferUnreadRows()``).
            statement.beginReading(binding, rowCount: 0)  // not known until read
            stored = true
            return .stored(offTheWire: true)
        }
        guard mysql_stmt_store_result(handle) == 0 else {
            // The read failed part way (an error after some rows: a runtime error, `KILL
            // QUERY`). Connector/C leaves the statement waiting for rows, and its next
            // execution would read the wire for them until the read timeout: reset it.
            let error = statementError(handle, sql: statement.text.sql)
            mysql_stmt_reset(handle)
            throw error
        }
        if mysql.map({ mysql_more_results($0) == 0 }) ?? false {
            statement.beginReading(binding, rowCount: Int(clamping: mysql_stmt_num_rows(handle)))
            stored = true
            return .stored(offTheWire: false)
        }
        // More results follow (a procedure's): the connection is not free until they are
        // read, so the rows are read into values first.
        statement.sendsSeveralResults = true
        var values = [DatabaseValue]()
        values.reserveCapacity(binding.count * Int(clamping: mysql_stmt_num_rows(handle)))
        while true {
            let code = mysql_stmt_fetch(handle)
            if code == swiftdal_mariadb_no_data { break }
            guard code == 0 || code == swiftdal_mariadb_data_truncated else {
                throw statementError(handle, sql: statement.text.sql)
            }
            try binding.appendRow(of: handle, to: &values)
        }
        // The further results read now: an error in them is the call's.
        stored = true
        Self.freeResult(of: statement)
        if let error = drainResults(handle, sql: statement.text.sql) { throw error }
        return .rows(MariaDBRows(layout: binding.layout, columnCount: binding.count, values: values))
    }

    /// Frees the result of `statement`, stored or not, whether or not its rows were all
    /// fetched. (`mysql_stmt_free_result` frees stored rows only while its cursor is inside
    /// them: after the last row it frees nothing, and the rows would stay in memory until
    /// the statement next runs. Moving the cursor back to the first row first frees them.
    /// Only when rows were stored: on an empty result, or one read off the wire (whose row
    /// count is the rows fetched, none stored), the move would leave the statement
    /// "fetching" with no rows stored, and its next execution would wait for rows to flush
    /// from the wire that never come. Freeing a result read off the wire reads any rows
    /// still on it.)
    private static func freeResult(of statement: PreparedStatement) {
        if statement.handle.pointee.result.data != nil, mysql_stmt_num_rows(statement.handle) > 0 {
            mysql_stmt_data_seek(statement.handle, 0)
        }
        mysql_stmt_free_result(statement.handle)
    }

    /// The rows Connector/C holds for the results of the statements this connection keeps
    /// (0 when every result that was read has been freed).
    var rowsHeldByStatements: Int {
        statements.values.reduce(0) { held, statement in
            // The row count of a result read off the wire counts the rows fetched, not held.
            statement.handle.pointee.result.data == nil
                ? held : held + Int(clamping: statement.handle.pointee.result.rows)
        }
    }

    /// Reads the rows left on the wire of the result being read off it (a statement run
    /// inside the reading of another's rows: the connection must be free to send it) into
    /// Connector/C's buffer, from which the reading goes on. When that read fails (the
    /// statement failed part way: a runtime error, a deadlock, `KILL`; the connection was
    /// lost), the failure is thrown here, so that the statement about to be sent is not
    /// sent (after a deadlock it would commit on its own: the transaction is gone), and
    /// again by the reading at its next fetch.
    private func bufferUnreadRows() throws {
        guard let reading = readingOffTheWire else { return }
        readingOffTheWire = nil
        var failure: (any Error)?
        do {
            try reading.keepCurrentRowsLongValues()
        } catch {
            failure = error
        }
        if mysql_stmt_store_result(reading.handle) != 0, failure == nil {
            failure = statementError(reading.handle, sql: reading.text.sql)
        }
        guard let failure else { return }
        reading.readFailure = failure
        // Its next fetch must fail, not wait on the wire for rows: the statement is reset.
        mysql_stmt_reset(reading.handle)
        throw failure
    }

    /// Reads the rest of `statement`'s result off the wire after its reading stopped early
    /// (Connector/C's free would read it too, but drop an error at its end); returns the
    /// error the server sent in place of a row, if any.
    private func readRestOffTheWire(_ statement: PreparedStatement) -> (any Error)? {
        readingOffTheWire = nil
        while true {
            let code = mysql_stmt_fetch(statement.handle)
            if code == swiftdal_mariadb_no_data { return nil }
            guard code == 0 || code == swiftdal_mariadb_data_truncated else {
                return statementError(statement.handle, sql: statement.text.sql)
            }
        }
    }

    /// Reads the further results a statement may send (a procedure's), so that the
    /// connection is ready for the next statement.
    @discardableResult
    private func drainResults(_ handle: UnsafeMutablePointer<MYSQL_STMT>, sql: String) -> MariaDBError? {
        guard let mysql else { return nil }
        while mysql_more_results(mysql) != 0 {
            let next = mysql_stmt_next_result(handle)
            // A later statement of the procedure failed (a deadlock there ended the
            // transaction): its error, noted as every error is.
            if next > 0 { return statementError(handle, sql: sql) }
            guard next == 0 else { break }
            mysql_stmt_free_result(handle)
        }
        return nil
    }

    /// Runs `sql` (one statement or several) through the text protocol, calling `body` with
    /// the rows of each result; returns the rows the last statement changed or returned.
    private func executeText(_ sql: String, _ body: (RowView) throws -> Void) throws -> Int {
        if readingOffTheWire != nil { try bufferUnreadRows() }
        let mysql = try openConnection()
        guard !sql.utf8.contains(0) else { throw DALError(.invalidSQL, "the SQL text contains a NUL character") }
        guard mysql_real_query(mysql, sql, UInt(sql.utf8.count)) == 0 else { throw connectionError(sql: sql) }
        var count = 0
        var firstError: (any Error)?
        while true {
            if let result = mysql_store_result(mysql) {
                let rows = Self.textRows(result)
                mysql_free_result(result)
                count = rows.rowCount
                if firstError == nil {
                    let view = EngineResult(rows)
                    do {
                        for row in 0..<rows.rowCount { try body(RowView(result: view, row: row)) }
                    } catch {
                        firstError = error  // the other results are still read
                    }
                }
            } else if mysql_field_count(mysql) == 0 {
                let affected = mysql_affected_rows(mysql)
                count = affected == UInt64.max ? 0 : Int(clamping: affected)
            } else {
                throw connectionError(sql: sql)
            }
            let next = mysql_next_result(mysql)
            if next == -1 { break }
            if next > 0 { throw connectionError(sql: sql) }
        }
        completedStatements += 1
        if let firstError { throw firstError }
        return count
    }

    /// The rows of a text-protocol result: integers and doubles parsed, the binary
    /// character set as blobs, everything else as the server's text.
    private static func textRows(_ result: UnsafeMutablePointer<MYSQL_RES>) -> MariaDBRows {
        let count = Int(mysql_num_fields(result))
        var names = [String]()
        var kinds = [MariaDBColumnKind]()
        if let fields = mysql_fetch_fields(result) {
            for index in 0..<count {
                names.append(fields[index].name.map { String(cString: $0) } ?? "column\(index)")
                kinds.append(MariaDBColumnKind(fields[index]))
            }
        }
        var values = [DatabaseValue]()
        while let row = mysql_fetch_row(result), let lengths = mysql_fetch_lengths(result) {
            for index in 0..<count {
                guard let pointer = row[index] else {
                    values.append(.null)
                    continue
                }
                let bytes = UnsafeRawBufferPointer(start: pointer, count: Int(lengths[index]))
                let text = String(decoding: bytes, as: UTF8.self)
                switch kinds[index] {
                case .signed: values.append(Int64(text).map { .integer($0) } ?? .text(text))
                case .unsigned: values.append(Int64(text).map { .integer($0) } ?? .text(text))
                case .real, .float: values.append(Double(text).map { .real($0) } ?? .text(text))
                case .bytes: values.append(.blob(Data(bytes)))
                case .null: values.append(.null)
                default: values.append(.text(text))
                }
            }
        }
        return MariaDBRows(layout: ColumnLayout(names: names), columnCount: count, values: values)
    }

    func executeScript(_ script: String) throws {
        let role = MariaDBStatementRole(of: script)
        let autocommit = !isInTransaction
        do {
            try checkMaySend(script, role: role)
            _ = try executeText(script) { _ in }
            // A script's DDL ends a transaction as a statement's does (see ``run(_:_:)``).
            if !autocommit, let mysql,
                swiftdal_mariadb_server_status(mysql) & swiftdal_mariadb_server_status_in_trans == 0
            {
                noteTransactionEnded(by: script)
            }
        } catch {
            throw outcome(of: error, role: role, autocommit: autocommit, sql: script)
        }
    }

    // MARK: Batches, bulk loads, streams

    /// The most statements one bulk execution runs (see ``runBatch(count:_:row:ended:)``).
    static let bulkStatements = 1_000
    /// The most bytes of parameters one bulk execution sends: 1 MiB, or half the server's
    /// `max_allowed_packet` when that is less (a larger packet ends the session).
    static let bulkBytes = 1 << 20

    /// The bytes of parameters a bulk execution may send on this connection, read once (the
    /// server's `max_allowed_packet`); 0 when it sends none: the server runs no bulk
    /// executions (MySQL's), or refused one (`ER_BINLOG_NON_SUPPORTED_BULK` under
    /// statement-based binary logging).
    private var bulkByteLimit: Int?

    /// Runs the batch's statements in order. Inside a transaction, consecutive statements of
    /// one text that each insert one row (`INSERT INTO t (…) VALUES (?, …)`: `insertRange`'s,
    /// `bulkInsert`'s) into a table that undoes a failed statement entirely (InnoDB, with no
    /// trigger this account can see: asked of the catalog once per statement and connection),
    /// with values of one kind per parameter, go to the server as one bulk execution
    /// (`COM_STMT_BULK_EXECUTE`: one round trip for up to ``bulkStatements`` of them,
    /// ``bulkBytes`` of values). Everything else runs one statement after the other: inserts
    /// into other tables (MyISAM, Aria: a failed bulk execution would keep the rows before the
    /// failing one), updates, upserts and deletes (MariaDB's count of a bulk execution adds
    /// the rows its triggers wrote, and `updateRange` returns the rows found; a bulk `UPDATE`
    /// keeps the rows before a failing one). A bulk execution that fails on a statement's
    /// error (a constraint, a value) left nothing: its statements run again one by one, and
    /// the error names the failing one (``DatabaseError/batchIndex``), the statements before
    /// it having run, as without bulk. A deadlock, a lock wait timeout, a lost connection or a
    /// stopped call names none. `ended` hears of each execution: a bulk one once, with a row
    /// for each of its statements (a refused or failed one with its error, before its
    /// statements run one by one). The rows of one bulk execution share its statement's time
    /// (`NOW()`, a `CURRENT_TIMESTAMP` default). A trigger the account cannot see (without the
    /// `TRIGGER` privilege) that writes to a table that is not transactional would see the
    /// rows before a failing one twice.
    func runBatch(
        count: Int, _ query: (Int) throws -> SQL, row: (Int, RowView) throws -> Void, ended: BatchStatementEnded?
    ) throws -> Int {
        var changed = 0
        var index = 0
        var lookahead: SQL?
        var bulkRows: MariaDBBulkRows?
        // The text of the last statement found not to be an `INSERT`: a batch of updates
        // reads its first word once, not for every row (~250 instructions a row; callgrind,
        // MariaDB's W5 through `updateFieldRange`).
        var notAnInsert: String?
        while index < count {
            let first: SQL
            if let made = lookahead.take() { first = made } else { first = try query(index) }
            let mayRunInBulk: Bool
            if first.sql == notAnInsert {
                mayRunInBulk = false
            } else if FirstWord(first.sql) != .insert {
                notAnInsert = first.sql
                mayRunInBulk = false
            } else {
                mayRunInBulk = true
            }
            guard mayRunInBulk, index + 1 < count, isInTransaction, let bulk = try bulkStatement(for: first) else {
                changed += try runOne(first, at: index, row: row, ended: ended)
                index += 1
                continue
            }
            // The run: the statements after `first` of its text, values of the same kinds. (The
            // arrays start small and grow with the run; they are reused by the batch's next
            // runs of that width.)
            var run = [first]
            let rows: MariaDBBulkRows
            if let made = bulkRows, made.width == bulk.values.count, made.byteLimit == bulk.byteLimit {
                made.removeAll()
                rows = made
            } else {
                rows = MariaDBBulkRows(width: bulk.values.count, limit: Self.bulkStatements, byteLimit: bulk.byteLimit)
                bulkRows = rows
            }
            _ = bulk.values.withUnsafeBufferPointer(rows.append)  // (a first row always fits)
            // (Up to the run's limit: the statement after a full run is made by the next one.)
            while rows.count < rows.limit, index + run.count < count {
                let next = try query(index + run.count)
                let values = next.sql == first.sql ? try? bulk.statement.text.values(for: next.arguments) : nil
                guard let values, next.arguments.conversionError == nil, values.withUnsafeBufferPointer(rows.append)
                else {
                    lookahead = next
                    break
                }
                run.append(next)
            }
            if run.count == 1 {
                changed += try runOne(first, at: index, row: row, ended: ended)
            } else {
                changed += try runBulk(bulk.statement, run, rows: rows, at: index, row: row, ended: ended)
            }
            index += run.count
        }
        return changed
    }

    /// Runs one statement of a batch, at `index`: its error names the index.
    private func runOne(
        _ statement: SQL, at index: Int, row: (Int, RowView) throws -> Void, ended: BatchStatementEnded?
    ) throws -> Int {
        let sent = ended == nil ? nil : MonotonicTime.now
        do {
            let rows = try run(statement) { try row(index, $0) }
            if let ended, let sent { ended(statement.sql, sent, rows, nil) }
            return rows
        } catch {
            if let ended, let sent { ended(statement.sql, sent, 0, error) }
            guard var error = error as? MariaDBError, error.concernsTheBatchItem else { throw error }
            error.batchIndex = index
            throw error
        }
    }

    /// The prepared statement and values of `query`, an `INSERT`, when it may run in bulk
    /// with others of its text (see ``runBatch(count:_:row:ended:)``), with the bytes a bulk
    /// execution may send; `nil` when it runs alone (its error, if any, is then thrown by
    /// running it).
    private func bulkStatement(
        for query: SQL
    ) throws -> (statement: PreparedStatement, values: [DatabaseValue], byteLimit: Int)? {
        guard query.arguments.conversionError == nil, readingOffTheWire == nil, !transactionMarked,
            !cancelRequested.load(ordering: .relaxed), let mysql
        else { return nil }
        let limit = try bulkByteLimit(mysql)
        guard limit > 0 else { return nil }
        let statement: PreparedStatement
        do {
            statement = try prepared(query.sql, role: .write)
        } catch {
            if failed { throw error }  // the connection broke: its error, not a later "not sent"
            return nil  // the server refused the text: running it alone throws that, with its index
        }
        guard statement.insertsOneRow, !statement.isReading else { return nil }
        if statement.targetUndoesAFailure == nil {
            statement.targetUndoesAFailure = try targetUndoesAFailure(of: statement.text)
        }
        // (nil: asked again next time.) Known before the values are converted: a statement
        // into a table that gets no bulk executions pays for nothing more per row.
        guard statement.targetUndoesAFailure == true,
            let values = try? statement.text.values(for: query.arguments), !values.isEmpty,
            Int(mysql_stmt_param_count(statement.handle)) == values.count
        else { return nil }
        return (statement, values, limit)
    }

    /// ``bulkByteLimit``, read from the server the first time.
    private func bulkByteLimit(_ mysql: UnsafeMutablePointer<MYSQL>) throws -> Int {
        if let bulkByteLimit { return bulkByteLimit }
        var limit = 0
        if swiftdal_mariadb_runs_bulk(mysql) != 0 {
            do {
                try checkMaySend("SELECT @@max_allowed_packet", role: .read)
                _ = try uncounted {
                    try executeText("SELECT @@max_allowed_packet") {
                        limit = min(Self.bulkBytes, try $0.decode(Int.self, at: 0) / 2)
                    }
                }
            } catch {
                if failed { throw error }  // the connection broke
                return 0  // (a stopped call: asked again by the next batch)
            }
        }
        bulkByteLimit = limit
        return limit
    }

    /// Runs `run` (statements of `statement`'s text, at `index` on in the batch; `rows` their
    /// values) as one bulk execution. When it fails on a statement's error and left
    /// nothing, runs them one by one, so that the error names the failing one.
    private func runBulk(
        _ statement: PreparedStatement, _ run: [SQL], rows: MariaDBBulkRows, at index: Int,
        row: (Int, RowView) throws -> Void, ended: BatchStatementEnded?
    ) throws -> Int {
        let sql = run[0].sql  // the caller's text, as the statements run alone report it
        let sent = ended == nil ? nil : MonotonicTime.now
        let failure: MariaDBError
        do {
            try checkMaySend(statement.text.sql, role: .write)
            try executeBulk(statement, rows)
            completedStatements += run.count
            // One row each (the server's count would add what triggers wrote).
            if let ended, let sent { ended(sql, sent, run.count, nil) }
            return run.count
        } catch let error as MariaDBError where error.concernsTheBatchItem && !error.isRetryable && error.wasSent {
            if let ended, let sent { ended(sql, sent, 0, error) }
            failure = error
        } catch {
            if let ended, let sent { ended(sql, sent, 0, error) }
            throw error
        }
        if failure.code == 4033 {
            bulkByteLimit = 0  // refused before anything ran (statement-based binary log): never again here
        } else if transactionMarked {
            throw failure  // the transaction may be gone: nothing runs again, and no row is named
        }
        // The failed execution left nothing (the server undid the statement at its error):
        // its statements run again one by one, and the failing one throws with its index.
        var changed = 0
        for (offset, statement) in run.enumerated() {
            changed += try runOne(statement, at: index + offset, row: row, ended: ended)
        }
        return changed
    }

    /// Whether a failed `INSERT` of `text` leaves nothing behind, so that its rows can run
    /// again one by one to find the failing one: its target (``MariaDBStatementText/insertTarget``,
    /// the names compared exactly) is one table whose engine is transactional (InnoDB undoes
    /// a statement at its error), with no trigger this account can see (one could write to a
    /// table that is not). `false` when the catalog does not say so (a view, a table that is
    /// not transactional, names not read): the statement then runs one row at a time, never
    /// in bulk; `nil` when the query failed (a stopped call), not to be kept.
    private func targetUndoesAFailure(of text: MariaDBStatementText) throws -> Bool? {
        guard let target = text.insertTarget else { return false }
        var undone = false
        do {
            _ = try uncounted {
                try run(
                    SQL(
                        sql: """
                            SELECT IFNULL(COUNT(*) = 1 AND SUM(e.TRANSACTIONS = 'YES') = 1 AND NOT EXISTS (
                                SELECT 1 FROM information_schema.TRIGGERS g WHERE BINARY g.EVENT_OBJECT_SCHEMA =
                                IFNULL(?, DATABASE()) AND BINARY g.EVENT_OBJECT_TABLE = ?), 0)
                            FROM information_schema.TABLES t LEFT JOIN information_schema.ENGINES e ON e.ENGINE = t.ENGINE
                            WHERE BINARY t.TABLE_SCHEMA = IFNULL(?, DATABASE()) AND BINARY t.TABLE_NAME = ?
                            """, arguments: [target.schema, target.table, target.schema, target.table])
                ) { undone = try $0.decode(Int.self, at: 0) == 1 }
            }
        } catch {
            if failed { throw error }  // the connection broke
            return nil
        }
        return undone
    }

    /// Executes `statement` once for every row of `rows` (`STMT_ATTR_ARRAY_SIZE`).
    private func executeBulk(_ statement: PreparedStatement, _ rows: MariaDBBulkRows) throws {
        let handle = statement.handle
        var size = UInt32(rows.count)
        // The statement's next single execution binds its parameters again, without arrays.
        statement.forgetBound()
        defer {
            var none: UInt32 = 0
            mysql_stmt_attr_set(handle, STMT_ATTR_ARRAY_SIZE, &none)
        }
        guard mysql_stmt_attr_set(handle, STMT_ATTR_ARRAY_SIZE, &size) == 0,
            mysql_stmt_bind_param(handle, rows.bind()) == 0
        else { throw statementError(handle, sql: statement.text.sql) }
        guard mysql_stmt_execute(handle) == 0 else { throw statementError(handle, sql: statement.text.sql) }
        withExtendedLifetime(rows) {}
    }

    /// No bulk path of its own: `bulkInsert` is `insertRange`, whose batch of `INSERT`s
    /// goes as bulk executions (``runBatch(count:_:row:ended:)``); its rows encoded first
    /// and put into the bulk arrays here cost more (callgrind, W1B: 88.2M instructions
    /// against 85.7M). `nil`, and the caller sends `INSERT`s.
    func copyRows(
        into table: String, columns: [String], blobColumns: Set<Int>, count: Int,
        _ row: (Int, inout [DatabaseValue]) throws -> Void
    ) throws -> Int? {
        nil
    }

    /// Reads the rows through a server-side read-only cursor (`CURSOR_TYPE_READ_ONLY`),
    /// `fetchSize` rows per round trip (`STMT_ATTR_PREFETCH_ROWS`): only one row is
    /// decoded at a time, and the connection may run other statements between rows. The
    /// statement is prepared for the stream and closed after it (which closes the cursor).
    func stream(_ query: SQL, fetchSize: Int, _ body: (RowView) throws -> Void) throws -> Int {
        if readingOffTheWire != nil { try bufferUnreadRows() }
        if let error = query.arguments.conversionError { throw error }
        let text = try MariaDBStatementText(query.sql)
        let values = try text.values(for: query.arguments)
        let mysql = try openConnection()
        try checkMaySend(text.sql, role: .read)
        guard let handle = mysql_stmt_init(mysql) else { throw connectionError(sql: text.sql) }
        let statement = PreparedStatement(handle: handle, text: text, role: .read)
        guard mysql_stmt_prepare(handle, text.sql, UInt(text.sql.utf8.count)) == 0 else {
            throw statementError(handle, sql: text.sql)
        }
        var cursorType = UInt(swiftdal_mariadb_cursor_type_read_only)
        var prefetch = UInt(max(1, fetchSize))
        mysql_stmt_attr_set(handle, STMT_ATTR_CURSOR_TYPE, &cursorType)
        mysql_stmt_attr_set(handle, STMT_ATTR_PREFETCH_ROWS, &prefetch)
        guard Int(mysql_stmt_param_count(handle)) == values.count else {
            throw DALError(.argumentMismatch, "the statement's parameters do not match its arguments", sql: text.sql)
        }
        defer { parameters.releaseLargeBuffers() }
        if !values.isEmpty,
            values.withUnsafeBufferPointer({ mysql_stmt_bind_param(handle, parameters.bind($0)) }) != 0
        {
            throw statementError(handle, sql: text.sql)
        }
        guard mysql_stmt_execute(handle) == 0 else { throw statementError(handle, sql: text.sql) }
        guard mysql_stmt_field_count(handle) > 0 else { return 0 }
        guard let binding = MariaDBResultBinding(handle) else { throw statementError(handle, sql: text.sql) }
        guard mysql_stmt_bind_result(handle, binding.binds) == 0 else { throw statementError(handle, sql: text.sql) }
        var count = 0
        let (fetched, result) = statement.fetchedRow(for: binding)
        fetched.begin(binding, rowCount: 0)  // not known: read through a cursor
        defer { fetched.end() }
        while true {
            try checkMaySend(text.sql, role: .read)
            let code = mysql_stmt_fetch(handle)
            if code == swiftdal_mariadb_no_data { break }
            guard code == 0 || code == swiftdal_mariadb_data_truncated else {
                throw statementError(handle, sql: text.sql)
            }
            try body(RowView(result: result, row: fetched.advance()))
            count += 1
        }
        completedStatements += 1
        withExtendedLifetime(statement) {}
        return count
    }

    // MARK: Transactions and the catalog

    /// `START TRANSACTION [READ ONLY]`, preceded by `SET TRANSACTION ISOLATION LEVEL …` in
    /// the same text (MariaDB takes no isolation level in `START TRANSACTION`; the `SET`
    /// applies to the next transaction only). Sent as one multi-statement text.
    func beginStatement(_ kind: TransactionKind, isolation: IsolationLevel?, readOnly: Bool) -> String {
        let start = readOnly ? "START TRANSACTION READ ONLY" : "START TRANSACTION"
        guard let isolation else { return start }
        return "SET TRANSACTION ISOLATION LEVEL \(isolation.rawValue); \(start)"
    }

    var cachedStatementCount: Int { statements.count }

    func clearStatementCache() throws {
        if readingOffTheWire != nil { try bufferUnreadRows() }  // closing a statement sends a command
        lastStatement = nil
        statements.removeAll()
    }

    /// Runs `body`, which sends statements the connection needs for itself, without
    /// counting them in `completedStatements`.
    func uncounted<T>(_ body: () throws -> T) rethrows -> T {
        let counted = completedStatements
        defer { completedStatements = counted }
        return try body()
    }
}

/// What a statement does to a transaction's outcome, read from its first word (after blanks
/// and comments: a `COMMIT` written after a comment is a commit too).
package enum MariaDBStatementRole {
    /// `ROLLBACK` of the whole transaction (`ROLLBACK … TO …` is `.other`).
    case rollback
    /// `COMMIT`.
    case commit
    /// A query that changes nothing (`SELECT`, `SHOW`, `EXPLAIN`, …).
    case read
    /// Anything else: it may write, and commits on its own outside a transaction.
    case write
    /// Transaction and session control that commits nothing.
    case other

    /// The role of `sql` by its first word, read from its UTF-8 bytes (every statement
    /// pays for this: splitting the text into `String` words cost ~46,000 instructions a
    /// statement, more than the rest of a lookup).
    package init(of sql: String) {
        let word = FirstWord(sql)
        switch word {
        case .rollback: self = word.rollsBackToASavepoint(in: sql) ? .other : .rollback
        case .commit: self = .commit
        case .select, .show, .explain, .describe, .values, .table, .with: self = .read
        case .start, .begin, .savepoint, .release, .set, .do, .kill, .use: self = .other
        default: self = .write
        }
    }
}

/// The first word of an SQL text (the ASCII letters after leading blanks and comments, up
/// to 8 of them, upper-cased), packed in an integer: compared without building a `String`.
///
/// For example, `MariaDBStatementRole(of: "-- done\nCOMMIT") == .commit`.
struct FirstWord: Equatable {
    let packed: UInt64
    /// Where the word ends in the text's UTF-8 bytes.
    let end: Int

    init(_ sql: String) {
        var sql = sql
        (packed, end) = sql.withUTF8 { bytes in
            var index = Self.start(in: bytes)
            var packed: UInt64 = 0
            var letters = 0
            while index < bytes.count {
                let byte = bytes[index] & 0xDF  // ASCII upper case
                guard byte >= 0x41 && byte <= 0x5A else { break }
                if letters < 8 { packed = packed << 8 | UInt64(byte) }
                letters += 1
                index += 1
            }
            return (letters > 8 ? packed | 1 << 63 : packed, index)
        }
    }

    /// The offset of the statement's first word in `bytes`: past blanks and comments
    /// (`# …` and `-- …` to the end of the line, `/* … */`), as MariaDB reads them. An
    /// executable comment (`/*! … */`, `/*M! … */`) is part of the statement: its text runs,
    /// so the word is not looked for past it.
    private static func start(in bytes: UnsafeBufferPointer<UInt8>, from first: Int = 0) -> Int {
        var index = first
        let count = bytes.count
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        func skipLine() {
            while index < count, bytes[index] != 0x0A { index += 1 }
        }
        func isExecutableComment(at start: Int) -> Bool {
            func byte(_ offset: Int) -> UInt8 { start + offset < count ? bytes[start + offset] : 0 }
            return byte(2) == UInt8(ascii: "!") || (byte(2) == UInt8(ascii: "M") && byte(3) == UInt8(ascii: "!"))
        }
        while index < count {
            let byte = bytes[index]
            let next: UInt8 = index + 1 < count ? bytes[index + 1] : 0
            if isBlank(byte) {
                index += 1
            } else if byte == UInt8(ascii: "#") {
                skipLine()
            } else if byte == UInt8(ascii: "-"), next == UInt8(ascii: "-"),
                index + 2 == count || isBlank(bytes[index + 2]) || bytes[index + 2] < 0x20
            {
                // `--` starts a comment only when a blank or a control character follows.
                skipLine()
            } else if byte == UInt8(ascii: "/"), next == UInt8(ascii: "*"), !isExecutableComment(at: index) {
                index += 2
                while index < count,
                    !(bytes[index] == UInt8(ascii: "*") && index + 1 < count
                        && bytes[index + 1] == UInt8(ascii: "/"))
                {
                    index += 1
                }
                index = min(count, index + 2)
            } else {
                break
            }
        }
        return index
    }

    private init(word: StaticString) {
        var packed: UInt64 = 0
        var letters = 0
        word.withUTF8Buffer { bytes in
            for byte in bytes {
                if letters < 8 { packed = packed << 8 | UInt64(byte) }
                letters += 1
            }
        }
        self.packed = letters > 8 ? packed | 1 << 63 : packed
        end = 0
    }

    static func == (lhs: FirstWord, rhs: FirstWord) -> Bool { lhs.packed == rhs.packed }

    /// The word after this one (past blanks and comments), upper-cased, and where it starts
    /// and ends in `sql`'s UTF-8 bytes (an empty word when none follows).
    func nextWord(in sql: String, after offset: Int? = nil) -> (word: String, start: Int, end: Int) {
        var text = sql
        return text.withUTF8 { bytes in
            let start = Self.start(in: bytes, from: offset ?? end)
            var wordEnd = start
            while wordEnd < bytes.count, (0x41...0x5A).contains(bytes[wordEnd] & 0xDF) { wordEnd += 1 }
            let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<wordEnd]), as: UTF8.self)
            return (word.uppercased(), start, wordEnd)
        }
    }

    /// Whether this word, a `ROLLBACK`, rolls back to a savepoint only: `ROLLBACK [WORK] TO
    /// [SAVEPOINT] x` (or SQLite's `ROLLBACK TRANSACTION TO …`, which runs as `WORK`), its
    /// words read past comments (a `to` inside a comment after a plain `ROLLBACK`, or in
    /// `ROLLBACK AND NO CHAIN`'s place, does not count).
    func rollsBackToASavepoint(in sql: String) -> Bool {
        var offset = end
        for _ in 0..<2 {
            let next = nextWord(in: sql, after: offset)
            if next.word == "TO" { return true }
            guard next.word == "WORK" || next.word == "TRANSACTION" else { return false }
            offset = next.end
        }
        return false
    }

    /// The first words of the statements that send one result at most (see
    /// ``MariaDBConnection/PreparedStatement/readsOffTheWire``).
    static let sendingOneResult = [select, with, values, table, insert, update, delete, replace]
    static let insert = FirstWord(word: "INSERT")
    static let update = FirstWord(word: "UPDATE")
    static let delete = FirstWord(word: "DELETE")
    static let replace = FirstWord(word: "REPLACE")
    static let rollback = FirstWord(word: "ROLLBACK")
    static let commit = FirstWord(word: "COMMIT")
    static let select = FirstWord(word: "SELECT")
    static let show = FirstWord(word: "SHOW")
    static let explain = FirstWord(word: "EXPLAIN")
    static let describe = FirstWord(word: "DESCRIBE")
    static let values = FirstWord(word: "VALUES")
    static let table = FirstWord(word: "TABLE")
    static let with = FirstWord(word: "WITH")
    static let start = FirstWord(word: "START")
    static let begin = FirstWord(word: "BEGIN")
    static let not = FirstWord(word: "NOT")
    static let savepoint = FirstWord(word: "SAVEPOINT")
    static let release = FirstWord(word: "RELEASE")
    static let set = FirstWord(word: "SET")
    static let `do` = FirstWord(word: "DO")
    static let kill = FirstWord(word: "KILL")
    static let use = FirstWord(word: "USE")
    /// The first words of the statements that commit the open transaction before they run
    /// (MariaDB's "statements that cause an implicit commit"), kept even when they fail.
    static let committingImplicitly = [
        FirstWord(word: "ALTER"), FirstWord(word: "CREATE"), FirstWord(word: "DROP"), FirstWord(word: "RENAME"),
        FirstWord(word: "TRUNCATE"), lock, FirstWord(word: "GRANT"), FirstWord(word: "REVOKE"),
        FirstWord(word: "ANALYZE"), FirstWord(word: "CACHE"), FirstWord(word: "CHECK"), FirstWord(word: "OPTIMIZE"),
        FirstWord(word: "REPAIR"), FirstWord(word: "FLUSH"), FirstWord(word: "RESET"), FirstWord(word: "INSTALL"),
        FirstWord(word: "UNINSTALL")
    ]
    static let lock = FirstWord(word: "LOCK")
    static let unlock = FirstWord(word: "UNLOCK")
    static let xa = FirstWord(word: "XA")
    /// Transaction and session control, sent in the text protocol.
    static let controls: [FirstWord] = [
        .commit, .rollback, .start, .begin, .savepoint, .release, .set, .lock, .unlock, .use, .kill, .xa, .do
    ]
}

@available(*, unavailable)
extension MariaDBConnection: Sendable {}
