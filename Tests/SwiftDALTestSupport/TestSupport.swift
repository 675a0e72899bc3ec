import Foundation

// Helpers shared by the test targets (not part of any product).

/// A fresh directory under the system temporary directory, removed when released.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "swiftdal-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
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
