public import SwiftDALConnection
public import SwiftDALEntity

extension Database {
    /// Creates the table (and its indexes) described by `definition`.
    ///
    /// For example, `try db.create(orders, ifNotExists: true)`.
    public func create(_ definition: TableDefinition, ifNotExists: Bool = false) throws {
        for statement in try definition.createStatements(ifNotExists: ifNotExists) {
            try execute(sql: statement)
        }
    }

    /// Creates the table of `entity` from its ``Entity/tableDefinition()``.
    ///
    /// For example, `try db.create(table: Tag.self, ifNotExists: true)`.
    public func create<E: Entity>(table entity: E.Type, ifNotExists: Bool = false) throws {
        try create(try E.tableDefinition(), ifNotExists: ifNotExists)
    }

    /// Drops the table `name` (its indexes and triggers go with it).
    ///
    /// For example, `try db.drop(table: "sessions", ifExists: true)`.
    public func drop(table name: String, ifExists: Bool = false) throws {
        try execute(sql: "DROP TABLE \(ifExists ? "IF EXISTS " : "")\(quoteIdentifier(name))")
    }

    /// The names of the tables, sorted (SQLite's internal tables left out).
    ///
    /// For example, `let tables = try db.tableNames()`.
    public func tableNames() throws -> [String] {
        try fetchColumn(
            String.self,
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    }

    /// The table as the database describes it: columns, indexes and foreign keys.
    ///
    /// For example, `let users = try db.describe(table: "users")`.
    public func describe(table name: String) throws -> TableDescription {
        let columns = try columns(in: name)
        let indexes = try fetchAll(
            "SELECT name, \"unique\", origin FROM pragma_index_list(\(name)) ORDER BY name"
        ) { row in
            (name: try row.decode(String.self, at: 0), isUnique: try row.decode(Bool.self, at: 1), origin: try row.decode(String.self, at: 2))
        }.map { index in
            IndexInfo(
                name: index.name, isUnique: index.isUnique, origin: index.origin,
                columns: try fetchColumn(String.self, "SELECT name FROM pragma_index_info(\(index.name)) ORDER BY seqno"))
        }
        let keyRows = try fetchAll(
            "SELECT id, \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(\(name)) ORDER BY id, seq"
        ) { row in
            (id: try row.decode(Int.self, at: 0), table: try row.decode(String.self, at: 1), from: try row.decode(String.self, at: 2),
             to: try row.decode(String?.self, at: 3), onUpdate: try row.decode(String.self, at: 4), onDelete: try row.decode(String.self, at: 5))
        }
        var foreignKeys = [ForeignKeyInfo]()
        for id in Set(keyRows.map(\.id)).sorted() {
            let parts = keyRows.filter { $0.id == id }
            guard let first = parts.first else { continue }
            foreignKeys.append(
                ForeignKeyInfo(
                    columns: parts.map(\.from), table: first.table, referencedColumns: parts.map { $0.to ?? "" },
                    onUpdate: first.onUpdate, onDelete: first.onDelete))
        }
        return TableDescription(name: name, columns: columns, indexes: indexes, foreignKeys: foreignKeys)
    }
}

/// A table as the database describes it (``Database/describe(table:)``).
///
/// For example, `try db.describe(table: "users").columns.map(\.name)`.
public struct TableDescription: Sendable, Hashable {
    /// The table name.
    public let name: String
    /// The columns, in declaration order.
    public let columns: [ColumnInfo]
    /// The indexes, including those behind `UNIQUE` and primary-key constraints.
    public let indexes: [IndexInfo]
    /// The foreign keys.
    public let foreignKeys: [ForeignKeyInfo]

    /// The primary-key columns, in key order.
    public var primaryKey: [String] {
        columns.filter { $0.primaryKeyIndex > 0 }.sorted { $0.primaryKeyIndex < $1.primaryKeyIndex }.map(\.name)
    }
}

/// An index (`pragma_index_list`): `origin` is `c` (CREATE INDEX), `u` (UNIQUE) or `pk`.
///
/// For example, `description.indexes.first { $0.name == "users_age" }?.columns == ["age"]`.
public struct IndexInfo: Sendable, Hashable {
    /// The index name (SQLite names constraint indexes `sqlite_autoindex_…`).
    public let name: String
    /// Whether the index is unique.
    public let isUnique: Bool
    /// `c`, `u` or `pk`: how the index was made.
    public let origin: String
    /// The indexed columns, in order.
    public let columns: [String]
}

/// A foreign key (`pragma_foreign_key_list`).
///
/// For example, `description.foreignKeys.first?.onDelete == "CASCADE"`.
public struct ForeignKeyInfo: Sendable, Hashable {
    /// The referencing columns.
    public let columns: [String]
    /// The referenced table.
    public let table: String
    /// The referenced columns (empty names mean the referenced table's primary key).
    public let referencedColumns: [String]
    /// The `ON UPDATE` action, as SQLite spells it.
    public let onUpdate: String
    /// The `ON DELETE` action, as SQLite spells it.
    public let onDelete: String
}
