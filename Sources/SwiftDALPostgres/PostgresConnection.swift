internal import CSwiftDALPostgres
import Foundation
import SwiftDALConnection
import Synchronization

/// One libpq connection (`PGconn`), used by one thread at a time (a ``PostgresPool`` lends
/// it inside a ``Database``). Statements are prepared once per connection and cached by
/// their text (or, for PgBouncer's transaction pooling, sent unnamed every time); values
/// are always bound, text as text, `Data` as binary `bytea`.
final class PostgresConnection: EngineConnection {
    private var connection: OpaquePointer?
    private let configuration: PostgresConfiguration
    /// What the connection is called in errors (host, port, database; no password).
    let name: String
    private var statements: [String: PreparedStatement] = [:]
    private var lastStatement: (text: String, statement: PreparedStatement)?
    /// Whether the server may hold prepared statements no longer in `statements` (dropped
    /// inside an aborted transaction, where `DEALLOCATE` cannot run, or after a schema
    /// change whose `DEALLOCATE` failed): the next `clearStatementCache` deallocates them.
    private var hasUnlistedPrepared = false
    private var statementNumber = 0
    /// Numbers the cursors of streams (each named once per connection).
    private var cursorNumber = 0
    private var failed = false
    /// Behind transaction pooling (no session setting holds), whether the server's own
    /// settings already make text results exact (`extra_float_digits` at least 1 from
    /// PostgreSQL 12, 3 before, and `bytea_output` hex, the default): asked once, by the
    /// first statement returning rows outside a transaction (``settingsReadExactly()``),
    /// under that call's limits; `nil` until then. When they do not, such a statement runs
    /// in a transaction of its own that sets them (``runPooled(_:_:)``).
    private var serverSettingsReadExactly: Bool?
    /// libpq's cancel handle (`PGcancel`), usable from any thread.
    private let canceller: CancelHandle?
    /// The pool's sender of cancel requests.
    /// The cancel requests made for the current call, until they are settled.
    private let cancelRequests: PendingStopRequests
    /// Sends a stopped call's cancel request again while its pipelined batch runs.
    private let pipelineResends = PipelineCancelResends()
    /// The connection's socket, for ``abandon()`` (set once it is open).
    private let socket: Int32
    /// Set by ``abandon()``: the socket is shut down.
    private let abandoned = Atomic<Bool>(false)
    /// Set when the call using the connection was stopped, until its pool takes the
    /// connection back: a statement about to be sent then fails at once, since a cancel
    /// request that reached the server between two statements of the call (its BEGIN,
    /// a PREPARE) stopped nothing. A `ROLLBACK` still runs, once the cancel request has
    /// been answered (so that it cannot be the statement the request stops).
    private let cancelRequested = Atomic<Bool>(false)
    /// Statements completed for the calls. A cluster retries a read whose caller has seen
    /// no row, so what hands the caller none is not counted: the catalog queries a
    /// mapping makes for itself, and the preparation of a statement (its execution may
    /// still meet a lost server; see `uncounted`).
    private(set) var completedStatements = 0
    /// How many results were read in binary (see ``PreparedStatement/resultFormat``).
    private(set) var binaryResults = 0
    /// Reused by every execution (see `execute`); only the thread using the connection
    /// touches it.
    private let parameterArrays = ParameterArrays()
    /// What the server's notices said during the current statement (libpq calls the
    /// receiver on the thread using the connection, inside its own calls).
    private let notices = NoticeLog()

    /// See ``notices``.
    private final class NoticeLog {
        /// Whether the current statement drew a WARNING of SQLSTATE 01000: what PostgreSQL
        /// sends when a cancel request ends a commit's wait for a synchronous standby
        /// ("canceling wait for synchronous replication"), the transaction committed on
        /// the primary and confirmed by no standby (see `checkCommitConfirmed`).
        var sawWarning = false
    }

    private final class PreparedStatement {
        let text: PostgresStatementText
        /// The server-side name, or `nil` when the statement is sent unnamed each time.
        let name: String?
        /// `name` as a C string, made once (a short Swift string is stored inline, and
        /// passing it to C would copy it into a new array on every execution).
        let cName: ContiguousArray<CChar>?
        /// Whether running it may change the result columns of prepared statements.
        let changesSchema: Bool
        /// What it does to a transaction's outcome.
        let role: StatementRole
        /// The columns of its last result, reused while the next result has the same
        /// number and types of columns (read once, not per result).
        var shape: PostgresRows.Shape?
        /// libpq's result format for its executions: text (0) until a result shows that
        /// every column reads the same in binary (1; see ``PostgresRows/Shape/readsInBinary``).
        /// Only a statement prepared on the server switches: its result columns cannot
        /// change without PostgreSQL refusing the execution (a stale plan, prepared again
        /// as a new statement), while an unnamed one is planned anew each time.
        private(set) var resultFormat: Int32 = 0

        /// Whether its result columns are pinned by its plan (a query or a DML statement):
        /// `FETCH`, `EXECUTE`, `SHOW`, `EXPLAIN`… build their columns anew at each run.
        let hasPlannedResult: Bool

        /// Whether its result columns' types cannot change without PostgreSQL refusing
        /// to run it: prepared on the server, with a planned result.
        var hasPinnedColumns: Bool { name != nil && hasPlannedResult }

        /// Keeps `rows`' shape for the next result, and asks for binary from then on
        /// when it allows (and for text again should a binary result not: a defence, as
        /// only statements with planned results switch).
        @inline(__always)
        func adopt(_ rows: PostgresRows) {
            let shape = rows.shape
            guard self.shape !== shape else { return }
            self.shape = shape
            if shape.isBinary {
                if !shape.readsInBinary { resultFormat = 0 }
            } else if resultFormat == 0, hasPinnedColumns, shape.readsInBinary {
                resultFormat = 1
            }
        }

        /// Asks for binary results from the next execution when its result columns, of
        /// `columnTypes` as the server described them before the first one, all read the
        /// same in binary (``PostgresRows/Shape/readsInBinary``).
        func readsInBinary(columnTypes: [UInt32]) {
            guard hasPinnedColumns, !columnTypes.isEmpty, PostgresRows.Shape.readInBinary(columnTypes) else { return }
            resultFormat = 1
        }

        /// The number of positional arguments bound where they are stored when exactly that
        /// many are given (no parameter is a list sent as an array); -1 when none are.
        private let inPlaceCount: Int

        /// Calls `body` with the values to bind (see ``PostgresStatementText/values(for:)``):
        /// positional arguments that match the parameters one for one, none of them a list
        /// sent as an array, are passed where they are stored, without making an array per
        /// execution. (Decided by the count kept above: matching the text's parameters and
        /// list set at every execution cost ~60 instructions a call, callgrind, W7 on
        /// PostgreSQL.)
        func withValues<R>(
            for arguments: StatementArguments, _ body: (UnsafeBufferPointer<DatabaseValue>) throws -> R
        ) throws -> R {
            if inPlaceCount >= 0, arguments.positionalCount == inPlaceCount {
                return try arguments.withPositionalValues(body)
            }
            return try text.values(for: arguments).withUnsafeBufferPointer(body)
        }

        init(text: PostgresStatementText, name: String?, changesSchema: Bool) {
            self.text = text
            if text.arrayParameters.isEmpty, case .positional(let count) = text.parameters {
                inPlaceCount = count
            } else {
                inPlaceCount = -1
            }
            self.name = name
            cName = name?.utf8CString
            self.changesSchema = changesSchema
            role = StatementRole(of: text.sql)
            hasPlannedResult = PostgresConnection.hasPlannedResult(text.sql)
        }
    }

    static let statementCacheCapacity = 256

    /// Connects with `connectionString` (a libpq keyword string or a `postgresql://` URI)
    /// and sets the session up: UTC time zone, UTF-8, ISO dates, the statement timeout.
    /// Opening never waits on a server past the connect timeout or the call's stop (see
    /// ``PostgresConnect``).
    init(
        connectionString: String, configuration: PostgresConfiguration, name: String, cancelSender: StopRequestSender,
        openings: PostgresConnect.Openings? = nil
    ) throws {
        self.configuration = configuration
        self.name = name
        cancelRequests = PendingStopRequests(sender: cancelSender)
        guard !connectionString.utf8.contains(0) else {
            throw DALError(.invalidValue, "the connection string contains a NUL character")
        }
        let connection: OpaquePointer
        do {
            connection = try PostgresConnect.open(
                connectionString, configuration: configuration, name: name, openings: openings)
        } catch let error as PostgresError {
            var named = PostgresError(
                sqlState: error.sqlState, message: "cannot connect to PostgreSQL (\(name)): \(error.message)")
            named.isRefusedLogin = error.isRefusedLogin
            throw named
        }
        self.connection = connection
        socket = PQsocket(connection)
        // libpq prints notices to stderr by default: a library must not. Warnings are noted
        // (see `checkCommitConfirmed`), everything else dropped.
        PQsetNoticeReceiver(
            connection,
            { log, notice in
                guard let log, let notice,
                    let severity = PQresultErrorField(notice, swiftdal_pg_diag_severity_nonlocalized),
                    strcmp(severity, "WARNING") == 0,
                    let state = PQresultErrorField(notice, swiftdal_pg_diag_sqlstate), strcmp(state, "01000") == 0
                else { return }
                Unmanaged<NoticeLog>.fromOpaque(log).takeUnretainedValue().sawWarning = true
            }, Unmanaged.passUnretained(notices).toOpaque())
        canceller = CancelHandle(connection)
        // The session's setup (the client encoding, the SETs) waits on the server as no
        // call's control can stop it yet: a server that finished the handshake and then
        // hangs (a pooler queueing the session behind a full server, a server frozen
        // after authentication) would hold the call for good. Its socket is shut down
        // once the connect timeout (or the call's time limit, if sooner) has passed, or
        // the call is stopped (which then throws its stop's error).
        var limit = PostgresConnect.connectTimeout(in: connectionString) ?? configuration.connectTimeout
        if let left = CallLimits.leftForOpening(callTimeout: configuration.callTimeout), left < limit { limit = left }
        let watch = SocketWatch(socket: socket, limit: limit)
        let unfinished = PostgresError(
            sqlState: "08001",
            message: "cannot connect to PostgreSQL (\(name)): the server did not finish setting up the session "
                + "within \(limit) (the connect timeout, or the call's time limit)")
        do {
            try setUpSession(name: name)
            guard watch.finish() else { throw watch.error(otherwise: unfinished) }
        } catch {
            throw watch.finish() ? error : watch.error(otherwise: unfinished)
        }
    }

    /// Sets the session up once connected: UTF-8, and unless behind transaction pooling,
    /// UTC, ISO dates, exact floats, hex bytea, the statement timeout, the client check.
    private func setUpSession(name: String) throws {
        guard let connection else { return }
        // UTF-8 both ways. The server reports its client encoding at connection start (the
        // database's encoding unless configured otherwise): a round trip to set it only
        // when it is another.
        let encoding = PQparameterStatus(connection, "client_encoding").map { String(cString: $0) }
        guard encoding == "UTF8" || PQsetClientEncoding(connection, "UTF8") == 0 else {
            // Closed by `deinit`, after the caller has finished its setup watch.
            throw PostgresError(
                sqlState: "08001", message: "cannot connect to PostgreSQL (\(name)): the server refuses UTF-8")
        }
        guard !configuration.transactionPooling else { return }
        // Floats as their shortest exact digits and bytea as hex whatever the database's or
        // role's defaults: text results then read as binary ones do (see `PostgresRows`).
        var settings = [
            "SET TimeZone TO 'UTC'", "SET DateStyle TO 'ISO, YMD'", "SET standard_conforming_strings TO on",
            "SET extra_float_digits TO 3", "SET bytea_output TO 'hex'"
        ]
        if let timeout = configuration.statementTimeout {
            settings.append(
                // At least 1 ms (0 would mean none), at most PostgreSQL's largest (about 24.8 days).
                "SET statement_timeout TO \(min(max(1, timeout.clampedMilliseconds), Int64(Int32.max)))"
            )
        }
        try executeScript(settings.joined(separator: "; "))
        if let interval = configuration.clientConnectionCheckInterval, PQserverVersion(connection) >= 140_000 {
            // On its own, and a refusal ignored: a server whose platform cannot tell that a
            // client went away (Windows; before PostgreSQL 15, systems other than Linux)
            // refuses any value but 0, and the check is then left off. At least 1 ms (0
            // would turn it off), at most PostgreSQL's largest.
            let milliseconds = min(max(1, interval.clampedMilliseconds), Int64(Int32.max))
            _ = try? executeScript("SET client_connection_check_interval TO \(milliseconds)")
            if failed { throw connectionError(sql: nil) }
        }
    }

    deinit {
        PQfinish(connection)
    }

    func cancelRunningStatement() {
        cancelRequested.store(true, ordering: .sequentiallyConsistent)
        guard let canceller else { return }
        cancelRequests.send { canceller.cancelRunningStatement() }
        let requests = cancelRequests
        pipelineResends.callStopped(for: configuration.stopGracePeriod) {
            requests.send { canceller.cancelRunningStatement() }
        }
    }

    var interruptGracePeriod: Duration? { configuration.stopGracePeriod }

    /// A session can fail, or be ended by the server.
    var mayBreak: Bool { true }

    /// The session's statements are reported by ``Database`` around each call.
    var reportsItsStatements: Bool { false }

    /// The bulk path: `COPY … FROM STDIN`.
    var hasBulkPath: Bool { true }

    /// A stream reads through a server cursor, which lives in a transaction.
    var streamsInATransaction: Bool { true }

    /// Nothing to do: a stream's cursor ends with its call.
    func accessEnding() {}

    func abandon() {
        guard !abandoned.exchange(true, ordering: .acquiringAndReleasing), socket >= 0 else { return }
        shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Throws when the connection may not send `sql` now: it broke, it was abandoned, or
    /// its call was stopped (only a `ROLLBACK` runs then, once the cancel request has been
    /// answered; a connection whose request is never answered is broken).
    private func checkMaySend(_ sql: @autoclosure () -> String, role: StatementRole) throws {
        if failed || abandoned.load(ordering: .acquiring) { throw notSentError(sql()) }
        notices.sawWarning = false
        guard cancelRequested.load(ordering: .sequentiallyConsistent) else { return }
        guard role == .rollback else {
            throw PostgresError(sqlState: "57014", message: "canceling statement due to user request", sql: sql())
        }
        guard cancelRequests.settle(waitingAtMost: configuration.stopGracePeriod) else {
            failed = true
            throw PostgresError(
                sqlState: "08006",
                message: "the server did not answer a cancel request within \(configuration.stopGracePeriod): "
                    + "the connection is closed (the server rolls its transaction back)", sql: sql())
        }
    }

    var engine: DatabaseEngine { .postgres }

    /// `EXPLAIN` of the generic plan (the one used whatever the parameters' values):
    /// prepared under `force_generic_plan`, explained with NULL parameters, with
    /// sequential scans discouraged. Runs inside the caller's transaction when there is
    /// one (`SET LOCAL`), and leaves no prepared statement behind.
    func queryPlan(of sql: String) throws -> [String] {
        let text = try PostgresStatementText(postgresText(sql))
        let count: Int
        switch text.parameters {
        case .positional(let positional): count = positional
        case .named(let names): count = names.count
        }
        let scope = isInTransaction ? "LOCAL " : ""
        try executeScript("SET \(scope)plan_cache_mode = force_generic_plan; SET \(scope)enable_seqscan = off")
        defer {
            if scope.isEmpty { try? executeScript("RESET plan_cache_mode; RESET enable_seqscan") }
        }
        try executeScript("PREPARE swiftdal_plan AS " + text.sql)
        defer { try? executeScript("DEALLOCATE swiftdal_plan") }
        let arguments = count == 0 ? "" : "(" + Array(repeating: "NULL", count: count).joined(separator: ", ") + ")"
        try checkMaySend("EXPLAIN", role: .read)
        let result = PQexec(try openConnection(), "EXPLAIN EXECUTE swiftdal_plan" + arguments)
        var lines = [String]()
        _ = try consume(result, sql: "EXPLAIN " + text.sql) { row in lines.append(try row.decode(String.self, at: 0)) }
        return lines
    }

    var isBroken: Bool {
        guard let connection else { return true }
        return failed || abandoned.load(ordering: .relaxed) || PQstatus(connection) != CONNECTION_OK
    }

    func wasClosedWhileIdle() -> Bool {
        guard let connection, !isBroken else { return true }
        guard socket >= 0 else { return false }
        // Anything to read on an idle connection: the server's goodbye (a FATAL error, then
        // the end of the stream), or an asynchronous message (a notice) that changes nothing.
        // Read what is there (a message, then the end of the stream on a later read).
        for _ in 0..<8 {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0, PQconsumeInput(connection) == 1 else { break }
        }
        return PQstatus(connection) != CONNECTION_OK
    }

    var isInTransaction: Bool {
        guard let connection else { return false }
        return PQtransactionStatus(connection) != PQTRANS_IDLE
    }

    func close() {
        PQfinish(connection)
        connection = nil
    }

    private func openConnection() throws -> OpaquePointer {
        guard let connection else { throw DALError(.connectionClosed, "the connection to \(name) is closed") }
        return connection
    }

    // MARK: Statements

    func run(_ query: SQL, _ body: (RowView) throws -> Void) throws -> Int {
        guard configuration.transactionPooling else { return try run(query, prepared: true, body) }
        return try runPooled(query, body)
    }

    // MARK: Dates behind a pooler

    /// `run` behind a pooler in transaction mode, where no session setting holds: dates
    /// must still be read and written in UTC, whatever the server's `TimeZone`, and text
    /// results read exactly (floats to their last digit, bytea in hex), whatever the
    /// database's or role's defaults. Every transaction begins with `SET LOCAL`s of these
    /// (in the same round trip as its `BEGIN`), and a statement outside a transaction that
    /// binds a date (SwiftDAL's text form of one), or returns rows from a server whose own
    /// settings would round them (``serverSettingsReadExactly``), runs in a transaction of
    /// its own that does the same. Without it a `Date` was stored shifted by the server's
    /// offset and read back shifted, and under `extra_float_digits = 0` a `Double` read
    /// back rounded to 15 digits.
    private func runPooled(_ query: SQL, _ body: (RowView) throws -> Void) throws -> Int {
        let sql = query.sql
        if ["begin", "start"].contains(StatementStart.firstWord(of: sql, limit: 6).word), query.arguments.isEmpty {
            // On a line of its own: a `BEGIN -- by hand` would comment the settings out.
            try executeScript(sql + "\n; " + Self.pooledTransactionSettings)
            return 0
        }
        guard !isInTransaction,
            try query.arguments.containsDateText || (Self.returnsRows(sql) && !settingsReadExactly())
        else { return try run(query, prepared: true, body) }
        try executeScript("BEGIN; " + Self.pooledTransactionSettings)
        let changed: Int
        // An error of `body` (reading the rows) leaves the statement done on the server,
        // as it would be outside this transaction: committed, then the error thrown.
        var rowError: (any Error)?
        do {
            changed = try run(query, prepared: true) { row in
                do { try body(row) } catch {
                    rowError = error
                    throw error
                }
            }
        } catch {
            guard let rowError, isInTransaction else {
                if isInTransaction { _ = try? executeScript("ROLLBACK") }
                throw error
            }
            try executeScript("COMMIT")
            throw rowError
        }
        try executeScript("COMMIT")
        return changed
    }

    /// Whether the server's own settings read text results exactly (see
    /// ``serverSettingsReadExactly``), asked once.
    private func settingsReadExactly() throws -> Bool {
        if let serverSettingsReadExactly { return serverSettingsReadExactly }
        guard let connection else { return true }
        let digits = PQserverVersion(connection) >= 120_000 ? 1 : 3
        var exact = true
        try uncounted {
            _ = try run(
                SQL(
                    sql: "SELECT CAST(current_setting('extra_float_digits') AS integer) >= \(digits) "
                        + "AND current_setting('bytea_output') = 'hex'"),
                prepared: false
            ) { row in exact = try row.decode(Bool.self, at: 0) }
        }
        serverSettingsReadExactly = exact
        return exact
    }

    private static let pooledTransactionSettings =
        "SET LOCAL TimeZone TO 'UTC'; SET LOCAL extra_float_digits TO 3; SET LOCAL bytea_output TO 'hex'"

    /// `run`; a statement sent once (`prepared` false) goes unnamed and is not cached.
    private func run(_ query: SQL, prepared isPrepared: Bool, _ body: (RowView) throws -> Void) throws -> Int {
        if let error = query.arguments.conversionError { throw error }
        var statement =
            isPrepared
            ? try prepared(query.sql)
            : PreparedStatement(
                text: try PostgresStatementText(postgresText(query.sql)), name: nil,
                changesSchema: Self.isSchemaChange(query.sql))
        let autocommit = !isInTransaction
        // PostgreSQL answers the COMMIT of a transaction an error aborted (a failed statement
        // whose error was caught) with "ROLLBACK" and no error: nothing of it was written.
        let commitsAnAbortedTransaction =
            statement.role == .commit && connection.map { PQtransactionStatus($0) == PQTRANS_INERROR } == true
        do {
            var result = try statement.withValues(for: query.arguments) { try execute(statement, $0) }
            if Self.isStalePlan(result) {
                // Another connection's schema change altered a prepared statement's result
                // columns: prepare it again. Inside a transaction the failure has aborted it:
                // the error is thrown, and the cached statements are dropped so that the
                // next run prepares them anew (it failed on every run before).
                if isInTransaction {
                    dropCachedStatements()
                } else {
                    PQclear(result)
                    try forget(query.sql)
                    statement = try prepared(query.sql)
                    result = try statement.withValues(for: query.arguments) { try execute(statement, $0) }
                }
            }
            let affected = try consume(result, sql: statement.text.sql, statement: statement, body)
            if commitsAnAbortedTransaction {
                throw PostgresError(
                    sqlState: "25P02",
                    message: "the transaction was aborted by an earlier error (caught, not rethrown): COMMIT rolled it "
                        + "back, and nothing of it was written. Use a savepoint (inSavepoint) around a statement "
                        + "whose error you handle",
                    sql: query.sql)
            }
            if notices.sawWarning {
                try checkCommitConfirmed(role: statement.role, autocommit: autocommit, sql: query.sql)
            }
            if statement.changesSchema { try clearStatementCacheAfterSchemaChange() }
            return affected
        } catch {
            if statement.role == .rollback {
                return try rollbackFailed(error, statement: statement)
            }
            throw outcome(of: error, role: statement.role, autocommit: autocommit, sql: statement.text.sql)
        }
    }

    /// A `ROLLBACK` that failed. A cancel request can still reach the server just after the
    /// statement it was meant for ended, and stop the rollback instead: it is sent once
    /// more then. A rollback that fails otherwise (or twice) leaves the connection broken:
    /// its pool closes it, and the server rolls the transaction back as the session ends.
    private func rollbackFailed(_ error: any Error, statement: PreparedStatement) throws -> Int {
        if (error as? PostgresError)?.sqlState == "57014", !failed, isInTransaction {
            do {
                return try consume(
                    try execute(statement, UnsafeBufferPointer(start: nil, count: 0)), sql: statement.text.sql
                ) { _ in }
            } catch {
                failed = true
                throw error
            }
        }
        failed = true
        throw error
    }

    /// The error a call sees for `error`: when the connection was lost while a statement that
    /// commits was in flight (a `COMMIT`, or a write outside a transaction), whether it
    /// committed is unknown, and the error says so (``SwiftDAL/DALError/Code/outcomeUnknown``).
    private func outcome(of error: any Error, role: StatementRole, autocommit: Bool, sql: String) -> any Error {
        guard role == .commit || (autocommit && role == .write) else { return error }
        // A statement refused before it was sent (its connection had broken, or was never
        // open) changed nothing: a COMMIT refused so committed nothing.
        if (error as? PostgresError)?.wasSent == false || (error as? DALError)?.code == .connectionClosed {
            return error
        }
        // An error the server sent in answer (57P01 at a shutdown included) means the
        // statement failed: nothing committed. Unknown is a connection that went away
        // without an answer, or one abandoned because its server did not answer.
        let lost = abandoned.load(ordering: .acquiring) || (error as? PostgresError)?.isFromServer == false
        guard lost else { return error }
        return DALError(
            .outcomeUnknown,
            "the connection to \(name) was lost while a statement that commits was in flight: it may or may not "
                + "have committed. Check before retrying (read the row, or use an idempotency key)",
            sql: sql, underlying: error)
    }

    /// Throws ``SwiftDAL/DALError/Code/outcomeUnknown`` for a statement that commits (a
    /// `COMMIT`, or a write outside a transaction) and succeeded only because this call's
    /// stop ended its wait for a synchronous standby. PostgreSQL then keeps the commit on
    /// the primary and answers with a warning ("canceling wait for synchronous
    /// replication … The transaction has already committed locally, but might not have
    /// been replicated to the standby"): the write is there now, but no standby confirmed
    /// it, and a failover can lose it. Reported committed, a write a failover lost had
    /// been acknowledged; reported rolled back, a write still there would be retried.
    /// (Matched by its SQLSTATE and severity, which do not depend on the server's
    /// language; a trigger's own `RAISE WARNING` on a stopped commit is reported the same,
    /// the cautious way.)
    private func checkCommitConfirmed(role: StatementRole, autocommit: Bool, sql: String) throws {
        notices.sawWarning = false
        guard role == .commit || (autocommit && role == .write),
            cancelRequested.load(ordering: .sequentiallyConsistent)
        else { return }
        throw DALError(
            .outcomeUnknown,
            "the call was stopped while its commit waited for a synchronous standby of \(name): the transaction "
                + "committed there, but no standby confirmed it, and a failover may lose it. Check before retrying "
                + "(read the row, or use an idempotency key)",
            sql: sql)
    }

    // MARK: Batches

    /// How many statements of a batch are sent before their results are read. What the
    /// server sends back for them (some 20 bytes for a write) stays far within the sockets'
    /// buffers, so that the server never blocks writing results while this side still
    /// writes statements.
    static let pipelineDepth = 1_000

    /// Inside a transaction the statements are pipelined (libpq's pipeline mode): a thousand
    /// sent, then a sync, then their results read; the first error aborts the rest of the
    /// transaction on the server, and every statement after it comes back "aborted".
    /// Behind PgBouncer's transaction pooling the statements go unnamed, in the pipeline of
    /// the server connection that holds the transaction. Outside a transaction they run one
    /// by one (each commits on its own, as the caller asked).
    func runBatch(
        count: Int, _ query: (Int) throws -> SQL, row: (Int, RowView) throws -> Void, ended: BatchStatementEnded?
    ) throws -> Int {
        guard isInTransaction else {
            var changed = 0
            for index in 0..<count {
                let statement = try query(index)
                let sent = ended == nil ? nil : MonotonicTime.now
                do {
                    let rows = try run(statement) { try row(index, $0) }
                    if let ended, let sent { ended(statement.sql, sent, rows, nil) }
                    changed += rows
                } catch {
                    if let ended, let sent { ended(statement.sql, sent, 0, error) }
                    throw Self.error(error, at: index)
                }
            }
            return changed
        }
        var changed = 0
        var first = 0
        while first < count {
            let end = min(count, first + Self.pipelineDepth)
            changed += try runPipeline(first..<end, query, row, ended)
            first = end
        }
        return changed
    }

    /// A statement sent in a pipeline, whose results are still to be read.
    private struct Sent {
        /// Its position in the batch.
        let index: Int
        /// The text sent (placeholders `$1…$n`), which errors carry.
        let sql: String
        /// The text as the caller wrote it (its own placeholders), which the observer is
        /// told, as it is of a statement run alone, and which the statement is cached by.
        let written: String
        /// When it was sent (only taken for an observer).
        let time: MonotonicTime?
        /// The statement, whose result shape is reused from one result to the next (a
        /// column layout built per result cost ~2,500 instructions a row); `nil` for a
        /// preparation.
        let statement: PreparedStatement?
        /// Whether this is the preparation of the statement at `index`, not the statement.
        let isPreparation: Bool
        /// Whether it is a statement prepared on the server (and cached).
        var isCached: Bool { statement?.name != nil }
    }

    /// Sends the statements at `indices` in one pipeline, then reads their results.
    private func runPipeline(
        _ indices: Range<Int>, _ query: (Int) throws -> SQL, _ row: (Int, RowView) throws -> Void,
        _ ended: BatchStatementEnded?
    ) throws -> Int {
        let connection = try openConnection()
        var sent = [Sent]()
        sent.reserveCapacity(indices.count)
        guard PQenterPipelineMode(connection) == 1 else { throw broken(sql: nil) }
        pipelineResends.pipelineBegins()
        defer { pipelineResends.pipelineEnded() }
        // An error making or sending a statement stops sending; what was sent is still read
        // (so that the connection leaves pipeline mode in order), then the error is thrown.
        var stopped: (any Error)?
        var schemaChanged = false
        for index in indices {
            do {
                let statement = try query(index)
                if let error = statement.arguments.conversionError { throw error }
                let text = statement.sql
                try checkMaySend(text, role: .write)
                let (prepared, preparation) = try pipelinedStatement(text)
                if let preparation, let name = prepared.name {
                    guard PQsendPrepare(connection, name, preparation, 0, nil) == 1 else {
                        throw broken(sql: preparation)
                    }
                    sent.append(
                        Sent(
                            index: index, sql: preparation, written: statement.sql,
                            time: ended == nil ? nil : .now, statement: nil, isPreparation: true))
                }
                let accepted = try prepared.withValues(for: statement.arguments) { values in
                    try withParameters(values, sql: prepared.text.sql) { count, pointers, lengths, formats in
                        if let name = prepared.cName {
                            return name.withUnsafeBufferPointer { name in
                                PQsendQueryPrepared(
                                    connection, name.baseAddress, count, pointers, lengths, formats,
                                    prepared.resultFormat)
                            }
                        }
                        return PQsendQueryParams(
                            connection, prepared.text.sql, count, nil, pointers, lengths, formats, prepared.resultFormat
                        )
                    }
                }
                guard accepted == 1 else { throw broken(sql: prepared.text.sql) }
                sent.append(
                    Sent(
                        index: index, sql: prepared.text.sql, written: statement.sql,
                        time: ended == nil ? nil : .now, statement: prepared, isPreparation: false))
                schemaChanged = schemaChanged || prepared.changesSchema
            } catch {
                if failed { throw error }
                stopped = Self.error(error, at: index)
                break
            }
        }
        guard PQpipelineSync(connection) == 1 else { throw broken(sql: sent.last?.sql) }
        var changed = 0
        var firstError: (any Error)? = nil
        for statement in sent {
            var rowCount = 0
            var error: (any Error)?
            var ran = false  // false for a statement skipped after an earlier one failed
            while let result = PQgetResult(connection) {
                switch PQresultStatus(result) {
                case PGRES_COMMAND_OK:
                    ran = true
                    rowCount = Self.affectedRows(result)
                    if !statement.isPreparation { completedStatements += 1 }
                case PGRES_TUPLES_OK:
                    ran = true
                    completedStatements += 1
                    // Frees the result when released.
                    let rows = PostgresRows(
                        result: result, shape: statement.statement?.shape,
                        typesPinned: statement.statement?.hasPinnedColumns ?? false)
                    statement.statement?.adopt(rows)
                    if rows.shape.isBinary { binaryResults += 1 }
                    rowCount = rows.rowCount
                    let view = EngineResult(rows)
                    do {
                        for number in 0..<rows.rowCount { try row(statement.index, RowView(result: view, row: number)) }
                    } catch let thrown where firstError == nil {
                        firstError = thrown  // the rest is still read, then this is thrown
                    } catch {}
                    continue
                case PGRES_PIPELINE_ABORTED:
                    break  // not run: an earlier statement failed
                default:
                    ran = true
                    // Another session changed its result columns: the pipeline's transaction
                    // fails, and the cached statements are dropped so that the next use
                    // prepares them anew (it failed on every run before).
                    if statement.isCached, Self.isStalePlan(result) { dropCachedStatements() }
                    let failure = Self.error(of: result, sql: statement.sql)
                    if failure.isConnectionFailure { failed = true }
                    error = failure
                }
                PQclear(result)
            }
            if statement.isPreparation, !ran || error != nil {
                // Not prepared on the server (failed, or skipped after an earlier statement
                // failed): the next use prepares it again.
                lastStatement = nil
                statements.removeValue(forKey: statement.written)
            }
            guard PQstatus(connection) == CONNECTION_OK else {
                // The connection went away (or was abandoned) before every result came.
                let lost = broken(sql: statement.sql)
                if let ended, let time = statement.time { ended(statement.written, time, 0, lost) }
                throw firstError ?? Self.error(lost, at: statement.index)
            }
            // The observer hears of the statements that ran, not of those skipped; a failed
            // preparation is its statement's failure (the statement itself is then skipped).
            if ran, !statement.isPreparation || error != nil, let ended, let time = statement.time {
                ended(statement.written, time, rowCount, error)
            }
            if let error, firstError == nil { firstError = Self.error(error, at: statement.index) }
            changed += rowCount
        }
        let sync = PQgetResult(connection)
        let synced = sync.map { PQresultStatus($0) == PGRES_PIPELINE_SYNC } ?? false
        PQclear(sync)
        guard synced, PQexitPipelineMode(connection) == 1 else {
            let lost = broken(sql: sent.last?.sql)
            throw firstError ?? lost
        }
        if let error = firstError ?? stopped { throw error }
        if schemaChanged { try clearStatementCache() }
        return changed
    }

    /// The prepared statement for `sql` in a pipeline, and the text to prepare it with when
    /// it is new (pipeline mode allows no synchronous `PQprepare`: it is prepared in the
    /// pipeline, just before its first execution). With the cache full, a new statement
    /// is sent unnamed.
    private func pipelinedStatement(_ sql: String) throws -> (PreparedStatement, preparation: String?) {
        if let statement = cachedStatement(sql) { return (statement, nil) }
        let text = try PostgresStatementText(postgresText(sql))
        guard isPreparedOnServer(sql) else {
            return (cache(PreparedStatement(text: text, name: nil, changesSchema: Self.isSchemaChange(sql)), sql), nil)
        }
        guard statements.count < Self.statementCacheCapacity else {
            return (PreparedStatement(text: text, name: nil, changesSchema: Self.isSchemaChange(sql)), nil)
        }
        let statement = PreparedStatement(
            text: text, name: nextStatementName(), changesSchema: Self.isSchemaChange(sql))
        return (cache(statement, sql), text.sql)
    }

    /// Marks the connection broken; the error for a connection that failed.
    private func broken(sql: String?) -> PostgresError {
        failed = true
        return connectionError(sql: sql)
    }

    /// `error`, carrying `index` when it is the engine's error and the item's own doing (not
    /// a lost connection, a stop, or a plan another session's schema change made stale).
    private static func error(_ error: any Error, at index: Int) -> any Error {
        guard var error = error as? PostgresError, error.concernsTheBatchItem, !error.isStalePlan else { return error }
        error.batchIndex = index
        return error
    }

    // MARK: Bulk loading

    /// `COPY table (columns) FROM STDIN` in text format: each row's values escaped as COPY
    /// reads them (the same input functions as the text parameters of an `INSERT`), sent
    /// 64 KiB at a time. A row that fails is named by the line the server's context gives
    /// (the context itself, which quotes values, is not kept). `nil`, before anything is
    /// sent, for a table where `COPY` would not do what `INSERT`s do (`copyAccepts`).
    func copyRows(
        into table: String, columns: [String], blobColumns: Set<Int>, count: Int,
        _ row: (Int, inout [DatabaseValue]) throws -> Void
    ) throws -> Int? {
        guard try copyAccepts(table, columns, blobColumns: blobColumns) else { return nil }
        let sql = Database.copySQL(table, columns)
        let connection = try openConnection()
        try checkMaySend(sql, role: .other)
        let autocommit = !isInTransaction
        guard let start = PQexec(connection, sql) else {
            failed = true
            throw connectionError(sql: sql)
        }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try consume(start, sql: sql) { _ in }  // throws the server's error
            throw DALError(.invalidSQL, "COPY did not start", sql: sql)
        }
        PQclear(start)
        var buffer = [UInt8]()
        buffer.reserveCapacity(Self.copyChunk + 4096)
        var values = [DatabaseValue]()
        var abort: (any Error)?
        func send() throws {
            // In slices libpq's `int` length holds, whatever one value's size.
            var sent = 0
            while sent < buffer.count {
                let length = min(buffer.count - sent, Self.copyChunk)
                let accepted = buffer.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) {
                        PQputCopyData(connection, $0.baseAddress?.advanced(by: sent), Int32(length))
                    }
                }
                guard accepted == 1 else {
                    failed = true
                    throw connectionError(sql: sql)
                }
                sent += length
            }
            buffer.removeAll(keepingCapacity: true)
        }
        do {
            for index in 0..<count {
                values.removeAll(keepingCapacity: true)
                try row(index, &values)
                guard values.count == columns.count else {
                    throw DALError(
                        .argumentMismatch, "row \(index) has \(values.count) values for \(columns.count) columns",
                        sql: sql)
                }
                for (position, value) in values.enumerated() {
                    if position > 0 { buffer.append(0x09) }
                    try Self.appendCopyText(value, to: &buffer, sql: sql)
                }
                buffer.append(0x0A)
                if buffer.count >= Self.copyChunk {
                    try send()
                    // A call stopped meanwhile (its limit, a cancel): the server has ended the
                    // COPY, but libpq shows it only at the end; nothing more is sent.
                    if cancelRequested.load(ordering: .sequentiallyConsistent) {
                        throw PostgresError(
                            sqlState: "57014", message: "canceling statement due to user request", sql: sql)
                    }
                }
            }
            if !buffer.isEmpty { try send() }
        } catch {
            if failed { throw error }
            abort = error
        }
        // Ends the COPY; a row that could not be encoded, or a stop, aborts it (nothing is loaded).
        guard PQputCopyEnd(connection, abort == nil ? nil : "the load was stopped by the client") == 1 else {
            failed = true
            throw connectionError(sql: sql)
        }
        var loaded = 0
        var serverError: PostgresError?
        while let result = PQgetResult(connection) {
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK {
                loaded = Self.affectedRows(result)
                completedStatements += 1
            } else if serverError == nil {
                var error = Self.error(of: result, sql: sql)
                if error.concernsTheBatchItem { error.batchIndex = Self.copyLine(of: result).map { $0 - 1 } }
                serverError = error
            }
            PQclear(result)
            // A connection that failed mid-COPY has no more to say.
            if status == PGRES_FATAL_ERROR && PQstatus(connection) == CONNECTION_BAD { failed = true }
            if failed { break }
        }
        if let abort { throw abort }
        if let serverError { throw serverError }
        // A COPY outside a transaction commits on its own.
        if notices.sawWarning { try checkCommitConfirmed(role: .write, autocommit: autocommit, sql: sql) }
        return loaded
    }

    /// Whether `COPY` into `table` (quoted) of `columns` does what `INSERT`s of them do:
    /// not for a view or another kind of relation, a table with row-level security (`COPY
    /// FROM` refuses it) or with rules (which `COPY` ignores), a `GENERATED ALWAYS`
    /// identity column given a value (which `INSERT` refuses and `COPY` takes), or bytes
    /// in a column that is not `bytea` (bound in binary by an `INSERT`; `COPY`'s text has
    /// no such form). One catalog query, not counted as an answer.
    private func copyAccepts(_ table: String, _ columns: [String], blobColumns: Set<Int>) throws -> Bool {
        try uncounted {
            var plain = false
            var attributes = [String: (always: Bool, bytea: Bool)]()
            _ = try run(
                """
                SELECT c.relkind IN ('r', 'p') AND NOT c.relrowsecurity AND NOT c.relhasrules, a.attname::text,
                    a.attidentity = 'a', a.atttypid = 'bytea'::regtype
                FROM pg_class c
                    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                WHERE c.oid = to_regclass(\(table))
                """, prepared: false
            ) { row in
                plain = try row.decode(Bool.self, at: 0)
                if let name = try row.decode(String?.self, at: 1) {
                    attributes[name] = (
                        try row.decode(Bool?.self, at: 2) ?? false, try row.decode(Bool?.self, at: 3) ?? false
                    )
                }
            }
            guard plain else { return false }
            for (position, column) in columns.enumerated() {
                // (A column the table lacks: COPY names it in its error, as INSERT would.)
                guard let attribute = attributes[column] else { continue }
                if attribute.always || (blobColumns.contains(position) && !attribute.bytea) { return false }
            }
            return true
        }
    }

    /// Bytes of COPY data sent at a time.
    private static let copyChunk = 1 << 16

    /// The line of COPY data a failed COPY names in its context, 1-based: the first number
    /// after the comma of its `COPY <table>, line 42` line (in any language of the
    /// server's messages). A check that runs after the row (a foreign key, a deferred
    /// constraint) has no line.
    private static func copyLine(of result: OpaquePointer) -> Int? {
        guard let context = PQresultErrorField(result, swiftdal_pg_diag_context).map({ String(cString: $0) }) else {
            return nil
        }
        for line in context.split(separator: "\n") where line.hasPrefix("COPY ") {
            guard let comma = line.firstIndex(of: ",") else { continue }
            let digits = line[comma...].drop { !$0.isASCII || !$0.isNumber }.prefix { $0.isASCII && $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    /// Appends `value` as COPY's text format spells it: `\N` for NULL, a backslash before
    /// a backslash, and tabs, newlines and carriage returns escaped; bytes in bytea's hex
    /// form.
    static func appendCopyText(_ value: DatabaseValue, to bytes: inout [UInt8], sql: String) throws {
        switch value {
        case .null:
            bytes.append(0x5C)
            bytes.append(0x4E)
        case .integer(let integer):
            appendDecimal(integer, to: &bytes)
        case .real(let double):
            bytes.append(contentsOf: SwiftDALConnection.postgresText(of: double).utf8)
        case .text(var text):
            // Most text holds nothing to escape: then its bytes go in one copy.
            let plain = text.withUTF8 { utf8 in
                !utf8.contains { $0 == 0x5C || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0 }
            }
            if plain {
                bytes.append(contentsOf: text.utf8)
                return
            }
            for byte in text.utf8 {
                switch byte {
                case 0:
                    throw DALError(
                        .invalidValue, "PostgreSQL text cannot hold a NUL character; store such values as Data (bytea)",
                        sql: sql)
                case 0x5C:
                    bytes.append(0x5C)
                    bytes.append(0x5C)
                case 0x0A:
                    bytes.append(0x5C)
                    bytes.append(0x6E)
                case 0x0D:
                    bytes.append(0x5C)
                    bytes.append(0x72)
                case 0x09:
                    bytes.append(0x5C)
                    bytes.append(0x74)
                default: bytes.append(byte)
                }
            }
        case .blob(let data):
            // bytea's hex input, `\x…`, its backslash escaped for COPY.
            bytes.append(0x5C)
            bytes.append(0x5C)
            bytes.append(0x78)
            bytes.reserveCapacity(bytes.count + 2 * data.count)
            for byte in data {
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0F))
            }
        }
    }

    /// The lowercase hex digit of `nibble` (0–15), as ASCII.
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x57 + nibble
    }

    // MARK: Streams

    /// Reads the rows of `query` through a server-side cursor in the open transaction:
    /// `DECLARE … NO SCROLL CURSOR FOR <query>` (its values bound, as in every statement),
    /// then `FETCH FORWARD <fetchSize>` until a batch comes back short, then `CLOSE`. Only
    /// one batch is in memory at a time.
    ///
    /// Why a cursor rather than libpq's single-row mode: the server stops between batches
    /// and waits for the next `FETCH` (backpressure without holding a result, or a socket,
    /// half read), and a stream stopped early costs one `CLOSE` or the transaction's
    /// rollback, where single-row mode would have to read or cancel the rest of the
    /// result before the connection could run anything else. The cursor lives and dies
    /// inside the read transaction, so it also works behind PgBouncer's transaction
    /// pooling (which single-row mode does too, but a session-level `WITH HOLD` cursor
    /// would not).
    func stream(_ query: SQL, fetchSize: Int, _ body: (RowView) throws -> Void) throws -> Int {
        if let error = query.arguments.conversionError { throw error }
        guard isInTransaction else {
            throw DALError(
                .unsupportedOperation, "a PostgreSQL stream reads through a cursor, which needs a transaction",
                sql: query.sql)
        }
        let size = max(1, fetchSize)
        cursorNumber += 1
        let cursor = "swiftdal_stream_\(cursorNumber)"
        let prefix = "DECLARE \(cursor) NO SCROLL CURSOR FOR "
        // Sent unnamed: the cursor's name is in the text, and it runs once.
        let declare = PreparedStatement(
            text: try PostgresStatementText(prefix + postgresText(query.sql)), name: nil, changesSchema: false)
        let sql = String(declare.text.sql.dropFirst(prefix.count))  // the query as PostgreSQL runs it, for errors
        _ = try consume(try declare.withValues(for: query.arguments) { try execute(declare, $0) }, sql: sql) { _ in
        }
        // Keeps the columns' shape from one batch to the next.
        let fetch = PreparedStatement(
            text: try PostgresStatementText("FETCH FORWARD \(size) FROM \(cursor)"), name: nil, changesSchema: false)
        var total = 0
        do {
            while true {
                var count = 0
                try checkMaySend(fetch.text.sql, role: .read)
                _ = try consume(PQexec(try openConnection(), fetch.text.sql), sql: sql, statement: fetch) { row in
                    count += 1
                    try body(row)
                }
                total += count
                if count < size { break }
            }
        } catch {
            // Closing frees the server's side now when the transaction goes on (a savepoint
            // rolled back); an aborted transaction closes it at its rollback.
            if let connection, PQtransactionStatus(connection) == PQTRANS_INTRANS {
                try? executeScript("CLOSE \(cursor)")
            }
            throw error
        }
        try executeScript("CLOSE \(cursor)")
        return total
    }

    func executeScript(_ script: String) throws {
        let connection = try openConnection()
        guard !script.utf8.contains(0) else { throw DALError(.invalidSQL, "the script contains a NUL character") }
        let role = StatementRole(of: script)
        try checkMaySend(script, role: role)
        let autocommit = !isInTransaction
        do {
            _ = try consume(PQexec(connection, script), sql: script) { _ in }
        } catch {
            if role == .rollback { failed = true }
            throw outcome(of: error, role: role, autocommit: autocommit, sql: script)
        }
        if notices.sawWarning { try checkCommitConfirmed(role: role, autocommit: autocommit, sql: script) }
        if Self.isSchemaChange(script) { try clearStatementCacheAfterSchemaChange() }
    }

    /// Whether `sql` may change the result columns of prepared statements (`ALTER`,
    /// `DROP`, `CREATE`): this connection's prepared statements are then dropped, so that
    /// none fails with "cached plan must not change result type".
    /// (A script is split at every `;`: a semicolon inside a literal costs at most an
    /// unneeded clearing of the cache.)
    /// (Read byte by byte: it runs for every script and every statement first prepared.)
    static func isSchemaChange(_ sql: String) -> Bool {
        var text = sql
        return text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                // The first word of the current statement: `alter`, `drop` or `create`? Read
                // two ways: past comments, and past any bytes that are not letters. A `;`
                // may have been inside a literal, and a `--` or `/*` after it too: read as a
                // comment it could hide a real `DROP` further on; and a real comment's words
                // (`;\n-- 42: widen\nALTER …`) must not hide the statement's either.
                let pastComments = StatementStart.packedWord(
                    in: bytes, at: StatementStart.offset(in: bytes, from: index))
                var start = index
                while start < bytes.count, !StatementStart.isLetter(bytes[start]) { start += 1 }
                let (word, length, end) = StatementStart.packedWord(in: bytes, at: start)
                if Self.changesSchema(word, length) || Self.changesSchema(pastComments.packed, pastComments.length) {
                    return true
                }
                index = end
                while index < bytes.count, bytes[index] != UInt8(ascii: ";") { index += 1 }
                index += 1
            }
            return false
        }
    }

    /// Whether a statement's first word (packed, and its length) is `alter`, `drop` or `create`.
    private static func changesSchema(_ word: Int, _ length: Int) -> Bool {
        (length == 5 && word == alter) || (length == 4 && word == drop) || (length == 6 && word == create)
    }

    /// Whether `sql` starts a transaction, ends one, or handles a savepoint.
    private static func isTransactionControl(_ sql: String) -> Bool {
        let first = StatementStart.firstWord(of: sql, limit: 10).word
        return ["begin", "start", "commit", "end", "rollback", "savepoint", "release"].contains(first)
    }

    /// Whether `sql`'s first word (after spaces and parentheses) starts a query or a DML
    /// statement: `SELECT`, `WITH`, `VALUES`, `TABLE`, `INSERT`, `UPDATE`, `DELETE`, `MERGE`,
    /// whose prepared result columns PostgreSQL keeps (a change fails as a stale plan).
    static func hasPlannedResult(_ sql: String) -> Bool {
        Self.plannedResultWords.contains(StatementStart.packedFirstWord(of: sql))
    }
    private static let plannedResultWords = Set(
        (["select", "with", "values", "table", "insert", "update", "delete", "merge"] as [StaticString])
            .map(StatementStart.packed))
    private static let queryWords = Set(
        (["select", "with", "values", "table"] as [StaticString]).map(StatementStart.packed))
    private static let alter = StatementStart.packed("alter")
    private static let drop = StatementStart.packed("drop")
    private static let create = StatementStart.packed("create")

    /// SwiftDAL's own SQLite forms that have a PostgreSQL spelling: the JSON arrays that
    /// bind long `\(values:)` lists.
    private func postgresText(_ sql: String) -> String {
        guard containsBytes(sql, "json_each(?)") else { return sql }
        return sql.replacingOccurrences(
            of: "SELECT CAST(value AS INTEGER) FROM json_each(?)",
            with: "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(? AS json))"
        ).replacingOccurrences(
            of: "SELECT value FROM json_each(?)", with: "SELECT value FROM json_array_elements_text(CAST(? AS json))")
    }

    /// The prepared statement for `sql` (SwiftDAL's text, cached by it), prepared (or
    /// rewritten) on first use.
    private func prepared(_ sql: String) throws -> PreparedStatement {
        if let statement = cachedStatement(sql) { return statement }
        let text = try PostgresStatementText(postgresText(sql))
        var name: String?
        if isPreparedOnServer(sql) {
            if statements.count >= Self.statementCacheCapacity { try clearStatementCache() }
            let statementName = nextStatementName()
            try uncounted {
                let result = PQprepare(try openConnection(), statementName, text.sql, 0, nil)
                _ = try consume(result, sql: text.sql) { _ in }
            }
            name = statementName
        }
        let statement = PreparedStatement(text: text, name: name, changesSchema: Self.isSchemaChange(sql))
        if statement.hasPinnedColumns, Self.returnsRows(text.sql), text.parameterCount <= Self.describableParameters {
            do {
                try describe(statement)
            } catch {
                // Prepared on the server but not cached: the next clearing deallocates it.
                hasUnlistedPrepared = true
                throw error
            }
        }
        return cache(statement, sql)
    }

    /// Asks the server for the result columns of `statement`, just prepared on it (one
    /// round trip, once per statement and connection: `PQdescribePrepared`), so that its
    /// first execution already asks for binary results when every column reads the same
    /// in binary (``PreparedStatement/readsInBinary(columnTypes:)``). Without it, the first
    /// result came as text and only the next ones in binary: a statement run once per
    /// connection, a `getAll()`, parsed every number from text (callgrind, W2 on
    /// PostgreSQL: ~110 instructions a row more).
    private func describe(_ statement: PreparedStatement) throws {
        guard let name = statement.name else { return }
        let description = PQdescribePrepared(try openConnection(), name)
        guard let description, PQresultStatus(description) == PGRES_COMMAND_OK else {
            // A failure (or no result: the connection was lost) is thrown as any result's.
            _ = try uncounted { try consume(description, sql: statement.text.sql) { _ in } }
            return
        }
        defer { PQclear(description) }
        let columns = Int(PQnfields(description))
        statement.readsInBinary(columnTypes: (0..<columns).map { PQftype(description, Int32($0)) })
    }

    /// The most parameters of a statement described before its first run: the server
    /// describes each parameter in 4 bytes, and libpq drops the connection at a parameter
    /// description longer than 30,000 bytes ("lost synchronization with server"). A
    /// statement of more reads its first result in text, and binary from its second
    /// (``PreparedStatement/adopt(_:)``).
    static let describableParameters = 7_000

    /// Whether `sql` returns rows when it runs: a query (`SELECT`, `WITH`, `VALUES`,
    /// `TABLE`), or a statement with `RETURNING` (as SwiftDAL writes it). Only those are
    /// described before their first execution; any other keeps its first result in text.
    static func returnsRows(_ sql: String) -> Bool {
        queryWords.contains(StatementStart.packedFirstWord(of: sql)) || containsWord(sql, "returning")
    }

    /// Whether `sql` holds `word` (lower-case ASCII letters) as a word of its own, in any
    /// case: not inside a longer name (`returning_at`). A word inside a string or a
    /// comment counts too: the answer only decides a describe, or a transaction behind a
    /// pooler, never what runs.
    static func containsWord(_ sql: String, _ word: StaticString) -> Bool {
        let target = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        var text = sql
        return text.withUTF8 { bytes in
            guard bytes.count >= target.count, let first = target.first else { return false }
            var index = 0
            while index + target.count <= bytes.count {
                defer { index += 1 }
                guard bytes[index] | 0x20 == first, index == 0 || !SQLLexicon.isNameByte(bytes[index - 1]) else {
                    continue
                }
                var matched = true
                for offset in 1..<target.count where bytes[index + offset] | 0x20 != target[offset] {
                    matched = false
                    break
                }
                guard matched else { continue }
                let end = index + target.count
                if end == bytes.count || !SQLLexicon.isNameByte(bytes[end]) { return true }
            }
            return false
        }
    }

    /// The cached statement for `sql` (SwiftDAL's text), if any; the last one used is
    /// looked at first.
    private func cachedStatement(_ sql: String) -> PreparedStatement? {
        if let lastStatement, lastStatement.text == sql { return lastStatement.statement }
        guard let statement = statements[sql] else { return nil }
        lastStatement = (sql, statement)
        return statement
    }

    /// Caches `statement` as the one for `sql`; returns it.
    private func cache(_ statement: PreparedStatement, _ sql: String) -> PreparedStatement {
        statements[sql] = statement
        lastStatement = (sql, statement)
        return statement
    }

    /// Whether `sql` gets a server-side prepared statement: not behind PgBouncer's
    /// transaction pooling (statements go unnamed there), and not transaction control,
    /// which preparing would cost a round trip for and save nothing (it has neither
    /// parameters nor a plan).
    private func isPreparedOnServer(_ sql: String) -> Bool {
        !configuration.transactionPooling && !Self.isTransactionControl(sql)
    }

    /// A new name for a server-side prepared statement.
    private func nextStatementName() -> String {
        statementNumber += 1
        return "swiftdal_\(statementNumber)"
    }

    /// Deallocates the prepared statement of `sql`.
    private func forget(_ sql: String) throws {
        lastStatement = nil
        guard let statement = statements.removeValue(forKey: sql), let name = statement.name
        else { return }
        try uncounted { try executeScript("DEALLOCATE \(name)") }
    }

    /// Empties the cache without deallocating its statements on the server (inside an
    /// aborted transaction, which runs nothing until its rollback), after a statement's
    /// plan went stale: another session changed the schema, and the other statements on
    /// the same tables would fail in turn, one call each.
    private func dropCachedStatements() {
        lastStatement = nil
        if statements.values.contains(where: { $0.name != nil }) { hasUnlistedPrepared = true }
        statements.removeAll()
    }

    /// Runs `body`, which sends statements the connection needs for itself (they hand the
    /// caller no row), without counting them in `completedStatements`.
    private func uncounted<T>(_ body: () throws -> T) rethrows -> T {
        let counted = completedStatements
        defer { completedStatements = counted }
        return try body()
    }

    var cachedStatementCount: Int { statements.count }

    /// After a statement that may have changed the schema ran: this connection's prepared
    /// statements are dropped (none then fails with "cached plan must not change result
    /// type"). Inside a transaction, as ``clearStatementCache()`` (nothing is committed yet,
    /// so its failure is the transaction's). Outside one the statement has committed: it is
    /// forgotten here and deallocated on the server when that can be done now, and a
    /// failure there (a stop, a lost connection) is not reported as the statement's, whose
    /// outcome stands; the next clearing deallocates what is left.
    private func clearStatementCacheAfterSchemaChange() throws {
        if isInTransaction { try clearStatementCache() } else { try? clearStatementCache() }
    }

    /// Drops the cached statements, then deallocates every prepared statement on the server
    /// (those dropped earlier included); a deallocation that fails is tried again next time.
    func clearStatementCache() throws {
        dropCachedStatements()
        guard hasUnlistedPrepared, !isBroken else { return }
        try uncounted { try executeScript("DEALLOCATE ALL") }
        hasUnlistedPrepared = false
    }

    func clearCancelRequest() {
        // A connection given up on (its socket shut down when the grace period passed) is
        // never used again: nothing to wait for, and a cancel request on its way to a hung
        // server would hold the call another grace period.
        let wait = failed || abandoned.load(ordering: .acquiring) ? .zero : configuration.stopGracePeriod
        if !cancelRequests.settle(waitingAtMost: wait) { failed = true }
        cancelRequested.store(false, ordering: .sequentiallyConsistent)
    }

    /// Sends `statement` with `values`: text for everything but blobs, sent as binary.
    private func execute(
        _ statement: PreparedStatement, _ values: UnsafeBufferPointer<DatabaseValue>
    ) throws -> OpaquePointer? {
        let connection = try openConnection()
        try checkMaySend(statement.text.sql, role: statement.role)
        return try withParameters(values, sql: statement.text.sql) { count, pointers, lengths, formats in
            if let name = statement.cName {
                return name.withUnsafeBufferPointer { name in
                    PQexecPrepared(
                        connection, name.baseAddress, count, pointers, lengths, formats, statement.resultFormat)
                }
            }
            return PQexecParams(
                connection, statement.text.sql, count, nil, pointers, lengths, formats, statement.resultFormat)
        }
    }

    /// Calls `body` with `values` as libpq takes parameters: their count, and the arrays of
    /// pointers, lengths and formats (text for everything but blobs, sent as binary).
    private func withParameters<R>(
        _ values: UnsafeBufferPointer<DatabaseValue>, sql: @autoclosure () -> String,
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>, UnsafePointer<Int32>) throws -> R
    ) throws -> R {
        defer { parameterArrays.shrinkIfLarge() }
        try parameterArrays.fill(values, sql: sql())
        return try body(
            Int32(values.count), parameterArrays.pointers, parameterArrays.lengths, parameterArrays.formats)
    }

    /// Writes `value`'s decimal digits (and its sign) at `target`, as `String(value)`
    /// spells them, without making a `String` (callgrind, W1: `String(Int64)` cost some
    /// 400 instructions a parameter); returns how many bytes it wrote (at most 20).
    static func writeDecimal(_ value: Int64, to target: UnsafeMutablePointer<UInt8>) -> Int {
        var magnitude = value.magnitude  // Int64.min's included
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let sign = value < 0 ? 1 : 0
        if sign == 1 { target.pointee = UInt8(ascii: "-") }
        var position = sign + digits
        repeat {
            position -= 1
            target[position] = UInt8(truncatingIfNeeded: magnitude % 10) &+ UInt8(ascii: "0")
            magnitude /= 10
        } while magnitude > 0
        return sign + digits
    }

    /// Appends `value`'s decimal digits (and its sign) to `bytes` (see ``writeDecimal(_:to:)``).
    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in  // Int64.min: 20 bytes
            guard let base = buffer.baseAddress else { return }
            bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: writeDecimal(value, to: base)))
        }
    }

    /// The arrays a statement's parameters are passed to libpq in, reused by every
    /// execution of the connection (only the thread using the connection touches them):
    /// the values' text (or bytes) one after the other, each one NUL-terminated, and per
    /// parameter its pointer (`nil` for NULL), length and format. Memory of its own, not
    /// arrays: no allocation, uniqueness check or reference count per execution
    /// (callgrind, PostgreSQL W3: filling arrays cost ~535 instructions for one integer
    /// key; W7: five arrays made and freed per execution ~1,500).
    private final class ParameterArrays {
        /// The values' bytes: `byteCount` of `byteCapacity` in use.
        private var bytes: UnsafeMutablePointer<UInt8>
        private var byteCapacity: Int
        private var byteCount = 0
        /// Per parameter: room for `parameterCapacity`; the first `count` of an execution
        /// are its own (libpq reads only those).
        private var offsets: UnsafeMutablePointer<Int>
        private(set) var pointers: UnsafeMutablePointer<UnsafePointer<CChar>?>
        private(set) var lengths: UnsafeMutablePointer<Int32>
        private(set) var formats: UnsafeMutablePointer<Int32>
        private var parameterCapacity: Int

        /// What a connection keeps between executions; a larger buffer is given back.
        private static let keptBytes = 1 << 20
        private static let initialBytes = 256
        private static let initialParameters = 16

        init() {
            byteCapacity = Self.initialBytes
            bytes = .allocate(capacity: byteCapacity)
            parameterCapacity = Self.initialParameters
            offsets = .allocate(capacity: parameterCapacity)
            pointers = .allocate(capacity: parameterCapacity)
            lengths = .allocate(capacity: parameterCapacity)
            formats = .allocate(capacity: parameterCapacity)
        }

        deinit {
            bytes.deallocate()
            offsets.deallocate()
            pointers.deallocate()
            lengths.deallocate()
            formats.deallocate()
        }

        /// Room for `more` bytes after the ones in use.
        @inline(__always)
        private func reserve(_ more: Int) {
            if byteCount + more > byteCapacity { grow(to: byteCount + more) }
        }

        private func grow(to needed: Int) {
            var capacity = byteCapacity
            while capacity < needed { capacity *= 2 }
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            larger.update(from: bytes, count: byteCount)
            bytes.deallocate()
            bytes = larger
            byteCapacity = capacity
        }

        /// Room for `count` parameters.
        private func reserveParameters(_ count: Int) {
            guard count > parameterCapacity else { return }
            offsets.deallocate()
            pointers.deallocate()
            lengths.deallocate()
            formats.deallocate()
            parameterCapacity = max(count, parameterCapacity * 2)
            offsets = .allocate(capacity: parameterCapacity)
            pointers = .allocate(capacity: parameterCapacity)
            lengths = .allocate(capacity: parameterCapacity)
            formats = .allocate(capacity: parameterCapacity)
        }

        /// Appends `buffer`'s bytes.
        @inline(__always)
        private func append(_ buffer: UnsafeRawBufferPointer) {
            reserve(buffer.count)
            if let source = buffer.baseAddress, buffer.count > 0 {
                (bytes + byteCount).update(from: source.assumingMemoryBound(to: UInt8.self), count: buffer.count)
                byteCount += buffer.count
            }
        }

        /// A large value's bytes are not kept for the connection's lifetime.
        func shrinkIfLarge() {
            guard byteCapacity > Self.keptBytes else { return }
            bytes.deallocate()
            byteCapacity = Self.initialBytes
            bytes = .allocate(capacity: byteCapacity)
            byteCount = 0
        }

        /// Writes `values` as libpq takes them: text for everything but blobs, sent as
        /// binary. Throws for text holding a NUL (PostgreSQL's text cannot).
        func fill(_ values: UnsafeBufferPointer<DatabaseValue>, sql: @autoclosure () -> String) throws {
            reserveParameters(values.count)
            byteCount = 0
            for index in values.indices {
                let start = byteCount
                var format: Int32 = 0
                switch values[index] {
                case .null:
                    offsets[index] = -1
                    lengths[index] = 0
                    formats[index] = 0
                    continue
                case .integer(let integer):
                    reserve(21)
                    byteCount += PostgresConnection.writeDecimal(integer, to: bytes + byteCount)
                case .real(let double):
                    var text = SwiftDALConnection.postgresText(of: double)
                    text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
                case .text(var text):
                    let hasNUL = text.withUTF8 { utf8 -> Bool in
                        if let base = utf8.baseAddress, memchr(base, 0, utf8.count) != nil { return true }
                        append(UnsafeRawBufferPointer(utf8))
                        return false
                    }
                    guard !hasNUL else {
                        throw DALError(
                            .invalidValue,
                            "PostgreSQL text cannot hold a NUL character; store such values as Data (bytea)", sql: sql()
                        )
                    }
                case .blob(let data):
                    data.withUnsafeBytes { append($0) }
                    format = 1
                }
                let length = byteCount - start
                reserve(1)
                bytes[byteCount] = 0  // libpq reads text parameters as C strings
                byteCount += 1
                offsets[index] = start
                lengths[index] = Int32(clamping: length)
                formats[index] = format
            }
            // The bytes are where they stay until the next fill: point at them now.
            for index in values.indices {
                let offset = offsets[index]
                pointers[index] =
                    offset < 0 ? nil : UnsafeRawPointer(bytes + offset).assumingMemoryBound(to: CChar.self)
            }
        }
    }

    /// Reads `result`: rows go to `body`; returns the rows the command affected; errors
    /// are thrown (and a failed connection is marked broken). Frees the result.
    private func consume(
        _ result: OpaquePointer?, sql: @autoclosure () -> String, statement: PreparedStatement? = nil,
        _ body: (RowView) throws -> Void
    ) throws -> Int {
        guard let result else {
            failed = true
            throw connectionError(sql: sql())
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK:
            let affected = Self.affectedRows(result)
            PQclear(result)
            completedStatements += 1
            return affected
        case PGRES_TUPLES_OK:
            completedStatements += 1
            let rows = PostgresRows(  // frees the result when released
                result: result, shape: statement?.shape, typesPinned: statement?.hasPinnedColumns ?? false)
            statement?.adopt(rows)
            if rows.shape.isBinary { binaryResults += 1 }
            let result = EngineResult(rows)
            for row in 0..<rows.rowCount { try body(RowView(result: result, row: row)) }
            return rows.rowCount
        case PGRES_EMPTY_QUERY:
            PQclear(result)
            throw DALError(.invalidSQL, "the SQL text holds no statement", sql: sql())
        default:
            let error = Self.error(of: result, sql: sql())
            PQclear(result)
            if error.isConnectionFailure || isBroken { failed = true }
            throw error
        }
    }

    /// The rows a command affected (`PQcmdTuples`), parsed in place.
    private static func affectedRows(_ result: OpaquePointer) -> Int {
        guard var digit = PQcmdTuples(result) else { return 0 }
        var count = 0
        while digit.pointee >= 0x30 && digit.pointee <= 0x39 {
            count = count &* 10 &+ Int(digit.pointee - 0x30)
            digit += 1
        }
        return count
    }

    /// The error for a statement refused before it was sent, its connection having broken
    /// (or been abandoned) earlier: it changed nothing, and a `COMMIT` refused so committed
    /// nothing (the server rolls the transaction back as the session ends). So it is never
    /// reported as an unknown outcome.
    private func notSentError(_ sql: String) -> PostgresError {
        let reason = connectionError(sql: sql).message
        var error = PostgresError(
            sqlState: "08006",
            message: (reason.isEmpty ? "the connection to \(name) is broken" : reason)
                + " (the statement was not sent: nothing of it ran)", sql: sql)
        error.isFromServer = false
        error.wasSent = false
        return error
    }

    private func connectionError(sql: String?) -> PostgresError {
        let message =
            connection.flatMap { PQerrorMessage($0) }.map { String(cString: $0) } ?? "the connection is closed"
        var error = PostgresError(
            sqlState: "08006", message: message.trimmingCharacters(in: .whitespacesAndNewlines), sql: sql)
        error.isFromServer = false
        return error
    }

    private static func error(of result: OpaquePointer, sql: String) -> PostgresError {
        func field(_ code: Int32) -> String? {
            PQresultErrorField(result, code).map { String(cString: $0) }
        }
        let message =
            field(swiftdal_pg_diag_message_primary)
            ?? PQresultErrorMessage(result).map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines)
            ?? "unknown error"
        let sqlState = field(swiftdal_pg_diag_sqlstate)
        var error = PostgresError(
            sqlState: sqlState ?? "08006", message: message,
            detail: field(swiftdal_pg_diag_message_detail), hint: field(swiftdal_pg_diag_message_hint),
            schema: field(swiftdal_pg_diag_schema_name), table: field(swiftdal_pg_diag_table_name),
            column: field(swiftdal_pg_diag_column_name), constraint: field(swiftdal_pg_diag_constraint_name), sql: sql)
        error.isFromServer = sqlState != nil  // libpq's own errors (a lost connection) carry none
        return error
    }

    /// Whether `result` is PostgreSQL's "cached plan must not change result type".
    private static func isStalePlan(_ result: OpaquePointer?) -> Bool {
        guard let result, PQresultStatus(result) == PGRES_FATAL_ERROR else { return false }
        let state = PQresultErrorField(result, swiftdal_pg_diag_sqlstate).map { String(cString: $0) }
        let message = PQresultErrorField(result, swiftdal_pg_diag_message_primary).map { String(cString: $0) } ?? ""
        return PostgresError.isStalePlan(sqlState: state, message: message)
    }

    // MARK: Transactions and the catalog

    func beginStatement(_ kind: TransactionKind, isolation: IsolationLevel?, readOnly: Bool) -> String {
        var text = "BEGIN"
        if let isolation { text += " ISOLATION LEVEL \(isolation.rawValue)" }
        if readOnly { text += " READ ONLY" }
        return text
    }

    /// The kind of the table `columns(in:)` read, valid until the next statement (a
    /// mapping asks for both in turn: one round trip answers both).
    private var describedKind: (table: String, kind: String, statement: Int)?

    func columns(in table: String) throws -> [ColumnInfo] {
        let counted = completedStatements
        defer { completedStatements = counted }
        var columns = [ColumnInfo]()
        var kind: String?
        // Sent unnamed (read once per mapping: preparing it would cost a round trip more).
        // A domain's column reports the type under it (a domain over a domain, the last):
        // its values arrive as that type, and are read and cast as it.
        _ = try run(
            """
            SELECT a.attname, format_type(base.typ, base.mod), a.attnotnull,
                   CASE WHEN a.attidentity <> '' THEN 'GENERATED ' || CASE a.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END || ' AS IDENTITY'
                        WHEN a.attgenerated = 's' THEN 'GENERATED ALWAYS AS (' || pg_get_expr(d.adbin, d.adrelid) || ') STORED'
                        ELSE pg_get_expr(d.adbin, d.adrelid) END,
                   COALESCE((SELECT k.n FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n) WHERE k.attnum = a.attnum), 0),
                   c.relkind::text
            FROM pg_attribute a
            JOIN pg_class c ON c.oid = a.attrelid
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
            CROSS JOIN LATERAL (
                WITH RECURSIVE chain(typ, mod, depth) AS (
                    SELECT a.atttypid, a.atttypmod, 0
                    UNION ALL
                    SELECT t.typbasetype, t.typtypmod, chain.depth + 1
                    FROM chain JOIN pg_type t ON t.oid = chain.typ WHERE t.typtype = 'd'
                ) SELECT typ, mod FROM chain ORDER BY depth DESC LIMIT 1
            ) base
            WHERE c.oid = to_regclass(\(quotedName(table))) AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum
            """, prepared: false
        ) { row in
            kind = try row.decode(String.self, at: 5)
            columns.append(
                ColumnInfo(
                    name: try row.decode(String.self, at: 0), declaredType: try row.decode(String.self, at: 1),
                    isNotNull: try row.decode(Bool.self, at: 2), defaultValueSQL: try row.decode(String?.self, at: 3),
                    primaryKeyIndex: try row.decode(Int.self, at: 4)))
        }
        guard !columns.isEmpty, let kind else {
            throw DALError(.schemaMismatch, "the database has no table or view named \(table)", table: table)
        }
        describedKind = (table, kind, counted)
        return columns
    }

    func tableKind(of table: String) throws -> TableKind {
        let counted = completedStatements
        defer { completedStatements = counted }
        var kind: String?
        if let described = describedKind, described.table == table, described.statement == completedStatements {
            kind = described.kind
            describedKind = nil
        } else {
            _ = try run(
                "SELECT relkind::text FROM pg_class WHERE oid = to_regclass(\(quotedName(table)))", prepared: false
            ) {
                row in kind = try row.decode(String.self, at: 0)
            }
        }
        switch kind {
        case nil: throw DALError(.schemaMismatch, "the database has no table or view named \(table)", table: table)
        case "v", "m": return .view
        case "f": return .virtualTable
        default: return .rowIDTable
        }
    }

    func tableExists(_ name: String) throws -> Bool {
        try uncounted {
            var exists = false
            _ = try run("SELECT to_regclass(\(quotedName(name))) IS NOT NULL") { row in
                exists = try row.decode(Bool.self, at: 0)
            }
            return exists
        }
    }

    /// A table name as `to_regclass` reads it: quoted, so that it is taken exactly as
    /// given (as SwiftDAL quotes it in every statement).
    private func quotedName(_ table: String) -> String {
        quoteIdentifier(table)
    }
}

/// What a statement does to a transaction's outcome, read from its first word (after
/// blanks, opening parentheses and comments: ``StatementStart``).
enum StatementRole {
    /// `ROLLBACK` (of the whole transaction; `ROLLBACK TO SAVEPOINT` is `.other`).
    case rollback
    /// `COMMIT` or `END`.
    case commit
    /// A query that changes nothing (`SELECT`, `SHOW`, `EXPLAIN`, `VALUES`, `TABLE`, `FETCH`).
    case read
    /// Anything else: it may write, and commits on its own outside a transaction.
    case write
    /// Transaction control that commits nothing (`BEGIN`, `SAVEPOINT`, `RELEASE`, …).
    case other

    init(of sql: String) {
        let (word, end) = StatementStart.firstWord(of: sql, limit: 10)
        switch word {
        case "rollback":
            // `ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name` undoes part of it only, and
            // `ROLLBACK PREPARED 'id'` another (two-phase) transaction.
            self =
                StatementStart.rollsBackToASavepoint(sql, after: end)
                    || StatementStart.rollsBackAPreparedTransaction(sql, after: end) ? .other : .rollback
        case "commit", "end": self = .commit
        case "select", "show", "explain", "values", "table", "fetch", "declare", "close": self = .read
        case "abort": self = .rollback
        case "begin", "start", "savepoint", "release", "set", "reset", "prepare", "deallocate": self = .other
        default: self = .write
        }
    }
}
