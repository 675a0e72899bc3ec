public import Foundation

/// One SQLite value: exactly one of SQLite's five storage classes.
///
/// `DatabaseValue` is closed on purpose: Swift types convert to and from it through
/// ``DatabaseValueConvertible`` and the enum itself never grows. An empty string, an
/// empty blob and `NULL` are three different values.
///
/// For example:
///
/// ```swift
/// let values: [DatabaseValue] = [.null, 42, 1.5, "text", .blob(Data([0, 1]))]
/// let id: Int64? = values[1].int64   // 42
/// ```
public enum DatabaseValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer (SQLite `INTEGER`).
    case integer(Int64)
    /// An IEEE 754 double (SQLite `REAL`). Never NaN: SQLite stores NaN as `NULL`, so
    /// converting a NaN `Double` throws instead.
    case real(Double)
    /// UTF-8 text (SQLite `TEXT`); may contain NUL characters.
    case text(String)
    /// Bytes (SQLite `BLOB`); may be empty.
    case blob(Data)

    /// The storage class of this value, as SQLite names it.
    ///
    /// For example, `DatabaseValue.text("a").storageClass == .text`.
    public var storageClass: StorageClass {
        switch self {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }

    /// Whether this value is SQL `NULL`.
    ///
    /// For example, `DatabaseValue.null.isNull == true` and `DatabaseValue.text("").isNull == false`.
    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The integer payload, or `nil` when this is not an `INTEGER`.
    ///
    /// For example, `DatabaseValue.integer(7).int64 == 7`.
    public var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The text payload, or `nil` when this is not `TEXT`.
    ///
    /// For example, `DatabaseValue.text("a").string == "a"`.
    public var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

/// SQLite's five storage classes.

extension DatabaseValue {
    /// Whether the two values are the same stored value: the same storage class and the
    /// same bytes. Text compares its UTF-8 bytes (Swift's `==` on strings is canonical
    /// equivalence: `"Caf\u{E9}"` equals `"Cafe\u{301}"`, which a database stores apart), a
    /// real its bit pattern (`0.0` and `-0.0` differ, as PostgreSQL keeps them apart; one
    /// NaN equals itself). What an update compares to decide whether a column changed.
    ///
    /// For example, `DatabaseValue.text("Caf\u{E9}").isIdentical(to: .text("Cafe\u{301}")) == false`.
    package func isIdentical(to other: DatabaseValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.integer(let left), .integer(let right)): return left == right
        case (.real(let left), .real(let right)): return left.bitPattern == right.bitPattern
        case (.text(let left), .text(let right)): return left.utf8.elementsEqual(right.utf8)
        case (.blob(let left), .blob(let right)): return left == right
        default: return false
        }
    }
}

///
/// For example, `DatabaseValue.integer(1).storageClass == .integer`.
public enum StorageClass: String, Sendable, Hashable, CustomStringConvertible {
    /// `NULL`: no value.
    case null = "NULL"
    /// `INTEGER`: a signed 64-bit integer.
    case integer = "INTEGER"
    /// `REAL`: an 8-byte IEEE floating-point number.
    case real = "REAL"
    /// `TEXT`: a UTF-8 string.
    case text = "TEXT"
    /// `BLOB`: bytes, stored as given.
    case blob = "BLOB"

    /// The storage class's SQL name: `"INTEGER"`.
    public var description: String { rawValue }
}

extension DatabaseValue: CustomStringConvertible {
    /// A short rendering for logs and error messages: text is quoted, blobs show their size.
    ///
    /// For example, `DatabaseValue.text("a").description == "'a'"`.
    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): "'\(value)'"
        case .blob(let value): "<\(value.count) bytes>"
        }
    }
}

extension DatabaseValue: ExpressibleByNilLiteral {
    /// `nil` is `.null`: `let value: DatabaseValue = nil`.
    public init(nilLiteral: ()) { self = .null }
}

extension DatabaseValue: ExpressibleByIntegerLiteral {
    /// An integer literal is `.integer`: `let value: DatabaseValue = 42`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension DatabaseValue: ExpressibleByFloatLiteral {
    /// A floating-point literal is `.real`: `let value: DatabaseValue = 1.5`.
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension DatabaseValue: ExpressibleByStringLiteral {
    /// A string literal is `.text`: `let value: DatabaseValue = "Ann"`.
    public init(stringLiteral value: String) { self = .text(value) }
}

extension DatabaseValue: ExpressibleByBooleanLiteral {
    /// A Boolean literal is `.integer` 1 or 0, as SQLite stores Booleans.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

/// The name ``DatabaseValue`` had before PostgreSQL and MariaDB joined SQLite.
@available(*, deprecated, renamed: "DatabaseValue")
public typealias SQLiteValue = DatabaseValue
