import Foundation

// Helpers shared by the test targets (not part of any product).

/// A fresh directory under the system temporary directory, removed when released.
///
/// Every one is made inside this process's own directory (`swiftdal-tests-<pid>-…`),
/// which a watching process removes once this one is gone, however it ended: a test run
/// stopped by a signal (`timeout swift test` kills the test runner without its `deinit`s)
/// leaves no files behind.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        path = try Self.processDirectory.get() + "/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// This process's directory of temporary directories (and of the output files of
    /// ``runProgram(_:_:)``), made (and put under watch) at first use.
    static let processDirectory: Result<String, any Error> = Result {
        let path = NSTemporaryDirectory() + "swiftdal-tests-\(getpid())-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // Never cancelled: it removes the directory about a second after this process
        // ends (the directories inside it are removed one by one as they are released).
        _ = OrphanWatcher(cleanup: ":", directory: path)
        return path
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// An error for tests that must throw from inside a closure.
public struct TestFailure: Error, Equatable {
    public init() {}
}

/// Runs `body` on a thread of its own, started at once: not when a task gets one of the
/// test process's cooperative threads, which on a loaded machine can take tens of seconds
/// (other tests' blocking work holds them). For tests whose threads must meet (a lock
/// held by one while another waits on it).
///
/// For example: `let holder = StartedThread { try pool.write { … } }`, then
/// `try holder.result()`.
public final class StartedThread<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var outcome: Result<T, any Error>?

    public init(_ body: @escaping @Sendable () throws -> T) {
        Thread { [self] in
            let result = Result { try body() }
            lock.withLock { outcome = result }
            done.signal()
        }.start()
    }

    /// The body's result, once it has returned: waits five minutes at most (a bound for
    /// a hang, not a timing assertion), then throws.
    public func result() throws -> T {
        guard done.wait(timeout: .now() + 300) == .success, let outcome = lock.withLock({ outcome }) else {
            throw TestFailure()
        }
        return try outcome.get()
    }
}

/// A task executor with a thread of its own: a task that prefers it runs there, never on
/// the test process's cooperative threads (Swift's two, on a two-core machine), which
/// other tests' blocking work can hold for tens of seconds. Call ``finish()`` when done.
///
/// For example: `let executor = OwnThreadTaskExecutor()`, `defer { executor.finish() }`,
/// then `Task(executorPreference: executor) { … }`.
public final class OwnThreadTaskExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    public init() {
        Thread { [self] in run() }.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Lets the thread end once its jobs are run.
    public func finish() {
        condition.withLock {
            finished = true
            condition.signal()
        }
    }

    private func run() {
        while true {
            let next: UnownedJob? = condition.withLock {
                while jobs.isEmpty && !finished { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let next else { return }
            next.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs `body` in a task on a thread of its own and times it there: the duration is
/// when its `await`s were answered, not when a cooperative thread got free to go on
/// (on a loaded machine, seconds later). For tests that bound how long an `async` call
/// takes.
///
/// For example: `let (result, took) = await timedOnItsOwnThread { try await pool.read { … } }`.
public func timedOnItsOwnThread<T: Sendable>(
    _ body: @escaping @Sendable () async throws -> T
) async -> (result: Result<T, any Error>, elapsed: Duration) {
    let executor = OwnThreadTaskExecutor()
    defer { executor.finish() }
    let task = Task(executorPreference: executor) { () async -> (Result<T, any Error>, Duration) in
        let start = ContinuousClock.now
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        return (result, ContinuousClock.now - start)
    }
    let (result, elapsed) = await task.value
    return (result, elapsed)
}
