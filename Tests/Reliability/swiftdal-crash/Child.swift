import Foundation
import SwiftDAL

/// The writer: commits transactions through BaseDAL until it is killed, printing
/// "committed N" only after transaction N's write returned (or before it, as the
/// negative control that the checks must catch).
func runChild(path: String, mode: CrashMode, reportEarly: Bool) throws -> Never {
    let queue = try DatabaseQueue(path: path, configuration: mode.configuration)
    try CrashSchema.migrator.migrate(queue)
    let rows = CrashRowDAL(database: queue)
    let state = CrashStateDAL(database: queue)
    var txn = (try state.findById(1)?.lastTxn ?? 0) + 1
    while true {
        if reportEarly { report("committed \(txn)") }
        try queue.write { _ in try writeTransaction(txn, rows: rows, state: state, reportEarly: reportEarly) }
        if !reportEarly { report("committed \(txn)") }
        txn += 1
    }
}

/// The body of transaction `txn`, run inside a `write` closure: `rowsPerTransaction`
/// inserts, an update of a row of an earlier transaction, and the state row's update.
/// With `reportEarly` (the negative control) it then sleeps `window` microseconds, to widen
/// the window in which a kill loses a commit already reported.
func writeTransaction(
    _ txn: Int64, rows: CrashRowDAL, state: CrashStateDAL, reportEarly: Bool, window: UInt32 = 200
) throws {
    var checksum: Int64 = 0
    for k in 0..<rowsPerTransaction {
        let payload = String(repeating: "p", count: Int(txn % 7 + k * 13))
        _ = try rows.insert2(CrashRow(txn: txn, k: k, payload: payload))
        checksum += Int64(payload.utf8.count)
    }
    // An update in every transaction, of rows written by an earlier one.
    _ = try rows.updateFields(["payload": "updated by \(txn)"], key: max(1, (txn - 1) * rowsPerTransaction))
    let previous = try state.findById(1)?.checksum ?? 0
    _ = try state.updateFields(["last_txn": txn, "checksum": previous + checksum], key: 1)
    if reportEarly { usleep(window) }
}

/// Writes `line` to stdout in one `write` call (atomic for lines this short, even with
/// several threads reporting), unbuffered: a SIGKILL loses nothing already reported.
func report(_ line: String) {
    let text = line + "\n"
    text.utf8CString.withUnsafeBufferPointer { buffer in
        _ = write(STDOUT_FILENO, buffer.baseAddress, buffer.count - 1)
    }
}
