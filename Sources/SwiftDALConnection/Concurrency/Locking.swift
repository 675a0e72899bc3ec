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

    /// Takes the lock (pair with ``unlock()``).
    @inlinable @inline(__always)
    package func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock taken by ``lock()``.
    @inlinable @inline(__always)
    package func unlock() { pthread_mutex_unlock(mutex) }
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

/// What the current thread holds: the connections it is using inside `read`/`write`
/// closures, by owner (a queue or pool). Used to refuse re-entrant accesses instead of
/// deadlocking, and to let DAL calls inside a closure run on the held connection.
@usableFromInline package enum ThreadAccess {
    @usableFromInline package struct Entry {
        package let owner: ObjectIdentifier
        /// Unretained: the entry lives only while its access runs, and the access's caller
        /// (a queue's or pool's lease) keeps the connection meanwhile.
        @usableFromInline unowned(unsafe) let database: Database
        @usableFromInline package let isWriter: Bool
    }

    package final class Holdings {
        // Unchecked exclusivity (here and below): a `Holdings` belongs to one thread (a
        // pthread key's value) and no two accesses to a property overlap, while the
        // runtime's check of each access (a thread-local lookup) cost about 300
        // instructions per DAL call (callgrind, W3A).
        @exclusivity(unchecked) package var entries: [Entry] = []

        /// The innermost entry of `owner`, read in place (no copy of the array).
        package func last(ownedBy owner: ObjectIdentifier) -> Entry? {
            var index = entries.endIndex
            while index > entries.startIndex {
                index -= 1
                if entries[index].owner == owner { return entries[index] }
            }
            return nil
        }
        /// The reader slot this thread used last (a hint: trying it first keeps each
        /// thread on its own reader and its caches warm).
        @exclusivity(unchecked) package var preferredReader = 0
        /// The control of the `async` call running on this thread (its cancellation).
        @exclusivity(unchecked) package var control: CallControl?
        /// The slots reserved for the `async` job running on this thread, one per pool core
        /// (see ``PoolCore/perform(_:)``).
        @exclusivity(unchecked) package var reservations: [Reservation] = []
        /// The name of the SwiftDAL thread this is (a pooled connection's), if it is one.
        @exclusivity(unchecked) package var workerName: String?
        /// While a pool opens a connection for a call on this thread: when the call began
        /// to wait for the slot (``DeadlineScheduler/now()``; 0 when none is opening), from
        /// which its time limit counts.
        @exclusivity(unchecked) package var openingCallStart: UInt64 = 0

        /// The slot reserved on this thread for `core`, when it is not in use by an access.
        /// Its wait in line is the first access's: a later access of the same job waited
        /// for nothing.
        package func takeReservation(of core: PoolCore) -> Reservation? {
            for index in reservations.indices where reservations[index].core === core {
                guard !reservations[index].isInUse else { return nil }
                reservations[index].isInUse = true
                defer { reservations[index].waited = 0 }
                return reservations[index]
            }
            return nil
        }

        /// Marks the reservation of `core` free again (its access ended).
        package func returnReservation(of core: PoolCore) {
            for index in reservations.indices where reservations[index].core === core {
                reservations[index].isInUse = false
            }
        }
    }

    /// A slot of a pool core reserved for the `async` job running on a thread.
    package struct Reservation {
        unowned let core: PoolCore
        package let slot: PoolCore.Slot
        /// How long the job waited for the slot (nanoseconds), until its first access.
        package var waited: UInt64
        package var isInUse = false
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
    package static var holdings: Holdings {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Holdings>.fromOpaque(pointer).takeUnretainedValue()
        }
        let holdings = Holdings()
        pthread_setspecific(key, Unmanaged.passRetained(holdings).toOpaque())
        return holdings
    }

    /// The connection of `owner` this thread holds, if any.
    @usableFromInline package static func held(by owner: AnyObject) -> Entry? {
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
    package static func holding<T>(
        _ database: Database, of owner: AnyObject, isWriter: Bool, waited: UInt64 = 0,
        holdings: Holdings, _ body: () throws -> T
    ) throws -> T {
        var control = holdings.control
        var deadline: DeadlineScheduler.Entry?
        // A limit of its own: `withDatabaseTimeout` around this access, else the pool's
        // default (unless the `async` call it belongs to has its limit already).
        if let limit = CallLimits.own(under: control, callTimeout: database.callTimeout) {
            let limited = control ?? CallControl()
            deadline = limited.addDeadline(
                after: waited == 0 ? limit : limit - .nanoseconds(Int64(clamping: waited)), reporting: limit)
            control = limited
        }
        do {
            try control?.attach(database)
        } catch {
            if let deadline { control?.removeDeadline(deadline) }
            throw error
        }
        holdings.entries.append(Entry(owner: ObjectIdentifier(owner), database: database, isWriter: isWriter))
        database.beginAccess()
        defer {
            database.endAccess()
            holdings.entries.removeLast()
            if let deadline { control?.removeDeadline(deadline) }
            control?.detach(database)
        }
        guard let control else { return try body() }
        do {
            return try body()
        } catch let error as DALError where error.code == .outcomeUnknown {
            throw error  // a commit in flight when the call stopped: never "rolled back"
        } catch {
            // The interrupted statement's error (SQLITE_INTERRUPT, SQLSTATE 57014) says why.
            if let reason = control.reason {
                let closed = database.isBrokenEngineConnection
                if closed { control.noteClosedConnection() }
                throw reason.error(connectionClosed: closed)
            }
            throw error
        }
    }

    /// Runs `work` as an `async` call under `control` (its cancellation and time limit).
    package static func running<T>(under control: CallControl?, _ work: () throws -> T) rethrows -> T {
        let holdings = holdings
        let outer = holdings.control
        holdings.control = control
        defer { holdings.control = outer }
        return try work()
    }

    /// Runs an `async` call's `work` on the thread of `slot`, under `control`, with `slot`
    /// reserved for it: the work's first access to `core` takes it without waiting.
    package static func running<T>(
        under control: CallControl, reserving slot: PoolCore.Slot, of core: PoolCore, waited: UInt64,
        _ work: () throws -> T
    ) rethrows -> T {
        let holdings = holdings
        let outer = holdings.control
        holdings.control = control
        holdings.reservations.append(Reservation(core: core, slot: slot, waited: waited))
        defer {
            holdings.reservations.removeAll { $0.core === core }
            holdings.control = outer
        }
        return try work()
    }
}

/// The connection of `owner` (a pool or a queue) that this thread holds inside one of its
/// `read`/`write` closures, or `nil`: the shortcut a DAL call takes inside a transaction,
/// with the rules of `reentrantRead`/`reentrantWrite` (a write inside a read throws).
@inlinable
package func heldConnection(of owner: AnyObject, writing: Bool) throws -> Database? {
    guard let held = ThreadAccess.held(by: owner) else { return nil }
    if writing && !held.isWriter { throw writeInReadError() }
    return held.database
}

/// The control of the `async` call running on this thread, if any (its cancellation and
/// time limit): what an engine checks while it waits on something other than a statement
/// (a connection being opened).
package func currentCallControl() -> CallControl? {
    ThreadAccess.holdings.control
}

extension CallLimits {
    /// How long the connection being opened for the call on this thread may still take,
    /// or `nil` when the call has no time limit: the least of the time its control has
    /// left (an `async` call's limit, an outer access's) and its own limit
    /// (`withDatabaseTimeout`, else the pool's `callTimeout`) counted from when it began
    /// to wait in line for the slot. A wait that cannot be interrupted once begun (a
    /// blocking connect, a session's setup) is bounded by it.
    ///
    /// For example, an engine's connection: `if let left = CallLimits.leftForOpening(callTimeout: configuration.callTimeout), left < limit { limit = left }`.
    package static func leftForOpening(callTimeout: Duration?) -> Duration? {
        let holdings = ThreadAccess.holdings
        let control = holdings.control
        var left = control?.timeLeft
        if let own = own(under: control, callTimeout: callTimeout) {
            let start = holdings.openingCallStart
            let now = DeadlineScheduler.now()
            let spent = Duration.nanoseconds(Int64(clamping: start == 0 ? 0 : now &- min(now, start)))
            let remaining = max(.zero, own - spent)
            if left.map({ remaining < $0 }) ?? true { left = remaining }
        }
        return left
    }
}

/// Runs `body` outside the call control of the `async` call running on this thread: for
/// the bookkeeping a call does after its transaction committed (a stop then must not turn
/// the committed call into an error). Give `body` a time limit of its own.
package func outsideCallControl<T>(_ body: () throws -> T) rethrows -> T {
    try ThreadAccess.running(under: nil, body)
}

/// Whether this thread holds a connection of `owner` (inside one of its closures).
package func isHoldingConnection(of owner: AnyObject) -> Bool {
    ThreadAccess.held(by: owner) != nil
}

/// The error of a write inside a read-only access.
@usableFromInline package func writeInReadError() -> DALError {
    DALError(.writeInReadOnlyAccess, "a write was attempted inside a read-only access (a read closure)")
}
