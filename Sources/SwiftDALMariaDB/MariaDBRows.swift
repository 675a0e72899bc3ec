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
