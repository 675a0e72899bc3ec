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

/// Sends a stopped call's cancel request again, every 100 ms, while the pipelined batch it
/// stopped still runs. PostgreSQL drops a cancel request that reaches the backend while it
/// reads its next message, as it does between pipelined statements (sent by the thousand,
/// flushed in 8 KB pieces). The statements after it then run, and one waiting on a lock
/// held elsewhere would keep the batch's earlier rows locked until the session died, long
/// after the call had reported its rollback. The deadline scheduler's thread only queues
/// each request (the pool's stop sender delivers it), and nothing is queued for a
/// pipeline once it has ended: the `ROLLBACK` after it settles every request sent.
///
/// For example, a connection: `pipelineBegins()` and `defer { pipelineEnded() }` around a
/// pipeline, and `callStopped(for: grace) { requests.send { … } }` when its call is stopped.
final class PipelineCancelResends: @unchecked Sendable {
    static let interval = Duration.milliseconds(100)

    private struct State {
        var running = false
        /// Which pipeline runs: a resend scheduled for an earlier one sends nothing.
        var generation = 0
    }
    private let state = Locked(State())

    /// A pipeline begins: its statements are about to be made and sent.
    func pipelineBegins() {
        state.withLock {
            $0.running = true
            $0.generation &+= 1
        }
    }

    /// The pipeline ended: nothing is queued for it once this returns.
    func pipelineEnded() {
        state.withLock { $0.running = false }
    }

    /// The call was stopped: while the pipeline running now runs, `send` is called every
    /// interval to queue the cancel request again, for `period` at most (the stop's grace
    /// period: past it the call abandons the connection; a shutdown without one still ends
    /// the resends). Never blocks.
    func callStopped(for period: Duration, _ send: @escaping @Sendable () -> Void) {
        guard let generation = state.withLock({ $0.running ? $0.generation : nil }) else { return }
        let times = max(1, Int(period / Self.interval))
        schedule(generation, remaining: times, send)
    }

    private func schedule(_ generation: Int, remaining: Int, _ send: @escaping @Sendable () -> Void) {
        DeadlineScheduler.shared.schedule(after: Self.interval) { [weak self] in
            guard let self else { return }
            let sent = state.withLock { state -> Bool in
                guard state.running, state.generation == generation else { return false }
                send()
                return true
            }
            if sent, remaining > 1 { schedule(generation, remaining: remaining - 1, send) }
        }
    }
}
