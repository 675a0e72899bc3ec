internal import CSwiftDALPostgres
import Dispatch
import Foundation
import SwiftDALConnection

/// libpq's cancel handle of one connection (`PGcancel`: the server's address, the
/// backend's process id and secret key), usable from any thread, freed with its last user.
final class CancelHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init?(_ connection: OpaquePointer) {
        guard let pointer = PQgetCancel(connection) else { return nil }
        self.pointer = pointer
    }

    deinit { PQfreeCancel(pointer) }
}

extension CancelHandle {
    /// Sends PostgreSQL's cancel request for the statement the connection runs (on a
    /// ``StopRequestSender`` thread: `PQcancel` connects to the server and waits for it to
    /// answer). Whether it was delivered does not matter here: the statement's own result
    /// (57014, or its rows) is what the call sees.
    func cancelRunningStatement() {
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(pointer, &message, Int32(message.count))
    }
}
