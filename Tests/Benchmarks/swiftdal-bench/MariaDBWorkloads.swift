import Dispatch
import Foundation
import SwiftDAL
import SwiftDALMariaDB

/// The workloads through SwiftDAL's public API on MariaDB, as a user writes them: the same
/// calls as ``SwiftWorkloads`` (a BaseDAL over the entity), on a `MariaDBPool` with its
/// default configuration. Each run opens its pool before the measured region and closes it
/// after (`measured(_:)`: the workload alone), as the raw C side connects and disconnects
/// outside it. MariaDB's engine sends one statement per round trip (no pipelining), so W1
/// is SQLite's call (`insert2` in one `write`), not PostgreSQL's pipelined batch; W5 is
/// PostgreSQL's `updateFieldRange`, its statements run one after the other.
struct MariaDBSwiftWorkloads<User: BenchUser> {
    let url: String
    let scale: PostgresScale

    /// The pool, its connection open (as the C side connects before its region).
    private func open() throws -> (MariaDBPool, BaseDAL<User>) {
        let pool = try MariaDBPool(url: url)
        try pool.checkConnection()
        return (pool, BaseDAL<User>(database: pool))
    }

    /// W1: the rows inserted in one transaction, each new key read back (`insert2`:
    /// `INSERT … RETURNING`).
    func w1Insert() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { pool, users in
            var checksum: Int64 = 0
            try pool.write { _ in
                for i in 1...scale.rows { checksum += try users.insert2(User(row: i)) }
            }
            return checksum
        }
    }

    /// W1B: the rows through `bulkInsert` (on MariaDB `insertRange`'s bulk executions, a
    /// thousand rows each, as the raw C bulk baseline sends them).
    func w1Bulk() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { _, users in
            Int64(try users.bulkInsert((1...scale.rows).map { User(row: $0) }))
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

    /// W5: the typed one-column updates by key in one call, one transaction (as on
    /// PostgreSQL, without pipelining).
    func w5Update() throws -> (seconds: Double, checksum: Int64) {
        return try measuredOnPool(open) { pool, users in
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
    /// of `scale.concurrentBatch`; the pool has a connection for each thread. Reuses the
    /// PostgreSQL mode's W8 on the pool (any `DatabaseWriter`).
    func w8Concurrent(readers: Int) throws -> PostgresConcurrentResult {
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = readers + 1
        let pool = try MariaDBPool(url: url, configuration: configuration)
        defer { try? pool.close() }
        return try PostgresSwiftWorkloads<User>(url: url, scale: scale).w8Concurrent(on: pool, readers: readers)
    }
}
