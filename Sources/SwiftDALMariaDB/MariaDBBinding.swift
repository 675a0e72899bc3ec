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
/// (`STMT_ATTR_ARRAY_SIZE`: MariaDB's `COM_STMT_BULK_EXECUTE`, one round trip for the run),
/// appended one row at a time straight into Connector/C's column-wise arrays: per
/// parameter the values (`LONGLONG`s, `DOUBLE`s, or pointers to the bytes of strings and
/// blobs, with their lengths) and an indicator per row (`STMT_INDICATOR_NULL` for a `NULL`).
/// A row's values are read in place and copied once (no array of them is kept). Every row
/// of a column binds as the same type, so the rows of a run hold values of one kind per
/// parameter (`NULL`s aside): ``append(_:)`` refuses a row that does not fit, and the run
/// ends there; ``removeAll()`` empties it for the next run. (Replacing an array of each row's values, its kinds and byte counts merged
/// at each row and the column arrays filled from them at the end: callgrind, W1B on
/// MariaDB, 88.1M instructions → 85.7M.)
final class MariaDBBulkRows {
    /// What a parameter binds as in every row of a run (`NULL`s fit any).
    enum Kind: Equatable {
        case integer, real, text, blob
    }

    /// The parameters of a row.
    let width: Int
    /// The most rows a run holds.
    let limit: Int
    /// The rows the arrays have room for: a few at first, doubled as rows come, up to
    /// ``limit`` (a batch whose runs stay short allocates little).
    private var capacity: Int
    /// The most bytes of values a run sends (about: the values' bytes and an indicator per
    /// value); a row larger on its own makes a run alone.
    let byteLimit: Int
    /// The rows appended.
    private(set) var count = 0
    private var bytes = 0
    private let kinds: UnsafeMutablePointer<Kind?>
    private let setByTheRow: UnsafeMutablePointer<Bool>
    /// Per parameter, `capacity` slots each (the parameter's at `parameter * capacity`).
    private var indicators: UnsafeMutablePointer<CChar>
    private var numbers: UnsafeMutablePointer<UInt64>
    private var offsets: UnsafeMutablePointer<Int>
    private var pointers: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    private var lengths: UnsafeMutablePointer<UInt>
    /// The bytes of the texts and blobs, one after the other (their places: `offsets`).
    private var arena: UnsafeMutablePointer<UInt8>
    private var arenaCapacity: Int
    private var arenaUsed = 0
    private let binds: UnsafeMutablePointer<MYSQL_BIND>

    /// Arrays for runs of up to `limit` rows of `width` values.
    init(width: Int, limit: Int, byteLimit: Int) {
        self.width = width
        self.limit = max(1, limit)
        capacity = min(self.limit, 16)
        self.byteLimit = byteLimit
        let slots = max(1, width) * capacity
        kinds = .allocate(capacity: max(1, width))
        kinds.initialize(repeating: nil, count: max(1, width))
        setByTheRow = .allocate(capacity: max(1, width))
        setByTheRow.initialize(repeating: false, count: max(1, width))
        indicators = .allocate(capacity: slots)
        numbers = .allocate(capacity: slots)
        offsets = .allocate(capacity: slots)
        pointers = .allocate(capacity: slots)
        lengths = .allocate(capacity: slots)
        arenaCapacity = 4096
        arena = .allocate(capacity: arenaCapacity)
        binds = .allocate(capacity: max(1, width))
        binds.initialize(repeating: MYSQL_BIND(), count: max(1, width))
    }

    /// Appends a row of `values` (``width`` of them, in the parameters' order); `false`,
    /// leaving the run as it was, when it does not fit: the run is full, a value's kind
    /// differs from its parameter's in the run, or the run's bytes would pass
    /// ``byteLimit`` (a first row always fits).
    func append(_ values: UnsafeBufferPointer<DatabaseValue>) -> Bool {
        guard values.count == width, count < limit, let first = values.baseAddress else { return false }
        if count == capacity { grow() }
        let row = count
        let arenaStart = arenaUsed
        var added = 0
        for parameter in 0..<width {
            let slot = parameter * capacity + row
            let kind: Kind
            switch (first + parameter).pointee {
            case .null:
                // (Every slot of the row written: Connector/C reads no other, but none is left
                // uninitialized for it.)
                indicators[slot] = CChar(truncatingIfNeeded: STMT_INDICATOR_NULL.rawValue)
                numbers[slot] = 0
                offsets[slot] = 0
                lengths[slot] = 0
                added += 1
                continue
            case .integer(let integer):
                kind = .integer
                numbers[slot] = UInt64(bitPattern: integer)
                added += 9
            case .real(let real):
                kind = .real
                numbers[slot] = real.bitPattern
                added += 9
            case .text(let text):
                kind = .text
                // Read in place (`withUTF8` needs a `var`: a copy of the string).
                let length: Int
                if let copied = text.utf8.withContiguousStorageIfAvailable({ copyIn($0) }) {
                    length = copied
                } else {
                    var contiguous = text
                    length = contiguous.withUTF8 { copyIn($0) }
                }
                offsets[slot] = arenaUsed - length
                lengths[slot] = UInt(length)
                added += 10 + length
            case .blob(let data):
                kind = .blob
                let length = data.withUnsafeBytes { copyIn($0.assumingMemoryBound(to: UInt8.self)) }
                offsets[slot] = arenaUsed - length
                lengths[slot] = UInt(length)
                added += 10 + length
            }
            indicators[slot] = CChar(truncatingIfNeeded: STMT_INDICATOR_NONE.rawValue)
            if let known = kinds[parameter] {
                if known != kind {
                    undo(upTo: parameter, arenaStart)
                    return false
                }
            } else {
                kinds[parameter] = kind
                setByTheRow[parameter] = true
            }
        }
        if row > 0 && bytes + added > byteLimit {
            undo(upTo: width, arenaStart)
            return false
        }
        for parameter in 0..<width { setByTheRow[parameter] = false }
        bytes += added
        count += 1
        return true
    }

    /// Doubles the room for rows (up to ``limit``), the rows appended moved to their new
    /// places. (`pointers` holds nothing yet: ``bind()`` fills it.)
    private func grow() {
        let grown = min(capacity * 2, limit)
        let slots = max(1, width) * grown
        let movedIndicators = UnsafeMutablePointer<CChar>.allocate(capacity: slots)
        let movedNumbers = UnsafeMutablePointer<UInt64>.allocate(capacity: slots)
        let movedOffsets = UnsafeMutablePointer<Int>.allocate(capacity: slots)
        let movedLengths = UnsafeMutablePointer<UInt>.allocate(capacity: slots)
        for parameter in 0..<width {
            let from = parameter * capacity
            let to = parameter * grown
            (movedIndicators + to).update(from: indicators + from, count: count)
            (movedNumbers + to).update(from: numbers + from, count: count)
            (movedOffsets + to).update(from: offsets + from, count: count)
            (movedLengths + to).update(from: lengths + from, count: count)
        }
        indicators.deallocate()
        numbers.deallocate()
        offsets.deallocate()
        lengths.deallocate()
        pointers.deallocate()
        indicators = movedIndicators
        numbers = movedNumbers
        offsets = movedOffsets
        lengths = movedLengths
        pointers = .allocate(capacity: slots)
        capacity = grown
    }

    /// Copies `bytes` to the arena's end; returns their count.
    private func copyIn(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        if arenaUsed + bytes.count > arenaCapacity {
            var grown = arenaCapacity * 2
            while arenaUsed + bytes.count > grown { grown *= 2 }
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            moved.update(from: arena, count: arenaUsed)
            arena.deallocate()
            arena = moved
            arenaCapacity = grown
        }
        if let source = bytes.baseAddress { (arena + arenaUsed).update(from: source, count: bytes.count) }
        arenaUsed += bytes.count
        return bytes.count
    }

    /// Forgets what the refused row wrote: the kinds it set (parameters before `end`) and
    /// its bytes.
    private func undo(upTo end: Int, _ arenaStart: Int) {
        for parameter in 0..<end where setByTheRow[parameter] {
            kinds[parameter] = nil
            setByTheRow[parameter] = false
        }
        arenaUsed = arenaStart
    }

    /// Empties the run, its arrays kept for the next one.
    func removeAll() {
        count = 0
        bytes = 0
        arenaUsed = 0
        for parameter in 0..<width { kinds[parameter] = nil }
    }

    /// The binds of the run's rows, one per parameter, pointing into this object's
    /// arrays: valid until it changes (a parameter `NULL` in every row binds as a string).
    func bind() -> UnsafeMutablePointer<MYSQL_BIND> {
        for parameter in 0..<width {
            let column = parameter * capacity
            binds[parameter].u.indicator = indicators + column
            switch kinds[parameter] {
            case .integer:
                binds[parameter].buffer_type = MYSQL_TYPE_LONGLONG
                binds[parameter].buffer = UnsafeMutableRawPointer(numbers + column)
                binds[parameter].length = nil
            case .real:
                binds[parameter].buffer_type = MYSQL_TYPE_DOUBLE
                binds[parameter].buffer = UnsafeMutableRawPointer(numbers + column)
                binds[parameter].length = nil
            case .text, .blob, nil:
                for row in 0..<count {
                    let slot = column + row
                    pointers[slot] =
                        indicators[slot] == CChar(truncatingIfNeeded: STMT_INDICATOR_NULL.rawValue)
                        ? nil : arena + offsets[slot]
                }
                binds[parameter].buffer_type = kinds[parameter] == .blob ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING
                binds[parameter].buffer = UnsafeMutableRawPointer(pointers + column)
                binds[parameter].length = lengths + column
            }
        }
        return binds
    }

    deinit {
        kinds.deallocate()
        setByTheRow.deallocate()
        indicators.deallocate()
        numbers.deallocate()
        offsets.deallocate()
        pointers.deallocate()
        lengths.deallocate()
        arena.deallocate()
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
