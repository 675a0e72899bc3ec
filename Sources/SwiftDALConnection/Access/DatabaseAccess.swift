/// Read access to a database from any thread: a ``DatabaseQueue`` or a ``DatabasePool``.
///
/// `read` and `write` closures of one queue or pool do not nest on a thread: nesting
/// throws ``DALError/Code/reentrantAccess`` instead of deadlocking. To compose work,
/// call DAL operations (or ``reentrantRead(_:)``) inside the closure: they run on the
/// connection the closure already holds.
///
/// For example:
///
/// ```swift
/// func countUsers(in database: any DatabaseReader) throws -> Int {
///     try database.read { db in try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") ?? 0 }
/// }
/// ```
public protocol DatabaseReader: AnyObject, Sendable {
    /// Runs `body` in a read-only transaction on the calling thread: every statement in
    /// it sees one consistent snapshot; any write throws.
    @discardableResult
    func read<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` on a connection this thread already holds from this reader (inside
    /// `read` or `write`), or else on a free connection without opening a transaction
    /// (each statement is then its own snapshot). The building block of DAL calls.
    @discardableResult
    func reentrantRead<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `work` on SwiftDAL's own threads (never Swift's cooperative pool) and
    /// returns its result: the basis of every `async` API. `writing` picks the writer's
    /// serial queue rather than the readers' queue.
    func perform<T: Sendable>(writing: Bool, _ work: @escaping @Sendable () throws -> T) async throws -> T

    /// `read` for `async` code: runs on SwiftDAL's own threads, never blocking Swift's
    /// cooperative pool.
    ///
    /// For example, `let n = try await pool.read { db in try db.fetchScalar(Int.self, "SELECT 1") }`.
    ///
    /// Every conforming type declares this (and `write`'s `async` form) itself, in three
    /// lines: a default in a protocol extension ranks below the type's own synchronous
    /// `read`, so `await pool.read { }` would pick the blocking form (tried: the async
    /// tests then fail to compile).
    @discardableResult
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Closes every connection. Later accesses throw ``DALError/Code/connectionClosed``.
    func close() throws

    /// How busy the queue or pool is now (connections open and in use, callers
    /// waiting), for gauges; readable from any thread at any time.
    ///
    /// For example, `let waiting = database.statistics.callersWaiting`.
    var statistics: PoolStatistics { get }
}

/// Read and write access to a database: a ``DatabaseQueue`` or a ``DatabasePool``.
///
/// For example:
///
/// ```swift
/// try pool.write { db in
///     try db.execute("INSERT INTO users(name) VALUES (\(name))")
/// }
/// ```
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` in an `IMMEDIATE` transaction: commits when it returns, rolls back
    /// when it throws. Writes are serialized.
    @discardableResult
    func write<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` on the writer this thread already holds (inside `write`), or else on
    /// the writer without opening a transaction (one statement commits on its own;
    /// wrap several in ``Database/inTransaction(_:isolation:_:)``). Throws
    /// ``DALError/Code/writeInReadOnlyAccess`` inside a `read`.
    @discardableResult
    func reentrantWrite<T>(_ body: (Database) throws -> T) throws -> T

    /// `write` for `async` code: runs on the writer's own serial queue.
    ///
    /// For example, `try await pool.write { db in try db.execute("DELETE FROM sessions") }`.
    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T
}

/// The name of the SwiftDAL thread running the current code (a pooled connection's
/// thread, where `async` calls run), or `nil` on any other thread.
package func currentSwiftDALThreadName() -> String? {
    ThreadAccess.holdings.workerName
}

package func reentrancyError(_ what: String) -> DALError {
    DALError(
        .reentrantAccess,
        "\(what) re-entered on a thread that already holds a connection of the same database; "
            + "call DAL operations or reentrantRead/reentrantWrite inside the closure instead")
}
