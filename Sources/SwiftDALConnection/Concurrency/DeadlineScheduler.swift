import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs short actions at their deadlines, on a thread of its own: the one path that fires
/// every time limit of the process (a call's limit, a pool's bound on a wait, the grace a
/// stopped statement is given before its connection is abandoned).
///
/// Its actions never block: they record a stop, interrupt a statement (`sqlite3_interrupt`),
/// hand a cancel request to a sender thread, or wake a waiter. So no server, however hung,
/// can hold the path that fires the next limit. Deadlines are read on the monotonic clock.
package final class DeadlineScheduler: @unchecked Sendable {
    /// The scheduler of the process.
    package static let shared = DeadlineScheduler()

    /// A scheduled action; cancel it with ``DeadlineScheduler/cancel(_:)``.
    package final class Entry: @unchecked Sendable {
        /// When the action is due, on ``DeadlineScheduler/now()``'s clock.
        package let deadline: UInt64
        fileprivate let sequence: UInt64
        // Both touched only with the scheduler's mutex held.
        fileprivate var action: (@Sendable () -> Void)?
        fileprivate var index = -1

        fileprivate init(deadline: UInt64, sequence: UInt64, action: @escaping @Sendable () -> Void) {
            self.deadline = deadline
            self.sequence = sequence
            self.action = action
        }

        fileprivate func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    // Touched only with `mutex` held.
    private var heap: [Entry] = []
    private var sequence: UInt64 = 0
    private var started = false

    private init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        #if canImport(Darwin)
            pthread_cond_init(condition, nil)
        #else
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        #endif
    }

    /// The monotonic clock, in nanoseconds.
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Runs `action` on the scheduler's thread once `nanoseconds` have passed (at once when
    /// 0 or less). `action` must be short and must never block.
    @discardableResult
    package func schedule(afterNanoseconds nanoseconds: Int64, _ action: @escaping @Sendable () -> Void) -> Entry {
        // A century at most: the sum below stays clear of overflow.
        let delay = UInt64(min(max(0, nanoseconds), 100 * 365 * 86_400 * 1_000_000_000))
        let deadline = Self.now() + delay
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        sequence &+= 1
        let entry = Entry(deadline: deadline, sequence: sequence, action: action)
        push(entry)
        if !started {
            started = true
            startThread()
        } else if entry.index == 0 {
            pthread_cond_signal(condition)  // an earlier deadline than the thread waits for
        }
        return entry
    }

    /// `schedule(afterNanoseconds:_:)` for a `Duration`.
    @discardableResult
    package func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Entry {
        schedule(afterNanoseconds: delay.clampedNanoseconds, action)
    }

    /// Cancels `entry`: its action will not run (unless it is running already).
    package func cancel(_ entry: Entry) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        entry.action = nil
        if entry.index >= 0 { remove(at: entry.index) }
    }

    /// The number of actions waiting (for tests).
    package var pendingCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return heap.count
    }

    private func startThread() {
        let thread = Thread { [self] in
            setCurrentThreadName("SwiftDAL.deadlines")
            run()
        }
        thread.start()
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            guard let first = heap.first else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            let now = Self.now()
            if first.deadline > now {
                wait(until: first.deadline)
                continue
            }
            remove(at: 0)
            let action = first.action
            first.action = nil
            pthread_mutex_unlock(mutex)
            action?()
            pthread_mutex_lock(mutex)
        }
    }

    private func wait(until deadline: UInt64) {
        #if canImport(Darwin)
            let remaining = deadline - min(deadline, Self.now())
            var interval = timespec(
                tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            pthread_cond_timedwait_relative_np(condition, mutex, &interval)
        #else
            var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            pthread_cond_timedwait(condition, mutex, &until)
        #endif
    }

    // MARK: The binary heap (earliest deadline first)

    private func push(_ entry: Entry) {
        entry.index = heap.count
        heap.append(entry)
        siftUp(entry.index)
    }

    private func remove(at index: Int) {
        let removed = heap[index]
        let last = heap.removeLast()
        removed.index = -1
        guard index < heap.count else { return }
        heap[index] = last
        last.index = index
        siftDown(index)
        siftUp(last.index)
    }

    private func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        heap[i].index = i
        heap[j].index = j
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && heap[right].precedes(heap[left]) ? right : left
            guard heap[child].precedes(heap[parent]) else { return }
            swapAt(child, parent)
            parent = child
        }
    }
}

/// Names the calling thread (as `top` and debuggers show it), at most 15 bytes on Linux.
package func setCurrentThreadName(_ name: String) {
    Thread.current.name = String(decoding: name.utf8.prefix(15), as: UTF8.self)
}
