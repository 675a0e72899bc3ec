import Foundation
import SwiftDALConnection

extension TableDefinition {
    /// The table of a `Decodable` entity, derived from its properties: one column per
    /// property, named by its coding key; `INTEGER` for integers and `Bool`, `REAL` for
    /// floating point, `TEXT` for strings, dates, UUIDs, decimals and nested `Codable`
    /// values (JSON), `BLOB` for `Data`; `NOT NULL` unless the property is optional; the
    /// entity's primary key. A `Decimal` in a `TEXT` column is exact but compares as text
    /// (`"49.9" > "199"`): make a column you compare or sort `.numeric` (exact on
    /// PostgreSQL and MariaDB; 15 significant digits on SQLite). Add constraints, defaults
    /// and indexes to the result, or
    /// declare the definition by hand when a property cannot be probed (an enum whose
    /// raw value is not a valid default, a custom `init(from:)`).
    ///
    /// For example:
    ///
    /// ```swift
    /// var tags = try TableDefinition(deriving: Tag.self)
    /// tags.index("tags_label", on: ["label"], unique: true)
    /// ```
    public init<E: Entity & Decodable>(deriving entity: E.Type) throws {
        let recorder = ColumnProbe.Recorder()
        do {
            _ = try E(from: ColumnProbe(recorder: recorder, entity: E.self))
        } catch let error as DALError {
            throw error
        } catch {
            throw DALError(
                .schemaMismatch,
                "the columns of \(E.self) cannot be derived from its Decodable conformance (\(error)); "
                    + "declare its tableDefinition() by hand",
                table: E.tableName, underlying: error)
        }
        self.init(E.tableName) { table in
            for column in recorder.columns {
                table.column(column.name, column.type, notNull: !column.isOptional)
            }
            table.primaryKey(E.primaryKey)
        }
        try validate()
    }
}

/// A `Decoder` that builds a throwaway instance while recording, for each property, its
/// column name, storage class and optionality.
struct ColumnProbe: Decoder {
    final class Recorder {
        var columns: [(name: String, type: ColumnType, isOptional: Bool)] = []
    }

    let recorder: Recorder
    let entity: any Entity.Type
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// Whether values decoded here are columns (the top level) or parts of a nested value.
    var isTopLevel = true

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(probe: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard !isTopLevel else { throw DALError(.schemaMismatch, "\(entity) does not decode from a keyed container") }
        return EmptyUnkeyed(codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        guard !isTopLevel else { throw DALError(.schemaMismatch, "\(entity) does not decode from a keyed container") }
        return SingleValue(probe: self)
    }

    /// A placeholder instance of `T`, and the column type it is stored as.
    func placeholder<T: Decodable>(_ type: T.Type) throws -> (T, ColumnType) {
        if let convertible = T.self as? any DatabaseValueConvertible.Type,
            let (value, columnType) = Self.placeholder(convertible),
            let typed = value as? T
        {
            return (typed, columnType)
        }
        var nested = self
        nested.isTopLevel = false
        return (try T(from: nested), .text)  // nested Codable values are stored as JSON text
    }

    private static func placeholder(_ type: any DatabaseValueConvertible.Type) -> (
        any DatabaseValueConvertible, ColumnType
    )? {
        let candidates: [DatabaseValue] = [
            .integer(0), .real(0), .text(""), .blob(Data()), .text("1970-01-01 00:00:00.000"),
            .text("00000000-0000-0000-0000-000000000000"), .text("0")
        ]
        for candidate in candidates {
            guard let value = type.init(databaseValue: candidate), let stored = try? value.databaseValue() else {
                continue
            }
            switch stored.storageClass {
            case .integer: return (value, .integer)
            case .real: return (value, .real)
            case .blob: return (value, .blob)
            default: return (value, .text)
            }
        }
        return nil
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let probe: ColumnProbe
        var codingPath: [any CodingKey] { probe.codingPath }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try value(T.self, key, optional: false)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try value(T.self, key, optional: true)
        }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try value(type, key, optional: true) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
            try value(type, key, optional: true)
        }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
            try value(type, key, optional: true)
        }

        private func value<T: Decodable>(_ type: T.Type, _ key: Key, optional: Bool) throws -> T {
            let (value, columnType) = try probe.placeholder(T.self)
            if probe.isTopLevel {
                probe.recorder.columns.append((key.stringValue, columnType, optional))
            }
            return value
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw DALError(.schemaMismatch, "\(probe.entity) decodes a nested container for \(key.stringValue)")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DALError(.schemaMismatch, "\(probe.entity) decodes a nested container for \(key.stringValue)")
        }

        func superDecoder() throws -> any Decoder { probe }
        func superDecoder(forKey key: Key) throws -> any Decoder { probe }
    }

    /// Nested arrays decode as empty.
    struct EmptyUnkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey]
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }

        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            throw DALError(.schemaMismatch, "no element to decode")
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw DALError(.schemaMismatch, "no element to decode")
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { self }
        mutating func superDecoder() throws -> any Decoder { throw DALError(.schemaMismatch, "no element to decode") }
    }

    /// Nested single values get placeholders too.
    struct SingleValue: SingleValueDecodingContainer {
        let probe: ColumnProbe
        var codingPath: [any CodingKey] { probe.codingPath }

        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try probe.placeholder(T.self).0 }
    }
}
