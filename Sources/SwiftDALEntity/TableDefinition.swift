import Foundation
public import SwiftDALConnection
public import SwiftDALSQLite

/// A column's declared type (its SQLite affinity).
///
/// For example, `t.column("age", .integer, notNull: true)`.
public enum ColumnType: String, Sendable, Hashable {
    /// `INTEGER` affinity: integers, Booleans (PostgreSQL: `BIGINT`).
    case integer = "INTEGER"
    /// `REAL` affinity: floating-point numbers (PostgreSQL: `DOUBLE PRECISION`).
    case real = "REAL"
    /// `TEXT` affinity: strings, dates, UUIDs, decimals (PostgreSQL: `TEXT`).
    case text = "TEXT"
    /// `BLOB` affinity: bytes, stored as given (PostgreSQL: `BYTEA`).
    case blob = "BLOB"
    /// `NUMERIC` affinity: SQLite turns number-like text into `INTEGER` or `REAL` (PostgreSQL: `NUMERIC`).
    case numeric = "NUMERIC"
}

/// A column's default: a value (written as an SQL literal, quotes escaped) or an SQL
/// expression written by the developer (`CURRENT_TIMESTAMP`).
///
/// For example, `.value(0)` or `.expression("CURRENT_TIMESTAMP")`.
public enum DefaultValue: Sendable, Hashable {
    /// A constant, written as an escaped SQL literal: `.value(0)`, `.value("n/a")`.
    case value(DatabaseValue)
    /// An SQL expression, written as given in parentheses: `.expression("CURRENT_TIMESTAMP")`. Write it in your code; never build it from input.
    case expression(String)

    /// The SQL text of this default in `engine`'s DDL.
    ///
    /// For example, `DefaultValue.value(.blob(Data([1]))).sql(in: .sqlite) == "X'01'"`.
    public func sql(in engine: DatabaseEngine) -> String {
        switch self {
        case .expression(let expression): "(\(expression))"
        case .value(let value): engine.dialect.defaultLiteral(value)
        }
    }

    /// The SQL text of this default (SQLite's).
    public var sql: String {
        switch self {
        case .expression(let expression): "(\(expression))"
        case .value(let value): sqlLiteral(value)
        }
    }
}

/// What a foreign key does when the referenced row is deleted or its key updated.
///
/// For example, `onDelete: .cascade`.
public enum ForeignKeyAction: String, Sendable, Hashable {
    /// `NO ACTION`: the change fails if it leaves a dangling reference at the end of the statement (the default).
    case noAction = "NO ACTION"
    /// `RESTRICT`: the change fails at once if rows refer to the row.
    case restrict = "RESTRICT"
    /// `SET NULL`: the referring columns become `NULL`.
    case setNull = "SET NULL"
    /// `SET DEFAULT`: the referring columns take their default.
    case setDefault = "SET DEFAULT"
    /// `CASCADE`: referring rows are deleted (or their key updated) with the row.
    case cascade = "CASCADE"
}

/// One column of a ``TableDefinition``.
///
/// For example, `ColumnDefinition(name: "email", type: .text, isNotNull: true, isUnique: true)`.
public struct ColumnDefinition: Sendable, Hashable {
    /// The column name (quoted when rendered).
    public var name: String
    /// The declared type.
    public var type: ColumnType
    /// Whether the column is `NOT NULL`.
    public var isNotNull: Bool
    /// Whether the column is `UNIQUE`.
    public var isUnique: Bool
    /// The `DEFAULT`, if any.
    public var defaultValue: DefaultValue?
    /// A `CHECK` expression on this column, SQL written by the developer.
    public var check: String?
    /// A `COLLATE` sequence (`NOCASE`, `RTRIM`…), if any.
    public var collation: String?

    /// A column; see the properties.
    public init(
        name: String, type: ColumnType, isNotNull: Bool = false, isUnique: Bool = false,
        defaultValue: DefaultValue? = nil, check: String? = nil, collation: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isNotNull = isNotNull
        self.isUnique = isUnique
        self.defaultValue = defaultValue
        self.check = check
        self.collation = collation
    }
}

/// A foreign key of a ``TableDefinition``.
///
/// For example, `ForeignKeyDefinition(columns: ["user_id"], table: "users", referencedColumns: ["id"], onDelete: .cascade)`.
public struct ForeignKeyDefinition: Sendable, Hashable {
    /// The referencing columns of this table.
    public var columns: [String]
    /// The referenced table.
    public var table: String
    /// The referenced columns, in the same order as ``columns``.
    public var referencedColumns: [String]
    /// What happens when the referenced row is deleted.
    public var onDelete: ForeignKeyAction
    /// What happens when the referenced key is updated.
    public var onUpdate: ForeignKeyAction

    /// A foreign key; see the properties.
    public init(
        columns: [String], table: String, referencedColumns: [String], onDelete: ForeignKeyAction = .noAction,
        onUpdate: ForeignKeyAction = .noAction
    ) {
        self.columns = columns
        self.table = table
        self.referencedColumns = referencedColumns
        self.onDelete = onDelete
        self.onUpdate = onUpdate
    }
}

/// An index of a ``TableDefinition``.
///
/// For example, `IndexDefinition(name: "users_age", columns: ["age"])`.
public struct IndexDefinition: Sendable, Hashable {
    /// The index name.
    public var name: String
    /// The indexed columns, in order.
    public var columns: [String]
    /// Whether the index is `UNIQUE`.
    public var isUnique: Bool

    /// An index; see the properties.
    public init(name: String, columns: [String], isUnique: Bool = false) {
        self.name = name
        self.columns = columns
        self.isUnique = isUnique
    }
}

/// A table as code: columns with types, nullability, defaults, uniqueness and checks,
/// a primary key (single or composite, optionally `AUTOINCREMENT`), table checks,
/// foreign keys with actions, and indexes. It renders the `CREATE TABLE` and
/// `CREATE INDEX` statements; every name is quoted. Check and default expressions are
/// SQL written by the developer (never values from users).
///
/// For example:
///
/// ```swift
/// let orders = TableDefinition("orders") { t in
///     t.column("id", .integer)
///     t.column("user_id", .integer, notNull: true)
///     t.column("quantity", .integer, notNull: true, check: "quantity > 0")
///     t.primaryKey(["id"])
///     t.foreignKey(["user_id"], references: "users", columns: ["id"], onDelete: .cascade)
///     t.index("orders_user", on: ["user_id"])
/// }
/// try db.create(orders)
/// ```
public struct TableDefinition: Sendable, Hashable {
    /// The table name.
    public var name: String
    /// The columns, in declaration order.
    public private(set) var columns: [ColumnDefinition] = []
    /// The primary-key columns, in key order.
    public private(set) var primaryKey: [String] = []
    /// Whether the single `INTEGER` primary key is `AUTOINCREMENT`.
    public private(set) var isAutoincrement = false
    /// Multi-column `UNIQUE` constraints.
    public private(set) var uniqueKeys: [[String]] = []
    /// Table `CHECK` expressions.
    public private(set) var checks: [String] = []
    /// Foreign keys.
    public private(set) var foreignKeys: [ForeignKeyDefinition] = []
    /// Indexes, created after the table.
    public private(set) var indexes: [IndexDefinition] = []
    /// Whether the table is `WITHOUT ROWID` (it then needs a primary key).
    public var isWithoutRowID = false

    /// A table named `name`, described by `build`.
    ///
    /// For example, `TableDefinition("tags") { t in t.column("label", .text, notNull: true) }`.
    public init(_ name: String, _ build: (inout TableDefinition) -> Void = { _ in }) {
        self.name = name
        build(&self)
    }

    /// Adds a column.
    ///
    /// For example, `t.column("created_at", .text, notNull: true, default: .expression("CURRENT_TIMESTAMP"))`.
    public mutating func column(
        _ name: String, _ type: ColumnType, notNull: Bool = false, unique: Bool = false,
        default defaultValue: DefaultValue? = nil,
        check: String? = nil, collation: String? = nil
    ) {
        columns.append(
            ColumnDefinition(
                name: name, type: type, isNotNull: notNull, isUnique: unique, defaultValue: defaultValue, check: check,
                collation: collation))
    }

    /// Adds a column described elsewhere.
    ///
    /// For example, `t.add(ColumnDefinition(name: "bio", type: .text))`.
    public mutating func add(_ column: ColumnDefinition) {
        columns.append(column)
    }

    /// Changes the type of column `column`, keeping the rest of its definition: for
    /// instance a `Decimal` a derived definition made `TEXT` (exact, compared as text), to
    /// `.numeric` (compared as a number). Throws ``DALError/Code/invalidColumn`` when the
    /// table has no such column.
    ///
    /// For example:
    ///
    /// ```swift
    /// var products = try TableDefinition(deriving: Product.self)
    /// try products.changeType(ofColumn: "price", to: .numeric)
    /// ```
    public mutating func changeType(ofColumn column: String, to type: ColumnType) throws {
        columns[try index(ofColumn: column)].type = type
    }

    /// Sets (or with `nil` removes) the default of column `column`, keeping the rest of
    /// its definition: for instance a default for a column of a definition derived from a
    /// Codable entity, which has none. Throws ``DALError/Code/invalidColumn`` when the
    /// table has no such column.
    ///
    /// For example:
    ///
    /// ```swift
    /// var orders = try TableDefinition(deriving: Order.self)
    /// try orders.setDefault(.value("new"), ofColumn: "status")
    /// ```
    public mutating func setDefault(_ value: DefaultValue?, ofColumn column: String) throws {
        columns[try index(ofColumn: column)].defaultValue = value
    }

    /// The position of column `column`; throws ``DALError/Code/invalidColumn`` when the
    /// table has none.
    private func index(ofColumn column: String) throws -> Int {
        guard let index = columns.firstIndex(where: { $0.name == column }) else {
            throw DALError(.invalidColumn, "table \(name) has no column \(column)", table: name, column: column)
        }
        return index
    }

    /// Sets the primary key. A single `INTEGER` column becomes SQLite's rowid alias;
    /// `autoincrement` forbids reusing the ids of deleted rows.
    ///
    /// For example, `t.primaryKey(["user_id", "tag"])`.
    public mutating func primaryKey(_ columns: [String], autoincrement: Bool = false) {
        primaryKey = columns
        isAutoincrement = autoincrement
    }

    /// Adds a `UNIQUE` constraint over several columns.
    ///
    /// For example, `t.unique(["user_id", "product"])`.
    public mutating func unique(_ columns: [String]) {
        uniqueKeys.append(columns)
    }

    /// Adds a table `CHECK` constraint (developer-written SQL).
    ///
    /// For example, `t.check("ends_at > starts_at")`.
    public mutating func check(_ expression: String) {
        checks.append(expression)
    }

    /// Adds a foreign key.
    ///
    /// For example, `t.foreignKey(["user_id"], references: "users", columns: ["id"], onDelete: .cascade)`.
    public mutating func foreignKey(
        _ columns: [String], references table: String, columns referenced: [String],
        onDelete: ForeignKeyAction = .noAction,
        onUpdate: ForeignKeyAction = .noAction
    ) {
        foreignKeys.append(
            ForeignKeyDefinition(
                columns: columns, table: table, referencedColumns: referenced, onDelete: onDelete, onUpdate: onUpdate))
    }

    /// Adds an index.
    ///
    /// For example, `t.index("users_age", on: ["age"])`.
    public mutating func index(_ name: String, on columns: [String], unique: Bool = false) {
        indexes.append(IndexDefinition(name: name, columns: columns, isUnique: unique))
    }

    /// A copy under another name, without indexes (for table rebuilds).
    package func renamed(_ newName: String) -> TableDefinition {
        var copy = self
        copy.name = newName
        copy.indexes = []
        return copy
    }

    /// The column named `name` (ASCII case-insensitive).
    public func column(named name: String) -> ColumnDefinition? {
        columns.first { $0.name.identifierKey == name.identifierKey }
    }

    /// Checks that every column named by a key, constraint or index exists.
    public func validate() throws {
        guard !columns.isEmpty else {
            throw DALError(.schemaMismatch, "table \(name) has no columns", table: name)
        }
        var seen = Set<String>()
        for column in columns where !seen.insert(column.name.identifierKey).inserted {
            throw DALError(
                .schemaMismatch, "table \(name) declares column \(column.name) twice", table: name, column: column.name)
        }
        let named = primaryKey + uniqueKeys.flatMap { $0 } + foreignKeys.flatMap(\.columns) + indexes.flatMap(\.columns)
        for column in named where !seen.contains(column.identifierKey) {
            throw DALError(.invalidColumn, "table \(name) has no column \(column)", table: name, column: column)
        }
        if isAutoincrement && !(primaryKey.count == 1 && column(named: primaryKey[0])?.type == .integer) {
            throw DALError(.schemaMismatch, "AUTOINCREMENT needs a single INTEGER primary key", table: name)
        }
    }

    /// The `CREATE TABLE` statement followed by one `CREATE INDEX` per index, in the SQL
    /// of `engine`.
    ///
    /// On PostgreSQL the types are `BIGINT`, `DOUBLE PRECISION`, `TEXT`, `BYTEA` and
    /// `NUMERIC`; a single `INTEGER` primary key (SQLite's rowid alias) becomes
    /// `BIGINT GENERATED BY DEFAULT AS IDENTITY`; `WITHOUT ROWID` has no meaning there and
    /// is left out; SQLite's `NOCASE` and `RTRIM` collations have no equivalent and throw
    /// ``DALError/Code/unsupportedOperation`` (`BINARY` is `"C"`).
    ///
    /// For example, `try definition.createStatements(ifNotExists: true, engine: .postgres)`.
    public func createStatements(ifNotExists: Bool = false, engine: DatabaseEngine = .sqlite) throws -> [String] {
        try validate()
        let dialect = engine.dialect
        let rowidAlias = primaryKey.count == 1 && column(named: primaryKey[0])?.type == .integer && !isWithoutRowID
        var keyed = Set(
            (primaryKey + uniqueKeys.flatMap { $0 } + foreignKeys.flatMap(\.columns) + indexes.flatMap(\.columns))
                .map(\.identifierKey))
        keyed.formUnion(columns.filter(\.isUnique).map(\.name.identifierKey))
        var parts = [String]()
        for column in columns {
            let type = dialect.columnType(
                affinity: column.type.rawValue, inKey: keyed.contains(column.name.identifierKey))
            var part = "\(quoteIdentifier(column.name)) \(type)"
            if rowidAlias && column.name.identifierKey == primaryKey[0].identifierKey {
                part += dialect.generatedKeyClause(autoincrement: isAutoincrement)
            }
            if column.isNotNull { part += " NOT NULL" }
            if column.isUnique { part += " UNIQUE" }
            if let defaultValue = column.defaultValue { part += " DEFAULT \(defaultValue.sql(in: engine))" }
            if let check = column.check { part += " CHECK (\(check))" }
            if let collation = column.collation { part += " COLLATE \(try dialect.collation(collation, table: name))" }
            parts.append(part)
        }
        if !primaryKey.isEmpty && !rowidAlias {
            parts.append("PRIMARY KEY (\(primaryKey.map(quoteIdentifier).joined(separator: ", ")))")
        }
        for key in uniqueKeys {
            parts.append("UNIQUE (\(key.map(quoteIdentifier).joined(separator: ", ")))")
        }
        for check in checks {
            parts.append("CHECK (\(check))")
        }
        for key in foreignKeys {
            parts.append(
                "FOREIGN KEY (\(key.columns.map(quoteIdentifier).joined(separator: ", "))) REFERENCES \(quoteIdentifier(key.table)) "
                    + "(\(key.referencedColumns.map(quoteIdentifier).joined(separator: ", "))) "
                    + "ON DELETE \(key.onDelete.rawValue) ON UPDATE \(key.onUpdate.rawValue)")
        }
        var table =
            "CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(quoteIdentifier(name)) (\n    "
            + parts.joined(separator: ",\n    ") + "\n)"
        if isWithoutRowID && dialect.declaresWithoutRowID { table += " WITHOUT ROWID" }
        return [table]
            + indexes.map { index in
                "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(ifNotExists ? "IF NOT EXISTS " : "")\(quoteIdentifier(index.name)) "
                    + "ON \(quoteIdentifier(name)) (\(index.columns.map(quoteIdentifier).joined(separator: ", ")))"
            }
    }
}

extension ColumnType {
    /// The type `engine`'s DDL gives a column of this affinity, for SQL written by hand
    /// (``TableDefinition`` and `db.addColumn` write it themselves).
    ///
    /// For example, `"ALTER TABLE users ADD COLUMN avatar \(ColumnType.blob.sql(in: db.engine))"`
    /// (`BLOB` on SQLite, `BYTEA` on PostgreSQL).
    public func sql(in engine: DatabaseEngine) -> String {
        engine.dialect.columnType(affinity: rawValue, inKey: false)
    }

    /// The PostgreSQL type for this affinity.
    @available(*, deprecated, message: "the engine writes its types: createStatements(engine:), db.addColumn")
    public var postgresType: String {
        switch self {
        case .integer: "BIGINT"
        case .real: "DOUBLE PRECISION"
        case .text: "TEXT"
        case .blob: "BYTEA"
        case .numeric: "NUMERIC"
        }
    }
}

extension DefaultValue {
    /// The SQL text of this default on PostgreSQL (a blob as `bytea`, infinities as
    /// `'Infinity'`).
    @available(*, deprecated, message: "the engine writes its defaults: sql(in:)")
    public var postgresSQL: String {
        switch self {
        case .expression(let expression): return "(\(expression))"
        case .value(.blob(let data)): return "'\\x" + data.map { String(format: "%02x", $0) }.joined() + "'::bytea"
        case .value(.real(let double)) where !double.isFinite: return double > 0 ? "'Infinity'" : "'-Infinity'"
        case .value(let value): return sqlLiteral(value)
        }
    }
}
