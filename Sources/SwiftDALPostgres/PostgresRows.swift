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

    /// A result's columns: names (as a layout), types, and how each reads. A class: a
    /// prepared statement's results share one, passed on with one reference count (three
    /// arrays in a struct cost three per result, and the statement's copy three more).
    final class Shape: Sendable {
        let layout: ColumnLayout
        let types: [UInt32]
        let kinds: [ValueKind]

        init(layout: ColumnLayout, types: [UInt32], kinds: [ValueKind]) {
            self.layout = layout
            self.types = types
            self.kinds = kinds
        }
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
        // NULL reads as an empty value: `PQgetisnull` is asked only then (one libpq call
        // less per value; callgrind, W2).
        guard let pointer = PQgetvalue(result, r, c) else { return nil }
        let length = Int(PQgetlength(result, r, c))
        if length == 0, PQgetisnull(result, r, c) != 0 { return nil }
        return UnsafeRawBufferPointer(start: pointer, count: length).bindMemory(to: UInt8.self)
    }

    func integerColumn(row: Int, column: Int) -> TypedColumn<Int64> {
        guard column >= 0, column < kinds.count, row >= 0, row < rowCount else { return .other }
        switch kinds[column] {
        case .integer, .numeric:
            guard let bytes = bytes(row, column) else { return .null }
            return PostgresText.integer(bytes).map { .value($0) } ?? .other
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
        return PostgresText.double(bytes).map { .value($0) } ?? .other
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
        guard let bytes = bytes(row, column) else { return .null }
        switch kinds[column] {
        case .integer:
            if let integer = PostgresText.integer(bytes) { return .integer(integer) }
        case .boolean:
            return .integer(bytes.first == UInt8(ascii: "t") ? 1 : 0)
        case .real:
            if let double = PostgresText.double(bytes) { return .real(double) }
        case .numeric:
            if let integer = PostgresText.integer(bytes) { return .integer(integer) }
            let text = String(decoding: bytes, as: UTF8.self)
            if let double = Double(text), double.isFinite,
                let exact = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
                Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) == exact
            {
                return .real(double)
            }
            return .text(text)
        case .bytes:
            if let data = PostgresText.bytea(bytes) { return .blob(data) }
        case .text:
            break
        }
        return .text(String(decoding: bytes, as: UTF8.self))
    }
}
