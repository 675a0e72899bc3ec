public import SwiftDALConnection

/// A table row as a Swift value: the table it lives in, its primary key, and how it
/// maps to columns.
///
/// Two mappings are available:
/// - **Codable (no mapping code)**: a `Codable` struct maps each property to the column
///   of the same name (nested `Codable` values are stored as JSON text; an enum with a
///   raw value as that raw value). Columns are read by name.
/// - **Explicit (hot paths)**: list ``columnNames``, read them by index in
///   ``init(row:)`` and write them in the same order in ``encodeColumns(to:)``: no
///   `Codable` machinery runs.
///
/// Leave the primary key `nil` (an optional property) to let SQLite assign it on insert.
///
/// For the fastest explicit mapping (what `swiftdal-gen` writes), read every column in
/// ``init(row:)`` and pass them to the memberwise initializer in one call, and spell
/// optional stored properties `Optional<T>`: a `T?` property starts as `nil` before any
/// initializer runs, so initializers store it twice, and the optimizer then keeps a copy
/// of the whole entity (a retain and a release per string) on every row read.
///
/// For example, a plain `Codable` entity:
///
/// ```swift
/// struct Tag: Entity, Codable {
///     static let tableName = "tags"
///     var id: Int64?
///     var label: String
/// }
/// ```
///
/// and an explicitly mapped one:
///
/// ```swift
/// struct Point: Entity {
///     static let tableName = "points"
///     static let columnNames: [String]? = ["id", "x", "y"]
///     var id: Optional<Int64>, x: Double, y: Double   // Optional<T>: see above
///     init(id: Int64?, x: Double, y: Double) { self.id = id; self.x = x; self.y = y }
///     init(row: RowView) throws { try self.init(id: row[0], x: row[1], y: row[2]) }
///     func encodeColumns(to columns: inout ColumnValues) throws {
///         try columns.encode(id, for: "id")
///         try columns.encode(x, for: "x")
///         try columns.encode(y, for: "y")
///     }
/// }
/// ```
public protocol Entity: Sendable {
    /// The table's name.
    static var tableName: String { get }

    /// The primary key column(s), in key order. Default: `["id"]`.
    static var primaryKey: [String] { get }

    /// For an explicit mapping, the columns ``init(row:)`` reads (by index, in this
    /// order) and ``encodeColumns(to:)`` writes. `nil` (the default) means "decided by
    /// name": every column of the table is selected and read by name.
    static var columnNames: [String]? { get }

    /// Creates an entity from a row. With ``columnNames`` set, the row's columns are
    /// exactly those, in that order; otherwise they are the table's columns.
    init(row: RowView) throws

    /// Writes the entity's column values (with ``columnNames`` set: all of them, in that order).
    func encodeColumns(to columns: inout ColumnValues) throws

    /// The table this entity lives in, for creating it and checking it against the
    /// database. Default: derived from the `Decodable` conformance
    /// (``TableDefinition/init(deriving:)``); an explicitly mapped entity declares it.
    static func tableDefinition() throws -> TableDefinition
}

extension Entity {
    /// The default key: one column, `id`.
    public static var primaryKey: [String] { ["id"] }
    /// The default column list: `nil`, every column (`SELECT *`), read by name.
    public static var columnNames: [String]? { nil }

    /// Without a `Decodable` conformance there is nothing to derive from: declare it.
    public static func tableDefinition() throws -> TableDefinition {
        throw DALError(
            .schemaMismatch, "\(Self.self) declares no tableDefinition(); add one to create or check its table",
            table: tableName)
    }
}

extension Entity where Self: Decodable {
    /// Derived from the properties: see ``TableDefinition/init(deriving:)``.
    public static func tableDefinition() throws -> TableDefinition {
        try TableDefinition(deriving: Self.self)
    }
}

extension Entity where Self: Decodable {
    /// Decodes the entity from the row's columns by name (the Codable mapping); an error
    /// names the entity's table.
    public init(row: RowView) throws {
        do {
            try self.init(from: RowDecoder(row: row))
        } catch var error as DALError where error.table == nil {
            error.table = Self.tableName
            throw error
        }
    }
}

extension Entity where Self: Encodable {
    /// Encodes the entity's properties as columns of the same names (the Codable mapping).
    public func encodeColumns(to columns: inout ColumnValues) throws {
        let storage = ColumnEncoder.Storage(columns)
        try encode(to: ColumnEncoder(storage: storage, entity: Self.self))
        columns = storage.result
    }
}
