import Foundation
import SwiftDALConnection

/// Encodes an `Encodable` entity into ``ColumnValues``: each property becomes the
/// column of the same name. `nil` optionals are written as `NULL` (never skipped), so
/// an update clears the column. Values that are ``DatabaseValueConvertible`` convert
/// directly; other nested `Encodable` values are stored as JSON text, except those whose
/// JSON is one string or number (enums with raw values…), stored as that plain value.
struct ColumnEncoder: Encoder {
    /// The columns being written. Only its own methods touch `columns`, so the compiler
    /// can check exclusive access statically instead of at run time on every property.
    final class Storage {
        private var columns: ColumnValues
        init(_ columns: ColumnValues) { self.columns = columns }

        func encode(_ value: some DatabaseValueConvertible, for name: String) throws {
            try columns.encode(value, for: name)
        }

        func append(_ value: DatabaseValue, for name: String) {
            columns.append(value, for: name)
        }

        /// The columns written so far.
        var result: ColumnValues { columns }
    }

    // Three words at most, so that the `any Encoder` handed to `encode(to:)` stores the
    // encoder inline instead of allocating a box for every entity.
    let storage: Storage
    let entity: any Entity.Type
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        FailingContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FailingContainer(encoder: self)
    }

    /// Appends column `name`. Not generic over the coding keys: where it is called the
    /// value type is concrete, and no generic metadata is looked up per property.
    func write<Value: DatabaseValueConvertible>(_ value: Value, _ name: String) throws {
        try storage.encode(value, for: name)
    }

    func unsupported(_ what: String) -> DALError {
        DALError(
            .conversionFailed, "\(entity) cannot be encoded as columns: \(what) is not supported",
            table: entity.tableName)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ColumnEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil(forKey key: Key) throws {
            encoder.storage.append(.null, for: key.stringValue)
        }

        // The types synthesized Encodable writes most: converted directly, no dynamic cast.
        mutating func encode(_ value: String, forKey key: Key) throws { try encoder.write(value, key.stringValue) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try encoder.write(value, key.stringValue) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try encoder.write(value, key.stringValue) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try encoder.write(value, key.stringValue) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try encoder.write(value, key.stringValue) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try encoder.write(value, key.stringValue) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try encoder.write(value, key.stringValue) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if let convertible = value as? any DatabaseValueConvertible {
                try encoder.storage.encode(convertible, for: key.stringValue)
                return
            }
            let data: Data
            do {
                let json = JSONEncoder()
                json.outputFormatting = .sortedKeys
                data = try json.encode(value)
            } catch {
                // EncodingError's own description holds the value: only its context is kept.
                let reason = (error as? EncodingError).map(Self.reason) ?? "\(type(of: error))"
                throw DALError(
                    .invalidValue, "property \(key.stringValue) cannot be encoded as JSON: \(reason)",
                    table: encoder.entity.tableName, column: key.stringValue, underlying: error)
            }
            encoder.storage.append(Self.columnValue(ofJSON: data), for: key.stringValue)
        }

        /// Why an encoding failed, without the value that failed.
        static func reason(_ error: EncodingError) -> String {
            switch error {
            case .invalidValue(_, let context): context.debugDescription
            @unknown default: "an encoding error"
            }
        }

        /// A single JSON string or number (an enum's raw value, a URL, a wrapper type) is
        /// stored as plain TEXT, INTEGER or REAL, so the column reads naturally in SQL;
        /// arrays and objects are stored as JSON text. A number is an INTEGER or a REAL only
        /// when that holds it exactly; any other (a `UInt64` above `Int64.max`, a `Decimal`
        /// of more digits than a double keeps) stays its JSON text, never a rounded double.
        static func columnValue(ofJSON data: Data) -> DatabaseValue {
            guard let first = data.first else { return .text("") }
            if first == UInt8(ascii: "\""), let string = try? JSONDecoder().decode(String.self, from: data) {
                return .text(string)
            }
            let text = String(decoding: data, as: UTF8.self)
            // "-0" is a floating-point -0.0 (no integer is written so): a REAL keeps its sign.
            if text == "-0" { return .real(-0.0) }
            if let integer = Int64(text) { return .integer(integer) }
            if first != UInt8(ascii: "[") && first != UInt8(ascii: "{"), let double = Double(text), double.isFinite,
                let wanted = Decimal.canonicalForm(text), Decimal.canonicalForm(double.description) == wanted
            {
                return .real(double)
            }
            return .text(text)
        }

        // Synthesized Encodable skips nil optionals through encodeIfPresent; a column
        // must get NULL instead, so every variant is overridden.
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            guard let value else { return try encodeNil(forKey: key) }
            try encode(value, forKey: key)
        }
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
            try encoder.write(value, key.stringValue)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            KeyedEncodingContainer(FailingKeyedContainer<NestedKey>(encoder: encoder))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            FailingContainer(encoder: encoder)
        }

        mutating func superEncoder() -> any Encoder { encoder }

        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }

    /// Containers that a row cannot hold: every encode throws.
    struct FailingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        let encoder: ColumnEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }
        var count: Int { 0 }

        mutating func encodeNil() throws { throw encoder.unsupported("a value outside a keyed container") }
        mutating func encode<T: Encodable>(_ value: T) throws {
            throw encoder.unsupported("a value outside a keyed container")
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
            NestedKey
        > {
            KeyedEncodingContainer(FailingKeyedContainer<NestedKey>(encoder: encoder))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> any Encoder { encoder }
    }

    struct FailingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ColumnEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil(forKey key: Key) throws { throw encoder.unsupported("a nested container") }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            throw encoder.unsupported("a nested container")
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            KeyedEncodingContainer(FailingKeyedContainer<NestedKey>(encoder: encoder))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            FailingContainer(encoder: encoder)
        }
        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }
}
