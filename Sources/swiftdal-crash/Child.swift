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
        if reportEarly { report(txn) }
        try queue.write { _ in
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
            if reportEarly { usleep(200) }  // widen the window the control must be caught in
        }
        if !reportEarly { report(txn) }
        txn += 1
    }
}

private func report(_ txn: Int64) {
    let line = "committed \(txn)\n"
    line.utf8CString.withUnsafeBufferPointer { buffer in
        _ = write(STDOUT_FILENO, buffer.baseAddress, buffer.count - 1)
    }
}
