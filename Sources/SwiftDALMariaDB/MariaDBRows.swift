internal import CSwiftDALMariaDB
import Foundation
import SwiftDALConnection

/// The rows of one MariaDB result, already read from the binary protocol into SQLite's
/// storage classes (see ``MariaDBResultBinding`` for the type mapping), held as one flat
/// array. Immutable.
final class MariaDBRows: EngineRows {
    let layout: ColumnLayout
    let rowCount: Int
    private let columnCount: Int
    private let values: [DatabaseValue]

    init(layout: ColumnLayout, columnCount: Int, values: [DatabaseValue]) {
        self.layout = layout
        self.columnCount = columnCount
        self.values = values
        rowCount = columnCount == 0 ? 0 : values.count / columnCount
    }

    @inline(__always)
    private func stored(_ row: Int, _ column: Int) -> DatabaseValue? {
        guard column >= 0, column < columnCount, row >= 0, row < rowCount else { return nil }
        return values[row * columnCount + column]
    }

    func value(row: Int, column: Int) throws -> DatabaseValue {
        guard column >= 0, column < columnCount else {
            throw DALError(
                .invalidColumn,
                "column index \(column) is out of range: the row has \(columnCount) column(s), numbered from 0")
        }
        guard let value = stored(row, column) else { throw DALError(.invalidColumn, "row \(row) is out of range") }
        return value
    }

    func integerColumn(row: Int, column: Int) -> TypedColumn<Int64> {
        switch stored(row, column) {
        case .integer(let value): .value(value)
        case .null: .null
        default: .other
        }
    }

    func realColumn(row: Int, column: Int) -> TypedColumn<Double> {
        switch stored(row, column) {
        case .real(let value): .value(value)
        case .null: .null
        default: .other
        }
    }

    func textColumn(row: Int, column: Int) -> TypedColumn<String> {
        switch stored(row, column) {
        case .text(let value): .value(value)
        case .null: .null
        default: .other
        }
    }
}

/// The row a prepared statement's last `mysql_stmt_fetch` read, read in place from its
/// result binding's slots: nothing of the row is copied, and a column becomes a Swift
/// value only when it is read. One per prepared statement, used by each of its executions
/// (the result is stored first, `mysql_stmt_store_result`, so that the connection can run
/// other statements while its rows are read; a stream's come through a cursor).
///
/// Each fetched row gets a number never given before by this object, carried by the views
/// made for it: a view kept past its row (the next fetch, the result's end) finds
/// `.other` in its typed reads and ``DALError/Code/accessEnded`` in ``value(row:column:)``,
/// never another row's values.
final class MariaDBFetchedRow: EngineRows {
    private let handle: UnsafeMutablePointer<MYSQL_STMT>
    /// The binding of the current result (replaced when the result's columns change).
    private(set) var binding: MariaDBResultBinding
    /// The rows of the current result (0 when not known: a cursor's).
    private(set) var rowCount = 0
    /// The number of the current row; `-1` when none is (between results).
    private var current = -1
    /// The number the next fetched row gets.
    private var next = 0
    /// Whether a result's rows are being read (the statement cannot run again meanwhile).
    private(set) var isReading = false

    init(handle: UnsafeMutablePointer<MYSQL_STMT>, binding: MariaDBResultBinding) {
        self.handle = handle
        self.binding = binding
    }

    var layout: ColumnLayout { binding.layout }

    /// Starts reading a stored result of `rowCount` rows bound by `binding`.
    func begin(_ binding: MariaDBResultBinding, rowCount: Int) {
        if binding !== self.binding { self.binding = binding }
        self.rowCount = rowCount
        isReading = true
    }

    /// Whether the binding keeps long values of the current row (its result was buffered
    /// while the row was current): forgotten when the next row is fetched.
    private var keepsValues = false

    /// Reads the current row's long values into the binding, before its result is
    /// buffered part way (``MariaDBResultBinding/keepLongValues(of:)``).
    func keepLongValues() throws {
        guard current >= 0 else { return }
        try binding.keepLongValues(of: handle)
        keepsValues = true
    }

    /// The number of the row just fetched, now current.
    @inline(__always)
    func advance() -> Int {
        if keepsValues {
            binding.forgetKeptValues()
            keepsValues = false
        }
        current = next
        next += 1
        return current
    }

    /// Ends the reading: no row is current any more.
    func end() {
        current = -1
        isReading = false
    }

    func value(row: Int, column: Int) throws -> DatabaseValue {
        guard column >= 0, column < binding.count else {
            throw DALError(
                .invalidColumn,
                "column index \(column) is out of range: the row has \(binding.count) column(s), numbered from 0")
        }
        guard row == current else { throw DALError.rowViewLeft() }
        return try binding.value(at: column, of: handle)
    }

    @inline(__always)
    private func isCurrent(_ row: Int, _ column: Int) -> Bool {
        row == current && column >= 0 && column < binding.count
    }

    func integerColumn(row: Int, column: Int) -> TypedColumn<Int64> {
        isCurrent(row, column) ? binding.integer(at: column) : .other
    }

    func realColumn(row: Int, column: Int) -> TypedColumn<Double> {
        isCurrent(row, column) ? binding.real(at: column) : .other
    }

    func textColumn(row: Int, column: Int) -> TypedColumn<String> {
        isCurrent(row, column) ? binding.text(at: column) : .other
    }
}
