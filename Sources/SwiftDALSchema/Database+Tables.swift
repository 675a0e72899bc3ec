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
        sql += dialect.columnType(affinity: column.type.rawValue, inKey: column.isUnique)
        if column.isNotNull { sql += " NOT NULL" }
        if column.isUnique { sql += " UNIQUE" }
        if let defaultValue = column.defaultValue {
            sql += " DEFAULT " + defaultValue.sql(in: engine)
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
        try dialect.tableNames(self)
    }

    /// The table as the database describes it: columns, indexes and foreign keys.
    ///
    /// For example, `let users = try db.describe(table: "users")`.
    public func describe(table name: String) throws -> TableDescription {
        let columns = try columns(in: name)
        return try dialect.describe(table: name, columns: columns, self)
    }
}
