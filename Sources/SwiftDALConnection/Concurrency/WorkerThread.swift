import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread that runs the jobs handed to it, one after another: the thread of one pooled
/// connection. Blocking database work of `async` calls runs here, never on a thread that
/// Swift's concurrency runtime (or an event loop) depends on: a connection is a blocking
/// resource, so it gets a thread of its own, and a call waiting for a connection holds no
/// thread at all (it waits as a job in its pool's queue).
package final class WorkerThread: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    // Touched only with `mutex` held.
    private var jobs: [@Sendable () -> Void] = []
    private var ending = false

    /// Starts a thread named `name` (the first 15 bytes show in `top` and debuggers).
    package init(name: String) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
        // The thread holds this object until it ends (after `end()`).
        let thread = Thread { [self] in
            setCurrentThreadName(name)
            ThreadAccess.holdings.workerName = name
            run()
        }
        thread.start()
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `job` on the thread after the jobs handed over before it.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Lets the thread end once its jobs are done.
    package func end() {
        pthread_mutex_lock(mutex)
        ending = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    private func run() {
        var batch: [@Sendable () -> Void] = []
        pthread_mutex_lock(mutex)
        while true {
            if jobs.isEmpty {
                if ending { break }
                pthread_cond_wait(condition, mutex)
                continue
            }
            swap(&batch, &jobs)
            pthread_mutex_unlock(mutex)
            for job in batch { job() }
            batch.removeAll(keepingCapacity: true)
            pthread_mutex_lock(mutex)
        }
        pthread_mutex_unlock(mutex)
    }
}
