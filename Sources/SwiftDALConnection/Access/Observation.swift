import Dispatch

/// What a service learns of every statement SwiftDAL runs: bridge it to your logger and
/// metrics. SwiftDAL calls ``statementDidFinish(_:)`` on the thread that ran the
/// statement, right after it finished (or failed), so keep it quick: record, count,
/// hand over to your logger; never call the database from it.
///
/// Set it with ``Configuration/observer`` (SQLite) or `PostgresConfiguration.observer`;
/// ``Configuration/slowStatementThreshold`` marks the events of slow statements. When no
/// observer is set, nothing is measured: the statement path costs the same as without
/// this feature (the *Performance* article of the SwiftDAL documentation measures it).
///
/// For example:
///
/// ```swift
/// struct Metrics: DatabaseObserver {
///     let logger: Logger
///     func statementDidFinish(_ event: StatementEvent) {
///         histogram.record(event.duration, tags: ["engine": "\(event.engine)"])
///         if event.isSlow { logger.warning("slow SQL (\(event.duration)): \(event.sql)") }
///     }
/// }
/// var configuration = Configuration()
/// configuration.observer = Metrics(logger: logger)
/// configuration.slowStatementThreshold = .milliseconds(100)
/// ```
///
/// A batch on MariaDB sends a run of one-row `INSERT`s (`insertRange`'s) as one bulk
/// execution: one event, its ``StatementEvent/rowCount`` the rows of the run. When it fails
/// on a row's error (or the server refuses it), that event carries the error, and its rows
/// then run one by one up to the failing one, each heard of.
public protocol DatabaseObserver: Sendable {
    /// Called once per statement (a bulk execution is one), after it finished or failed.
    func statementDidFinish(_ event: StatementEvent)
}

/// One statement's run, as reported to a ``DatabaseObserver``.
///
/// For example, `if event.isSlow { logger.warning("\(event.sql) took \(event.duration)") }`.
public struct StatementEvent: Sendable {
    /// The SQL text with its placeholders (`?`, `:name` or `$1`), never the bound values.
    public let sql: String
    /// The engine that ran it.
    public let engine: DatabaseEngine
    /// The database it ran on: the file's path, or PostgreSQL's host, port and database
    /// (never a password); with replicas, this tells which server answered.
    public let database: String
    /// How long the statement ran: from its first step to its end (SQLite, including the
    /// time the caller spent on each row), or from sending it to its result (PostgreSQL).
    public let duration: Duration
    /// The rows a query returned, or the rows a write changed.
    public let rowCount: Int
    /// How long the call waited for a free connection before this statement: the call's
    /// wait on its first statement, zero on its others (so that the waits add up).
    public let connectionWait: Duration
    /// Whether it ran longer than the slow-statement threshold.
    public let isSlow: Bool
    /// The error it failed with, or `nil` when it succeeded (errors never carry values:
    /// see ``SQLiteError/descriptionIncludingArguments``).
    public let error: (any Error)?

    /// An event, for the engines' connection layers.
    package init(
        sql: String, engine: DatabaseEngine, database: String, duration: Duration, rowCount: Int,
        connectionWait: Duration, isSlow: Bool, error: (any Error)?
    ) {
        self.sql = sql
        self.engine = engine
        self.database = database
        self.duration = duration
        self.rowCount = rowCount
        self.connectionWait = connectionWait
        self.isSlow = isSlow
        self.error = error
    }
}

/// How busy a queue or pool is now, for gauges: its connections open and in use, and the
/// callers waiting for one. Read it as often as a metrics exporter polls; it takes no
/// lock that a call holds.
///
/// For example, `gauge("db_connections_in_use").set(pool.statistics.connectionsInUse)`.
public struct PoolStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Connections open now (a pool opens them on first need).
    public var connectionsOpen: Int
    /// Connections lent to a call now, counting a call whose connection is still being
    /// opened, or was given up on (a hung server's) and is not yet handed back: for a
    /// moment it can exceed ``connectionsOpen``.
    public var connectionsInUse: Int
    /// Callers waiting for a connection now.
    public var callersWaiting: Int
    /// The most connections the pool opens.
    public var maximumConnections: Int

    /// Statistics; SwiftDAL's queues and pools create these.
    ///
    /// For example, `PoolStatistics(connectionsOpen: 2, connectionsInUse: 1, callersWaiting: 0, maximumConnections: 5)`.
    public init(connectionsOpen: Int, connectionsInUse: Int, callersWaiting: Int, maximumConnections: Int) {
        self.connectionsOpen = connectionsOpen
        self.connectionsInUse = connectionsInUse
        self.callersWaiting = callersWaiting
        self.maximumConnections = maximumConnections
    }

    /// The sum of two pools' statistics (a cluster's primary and replicas).
    ///
    /// For example, `let total = primary.statistics + replica.statistics`.
    public static func + (lhs: PoolStatistics, rhs: PoolStatistics) -> PoolStatistics {
        PoolStatistics(
            connectionsOpen: lhs.connectionsOpen + rhs.connectionsOpen,
            connectionsInUse: lhs.connectionsInUse + rhs.connectionsInUse,
            callersWaiting: lhs.callersWaiting + rhs.callersWaiting,
            maximumConnections: lhs.maximumConnections + rhs.maximumConnections)
    }

    /// A one-line summary for logs: "2/3 connections in use (at most 5), 0 waiting".
    public var description: String {
        "\(connectionsInUse)/\(connectionsOpen) connections in use (at most \(maximumConnections)), \(callersWaiting) waiting"
    }
}

/// A connection's observer, threshold and name, and the wait of the call holding it.
/// Only the thread holding the connection touches ``pendingWait``.
package final class StatementObservation: @unchecked Sendable {
    let observer: (any DatabaseObserver)?
    let trace: (@Sendable (TraceEvent) -> Void)?
    let slowThreshold: Duration?
    let engine: DatabaseEngine
    let database: String
    /// The wait of the call holding the connection, until its first statement reports it.
    package var pendingWait: Duration = .zero

    /// The observation `configuration` asks for, or `nil` when it asks for none.
    package static func make(_ configuration: Configuration, engine: DatabaseEngine, database: String)
        -> StatementObservation?
    {
        guard configuration.observer != nil || configuration.trace != nil else { return nil }
        return StatementObservation(configuration, engine: engine, database: database)
    }

    private init(_ configuration: Configuration, engine: DatabaseEngine, database: String) {
        observer = configuration.observer
        trace = configuration.trace
        slowThreshold = configuration.slowStatementThreshold
        self.engine = engine
        self.database = database
    }

    /// Reports a statement that started at `start`.
    package func report(sql: String, since start: MonotonicTime, rowCount: Int, error: (any Error)?) {
        let duration = MonotonicTime.now - start
        if let trace { trace(TraceEvent(sql: sql, duration: duration)) }
        guard let observer else { return }
        let wait = pendingWait
        pendingWait = .zero
        observer.statementDidFinish(
            StatementEvent(
                sql: sql, engine: engine, database: database, duration: duration, rowCount: rowCount,
                connectionWait: wait, isSlow: slowThreshold.map { duration > $0 } ?? false, error: error))
    }
}

/// A reading of the monotonic clock (Dispatch's, which the pools' deadlines use too), in
/// nanoseconds. A plain integer, because the call and statement paths keep one
/// (optional) even when nothing observes them: `ContinuousClock.Instant` comes from a
/// module that does not fix its layout, so an optional one is copied and tested through
/// runtime metadata, which cost about 100 instructions per call on the per-call lookups
/// (measured with callgrind on W6).
@usableFromInline
package struct MonotonicTime: Sendable {
    let nanoseconds: UInt64

    /// Now.
    package static var now: MonotonicTime { MonotonicTime(nanoseconds: DispatchTime.now().uptimeNanoseconds) }

    /// The time from `start` to `end` (zero if the clock reads earlier).
    package static func - (end: MonotonicTime, start: MonotonicTime) -> Duration {
        .nanoseconds(Int64(truncatingIfNeeded: end.nanoseconds &- min(start.nanoseconds, end.nanoseconds)))
    }
}
