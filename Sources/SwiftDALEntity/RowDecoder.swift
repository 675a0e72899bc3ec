import Foundation
import SwiftDALConnection

/// Decodes a `Decodable` entity from a row, reading each property from the column of
/// the same name. Values that are ``DatabaseValueConvertible`` convert directly; other
/// nested `Decodable` values are read from JSON text.
struct RowDecoder: Decoder {
    // Three words at most, so that the `any Decoder` handed to `init(from:)` stores the
    // decoder inline instead of allocating a box for every row: the row view is all it
    // holds. Its errors name no table; `Entity.init(row:)` adds the entity's.
    let row: RowView
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(row: RowView) {
        self.row = row
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw unsupported("an unkeyed container (an array) as a whole row")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw unsupported("a single value as a whole row")
    }

    func unsupported(_ what: String) -> DALError {
        DALError(
            .conversionFailed, "the entity cannot be decoded from a row: \(what) is not supported")
    }

    // The per-column reads, by column name. They take the key's string rather than the
    // key, so they are not generic over the coding keys: where they are called the value
    // type is concrete, and no generic metadata is looked up per row.

    /// Column `name` as `T`; a missing column or a failed conversion throws.
    func column<T: DatabaseValueConvertible>(_ name: String, as type: T.Type) throws -> T {
        let index = try index(of: name)
        return try row.decode(T.self, at: index)
    }

    /// Column `name` as `T?`: a missing column or `NULL` is `nil`.
    func optionalColumn<T: DatabaseValueConvertible>(_ name: String, as type: T.Type) throws -> T? {
        guard let index = try row.columnIndex(named: name) else { return nil }
        return try row.decode(T?.self, at: index)
    }

    /// The index of column `name`, or an error naming the property and the row's columns.
    func index(of name: String) throws -> Int {
        if let index = try row.columnIndex(named: name) { return index }
        throw DALError(
            .invalidColumn,
            "the entity has a property \(name) but the row has no such column "
                + "(columns: \(try row.columnNames.joined(separator: ", ")))",
            column: name)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: RowDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        // (These two cannot throw: a row view used after its row was left answers as if it
        // had no columns, and the next read from it throws.)
        var allKeys: [Key] { ((try? decoder.row.columnNames) ?? []).compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            ((try? decoder.row.columnIndex(named: key.stringValue)) ?? nil) != nil
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            try decoder.row.value(at: decoder.index(of: key.stringValue)).isNull
        }

        // The types synthesized Decodable asks for most: decoded directly, no dynamic cast.
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try decoder.column(key.stringValue, as: String.self)
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try decoder.column(key.stringValue, as: Int.self)
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try decoder.column(key.stringValue, as: Int64.self)
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try decoder.column(key.stringValue, as: Int32.self)
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try decoder.column(key.stringValue, as: Double.self)
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try decoder.column(key.stringValue, as: Float.self)
        }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try decoder.column(key.stringValue, as: Bool.self)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try decoder.optionalColumn(key.stringValue, as: String.self)
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try decoder.optionalColumn(key.stringValue, as: Int.self)
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try decoder.optionalColumn(key.stringValue, as: Int64.self)
        }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
            try decoder.optionalColumn(key.stringValue, as: Int32.self)
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try decoder.optionalColumn(key.stringValue, as: Double.self)
        }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
            try decoder.optionalColumn(key.stringValue, as: Float.self)
        }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try decoder.optionalColumn(key.stringValue, as: Bool.self)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let index = try decoder.index(of: key.stringValue)
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try decodeConvertible(convertible, at: index, as: T.self)
            }
            return try decodeJSON(T.self, at: index, key: key)
        }

        private func decodeConvertible<C: DatabaseValueConvertible, T>(_ type: C.Type, at index: Int, as: T.Type) throws
            -> T
        {
            let value = try decoder.row.decode(C.self, at: index)
            guard let typed = value as? T else {
                throw decoder.unsupported("\(T.self)")
            }
            return typed
        }

        /// Values that are not SQLite-convertible: JSON text or a JSON blob (arrays,
        /// objects), or a plain string or number (what single-value types such as enums
        /// with raw values are stored as).
        private func decodeJSON<T: Decodable>(_ type: T.Type, at index: Int, key: Key) throws -> T {
            var candidates = [Data]()
            switch try decoder.row.value(at: index) {
            case .text(let text):
                candidates.append(Data(text.utf8))
                if let quoted = try? JSONEncoder().encode(text) { candidates.append(quoted) }
            case .blob(let blob):
                candidates.append(blob)
            case .integer(let integer):
                candidates.append(Data(String(integer).utf8))
            case .real(let double):
                candidates.append(Data("\(double)".utf8))
            case .null:
                candidates.append(Data("null".utf8))
            }
            var firstError: (any Error)?
            for data in candidates {
                do {
                    return try JSONDecoder().decode(T.self, from: data)
                } catch {
                    firstError = firstError ?? error
                }
            }
            // Not the error's own description: it may quote the stored value ("Cannot initialize
            // Tier from invalid Int value 42", "Parsed JSON number <…> does not fit"); the error
            // itself is kept as `underlying`.
            throw DALError(
                .conversionFailed,
                "column \(key.stringValue) does not hold a \(T.self) (as JSON or as a plain value): "
                    + Self.reason(firstError),
                column: key.stringValue, underlying: firstError)
        }

        /// Why decoding failed, without the value that failed: the kind of failure, never
        /// a value (nor the coding path, whose keys may be a dictionary's, that is data).
        static func reason(_ error: (any Error)?) -> String {
            guard let error = error as? DecodingError else { return error.map { "\(type(of: $0))" } ?? "no value" }
            switch error {
            case .typeMismatch(let type, _): return "a value that is not a \(type)"
            case .valueNotFound(let type, _): return "no \(type) value"
            case .keyNotFound(let key, _): return "no key \(key.stringValue)"
            case .dataCorrupted(let context):
                return context.codingPath.isEmpty && context.underlyingError != nil
                    ? "not valid JSON" : "a value that does not convert"
            @unknown default: return "a decoding error"
            }
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw decoder.unsupported("a nested container for \(key.stringValue)")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw decoder.unsupported("a nested unkeyed container for \(key.stringValue)")
        }

        func superDecoder() throws -> any Decoder { throw decoder.unsupported("a super decoder") }

        func superDecoder(forKey key: Key) throws -> any Decoder { throw decoder.unsupported("a super decoder") }
    }
}
