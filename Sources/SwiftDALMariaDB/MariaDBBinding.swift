internal import CSwiftDALMariaDB
import Foundation
import SwiftDALConnection

/// A connection's parameters as Connector/C takes them (`MYSQL_BIND`s pointing into one
/// buffer of the values' bytes), reused from one statement to the next: ``bind(_:)`` fills
/// them, valid until the next call (bind, execute, then the next statement). `.null` binds
/// as `MYSQL_TYPE_NULL`, `.integer` as `LONGLONG`, `.real` as `DOUBLE`, `.text` as a string
/// in the connection's character set (`utf8mb4`), `.blob` as `BLOB` (bytes, never converted).
final class MariaDBParameterBinding {
    private var binds: UnsafeMutablePointer<MYSQL_BIND>
    /// The byte counts of the text and blob parameters, which their binds point to: read
    /// by Connector/C at each execution, so that a value of another length needs no new
    /// `mysql_stmt_bind_param` (as raw C binds once).
    private var lengths: UnsafeMutablePointer<UInt>
    private var bindCapacity: Int
    private var bytes: UnsafeMutableRawPointer
    private var byteCapacity: Int
    /// The most bytes kept from one statement to the next (a large value's buffer is
    /// given back after its statement ran).
    static let keptBytes = 64 * 1024
    /// The most parameters whose binds are kept from one statement to the next.
    static let keptBinds = 256

    init() {
        bindCapacity = 8
        binds = Self.zeroedBinds(bindCapacity)
        lengths = .allocate(capacity: bindCapacity)
        byteCapacity = 512
        bytes = .allocate(byteCount: byteCapacity, alignment: 8)
    }

    /// `count` binds, every field zero: ``bind(_:)`` writes only a bind's type, buffer and
    /// length, the fields it uses (zeroing every bind on every call cost ~50 instructions
    /// a statement of two parameters: callgrind, W5 on MariaDB). Connector/C copies the
    /// binds (`mysql_stmt_bind_param`) and writes only its copy.
    private static func zeroedBinds(_ count: Int) -> UnsafeMutablePointer<MYSQL_BIND> {
        let binds = UnsafeMutablePointer<MYSQL_BIND>.allocate(capacity: count)
        binds.initialize(repeating: MYSQL_BIND(), count: count)
        return binds
    }

    /// The binds for `values`, in order, pointing into this binding's buffer: valid until
    /// the next call of ``bind(_:)`` or ``releaseLargeBuffers()``.
    func bind(_ values: UnsafeBufferPointer<DatabaseValue>) -> UnsafeMutablePointer<MYSQL_BIND> {
        if values.count > bindCapacity { resize(values.count) }
        // Read in place, through a pointer: iterated, each value was copied and destroyed
        // around its use (callgrind, MariaDB W1: −429 instructions an insert of five values).
        guard let first = values.baseAddress else { return binds }
        var size = 0
        for index in 0..<values.count {
            switch (first + index).pointee {
            case .null: break
            case .integer, .real: size += 8
            case .text(let text): size += Self.slotSize(text.utf8.count)
            case .blob(let data): size += Self.slotSize(data.count)
            }
        }
        if size > byteCapacity {
            bytes.deallocate()
            byteCapacity = size
            bytes = .allocate(byteCount: byteCapacity, alignment: 8)
        }
        var offset = 0
        for index in 0..<values.count {
            let pointer = bytes + offset
            switch (first + index).pointee {
            case .null:
                // Always typed NULL: the server keeps a parameter's type for a NULL value too,
                // and types `COALESCE(?, 0)` or `IFNULL(?, x)` by it (a NULL that kept the
                // type of a text bound before at its place read back as text).
                binds[index].buffer_type = MYSQL_TYPE_NULL
                binds[index].buffer = nil
                binds[index].buffer_length = 0
                binds[index].length = nil
            case .integer(let integer):
                pointer.storeBytes(of: integer, as: Int64.self)
                binds[index].buffer_type = MYSQL_TYPE_LONGLONG
                binds[index].buffer = pointer
                binds[index].buffer_length = 8
                binds[index].length = nil
                offset += 8
            case .real(let double):
                pointer.storeBytes(of: double, as: Double.self)
                binds[index].buffer_type = MYSQL_TYPE_DOUBLE
                binds[index].buffer = pointer
                binds[index].buffer_length = 8
                binds[index].length = nil
                offset += 8
            case .text(let text):
                // Read in place (`withUTF8` needs a `var`: a copy of the string).
                func copyIn(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
                    if let base = utf8.baseAddress { pointer.copyMemory(from: base, byteCount: utf8.count) }
                    return utf8.count
                }
                let length: Int
                if let copied = text.utf8.withContiguousStorageIfAvailable(copyIn) {
                    length = copied
                } else {
                    var contiguous = text
                    length = contiguous.withUTF8(copyIn)
                }
                binds[index].buffer_type = MYSQL_TYPE_STRING
                let slot = Self.slotSize(length)
                binds[index].buffer = pointer
                binds[index].buffer_length = UInt(slot)
                lengths[index] = UInt(length)
                binds[index].length = lengths + index
                offset += slot
            case .blob(let data):
                data.withUnsafeBytes { source in
                    if let base = source.baseAddress { pointer.copyMemory(from: base, byteCount: source.count) }
                }
                binds[index].buffer_type = MYSQL_TYPE_BLOB
                let slot = Self.slotSize(data.count)
                binds[index].buffer = pointer
                binds[index].buffer_length = UInt(slot)
                lengths[index] = UInt(data.count)
                binds[index].length = lengths + index
                offset += slot
            }
        }
        return binds
    }

    /// Gives back buffers grown past ``keptBytes`` for a large value or past ``keptBinds``
    /// parameters (after their statement ran: Connector/C has sent them), so that one
    /// large statement does not stay in memory.
    func releaseLargeBuffers() {
        if byteCapacity > Self.keptBytes {
            bytes.deallocate()
            byteCapacity = 512
            bytes = .allocate(byteCount: byteCapacity, alignment: 8)
        }
        if bindCapacity > Self.keptBinds { resize(8) }
    }

    /// New zeroed binds and lengths for `capacity` parameters.
    private func resize(_ capacity: Int) {
        binds.deallocate()
        lengths.deallocate()
        bindCapacity = capacity
        binds = Self.zeroedBinds(bindCapacity)
        lengths = .allocate(capacity: bindCapacity)
    }

    /// The bytes a text or blob of `count` bytes takes in the buffer: a size class (16, 32,
    /// 64, … bytes up to 4 KiB; beyond, the count rounded up to 8), so that the values
    /// after it keep their places while its length varies within the class, and the binds
    /// stay the same from one execution to the next (only the lengths change).
    @inline(__always)
    static func slotSize(_ count: Int) -> Int {
        guard count > 16 else { return 16 }
        guard count <= 4096 else { return (count + 7) & ~7 }
        return 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
    }

    deinit {
        binds.deallocate()
        lengths.deallocate()
        bytes.deallocate()
    }
}

/// The parameters of a run of executions of one statement, sent as one bulk execution
/// (`STMT_ATTR_ARRAY_SIZE`: MariaDB's `COM_STMT_BULK_EXECUTE`, one round trip for the run):
/// Connector/C's column-wise arrays, one per parameter: the values (`LONGLONG`s,
/// `DOUBLE`s, or pointers to the bytes of strings and blobs, with their lengths) and an
/// indicator per row (`STMT_INDICATOR_NULL` for a `NULL`). Every row of a column binds as
/// the same type, so the rows of a run hold values of one kind per parameter (`NULL`s
/// aside): ``Kind/merge(_:into:)`` decides where a run ends.
final class MariaDBBulkBinding {
    /// What a parameter binds as in every row of a run (`NULL`s fit any).
    enum Kind: Equatable {
        case integer, real, text, blob

        /// The kind `value` binds as; `nil` for a `NULL`.
        static func of(_ value: DatabaseValue) -> Kind? {
            switch value {
            case .null: nil
            case .integer: .integer
            case .real: .real
            case .text: .text
            case .blob: .blob
            }
        }

        /// Adds `values` (in the parameters' order) to the kinds of a run's parameters;
        /// `false`, leaving `kinds` as they were, when a value's kind differs from its
        /// parameter's so far.
        static func merge(_ values: [DatabaseValue], into kinds: inout [Kind?]) -> Bool {
            guard kinds.count == values.count else { return false }
            for (index, value) in values.enumerated() {
                if let kind = of(value), let known = kinds[index], known != kind { return false }
            }
            for (index, value) in values.enumerated() where kinds[index] == nil {
                kinds[index] = of(value)
            }
            return true
        }
    }

    /// The bytes a row adds to the bulk packet, about: the values' bytes and an indicator
    /// per parameter.
    static func packetBytes(of values: [DatabaseValue]) -> Int {
        values.reduce(0) { total, value in
            switch value {
            case .null: total + 1
            case .integer, .real: total + 9
            case .text(let text): total + 10 + text.utf8.count
            case .blob(let data): total + 10 + data.count
            }
        }
    }

    /// The binds, one per parameter, pointing into this binding's arrays: valid while it lives.
    let binds: UnsafeMutablePointer<MYSQL_BIND>
    let rowCount: Int
    private var allocations = [UnsafeMutableRawPointer]()

    /// The arrays for `rows` (each in the parameters' order, of `kinds`:
    /// what ``Kind/merge(_:into:)`` made of them; a parameter `NULL` in every row binds as a string).
    init(rows: [[DatabaseValue]], kinds: [Kind?]) {
        let parameterCount = kinds.count
        rowCount = rows.count
        binds = .allocate(capacity: max(1, parameterCount))
        binds.initialize(repeating: MYSQL_BIND(), count: max(1, parameterCount))
        for parameter in 0..<parameterCount {
            let indicators = allocate(rowCount, of: CChar.self)
            for row in 0..<rowCount {
                if case .null = rows[row][parameter] {
                    indicators[row] = CChar(truncatingIfNeeded: STMT_INDICATOR_NULL.rawValue)
                } else {
                    indicators[row] = CChar(truncatingIfNeeded: STMT_INDICATOR_NONE.rawValue)
                }
            }
            binds[parameter].u.indicator = indicators
            switch kinds[parameter] {
            case .integer:
                binds[parameter].buffer_type = MYSQL_TYPE_LONGLONG
                binds[parameter].buffer = numbers(rows, parameter) { value -> Int64 in
                    if case .integer(let integer) = value { return integer }
                    return 0
                }
            case .real:
                binds[parameter].buffer_type = MYSQL_TYPE_DOUBLE
                binds[parameter].buffer = numbers(rows, parameter) { value -> Double in
                    if case .real(let real) = value { return real }
                    return 0
                }
            case .text, .blob, nil:
                // The bytes of every row one after the other, a pointer and a length per row.
                var byteCount = 0
                for row in 0..<rowCount {
                    switch rows[row][parameter] {
                    case .text(let text): byteCount += text.utf8.count
                    case .blob(let data): byteCount += data.count
                    default: break
                    }
                }
                let bytes = allocate(max(1, byteCount), of: UInt8.self)
                let pointers = allocate(rowCount, of: UnsafeMutablePointer<UInt8>?.self)
                let lengths = allocate(rowCount, of: UInt.self)
                var offset = 0
                for row in 0..<rowCount {
                    pointers[row] = nil
                    lengths[row] = 0
                    switch rows[row][parameter] {
                    case .text(var text):
                        let length = text.utf8.count
                        text.withUTF8 { utf8 in
                            if let base = utf8.baseAddress { (bytes + offset).update(from: base, count: length) }
                        }
                        pointers[row] = bytes + offset
                        lengths[row] = UInt(length)
                        offset += length
                    case .blob(let data):
                        data.withUnsafeBytes { source in
                            if let base = source.baseAddress {
                                UnsafeMutableRawPointer(bytes + offset).copyMemory(from: base, byteCount: source.count)
                            }
                        }
                        pointers[row] = bytes + offset
                        lengths[row] = UInt(data.count)
                        offset += data.count
                    default: break
                    }
                }
                binds[parameter].buffer_type = kinds[parameter] == .blob ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING
                binds[parameter].buffer = UnsafeMutableRawPointer(pointers)
                binds[parameter].length = lengths
            }
        }
    }

    /// The array of `parameter`'s values in `rows` as `number` reads them (0 for a `NULL`).
    private func numbers<T>(
        _ rows: [[DatabaseValue]], _ parameter: Int, _ number: (DatabaseValue) -> T
    ) -> UnsafeMutableRawPointer {
        let values = allocate(rows.count, of: T.self)
        for row in rows.indices { values[row] = number(rows[row][parameter]) }
        return UnsafeMutableRawPointer(values)
    }

    private func allocate<T>(_ count: Int, of type: T.Type) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(1, count))
        allocations.append(UnsafeMutableRawPointer(pointer))
        return pointer
    }

    deinit {
        for allocation in allocations { allocation.deallocate() }
        binds.deallocate()
    }
}

/// How a result column is read from the binary protocol into SQLite's storage classes.
///
/// - integers of every width (`TINYINT` … `BIGINT`, `YEAR`), signed: `INTEGER`; unsigned:
///   `INTEGER` up to `Int64.max`, and the exact decimal digits as `TEXT` above it (never
///   wrapped: an `Int64` read of such a value fails as a conversion error; `UInt64`,
///   `Decimal` and `String` read it);
/// - `DOUBLE`: `REAL`; `FLOAT`: `REAL`, the float widened (0.1 reads 0.10000000149011612);
/// - `DECIMAL`: its exact digits as `TEXT` (a `Decimal` reads them losslessly);
/// - `DATETIME`, `TIMESTAMP`: `TEXT` `YYYY-MM-DD HH:MM:SS[.ffffff]` (the column's own
///   fraction digits), `DATE`: `YYYY-MM-DD`, `TIME`: `[-]HH:MM:SS[.ffffff]`: the forms a
///   `Date` decodes (a session's time zone is UTC, so `TIMESTAMP`s read in UTC);
/// - `BIT`: `INTEGER` (its bits, big-endian; a `BIT(64)` above `Int64.max` as its digits);
/// - text types, `ENUM`, `SET`, `JSON` (MariaDB's `LONGTEXT`): `TEXT`;
/// - binary types (`BLOB`, `BINARY`, `VARBINARY`, the binary character set), `GEOMETRY`: `BLOB`.
enum MariaDBColumnKind: Equatable {
    case signed, unsigned, real, float, decimal
    case dateTime(digits: Int)
    case date
    case time(digits: Int)
    case bit, text, bytes, null

    init(_ field: MYSQL_FIELD) {
        let isUnsigned = field.flags & swiftdal_mariadb_unsigned_flag != 0
        switch field.type {
        case MYSQL_TYPE_TINY, MYSQL_TYPE_SHORT, MYSQL_TYPE_INT24, MYSQL_TYPE_LONG, MYSQL_TYPE_LONGLONG, MYSQL_TYPE_YEAR:
            self = isUnsigned ? .unsigned : .signed
        case MYSQL_TYPE_DOUBLE: self = .real
        case MYSQL_TYPE_FLOAT: self = .float
        case MYSQL_TYPE_DECIMAL, MYSQL_TYPE_NEWDECIMAL: self = .decimal
        case MYSQL_TYPE_DATETIME, MYSQL_TYPE_TIMESTAMP, MYSQL_TYPE_DATETIME2, MYSQL_TYPE_TIMESTAMP2:
            self = .dateTime(digits: Int(min(field.decimals, 6)))
        case MYSQL_TYPE_DATE, MYSQL_TYPE_NEWDATE: self = .date
        case MYSQL_TYPE_TIME, MYSQL_TYPE_TIME2: self = .time(digits: Int(min(field.decimals, 6)))
        case MYSQL_TYPE_BIT: self = .bit
        case MYSQL_TYPE_NULL: self = .null
        case MYSQL_TYPE_GEOMETRY: self = .bytes
        default:
            // Strings and blobs: the binary character set (63) marks bytes.
            self = field.charsetnr == 63 ? .bytes : .text
        }
    }
}

/// A result's columns bound for `mysql_stmt_fetch`: fixed-size values (integers, doubles,
/// `MYSQL_TIME`) land in a slot per column; variable-length ones in a slot too when they
/// fit (`slotSize` bytes), else the fetch reports their length and they are read whole
/// with `mysql_stmt_fetch_column`. A prepared statement keeps its binding from one
/// execution to the next while its result's columns stay the same (``matches(_:)``).
final class MariaDBResultBinding {
    let layout: ColumnLayout
    let kinds: [MariaDBColumnKind]
    /// What ``matches(_:)`` compares, packed in one buffer that it reads without Swift's
    /// string and array machinery (it runs at every execution): per column, what its kind
    /// is read from (`swiftdal_mariadb_field_signature`) and its name's length, two `UInt64`s; then the
    /// names' bytes, one after the other. A column without a name has the length
    /// `UInt64.max` (it never matches: the binding is made again).
    private let identity: UnsafeMutableRawPointer
    let count: Int
    let binds: UnsafeMutablePointer<MYSQL_BIND>
    private let isNull: UnsafeMutablePointer<CChar>
    private let lengths: UnsafeMutablePointer<UInt>
    private let errors: UnsafeMutablePointer<CChar>
    private let slots: UnsafeMutableRawPointer
    private static let slotSize = 128
    /// The values longer than their slot of the row current when its result was buffered
    /// part way (``keepLongValues(of:)``), by column; `nil` when there are none.
    private var keptLongValues: [Int: [UInt8]]?

    /// The binding of the result `statement` just produced (its metadata).
    init?(_ statement: UnsafeMutablePointer<MYSQL_STMT>) {
        let count = Int(statement.pointee.field_count)
        guard count > 0, let fields = Self.currentFields(of: statement) else { return nil }
        self.count = count
        var names = [String]()
        var kinds = [MariaDBColumnKind]()
        var nameBytes = 0
        for index in 0..<count {
            let field = fields + index
            names.append(field.pointee.name.map { String(cString: $0) } ?? "column\(index)")
            kinds.append(MariaDBColumnKind(field.pointee))
            if field.pointee.name != nil { nameBytes += Int(field.pointee.name_length) }
        }
        identity = .allocate(byteCount: count * 16 + nameBytes, alignment: 8)
        var name = identity + count * 16
        for index in 0..<count {
            let field = fields + index
            let entry = identity + index * 16
            entry.storeBytes(of: swiftdal_mariadb_field_signature(field), as: UInt64.self)
            guard let source = field.pointee.name else {
                entry.storeBytes(of: UInt64.max, toByteOffset: 8, as: UInt64.self)
                continue
            }
            let length = Int(field.pointee.name_length)
            entry.storeBytes(of: UInt64(length), toByteOffset: 8, as: UInt64.self)
            name.copyMemory(from: source, byteCount: length)
            name += length
        }
        layout = ColumnLayout(names: names)
        self.kinds = kinds
        let capacity = max(1, count)
        binds = .allocate(capacity: capacity)
        binds.initialize(repeating: MYSQL_BIND(), count: capacity)
        isNull = .allocate(capacity: capacity)
        isNull.initialize(repeating: 0, count: capacity)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0, count: capacity)
        errors = .allocate(capacity: capacity)
        errors.initialize(repeating: 0, count: capacity)
        slots = .allocate(byteCount: capacity * Self.slotSize, alignment: 16)
        slots.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * Self.slotSize)
        for (index, kind) in kinds.enumerated() {
            binds[index].is_null = isNull + index
            binds[index].length = lengths + index
            binds[index].error = errors + index
            let slot = slots + index * Self.slotSize
            switch kind {
            case .signed, .unsigned:
                binds[index].buffer_type = MYSQL_TYPE_LONGLONG
                binds[index].is_unsigned = kind.isUnsignedKind ? 1 : 0
                binds[index].buffer = slot
                binds[index].buffer_length = 8
            case .real, .float:
                binds[index].buffer_type = MYSQL_TYPE_DOUBLE
                binds[index].buffer = slot
                binds[index].buffer_length = 8
            case .dateTime, .date, .time:
                binds[index].buffer_type = MYSQL_TYPE_DATETIME
                if case .date = kind { binds[index].buffer_type = MYSQL_TYPE_DATE }
                if case .time = kind { binds[index].buffer_type = MYSQL_TYPE_TIME }
                binds[index].buffer = slot
                binds[index].buffer_length = UInt(MemoryLayout<MYSQL_TIME>.size)
            case .bit, .bytes:
                binds[index].buffer_type = MYSQL_TYPE_BLOB
                binds[index].buffer = slot
                binds[index].buffer_length = UInt(Self.slotSize)
            case .decimal, .text:
                binds[index].buffer_type = MYSQL_TYPE_STRING
                binds[index].buffer = slot
                binds[index].buffer_length = UInt(Self.slotSize)
            case .null:
                binds[index].buffer_type = MYSQL_TYPE_NULL
            }
        }
    }

    /// Whether the result `statement` just produced has this binding's columns (names and
    /// kinds): a table altered since the statement was prepared gives another.
    func matches(_ statement: UnsafeMutablePointer<MYSQL_STMT>) -> Bool {
        // The statement's own column definitions (what `mysql_stmt_result_metadata` would
        // copy into a result of its own), read in place.
        guard Int(statement.pointee.field_count) == count else { return false }
        guard let fields = Self.currentFields(of: statement) else { return count == 0 }
        return swiftdal_mariadb_fields_match(fields, count, identity) != 0
    }

    /// The columns of the result `statement` just produced as the server last described
    /// them: the connection's (`mysql->fields`: sent with this execution, or copied from
    /// the statement's when the server sent none). After a column was renamed, Connector/C
    /// copies the new types into the statement's own definitions but not the new names.
    private static func currentFields(
        of statement: UnsafeMutablePointer<MYSQL_STMT>
    ) -> UnsafeMutablePointer<MYSQL_FIELD>? {
        guard let mysql = statement.pointee.mysql, mysql.pointee.field_count == statement.pointee.field_count,
            let fields = mysql.pointee.fields
        else { return statement.pointee.fields }
        return fields
    }

    deinit {
        identity.deallocate()
        binds.deallocate()
        isNull.deallocate()
        lengths.deallocate()
        errors.deallocate()
        slots.deallocate()
    }

    /// Appends the values of the row the last `mysql_stmt_fetch` of `statement` read.
    func appendRow(of statement: UnsafeMutablePointer<MYSQL_STMT>, to values: inout [DatabaseValue]) throws {
        for index in 0..<count { values.append(try value(at: index, of: statement)) }
    }

    /// The value of column `index` (in range) of the row the last `mysql_stmt_fetch` of
    /// `statement` read, as SQLite's storage classes (the type's mapping).
    func value(at index: Int, of statement: UnsafeMutablePointer<MYSQL_STMT>) throws -> DatabaseValue {
        guard isNull[index] == 0 else { return .null }
        let slot = UnsafeRawPointer(slots + index * Self.slotSize)
        let kind = kinds[index]
        switch kind {
        case .signed:
            return .integer(slot.load(as: Int64.self))
        case .unsigned:
            let value = slot.load(as: UInt64.self)
            return value <= UInt64(Int64.max) ? .integer(Int64(value)) : .text(String(value))
        case .real, .float:
            let double = slot.load(as: Double.self)
            return double.isNaN ? .null : .real(double)
        case .dateTime(let digits):
            return .text(Self.text(of: slot.load(as: MYSQL_TIME.self), date: true, time: true, digits: digits))
        case .date:
            return .text(Self.text(of: slot.load(as: MYSQL_TIME.self), date: true, time: false, digits: 0))
        case .time(let digits):
            return .text(Self.text(of: slot.load(as: MYSQL_TIME.self), date: false, time: true, digits: digits))
        case .null:
            return .null
        case .decimal, .text, .bytes, .bit:
            let length = Int(lengths[index])
            if length <= Self.slotSize {
                // Whole in its slot: read from there, no second call.
                let bytes = UnsafeBufferPointer(start: slot.assumingMemoryBound(to: UInt8.self), count: length)
                return Self.value(of: bytes, kind: kind)
            }
            let bytes = try keptLongValues?[index] ?? variableBytes(statement, index)
            return bytes.withUnsafeBufferPointer { Self.value(of: $0, kind: kind) }
        }
    }

    // The typed reads of the current row (``MariaDBFetchedRow``): the common cases read
    // straight from the slots; anything else is `.other`, for ``value(at:of:)`` to convert.

    /// Column `index` when it is a signed integer (or an unsigned one that fits).
    @inline(__always)
    func integer(at index: Int) -> TypedColumn<Int64> {
        guard isNull[index] == 0 else { return .null }
        let slot = UnsafeRawPointer(slots + index * Self.slotSize)
        switch kinds[index] {
        case .signed: return .value(slot.load(as: Int64.self))
        case .unsigned:
            let value = slot.load(as: UInt64.self)
            return value <= UInt64(Int64.max) ? .value(Int64(value)) : .other
        default: return .other
        }
    }

    /// Column `index` when it is a `DOUBLE` or `FLOAT` (NaN reads as `NULL`, as ``value(at:of:)``).
    @inline(__always)
    func real(at index: Int) -> TypedColumn<Double> {
        guard isNull[index] == 0 else { return .null }
        switch kinds[index] {
        case .real, .float:
            let double = UnsafeRawPointer(slots + index * Self.slotSize).load(as: Double.self)
            return double.isNaN ? .null : .value(double)
        default: return .other
        }
    }

    /// Column `index` when it is text held whole in its slot, valid UTF-8.
    @inline(__always)
    func text(at index: Int) -> TypedColumn<String> {
        guard isNull[index] == 0 else { return .null }
        guard case .text = kinds[index] else { return .other }
        let length = Int(lengths[index])
        guard length <= Self.slotSize else { return .other }
        let start = (slots + index * Self.slotSize).assumingMemoryBound(to: UInt8.self)
        // Connector/C ends the copy with a NUL when the slot has room: then the C-string
        // read validates in one pass (text with a NUL inside reads shorter than `length`,
        // and takes the byte-count path).
        if length < Self.slotSize, start[length] == 0 {
            return UTF8Text.string(nulTerminated: start, count: length).map { .value($0) } ?? .other
        }
        return UTF8Text.string(UnsafeBufferPointer(start: start, count: length)).map { .value($0) } ?? .other
    }

    /// The value of a variable-length column of `kind` holding `bytes`: text (when valid
    /// UTF-8; else bytes), bytes, or a `BIT` value (at most 64 bits: above `Int64.max`,
    /// its digits).
    private static func value(of bytes: UnsafeBufferPointer<UInt8>, kind: MariaDBColumnKind) -> DatabaseValue {
        switch kind {
        case .bytes: return .blob(Data(bytes))
        case .bit:
            let bits = bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return bits <= UInt64(Int64.max) ? .integer(Int64(bits)) : .text(String(bits))
        default:
            return UTF8Text.string(bytes).map { .text($0) } ?? .blob(Data(bytes))
        }
    }

    /// Reads the values of the current row that are longer than their slot now, while
    /// Connector/C still holds them: a result read off the wire is about to be buffered
    /// part way (another statement is to be sent), which replaces the read buffer the
    /// current row's long values are read from (`mysql_stmt_fetch_column`). Kept until
    /// ``forgetKeptValues()`` (the next row).
    func keepLongValues(of statement: UnsafeMutablePointer<MYSQL_STMT>) throws {
        var kept = [Int: [UInt8]]()
        for index in 0..<count where isNull[index] == 0 && Int(lengths[index]) > Self.slotSize {
            switch kinds[index] {
            case .decimal, .text, .bytes, .bit: kept[index] = try variableBytes(statement, index)
            default: continue
            }
        }
        keptLongValues = kept.isEmpty ? nil : kept
    }

    /// Forgets the values ``keepLongValues(of:)`` kept: a new row is current.
    func forgetKeptValues() { keptLongValues = nil }

    /// The bytes of variable-length column `index` of the current row.
    private func variableBytes(_ statement: UnsafeMutablePointer<MYSQL_STMT>, _ index: Int) throws -> [UInt8] {
        let length = Int(lengths[index])
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: length)
        var got: UInt = 0
        var null: CChar = 0
        let code = bytes.withUnsafeMutableBytes { buffer -> Int32 in
            var bind = MYSQL_BIND()
            bind.buffer_type = binds[index].buffer_type
            bind.buffer = buffer.baseAddress
            bind.buffer_length = UInt(length)
            return withUnsafeMutablePointer(to: &got) { got in
                withUnsafeMutablePointer(to: &null) { null in
                    bind.length = got
                    bind.is_null = null
                    return mysql_stmt_fetch_column(statement, &bind, UInt32(index), 0)
                }
            }
        }
        guard code == 0 else {
            throw MariaDBError(
                code: Int(mysql_stmt_errno(statement)), sqlState: String(cString: mysql_stmt_sqlstate(statement)),
                message: String(cString: mysql_stmt_error(statement)))
        }
        return bytes
    }

    /// `YYYY-MM-DD`, `HH:MM:SS[.f…]` (hours may pass 24, negative with a `-`) or both
    /// separated by a space, with `digits` fraction digits.
    static func text(of time: MYSQL_TIME, date: Bool, time hasTime: Bool, digits: Int) -> String {
        func padded(_ value: UInt, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        var text = ""
        if date {
            text = padded(UInt(time.year), 4) + "-" + padded(UInt(time.month), 2) + "-" + padded(UInt(time.day), 2)
        }
        if hasTime {
            if date { text += " " } else if time.neg != 0 { text += "-" }
            text += padded(UInt(time.hour), 2) + ":" + padded(UInt(time.minute), 2) + ":" + padded(UInt(time.second), 2)
            if digits > 0 {
                var fraction = UInt(time.second_part)
                for _ in digits..<6 { fraction /= 10 }
                text += "." + padded(fraction, digits)
            }
        }
        return text
    }
}

extension MariaDBColumnKind {
    fileprivate var isUnsignedKind: Bool {
        if case .unsigned = self { return true }
        return false
    }
}
