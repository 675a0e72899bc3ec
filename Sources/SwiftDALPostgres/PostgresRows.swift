internal import CSwiftDALPostgres
import Foundation
import SwiftDALConnection

/// The rows of one PostgreSQL result (text format), read through ``RowView`` as SQLite's
/// storage classes: integers (`int2`, `int4`, `int8`, `oid`) and booleans as `INTEGER`,
/// `float4`/`float8` as `REAL`, `bytea` as `BLOB`, `numeric` as SQLite's NUMERIC affinity
/// stores a number (`INTEGER` when integral and in range, else `REAL` when a double holds
/// it exactly, else the server's exact `TEXT`: a `Decimal` reads all three, `Int` and
/// `Double` read what fits them), everything else as `TEXT` (timestamps as ISO text with
/// their offset, dates, UUIDs, JSON). The result is immutable and freed with the last
/// reference to it.
final class PostgresRows: EngineRows {
    private let result: OpaquePointer
    let shape: Shape
    let rowCount: Int

    enum ValueKind {
        case integer, boolean, real, numeric, bytes, text
    }

    /// A result's columns: names (as a layout), types, and how each reads.
    struct Shape {
        let layout: ColumnLayout
        let types: [UInt32]
        let kinds: [ValueKind]
    }

    var layout: ColumnLayout { shape.layout }
    /// `shape.kinds`, held directly (read for every value).
    private let kinds: [ValueKind]

    /// The rows of `result`; `shape`, a previous result's of the same prepared statement,
    /// is reused when the columns' count and types match (their names cannot change
    /// without the plan changing, which PostgreSQL refuses as a stale plan).
    init(result: OpaquePointer, shape previous: Shape? = nil) {
        self.result = result
        rowCount = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        if let previous, previous.types.count == columns,
            (0..<columns).allSatisfy({ PQftype(result, Int32($0)) == previous.types[$0] })
        {
            shape = previous
            kinds = previous.kinds
            return
        }
        let types = (0..<columns).map { PQftype(result, Int32($0)) }
        shape = Shape(
            layout: ColumnLayout(
                names: (0..<columns).map { column in
                    PQfname(result, Int32(column)).map { String(cString: $0) } ?? "column\(column)"
                }),
            types: types,
            kinds: types.map { type in
                switch type {
                case 20, 21, 23, 26: .integer  // int8, int2, int4, oid
                case 16: .boolean
                case 700, 701: .real  // float4, float8
                case 1700: .numeric
                case 17: .bytes  // bytea
                default: .text
                }
            })
        kinds = shape.kinds
    }

    // MARK: Typed reads (the fast paths; `.other` sends a value to the general path)

    /// The bytes of a non-NULL value, or `nil` for NULL.
    @inline(__always)
    private func bytes(_ row: Int, _ column: Int) -> UnsafeBufferPointer<UInt8>? {
        let r = Int32(truncatingIfNeeded: row)
        let c = Int32(truncatingIfNeeded: column)
        guard PQgetisnull(result, r, c) == 0, let pointer = PQgetvalue(result, r, c) else { return nil }
        return UnsafeRawBufferPointer(start: pointer, count: Int(PQgetlength(result, r, c))).bindMemory(to: UInt8.self)
    }

    func integerColumn(row: Int, column: Int) -> TypedColumn<Int64> {
        guard column >= 0, column < kinds.count, row >= 0, row < rowCount else { return .other }
        switch kinds[column] {
        case .integer, .numeric:
            guard let bytes = bytes(row, column) else { return .null }
            return Self.integer(bytes).map { .value($0) } ?? .other
        case .boolean:
            guard let bytes = bytes(row, column) else { return .null }
            return .value(bytes.first == UInt8(ascii: "t") ? 1 : 0)
        default:
            return .other
        }
    }

    func realColumn(row: Int, column: Int) -> TypedColumn<Double> {
        guard column >= 0, column < kinds.count, row >= 0, row < rowCount, kinds[column] == .real else { return .other }
        guard let bytes = bytes(row, column) else { return .null }
        return Self.double(bytes).map { .value($0) } ?? .other
    }

    func textColumn(row: Int, column: Int) -> TypedColumn<String> {
        guard column >= 0, column < kinds.count, row >= 0, row < rowCount, kinds[column] == .text else { return .other }
        guard let bytes = bytes(row, column) else { return .null }
        // The server sends UTF-8 (the client encoding is set at connection); checked all the same.
        guard let text = Statement.validString(bytes) else { return .other }
        return .value(text)
    }

    deinit {
        PQclear(result)
    }

    func value(row: Int, column: Int) throws -> SQLiteValue {
        guard column >= 0, column < kinds.count else {
            throw DALError(
                .invalidColumn,
                "column index \(column) is out of range: the row has \(kinds.count) column(s), numbered from 0")
        }
        guard row >= 0, row < rowCount else {
            throw DALError(.invalidColumn, "row \(row) is out of range")
        }
        let r = Int32(row)
        let c = Int32(column)
        if PQgetisnull(result, r, c) != 0 { return .null }
        guard let pointer = PQgetvalue(result, r, c) else { return .null }
        let length = Int(PQgetlength(result, r, c))
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length).bindMemory(to: UInt8.self)
        switch kinds[column] {
        case .integer:
            if let integer = Self.integer(bytes) { return .integer(integer) }
        case .boolean:
            return .integer(bytes.first == UInt8(ascii: "t") ? 1 : 0)
        case .real:
            if let double = Self.double(bytes) { return .real(double) }
        case .numeric:
            if let integer = Self.integer(bytes) { return .integer(integer) }
            let text = String(decoding: bytes, as: UTF8.self)
            if let double = Double(text), double.isFinite,
                let exact = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
                Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) == exact
            {
                return .real(double)
            }
            return .text(text)
        case .bytes:
            if let data = Self.bytea(bytes) { return .blob(data) }
        case .text:
            break
        }
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    /// A decimal integer, parsed without building a string.
    private static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        var negative = false
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative
                ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            guard !overflow1 && !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// A float as PostgreSQL writes it (shortest round-trip digits, `Infinity`, `NaN`),
    /// parsed in place by `strtod` (libpq ends every value with a NUL): going through a
    /// `String` and `Double(_:)` cost about 1,000 instructions per value (callgrind, W2).
    /// Under a process locale whose decimal point is not `.`, `strtod` stops early: that
    /// is caught (it must read every byte), and `Double(_:)`, which ignores the locale,
    /// reads the value instead. `NaN` is `nil`: SQLite cannot hold it either, so it reads
    /// as text, a conversion error.
    private static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
        var end: UnsafeMutablePointer<CChar>?
        var value: Double? = base.withMemoryRebound(to: CChar.self, capacity: bytes.count + 1) { strtod($0, &end) }
        if Int(bitPattern: end) - Int(bitPattern: base) != bytes.count {
            value = Double(String(decoding: bytes, as: UTF8.self))
        }
        return value.flatMap { $0.isNaN ? nil : $0 }
    }

    /// `bytea` in PostgreSQL's hex output format (`\x0aff…`).
    private static func bytea(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0
        else {
            return nil
        }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var data = Data(capacity: (bytes.count - 2) / 2)
        var index = 2
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            data.append(high << 4 | low)
            index += 2
        }
        return data
    }
}
