import Dispatch
import Synchronization

/// The engine-neutral heart of every queue and pool: a fixed number of connection places
/// (slots), the connections opened in them on first need, a first-come-first-served line
/// of the callers waiting for one, and the threads that run `async` work.
///
/// - **Synchronous callers** (a `read { }` on a thread) take a free slot at once, or wait
///   in line on a semaphore of their own, under their call's control: its time limit and
///   cancellation, and the pool's own bound on a wait (PostgreSQL's `acquireTimeout`),
///   end the wait with their errors. They run the work on their own thread.
/// - **`async` callers** hold no thread while they wait: the call is a job in the same
///   line, and the slot handed to it runs the work on the slot's own thread
///   (``WorkerThread``), started on first use. So N concurrent calls keep min(N, slots)
///   connections busy on any number of cores, and ten thousand waiting calls cost memory,
///   not threads. The job's call control covers its whole life: a time limit counts its
///   wait, and cancelling the awaiting task withdraws it from the line or stops its
///   statement.
/// - A slot handed back goes to the first caller in line, or back to the free list (the
///   most recently used first, its caches warm). A connection that broke, or that its
///   call asked to be discarded, is closed first and reopened at the slot's next use.
/// - **Closing** refuses new calls with ``DALError/Code/connectionClosed`` and lets the
///   calls in flight and in line finish; then every connection closes.
package final class PoolCore: @unchecked Sendable {
    /// One connection place.
    package final class Slot: @unchecked Sendable {
        package let index: Int
        /// The connection, once opened. Touched only by the slot's current holder, or by
        /// the pool while no one holds it.
        // Not checked for exclusive access at run time (a thread-local lookup on every
        // call): the pool's mutex and the slot's lease order every access.
        @exclusivity(unchecked) package fileprivate(set) var database: Database? {
            didSet { mayBreak = database?.mayBreak ?? false }
        }
        /// Whether ``database`` can break or be ended by its server (a server engine's): only
        /// then does giving the slot back look at the connection (SQLite's never breaks).
        @exclusivity(unchecked) fileprivate var mayBreak = false
        // Touched with the pool's mutex held.
        @exclusivity(unchecked) fileprivate var worker: WorkerThread?
        /// The control of the call holding the slot, when it has one (to stop it at shutdown).
        @exclusivity(unchecked) fileprivate var holderControl: CallControl?
        @exclusivity(unchecked) fileprivate var isLeased = false
        /// Set when a shutdown interrupted the call holding the slot directly (it had no
        /// call control): its interruption is cleared when the slot comes back.
        fileprivate let interruptedAtShutdown = Atomic<Bool>(false)

        fileprivate init(index: Int) { self.index = index }
    }

    /// A slot lent to a caller, with how long the caller waited for it (nanoseconds).
    package struct Lease {
        package let slot: Slot
        /// Whether it is the slot reserved for the `async` job running on this thread (the
        /// job gives it back, not the access).
        fileprivate let isReserved: Bool
        package let waited: UInt64
    }

    /// What a pool tells its core.
    package struct Options: Sendable {
        /// What the pool is called in errors ("the pool on app.sqlite", "PostgreSQL pool on …").
        package var name: String
        /// The thread name of each slot's worker (at most 15 bytes show), followed by its index.
        package var threadName: String
        package var capacity: Int
        /// The longest a caller waits in line before ``DALError/Code/connectionUnavailable``
        /// (`nil`: as long as its call's time limit, or for ever).
        package var acquireTimeout: Duration?
        /// The pool's default time limit for a call (``Configuration/callTimeout``).
        package var callTimeout: Duration?

        package init(
            name: String, threadName: String, capacity: Int, acquireTimeout: Duration? = nil,
            callTimeout: Duration? = nil
        ) {
            self.name = name
            self.threadName = threadName
            self.capacity = max(1, capacity)
            self.acquireTimeout = acquireTimeout
            self.callTimeout = callTimeout
        }
    }

    /// A caller in line: a thread parked on its semaphore, or an `async` call's job.
    final class Waiter: @unchecked Sendable {
        let semaphore: DispatchSemaphore?
        let job: Job?
        // Touched with the pool's mutex held.
        @exclusivity(unchecked) var isQueued = true
        @exclusivity(unchecked) var granted: Slot?
        @exclusivity(unchecked) var failure: (any Error)?
        /// When a job in line gives up (the pool's bound on a wait), monotonic nanoseconds.
        @exclusivity(unchecked) var giveUpAt = UInt64.max

        init(semaphore: DispatchSemaphore) {
            self.semaphore = semaphore
            job = nil
        }

        init(job: Job) {
            semaphore = nil
            self.job = job
        }
    }

    /// An `async` call's work: run on the slot's thread (`slot` and how long it waited), or
    /// failed while in line (`nil` and the error). One closure, one allocation per call.
    struct Job: Sendable {
        let control: CallControl
        let start: UInt64
        let finish: @Sendable (_ slot: Slot?, _ waited: UInt64, _ failure: (any Error)?) -> Void

        func fail(_ error: any Error) { finish(nil, 0, error) }
    }

    private enum Phase {
        case open
        /// New calls are refused; the calls in flight and in line finish.
        case draining
        case closed
    }

    package let options: Options
    private let open: @Sendable () throws -> Database
    package let slots: [Slot]
    private let mutex = PlainMutex()
    // Touched only with `mutex` held; their exclusivity is not checked at run time (a
    // thread-local lookup per access, on every call).
    /// The free slots, as a stack of indexes (the most recently used on top): no array
    /// growth, retain or uniqueness check on the path of every call.
    private let freeStack: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var freeCount: Int
    @exclusivity(unchecked) private var line: [Waiter] = []
    @exclusivity(unchecked) private var lineStart = 0
    @exclusivity(unchecked) private var phase = Phase.open
    @exclusivity(unchecked) private var drained: [@Sendable () -> Void] = []
    /// The one timer of the line: it fires when the first job in line reaches the pool's
    /// bound on a wait (jobs join the line in order, with the same bound, so their
    /// deadlines are in line order too).
    @exclusivity(unchecked) private var lineTimer: DeadlineScheduler.Entry?
    // Gauges, readable without the mutex.
    private let leasedCount = Atomic<Int>(0)
    private let waitingCount = Atomic<Int>(0)
    private let openCount = Atomic<Int>(0)

    /// A core of `options.capacity` slots whose connections `open` opens on first need.
    package init(_ options: Options, open: @escaping @Sendable () throws -> Database) {
        self.options = options
        self.open = open
        slots = (0..<options.capacity).map { Slot(index: $0) }
        freeStack = .allocate(capacity: slots.count)
        for index in 0..<slots.count { freeStack[index] = slots.count - 1 - index }
        freeCount = slots.count
    }

    /// Puts a connection opened beforehand in slot `index` (a queue's or pool writer's).
    package func install(_ database: Database, at index: Int) {
        mutex.withLock { slots[index].database = database }
        openCount.add(1, ordering: .relaxed)
    }

    // MARK: Gauges

    /// Connections open, slots lent, callers in line.
    package var gauges: (open: Int, inUse: Int, waiting: Int) {
        (
            openCount.load(ordering: .relaxed), leasedCount.load(ordering: .relaxed),
            waitingCount.load(ordering: .relaxed)
        )
    }

    /// Whether the `async` job running on this thread has a slot of this core reserved.
    package var isReservedOnThisThread: Bool {
        ThreadAccess.holdings.reservations.contains { $0.core === self }
    }

    /// Whether new calls are refused.
    package var isClosing: Bool { mutex.withLock { phase != .open } }

    // MARK: Synchronous callers

    /// A slot for the calling thread: the one reserved for the `async` job this thread
    /// runs, a free one, or the first one handed back while this caller waits in line,
    /// under its call's control and time limit (`withDatabaseTimeout`, else the pool's
    /// `callTimeout`, unless the `async` call it belongs to has its own).
    /// `holdings` are the calling thread's, looked up once by the caller for the whole call.
    @inline(__always)
    package func acquire(for holdings: ThreadAccess.Holdings) throws -> Lease {
        if !holdings.reservations.isEmpty, let reserved = holdings.takeReservation(of: self) {
            return Lease(slot: reserved.slot, isReserved: true, waited: reserved.waited)
        }
        mutex.lock()
        if phase == .open, freeCount > 0 {
            let slot = popFree()
            slot.isLeased = true
            // A free slot has no holder control: set only when there is one (no retain and
            // release of `nil` on every call).
            if let control = holdings.control { slot.holderControl = control }
            mutex.unlock()
            leasedCount.wrappingAdd(1, ordering: .relaxed)
            return Lease(slot: slot, isReserved: false, waited: 0)
        }
        return try acquireContended(control: holdings.control)
    }

    /// The rest of `acquire` (entered with the mutex held): refused while closing, else in line.
    @inline(never)
    private func acquireContended(control: CallControl?) throws -> Lease {
        guard phase == .open else {
            mutex.unlock()
            throw closedError()
        }
        let limit = CallLimits.own(under: control, callTimeout: options.callTimeout)
        let waiter = Waiter(semaphore: DispatchSemaphore(value: 0))
        line.append(waiter)
        waitingCount.add(1, ordering: .relaxed)
        mutex.unlock()
        return try wait(for: waiter, limit: limit, control: control)
    }

    /// Waits in line until a slot is handed to `waiter`, or its call's stop, its time limit
    /// or the pool's bound comes first. A call's cancellation is looked at every 10 ms; a
    /// long wait is cut into slices measured on the monotonic clock.
    private func wait(for waiter: Waiter, limit: Duration?, control: CallControl?) throws -> Lease {
        let start = DeadlineScheduler.now()
        let limitEnd = limit.map { start &+ UInt64(CallControl.boundedNanoseconds($0)) } ?? .max
        let giveUpEnd = options.acquireTimeout.map { start &+ UInt64(CallControl.boundedNanoseconds($0)) } ?? .max
        let end = min(limitEnd, giveUpEnd)
        while true {
            var failure: (any Error)?
            if let reason = control?.reason {
                failure = reason.error
            } else {
                let now = DeadlineScheduler.now()
                if now >= end {
                    failure =
                        now >= limitEnd && limit != nil
                        ? CallControl.Reason.timedOut(limit ?? .zero).error : unavailableError()
                } else {
                    let slice: UInt64 = control != nil ? 10_000_000 : 100_000_000
                    let until = end == .max && control == nil ? UInt64.max : min(end, now &+ slice)
                    let timeout: DispatchTime =
                        until == .max ? .distantFuture : .now() + .nanoseconds(Int(clamping: until - now))
                    guard waiter.semaphore?.wait(timeout: timeout) == .success else { continue }
                }
            }
            mutex.lock()
            if let slot = waiter.granted {
                slot.holderControl = control
                mutex.unlock()
                if let failure {
                    // Handed over just as the call stopped: pass it on.
                    handOver(slot)
                    throw failure
                }
                return Lease(slot: slot, isReserved: false, waited: DeadlineScheduler.now() - start)
            }
            if let closed = waiter.failure {
                mutex.unlock()
                throw closed
            }
            guard let failure else {
                mutex.unlock()
                continue
            }
            withdraw(waiter)
            mutex.unlock()
            throw failure
        }
    }

    /// Gives `lease` back: the slot goes to the first caller in line, or back to the free
    /// list (`holdings`: the calling thread's, as for ``acquire(for:)``).
    @inline(__always)
    package func release(_ lease: Lease, for holdings: ThreadAccess.Holdings) {
        if lease.isReserved {
            holdings.returnReservation(of: self)
            return
        }
        handOver(lease.slot)
    }

    /// The connection of `lease`'s slot, opened now when it has none (refused once the
    /// pool is closing and nothing is open there).
    /// A connection whose server ended the session while it sat idle is replaced first:
    /// nothing was sent on it, so nothing is lost or retried.
    /// `waited` starts as the lease's wait and grows by the time spent opening one: the
    /// call's time limit counts both.
    @inline(__always)
    package func connection(of lease: Lease, waited: inout UInt64) throws -> Database {
        if let database = lease.slot.database {
            guard lease.slot.mayBreak, database.wasClosedWhileIdle else { return database }
            mutex.withLock { lease.slot.database = nil }
            try? database.closeOwnedConnection()
            openCount.subtract(1, ordering: .relaxed)
        }
        return try openConnection(in: lease.slot, waited: &waited)
    }

    /// Opens the connection of `slot` for a call that waited `waited` nanoseconds for it,
    /// and adds the time the opening took to `waited`. An engine bounds its connect by the
    /// call's time left (``CallLimits/leftForOpening(callTimeout:)``); when the call's own
    /// limit ended the opening, the call gets its time-out, not the engine's connection
    /// error (which would say the server is unreachable: a cluster would take a replica out
    /// of rotation for it).
    @inline(never)
    private func openConnection(in slot: Slot, waited: inout UInt64) throws -> Database {
        guard mutex.withLock({ phase != .closed }) else { throw closedError() }
        let holdings = ThreadAccess.holdings
        let now = DeadlineScheduler.now()
        let callStart = now &- min(now &- 1, waited)
        holdings.openingCallStart = callStart
        defer { holdings.openingCallStart = 0 }
        let database: Database
        do {
            database = try holdings.control.map { try $0.opening(open) } ?? open()
        } catch {
            let control = holdings.control
            if let reason = control?.reason ?? control?.stopIfPastDeadline() { throw reason.error }
            if let limit = CallLimits.own(under: control, callTimeout: options.callTimeout),
                CallLimits.leftForOpening(callTimeout: options.callTimeout) == .zero
            {
                throw CallControl.Reason.timedOut(limit).error
            }
            throw error
        }
        mutex.withLock { slot.database = database }
        openCount.add(1, ordering: .relaxed)
        let opened = DeadlineScheduler.now()
        waited = opened &- min(opened, callStart)
        return database
    }

    // MARK: async callers

    /// Runs `work` on a slot's thread with that slot reserved for it (its first `acquire`
    /// of this core gets it without waiting), and returns its result. The call waits in
    /// line holding no thread. Its time limit (`withDatabaseTimeout`, else the pool's
    /// `callTimeout`) counts from now, its wait included; cancelling the awaiting task
    /// withdraws it from the line, or stops its statement.
    package func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        let control = CallControl(limitsWholeCall: true)
        if let limit = CallLimits.current ?? options.callTimeout {
            control.addDeadline(after: limit, reporting: limit)
        }
        return try await withTaskCancellationHandler {
            // A checked continuation: Thread Sanitizer cannot follow an unsafe one resumed on
            // another thread before its task has suspended (its runtime is not instrumented).
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                start(under: control, work) { continuation.resume(with: $0) }
            }
        } onCancel: {
            control.stop(.cancelled)
        }
    }

    /// ``perform(_:)`` without a task: `work` waits in line under `control` (its stop takes
    /// it out), runs on a slot's thread, and `completion` gets its result there (or on the
    /// thread that takes it out of line). For callers that are threads themselves (a
    /// cluster's health checks): nothing here depends on Swift's cooperative threads.
    package func start<T: Sendable>(
        under control: CallControl, _ work: @escaping @Sendable () throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        // Answered once: by the job, or at once when the call is stopped while a
        // connection opens for it (the job then ends on its own, its result dropped).
        let answer = AnswerOnce(completion)
        control.answerEarlyWhileOpening { reason in answer(.failure(reason.error)) }
        submit(
            Job(control: control, start: DeadlineScheduler.now()) { [self] slot, waited, failure in
                guard let slot else {
                    control.end()
                    answer(.failure(failure ?? CancellationError()))
                    return
                }
                let result = Result {
                    try ThreadAccess.running(under: control, reserving: slot, of: self, waited: waited) { try work() }
                }
                control.end()
                handOver(slot)
                answer(result)
            })
    }

    /// Starts `job` on a free slot, or puts it in line.
    private func submit(_ job: Job) {
        mutex.lock()
        guard phase == .open else {
            mutex.unlock()
            job.fail(closedError())
            return
        }
        if freeCount > 0 {
            let slot = popFree()
            slot.isLeased = true
            slot.holderControl = job.control
            mutex.unlock()
            leasedCount.add(1, ordering: .relaxed)
            start(job, on: slot)
            return
        }
        let waiter = Waiter(job: job)
        line.append(waiter)
        waitingCount.add(1, ordering: .relaxed)
        if let bound = options.acquireTimeout {
            waiter.giveUpAt = job.start &+ UInt64(CallControl.boundedNanoseconds(bound))
            if lineTimer == nil { armLineTimer(at: waiter.giveUpAt) }
        }
        mutex.unlock()
        // Its stop (time limit, cancellation) takes it out of line; after it started, the
        // stop interrupts its statement instead (and this does nothing).
        job.control.stopWaiting(in: self, waiter)
    }

    private func start(_ job: Job, on slot: Slot) {
        let waited = DeadlineScheduler.now() &- job.start
        worker(of: slot).submit { job.finish(slot, waited, nil) }
    }

    /// The thread of `slot`, started on first use.
    private func worker(of slot: Slot) -> WorkerThread {
        mutex.withLock {
            if let worker = slot.worker { return worker }
            let worker = WorkerThread(name: "\(options.threadName)\(slot.index)")
            slot.worker = worker
            return worker
        }
    }

    /// Whether `waiter` still waits in line (not handed a slot, not withdrawn).
    func isQueued(_ waiter: Waiter) -> Bool {
        mutex.withLock { waiter.isQueued }
    }

    /// Takes a job out of line (its call stopped) and fails it.
    func withdrawJob(_ waiter: Waiter, _ error: any Error) {
        mutex.lock()
        guard waiter.isQueued, waiter.granted == nil else {
            mutex.unlock()
            return
        }
        withdraw(waiter)
        mutex.unlock()
        waiter.job?.fail(error)
    }

    /// Arms the line's timer for `deadline` (with the mutex held).
    private func armLineTimer(at deadline: UInt64) {
        let delay = Int64(clamping: deadline &- min(deadline, DeadlineScheduler.now()))
        lineTimer = DeadlineScheduler.shared.schedule(afterNanoseconds: delay) { [self] in lineTimerFired() }
    }

    /// Fails the jobs in line whose wait reached the pool's bound, and arms the timer for
    /// the next one.
    private func lineTimerFired() {
        var expired: [Waiter] = []
        mutex.lock()
        lineTimer = nil
        let now = DeadlineScheduler.now()
        var index = lineStart
        while index < line.count {
            let waiter = line[index]
            index += 1
            guard waiter.isQueued, waiter.job != nil else { continue }
            guard waiter.giveUpAt <= now else {
                armLineTimer(at: waiter.giveUpAt)
                break
            }
            withdraw(waiter)
            expired.append(waiter)
        }
        mutex.unlock()
        for waiter in expired { waiter.job?.fail(unavailableError()) }
    }

    /// Marks `waiter` out of line (with the mutex held); its place is skipped.
    private func withdraw(_ waiter: Waiter) {
        guard waiter.isQueued else { return }
        waiter.isQueued = false
        waitingCount.subtract(1, ordering: .relaxed)
    }

    /// The first caller still in line, taken out of it (with the mutex held).
    private func nextInLine() -> Waiter? {
        while lineStart < line.count {
            let waiter = line[lineStart]
            lineStart += 1
            if lineStart == line.count {
                line.removeAll(keepingCapacity: true)
                lineStart = 0
            } else if lineStart >= 1024 && lineStart * 2 >= line.count {
                line.removeFirst(lineStart)
                lineStart = 0
            }
            if waiter.isQueued { return waiter }
        }
        return nil
    }

    // MARK: Handing slots back

    /// Gives `slot` to the first caller in line, or back to the free list. A connection
    /// that broke (or that its call asked to discard) is closed first.
    private func handOver(_ slot: Slot) {
        if slot.mayBreak, let database = slot.database, database.mustBeDiscarded {
            // Under the mutex: a shutdown interrupting the slot's call sees it gone.
            mutex.withLock { slot.database = nil }
            try? database.closeOwnedConnection()
            openCount.subtract(1, ordering: .relaxed)
        }
        if slot.interruptedAtShutdown.load(ordering: .relaxed),
            slot.interruptedAtShutdown.exchange(false, ordering: .acquiringAndReleasing)
        {
            slot.database?.clearInterrupt()
        }
        mutex.lock()
        if lineStart < line.count, let waiter = nextInLine() {
            withdraw(waiter)
            waiter.granted = slot
            slot.holderControl = waiter.job?.control
            mutex.unlock()
            if let job = waiter.job {
                start(job, on: slot)
            } else {
                waiter.semaphore?.signal()
            }
            return
        }
        slot.isLeased = false
        if slot.holderControl != nil { slot.holderControl = nil }
        freeStack[freeCount] = slot.index
        freeCount += 1
        leasedCount.wrappingSubtract(1, ordering: .relaxed)
        guard phase != .open && freeCount == slots.count else {
            mutex.unlock()
            return
        }
        let whenDrained = drained
        drained = []
        mutex.unlock()
        for action in whenDrained { action() }
    }

    // MARK: Closing

    /// Refuses new calls, waits until every slot is back (the calls in flight and in line
    /// finish first), then closes every connection and ends the slots' threads.
    package func close() {
        let semaphore = DispatchSemaphore(value: 0)
        beginDraining { semaphore.signal() }
        semaphore.wait()
        closeConnections()
    }

    /// ``close()`` for `async` code: the wait holds no thread, and the connections close on
    /// a slot's thread. Calls still running `gracePeriod` after the start (`nil`: no limit)
    /// are stopped: their statements are interrupted and they throw.
    package func shutdown(gracePeriod: Duration?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumed = Atomic<Bool>(false)
            let grace = gracePeriod.map { period in
                // A strong reference: the entry is cancelled once drained, and a weak one's side
                // table outlives a pool still referenced at exit (a leak to LeakSanitizer).
                DeadlineScheduler.shared.schedule(after: period) { [self] in stopCallsInFlight() }
            }
            beginDraining {
                if let grace { DeadlineScheduler.shared.cancel(grace) }
                if !resumed.exchange(true, ordering: .acquiringAndReleasing) { continuation.resume() }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            worker(of: slots[0]).submit { [self] in
                closeConnections()
                continuation.resume()
            }
        }
    }

    /// Refuses new calls and runs `action` once every slot is free (at once if they are).
    private func beginDraining(_ action: @escaping @Sendable () -> Void) {
        mutex.lock()
        if phase == .open { phase = .draining }
        guard freeCount < slots.count else {
            mutex.unlock()
            action()
            return
        }
        drained.append(action)
        mutex.unlock()
    }

    /// Ends a shutdown's grace period: the callers still in line are refused, and the
    /// calls holding a slot are stopped (their statements interrupted).
    private func stopCallsInFlight() {
        let refusal = refusedAtGraceEndError()
        var refused: [Waiter] = []
        var controls: [CallControl] = []
        var interrupted: [(slot: Slot, database: Database, grace: Duration)] = []
        mutex.withLock {
            refused = withdrawLine(failing: refusal)
            for slot in slots where slot.isLeased {
                if let control = slot.holderControl {
                    controls.append(control)
                } else if let database = slot.database {
                    slot.interruptedAtShutdown.store(true, ordering: .releasing)
                    database.interruptRunningStatement()
                    if let grace = database.interruptGracePeriod { interrupted.append((slot, database, grace)) }
                }
            }
        }
        // Stopped after the mutex is let go: a stop takes its call out of this pool's line
        // (`withdrawJob`, which takes the mutex), and an `async` call that waited in line
        // still says where. Under the mutex, that locked this thread, the one that fires
        // every time limit of the process, for good. A call that ended meanwhile is not
        // hurt: its control has nothing attached any more.
        for control in controls { control.stop(.shutDown(options.name)) }
        // A call without a control of its own (a synchronous call with no time limit) has
        // its statement interrupted above; as for a stopped call, a server that does not
        // answer within the grace period has the connection given up on, so that the call
        // ends, and the shutdown with it.
        for (slot, database, grace) in interrupted {
            let target = AbandonTarget(database: database)
            _ = DeadlineScheduler.shared.schedule(after: grace) { [weak self] in
                if let database = target.database { self?.abandonIfStillInterrupted(slot, database) }
            }
        }
        answer(refused, refusal)
    }

    /// Refuses every call waiting in line now with ``DALError/Code/connectionUnavailable``
    /// saying `why` (nothing of them ran): for a cluster whose replica left the rotation,
    /// so that reads waiting for its connections run elsewhere instead of waiting as long
    /// as it hangs. Never blocks.
    package func refuseCallersInLine(_ why: String) {
        let error = DALError(
            .connectionUnavailable, "\(options.name) \(why): this call waited in line for it (nothing of it ran)")
        answer(mutex.withLock { withdrawLine(failing: error) }, error)
    }

    /// Takes every caller out of the line, each to fail with `error` (with the mutex held).
    private func withdrawLine(failing error: DALError) -> [Waiter] {
        var refused: [Waiter] = []
        while let waiter = nextInLine() {
            withdraw(waiter)
            waiter.failure = error
            refused.append(waiter)
        }
        return refused
    }

    /// Tells the callers `withdrawLine(failing:)` took out that they failed with `error`
    /// (without the mutex: a job's failure answers its caller).
    private func answer(_ refused: [Waiter], _ error: DALError) {
        for waiter in refused {
            if let job = waiter.job { job.fail(error) } else { waiter.semaphore?.signal() }
        }
    }

    /// Abandons `database`'s connection when its call, interrupted by a shutdown, still
    /// holds it (the shutdown refuses new calls: the slot cannot have been lent again).
    private func abandonIfStillInterrupted(_ slot: Slot, _ database: Database) {
        mutex.withLock {
            if slot.isLeased, slot.database === database, slot.interruptedAtShutdown.load(ordering: .acquiring) {
                database.abandonConnection()
            }
        }
    }

    /// Calls `body` with the connection of each slot lent now (under the pool's mutex:
    /// `body` must not block).
    package func forEachConnectionInUse(_ body: (Database) -> Void) {
        mutex.withLock {
            for slot in slots where slot.isLeased {
                if let database = slot.database { body(database) }
            }
        }
    }

    /// Closes every connection (every slot is free) and ends the threads; a later call
    /// is refused.
    private func closeConnections() {
        mutex.withLock { phase = .closed }
        for slot in slots {
            guard let database = mutex.withLock({ slot.database }) else { continue }
            mutex.withLock { slot.database = nil }
            try? database.closeOwnedConnection()
            openCount.subtract(1, ordering: .relaxed)
        }
        mutex.withLock {
            for slot in slots {
                slot.worker?.end()
                slot.worker = nil
            }
        }
    }

    /// The free slot on top of the stack, taken off it (with the mutex held; one is free).
    @inline(__always)
    private func popFree() -> Slot {
        freeCount -= 1
        return slots[freeStack[freeCount]]
    }

    deinit {
        for slot in slots { slot.worker?.end() }
        freeStack.deallocate()
    }

    // MARK: Errors

    private func closedError() -> DALError {
        DALError(.connectionClosed, "\(options.name) is closed (or shutting down): it takes no new calls")
    }

    /// The error of a call that was in line when a shutdown's grace period ended: taken
    /// before the shutdown, it never got a connection, and nothing of it ran.
    private func refusedAtGraceEndError() -> DALError {
        DALError(
            .connectionClosed,
            "\(options.name) shut down: its grace period ended while this call waited in line for a connection "
                + "(nothing of it ran)")
    }

    private func unavailableError() -> DALError {
        DALError(
            .connectionUnavailable,
            "no connection of \(options.name) became free within \(options.acquireTimeout ?? .zero) "
                + "(all \(slots.count) in use)")
    }
}

/// A completion called once at most: the first answer is passed on, later ones dropped.
private final class AnswerOnce<T: Sendable>: Sendable {
    private let answered = Atomic<Bool>(false)
    private let completion: @Sendable (Result<T, any Error>) -> Void

    init(_ completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        self.completion = completion
    }

    func callAsFunction(_ result: Result<T, any Error>) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        completion(result)
    }
}
