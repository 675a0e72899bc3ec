import CSwiftDALSQLite
import SwiftDAL
import Synchronization

// "raw Swift": W1–W7 as the fastest honest Swift a user could write straight over
// SQLite's C API, with no library: statements prepared once per workload, values bound
// and read by index, the same `ExplicitUser` entities built (their strings made with
// `String(decoding:as:)`, which takes the length SQLite gives and no `strlen`), the same
// SQL as the C harness. What it costs above raw C is what Swift itself costs for the
// workload (strings, reference counting, the entity), not SwiftDAL: the floor under any
// Swift library's figure, and what SwiftDAL's figures are read against.

/// A failed SQLite call of the raw Swift workloads.
private func check(_ code: Int32, _ database: OpaquePointer?, _ what: String) throws {
    guard code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE else {
        let message = database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "code \(code)"
        throw BenchError("raw Swift \(what): \(message)")
    }
}

/// SQLite's `SQLITE_TRANSIENT`: it copies the bound bytes.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The bytes of the texts a statement's parameters are bound to, a slot of
/// ``slotSize`` bytes per parameter, each valid until its parameter's next bind: bound
/// `SQLITE_STATIC`, SQLite reads them in place (no allocation a value), as the C
/// harness binds its buffers and SwiftDAL its small values. A longer text is copied by
/// SQLite (`SQLITE_TRANSIENT`).
private final class TextSlots {
    static let slotSize = 256
    private let storage: UnsafeMutablePointer<UInt8>
    private let count: Int

    init(parameters: Int) {
        count = parameters
        storage = .allocate(capacity: parameters * Self.slotSize)
    }

    deinit { storage.deallocate() }

    /// Binds `text` to parameter `index` (1-based) from its slot.
    @inline(__always)
    func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        let slot = storage + Int(index - 1) * Self.slotSize
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            guard bytes.count <= Self.slotSize, Int(index) <= count else { return nil }
            if let base = bytes.baseAddress { slot.update(from: base, count: bytes.count) }
            return bytes.count
        }
        if let length = copied ?? nil {
            slot.withMemoryRebound(to: CChar.self, capacity: Self.slotSize) {
                _ = sqlite3_bind_text(statement, index, $0, Int32(length), nil)
            }
        } else {
            _ = text.withCString { sqlite3_bind_text(statement, index, $0, Int32(text.utf8.count), transient) }
        }
    }
}

struct SwiftFloor {
    let path: String
    let rows: Int64

    /// Opens the database as the C harness does (WAL, `synchronous = NORMAL`, foreign
    /// keys) before the measured region, runs `body` as the region, closes it after.
    private func onConnection(_ body: (OpaquePointer) throws -> Int64) throws -> (seconds: Double, checksum: Int64) {
        guard extraPragmas.withLock({ $0.isEmpty }) else {
            throw BenchError("raw Swift runs without --pragma (its connection takes the C harness's defaults only)")
        }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        try check(sqlite3_open_v2(path, &handle, flags, nil), handle, "open")
        guard let database = handle else { throw BenchError("raw Swift: no connection") }
        defer { sqlite3_close(database) }
        try check(
            sqlite3_exec(
                database, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", nil, nil, nil),
            database, "pragmas")
        let (checksum, seconds) = try measured { try body(database) }
        return (seconds, checksum)
    }

    /// Runs `body` with `sql` prepared, finalized after it.
    private func withStatement<T>(
        _ database: OpaquePointer, _ sql: String, _ body: (OpaquePointer) throws -> T
    ) throws -> T {
        var handle: OpaquePointer?
        try check(sqlite3_prepare_v2(database, sql, -1, &handle, nil), database, sql)
        guard let statement = handle else { throw BenchError("raw Swift: no statement for \(sql)") }
        defer { sqlite3_finalize(statement) }
        return try body(statement)
    }

    private func exec(_ database: OpaquePointer, _ sql: String) throws {
        try check(sqlite3_exec(database, sql, nil, nil, nil), database, sql)
    }

    /// The text of column `index`, or `nil` for NULL.
    @inline(__always)
    private func text(_ statement: OpaquePointer, _ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, index) else { return nil }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))),
            as: UTF8.self)
    }

    /// The current row as a user (the columns of `selectUser`).
    @inline(__always)
    private func user(_ statement: OpaquePointer) -> ExplicitUser {
        ExplicitUser(
            id: sqlite3_column_int64(statement, 0), name: text(statement, 1) ?? "", email: text(statement, 2) ?? "",
            age: sqlite3_column_int64(statement, 3), score: sqlite3_column_double(statement, 4),
            bio: text(statement, 5))
    }

    private static let selectUser = "SELECT id, name, email, age, score, bio FROM users"

    func w1Insert() throws -> (seconds: Double, checksum: Int64) {
        try onConnection { database in
            try exec(database, "BEGIN IMMEDIATE")
            var checksum: Int64 = 0
            try withStatement(database, "INSERT INTO users(name, email, age, score, bio) VALUES (?, ?, ?, ?, ?)") {
                statement in
                let texts = TextSlots(parameters: 5)
                for i in 1...rows {
                    let user = ExplicitUser(row: i)
                    texts.bind(statement, 1, user.name)
                    texts.bind(statement, 2, user.email)
                    sqlite3_bind_int64(statement, 3, user.age)
                    sqlite3_bind_double(statement, 4, user.score)
                    if let bio = user.bio {
                        texts.bind(statement, 5, bio)
                    } else {
                        sqlite3_bind_null(statement, 5)
                    }
                    try check(sqlite3_step(statement), database, "insert")
                    checksum += sqlite3_last_insert_rowid(database)
                    sqlite3_reset(statement)
                }
            }
            try exec(database, "COMMIT")
            return checksum
        }
    }

    func w2FetchAll() throws -> (seconds: Double, checksum: Int64) {
        var all = [ExplicitUser]()
        let (seconds, _) = try onConnection { database in
            try exec(database, "BEGIN")
            try withStatement(database, Self.selectUser + " ORDER BY id") { statement in
                var code = sqlite3_step(statement)
                while code == SQLITE_ROW {
                    all.append(user(statement))
                    code = sqlite3_step(statement)
                }
                try check(code, database, "fetch")
            }
            try exec(database, "COMMIT")
            return 0
        }
        // Outside the region, as in the C harness and the SwiftDAL side.
        return (seconds, all.reduce(0) { $0 + $1.checksum })
    }

    func w3Lookup(inTransaction: Bool) throws -> (seconds: Double, checksum: Int64) {
        try onConnection { database in
            if inTransaction { try exec(database, "BEGIN") }
            var checksum: Int64 = 0
            try withStatement(database, Self.selectUser + " WHERE id = ?") { statement in
                var sequence = IDSequence(count: rows)
                for _ in 0..<rows {
                    sqlite3_bind_int64(statement, 1, sequence.next())
                    let code = sqlite3_step(statement)
                    if code == SQLITE_ROW {
                        let found = user(statement)
                        checksum += (found.id ?? 0) + Int64(found.name.utf8.count)
                    } else {
                        try check(code, database, "lookup")
                    }
                    sqlite3_reset(statement)
                }
            }
            if inTransaction { try exec(database, "COMMIT") }
            return checksum
        }
    }

    func w4Filter() throws -> (seconds: Double, checksum: Int64) {
        try onConnection { database in
            try exec(database, "BEGIN")
            var checksum: Int64 = 0
            try withStatement(database, Self.selectUser + " WHERE age = ? ORDER BY id LIMIT 100") { statement in
                for k in 0..<1000 {
                    sqlite3_bind_int64(statement, 1, Int64(18 + k % 60))
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        checksum += user(statement).id ?? 0  // as the C harness: each row made, then dropped
                        code = sqlite3_step(statement)
                    }
                    try check(code, database, "filter")
                    sqlite3_reset(statement)
                }
            }
            try exec(database, "COMMIT")
            return checksum
        }
    }

    func w5Update() throws -> (seconds: Double, checksum: Int64) {
        try onConnection { database in
            try exec(database, "BEGIN IMMEDIATE")
            var checksum: Int64 = 0
            try withStatement(database, "UPDATE users SET score = ? WHERE id = ?") { statement in
                var sequence = IDSequence(count: rows)
                for k in 0..<10_000 {
                    sqlite3_bind_double(statement, 1, Double(k) * 0.25)
                    sqlite3_bind_int64(statement, 2, sequence.next())
                    try check(sqlite3_step(statement), database, "update")
                    checksum += Int64(sqlite3_changes(database))
                    sqlite3_reset(statement)
                }
            }
            try exec(database, "COMMIT")
            return checksum
        }
    }

    func w6Exists() throws -> (seconds: Double, checksum: Int64) {
        try onConnection { database in
            try exec(database, "BEGIN")
            var checksum: Int64 = 0
            try withStatement(database, "SELECT EXISTS(SELECT 1 FROM users WHERE email = ?)") { statement in
                var sequence = IDSequence(count: rows)
                let texts = TextSlots(parameters: 1)
                for k in 0..<rows {
                    let id = sequence.next()
                    let email = k % 2 == 1 ? "user\(id)@example.com" : "nobody\(id)@example.com"
                    texts.bind(statement, 1, email)
                    try check(sqlite3_step(statement), database, "exists")
                    checksum += sqlite3_column_int64(statement, 0)
                    sqlite3_reset(statement)
                }
            }
            try exec(database, "COMMIT")
            return checksum
        }
    }

    func w7Count() throws -> (seconds: Double, checksum: Int64) {
        try onConnection { database in
            try exec(database, "BEGIN")
            var checksum: Int64 = 0
            try withStatement(database, "SELECT COUNT(*) FROM users WHERE age = ?") { statement in
                for k in 0..<1000 {
                    sqlite3_bind_int64(statement, 1, Int64(18 + k % 60))
                    try check(sqlite3_step(statement), database, "count")
                    checksum += sqlite3_column_int64(statement, 0)
                    sqlite3_reset(statement)
                }
            }
            try exec(database, "COMMIT")
            return checksum
        }
    }
}
