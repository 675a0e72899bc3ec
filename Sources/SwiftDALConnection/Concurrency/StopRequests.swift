import Dispatch
import Foundation

/// One request to stop the statement a server connection runs (PostgreSQL's cancel
/// request, MariaDB's `KILL QUERY`). A ``StopRequestSender`` thread delivers it, never the
/// thread that asks for it: delivering connects to the server and waits for its answer, and
/// a server that does not answer would hold the caller, and with it the path that fires
/// every time limit of the process.
///
/// For example, an engine's connection: `stopRequests.send { PQcancel(handle, …) }`
/// (through ``PendingStopRequests``).
package final class StopRequest: @unchecked Sendable {
    private enum Phase {
        case waiting, sending, answered, withdrawn
    }

    private let deliver: @Sendable () -> Void
    private let phase = Locked(Phase.waiting)
    private let answered = DispatchSemaphore(value: 0)

    /// A request that `deliver` sends (connecting, sending, waiting for the answer).
    /// Whether it reached the server does not matter: the statement's own result (its
    /// engine's "canceled" error, or its rows) is what the call sees.
    package init(_ deliver: @escaping @Sendable () -> Void) {
        self.deliver = deliver
    }

    /// Delivers the request (on a sender's thread), unless it was withdrawn first.
    fileprivate func send() {
        let proceed = phase.withLock { phase -> Bool in
            guard phase == .waiting else { return false }
            phase = .sending
            return true
        }
        guard proceed else { return }
        deliver()
        phase.withLock { $0 = .answered }
        answered.signal()
    }

    /// Makes sure the request can no longer reach the server: withdrawn when it was not
    /// sent yet, or answered (the server has had it; an idle session ignores it) within
    /// `limit`. Whether the connection may run statements again: `false` when the request
    /// is still on its way (its server does not answer), and may stop a later statement.
    fileprivate func settle(waitingAtMost limit: Duration) -> Bool {
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

/// The threads that deliver one pool's stop requests: at most two at once, so that a
/// server that does not answer holds two threads at most (its own pool's), and the
/// requests behind them wait their turn (their calls abandon their connections when the
/// grace period passes first). A thread ends when no request is left.
///
/// For example, a pool shares one among its connections:
/// `let sender = StopRequestSender(threadName: "dal-pg-cancel")`.
package final class StopRequestSender: @unchecked Sendable {
    private struct State {
        var queue: [StopRequest] = []
        var threads = 0
    }

    private let state = Locked(State())
    private let threadName: String
    /// The most threads delivering at once.
    package static let maximumThreads = 2

    /// A sender whose threads are called `threadName` (at most 15 bytes show).
    package init(threadName: String) {
        self.threadName = threadName
    }

    /// Delivers `request` from a sender thread, starting one when fewer than two run;
    /// returns at once.
    fileprivate func send(_ request: StopRequest) {
        let startThread = state.withLock { state -> Bool in
            state.queue.append(request)
            guard state.threads < Self.maximumThreads else { return false }
            state.threads += 1
            return true
        }
        guard startThread else { return }
        Thread { [self] in
            setCurrentThreadName(threadName)
            while let next = state.withLock({ state -> StopRequest? in
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

/// A server connection's stop requests for its current call: sent through the pool's
/// ``StopRequestSender``, and settled before the connection runs anything else.
///
/// For example:
///
/// ```swift
/// func cancelRunningStatement() {
///     stopRequests.send { [handle] in _ = PQcancel(handle.pointer, &message, 256) }
/// }
/// func clearCancelRequest() {
///     if !stopRequests.settle(waitingAtMost: gracePeriod) { failed = true }
/// }
/// ```
package final class PendingStopRequests: @unchecked Sendable {
    private let sender: StopRequestSender
    private let requests = Locked<[StopRequest]>([])

    /// The requests of a connection whose pool delivers them through `sender`.
    package init(sender: StopRequestSender) {
        self.sender = sender
    }

    /// Sends a request that `deliver` delivers; returns at once.
    package func send(_ deliver: @escaping @Sendable () -> Void) {
        let request = StopRequest(deliver)
        requests.withLock { $0.append(request) }
        sender.send(request)
    }

    /// Settles every request sent since the last settling (see ``StopRequest``): whether
    /// the connection may run statements again (`false`: a request is still on its way
    /// after `limit`, and may stop a later statement).
    package func settle(waitingAtMost limit: Duration) -> Bool {
        let pending = requests.withLock { requests -> [StopRequest] in
            defer { requests = [] }
            return requests
        }
        // One deadline for them all: two requests (a shutdown's and the call's own limit)
        // wait `limit` at most together, not one after the other.
        let end = DeadlineScheduler.now() &+ UInt64(CallControl.boundedNanoseconds(limit))
        var settled = true
        for request in pending {
            let left = Duration.nanoseconds(Int64(end - min(end, DeadlineScheduler.now())))
            if !request.settle(waitingAtMost: left) { settled = false }
        }
        return settled
    }
}
