import Foundation
import SwiftDAL

/// `--wal-growth`: the write-ahead log's size while one read transaction is held and
/// `writes` single-row write transactions run, after the reader ends, and after more
/// writes; once with SQLite's default (no journal size limit) and once with SwiftDAL's.
/// Prints one line per configuration, in MiB.
func runWALGrowth(writes: Int, directory: String) throws {
    for (label, limit) in [
        ("journal_size_limit unset (SQLite default)", nil), ("SwiftDAL default", Configuration().journalSizeLimit)
    ] {
        let path = directory + "/wal-growth-\(UUID().uuidString).sqlite"
        var configuration = Configuration()
        configuration.journalSizeLimit = limit
        configuration.synchronous = .normal
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { try $0.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT)") }
        func walMiB() -> Double {
            let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            return Double(size) / 1_048_576
        }
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let reader = Thread {
            _ = try? pool.read { db in
                _ = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t")
                holding.signal()
                release.wait()
            }
        }
        reader.start()
        holding.wait()
        for index in 0..<writes {
            try pool.write { db in
                try db.execute("INSERT INTO t(name, note) VALUES (\("user\(index)"), \("note \(index)"))")
            }
        }
        let duringRead = walMiB()
        release.signal()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        let afterReader = walMiB()
        for index in 0..<2000 {
            try pool.write { db in try db.execute("INSERT INTO t(name) VALUES (\("late\(index)"))") }
        }
        let afterMoreWrites = walMiB()
        try pool.checkpoint(.truncate)
        let afterTruncate = walMiB()
        let database = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_048_576
        try pool.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        print(
            String(
                format:
                    "%@: database %.1f MiB; WAL %.1f MiB after %d writes under one read, %.1f after the reader ended, %.1f after 2,000 more writes, %.1f after checkpoint(.truncate)",
                label, database, duringRead, writes, afterReader, afterMoreWrites, afterTruncate))
    }
}
