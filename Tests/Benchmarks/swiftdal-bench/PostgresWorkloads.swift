import Dispatch
import Foundation
import SwiftDAL
import SwiftDALPostgres

/// The workloads through SwiftDAL's public API on PostgreSQL, as a user writes them: the
/// same calls as ``SwiftWorkloads`` (a BaseDAL over the entity), on a `PostgresPool` with
/// its default configuration. Each run opens its pool before the measured region and closes
/// it after (`measured(_:)`: the workload alone), as the raw libpq side connects and
/// disconnects outside it.
struct PostgresSwiftWorkloads<User: BenchUser> {
    let url: String
    let scale: PostgresScale

    /// The pool, its connection open (as the C side connects before its region).
    private func open() throws -> (PostgresPool, BaseDAL<User>) {
        let pool = try PostgresPool(url: url)
        try pool.checkConnection()
        return (pool, BaseDAL<User>(database: pool))
    }

    /// W0: a pool opened, one count through the table DAL, the pool closed, all inside
    /// the measured region (what opening a pool costs, against libpq's connection).
    func w0OpenCount() throws -> (seconds: Double, checksum: Int64) {
        let (checksum, seconds) = try measured {
            let pool = try PostgresPool(url: url)
            let count = try BaseDAL<User>(database: pool).getRecordCount()
            try pool.close()
            return Int64(count)
        }
        return (seconds, checksum)
    }

    /// W1B: W1's rows loaded with `bulkInsert` (one `COPY … FROM STDIN`); the checksum is
    /// the rows loaded, as the C side's.
    func w1Bulk() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { _, users in
            Int64(try users.bulkInsert((1...scale.rows).map { User(row: $0) }))
        }
    }

    /// W1: the rows inserted in one transaction, each new key read back: `insertRange2`,
    /// which pipelines the inserts (a sync per 1,000), as the pipelined baseline does.
    func w1Insert() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { _, users in
            try users.insertRange2((1...scale.rows).map { User(row: $0) }).reduce(0, +)
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
        return try measuredOnPool(open) { pool, users in
            var sequence = IDSequence(count: scale.rows)
            var checksum: Int64 = 0
            func run() throws {
                for _ in 0..<scale.lookups {
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
                for k in 0..<Int(scale.filters) {
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
        return try measuredOnPool(open) { pool, users in
            // One batch, pipelined (as insertRange is for W1): one transaction, as Tests/Benchmarks/README.md.
            var sequence = IDSequence(count: scale.rows)
            var changes = [(key: Int64, value: Double)]()
            changes.reserveCapacity(Int(scale.updates))
            for k in 0..<scale.updates { changes.append((key: sequence.next(), value: Double(k) * 0.25)) }
            return Int64(try users.updateFieldRange("score", changes))
        }
    }

    func w6Exists() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { pool, users in
            var sequence = IDSequence(count: scale.rows)
            var checksum: Int64 = 0
            try pool.read { _ in
                for k in 0..<scale.lookups {
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
                for k in 0..<Int(scale.counts) {
                    checksum += Int64(try users.getRecordCount(condition: "age = \(18 + k % 60)"))
                }
            }
            return checksum
        }
    }

    /// W8: `readers` threads of per-call lookups while one writer inserts in transactions
    /// of `scale.concurrentBatch`; the pool has a connection for each thread.
    func w8Concurrent(readers: Int) throws -> PostgresConcurrentResult {
        var configuration = PostgresConfiguration()
        configuration.maximumConnections = readers + 1
        let pool = try PostgresPool(url: url, configuration: configuration)
        defer { try? pool.close() }
        return try w8Concurrent(on: pool, readers: readers)
    }

    /// W8 on `pool` (a pool, or a cluster of a primary and replicas), left open.
    func w8Concurrent(on pool: any DatabaseWriter, readers: Int) throws -> PostgresConcurrentResult {
        let users = BaseDAL<User>(database: pool)
        let counters = PostgresConcurrentCounters()
        let group = DispatchGroup()
        let clock = ContinuousClock()
        let start = clock.now
        let scale = scale
        // Dedicated threads, as the C harness uses pthreads.
        func onThread(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }
        onThread {
            var next = scale.rows + 1
            var written: Int64 = 0
            while written < scale.concurrentWrites {
                let count = min(scale.concurrentBatch, scale.concurrentWrites - written)
                do {
                    try pool.write { _ in
                        for i in next..<(next + count) { _ = try users.insert2(User(row: i)) }
                    }
                } catch {
                    counters.failed(error)
                }
                next += count
                written += count
            }
            counters.writeSeconds = (clock.now - start).seconds
        }
        for reader in 0..<readers {
            onThread {
                var sequence = IDSequence(seed: UInt64(42 + reader), count: scale.rows)
                var checksum: Int64 = 0
                for _ in 0..<scale.concurrentLookups {
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
        return PostgresConcurrentResult(
            readSeconds: readSeconds, writeSeconds: counters.writeSeconds, errors: counters.errors,
            retryableErrors: counters.retryable, checksum: counters.checksum)
    }
}

struct PostgresConcurrentResult {
    var readSeconds: Double
    var writeSeconds: Double
    /// Failed lookups and failed write transactions.
    var errors: Int64
    /// Of those, the ones PostgreSQL calls retryable (serialization failures, deadlocks).
    var retryableErrors: Int64
    var checksum: Int64
}

final class PostgresConcurrentCounters: @unchecked Sendable {
    private let lock = NSLock()
    private var _errors: Int64 = 0
    private var _retryable: Int64 = 0
    private var _checksum: Int64 = 0
    private var _writeSeconds = 0.0

    func failed(_ error: any Error) {
        lock.withLock {
            _errors += 1
            if let error = error as? any DatabaseError, error.isRetryable { _retryable += 1 }
        }
    }

    func add(_ checksum: Int64) { lock.withLock { _checksum += checksum } }
    var errors: Int64 { lock.withLock { _errors } }
    var retryable: Int64 { lock.withLock { _retryable } }
    var checksum: Int64 { lock.withLock { _checksum } }
    var writeSeconds: Double {
        get { lock.withLock { _writeSeconds } }
        set { lock.withLock { _writeSeconds = newValue } }
    }
}
