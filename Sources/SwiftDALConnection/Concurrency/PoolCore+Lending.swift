/// What every pool does with its core to serve a call: lend a connection to the calling
/// thread, and the transactions of `read` and `write` over it. The SQLite pool and each
/// server engine's pool call these; only opening a connection differs between them.
extension PoolCore {
    /// Runs `body` with one of the core's connections lent to this thread as `owner`'s
    /// (DAL calls inside find it): waits in line for a slot (the call's time limit and
    /// ``Options/acquireTimeout`` bound the wait), records the wait when `measuringWaits`
    /// (an observer reads it), ends a transaction a failed rollback left open (never
    /// joined, and no old snapshot kept), and gives the slot back when `body` returns or
    /// throws.
    ///
    /// For example, a pool's `reentrantRead`:
    /// `try core.lend(to: self, writing: false, measuringWaits: measuresWaits, body)`.
    package func lend<T>(
        to owner: AnyObject, writing: Bool, measuringWaits: Bool, _ body: (Database) throws -> T
    ) throws -> T {
        // The thread's holdings are looked up once for the whole call.
        let holdings = ThreadAccess.holdings
        let lease = try acquire(for: holdings)
        defer { release(lease, for: holdings) }
        // A local, not the lease: a `var` lease captured by the `defer` made its closure
        // generic and cost ~60 instructions a call (callgrind, W3a).
        var waited = lease.waited
        let database = try connection(of: lease, waited: &waited)
        if measuringWaits { database.recordWait(nanoseconds: waited) }
        return try ThreadAccess.holding(database, of: owner, isWriter: writing, waited: waited, holdings: holdings) {
            try database.discardLeftoverTransaction()
            return try body(database)
        }
    }

    /// A server engine's `read`: `body` in a read-only, repeatable-read transaction (one
    /// snapshot) on a connection lent as `owner`'s; re-entering from a thread that holds
    /// one of `owner`'s connections throws ``DALError/Code/reentrantAccess``.
    package func readTransaction<T>(
        for owner: AnyObject, measuringWaits: Bool, _ body: (Database) throws -> T
    ) throws -> T {
        guard !isHoldingConnection(of: owner) else { throw reentrancyError("read") }
        return try lend(to: owner, writing: false, measuringWaits: measuringWaits) { db in
            try db.inTransaction(.deferred, isolation: .repeatableRead, readOnly: true) { try body(db) }
        }
    }

    /// A server engine's `write`: `body` in a transaction at `isolation` (`nil`: the
    /// server's default) that commits on return and rolls back on throw, on a connection
    /// lent as `owner`'s; re-entering throws ``DALError/Code/reentrantAccess``.
    package func writeTransaction<T>(
        for owner: AnyObject, isolation: IsolationLevel?, measuringWaits: Bool, _ body: (Database) throws -> T
    ) throws -> T {
        guard !isHoldingConnection(of: owner) else { throw reentrancyError("write") }
        return try lend(to: owner, writing: true, measuringWaits: measuringWaits) { db in
            try db.inTransaction(.immediate, isolation: isolation) { try body(db) }
        }
    }

    /// A server engine's `reentrantRead` (`writing` false) or `reentrantWrite`: `body` on
    /// the connection of `owner` this thread holds, if any (a write inside a read throws),
    /// else on one lent for the call, outside any transaction of SwiftDAL's.
    package func reentrantAccess<T>(
        for owner: AnyObject, writing: Bool, measuringWaits: Bool, _ body: (Database) throws -> T
    ) throws -> T {
        if let held = try heldConnection(of: owner, writing: writing) { return try body(held) }
        return try lend(to: owner, writing: writing, measuringWaits: measuringWaits, body)
    }

    /// How busy the core is now, as a pool reports it (``PoolStatistics``).
    package var statistics: PoolStatistics {
        let gauges = gauges
        return PoolStatistics(
            connectionsOpen: gauges.open, connectionsInUse: gauges.inUse, callersWaiting: gauges.waiting,
            maximumConnections: slots.count)
    }
}
