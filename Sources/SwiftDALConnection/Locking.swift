package import Dispatch
package import Synchronization

#if canImport(Glibc)
    package import Glibc
#elseif canImport(Musl)
    package import Musl
#elseif canImport(Darwin)
    package import Darwin
#endif

/// A plain mutex (`pthread_mutex_t`) whose `withLock` accepts any closure and result
/// type: the connection it guards is not `Sendable`, and results need not be.
package final class PlainMutex: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// `withLock` for a call taking a connection: the callers that find the lock taken
    /// are counted in `waiters` while they wait (for gauges; the uncontended path costs
    /// only the try), and wait under their call's control: its cancellation, or its time
    /// limit (`withDatabaseTimeout`, else `callTimeout`), ends the wait with its error.
    /// `body` is given how long the call waited, in nanoseconds.
    func withLock<T>(
        countingWaitersIn waiters: borrowing Atomic<Int>, callTimeout: @autoclosure () -> Duration?,
        _ body: (_ waited: UInt64) throws -> T
    ) throws -> T {
        var waited: UInt64 = 0
        if pthread_mutex_trylock(mutex) != 0 {
            waited = try lockContended(countingWaitersIn: waiters, callTimeout: callTimeout())
        }
        defer { pthread_mutex_unlock(mutex) }
        return try body(waited)
    }

    /// The contended path of ``withLock(countingWaitersIn:callTimeout:_:)``: how long it waited.
    @inline(never)
    private func lockContended(countingWaitersIn waiters: borrowing Atomic<Int>, callTimeout: Duration?) throws
        -> UInt64
    {
        waiters.add(1, ordering: .relaxed)
        defer { waiters.subtract(1, ordering: .relaxed) }
        // With no bound of its own the wait ends only by taking the lock, or by throwing.
        return try ThreadAccess.waitForConnection(callTimeout: callTimeout) { self.lock(before: $0) } ?? 0
    }

    /// Takes the lock if it is free before `deadline`; whether it did.
    private func lock(before deadline: DispatchTime) -> Bool {
        if deadline == .distantFuture {
            pthread_mutex_lock(mutex)
            return true
        }
        #if canImport(Darwin)
            // No pthread_mutex_timedlock: try every half millisecond.
            while pthread_mutex_trylock(mutex) != 0 {
                if DispatchTime.now() >= deadline { return false }
                usleep(500)
            }
            return true
        #else
            let now = DispatchTime.now().uptimeNanoseconds
            let remaining = Int(clamping: deadline.uptimeNanoseconds - min(deadline.uptimeNanoseconds, now))
            var clock = timespec()
            clock_gettime(CLOCK_REALTIME, &clock)
            let nanoseconds = clock.tv_nsec + remaining % 1_000_000_000
            var until = timespec(
                tv_sec: clock.tv_sec + remaining / 1_000_000_000 + nanoseconds / 1_000_000_000,
                tv_nsec: nanoseconds % 1_000_000_000)
            return pthread_mutex_timedlock(mutex, &until) == 0
        #endif
    }
}

/// A value behind a `pthread_mutex_t`: for state that threads contend for, where a
/// `Synchronization.Mutex` would do but Thread Sanitizer must follow the locking (a
/// `Mutex`'s contended path runs in the standard library, where it cannot see it, and it
/// then reports the accesses the mutex orders as races: a shared table mapping's SQL
/// cache failed a CI run that way). The library uses no `Mutex` for that reason.
/// Inlinable, so that a lookup costs what a `Mutex` costs: a lock, the access, an unlock.
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock = PlainMutex()
    // Only touched with `lock` held, which the runtime's exclusivity check cannot know
    // (and would pay a thread-local lookup for on every access).
    @usableFromInline @exclusivity(unchecked) var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    @inlinable
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}

extension DispatchSemaphore {
    /// Takes a unit for a call taking a connection, waiting at most until `giveUp`; how
    /// long it waited, in nanoseconds, or `nil` when `giveUp` passed first. The callers
    /// that find no unit free are counted in `waiters` while they wait, and wait under
    /// their call's control: its cancellation, or its time limit (`withDatabaseTimeout`,
    /// else `callTimeout`), ends the wait with its error.
    @inline(__always)
    package func wait(
        until giveUp: @autoclosure () -> DispatchTime = .distantFuture,
        countingWaitersIn waiters: borrowing Atomic<Int>,
        callTimeout: @autoclosure () -> Duration?
    ) throws -> UInt64? {
        // A deadline long past: a free unit is taken at once, no clock is read.
        if wait(timeout: DispatchTime(uptimeNanoseconds: 1)) == .success { return 0 }
        return try waitContended(until: giveUp(), countingWaitersIn: waiters, callTimeout: callTimeout())
    }

    /// The contended path of ``wait(until:countingWaitersIn:callTimeout:)``.
    @inline(never)
    private func waitContended(
        until giveUp: DispatchTime, countingWaitersIn waiters: borrowing Atomic<Int>, callTimeout: Duration?
    ) throws -> UInt64? {
        waiters.add(1, ordering: .relaxed)
        defer { waiters.subtract(1, ordering: .relaxed) }
        return try ThreadAccess.waitForConnection(callTimeout: callTimeout, giveUp: giveUp) {
            self.wait(timeout: $0) == .success
        }
    }
}

/// What the current thread holds: the connections it is using inside `read`/`write`
/// closures, by owner (a queue or pool). Used to refuse re-entrant accesses instead of
/// deadlocking, and to let DAL calls inside a closure run on the held connection.
enum ThreadAccess {
    struct Entry {
        let owner: ObjectIdentifier
        let database: Database
        let isWriter: Bool
    }

    final class Holdings {
        // Unchecked exclusivity (here and below): a `Holdings` belongs to one thread (a
        // pthread key's value) and no two accesses to a property overlap, while the
        // runtime's check of each access (a thread-local lookup) cost about 300
        // instructions per DAL call (callgrind, W3A).
        @exclusivity(unchecked) var entries: [Entry] = []

        /// The innermost entry of `owner`, read in place (no copy of the array).
        func last(ownedBy owner: ObjectIdentifier) -> Entry? {
            var index = entries.endIndex
            while index > entries.startIndex {
                index -= 1
                if entries[index].owner == owner { return entries[index] }
            }
            return nil
        }
        /// The reader slot this thread used last (a hint: trying it first keeps each
        /// thread on its own reader and its caches warm).
        @exclusivity(unchecked) var preferredReader = 0
        /// The control of the `async` call running on this thread (its cancellation).
        @exclusivity(unchecked) var control: CallControl?
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { value in
            // Optional on Glibc, not on Darwin: one spelling for both.
            let pointer: UnsafeMutableRawPointer? = value
            guard let pointer else { return }
            Unmanaged<Holdings>.fromOpaque(pointer).release()
        }
        return key
    }()

    @inline(__always)
    static var holdings: Holdings {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Holdings>.fromOpaque(pointer).takeUnretainedValue()
        }
        let holdings = Holdings()
        pthread_setspecific(key, Unmanaged.passRetained(holdings).toOpaque())
        return holdings
    }

    /// The connection of `owner` this thread holds, if any.
    static func held(by owner: AnyObject) -> Entry? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Holdings>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
            $0.last(ownedBy: ObjectIdentifier(owner))
        }
    }

    /// Runs `body` recording that this thread holds `database` of `owner`, with the
    /// connection lent to this thread for the time of `body` (see ``ConnectionAccess``).
    ///
    /// The access runs under the call's control (the `async` call's cancellation, the time
    /// limit of ``withDatabaseTimeout(_:operation:)`` or ``Configuration/callTimeout``):
    /// stopping it interrupts the running statement, and the access throws
    /// `CancellationError` or ``DALError/Code/timeout``. `waited` (nanoseconds) is how long
    /// the call waited for the connection: the time limit counts it.
    static func holding<T>(
        _ database: Database, of owner: AnyObject, isWriter: Bool, waited: UInt64 = 0, _ body: () throws -> T
    ) throws -> T {
        let holdings = holdings
        var control = holdings.control
        if let limit = CallLimits.current ?? database.callTimeout {
            let limited = control ?? CallControl()
            limited.stop(after: waited == 0 ? limit : limit - .nanoseconds(Int64(clamping: waited)), reporting: limit)
            control = limited
        }
        try control?.attach(database)
        holdings.entries.append(Entry(owner: ObjectIdentifier(owner), database: database, isWriter: isWriter))
        database.beginAccess()
        defer {
            database.endAccess()
            holdings.entries.removeLast()
            control?.detach()
        }
        guard let control else { return try body() }
        do {
            return try body()
        } catch {
            // The interrupted statement's error (SQLITE_INTERRUPT, SQLSTATE 57014) says why.
            if let reason = control.reason { throw reason.error }
            throw error
        }
    }

    /// The contended path of taking a connection: `attempt(deadline)` waits for one until
    /// `deadline` and says whether it got one. The call's control ends the wait with the
    /// call's error: the `async` call's task cancelled (looked at every 10 ms), or the
    /// call's time limit (`withDatabaseTimeout`, else `callTimeout`) past. Returns how
    /// long it waited, in nanoseconds (the access then runs under what is left of the
    /// limit), or `nil` when `giveUp` passed first (the caller's own bound, such as
    /// PostgreSQL's `acquireTimeout`). A wait with a deadline is cut into slices of at
    /// most 100 ms, each measured again on the monotonic clock (a timed mutex wait counts
    /// on the wall clock, which may be set back).
    static func waitForConnection(
        callTimeout: Duration?, giveUp: DispatchTime = .distantFuture, _ attempt: (DispatchTime) -> Bool
    ) throws -> UInt64? {
        let control = holdings.control
        let limit = CallLimits.current ?? callTimeout
        let start = DispatchTime.now()
        let limitDeadline = limit.map { start + .nanoseconds(Int(CallControl.boundedNanoseconds($0))) }
        let end = min(limitDeadline ?? .distantFuture, giveUp)
        while true {
            if let reason = control?.reason { throw reason.error }
            let slice: DispatchTime =
                control != nil ? .now() + .milliseconds(10) : end == .distantFuture ? end : .now() + .milliseconds(100)
            if attempt(min(end, slice)) { return DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds }
            let now = DispatchTime.now()
            if let limit, let limitDeadline, now >= limitDeadline { throw CallControl.Reason.timedOut(limit).error }
            if now >= giveUp { return nil }
        }
    }

    /// Runs `work` as an `async` call under `control` (its cancellation).
    static func running<T>(under control: CallControl, _ work: () throws -> T) rethrows -> T {
        let holdings = holdings
        let outer = holdings.control
        holdings.control = control
        defer { holdings.control = outer }
        return try work()
    }
}

/// The connection of `owner` (a pool or a queue) that this thread holds inside one of its
/// `read`/`write` closures, or `nil`: the shortcut a DAL call takes inside a transaction,
/// with the rules of `reentrantRead`/`reentrantWrite` (a write inside a read throws).
package func heldConnection(of owner: AnyObject, writing: Bool) throws -> Database? {
    guard let held = ThreadAccess.held(by: owner) else { return nil }
    if writing && !held.isWriter { throw writeInReadError() }
    return held.database
}

/// Whether this thread holds a connection of `owner` (inside one of its closures).
package func isHoldingConnection(of owner: AnyObject) -> Bool {
    ThreadAccess.held(by: owner) != nil
}

/// Runs `body` with `database` of `owner` lent to this thread: DAL calls inside it find
/// it (``heldConnection(of:writing:)``), and its statements, cursors and row views
/// belong to this access (see ``ConnectionAccess``). For the engines' pools.
package func withLentConnection<T>(
    _ database: Database, of owner: AnyObject, isWriter: Bool, waited: UInt64 = 0, _ body: () throws -> T
) throws -> T {
    try ThreadAccess.holding(database, of: owner, isWriter: isWriter, waited: waited, body)
}
