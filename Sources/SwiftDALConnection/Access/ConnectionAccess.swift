public import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An identifier of the calling thread, never 0 or `UInt.max` for a live thread.
@usableFromInline
package func currentThreadID() -> UInt {
    #if canImport(Glibc)
        UInt(pthread_self())
    #else
        UInt(bitPattern: pthread_self())
    #endif
}

/// Who may use a connection right now, shared by the ``Database`` and every statement
/// made from it.
///
/// A connection of a ``DatabaseQueue`` or ``DatabasePool`` is lent to one thread for one
/// access (a `read`/`write` closure, or one DAL call): every use of the connection, of
/// its statements, cursors and row views checks that the calling thread is the holder
/// of the current access, and throws ``DALError/Code/accessEnded`` otherwise. So a
/// `Database`, `Statement`, `RowCursor` or `RowView` that escaped its closure fails with
/// a typed error instead of touching a connection that another thread may be using
/// (which crashed inside SQLite), or reading a snapshot that has moved on.
///
/// A connection opened directly (`Database(path:)`, `Database.inMemory()`) belongs to
/// whoever opened it and is not checked: it is not `Sendable`, so the compiler keeps it
/// on one thread.
///
/// Why the checks are sound with relaxed loads: `holder` equals the calling thread's
/// identifier only if that thread stored it (at the start of its access) and has not
/// cleared it since (a thread always sees its own latest store, or a later one);
/// `epoch` is written only by the holder, and read only after the holder check passed.
@usableFromInline
package final class ConnectionAccess: @unchecked Sendable {
    /// `holder` of a connection owned by whoever opened it: every use is allowed.
    @usableFromInline package static let unrestricted = UInt.max
    /// `holder` of a pooled connection that no thread holds.
    package static let idle: UInt = 0
    /// `holder` of a closed connection: nothing may use it.
    @usableFromInline package static let closed = UInt.max - 1

    @usableFromInline package let holder: Atomic<UInt>
    /// Set when the call holding the connection was stopped (cancelled or past its time
    /// limit), until the connection is let go: a statement about to start then fails
    /// at once (SQLITE_INTERRUPT) instead of running. `sqlite3_interrupt` alone stops
    /// only statements already running: one issued between two statements of a call was
    /// forgotten when the next began, and that statement ran its full course.
    package let stopRequested = Atomic<Bool>(false)
    /// Counts accesses; a statement or cursor made by `makeStatement`/`makeCursor`
    /// belongs to the access it was made in. Written and read by the holder only, never in
    /// overlapping accesses: not checked at run time (a thread-local lookup per access).
    @usableFromInline @exclusivity(unchecked) package var epoch: UInt64 = 0
    // The holder's flags below are kept in private storage whose accesses are not
    // checked at run time (`@exclusivity(unchecked)` holds only in this module: an engine
    // module's direct access to a stored `var` here called `swift_beginAccess`, ~76
    // instructions per statement, callgrind, W3a), and read and written through accessors.

    /// Set by the engine when the access holds something to let go of as it ends (SQLite:
    /// a cursor's statement), so that ``Database`` asks the engine only then
    /// (``EngineConnection/accessEnding()``). Written and read by the holder only.
    package var endsWithCleanup: Bool {
        get { cleanupFlag }
        set { cleanupFlag = newValue }
    }
    @exclusivity(unchecked) private var cleanupFlag = false
    /// Whether the body of a transaction SwiftDAL runs (`write`, `read`, `inTransaction`)
    /// runs now, set by its ``Database``: a statement that would end or start that
    /// transaction is refused, unsent. SQLite's statements check this at their first step
    /// (each knows at its preparation whether it would); the other engines' are checked by
    /// ``Database`` before they are sent. Written and read by the holder only.
    @exclusivity(unchecked) package var refusesTransactionControl = false
    /// SQLite: whether a transaction was open after the last transaction-control statement
    /// (`BEGIN`, `COMMIT`, `END`, `ROLLBACK`, `SAVEPOINT`, `RELEASE`) ran. Written and read
    /// by the holder only.
    package var transactionOpen: Bool {
        get { openFlag }
        set { openFlag = newValue }
    }
    @exclusivity(unchecked) private var openFlag = false
    /// SQLite: the error on which SQLite rolled the open transaction back on its own (a
    /// constraint declared `ON CONFLICT ROLLBACK`, `RAISE(ROLLBACK, …)` in a trigger, a full
    /// disk, an I/O error, an interrupt), until a `ROLLBACK` ends it here too. Every other
    /// statement is refused with it meanwhile: each would run and commit on its own, and the
    /// `COMMIT` after them would fail. Written and read by the holder only.
    package var transactionEndedBy: (any Error)? {
        get { endingError }
        set {
            endingError = newValue
            endedFlag = newValue != nil
        }
    }
    @exclusivity(unchecked) private var endingError: (any Error)?
    /// Whether ``transactionEndedBy`` is set: the check every statement makes (a `Bool`,
    /// not a copy of the error).
    package var transactionEnded: Bool { endedFlag }
    @exclusivity(unchecked) private var endedFlag = false
    /// Statements released by a thread that did not hold the connection: finalized by
    /// the next holder (finalizing meanwhile could race with the thread using it).
    private let orphans = Locked<[OrphanStatement]>([])
    private let orphanCount = Atomic<Int>(0)
    /// What the connection is called in errors.
    package let path: String
    /// The observer and trace to report statements to, if any.
    package let observation: StatementObservation?

    package init(path: String, observation: StatementObservation?) {
        self.path = path
        self.observation = observation
        holder = Atomic(Self.unrestricted)
    }

    /// Whether the calling thread may use the connection now.
    @inlinable @inline(__always)
    package var isUsable: Bool {
        let current = holder.load(ordering: .relaxed)
        return current == Self.unrestricted || current == currentThreadID()
    }

    /// Throws unless the calling thread may use the connection now.
    @inlinable @inline(__always)
    package func check() throws {
        guard isUsable else { throw notHeld() }
    }

    /// Throws unless the calling thread may use the connection now, within the access
    /// `epoch` (for statements and cursors bound to the access that made them).
    @inlinable @inline(__always)
    package func check(epoch expected: UInt64) throws {
        let current = holder.load(ordering: .relaxed)
        if current == Self.unrestricted { return }
        guard current == currentThreadID(), epoch == expected else { throw notHeld() }
    }

    /// The error for a use outside the access.
    @usableFromInline @inline(never)
    package func notHeld() -> DALError {
        if holder.load(ordering: .relaxed) == Self.closed {
            return DALError(.connectionClosed, "the connection to \(path) is closed")
        }
        return DALError(
            .accessEnded,
            "a connection to \(path) (or a statement, cursor or row made from it) was used outside the read/write "
                + "closure or DAL call that it was lent to; keep it inside the closure and return copied values "
                + "(rows, entities) instead")
    }

    /// Whether a thread that is not the holder may still finalize statements directly.
    package var allowsDirectFinalization: Bool {
        isUsable || holder.load(ordering: .acquiring) == Self.closed
    }

    /// Marks the connection as owned by a queue or pool: no thread holds it until lent.
    package func becomeOwned() {
        holder.store(Self.idle, ordering: .releasing)
    }

    /// Lends the connection to the calling thread for one access.
    package func begin() {
        holder.store(currentThreadID(), ordering: .relaxed)
        epoch &+= 1
        if orphanCount.load(ordering: .relaxed) > 0 { finalizeOrphans() }
    }

    /// Ends the calling thread's access.
    package func end() {
        holder.store(Self.idle, ordering: .releasing)
    }

    /// Finalizes `statement` with `finalizer` (the engine's C function: `sqlite3_finalize`)
    /// now if that is safe, or leaves it to the next holder.
    package func finalize(_ statement: OpaquePointer, with finalizer: StatementFinalizer) {
        if allowsDirectFinalization {
            _ = finalizer(statement)
            return
        }
        orphans.withLock { list in
            list.append(OrphanStatement(handle: statement, finalizer: finalizer))
            orphanCount.store(list.count, ordering: .relaxed)
        }
        // The connection may have closed meanwhile (the close drained the list first).
        if holder.load(ordering: .acquiring) == Self.closed { finalizeOrphans() }
    }

    /// Finalizes the statements left by other threads. Called by the holder, or when
    /// the connection closes.
    package func finalizeOrphans() {
        let statements = orphans.withLock { list -> [OrphanStatement] in
            defer {
                list.removeAll()
                orphanCount.store(0, ordering: .relaxed)
            }
            return list
        }
        for statement in statements { _ = statement.finalizer(statement.handle) }
    }

    /// Records that the connection is closed: every later use throws, and statements
    /// that outlive it are finalized by whichever thread releases them.
    package func markClosed() {
        holder.store(Self.closed, ordering: .releasing)
        finalizeOrphans()
    }
}

/// A statement handle waiting to be finalized by a thread that may touch its connection.
package struct OrphanStatement: @unchecked Sendable {
    package let handle: OpaquePointer
    package let finalizer: StatementFinalizer
}

/// An engine's C function that frees a prepared statement's handle (`sqlite3_finalize`).
package typealias StatementFinalizer = @convention(c) (OpaquePointer?) -> Int32
