import Foundation
public import SwiftDALConnection

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

/// The SQLite error thrown by `body`, or `nil` when it threw none (or another kind).
public func sqliteError(_ body: () throws -> Void) -> SQLiteError? {
    do {
        try body()
        return nil
    } catch {
        return error as? SQLiteError
    }
}

/// The DAL error thrown by `body`, or `nil` when it threw none (or another kind).
public func dalError(_ body: () throws -> Void) -> DALError? {
    do {
        try body()
        return nil
    } catch {
        return error as? DALError
    }
}

/// An error for tests that must throw from inside a closure.
public struct TestFailure: Error, Equatable {
    public init() {}
}
