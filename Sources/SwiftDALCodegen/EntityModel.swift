/// One table as ``EntityGenerator`` will write it.
///
/// For example, `model.properties.first { $0.column == "user_id" }?.name == "userID"`.
public struct EntityModel: Sendable, Hashable {
    /// A column as a stored property.
    ///
    /// For example, `property.declaration == "var createdAt: Date"`.
    public struct Property: Sendable, Hashable {
        /// The column name, as declared.
        public let column: String
        /// The property name (unescaped: reserved words get backticks when written).
        public let name: String
        /// The Swift type, without optionality (`Int64`, `String`, `Decimal`, `DatabaseValue`…).
        public let typeName: String
        /// Whether the property is an optional: a nullable column, a `NOT NULL` column with
        /// a default (`nil` means the default on insert, the stored value on update), or
        /// the rowid key.
        public let isOptional: Bool
        /// Whether SQLite assigns the value on insert (a rowid table's `INTEGER PRIMARY KEY`).
        public let isAssignedByDatabase: Bool
        /// Whether the type comes from Foundation.
        public let needsFoundation: Bool
        /// The column's declared type, as the schema spells it.
        public let declaredType: String
        /// Whether the column is `NOT NULL` (a `WITHOUT ROWID` table's key columns are).
        public let isNotNull: Bool
        /// The column's `DEFAULT`, as SQL text, when it has one.
        public let defaultValueSQL: String?
        /// What the database writes into the column on every update of its row that does
        /// not write it (MariaDB's `ON UPDATE current_timestamp()`), as SQL text.
        public let onUpdateSQL: String?

        /// The declaration after the access level, e.g. `var bio: Optional<String>`.
        ///
        /// Optionals are spelled `Optional<T>`, not `T?`: a `T?` stored property starts as
        /// `nil` before any initializer runs, so every initializer first stores `nil` and
        /// then assigns the real value, and the optimizer then keeps a copy of the whole
        /// entity (a retain and a release per string) on every row read. Measured on the
        /// benchmark: W2 and W4 about 5% faster spelled this way.
        public var declaration: String {
            "var \(SwiftIdentifier.escaped(name)): " + (isOptional ? "Optional<\(typeName)>" : typeName)
        }
    }

    /// The table name.
    public let tableName: String
    /// The entity type's name.
    public let entityName: String
    /// The DAL class's name.
    public let dalName: String
    /// The primary-key columns, in key order (none for a view or a table without a key).
    public let primaryKey: [String]
    /// One property per column, in column order (the order rows are read in).
    public let properties: [Property]
    /// Why the DAL is a ``SwiftDAL/ReadOnlyDAL`` (no writes), or `nil` for a ``SwiftDAL/BaseDAL``.
    public let readOnlyReason: ReadOnlyReason?

    /// Why a table's DAL is read-only: ``SwiftDAL/BaseDAL`` updates and deletes rows by primary key.
    ///
    /// For example, `try generator.model(of: "product_sales", in: db).readOnlyReason == .view`.
    public enum ReadOnlyReason: Sendable, Hashable {
        /// A view.
        case view
        /// A table (or virtual table) without a primary key.
        case noPrimaryKey
    }
}
