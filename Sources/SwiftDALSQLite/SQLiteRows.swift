internal import CSwiftDALSQLite
import Foundation
import SwiftDALConnection
import Synchronization

/// The columns of a SQLite statement's current row, as ``RowView`` reads them (the
/// statement's ``EngineRows``). An object apart from its ``Statement``, which it outlives
/// while views of its rows are kept: the statement's `deinit` invalidates it before
/// finalizing the handle, so that such a view throws ``DALError/Code/accessEnded`` instead
/// of reading a finalized statement.
final class SQLiteRows: EngineRows {
    let handle: OpaquePointer
    let sql: String
    /// Counts steps and resets: a ``RowView`` remembers the value of its row and reads
    /// only while it is unchanged. Written by the thread holding the connection, and, as
    /// the statement is finalized, `invalidated` by whichever thread releases it (a
    /// safeguard: every path resets the statement, which moves the counter, before that).
    private let rowCounter = Atomic<UInt64>(0)
    private static let invalidated = UInt64.max
    private var cachedLayout: ColumnLayout?
    /// The number of result columns, read once (and again after SQLite re-prepares the
    /// statement: a schema change can change the columns of `SELECT *`).
    private var resultColumnCount: Int
    /// Where the next lookup by name probably lands: the column after the previous one
    /// (decoding by name asks for the columns in the same order on every row).
    private var nextNameHint = 0

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        resultColumnCount = Int(sqlite3_column_count(handle))
    }

    /// The token of the current row: a ``RowView`` made now reads it.
    @inline(__always)
    var currentRow: Int { Int(truncatingIfNeeded: rowCounter.load(ordering: .relaxed)) }

    /// Moves to the next row token (the holder is the only writer: no read-modify-write).
    @inline(__always)
    func advance() {
        rowCounter.store(rowCounter.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// After SQLite re-prepared the statement: its columns may have changed.
    func shapeChanged() {
        resultColumnCount = Int(sqlite3_column_count(handle))
        cachedLayout = nil
    }

    /// Called as the statement is finalized: no view reads a row again.
    func invalidate() {
        rowCounter.store(Self.invalidated, ordering: .relaxed)
    }

    /// Throws unless the row a ``RowView`` was made for is still the current row.
    @inline(__always)
    func checkRow(_ row: Int) throws {
        guard rowCounter.load(ordering: .relaxed) == UInt64(truncatingIfNeeded: row) else { throw staleRow() }
    }

    @inline(never)
    private func staleRow() -> DALError { .rowViewLeft(sql: sql) }

    var layout: ColumnLayout {
        if let cachedLayout { return cachedLayout }
        let names = (0..<sqlite3_column_count(handle)).map { index in
            sqlite3_column_name(handle, index).map { String(cString: $0) } ?? "column\(index)"
        }
        let layout = ColumnLayout(names: names)
        cachedLayout = layout
        return layout
    }

    /// A statement's rows are read one at a time: their number is not known.
    var rowCount: Int { 0 }

    /// The 0-based index of the result column `name` (see ``ColumnLayout/index(of:)``),
    /// trying the column after the previous lookup first.
    func columnIndex(named name: String) -> Int? {
        // The hint is checked on the cached layout in place: going through `layout` took a
        // retain and a release of it on every call (one per property of every Codable row).
        let hint = nextNameHint
        if let cachedLayout, cachedLayout.hasUniqueNames, hint < cachedLayout.names.count,
            cachedLayout.names[hint] == name
        {
            nextNameHint = hint + 1
            return hint
        }
        guard let index = layout.index(of: name) else { return nil }
        nextNameHint = index + 1
        return index
    }

    // MARK: EngineRows (`row` is the token of the row the view was made for)

    func value(row: Int, column: Int) throws -> DatabaseValue {
        try checkRow(row)
        return try value(at: column)
    }

    func integerColumn(row: Int, column: Int) throws -> TypedColumn<Int64> {
        try checkRow(row)
        return try integerColumn(at: column)
    }

    func realColumn(row: Int, column: Int) throws -> TypedColumn<Double> {
        try checkRow(row)
        return try realColumn(at: column)
    }

    func textColumn(row: Int, column: Int) throws -> TypedColumn<String> {
        try checkRow(row)
        return try textColumn(at: column)
    }

    func columnIndex(row: Int, named name: String) throws -> Int? {
        try checkRow(row)
        return columnIndex(named: name)
    }

    // MARK: Columns (0-based)

    /// The value of column `index` (0-based) of the current row; throws when the index
    /// is out of range or the text is not valid UTF-8.
    func value(at index: Int) throws -> DatabaseValue {
        let column = try checkedColumn(index)
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(column))
        case SQLITE_FLOAT:
            return .real(sqlite3_value_double(column))
        case SQLITE_TEXT:
            guard let text = sqlite3_value_text(column) else {
                throw SQLiteError(connection: sqlite3_db_handle(handle), code: SQLITE_NOMEM, sql: sql)
            }
            guard let string = UTF8Text.string(nulTerminated: text, count: Int(sqlite3_value_bytes(column)))
            else {
                throw DALError(
                    .conversionFailed,
                    "column \(index) holds TEXT that is not valid UTF-8; read it as a blob (CAST(x AS BLOB))",
                    column: layout.name(at: index), sql: sql)
            }
            return .text(string)
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(column))
            guard count > 0 else { return .blob(Data()) }
            guard let bytes = sqlite3_value_blob(column) else {
                throw SQLiteError(connection: sqlite3_db_handle(handle), code: SQLITE_NOMEM, sql: sql)
            }
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    /// The column as SQLite stores it, after the index check: one column lookup, then the
    /// cheap value accessors (instead of a checked column lookup per accessor).
    /// Connections are opened with SQLITE_OPEN_NOMUTEX and used by one thread at a time,
    /// so the value needs no mutex ("protected" and "unprotected" values are the same
    /// thing in that mode); it is read before the next step, as the column accessors
    /// require.
    ///
    /// Inlined into every typed read (it runs once per column of every row); the errors
    /// are built out of line.
    @inline(__always)
    private func checkedColumn(_ index: Int) throws -> OpaquePointer {
        // `index < resultColumnCount` (an Int32) makes the truncation exact.
        guard index >= 0 && index < resultColumnCount,
            let column = sqlite3_column_value(handle, Int32(truncatingIfNeeded: index))
        else { throw columnFailure(at: index) }
        return column
    }

    /// Why column `index` could not be read: out of range, or SQLite out of memory.
    @inline(never)
    private func columnFailure(at index: Int) -> any Error {
        guard index >= 0 && index < resultColumnCount else { return columnOutOfRange(index, layout) }
        return SQLiteError(connection: sqlite3_db_handle(handle), code: SQLITE_NOMEM, sql: sql)
    }

    /// Column `index` when it holds an INTEGER (the typed fast path of ``RowView``;
    /// every other storage class goes through ``value(at:)`` and the general conversion).
    @inline(__always)
    func integerColumn(at index: Int) throws -> TypedColumn<Int64> {
        try typedColumn(index, holding: SQLITE_INTEGER) { sqlite3_value_int64($0) }
    }

    /// Column `index` when it holds a REAL.
    @inline(__always)
    func realColumn(at index: Int) throws -> TypedColumn<Double> {
        try typedColumn(index, holding: SQLITE_FLOAT) { sqlite3_value_double($0) }
    }

    /// Column `index` when it holds valid UTF-8 TEXT (invalid text is `.other`, so that
    /// the general path throws its error).
    @inline(__always)
    func textColumn(at index: Int) throws -> TypedColumn<String> {
        try typedColumn(index, holding: SQLITE_TEXT) { column in
            guard let text = sqlite3_value_text(column) else { return nil }
            return UTF8Text.string(nulTerminated: text, count: Int(sqlite3_value_bytes(column)))
        }
    }

    /// Column `index` read by `read` when it holds `storageClass` (`.other` when `read`
    /// returns `nil`), `.null` for NULL, `.other` for any other storage class.
    @inline(__always)
    private func typedColumn<Value>(
        _ index: Int, holding storageClass: Int32, _ read: (OpaquePointer) -> Value?
    ) throws -> TypedColumn<Value> {
        let column = try checkedColumn(index)
        switch sqlite3_value_type(column) {
        case storageClass: return read(column).map { .value($0) } ?? .other
        case SQLITE_NULL: return .null
        default: return .other
        }
    }

    /// Copies the current row.
    func copyRow() throws -> Row {
        let count = Int(sqlite3_column_count(handle))
        var values = [DatabaseValue]()
        values.reserveCapacity(count)
        for index in 0..<count {
            values.append(try value(at: index))
        }
        return Row(layout: layout, values: values)
    }
}
