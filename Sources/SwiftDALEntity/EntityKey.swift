public import Foundation
public import SwiftDALConnection

/// A primary-key value: one value for a single-column key, several for a composite
/// key (in the order of ``Entity/primaryKey``).
///
/// Integers, `String`, `UUID`, `Data` and ``DatabaseValue`` are keys; use
/// ``CompositeKey`` for composite keys.
///
/// For example, `try users.findById(42)` and `try tags.findById(CompositeKey(42, "admin"))`.
public protocol EntityKey: Sendable {
    /// The key's column values, in primary-key order.
    func keyValues() throws -> [DatabaseValue]

    /// The key as statement arguments, in primary-key order. You do not implement this:
    /// the default binds ``keyValues()``; single-value keys bind their value without
    /// building an array.
    ///
    /// For example, `try 42.keyArguments()` binds `.integer(42)`.
    func keyArguments() throws -> StatementArguments
}

extension EntityKey {
    /// Binds ``keyValues()`` in primary-key order.
    public func keyArguments() throws -> StatementArguments {
        StatementArguments(values: try keyValues())
    }
}

extension EntityKey where Self: DatabaseValueConvertible {
    /// The value itself, as the only column of the key.
    public func keyValues() throws -> [DatabaseValue] { [try databaseValue()] }

    /// Binds the value itself, without building an array.
    @inlinable
    public func keyArguments() throws -> StatementArguments {
        StatementArguments(value: try databaseValue())
    }
}

extension Int: EntityKey {}
extension Int8: EntityKey {}
extension Int16: EntityKey {}
extension Int32: EntityKey {}
extension Int64: EntityKey {}
extension UInt: EntityKey {}
extension UInt8: EntityKey {}
extension UInt16: EntityKey {}
extension UInt32: EntityKey {}
extension UInt64: EntityKey {}
extension String: EntityKey {}
extension UUID: EntityKey {}
extension Data: EntityKey {}
extension DatabaseValue: EntityKey {}

/// The value of a composite primary key, in the order of ``Entity/primaryKey``.
///
/// For example, `CompositeKey(userID, "admin")` for `PRIMARY KEY (user_id, tag)`.
public struct CompositeKey: EntityKey, CustomStringConvertible {
    private let arguments: StatementArguments

    /// A key of `values`, in primary-key order.
    ///
    /// For example, `CompositeKey(1, "admin")`.
    public init(_ values: any DatabaseValueConvertible...) {
        arguments = StatementArguments(values)
    }

    /// The key's values in primary-key order; throws the conversion error of a value that
    /// could not be stored (``DALError/Code/invalidValue``).
    public func keyValues() throws -> [DatabaseValue] {
        if let error = arguments.conversionError { throw error }
        return arguments.positionalValues ?? []
    }

    /// The key's values, as `CompositeKey[1, 'admin']`: key values, so log it with care.
    public var description: String { "CompositeKey\(arguments)" }
}
