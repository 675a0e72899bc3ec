public import SwiftDALConnection

/// The column values of one entity, in the order they were encoded.
///
/// For example:
///
/// ```swift
/// var columns = ColumnValues()
/// try columns.encode(user.name, for: "name")
/// try columns.encode(user.bio, for: "bio")     // nil is stored as NULL
/// columns.value(for: "name")                   // .text("Ann")
/// ```
public struct ColumnValues: Sendable {
    /// Column names, in encoding order.
    public private(set) var names: [String] = []
    /// Values, parallel to ``names``.
    public private(set) var values: [DatabaseValue] = []

    /// An empty container.
    ///
    /// For example, `var columns = ColumnValues(capacity: 6)`.
    public init(capacity: Int = 8) {
        names.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// Appends the value of `column`. Throws when the value cannot be stored (NaN, a
    /// `UInt64` above `Int64.max`).
    ///
    /// For example, `try columns.encode(user.age, for: "age")`.
    @inlinable
    public mutating func encode(_ value: some DatabaseValueConvertible, for column: String) throws {
        // Inlinable, so that the conversion is specialized where the entity calls it.
        append(try value.databaseValue(), for: column)
    }

    /// Appends an already converted value.
    ///
    /// For example, `columns.append(.null, for: "bio")`.
    public mutating func append(_ value: DatabaseValue, for column: String) {
        names.append(column)
        values.append(value)
    }

    /// The value encoded for `column` (exact name first, then ASCII case-insensitive).
    ///
    /// For example, `columns.value(for: "id")`.
    public func value(for column: String) -> DatabaseValue? {
        if let index = names.firstIndex(of: column) { return values[index] }
        let folded = column.identifierKey
        return names.firstIndex { $0.identifierKey == folded }.map { values[$0] }
    }

    /// The number of columns.
    public var count: Int { names.count }

    /// Removes the columns whose `identifierKey` is in `keys` (a table's generated
    /// columns, which are never written).
    package mutating func removeColumns(withKeys keys: Set<String>) {
        var index = names.count
        while index > 0 {
            index -= 1
            if keys.contains(names[index].identifierKey) {
                names.remove(at: index)
                values.remove(at: index)
            }
        }
    }

    /// Moves the values out (leaving none), so that the caller owns the only copy and can
    /// edit it without copying.
    package mutating func takeValues() -> [DatabaseValue] {
        defer { values = [] }
        return values
    }
}
