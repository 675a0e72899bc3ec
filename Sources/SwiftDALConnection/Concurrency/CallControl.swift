import Synchronization

/// What may stop a call while it runs: the cancellation of the task that awaits it, or
/// its deadline. A queue or pool attaches the connection it lends to the call's control;
/// stopping the call interrupts the statement running on that connection
/// (`sqlite3_interrupt`, or PostgreSQL's cancel request, sent from a thread of its own),
/// and the call throws `CancellationError` or ``DALError/Code/timeout`` once its
/// transaction is over on the server: rolled back there, or its connection closed when
/// the rollback could not run.
///
/// Stopping never blocks: it runs on the path that fires every time limit of the process
/// (``DeadlineScheduler``). When the interrupted statement has not ended within its
/// engine's grace period (a server that does not answer), the connection is abandoned:
/// its socket is shut down, the statement fails at once, and the pool replaces the
/// connection.
package final class CallControl: @unchecked Sendable {
    package enum Reason: Sendable {
        case cancelled
        case timedOut(Duration)
        /// The call's pool (named) shut down, and its grace period ended while the call ran.
        case shutDown(String)

        /// The error the call throws.
        package var error: any Error { error(connectionClosed: false) }

        /// Whether the error says what became of the call's transaction (rolled back, or
        /// its connection closed), which is known only once the stop has ended: a
        /// cancellation's `CancellationError` does not.
        package var saysWhetherRolledBack: Bool {
            if case .cancelled = self { return false }
            return true
        }

        /// The error the call throws; `connectionClosed` when its connection was closed as
        /// it stopped (its server did not answer the stop within the grace period, or the
        /// connection broke): nothing was rolled back then, and the server rolls back what
        /// was not committed as the session ends.
        package func error(connectionClosed: Bool) -> any Error {
            switch self {
            case .cancelled: return CancellationError()
            case .timedOut(let limit) where connectionClosed:
                return DALError(
                    .timeout,
                    "the call ran past its time limit of \(limit) and was stopped, and its connection was closed "
                        + "(the server did not answer the stop in time, or the connection broke); nothing it had not "
                        + "committed is kept: the server rolls it back as the session ends")
            case .timedOut(let limit):
                return DALError(
                    .timeout,
                    "the call ran past its time limit of \(limit) and was stopped; nothing it had not committed "
                        + "was kept (its transaction, if any, was rolled back)")
            case .shutDown(let pool) where connectionClosed:
                return DALError(
                    .connectionClosed,
                    "\(pool) shut down: its grace period ended while this call ran, so the call was stopped, and its "
                        + "connection was closed (the server did not answer the stop in time, or the connection "
                        + "broke); nothing it had not committed is kept: the server rolls it back as the session ends")
            case .shutDown(let pool):
                return DALError(
                    .connectionClosed,
                    "\(pool) shut down: its grace period ended while this call ran, so the call was stopped; nothing "
                        + "it had not committed was kept (its transaction, if any, was rolled back)")
            }
        }
    }

    // Not a Mutex: the state holds a connection, which is not Sendable.
    private let lock = PlainMutex()
    // Touched only with `lock` held.
    private var stopReason: Reason?
    /// The connection the call uses (its first access's)…
    private var attached: Database?
    /// … and those of accesses nested inside it, to other pools (`poolB.read { }` inside
    /// `poolA.write { }`), innermost last: a stop interrupts every one of them.
    private var nested: [Database] = []
    private var stopActions: [@Sendable (Reason) -> Void] = []
    /// How many connections are being opened for the call now (``opening(_:)``).
    private var openings = 0
    /// Whether the call ever had a connection attached: its work has begun.
    private var everAttached = false
    /// Answers the call's caller at once, set by an `async` call's job: used when the call
    /// is stopped while a connection opens (see ``answerEarlyWhileOpening(_:)``).
    private var earlyAnswer: (@Sendable (Reason) -> Void)?
    /// The pool line the call waits in, if it does (its stop takes it out).
    private var waitingIn: (core: PoolCore, waiter: PoolCore.Waiter)?
    private var deadlines: [(entry: DeadlineScheduler.Entry, reported: Duration)] = []
    /// The grace periods of the interrupted connections (see ``interrupt(_:)``).
    private var graces: [(database: ObjectIdentifier, entry: DeadlineScheduler.Entry)] = []
    /// Whether the call's time limit was set for the whole call (an `async` call's, which
    /// counts from its start, its wait for a connection included): accesses inside it then
    /// add no limit of their own from the pool's configuration.
    package let limitsWholeCall: Bool

    package init(limitsWholeCall: Bool = false) {
        self.limitsWholeCall = limitsWholeCall
    }

    /// Why the call was stopped, if it was.
    package var reason: Reason? { lock.withLock { stopReason } }

    /// Whether an access of the stopped call found its connection closed as it ended (the
    /// server did not answer the stop in time): a stream's error says so.
    package var closedConnection: Bool { lock.withLock { connectionClosed } }
    // Touched only with `lock` held.
    private var connectionClosed = false

    /// Records that an access of the stopped call ended with its connection closed.
    package func noteClosedConnection() {
        lock.withLock { connectionClosed = true }
    }

    /// Stops the call: records why (the first reason wins), interrupts the statement running
    /// on the attached connection, if any, and runs the actions registered with ``onStop(_:)``.
    /// Never blocks.
    package func stop(_ reason: Reason) {
        let (actions, waiting) = lock.withLock {
            () -> ([@Sendable (Reason) -> Void], (core: PoolCore, waiter: PoolCore.Waiter)?) in
            guard stopReason == nil else { return ([], nil) }
            stopReason = reason
            // Interrupting under the lock: the connection cannot be detached (and lent to
            // another call) meanwhile.
            if let attached { interrupt(attached) }
            for (index, database) in nested.enumerated()
            where database !== attached && !nested[..<index].contains(where: { $0 === database }) {
                interrupt(database)  // each connection once (a re-entrant access nests the same one)
            }
            var actions = stopActions
            if openings > 0, let earlyAnswer { actions.append(earlyAnswer) }
            defer {
                stopActions = []
                waitingIn = nil
                earlyAnswer = nil
            }
            return (actions, waitingIn)
        }
        if let waiting { waiting.core.withdrawJob(waiting.waiter, reason.error) }
        for action in actions { action(reason) }
    }

    /// Sets how the caller of an `async` call is answered at once when the call is
    /// stopped while a connection opens for it: a connect that cannot be interrupted once
    /// begun (Connector/C's) goes on to its own bound on the pool's thread, but the caller
    /// waits for it no longer. Nothing of the call runs after (its access throws the
    /// stop's error: ``attach(_:)``); a connection that still opens goes to the pool
    /// (SQLite's), or is closed as the stop ends its setup (a server's). `answer` is
    /// called at most once, outside the control's lock.
    package func answerEarlyWhileOpening(_ answer: @escaping @Sendable (Reason) -> Void) {
        lock.withLock { earlyAnswer = answer }
    }

    /// Runs `open` (a connection being opened for the call) with the call marked as
    /// opening one (see ``answerEarlyWhileOpening(_:)``); throws the stop's error at once,
    /// without opening, when the call was stopped already. Only the call's first
    /// connection counts: once one was attached, the call's work has begun (it may have
    /// committed a write, then opened another pool's connection), and its caller is
    /// answered when that work has ended.
    package func opening<T>(_ open: () throws -> T) throws -> T {
        let (stopped, counted) = lock.withLock { () -> (Reason?, Bool) in
            guard stopReason == nil else { return (stopReason, false) }
            guard !everAttached else { return (nil, false) }
            openings += 1
            return (nil, true)
        }
        if let stopped { throw stopped.error }
        defer { if counted { lock.withLock { openings -= 1 } } }
        return try open()
    }

    /// Records that the call waits in `core`'s line as `waiter`: its stop takes it out (at
    /// once if it was stopped already). Cleared when the call ends.
    func stopWaiting(in core: PoolCore, _ waiter: PoolCore.Waiter) {
        let stopped = lock.withLock { () -> Reason? in
            if stopReason == nil { waitingIn = (core, waiter) }
            return stopReason
        }
        if let stopped {
            core.withdrawJob(waiter, stopped.error)
            return
        }
        // Handed a slot before this was recorded (its job may even have run and ended the
        // call already): nothing is left to take out of line, and the record must not
        // outlive the call (it would hold the waiter, its job and the pool in a cycle).
        if !core.isQueued(waiter) {
            lock.withLock {
                if waitingIn?.waiter === waiter { waitingIn = nil }
            }
        }
    }

    /// Interrupts `database`'s statement and, for an engine whose interruption is a request
    /// to a server, gives that request a grace period (with the lock held).
    private func interrupt(_ database: Database) {
        database.interruptRunningStatement()
        guard let period = database.interruptGracePeriod else { return }
        let target = AbandonTarget(database: database)
        let entry = DeadlineScheduler.shared.schedule(after: period) { [weak self] in
            guard let self else { return }
            self.lock.withLock {
                // Still running the call's statement: the server did not answer in time.
                if let database = target.database, self.isAttached(database) { database.abandonConnection() }
            }
        }
        graces.append((ObjectIdentifier(database), entry))
    }

    /// Whether `database` is attached (with the lock held).
    private func isAttached(_ database: Database) -> Bool {
        attached === database || nested.contains { $0 === database }
    }

    /// Runs `action` when the call is stopped (at once if it was already): for a call that
    /// may wait on something other than a statement (a place in a pool's line, a stream's
    /// producer waiting for its consumer). Called outside the control's lock.
    package func onStop(_ action: @escaping @Sendable (Reason) -> Void) {
        let stopped = lock.withLock { () -> Reason? in
            if stopReason == nil { stopActions.append(action) }
            return stopReason
        }
        if let stopped { action(stopped) }
    }

    /// `limit` in nanoseconds from 0 to a century: a limit of more than a century is none,
    /// and a deadline that far stays clear of overflowing the clock's nanoseconds.
    package static func boundedNanoseconds(_ limit: Duration) -> Int64 {
        min(max(0, limit.clampedNanoseconds), 100 * 365 * 86_400 * 1_000_000_000)
    }

    /// Stops the call with `.timedOut(reported)` once `limit` has passed; returns the
    /// deadline, which ``removeDeadline(_:)`` takes back.
    @discardableResult
    package func addDeadline(after limit: Duration, reporting reported: Duration) -> DeadlineScheduler.Entry {
        // A strong reference (a weak one costs a side table per call): the deadline is
        // cancelled when the access or the call ends.
        let entry = DeadlineScheduler.shared.schedule(afterNanoseconds: Self.boundedNanoseconds(limit)) { [self] in
            stop(.timedOut(reported))
        }
        lock.withLock { deadlines.append((entry, reported)) }
        return entry
    }

    /// The time left before the call's earliest time limit fires (zero once it has), or
    /// `nil` when the call has none. For a wait that cannot be interrupted once begun (a
    /// blocking connect): it can still be bounded by the call's limit, read here on the
    /// pool's thread, where an `async` call's task-local limit cannot be.
    package var timeLeft: Duration? {
        let earliest = lock.withLock { deadlines.lazy.map(\.entry.deadline).min() }
        guard let earliest else { return nil }
        return .nanoseconds(Int64(earliest - min(earliest, DeadlineScheduler.now())))
    }

    /// The call's stop when one of its time limits has passed, stopping it now if the
    /// deadline's timer has not fired yet (it is about to): for a wait that ended on its
    /// own at the same moment (a connect bounded by the time the call had left), so that
    /// the call reports its time-out, not the wait's error. `nil` while no limit passed.
    package func stopIfPastDeadline() -> Reason? {
        let now = DeadlineScheduler.now()
        let passed = lock.withLock { () -> Duration? in
            guard stopReason == nil else { return nil }
            return deadlines.first { $0.entry.deadline <= now }?.reported
        }
        if let passed { stop(.timedOut(passed)) }
        return reason
    }

    /// Takes back a deadline of ``addDeadline(after:reporting:)`` (its access ended).
    package func removeDeadline(_ entry: DeadlineScheduler.Entry) {
        DeadlineScheduler.shared.cancel(entry)
        lock.withLock { deadlines.removeAll { $0.entry === entry } }
    }

    /// Ends the call: its deadlines no longer fire, and what it registered is let go.
    package func end() {
        let entries = lock.withLock { () -> [(entry: DeadlineScheduler.Entry, reported: Duration)] in
            defer {
                deadlines = []
                waitingIn = nil
                stopActions = []
                earlyAnswer = nil
            }
            return deadlines
        }
        for (entry, _) in entries { DeadlineScheduler.shared.cancel(entry) }
    }

    /// Attaches the connection a call is about to use; throws the call's error when it
    /// was stopped already. An access nested in another of the same call (another pool's
    /// connection) is attached beside it: a stop interrupts both.
    func attach(_ database: Database) throws {
        let reason = lock.withLock { () -> Reason? in
            if stopReason == nil {
                if attached == nil { attached = database } else { nested.append(database) }
                everAttached = true
            }
            return stopReason
        }
        if let reason { throw reason.error }
    }

    /// Detaches `database` when the call's access to it ends. After a stop, the
    /// connection's interruption is cleared (for PostgreSQL once the cancel request has
    /// been answered, so that it cannot stop the connection's next statement), outside
    /// the lock: that may wait up to the grace period.
    func detach(_ database: Database) {
        let (wasStopped, pendingGraces) = lock.withLock { () -> (Bool, [DeadlineScheduler.Entry]) in
            if let index = nested.lastIndex(where: { $0 === database }) {
                nested.remove(at: index)
            } else if attached === database {
                attached = nil
            } else {
                return (false, [])  // never attached (the call was stopped before)
            }
            // Still used by an access further out (a re-entrant one ended): left as it is.
            if isAttached(database) { return (false, []) }
            guard !graces.isEmpty else { return (stopReason != nil, []) }
            let identifier = ObjectIdentifier(database)
            let mine = graces.filter { $0.database == identifier }.map(\.entry)
            graces.removeAll { $0.database == identifier }
            return (stopReason != nil, mine)
        }
        for entry in pendingGraces { DeadlineScheduler.shared.cancel(entry) }
        if wasStopped { database.clearInterrupt() }
    }
}

/// The connection a grace period may abandon, weakly held (it is only touched under the
/// control's lock while still attached, or under its pool's mutex while still lent).
struct AbandonTarget: @unchecked Sendable {
    weak var database: Database?
}

/// A time limit for every database call made inside `operation`: a call still running
/// when it passes is stopped (its statement interrupted, its transaction rolled back) and
/// throws ``DALError/Code/timeout``. It overrides the database's default
/// (``Configuration/callTimeout``); calls made on other tasks are not affected. An `async`
/// call's limit counts from its start, its wait for a connection included.
///
/// `operation` runs in the caller's isolation (an actor's method, the main actor), as
/// the standard library's `withTaskCancellationHandler` does; nested, the innermost
/// limit applies.
///
/// For example:
///
/// ```swift
/// let report = try await withDatabaseTimeout(.seconds(2)) {
///     try await orders.find(condition: "placed_at > \(since)")
/// }
/// ```
public func withDatabaseTimeout<T>(
    _ limit: Duration, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> T
) async rethrows -> T {
    CallLimits.scopes.add(1, ordering: .relaxed)
    defer { CallLimits.scopes.subtract(1, ordering: .relaxed) }
    return try await CallLimits.$timeout.withValue(limit, operation: operation, isolation: isolation)
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
    package static var current: Duration? {
        scopes.load(ordering: .relaxed) == 0 ? nil : timeout
    }

    /// The limit of an access or an opening of its own: `withDatabaseTimeout`'s around it,
    /// else `callTimeout` (its pool's), unless the `async` call it runs under (`control`)
    /// has its limit for the whole call already.
    @inline(__always)
    package static func own(under control: CallControl?, callTimeout: Duration?) -> Duration? {
        current ?? (control?.limitsWholeCall == true ? nil : callTimeout)
    }
}
