internal import CSwiftDALPostgres
import Foundation
import SwiftDALConnection

/// The rows of one PostgreSQL result (text format, or binary for the types that read the
/// same from it: see ``Shape/readsInBinary``), read through ``RowView`` as SQLite's
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
        /// Binary format (see ``Shape/readsInBinary``): `int2`/`int4`/`int8` big-endian, by length.
        case binaryInteger
        /// `oid`, an unsigned 32-bit big-endian integer.
        case binaryOID
        /// One byte, 0 or 1.
        case binaryBoolean
        /// `float8`: an IEEE double, big-endian.
        case binaryReal
        /// `bytea`: the bytes themselves.
        case binaryBytes
        /// A type this reader has no binary form for (never requested: see
        /// ``Shape/readsInBinary``): its bytes, as a blob.
        case binaryOther
    }

    /// A result's columns: names (as a layout), types, and how each reads. A class: a
    /// prepared statement's results share one, passed on with one reference count (three
    /// arrays in a struct cost three per result, and the statement's copy three more).
    final class Shape: Sendable {
        let layout: ColumnLayout
        let types: [UInt32]
        let kinds: [ValueKind]
        /// Whether the values came in binary format (libpq asks one format for a whole result).
        let isBinary: Bool
        /// Whether every column's type reads the same value from binary format, and more
        /// cheaply: integers (`int2`, `int4`, `int8`, `oid`), `bool`, `float8` (the
        /// double itself, where text needs parsing), `bytea` (its bytes, where text is
        /// hex), and text types (`text`, `varchar`, `bpchar`, `name`: the same bytes).
        /// `float4` is left out: its text is the float's shortest decimal, which reads as
        /// another double than the float widened. A prepared statement whose results have
        /// such a shape asks for binary from then on.
        let readsInBinary: Bool

        init(layout: ColumnLayout, types: [UInt32], kinds: [ValueKind], isBinary: Bool) {
            self.layout = layout
            self.types = types
            self.kinds = kinds
            self.isBinary = isBinary
            readsInBinary = Self.readInBinary(types)
        }

        /// Whether columns of `types` all read the same value from binary format (see
        /// ``readsInBinary``).
        static func readInBinary(_ types: [UInt32]) -> Bool {
            types.allSatisfy { binaryKind(of: $0) != .binaryOther }
        }

        /// How a value of `type` reads in binary format.
        static func binaryKind(of type: UInt32) -> ValueKind {
            switch type {
            case 20, 21, 23: .binaryInteger  // int8, int2, int4
            case 26: .binaryOID
            case 16: .binaryBoolean
            case 701: .binaryReal  // float8
            case 17: .binaryBytes
            case 25, 1043, 1042, 19: .text  // text, varchar, bpchar, name
            default: .binaryOther
            }
        }
    }

    var layout: ColumnLayout { shape.layout }
    /// `shape.kinds`, held directly (read for every value).
    private let kinds: [ValueKind]

    /// The rows of `result`; `shape`, a previous result's of the same prepared statement,
    /// is reused when the columns' count and types match (their names cannot change
    /// without the plan changing, which PostgreSQL refuses as a stale plan). With
    /// `typesPinned` (a statement prepared on the server whose columns its plan fixes)
    /// the types are not compared: PostgreSQL refuses to run such a statement when they
    /// would change ("cached plan must not change result type", prepared again then as a
    /// new statement, without a shape).
    init(result: OpaquePointer, shape previous: Shape? = nil, typesPinned: Bool = false) {
        self.result = result
        rowCount = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        let isBinary = columns > 0 && PQfformat(result, 0) == 1
        if let previous, previous.types.count == columns, previous.isBinary == isBinary,
            typesPinned || (0..<columns).allSatisfy({ PQftype(result, Int32($0)) == previous.types[$0] })
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
                if isBinary { return Shape.binaryKind(of: type) }
                return switch type {
                case 20, 21, 23, 26: .integer  // int8, int2, int4, oid
                case 16: .boolean
                case 700, 701: .real  // float4, float8
                case 1700: .numeric
                case 17: .bytes  // bytea
                default: .text
                }
            }, isBinary: isBinary)
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
        case .binaryInteger, .binaryOID, .binaryBoolean:
            guard let bytes = bytes(row, column) else { return .null }
            return Self.binaryInteger(bytes, kinds[column]).map { .value($0) } ?? .other
        default:
            return .other
        }
    }

    /// A binary integer, `oid` or `bool` (`nil` for a length its type does not have).
    @inline(__always)
    private static func binaryInteger(_ bytes: UnsafeBufferPointer<UInt8>, _ kind: ValueKind) -> Int64? {
        guard let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        switch (kind, bytes.count) {
        case (.binaryInteger, 8): return Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
        case (.binaryInteger, 4): return Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
        case (.binaryInteger, 2): return Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self)))
        case (.binaryOID, 4): return Int64(UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)))
        case (.binaryBoolean, 1): return base.pointee == 0 ? 0 : 1
        default: return nil
        }
    }

    /// A binary `float8` (`nil` for another length).
    @inline(__always)
    private static func binaryDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard bytes.count == 8, let base = bytes.baseAddress else { return nil }
        return Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)))
    }

    func realColumn(row: Int, column: Int) -> TypedColumn<Double> {
        guard column >= 0, column < kinds.count, row >= 0, row < rowCount else { return .other }
        switch kinds[column] {
        case .real:
            guard let bytes = bytes(row, column) else { return .null }
            return PostgresText.double(bytes).map { .value($0) } ?? .other
        case .binaryReal:
            guard let bytes = bytes(row, column) else { return .null }
            // NaN reads as the text path reads "NaN": not a REAL (SQLite cannot hold it).
            guard let double = Self.binaryDouble(bytes), !double.isNaN else { return .other }
            return .value(double)
        default:
            return .other
        }
    }

    func textColumn(row: Int, column: Int) -> TypedColumn<String> {
        guard column >= 0, column < kinds.count, row >= 0, row < rowCount, kinds[column] == .text else { return .other }
        guard let bytes = bytes(row, column) else { return .null }
        guard let base = bytes.baseAddress else { return .value("") }
        // The server sends UTF-8 (the client encoding is set at connection); checked all the
        // same. libpq ends every value with a NUL.
        guard let text = UTF8Text.string(nulTerminated: base, count: bytes.count) else { return .other }
        return .value(text)
    }

    deinit {
        PQclear(result)
    }

    func value(row: Int, column: Int) throws -> DatabaseValue {
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
        case .binaryInteger, .binaryOID, .binaryBoolean:
            if let integer = Self.binaryInteger(bytes, kinds[column]) { return .integer(integer) }
            return .blob(Data(bytes))
        case .binaryReal:
            guard let double = Self.binaryDouble(bytes) else { return .blob(Data(bytes)) }
            return double.isNaN ? .text("NaN") : .real(double)
        case .binaryBytes, .binaryOther:
            return .blob(Data(bytes))
        }
        return .text(String(decoding: bytes, as: UTF8.self))
    }
}
