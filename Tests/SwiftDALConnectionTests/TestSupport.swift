import Foundation
import SwiftDALConnection

/// A fresh directory under the system temporary directory, removed when released.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "swiftdal-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// An error for tests that must throw from inside a closure.
struct TestFailure: Error, Equatable {}

/// The SQLite error thrown by `body`, or nil.
func sqliteError(_ body: () throws -> Void) -> SQLiteError? {
    do {
        try body()
        return nil
    } catch {
        return error as? SQLiteError
    }
}

/// The DAL error thrown by `body`, or nil.
func dalError(_ body: () throws -> Void) -> DALError? {
    do {
        try body()
        return nil
    } catch {
        return error as? DALError
    }
}

func makeUsersTable(_ db: Database) throws {
    try db.executeScript(
        """
        CREATE TABLE users(
          id INTEGER PRIMARY KEY,
          name TEXT NOT NULL,
          email TEXT UNIQUE,
          age INTEGER CHECK (age >= 0),
          data BLOB
        );
        """)
}
