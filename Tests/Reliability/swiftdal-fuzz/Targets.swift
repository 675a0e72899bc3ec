import Foundation
import SwiftDAL

// The three fuzz targets. Each must never crash; a failed property calls `violation`,
// which aborts so that libFuzzer records the input.

struct FuzzUser: Entity, Codable {
    static let tableName = "users"
    var id: Int64?
    var name: String
    var age: Int
    var bio: String?
}

final class FuzzUserDAL: BaseDAL<FuzzUser>, @unchecked Sendable {}

func violation(_ message: String) -> Never {
    FileHandle.standardError.write(Data("property violated: \(message)\n".utf8))
    abort()
}

func isTyped(_ error: any Error) -> Bool { error is SQLiteError || error is DALError }

/// Whether `text` occurs in `value` as SQLite's LIKE sees it: by Unicode scalars, ASCII
/// letters in either case (Swift's `contains` compares whole characters instead).
func containsScalars(_ value: String, _ text: String) -> Bool {
    func folded(_ string: String) -> [UInt32] {
        string.unicodeScalars.map { $0.value >= 65 && $0.value <= 90 ? $0.value + 32 : $0.value }
    }
    let haystack = folded(value)
    let needle = folded(text)
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { start in
        haystack[start..<(start + needle.count)].elementsEqual(needle)
    }
}

func makeUsers() throws -> (DatabaseQueue, FuzzUserDAL) {
    let queue = try DatabaseQueue.inMemory()
    try queue.write { db in
        try db.create(table: FuzzUser.self)
        try db.execute("INSERT INTO users(name, age, bio) VALUES ('ann', 30, 'x'), ('bob', 40, NULL)")
        // A name with a combining mark: an unescaped wildcard before a combining mark in a
        // LIKE keyword would match it.
        try db.execute("INSERT INTO users(name, age, bio) VALUES (\("Rene\u{301}e Zoe\u{308}"), 50, NULL)")
    }
    return (queue, FuzzUserDAL(database: queue))
}

/// Condition building: fuzzed text as a bound value, a LIKE keyword, an order-by column,
/// the text form of an order, a field name. Values must match only themselves; names must
/// be accepted only when they are real columns; the table must survive.
func fuzzCondition(_ data: Data) throws {
    let text = String(decoding: data, as: UTF8.self)
    let (queue, users) = try makeUsers()
    let byValue = try users.find(condition: "name = \(text) OR bio = \(text)")
    if byValue.contains(where: { $0.name != text && $0.bio != text }) { violation("a bound value matched other rows") }
    do {
        for user in try users.find(condition: "name LIKE \(containing: text)") where !text.isEmpty {
            if !containsScalars(user.name, text) { violation("LIKE matched \(user.name) for \(text.debugDescription)") }
        }
    } catch  where isTyped(error) {}
    let columns = ["id", "name", "age", "bio"]
    for order in [OrderBy(text), OrderBy(parsing: text)] {
        do {
            _ = try users.getAll(orderBy: order)
            if !order.terms.allSatisfy({ columns.contains($0.column.lowercased()) }) {
                violation("order by an unknown column was accepted")
            }
        } catch  where isTyped(error) {}
    }
    do {
        _ = try users.isExist(fieldName: text, value: 1)
        if !columns.contains(text.lowercased()) { violation("field \(text.debugDescription) was accepted") }
    } catch  where isTyped(error) {}
    if try users.getRecordCount() != 3 { violation("rows changed") }
    try queue.close()
}

/// Values: a fuzzed storage class and payload converted to every Swift type and back.
/// A conversion that succeeds must be stable once stored (the stored encoding is a fixed
/// point: dates keep milliseconds, floats their own precision), and binding then
/// reading a value must give it back.
func fuzzValues(_ data: Data) throws {
    guard let tag = data.first else { return }
    let payload = data.dropFirst()
    let value: DatabaseValue
    switch tag % 5 {
    case 0: value = .null
    case 1: value = .integer(payload.prefix(8).reduce(0) { $0 << 8 | Int64($1) })
    case 2: value = .real(Double(bitPattern: payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))
    case 3: value = .text(String(decoding: payload, as: UTF8.self))
    default: value = .blob(Data(payload))
    }
    func roundTrip<T: DatabaseValueConvertible & Equatable>(_ type: T.Type) {
        guard let converted = T(databaseValue: value) else { return }
        guard let stored = try? converted.databaseValue() else { return }  // e.g. NaN: refused, not stored
        guard let again = T(databaseValue: stored), (try? again.databaseValue()) == stored else {
            violation("\(T.self) is not stable once stored: \(value) → \(stored)")
        }
    }
    roundTrip(Int8.self)
    roundTrip(Int16.self)
    roundTrip(Int32.self)
    roundTrip(Int64.self)
    roundTrip(Int.self)
    roundTrip(UInt8.self)
    roundTrip(UInt16.self)
    roundTrip(UInt32.self)
    roundTrip(UInt64.self)
    roundTrip(UInt.self)
    roundTrip(Double.self)
    roundTrip(Float.self)
    roundTrip(Bool.self)
    roundTrip(String.self)
    roundTrip(Data.self)
    roundTrip(Date.self)
    roundTrip(UUID.self)
    roundTrip(Decimal.self)
    roundTrip(String?.self)
    let db = try Database.inMemory()
    if case .real(let double) = value, double.isNaN { return }  // SQLite stores NaN as NULL: SwiftDAL refuses it
    let back = try db.fetchOne("SELECT \(value)")?.values.first
    if back != value { violation("\(value) came back as \(String(describing: back))") }
    // The typed fast paths of RowView read exactly what the general path (a copied Row)
    // reads: the same value or the same error, also for text that is not valid UTF-8.
    for query in [SQL("SELECT \(value)"), SQL("SELECT CAST(\(value) AS TEXT)")] {
        var viewed = [String]()
        try db.forEachRow(query) { row in viewed = typedReads { try row.decode($0, at: 0) } }
        let general: [String]
        do {
            guard let copied = try db.fetchOne(query) else { continue }
            general = typedReads { try copied.decode($0, at: 0) }
        } catch let error as DALError {
            general = Array(repeating: "error \(error.code)", count: viewed.count)
        }
        if viewed != general {
            violation("fast and general reads differ on \(query.sql) with \(value): \(viewed) vs \(general)")
        }
    }
    try db.close()
}

/// The outcome of reading a column as each type that has a typed fast path.
private func typedReads(_ read: (any DatabaseValueConvertible.Type) throws -> any DatabaseValueConvertible) -> [String]
{
    let types: [any DatabaseValueConvertible.Type] = [
        String.self, String?.self, Int.self, Int?.self, Int64.self, Int64?.self, Double.self, Double?.self
    ]
    return types.map { type in
        do {
            return "value \(try read(type))"
        } catch let error as DALError {
            return "error \(error.code)"
        } catch {
            return "other \(error)"
        }
    }
}

/// Statements: fuzzed SQL text on a fresh connection. Every failure must be a typed
/// error, and the connection must close cleanly afterwards (nothing left open).
func fuzzStatement(_ data: Data) throws {
    let sql = String(decoding: data, as: UTF8.self)
    let upper = sql.uppercased()
    // Keep the fuzzer off the file system: these could create or read files.
    if upper.contains("ATTACH") || upper.contains("VACUUM") || upper.contains("LOAD_EXTENSION")
        || upper.contains("BACKUP")
    {
        return
    }
    var configuration = Configuration()
    configuration.maximumValueLength = 1_000_000
    let db = try Database.inMemory(configuration: configuration)
    try db.executeScript("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB); INSERT INTO t VALUES (1, 'x', x'00');")
    do {
        _ = try db.fetchAll(SQL(sql: sql))
    } catch  where isTyped(error) {}
    do {
        try db.executeScript(sql)
    } catch  where isTyped(error) {}
    do {
        try db.close()
    } catch {
        violation("close failed after \(sql.debugDescription): \(error)")
    }
}
