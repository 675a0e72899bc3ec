public import SwiftDALConnection
import Synchronization

/// A pool for backend services over a file database in WAL mode: one writer
/// connection (writes are serialized, so writers never fight over the lock and never
/// see `SQLITE_BUSY` from each other) plus up to ``Configuration/maximumReaderCount``
/// reader connections opened read-only, each on first need (reads run concurrently,
/// each in its own snapshot, and never wait for the writer).
///
/// For example:
///
/// ```swift
/// let pool = try DatabasePool(path: "/var/lib/app/app.sqlite", template: "Fixtures/sample.sqlite")
/// try pool.write { db in try db.execute("UPDATE users SET age = age + 1") }
/// let adults = try await pool.read { db in
///     try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users WHERE age >= \(18)") ?? 0
/// }
/// ```
public final class DatabasePool: DatabaseWriter, @unchecked Sendable {
    /// The writer (one slot, its connection opened here) and the readers (opened on
    /// first need).
    private let writerCore: PoolCore
    private let readerCore: PoolCore
    private let path: String
    /// Whether calls measure their wait for a connection (an observer reads it).
    private let measuresWaits: Bool
    /// The configuration every connection was opened with (WAL journal forced).
    public let configuration: Configuration

    /// Opens the pool on the file at `path` (created if missing; copied from `template`
    /// first when one is given and the file does not exist). The journal mode is WAL
    /// whatever the configuration says: the pool relies on it.
    ///
    /// For example, `let pool = try DatabasePool(path: "app.sqlite")`.
    public init(path: String, template: String? = nil, configuration: Configuration = Configuration()) throws {
        if let template { try Database.copyTemplateIfMissing(template, to: path) }
        var configuration = configuration
        configuration.journalMode = .wal
        configuration.maximumReaderCount = max(1, configuration.maximumReaderCount)
        self.configuration = configuration
        measuresWaits = configuration.observer != nil
        self.path = path
        let openWriter = { @Sendable [configuration] in
            try Database(path: path, isMemory: false, mode: .readWrite, configuration: configuration, owned: true)
        }
        writerCore = PoolCore(
            PoolCore.Options(
                name: "the pool on \(path)", threadName: "dal-writer", capacity: 1,
                callTimeout: configuration.callTimeout),
            open: openWriter)
        // The writer opens now: a file that cannot be opened fails here, not at the first write.
        writerCore.install(try openWriter(), at: 0)
        // Readers open when a read first needs one: a pool costs one connection until it
        // is read from concurrently.
        let readerConfiguration = configuration
        readerCore = PoolCore(
            PoolCore.Options(
                name: "the pool on \(path)", threadName: "dal-reader", capacity: configuration.maximumReaderCount,
                callTimeout: configuration.callTimeout)
        ) {
            try Database(path: path, isMemory: false, mode: .readOnly, configuration: readerConfiguration, owned: true)
        }
    }

    private func withReader<T>(_ body: (Database) throws -> T) throws -> T {
        try readerCore.lend(to: self, writing: false, measuringWaits: measuresWaits, body)
    }

    private func withWriter<T>(_ body: (Database) throws -> T) throws -> T {
        try writerCore.lend(to: self, writing: true, measuringWaits: measuresWaits, body)
    }

    /// Runs `body` in a deferred transaction on a reader connection: one consistent
    /// snapshot, concurrent with other reads and with the writer. Writes throw
    /// `SQLITE_READONLY`.
    ///
    /// For example, `let rows = try pool.read { db in try db.fetchAll("SELECT * FROM t") }`.
    @discardableResult
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("read") }
        return try withReader { database in
            try database.inTransaction(.deferred) { try body(database) }
        }
    }

    /// See ``DatabaseReader/reentrantRead(_:)``.
    ///
    /// For example, `try pool.reentrantRead { db in try db.fetchOne("SELECT 1") }`.
    @discardableResult
    public func reentrantRead<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(of: self, writing: false) { return try body(held) }
        return try withReader(body)
    }

    /// Runs `body` in an `IMMEDIATE` transaction on the writer; commits on return, rolls
    /// back on throw. Writes are serialized.
    ///
    /// For example, `try pool.write { db in try db.execute("DELETE FROM sessions") }`.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("write") }
        return try withWriter { database in
            try database.inTransaction(.immediate) { try body(database) }
        }
    }

    /// See ``DatabaseWriter/reentrantWrite(_:)``.
    ///
    /// For example, `try pool.reentrantWrite { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func reentrantWrite<T>(_ body: (Database) throws -> T) throws -> T {
        if let held = try heldConnection(of: self, writing: true) { return try body(held) }
        return try withWriter(body)
    }

    /// See ``DatabaseReader/perform(writing:_:)``: the writer's thread, or a reader's.
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await (writing ? writerCore : readerCore).perform(work)
    }

    /// `read` for `async` code, on SwiftDAL's own threads.
    ///
    /// For example, `let n = try await database.read { db in try db.fetchScalar(Int.self, "SELECT 1") }`.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: false) { try self.read(body) }
    }

    /// `write` for `async` code, on the writer's own thread.
    ///
    /// For example, `try await database.write { db in try db.execute("DELETE FROM t") }`.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: true) { try self.write(body) }
    }

    /// Runs a checkpoint of the write-ahead log on the writer (waiting for a write in
    /// progress to finish first).
    ///
    /// The log grows while any reader holds an old snapshot: every write made during a
    /// long read stays in it, because the checkpoint cannot copy past what that reader
    /// sees. Once the reader ends, the automatic checkpoints that follow writes empty it,
    /// and the next write cuts the file back to ``Configuration/journalSizeLimit``. Call
    /// `checkpoint(.truncate)` (from a maintenance job, after a long export) to empty
    /// the file to zero bytes at once; it waits up to the busy timeout for readers and
    /// throws `SQLITE_BUSY` when they are still reading.
    ///
    /// For example, `let result = try pool.checkpoint(.truncate)`.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws -> CheckpointResult {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("checkpoint") }
        return try withWriter { try $0.checkpoint(mode) }
    }

    /// Copies the database to a file at `path` through the online backup API, from a
    /// reader, while the pool keeps working: one self-contained file in rollback-journal
    /// mode (see ``Database/backup(toPath:)``).
    ///
    /// For example, `try pool.backup(toPath: "/var/backups/app.sqlite")`.
    public func backup(toPath path: String) throws {
        try reentrantRead { try $0.backup(toPath: path) }
    }

    /// How busy the pool is now: its writer and readers open and in use, and the callers
    /// waiting for one.
    ///
    /// For example, `metrics.gauge("db.waiting", pool.statistics.callersWaiting)`.
    public var statistics: PoolStatistics {
        let writer = writerCore.gauges
        let readers = readerCore.gauges
        return PoolStatistics(
            connectionsOpen: writer.open + readers.open, connectionsInUse: writer.inUse + readers.inUse,
            callersWaiting: writer.waiting + readers.waiting, maximumConnections: 1 + readerCore.slots.count)
    }

    /// Refuses new calls (they throw ``DALError/Code/connectionClosed``), waits for the
    /// calls in flight and in line to finish, then closes every connection.
    ///
    /// For example, `try pool.close()`.
    public func close() throws {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("close") }
        readerCore.close()
        writerCore.close()
    }

    /// ``close()`` for a service's shutdown: refuses new calls at once (they throw
    /// ``DALError/Code/connectionClosed``), lets the calls in flight and in line finish,
    /// holding no thread while it waits, then closes every connection. Calls still running
    /// after `gracePeriod` (`nil`: no limit) are stopped: their statements are interrupted
    /// and they throw.
    ///
    /// For example, in a service's shutdown: `await pool.shutdown(gracePeriod: .seconds(10))`.
    public func shutdown(gracePeriod: Duration? = .seconds(30)) async {
        async let readers: Void = readerCore.shutdown(gracePeriod: gracePeriod)
        async let writer: Void = writerCore.shutdown(gracePeriod: gracePeriod)
        _ = await (readers, writer)
    }

    /// Whether the pool refuses new calls (``close()`` or ``shutdown(gracePeriod:)`` began).
    package var refusesNewCalls: Bool { readerCore.isClosing }
}
