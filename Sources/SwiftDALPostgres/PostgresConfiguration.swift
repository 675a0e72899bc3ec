public import SwiftDALConnection

/// How a ``PostgresPool`` connects and lends its connections.
///
/// For example:
///
/// ```swift
/// var configuration = PostgresConfiguration()
/// configuration.maximumConnections = 20
/// configuration.statementTimeout = .seconds(30)
/// let pool = try PostgresPool(url: "postgresql://app@db.internal/shop", configuration: configuration)
/// ```
public struct PostgresConfiguration: Sendable {
    /// The most connections the pool opens (each on first need).
    public var maximumConnections = 10
    /// How long a `read`, `write` or DAL call waits for a free connection before it
    /// throws ``SwiftDAL/DALError/Code/connectionUnavailable``.
    public var acquireTimeout: Duration = .seconds(10)
    /// How long opening a connection may wait for each host (a host that accepts the
    /// connection and never answers is given up after it, and the next host of a
    /// multi-host string is tried). A `connect_timeout` in the URL takes precedence.
    public var connectTimeout: Duration = .seconds(10)
    /// How long a stopped call's statement (its time limit passed, its task cancelled) may
    /// take to end after the cancel request: past it, the server is taken as not answering,
    /// and the connection is abandoned (its socket shut down, the call ends, the pool opens
    /// another). A healthy server answers a cancel request within milliseconds.
    public var stopGracePeriod: Duration = .milliseconds(500)
    /// How often the server checks, while a statement runs, that this client is still
    /// connected (PostgreSQL 14 and later: `client_connection_check_interval`; `nil`: the
    /// server's own, which is off unless configured). A session whose client went away (a
    /// service process that died, a connection abandoned after ``stopGracePeriod``) then
    /// ends within about this interval, rolling its transaction back and releasing its
    /// locks, instead of running on until its statement ends: a statement waiting on a
    /// lock would otherwise hold the transaction's earlier locks as long as the other
    /// holder keeps its own. A session setting, so not made with ``transactionPooling``
    /// (set it on the server or the role there); ignored by servers before 14, and left off
    /// by a server whose platform cannot make the check (it refuses any value but 0 there:
    /// Windows, and before PostgreSQL 15 systems other than Linux).
    public var clientConnectionCheckInterval: Duration? = .seconds(1)
    /// The server's `statement_timeout` for every statement (`nil`: the server's own);
    /// a statement running longer fails with SQLSTATE 57014.
    public var statementTimeout: Duration?
    /// A time limit for every call on the pool (a `read`/`write` closure, a DAL call),
    /// counted from the call's start (its wait for a connection, and the connect if one
    /// opens, included): a call still running when it passes is stopped (a cancel request
    /// to the server) and throws ``SwiftDAL/DALError/Code/timeout``. `nil`: none.
    /// ``SwiftDAL/withDatabaseTimeout(_:operation:)-l73r`` sets one for the calls inside it.
    public var callTimeout: Duration?
    /// Whether the server is reached through a pooler in transaction mode (PgBouncer's
    /// `pool_mode = transaction`), where consecutive transactions of one connection may run
    /// on different server sessions: statements are then sent unnamed every time (no
    /// prepared statement outlives its transaction), and no session setting is made: each
    /// transaction SwiftDAL opens sets `SET LOCAL TimeZone TO 'UTC'` instead, and a statement
    /// outside one that binds date text runs in a transaction of its own (`DateStyle` must
    /// be the default, ISO). ``statementTimeout`` needs a session setting: set it on the
    /// server or the role instead (combining them is refused).
    public var transactionPooling = false
    /// The isolation level of `write` transactions (`nil`: the server's default, read
    /// committed). `read` transactions are always repeatable read and read-only: one
    /// snapshot for the whole closure, as on SQLite.
    public var writeIsolation: IsolationLevel?
    /// Called after each statement runs, with its SQL (placeholders as written, never
    /// values) and its duration: a shorthand for tools; services set ``observer``.
    public var trace: (@Sendable (TraceEvent) -> Void)?
    /// Told of every statement: its SQL (placeholders only), duration, row count, the
    /// server that ran it, the wait for a connection, and its error if it failed (see
    /// ``SwiftDAL/DatabaseObserver``). `nil` (the default): nothing is measured.
    public var observer: (any DatabaseObserver)?
    /// Statements that run longer are reported with ``SwiftDAL/StatementEvent/isSlow`` set.
    public var slowStatementThreshold: Duration?

    /// The defaults above.
    ///
    /// For example, `let pool = try PostgresPool(url: url, configuration: PostgresConfiguration())`.
    public init() {}
}
