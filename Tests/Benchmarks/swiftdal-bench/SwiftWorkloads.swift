import CRawBench
import Dispatch
import Foundation
import SwiftDAL
import Synchronization

/// Pragmas for every SwiftDAL connection of the run (`--pragma`; the C harness gets the
/// same through `rawbench_set_pragmas`). Set once at start-up.
let extraPragmas = Mutex<[Pragma]>([])

/// Opens a pool with `open` before the measured region, runs `body` as the region
/// (`measured(_:)`), closes the pool after it; returns the region's seconds and the
/// checksum `body` returned. Every engine's W1–W7 but W2 (whose checksum is taken
/// outside the region) run through it.
func measuredOnPool<Pool: DatabaseReader, User: Entity>(
    _ open: () throws -> (Pool, BaseDAL<User>), _ body: (Pool, BaseDAL<User>) throws -> Int64
) throws -> (seconds: Double, checksum: Int64) {
    let (pool, users) = try open()
    let (checksum, seconds) = try measured { try body(pool, users) }
    try pool.close()
    return (seconds, checksum)
}

/// The workloads through SwiftDAL's public API, as a user writes them: a BaseDAL over
/// the entity, on a DatabasePool.
struct SwiftWorkloads<User: BenchUser> {
    let path: String
    let rows: Int64

    static var configuration: Configuration {
        var configuration = Configuration()
        configuration.synchronous = .normal
        configuration.pragmas = extraPragmas.withLock { $0 }
        return configuration
    }

    private func open() throws -> (DatabasePool, BaseDAL<User>) {
        let pool = try DatabasePool(path: path, configuration: Self.configuration)
        return (pool, BaseDAL<User>(database: pool))
    }

    // W1-W7: the pool is opened before the measured region and closed after it, and the
    // checksum of what a workload returned is taken after it, as in the C harness.

    func w1Insert() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { pool, users in
            var checksum: Int64 = 0
            try pool.write { _ in
                for i in 1...rows {
                    checksum += try users.insert2(User(row: i))
                }
            }
            return checksum
        }
    }

    func w2FetchAll() throws -> (seconds: Double, checksum: Int64) {
        let (pool, users) = try open()
        let (all, seconds) = try measured { try pool.read { _ in try users.getAll() } }
        let checksum = all.reduce(0) { $0 + $1.checksum }
        try pool.close()
        return (seconds, checksum)
    }

    func w3Lookup(inTransaction: Bool) throws -> (seconds: Double, checksum: Int64) {
        let rows = rows
        return try measuredOnPool(open) { pool, users in
            var sequence = IDSequence(count: rows)
            var checksum: Int64 = 0
            func run() throws {
                for _ in 0..<rows {
                    if let user = try users.findById(sequence.next()) {
                        checksum += (user.id ?? 0) + Int64(user.name.utf8.count)
                    }
                }
            }
            if inTransaction {
                try pool.read { _ in try run() }
            } else {
                try run()
            }
            return checksum
        }
    }

    func w4Filter() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { pool, users in
            var checksum: Int64 = 0
            try pool.read { _ in
                for k in 0..<1000 {
                    let age = 18 + k % 60
                    for user in try users.findTop(100, condition: "age = \(age)", orderBy: "id") {
                        checksum += user.id ?? 0
                    }
                }
            }
            return checksum
        }
    }

    func w5Update() throws -> (seconds: Double, checksum: Int64) {
        let rows = rows
        return try measuredOnPool(open) { pool, users in
            var sequence = IDSequence(count: rows)
            var checksum: Int64 = 0
            try pool.write { _ in
                for k in 0..<10_000 {
                    if try users.updateField("score", to: Double(k) * 0.25, key: sequence.next()) { checksum += 1 }
                }
            }
            return checksum
        }
    }

    func w6Exists() throws -> (seconds: Double, checksum: Int64) {
        let rows = rows
        return try measuredOnPool(open) { pool, users in
            var sequence = IDSequence(count: rows)
            var checksum: Int64 = 0
            try pool.read { _ in
                for k in 0..<rows {
                    let id = sequence.next()
                    let email = k % 2 == 1 ? "user\(id)@example.com" : "nobody\(id)@example.com"
                    if try users.isExist(fieldName: "email", value: email) { checksum += 1 }
                }
            }
            return checksum
        }
    }

    func w7Count() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { pool, users in
            var checksum: Int64 = 0
            try pool.read { _ in
                for k in 0..<1000 {
                    checksum += Int64(try users.getRecordCount(condition: "age = \(18 + k % 60)"))
                }
            }
            return checksum
        }
    }

    /// W8: `readers` threads of per-call lookups while one writer inserts in batches.
    func w8Concurrent(readers: Int, lookups: Int64, writes: Int64, batch: Int64) throws -> ConcurrentResult {
        var configuration = Self.configuration
        configuration.maximumReaderCount = readers
        let pool = try DatabasePool(path: path, configuration: configuration)
        let users = BaseDAL<User>(database: pool)
        let counters = ConcurrentCounters()
        let group = DispatchGroup()
        let clock = ContinuousClock()
        let start = clock.now
        let rows = rows
        // Dedicated threads, as the C harness uses pthreads: a global dispatch queue would
        // run only about as many blocks at once as there are cores.
        func onThread(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }
        onThread {
            var next = rows + 1
            for _ in 0..<(writes / batch) {
                do {
                    try pool.write { _ in
                        for _ in 0..<batch {
                            _ = try users.insert2(User(row: next))
                            next += 1
                        }
                    }
                } catch {
                    counters.failed(error)
                }
            }
            counters.writeSeconds = (clock.now - start).seconds
        }
        for reader in 0..<readers {
            onThread {
                var sequence = IDSequence(seed: UInt64(42 + reader), count: rows)
                var checksum: Int64 = 0
                for _ in 0..<lookups {
                    do {
                        if let user = try users.findById(sequence.next()) {
                            checksum += (user.id ?? 0) + Int64(user.name.utf8.count)
                        }
                    } catch {
                        counters.failed(error)
                    }
                }
                counters.add(checksum)
            }
        }
        group.wait()
        let readSeconds = (clock.now - start).seconds
        try pool.close()
        return ConcurrentResult(
            readSeconds: readSeconds, writeSeconds: counters.writeSeconds, busyErrors: counters.busy,
            otherErrors: counters.other, checksum: counters.checksum)
    }

    /// Streams every row through BaseDAL.forEach; returns the checksum.
    func stream() throws -> Int64 {
        let (pool, users) = try open()
        var checksum: Int64 = 0
        // swift-format-ignore: ReplaceForEachWithForLoop
        // (BaseDAL.forEach streams the table; it is not Sequence.forEach.)
        try users.forEach { checksum += $0.checksum }
        try pool.close()
        return checksum
    }
}

struct ConcurrentResult {
    var readSeconds: Double
    var writeSeconds: Double
    var busyErrors: Int64
    var otherErrors: Int64
    var checksum: Int64
}

final class ConcurrentCounters: @unchecked Sendable {
    private let lock = NSLock()
    private var _busy: Int64 = 0
    private var _other: Int64 = 0
    private var _checksum: Int64 = 0
    private var _writeSeconds = 0.0

    func failed(_ error: any Error) {
        lock.withLock {
            if let error = error as? SQLiteError, error.primaryCode == .busy { _busy += 1 } else { _other += 1 }
        }
    }

    func add(_ checksum: Int64) { lock.withLock { _checksum += checksum } }
    var busy: Int64 { lock.withLock { _busy } }
    var other: Int64 { lock.withLock { _other } }
    var checksum: Int64 { lock.withLock { _checksum } }
    var writeSeconds: Double {
        get { lock.withLock { _writeSeconds } }
        set { lock.withLock { _writeSeconds = newValue } }
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
