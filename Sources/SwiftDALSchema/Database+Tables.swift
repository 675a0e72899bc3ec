public import SwiftDALConnection
public import SwiftDALEntity

extension Database {
    /// Creates the table (and its indexes) described by `definition`.
    ///
    /// For example, `try db.create(orders, ifNotExists: true)`.
    public func create(_ definition: TableDefinition, ifNotExists: Bool = false) throws {
        for statement in try definition.createStatements(ifNotExists: ifNotExists, engine: engine) {
            try execute(sql: statement)
        }
    }

    /// Creates the table of `entity` from its ``Entity/tableDefinition()``.
    ///
    /// For example, `try db.create(table: Tag.self, ifNotExists: true)`.
    public func create<E: Entity>(table entity: E.Type, ifNotExists: Bool = false) throws {
        try create(try E.tableDefinition(), ifNotExists: ifNotExists)
    }

    /// Adds `column` to the table `table` (`ALTER TABLE … ADD COLUMN`), its type in this
    /// engine's SQL. (SQLite refuses a new `NOT NULL` column without a default, and a
    /// `UNIQUE` one.)
    ///
    /// For example, `try db.addColumn(ColumnDefinition(name: "avatar", type: .blob), to: "users")`.
    public func addColumn(_ column: ColumnDefinition, to table: String) throws {
        var sql = "ALTER TABLE \(quoteIdentifier(table)) ADD COLUMN \(quoteIdentifier(column.name)) "
        sql += engine == .postgres ? column.type.postgresType : column.type.rawValue
        if column.isNotNull { sql += " NOT NULL" }
        if column.isUnique { sql += " UNIQUE" }
        if let defaultValue = column.defaultValue {
            sql += " DEFAULT " + (engine == .postgres ? defaultValue.postgresSQL : defaultValue.sql)
        }
        if let check = column.check { sql += " CHECK (\(check))" }
        try execute(sql: sql)
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
        if engine == .postgres {
            return try fetchColumn(
                String.self,
                """
                SELECT c.relname FROM pg_class c WHERE c.relkind IN ('r', 'p') AND pg_table_is_visible(c.oid)
                    AND c.relnamespace <> 'pg_catalog'::regnamespace ORDER BY c.relname
                """)
        }
        return try fetchColumn(
            String.self,
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
    }

    /// The table as the database describes it: columns, indexes and foreign keys.
    ///
    /// For example, `let users = try db.describe(table: "users")`.
    public func describe(table name: String) throws -> TableDescription {
        let columns = try columns(in: name)
        if engine == .postgres { return try describePostgres(name, columns) }
        let indexes = try fetchAll(
            "SELECT name, \"unique\", origin FROM pragma_index_list(\(name)) ORDER BY name"
        ) { row in
            (
                name: try row.decode(String.self, at: 0), isUnique: try row.decode(Bool.self, at: 1),
                origin: try row.decode(String.self, at: 2)
            )
        }.map { index in
            IndexInfo(
                name: index.name, isUnique: index.isUnique, origin: index.origin,
                columns: try fetchColumn(
                    String.self, "SELECT name FROM pragma_index_info(\(index.name)) ORDER BY seqno"))
        }
        let keyRows = try fetchAll(
            "SELECT id, \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(\(name)) ORDER BY id, seq"
        ) { row in
            (
                id: try row.decode(Int.self, at: 0), table: try row.decode(String.self, at: 1),
                from: try row.decode(String.self, at: 2),
                to: try row.decode(String?.self, at: 3), onUpdate: try row.decode(String.self, at: 4),
                onDelete: try row.decode(String.self, at: 5)
            )
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

extension Database {
    /// `describe` from PostgreSQL's catalog.
    private func describePostgres(_ name: String, _ columns: [ColumnInfo]) throws -> TableDescription {
        let table = quoteIdentifier(name)
        let indexes = try fetchAll(
            """
            SELECT i.relname, x.indisunique, CASE WHEN x.indisprimary THEN 'pk' WHEN con.oid IS NOT NULL THEN 'u' ELSE 'c' END,
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
                       JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum ORDER BY k.n), chr(31))
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
            LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.contype = 'u'
            WHERE x.indrelid = to_regclass(\(table)) ORDER BY i.relname
            """
        ) { row in
            IndexInfo(
                name: try row.decode(String.self, at: 0), isUnique: try row.decode(Bool.self, at: 1),
                origin: try row.decode(String.self, at: 2),
                columns: try row.decode(String.self, at: 3).split(separator: "\u{1F}").map(String.init))
        }
        let actions = ["a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"]
        let foreignKeys = try fetchAll(
            """
            SELECT (SELECT relname FROM pg_class WHERE oid = c.confrelid),
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n), chr(31)),
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n)
                       JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n), chr(31)),
                   c.confupdtype::text, c.confdeltype::text
            FROM pg_constraint c WHERE c.conrelid = to_regclass(\(table)) AND c.contype = 'f' ORDER BY c.conname
            """
        ) { row in
            ForeignKeyInfo(
                columns: try row.decode(String.self, at: 1).split(separator: "\u{1F}").map(String.init),
                table: try row.decode(String.self, at: 0),
                referencedColumns: try row.decode(String.self, at: 2).split(separator: "\u{1F}").map(String.init),
                onUpdate: actions[try row.decode(String.self, at: 3)] ?? "NO ACTION",
                onDelete: actions[try row.decode(String.self, at: 4)] ?? "NO ACTION")
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
