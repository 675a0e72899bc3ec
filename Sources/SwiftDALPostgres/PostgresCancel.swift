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

/// One cancel request for the statement a connection runs. It is sent by a
/// ``CancelSender`` thread, never by the thread that asks for it (`PQcancel` connects to
/// the server and waits for it to answer: a server that does not answer would hold the
/// caller, and with it the path that fires every time limit of the process).
final class CancelRequest: @unchecked Sendable {
    private enum Phase {
        case waiting, sending, answered, withdrawn
    }

    private let handle: CancelHandle
    private let phase = Locked(Phase.waiting)
    private let answered = DispatchSemaphore(value: 0)

    init(_ handle: CancelHandle) {
        self.handle = handle
    }

    /// Sends the request (on a sender's thread), unless it was withdrawn first.
    func send() {
        let proceed = phase.withLock { phase -> Bool in
            guard phase == .waiting else { return false }
            phase = .sending
            return true
        }
        guard proceed else { return }
        var message = [CChar](repeating: 0, count: 256)
        // Whether it was delivered does not matter here: the statement's own result (57014
        // or its rows) is what the call sees.
        _ = PQcancel(handle.pointer, &message, Int32(message.count))
        phase.withLock { $0 = .answered }
        answered.signal()
    }

    /// Makes sure the request can no longer reach the server: withdrawn when it was not
    /// sent yet, or answered (the server has had it; an idle session ignores it) within
    /// `limit`. Whether the connection may run statements again: `false` when the request
    /// is still on its way (its server does not answer), and may stop a later statement.
    func settle(waitingAtMost limit: Duration) -> Bool {
        let current = phase.withLock { phase -> Phase in
            if phase == .waiting { phase = .withdrawn }
            return phase
        }
        switch current {
        case .waiting, .withdrawn, .answered: return true
        case .sending:
            let nanoseconds = Int(clamping: limit.clampedNanoseconds)
            return answered.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
        }
    }
}

/// The threads that send one pool's cancel requests: at most two at once, so that a
/// server that does not answer holds two threads at most (its own pool's), and the
/// requests behind them wait their turn (their calls abandon their connections when the
/// grace period passes first). A thread ends when no request is left.
final class CancelSender: @unchecked Sendable {
    private struct State {
        var queue: [CancelRequest] = []
        var threads = 0
    }

    private let state = Locked(State())
    static let maximumThreads = 2

    /// Sends `request` from a sender thread, starting one when fewer than two run.
    func send(_ request: CancelRequest) {
        let startThread = state.withLock { state -> Bool in
            state.queue.append(request)
            guard state.threads < Self.maximumThreads else { return false }
            state.threads += 1
            return true
        }
        guard startThread else { return }
        Thread { [self] in
            setCurrentThreadName("dal-pg-cancel")
            while let next = state.withLock({ state -> CancelRequest? in
                guard !state.queue.isEmpty else {
                    state.threads -= 1
                    return nil
                }
                return state.queue.removeFirst()
            }) {
                next.send()
            }
        }.start()
    }
}
