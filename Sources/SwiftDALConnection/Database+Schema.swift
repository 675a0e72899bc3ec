/// A column of a table, as the database itself describes it (`pragma_table_info`).
///
/// For example, `try db.columns(in: "users").map(\.name)`.
public struct ColumnInfo: Sendable, Hashable {
    /// The column name, as declared.
    public let name: String
    /// The declared type (`INTEGER`, `TEXT`, `VARCHAR(20)`…), possibly empty.
    public let declaredType: String
    /// Whether the column is declared `NOT NULL`.
    public let isNotNull: Bool
    /// The default value's SQL text, when there is one.
    public let defaultValueSQL: String?
    /// The 1-based position of the column in the primary key, or 0 when not part of it.
    public let primaryKeyIndex: Int

    /// Describes a column.
    ///
    /// For example, `ColumnInfo(name: "id", declaredType: "INTEGER", isNotNull: false, defaultValueSQL: nil, primaryKeyIndex: 1)`.
    public init(name: String, declaredType: String, isNotNull: Bool, defaultValueSQL: String?, primaryKeyIndex: Int) {
        self.name = name
        self.declaredType = declaredType
        self.isNotNull = isNotNull
        self.defaultValueSQL = defaultValueSQL
        self.primaryKeyIndex = primaryKeyIndex
    }
}

extension Database {
    /// The columns of `table` in declaration order, read from the database; throws
    /// ``DALError/Code/schemaMismatch`` when there is no such table or view.
    ///
    /// For example, `let columns = try db.columns(in: "users")`.
    public func columns(in table: String) throws -> [ColumnInfo] {
        let columns = try fetchAll(
            "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(\(table)) ORDER BY cid"
        ) { row in
            ColumnInfo(
                name: try row.decode(String.self, at: 0), declaredType: try row.decode(String?.self, at: 1) ?? "",
                isNotNull: try row.decode(Bool.self, at: 2), defaultValueSQL: try row.decode(String?.self, at: 3),
                primaryKeyIndex: try row.decode(Int.self, at: 4))
        }
        guard !columns.isEmpty else {
            throw DALError(.schemaMismatch, "the database has no table or view named \(table)", table: table)
        }
        return columns
    }

    /// Whether a table (or view) named `name` exists.
    ///
    /// For example, `if try !db.tableExists("users") { … }`.
    public func tableExists(_ name: String) throws -> Bool {
        try fetchScalar(
            Bool.self,
            "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = \(name) COLLATE NOCASE)"
        ) ?? false
    }
}
