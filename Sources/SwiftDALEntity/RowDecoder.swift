import Foundation
import SwiftDALConnection

/// Decodes a `Decodable` entity from a row, reading each property from the column of
/// the same name. Values that are ``SQLiteValueConvertible`` convert directly; other
/// nested `Decodable` values are read from JSON text.
struct RowDecoder: Decoder {
    let row: RowView
    let entity: any Entity.Type
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(row: RowView, entity: any Entity.Type) {
        self.row = row
        self.entity = entity
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
            .conversionFailed, "\(entity) cannot be decoded from a row: \(what) is not supported",
            table: entity.tableName)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: RowDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        var allKeys: [Key] { decoder.row.columnNames.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            decoder.row.columnIndex(named: key.stringValue) != nil
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            try decoder.row.value(at: index(of: key)).isNull
        }

        // The types synthesized Decodable asks for most: decoded directly, no dynamic cast.
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try column(key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try column(key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try column(key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try column(key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try column(key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try column(key) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try column(key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optionalColumn(key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalColumn(key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalColumn(key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalColumn(key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optionalColumn(key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optionalColumn(key) }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optionalColumn(key) }

        private func column<T: SQLiteValueConvertible>(_ key: Key) throws -> T {
            try withContext(key) { try decoder.row.decode(T.self, at: try index(of: key)) }
        }

        /// A missing column or `NULL` is `nil` (one lookup, instead of contains + decodeNil + decode).
        private func optionalColumn<T: SQLiteValueConvertible>(_ key: Key) throws -> T? {
            guard let index = decoder.row.columnIndex(named: key.stringValue) else { return nil }
            return try withContext(key) { try decoder.row.decode(T?.self, at: index) }
        }

        /// Adds the entity's table to a conversion error.
        private func withContext<R>(_ key: Key, _ body: () throws -> R) throws -> R {
            do {
                return try body()
            } catch var error as DALError where error.table == nil {
                error.table = decoder.entity.tableName
                throw error
            }
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let index = try index(of: key)
            if let convertible = T.self as? any SQLiteValueConvertible.Type {
                return try decodeConvertible(convertible, at: index, as: T.self)
            }
            return try decodeJSON(T.self, at: index, key: key)
        }

        private func decodeConvertible<C: SQLiteValueConvertible, T>(_ type: C.Type, at index: Int, as: T.Type) throws -> T {
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
            throw DALError(
                .conversionFailed,
                "column \(key.stringValue) does not hold a \(T.self) (as JSON or as a plain value): \(String(describing: firstError))",
                table: decoder.entity.tableName, column: key.stringValue, underlying: firstError)
        }

        private func index(of key: Key) throws -> Int {
            if let index = decoder.row.columnIndex(named: key.stringValue) { return index }
            throw DALError(
                .invalidColumn,
                "\(decoder.entity) has a property \(key.stringValue) but the row has no such column "
                    + "(columns: \(decoder.row.columnNames.joined(separator: ", ")))",
                table: decoder.entity.tableName, column: key.stringValue)
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
