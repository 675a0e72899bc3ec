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
