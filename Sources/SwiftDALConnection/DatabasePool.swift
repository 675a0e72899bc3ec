import Dispatch
import Synchronization

/// A reader connection and whether a thread is using it.
final class ReaderSlot: @unchecked Sendable {
    // `database` is only touched by the thread that set `busy` from false to true (or by
    // `close`, which holds every reader).
    private(set) var database: Database?
    let busy = Atomic<Bool>(false)

    /// The slot's connection, opened by `open` on first use.
    func connection(_ open: () throws -> Database) throws -> Database {
        if let database { return database }
        let opened = try open()
        database = opened
        return opened
    }

    /// Closes the slot's connection, if it has one; a failed close keeps it.
    func closeConnection() throws {
        try database?.closeConnection()
        database = nil
    }

    func tryAcquire() -> Bool {
        busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    func release() { busy.store(false, ordering: .releasing) }
}

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
    private let writer: Database
    private let writerMutex = PlainMutex()
    private let readers: [ReaderSlot]
    private let path: String
    /// Set by ``close()``: no reader opens afterwards.
    private let isClosed = Atomic<Bool>(false)
    /// Counts the readers not in use: a thread past `wait()` is sure to find one.
    private let available: DispatchSemaphore
    /// Gauges: readers open, callers waiting for a reader or the writer, writer in use.
    private let openReaders = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)
    /// Whether calls measure their wait for a connection (an observer reads it).
    private let measuresWaits: Bool
    private let writerInUse = Atomic<Bool>(false)
    private let writerQueue = makeQueue("SwiftDAL.DatabasePool.writer")
    private let readerQueue = makeQueue("SwiftDAL.DatabasePool.readers", concurrent: true)
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
        writer = try Database(path: path, isMemory: false, mode: .readWrite, configuration: configuration, owned: true)
        self.path = path
        // Readers open when a read first needs one: a pool costs one connection until it
        // is read from concurrently.
        readers = (0..<configuration.maximumReaderCount).map { _ in ReaderSlot() }
        available = DispatchSemaphore(value: readers.count)
    }

    private func withReader<T>(_ body: (Database) throws -> T) throws -> T {
        let wait = ConnectionWait(measuring: measuresWaits)
        // With no bound of its own the wait ends only by taking a reader, or by throwing.
        let waited = try available.wait(countingWaitersIn: waiting, callTimeout: configuration.callTimeout) ?? 0
        let slot = acquireReader()
        defer {
            slot.release()
            available.signal()
        }
        let database = try slot.connection {
            guard !isClosed.load(ordering: .acquiring) else {
                throw DALError(.connectionClosed, "the pool on \(path) is closed")
            }
            let reader = try Database(
                path: path, isMemory: false, mode: .readOnly, configuration: configuration, owned: true)
            openReaders.add(1, ordering: .relaxed)
            return reader
        }
        wait.record(on: database)
        return try ThreadAccess.holding(database, of: self, isWriter: false, waited: waited) {
            // A read transaction a failed rollback left open would pin an old snapshot.
            try database.discardLeftoverTransaction()
            return try body(database)
        }
    }

    /// A free reader, this thread's previous one first; lock-free. Called only after
    /// `available.wait()`, so one is free (the loop only repeats if another thread took
    /// the one this thread saw).
    private func acquireReader() -> ReaderSlot {
        let holdings = ThreadAccess.holdings
        let count = readers.count
        let start = holdings.preferredReader % count
        while true {
            for offset in 0..<count {
                let index = (start + offset) % count
                if readers[index].tryAcquire() {
                    holdings.preferredReader = index
                    return readers[index]
                }
            }
        }
    }

    private func withWriter<T>(_ body: (Database) throws -> T) throws -> T {
        let wait = ConnectionWait(measuring: measuresWaits)
        return try writerMutex.withLock(countingWaitersIn: waiting, callTimeout: configuration.callTimeout) { waited in
            writerInUse.store(true, ordering: .relaxed)
            defer { writerInUse.store(false, ordering: .relaxed) }
            wait.record(on: writer)
            return try ThreadAccess.holding(writer, of: self, isWriter: true, waited: waited) {
                try writer.discardLeftoverTransaction()  // never join a transaction a failed rollback left open
                return try body(writer)
            }
        }
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

    /// See ``DatabaseReader/perform(writing:_:)``: a serial queue for the writer, a
    /// concurrent one for readers.
    public func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await performOnQueue(writing ? writerQueue : readerQueue, work)
    }

    /// `read` for `async` code, on SwiftDAL's own threads.
    ///
    /// For example, `let n = try await database.read { db in try db.fetchScalar(Int.self, "SELECT 1") }`.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await perform(writing: false) { try self.read(body) }
    }

    /// `write` for `async` code, on SwiftDAL's own writer queue.
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
    /// reader, while the pool keeps working.
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
        let closed = isClosed.load(ordering: .acquiring)
        let readersInUse = readers.reduce(0) { $0 + ($1.busy.load(ordering: .relaxed) ? 1 : 0) }
        return PoolStatistics(
            connectionsOpen: closed ? 0 : 1 + openReaders.load(ordering: .relaxed),
            connectionsInUse: readersInUse + (writerInUse.load(ordering: .relaxed) ? 1 : 0),
            callersWaiting: waiting.load(ordering: .relaxed),
            maximumConnections: 1 + readers.count)
    }

    /// Waits for every reader and the writer to be free, then closes them all.
    ///
    /// For example, `try pool.close()`.
    public func close() throws {
        guard ThreadAccess.held(by: self) == nil else { throw reentrancyError("close") }
        for _ in readers { available.wait() }
        defer { for _ in readers { available.signal() } }
        isClosed.store(true, ordering: .releasing)
        var firstError: (any Error)?
        for reader in readers where reader.database != nil {
            do {
                try reader.closeConnection()
                openReaders.subtract(1, ordering: .relaxed)
            } catch {
                firstError = firstError ?? error
            }
        }
        do { try writerMutex.withLock { try writer.closeConnection() } } catch { firstError = firstError ?? error }
        if let firstError {
            // Nothing is lost: what could not close stays usable, and readers reopen.
            isClosed.store(false, ordering: .releasing)
            throw firstError
        }
    }
}
