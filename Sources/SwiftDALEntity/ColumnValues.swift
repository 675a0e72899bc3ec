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
    /// The names the encoder is expected to write, in order (a table's columns, as its
    /// DAL knows them): while the names written follow them, none is stored, so that
    /// encoding an entity stores only its values (no second array, no name retained).
    @usableFromInline let expectedNames: [String]
    /// The names written, stored once they no longer follow ``expectedNames`` (or when none
    /// are expected).
    @usableFromInline var writtenNames: [String] = []
    /// Whether every name written so far is the next of ``expectedNames``.
    @usableFromInline var followsExpectedNames: Bool
    /// The values written, in order.
    @usableFromInline var writtenValues: [DatabaseValue] = []

    /// Column names, in encoding order.
    public var names: [String] {
        guard followsExpectedNames else { return writtenNames }
        return writtenValues.count == expectedNames.count ? expectedNames : Array(expectedNames[..<writtenValues.count])
    }

    /// Values, parallel to ``names``.
    public var values: [DatabaseValue] { writtenValues }

    /// An empty container.
    ///
    /// For example, `var columns = ColumnValues(capacity: 6)`.
    public init(capacity: Int = 8) {
        expectedNames = []
        followsExpectedNames = false
        writtenNames.reserveCapacity(capacity)
        writtenValues.reserveCapacity(capacity)
    }

    /// An empty container for the columns `names`, in that order (a DAL's, for its entity's
    /// `encodeColumns(to:)`): names written in that order are not stored.
    package init(expecting names: [String]) {
        expectedNames = names
        followsExpectedNames = true
        writtenValues.reserveCapacity(names.count)
    }

    /// Whether the names written are exactly those expected (``init(expecting:)``), all of
    /// them, in order.
    package var hasExactlyTheExpectedNames: Bool {
        followsExpectedNames && writtenValues.count == expectedNames.count
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
    @inlinable
    public mutating func append(_ value: DatabaseValue, for column: String) {
        if followsExpectedNames {
            let index = writtenValues.count
            if index >= expectedNames.count || column != expectedNames[index] { storeNames(thenAppending: column) }
        } else {
            writtenNames.append(column)
        }
        writtenValues.append(value)
    }

    /// Stores the names written so far (they followed ``expectedNames``), then `column`.
    @usableFromInline
    mutating func storeNames(thenAppending column: String) {
        var stored = [String]()
        stored.reserveCapacity(Swift.max(expectedNames.count, writtenValues.count + 1))
        stored.append(contentsOf: expectedNames[..<writtenValues.count])
        stored.append(column)
        writtenNames = stored
        followsExpectedNames = false
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
    public var count: Int { writtenValues.count }

    /// Removes the columns whose `identifierKey` is in `keys` (a table's generated
    /// columns, which are never written).
    package mutating func removeColumns(withKeys keys: Set<String>) {
        var names = self.names
        var index = names.count
        while index > 0 {
            index -= 1
            if keys.contains(names[index].identifierKey) {
                names.remove(at: index)
                writtenValues.remove(at: index)
            }
        }
        writtenNames = names
        followsExpectedNames = false
    }

    /// Moves the values out (leaving none), so that the caller owns the only copy and can
    /// edit it without copying.
    package mutating func takeValues() -> [DatabaseValue] {
        defer { writtenValues = [] }
        return writtenValues
    }
}
