import Foundation
import SwiftDAL
import SwiftDALEngineTestSupport
import Testing

/// A Codable entity with a property of every integer width, signed and unsigned, plain and
/// optional, and a Float: what its columns hold must come back exactly, on both engines.
private struct Widths: Entity, Codable, Equatable {
    static let tableName = "widths"
    var id: Int64?
    var i8: Int8
    var i16: Int16
    var i32: Int32
    var i64: Int64
    var int: Int
    var u8: UInt8
    var u16: UInt16
    var u32: UInt32
    var u64: UInt64
    var uint: UInt
    var f: Float
    var flag: Bool
    var oi8: Int8?
    var oi16: Int16?
    var oi32: Int32?
    var ou: UInt?
    var ou8: UInt8?
    var ou16: UInt16?
    var ou32: UInt32?
    var ou64: UInt64?
    var of: Float?
    var oflag: Bool?
}

private final class WidthsDAL: BaseDAL<Widths>, @unchecked Sendable {}

/// A row of an unsigned 64-bit counter (MariaDB's `BIGINT UNSIGNED`, PostgreSQL's `numeric(20)`).
private struct Hits: Entity, Codable, Equatable {
    static let tableName = "hits"
    var id: Int64
    var count: UInt64
}

private let widthsTable = TableDefinition("widths") { t in
    t.column("id", .integer)
    for name in ["i8", "i16", "i32", "i64", "int", "u8", "u16", "u32", "u64", "uint", "flag"] {
        t.column(name, .integer, notNull: true)
    }
    t.column("f", .real, notNull: true)
    for name in ["oi8", "oi16", "oi32", "ou", "ou8", "ou16", "ou32", "ou64", "oflag"] { t.column(name, .integer) }
    t.column("of", .real)
    t.primaryKey(["id"])
}

@Suite struct IntegerWidthTests {
    /// The widths table on a fresh database of `engine`, and its DAL.
    private func widthsDAL(_ engine: Engine) throws -> (SampleDatabase, WidthsDAL) {
        let sample = try SampleDatabase(engine)
        try sample.database.write { db in try db.create(widthsTable) }
        return (sample, WidthsDAL(database: sample.database))
    }

    private func extremes(_ low: Bool) -> Widths {
        Widths(
            i8: low ? .min : .max, i16: low ? .min : .max, i32: low ? .min : .max, i64: low ? .min : .max,
            int: low ? .min : .max, u8: low ? 0 : .max, u16: low ? 0 : .max, u32: low ? 0 : .max,
            u64: low ? 0 : UInt64(Int64.max), uint: low ? 0 : UInt(Int64.max),
            f: low ? -.greatestFiniteMagnitude : .leastNonzeroMagnitude, flag: low,
            oi8: low ? .min : .max, oi16: low ? .min : .max, oi32: low ? .min : .max, ou: low ? 0 : UInt(Int64.max),
            ou8: low ? 0 : .max, ou16: low ? 0 : .max, ou32: low ? 0 : .max, ou64: low ? 0 : UInt64(Int64.max),
            of: low ? Float(0.1) : -Float.leastNormalMagnitude, oflag: !low)
    }

    @Test(arguments: Engine.allCases)
    func everyWidthRoundTripsAtItsLimitsAndNilsClear(_ engine: Engine) throws {
        let (sample, dal) = try widthsDAL(engine)
        defer { try? sample.close() }
        var low = extremes(true)
        var high = extremes(false)
        low.id = try dal.insert2(low)
        high.id = try dal.insert2(high)
        #expect(try dal.getAll(orderBy: "id") == [low, high])
        // Optionals set to nil clear their columns; set again, they hold their values.
        var cleared = high
        (cleared.oi8, cleared.oi16, cleared.oi32, cleared.ou, cleared.ou8) = (nil, nil, nil, nil, nil)
        (cleared.ou16, cleared.ou32, cleared.ou64, cleared.of, cleared.oflag) = (nil, nil, nil, nil, nil)
        #expect(try dal.update(cleared))
        #expect(try dal.findById(try #require(high.id)) == cleared)
        #expect(try dal.update(high))
        #expect(try dal.findById(try #require(high.id)) == high)
    }

    @Test(arguments: Engine.allCases)
    func valuesBeyondAWidthAreTypedErrorsNeverTruncated(_ engine: Engine) throws {
        let (sample, dal) = try widthsDAL(engine)
        defer { try? sample.close() }
        // An unsigned value past Int64.max cannot be stored as an integer: refused.
        var tooBig = extremes(false)
        tooBig.u64 = .max
        #expect(throws: DALError.self) { _ = try dal.insert2(tooBig) }
        #expect(try dal.getRecordCount() == 0)
        // A stored value outside a property's width is a conversion error naming the column.
        let id = try dal.insert2(extremes(true))
        try sample.database.write { db in try db.execute("UPDATE widths SET i8 = \(200), ou16 = \(-1) WHERE id = \(id)")
        }
        let error = try #require(throws: DALError.self) { _ = try dal.findById(id) }
        #expect(error.code == .conversionFailed)
        #expect("\(error)".contains("i8"))
        try sample.database.write { db in try db.execute("UPDATE widths SET i8 = \(0) WHERE id = \(id)") }
        #expect(#expect(throws: DALError.self) { _ = try dal.findById(id) }?.code == .conversionFailed)
        try sample.database.write { db in try db.execute("UPDATE widths SET ou16 = \(65_535) WHERE id = \(id)") }
        #expect(try dal.findById(id)?.ou16 == 65_535)
    }

    /// An unsigned value above `Int64.max`, which the engine reports as its digits, reads as
    /// a `UInt64` (and as a `Decimal` or a `String`), exactly; an `Int64` read of it is a
    /// conversion error, and writing it back is refused (bind it as a `Decimal`).
    @Test(arguments: [Engine.postgres, .mariadb])
    func anUnsignedValueAboveInt64MaxReadsAsUInt64(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let type = engine == .mariadb ? "BIGINT UNSIGNED" : "NUMERIC(20)"
        try sample.database.write { db in
            try db.execute(sql: "CREATE TABLE hits(id BIGINT PRIMARY KEY, count \(type) NOT NULL)")
            try db.execute(sql: "INSERT INTO hits VALUES (1, 18446744073709551615), (2, 9223372036854775808), (3, 7)")
        }
        let hits = BaseDAL<Hits>(database: sample.database)
        #expect(
            try hits.getAll(orderBy: "id").map(\.count) == [UInt64.max, UInt64(Int64.max) + 1, 7])
        try sample.database.read { db in
            let row = try #require(try db.fetchOne("SELECT count FROM hits WHERE id = 1"))
            #expect(try row.decode(UInt64.self, at: 0) == .max)
            #expect(try row.decode(UInt.self, at: 0) == .max)
            #expect(try row.decode(Decimal.self, at: 0) == Decimal(string: "18446744073709551615"))
            #expect(#expect(throws: DALError.self) { try row.decode(Int64.self, at: 0) }?.code == .conversionFailed)
            #expect(#expect(throws: DALError.self) { try row.decode(UInt32.self, at: 0) }?.code == .conversionFailed)
        }
        let read = try #require(try hits.findById(1))
        #expect(#expect(throws: DALError.self) { try hits.update(read) }?.code == .invalidValue)
        #expect(try hits.updateFields(["count": Decimal(string: "18446744073709551614")], key: 1))
        #expect(try hits.findById(1)?.count == .max - 1)
    }
}
