/// The column names of a result, shared by all its rows, with a name-to-index map.
@usableFromInline
package final class ColumnLayout: Sendable {
    @usableFromInline let names: [String]
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
    let hasUniqueNames: Bool

    @usableFromInline
    func index(of name: String) -> Int? {
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

    func name(at index: Int) -> String? { names.indices.contains(index) ? names[index] : nil }
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
func columnOutOfRange(_ index: Int, _ layout: ColumnLayout) -> DALError {
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
    let name = layout.names[index]
    return DALError(
        .conversionFailed, "column \(index) (\(name)) holds \(value.storageClass), which does not convert to \(type)",
        column: name)
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

    init(layout: ColumnLayout, values: [DatabaseValue]) {
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

/// The current row of a statement being stepped: reads columns straight from SQLite,
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
    /// Where the row is read from: the SQLite ``Statement``, or, when `token` carries
    /// ``engineRow``, another engine's ``EngineResult``. One plain reference (an enum of the
    /// two retained its payload on every column read, and two optional fields made the
    /// Codable decoder too large for an existential's inline buffer: boxed per row), so
    /// a view is two words; only the two initializers below set it, with its flag.
    @usableFromInline let source: AnyObject
    /// For SQLite, the statement's row token when this view was made: every read checks
    /// that the statement is still on that row, so a view kept past its closure throws
    /// ``DALError/Code/accessEnded`` instead of reading another row (or another
    /// thread's statement). For another engine, ``engineRow`` plus the row's number in its
    /// result: a PostgreSQL result is immutable, so a kept view still reads its own row;
    /// MariaDB reads rows in place, one at a time, so a kept view throws
    /// ``DALError/Code/accessEnded`` there too.
    @usableFromInline let token: UInt64

    /// The flag of `token` saying that `source` is an ``EngineResult`` (a statement's row
    /// counter starts at 0 and counts steps: it never reaches 2^63).
    @usableFromInline static let engineRow: UInt64 = 1 << 63

    /// A view of the statement's current row.
    @inlinable
    init(statement: Statement) {
        source = statement
        token = statement.currentRowToken & ~Self.engineRow
    }

    /// A view of row `row` of an engine's result.
    package init(result: EngineResult, row: Int) {
        source = result
        token = UInt64(truncatingIfNeeded: row) | Self.engineRow
    }

    /// The statement when this is a SQLite row, or `nil`.
    @inlinable @inline(__always)
    var sqliteStatement: Statement? {
        token & Self.engineRow == 0 ? unsafeDowncast(source, to: Statement.self) : nil
    }

    /// Another engine's result; call only when ``sqliteStatement`` is `nil`.
    @inlinable @inline(__always)
    var engineResult: EngineResult { unsafeDowncast(source, to: EngineResult.self) }

    /// The row's index in its engine result.
    @inlinable @inline(__always)
    var engineRowIndex: Int { Int(truncatingIfNeeded: token & ~Self.engineRow) }

    @inlinable
    var layout: ColumnLayout {
        if let statement = sqliteStatement { return statement.layout }
        return engineResult.rows.layout
    }

    /// Throws when this view's row is no longer the statement's current row.
    @inlinable @inline(__always)
    func checkRow() throws {
        if let statement = sqliteStatement { try statement.checkRow(token) }
    }

    @inlinable
    func rawValue(at index: Int) throws -> DatabaseValue {
        if let statement = sqliteStatement {
            try statement.checkRow(token)
            return try statement.value(at: Int32(index))
        }
        return try engineResult.rows.value(row: engineRowIndex, column: index)
    }

    /// Column `index` when it holds an INTEGER (the typed fast paths of the conversions;
    /// another engine's rows answer from their own typed reads).
    @inlinable
    func integerColumn(at index: Int) throws -> TypedColumn<Int64> {
        if let statement = sqliteStatement {
            try statement.checkRow(token)
            return try statement.integerColumn(at: index)
        }
        return engineResult.rows.integerColumn(row: engineRowIndex, column: index)
    }

    /// Column `index` when it holds a REAL.
    @inlinable
    func realColumn(at index: Int) throws -> TypedColumn<Double> {
        if let statement = sqliteStatement {
            try statement.checkRow(token)
            return try statement.realColumn(at: index)
        }
        return engineResult.rows.realColumn(row: engineRowIndex, column: index)
    }

    /// Column `index` when it holds valid UTF-8 TEXT.
    @inlinable
    func textColumn(at index: Int) throws -> TypedColumn<String> {
        if let statement = sqliteStatement {
            try statement.checkRow(token)
            return try statement.textColumn(at: index)
        }
        return engineResult.rows.textColumn(row: engineRowIndex, column: index)
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
        if let statement = sqliteStatement {
            try statement.checkRow(token)
            return statement.columnIndex(named: name)
        }
        return engineResult.rows.layout.index(of: name)
    }

    /// The number of columns.
    ///
    /// For example, `let width = try row.count`.
    public var count: Int {
        get throws {
            if let statement = sqliteStatement {
                try statement.checkRow(token)
                return statement.resultWidth
            }
            return engineResult.rows.layout.names.count
        }
    }

    /// A copy of the row that outlives the statement.
    ///
    /// For example, `rows.append(try row.copy())`.
    public func copy() throws -> Row {
        if let statement = sqliteStatement {
            try statement.checkRow(token)
            return try statement.copyRow()
        }
        let layout = engineResult.rows.layout
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

/// One result of another engine's connection, made once per result and shared by the
/// views of its rows (a class of its own, so that ``RowView`` holds one plain reference).
@usableFromInline
package final class EngineResult {
    @usableFromInline package let rows: any EngineRows

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
}
