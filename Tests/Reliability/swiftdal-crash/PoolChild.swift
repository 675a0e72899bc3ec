import Foundation
import SwiftDAL
import Synchronization

/// What the writer and the readers of the pool child share.
final class PoolProgress: Sendable {
    /// The last transaction whose `write` returned: every read that starts later must see it.
    let committed = Atomic<Int64>(0)
    /// Reads completed by all readers.
    let reads = Atomic<Int64>(0)
}

/// The pool child: the same transactions as ``runChild(path:mode:reportEarly:)``, written
/// through a `DatabasePool` while `poolReaderThreads` threads read through the same pool
/// without pause (`pool.read` closures with DAL and SQL reads, and DAL reads on their own),
/// until the child is killed. Prints "committed N reads R" only after transaction N's
/// `write` returned (before it, as the negative control); a reader that sees something
/// wrong prints "problem …", which fails the trial.
func runPoolChild(path: String, mode: CrashMode, reportEarly: Bool) throws -> Never {
    let pool = try DatabasePool(path: path, configuration: mode.configuration)
    try CrashSchema.migrator.migrate(pool)
    let rows = CrashRowDAL(database: pool)
    let state = CrashStateDAL(database: pool)
    let progress = PoolProgress()
    var txn = (try state.findById(1)?.lastTxn ?? 0) + 1
    progress.committed.store(txn - 1, ordering: .releasing)
    for reader in 0..<poolReaderThreads {
        Thread { readContinuously(reader, pool: pool, rows: rows, state: state, progress: progress) }.start()
    }
    // The readers are busy before the first write (bounded: writing starts anyway).
    let deadline = Date().addingTimeInterval(2)
    while progress.reads.load(ordering: .relaxed) < Int64(poolReaderThreads) && Date() < deadline { usleep(100) }
    while true {
        if reportEarly { report("committed \(txn) reads \(progress.reads.load(ordering: .relaxed))") }
        try pool.write { _ in
            try writeTransaction(txn, rows: rows, state: state, reportEarly: reportEarly, window: poolControlWindow)
        }
        progress.committed.store(txn, ordering: .releasing)
        if !reportEarly { report("committed \(txn) reads \(progress.reads.load(ordering: .relaxed))") }
        txn += 1
    }
}

/// The negative control's window in the pool child, in microseconds: wider than the
/// queue child's 200, because here the writer shares the CPU with the readers and, in
/// WAL/FULL, spends most of each commit in fsync, where a kill no longer loses the commit
/// (its WAL frames are already in the page cache).
private let poolControlWindow: UInt32 = 10_000

/// One reader thread: reads until the process is killed, checking what it sees.
private func readContinuously(
    _ reader: Int, pool: DatabasePool, rows: CrashRowDAL, state: CrashStateDAL, progress: PoolProgress
) {
    var lastSeen: Int64 = 0
    while true {
        do {
            let floor = progress.committed.load(ordering: .acquiring)
            // One snapshot: the state row through the DAL and the row count through SQL agree.
            let (lastTxn, count) = try pool.read { db in
                let lastTxn = try state.findById(1)?.lastTxn ?? -1
                return (lastTxn, try db.fetchScalar(Int64.self, "SELECT COUNT(*) FROM crash_rows") ?? -1)
            }
            if lastTxn < floor {
                report("problem reader \(reader) saw transaction \(lastTxn) after \(floor) had committed")
            }
            if lastTxn < lastSeen { report("problem reader \(reader) saw transaction \(lastTxn) after \(lastSeen)") }
            if count != lastTxn * rowsPerTransaction {
                report("problem reader \(reader) saw \(count) rows with transaction \(lastTxn): a partial transaction")
            }
            lastSeen = max(lastSeen, lastTxn)
            // DAL reads on their own (each takes a reader for itself).
            if lastTxn > 0 {
                let found = try rows.find(condition: "txn = \(lastTxn)", orderBy: "k")
                if found.map(\.k) != Array(0..<rowsPerTransaction) {
                    report("problem reader \(reader) found \(found.count) rows of committed transaction \(lastTxn)")
                }
            }
            progress.reads.add(1, ordering: .relaxed)
        } catch {
            report("problem reader \(reader): \("\(error)".replacingOccurrences(of: "\n", with: " "))")
            usleep(10_000)
        }
    }
}
