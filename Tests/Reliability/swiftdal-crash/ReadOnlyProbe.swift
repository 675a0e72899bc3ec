import Foundation
import SwiftDAL

/// Opens a file this (non-root) user may read but not write, through SwiftDAL, and
/// checks that a write is a typed `SQLITE_READONLY` error and that reads still work.
func runReadOnlyProbe(path: String) throws -> Never {
    var configuration = Configuration()
    configuration.journalMode = .delete  // WAL would need to create files beside it
    let queue: DatabaseQueue
    do {
        queue = try DatabaseQueue(path: path, configuration: configuration)
    } catch let error as SQLiteError where error.primaryCode == .readOnly || error.primaryCode == .cannotOpen {
        // Opening read-write may itself be refused; a read-only open must still work.
        queue = try DatabaseQueue(path: path, mode: .readOnly, configuration: configuration)
        print("open read-write refused with code \(error.code.rawValue): \(error.message)")
    }
    do {
        try queue.write { db in try db.execute(sql: "CREATE TABLE IF NOT EXISTS probe(x)") }
        print("FAILED: the write succeeded")
        exit(1)
    } catch let error as SQLiteError where error.primaryCode == .readOnly {
        print("write refused with SQLITE_READONLY (\(error.code.rawValue)): \(error.message)")
    }
    let tables = try queue.read { try $0.tableNames() }
    print("reads still work: \(tables.count) table(s)")
    exit(0)
}
