import Dispatch
import Synchronization

/// What may stop a call while it runs: the cancellation of the task that awaits it, or
/// its deadline. A queue or pool attaches the connection it lends to the call's control;
/// stopping the call interrupts the statement running on that connection
/// (`sqlite3_interrupt`, or PostgreSQL's cancel request), and the call throws
/// `CancellationError` or ``DALError/Code/timeout``: its transaction is rolled back, and
/// the connection goes back clean to its pool.
package final class CallControl: @unchecked Sendable {
    package enum Reason: Sendable {
        case cancelled
        case timedOut(Duration)

        /// The error the call throws.
        var error: any Error {
            switch self {
            case .cancelled: return CancellationError()
            case .timedOut(let limit):
                return DALError(
                    .timeout,
                    "the call ran past its time limit of \(limit) and was stopped; its transaction was rolled back")
            }
        }
    }

    private struct State {
        var reason: Reason?
        var attached: Database?
        var timer: (any DispatchSourceTimer)?
        /// What else to wake when the call is stopped (a stream's producer waiting for room).
        var onStop: (@Sendable (Reason) -> Void)?
    }

    // Not a Mutex: the state holds a connection and a timer, which are not Sendable.
    private let lock = PlainMutex()
    private var current = State()

    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.withLock { body(&current) }
    }

    package init() {}

    /// Where time limits fire: a serial queue has a thread of its own, so a limit fires
    /// even while the calls it should stop (CPU-bound statements) keep every thread of
    /// the shared concurrent pool busy, where a handler on a global queue would wait.
    private static let timerQueue = makeQueue("SwiftDAL.CallControl.timers")

    /// Why the call was stopped, if it was.
    package var reason: Reason? { withState { $0.reason } }

    /// Stops the call: records why (the first reason wins) and interrupts the statement
    /// running on the attached connection, if any.
    package func stop(_ reason: Reason) {
        let onStop = withState { state -> (@Sendable (Reason) -> Void)? in
            guard state.reason == nil else { return nil }
            state.reason = reason
            // Interrupting under the lock: the connection cannot be detached (and lent to
            // another call) meanwhile.
            state.attached?.interruptRunningStatement()
            defer { state.onStop = nil }
            return state.onStop
        }
        onStop?(reason)
    }

    /// Runs `action` when the call is stopped (at once if it was already): for a call that
    /// may wait on something other than a statement (a stream's producer waiting for its
    /// consumer). Called outside the control's lock.
    package func onStop(_ action: @escaping @Sendable (Reason) -> Void) {
        let stopped = withState { state -> Reason? in
            if state.reason == nil { state.onStop = action }
            return state.reason
        }
        if let stopped { action(stopped) }
    }

    /// `limit` in nanoseconds from 0 to a century: a limit of more than a century is none,
    /// and a deadline that far stays clear of overflowing the clock's nanoseconds.
    static func boundedNanoseconds(_ limit: Duration) -> Int64 {
        min(max(0, limit.clampedNanoseconds), 100 * 365 * 86_400 * 1_000_000_000)
    }

    /// Stops the call with `.timedOut(reported)` (by default `limit`) when `limit` has passed.
    package func stop(after limit: Duration, reporting reported: Duration? = nil) {
        let timer = DispatchSource.makeTimerSource(queue: Self.timerQueue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(Self.boundedNanoseconds(limit))))
        let reported = reported ?? limit
        timer.setEventHandler { [weak self] in self?.stop(.timedOut(reported)) }
        withState { $0.timer = timer }
        timer.resume()
    }

    /// Attaches the connection a call is about to use; throws the call's error when it
    /// was stopped already.
    func attach(_ database: Database) throws {
        let reason = withState { state -> Reason? in
            if state.reason == nil { state.attached = database }
            return state.reason
        }
        if let reason { throw reason.error }
    }

    /// Detaches the connection (and stops the timer) when the call is done with it.
    func detach() {
        let timer = withState { state -> (any DispatchSourceTimer)? in
            if state.reason != nil { state.attached?.clearInterrupt() }
            state.attached = nil
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }
}

/// A time limit for every database call made inside `operation`: a call still running
/// when it passes is stopped (its statement interrupted, its transaction rolled back) and
/// throws ``DALError/Code/timeout``. It overrides the database's default
/// (``Configuration/callTimeout``); calls made on other tasks are not affected.
///
/// For example:
///
/// ```swift
/// let report = try await withDatabaseTimeout(.seconds(2)) {
///     try await orders.find(condition: "placed_at > \(since)")
/// }
/// ```
public func withDatabaseTimeout<T>(_ limit: Duration, operation: () async throws -> T) async rethrows -> T {
    CallLimits.scopes.add(1, ordering: .relaxed)
    defer { CallLimits.scopes.subtract(1, ordering: .relaxed) }
    return try await CallLimits.$timeout.withValue(limit, operation: operation)
}

/// ``withDatabaseTimeout(_:operation:)`` for synchronous code.
///
/// For example, `try withDatabaseTimeout(.milliseconds(500)) { try users.findById(1) }`.
public func withDatabaseTimeout<T>(_ limit: Duration, operation: () throws -> T) rethrows -> T {
    CallLimits.scopes.add(1, ordering: .relaxed)
    defer { CallLimits.scopes.subtract(1, ordering: .relaxed) }
    return try CallLimits.$timeout.withValue(limit, operation: operation)
}

/// The time limit set by ``withDatabaseTimeout(_:operation:)``.
package enum CallLimits {
    @TaskLocal package static var timeout: Duration?
    /// How many `withDatabaseTimeout` scopes are open in the process: while none is, an
    /// access does not look the task-local up (the common case costs one load).
    static let scopes = Atomic<Int>(0)

    /// The limit of the innermost `withDatabaseTimeout` around this call, if any.
    @inline(__always)
    static var current: Duration? {
        scopes.load(ordering: .relaxed) == 0 ? nil : timeout
    }
}
