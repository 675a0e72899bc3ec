import Foundation

/// The column names of a result, shared by all its rows, with a name-to-index map.
@usableFromInline
package final class ColumnLayout: Sendable {
    @usableFromInline package let names: [String]
    private let indexByName: [String: Int]
    private let indexByFoldedName: [String: Int]

    package init(names: [String]) {
        self.names = names
        var exact = [String: Int](minimumCapacity: names.count)
        var folded = [String: Int](minimumCapacity: names.count)
        // The first column of a name wins, as in SQLite; lookups ignore ASCII case.
        for (index, name) in names.enumerated().reversed() {
            exact[name] = index
            folded[name.identifierKey] = index
        }
        indexByName = exact
        indexByFoldedName = folded
        hasUniqueNames = exact.count == names.count
    }

    /// Whether no two columns have exactly the same name (then an exact match anywhere is
    /// the match; otherwise the first one wins).
    package let hasUniqueNames: Bool

    @usableFromInline
    package func index(of name: String) -> Int? {
        // A table-sized row is scanned: comparing short names costs less than hashing one
        // (decoding by name asks for every column of every row).
        if names.count <= 16 {
            let length = name.utf8.count  // stored in the string: filters most names before comparing
            for index in names.indices where names[index].utf8.count == length && names[index] == name {
                return index
            }
        }
        return indexByName[name] ?? indexByFoldedName[name.identifierKey]
    }

    package func name(at index: Int) -> String? { names.indices.contains(index) ? names[index] : nil }
}

/// Decoding shared by ``Row`` and ``RowView``: columns by 0-based index or by name,
/// with errors that name the column and the expected type.
/// (Inlinable, so that `try row[0]` is specialized for the concrete type where it is
/// written: no runtime generic dispatch on the hot path; errors are built out of line.)
@usableFromInline
protocol ColumnDecoding {
    var layout: ColumnLayout { get }
    /// The value of column `index`; throws when `index` is out of range.
    func rawValue(at index: Int) throws -> DatabaseValue
}

extension ColumnDecoding {
    @inlinable
    func decodeColumn<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T {
        let value = try rawValue(at: index)
        guard let decoded = T(databaseValue: value) else {
            throw conversionFailure(value, index: index, layout: layout, type: T.self)
        }
        return decoded
    }

    @inlinable
    func decodeColumn<T: DatabaseValueConvertible>(_ type: T.Type, named name: String) throws -> T {
        guard let index = layout.index(of: name) else { throw unknownColumn(name, layout) }
        return try decodeColumn(type, at: index)
    }
}

@usableFromInline
package func columnOutOfRange(_ index: Int, _ layout: ColumnLayout) -> DALError {
    DALError(
        .invalidColumn,
        "column index \(index) is out of range: the row has \(layout.names.count) column(s), numbered from 0")
}

@usableFromInline
func unknownColumn(_ name: String, _ layout: ColumnLayout) -> DALError {
    DALError(
        .invalidColumn, "the row has no column \(name); its columns are \(layout.names.joined(separator: ", "))",
        column: name)
}

@usableFromInline
func conversionFailure(_ value: DatabaseValue, index: Int, layout: ColumnLayout, type: Any.Type) -> DALError {
    conversionFailure(value, index: index, name: layout.names[index], type: type)
}

/// The error for column `index`, named `name`, whose `value` does not convert to `type`
/// (the value itself left out).
func conversionFailure(
    _ value: DatabaseValue, index: Int, name: String, type: Any.Type, sql: String? = nil
) -> DALError {
    // An optional reads as its wrapped type (`NULL` is never the failure): named so.
    let type = (type as? any WrappingType.Type)?.wrappedType ?? type
    // A number read as text (PostgreSQL's numeric, MariaDB's DECIMAL) that a Decimal
    // cannot hold exactly: say so, rather than "holds TEXT" of a numeric column.
    // PostgreSQL's special values, which no Date and no Double SwiftDAL reads holds.
    if type == Date.self, case .text(let text) = value, text == "infinity" || text == "-infinity" {
        return DALError(
            .conversionFailed,
            "column \(index) (\(name)) holds PostgreSQL's \(text), which no Date holds: read it as a String (or "
                + "compare it in SQL with isfinite)", column: name, sql: sql)
    }
    if type == Double.self || type == Float.self, case .text(let text) = value, text == "NaN" {
        return DALError(
            .conversionFailed,
            "column \(index) (\(name)) holds NaN, which SwiftDAL neither stores nor reads as a number (SQLite "
                + "cannot hold it): read it as a String", column: name, sql: sql)
    }
    if type == Decimal.self, case .text(let text) = value, Double(text) != nil {
        return DALError(
            .conversionFailed,
            "column \(index) (\(name)) holds a number that a Decimal cannot hold exactly (more than 38 significant "
                + "digits, or out of its range): read it as a String, or as a Double where rounding is acceptable",
            column: name, sql: sql)
    }
    return DALError(
        .conversionFailed, "column \(index) (\(name)) holds \(value.storageClass), which does not convert to \(type)",
        column: name, sql: sql)
}

/// `Optional`, whose wrapped type an error names.
private protocol WrappingType {
    static var wrappedType: Any.Type { get }
}

extension Optional: WrappingType {
    fileprivate static var wrappedType: Any.Type { Wrapped.self }
}

/// A copied result row: `Sendable`, independent of any statement, safe to keep.
///
/// Columns are numbered from 0, as SQLite numbers them, and can also be read by name
/// (ASCII case-insensitive).
///
/// For example:
///
/// ```swift
/// let row = try db.fetchOne("SELECT id, name FROM users WHERE id = \(1)")
/// let id: Int64 = try row!.decode(at: 0)
/// let name: String = try row!.decode(named: "name")
/// ```
public struct Row: Sendable, ColumnDecoding, CustomStringConvertible {
    @usableFromInline let layout: ColumnLayout
    /// The values, in column order.
    public let values: [DatabaseValue]

    package init(layout: ColumnLayout, values: [DatabaseValue]) {
        self.layout = layout
        self.values = values
    }

    /// Column names, in order.
    public var columnNames: [String] { layout.names }

    /// The number of columns.
    public var count: Int { values.count }

    @inlinable
    func rawValue(at index: Int) throws -> DatabaseValue {
        guard index >= 0 && index < values.count else { throw columnOutOfRange(index, layout) }
        return values[index]
    }

    /// The raw value of column `index` (0-based); throws when out of range.
    ///
    /// For example, `try row.value(at: 0) == .integer(1)`.
    @inlinable
    public func value(at index: Int) throws -> DatabaseValue {
        try decodeColumn(DatabaseValue.self, at: index)
    }

    /// The raw value of the column `name`; throws when there is no such column.
    ///
    /// For example, `try row.value(named: "email")`.
    @inlinable
    public func value(named name: String) throws -> DatabaseValue {
        try decodeColumn(DatabaseValue.self, named: name)
    }

    /// Column `index` (0-based) converted to `T`; throws an error naming the column and
    /// the type when it does not convert.
    ///
    /// For example, `let age: Int = try row.decode(at: 2)`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws -> T {
        try decodeColumn(type, at: index)
    }

    /// The column `name` converted to `T`.
    ///
    /// For example, `let email: String? = try row.decode(named: "email")`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, named name: String) throws -> T {
        try decodeColumn(type, named: name)
    }

    /// Column `index` (0-based) converted to the type the context expects.
    ///
    /// For example, `let id: Int64 = try row[0]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
        get throws { try decodeColumn(T.self, at: index) }
    }

    /// The column `name` converted to the type the context expects.
    ///
    /// For example, `let name: String = try row["name"]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ name: String) -> T {
        get throws { try decodeColumn(T.self, named: name) }
    }

    /// The columns and their values, as `[id: 1, name: 'Ann']`; a row holds stored values, so log it with care.
    public var description: String {
        "[" + zip(layout.names, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}

/// The current row of a statement being stepped: reads columns straight from the
/// engine's result (SQLite's statement, PostgreSQL's result, MariaDB's bound buffers),
/// without copying the row first.
///
/// A `RowView` is valid only inside the closure that receives it (``Database/forEachRow(_:_:)``,
/// an entity's row mapping); keep a ``Row`` (``copy()``) to hold on to the values.
///
/// For example:
///
/// ```swift
/// try db.forEachRow("SELECT id, name FROM users") { row in
///     let id: Int64 = try row[0]
///     let name: String = try row[1]
/// }
/// ```
public struct RowView: ColumnDecoding {
    /// The result the row is read from (two words: the engine's rows).
    @usableFromInline let result: EngineResult
    /// The row's number in its result, or, for rows read in place, the token of the row
    /// that was current when this view was made: a read checks that it still is, so a
    /// view kept past its closure throws ``DALError/Code/accessEnded`` instead of reading
    /// another row (or another thread's statement). A PostgreSQL result is immutable, so
    /// a kept view still reads its own row.
    @usableFromInline let row: Int

    /// A view of row `row` of an engine's result (its index, or its token for rows read in
    /// place).
    @inlinable @inline(__always)
    package init(result: EngineResult, row: Int) {
        self.result = result
        self.row = row
    }

    /// The rows read, without a retain (``EngineResult/rows``).
    @inlinable @inline(__always)
    var rows: any EngineRows { result.rows }

    @inlinable
    var layout: ColumnLayout { rows.layout }

    /// Throws when this view's row is no longer the statement's current row.
    @inlinable @inline(__always)
    func checkRow() throws {
        try rows.checkRow(row)
    }

    @inlinable
    func rawValue(at index: Int) throws -> DatabaseValue {
        try rows.value(row: row, column: index)
    }

    /// Column `index` when it holds an INTEGER (the typed fast paths of the conversions;
    /// every engine answers from its own typed reads).
    @inlinable
    func integerColumn(at index: Int) throws -> TypedColumn<Int64> {
        try rows.integerColumn(row: row, column: index)
    }

    /// Column `index` when it holds a REAL.
    @inlinable
    func realColumn(at index: Int) throws -> TypedColumn<Double> {
        try rows.realColumn(row: row, column: index)
    }

    /// Column `index` when it holds valid UTF-8 TEXT.
    @inlinable
    func textColumn(at index: Int) throws -> TypedColumn<String> {
        try rows.textColumn(row: row, column: index)
    }

    /// Column names, in order.
    ///
    /// For example, `let names = try row.columnNames`.
    public var columnNames: [String] {
        get throws {
            try checkRow()
            return layout.names
        }
    }

    /// The 0-based index of the column `name` (exact match first, then ASCII
    /// case-insensitive), or `nil` when the row has no such column.
    ///
    /// For example, `if let index = try row.columnIndex(named: "email") { … }`.
    public func columnIndex(named name: String) throws -> Int? {
        try rows.columnIndex(row: row, named: name)
    }

    /// The number of columns.
    ///
    /// For example, `let width = try row.count`.
    public var count: Int {
        get throws {
            try checkRow()
            return layout.names.count
        }
    }

    /// A copy of the row that outlives the statement.
    ///
    /// For example, `rows.append(try row.copy())`.
    public func copy() throws -> Row {
        try checkRow()
        let layout = self.layout
        return Row(layout: layout, values: try layout.names.indices.map { try rawValue(at: $0) })
    }

    /// The raw value of column `index` (0-based).
    @inlinable
    public func value(at index: Int) throws -> DatabaseValue {
        try decodeColumn(DatabaseValue.self, at: index)
    }

    /// Column `index` (0-based) converted to `T`.
    ///
    /// For example, `let score: Double = try row.decode(at: 4)`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws -> T {
        try type.decodeColumn(of: self, at: index)
    }

    /// The column `name` converted to `T`.
    ///
    /// For example, `let bio: String? = try row.decode(named: "bio")`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, named name: String) throws -> T {
        try checkRow()
        return try decodeColumn(type, named: name)
    }

    /// Column `index` (0-based) converted to the type the context expects.
    ///
    /// For example, `let id: Int64 = try row[0]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
        get throws { try T.decodeColumn(of: self, at: index) }
    }

    /// The column `name` converted to the type the context expects.
    ///
    /// For example, `let name: String = try row["name"]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ name: String) -> T {
        get throws {
            try checkRow()
            return try decodeColumn(T.self, named: name)
        }
    }
}

@available(*, unavailable)
extension RowView: Sendable {}

/// One result of an engine's connection, as the views of its rows hold it: a value, so
/// that a view reads its rows borrowed (loaded from a class's field, the existential was
/// retained and released around every column read: callgrind, W2).
@usableFromInline
package struct EngineResult {
    /// The rows.
    @usableFromInline package let rows: any EngineRows

    /// The result of `rows`.
    @inlinable @inline(__always)
    package init(_ rows: any EngineRows) {
        self.rows = rows
    }
}

/// What a typed fast read found in a column: the expected storage class's value,
/// `NULL`, or something else (for the general path to convert or report).
@usableFromInline
package enum TypedColumn<Value> {
    case value(Value)
    case null
    case other

    /// An INTEGER read as another integer type: `.other` when it does not fit.
    @inlinable
    func exactly<Integer: FixedWidthInteger>(_ type: Integer.Type) -> TypedColumn<Integer> where Value == Int64 {
        switch self {
        case .value(let value):
            guard let exact = Integer(exactly: value) else { return .other }
            return .value(exact)
        case .null: return .null
        case .other: return .other
        }
    }

    /// An INTEGER read as a `Bool`: 0 is `false`, any other value `true` (as
    /// `Bool(databaseValue:)` reads it).
    @inlinable
    func boolean() -> TypedColumn<Bool> where Value == Int64 {
        switch self {
        case .value(let value): return .value(value != 0)
        case .null: return .null
        case .other: return .other
        }
    }
}
