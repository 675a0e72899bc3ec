public import Foundation

/// A Swift type that converts to and from an ``DatabaseValue``.
///
/// SwiftDAL ships conformances for every integer width (range-checked in both
/// directions), `Double`, `Float`, `Bool`, `String`, `Data`, `Date`, `UUID`, `Decimal`
/// and `Optional` (as `NULL`). Conform your own types (an enum with a raw value, a
/// money type) by mapping them onto one of those.
///
/// For example:
///
/// ```swift
/// enum Status: String, DatabaseValueConvertible {
///     case active, banned
///     func databaseValue() throws -> DatabaseValue { .text(rawValue) }
///     init?(databaseValue: DatabaseValue) {
///         guard let text = databaseValue.string else { return nil }
///         self.init(rawValue: text)
///     }
/// }
/// ```
public protocol DatabaseValueConvertible: Sendable {
    /// The value to store. Throws ``DALError`` with code ``DALError/Code/invalidValue``
    /// when the value cannot be stored without loss (a `UInt64` above `Int64.max`, NaN).
    func databaseValue() throws -> DatabaseValue

    /// Converts a stored value, or returns `nil` when it has the wrong storage class or
    /// does not fit (callers turn `nil` into an error naming the column and the type).
    init?(databaseValue: DatabaseValue)

    /// Reads column `index` of `row` (0-based). You do not implement this: the default
    /// goes through ``init(databaseValue:)``; SwiftDAL's own `String`, `Int`, `Int64` and
    /// `Double` read SQLite's value directly, without an ``DatabaseValue`` in between.
    ///
    /// For example, `let name = try String.decodeColumn(of: row, at: 1)` (what
    /// `let name: String = try row[1]` calls).
    static func decodeColumn(of row: RowView, at index: Int) throws -> Self

    /// Reads column `index` of `row` as an optional (`NULL` is `nil`). You do not
    /// implement this either; `Optional`'s ``decodeColumn(of:at:)`` calls it.
    ///
    /// For example, `let bio = try String.decodeOptionalColumn(of: row, at: 5)`.
    static func decodeOptionalColumn(of row: RowView, at index: Int) throws -> Self?
}

extension DatabaseValueConvertible {
    /// Reads column `index` of `row` through ``init(databaseValue:)``; throws
    /// ``DALError/Code/conversionFailed`` naming the column when the value does not convert.
    @inlinable
    public static func decodeColumn(of row: RowView, at index: Int) throws -> Self {
        try row.decodeColumn(Self.self, at: index)
    }

    /// Reads column `index` of `row` through ``init(databaseValue:)``, `NULL` as `nil`; throws
    /// ``DALError/Code/conversionFailed`` naming the column when the value does not convert.
    @inlinable
    public static func decodeOptionalColumn(of row: RowView, at index: Int) throws -> Self? {
        try row.decodeColumn(Self?.self, at: index)
    }

    /// The typed fast path shared by the conformances below: `read` settles the value
    /// when the column holds the expected storage class (or `NULL`, for an optional);
    /// anything else takes the general path, so conversions and errors stay the same.
    @inlinable
    static func fastColumn(_ read: TypedColumn<Self>, of row: RowView, at index: Int) throws -> Self {
        if case .value(let value) = read { return value }
        return try row.decodeColumn(Self.self, at: index)
    }

    @inlinable
    static func fastOptionalColumn(_ read: TypedColumn<Self>, of row: RowView, at index: Int) throws -> Self? {
        switch read {
        case .value(let value): return value
        case .null: return nil
        case .other: return try row.decodeColumn(Self?.self, at: index)
        }
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself: an ``DatabaseValue`` is stored as it is.
    @inlinable public func databaseValue() -> DatabaseValue { self }
    /// The stored value as it is, whatever its storage class; never `nil`.
    @inlinable public init?(databaseValue: DatabaseValue) { self = databaseValue }
}

// MARK: - Integers

/// Integer conversions share one range-checked implementation: a stored value that does
/// not fit the Swift type is a conversion failure, never a silent truncation. Integral
/// `REAL` values (as SQLite's NUMERIC affinity may leave them) convert when exact.
extension DatabaseValueConvertible where Self: FixedWidthInteger {
    /// The integer as an `INTEGER`; throws ``DALError/Code/invalidValue`` for a value above
    /// `Int64.max` (a large `UInt64`), which SQLite's 64-bit signed integers cannot hold.
    @inlinable
    public func databaseValue() throws -> DatabaseValue {
        guard let value = Int64(exactly: self) else { throw integerOverflow(self) }
        return .integer(value)
    }

    /// An `INTEGER` that fits the type, or an integral `REAL` it holds exactly; for an
    /// unsigned 64-bit type, also the digits of a value above `Int64.max` (how MariaDB's
    /// `BIGINT UNSIGNED` and PostgreSQL's `numeric` report one); `nil` (a conversion
    /// failure) for anything else, never a truncated value.
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .integer(let value):
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        case .real(let value):
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        case .text(let text):
            // Only what no INTEGER holds: other text stays a conversion failure.
            guard !Self.isSigned, Self.bitWidth >= 64, let first = text.utf8.first,
                (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first), let value = UInt64(text),
                value > UInt64(Int64.max), let exact = Self(exactly: value)
            else { return nil }
            self = exact
        default:
            return nil
        }
    }
}

@usableFromInline
func integerOverflow(_ value: some FixedWidthInteger) -> DALError {
    // The value itself stays out of the message (it may be personal data).
    DALError(
        .invalidValue,
        "a \(type(of: value)) value above Int64.max does not fit the 64-bit signed integer SwiftDAL binds integers as "
            + "(SQLite's INTEGER holds no more); on MariaDB or PostgreSQL, bind such a value as a Decimal or a String")
}

extension Int: DatabaseValueConvertible {
    /// Reads the column's integer directly from SQLite (no ``DatabaseValue`` in between),
    /// range-checked like ``init(databaseValue:)``.
    @inlinable
    public static func decodeColumn(of row: RowView, at index: Int) throws -> Int {
        try fastColumn(row.integerColumn(at: index).exactly(Int.self), of: row, at: index)
    }

    /// Reads the column's integer directly from SQLite, `NULL` as `nil`.
    @inlinable
    public static func decodeOptionalColumn(of row: RowView, at index: Int) throws -> Int? {
        try fastOptionalColumn(row.integerColumn(at: index).exactly(Int.self), of: row, at: index)
    }
}
extension Int8: DatabaseValueConvertible {}
extension Int16: DatabaseValueConvertible {}
extension Int32: DatabaseValueConvertible {}
extension Int64: DatabaseValueConvertible {
    /// The integer as an `INTEGER`: every `Int64` fits.
    @inlinable public func databaseValue() -> DatabaseValue { .integer(self) }

    /// Reads the column's integer directly from SQLite (no ``DatabaseValue`` in between).
    @inlinable
    public static func decodeColumn(of row: RowView, at index: Int) throws -> Int64 {
        try fastColumn(row.integerColumn(at: index), of: row, at: index)
    }

    /// Reads the column's integer directly from SQLite, `NULL` as `nil`.
    @inlinable
    public static func decodeOptionalColumn(of row: RowView, at index: Int) throws -> Int64? {
        try fastOptionalColumn(row.integerColumn(at: index), of: row, at: index)
    }

    /// An `INTEGER`, or an integral `REAL` an `Int64` holds exactly; `nil` otherwise.
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .integer(let value): self = value
        case .real(let value):
            guard let exact = Int64(exactly: value) else { return nil }
            self = exact
        default: return nil
        }
    }
}
extension UInt: DatabaseValueConvertible {}
extension UInt8: DatabaseValueConvertible {}
extension UInt16: DatabaseValueConvertible {}
extension UInt32: DatabaseValueConvertible {}
extension UInt64: DatabaseValueConvertible {}

// MARK: - Floating point, Bool, String, Data

@usableFromInline
func nanError() -> DALError {
    DALError(
        .invalidValue,
        "NaN cannot be stored (SQLite would turn it into NULL; refused on every engine, so a value means the same everywhere)"
    )
}

extension Double: DatabaseValueConvertible {
    /// Reads the column's `REAL` directly from SQLite; an `INTEGER` converts too.
    @inlinable
    public static func decodeColumn(of row: RowView, at index: Int) throws -> Double {
        try fastColumn(row.realColumn(at: index), of: row, at: index)
    }

    /// Reads the column's `REAL` directly from SQLite, `NULL` as `nil`.
    @inlinable
    public static func decodeOptionalColumn(of row: RowView, at index: Int) throws -> Double? {
        try fastOptionalColumn(row.realColumn(at: index), of: row, at: index)
    }

    /// Throws for NaN, which SQLite would silently store as `NULL`.
    @inlinable
    public func databaseValue() throws -> DatabaseValue {
        guard !isNaN else { throw nanError() }
        return .real(self)
    }

    /// A `REAL`, or an `INTEGER` as the nearest double; `nil` for text, blobs and `NULL`.
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        switch databaseValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Float: DatabaseValueConvertible {
    /// Stored as a `REAL` (a `Double`); throws for NaN.
    @inlinable
    public func databaseValue() throws -> DatabaseValue {
        try Double(self).databaseValue()
    }

    /// Fails for finite values beyond `Float`'s range (they would become infinity).
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        guard let double = Double(databaseValue: databaseValue) else { return nil }
        let value = Float(double)
        if value.isInfinite && double.isFinite { return nil }
        self = value
    }
}

extension Bool: DatabaseValueConvertible {
    /// Stored as `INTEGER` 1 or 0; any non-zero integer reads as `true`.
    @inlinable public func databaseValue() -> DatabaseValue { .integer(self ? 1 : 0) }

    /// An `INTEGER`: 0 is `false`, any other value `true`; `nil` for other storage classes.
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        guard case .integer(let value) = databaseValue else { return nil }
        self = value != 0
    }

    /// Reads the column's integer directly (no ``DatabaseValue`` in between), as
    /// ``init(databaseValue:)`` reads it.
    @inlinable
    public static func decodeColumn(of row: RowView, at index: Int) throws -> Bool {
        try fastColumn(row.integerColumn(at: index).boolean(), of: row, at: index)
    }

    /// Reads the column's integer directly, `NULL` as `nil`.
    @inlinable
    public static func decodeOptionalColumn(of row: RowView, at index: Int) throws -> Bool? {
        try fastOptionalColumn(row.integerColumn(at: index).boolean(), of: row, at: index)
    }
}

extension String: DatabaseValueConvertible {
    /// The string as `TEXT`, bound with its byte length (an embedded NUL survives).
    @inlinable public func databaseValue() -> DatabaseValue { .text(self) }

    /// Reads the column's text directly from SQLite; invalid UTF-8 throws
    /// ``DALError/Code/conversionFailed``.
    @inlinable
    public static func decodeColumn(of row: RowView, at index: Int) throws -> String {
        try fastColumn(row.textColumn(at: index), of: row, at: index)
    }

    /// Reads the column's text directly from SQLite, `NULL` as `nil`.
    @inlinable
    public static func decodeOptionalColumn(of row: RowView, at index: Int) throws -> String? {
        try fastOptionalColumn(row.textColumn(at: index), of: row, at: index)
    }

    /// `TEXT`; `nil` for other storage classes (a number is not read as text).
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        guard case .text(let value) = databaseValue else { return nil }
        self = value
    }
}

extension Data: DatabaseValueConvertible {
    /// Stored as a `BLOB`; empty data stays an empty blob, never `NULL`.
    @inlinable public func databaseValue() -> DatabaseValue { .blob(self) }

    /// A `BLOB`; `nil` for other storage classes.
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        guard case .blob(let value) = databaseValue else { return nil }
        self = value
    }
}

// MARK: - Optional

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// Reads the column as `Wrapped`, `NULL` as `nil` (through `Wrapped`'s
    /// ``DatabaseValueConvertible/decodeOptionalColumn(of:at:)``).
    @inlinable
    public static func decodeColumn(of row: RowView, at index: Int) throws -> Wrapped? {
        try Wrapped.decodeOptionalColumn(of: row, at: index)
    }

    /// `nil` is stored as `NULL`.
    @inlinable
    public func databaseValue() throws -> DatabaseValue {
        guard let wrapped = self else { return .null }
        return try wrapped.databaseValue()
    }

    /// `NULL` reads as `nil`; any other value must convert to `Wrapped`.
    @inlinable
    public init?(databaseValue: DatabaseValue) {
        if databaseValue.isNull {
            self = .none
        } else if let wrapped = Wrapped(databaseValue: databaseValue) {
            self = .some(wrapped)
        } else {
            return nil
        }
    }
}

/// The protocol ``DatabaseValueConvertible`` had before PostgreSQL and MariaDB joined
/// SQLite, with its requirements' old names: a type that conforms to it keeps working,
/// its `sqliteValue()` and `init?(sqliteValue:)` serving as ``DatabaseValueConvertible``'s
/// ``DatabaseValueConvertible/databaseValue()`` and
/// ``DatabaseValueConvertible/init(databaseValue:)``. Rename them and conform to
/// ``DatabaseValueConvertible`` instead.
///
/// For example, `enum Status: String, SQLiteValueConvertible { … }` becomes
/// `enum Status: String, DatabaseValueConvertible { … }` with `databaseValue()` and
/// `init?(databaseValue:)`.
@available(*, deprecated, renamed: "DatabaseValueConvertible")
public protocol SQLiteValueConvertible: DatabaseValueConvertible {
    /// The value to store (``DatabaseValueConvertible/databaseValue()``'s old name).
    func sqliteValue() throws -> DatabaseValue
    /// Converts a stored value (``DatabaseValueConvertible/init(databaseValue:)``'s old name).
    init?(sqliteValue: DatabaseValue)
}

@available(*, deprecated, renamed: "DatabaseValueConvertible")
extension SQLiteValueConvertible {
    /// ``sqliteValue()``.
    public func databaseValue() throws -> DatabaseValue { try sqliteValue() }
    /// ``init(sqliteValue:)``.
    public init?(databaseValue: DatabaseValue) { self.init(sqliteValue: databaseValue) }
}
