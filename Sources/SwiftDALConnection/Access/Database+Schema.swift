/// A column of a table, as the database itself describes it (SQLite's
/// `pragma_table_xinfo`, generated columns included; the catalogs of the server engines).
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
    /// The SQL text of the value the database writes into the column whenever an update
    /// changes another column of the row and does not write this one (MariaDB's and
    /// MySQL's `ON UPDATE current_timestamp()`), when there is one; `nil` on SQLite and
    /// PostgreSQL, where only a trigger does that.
    public let onUpdateSQL: String?

    /// Describes a column.
    ///
    /// For example, `ColumnInfo(name: "id", declaredType: "INTEGER", isNotNull: false, defaultValueSQL: nil, primaryKeyIndex: 1)`.
    public init(name: String, declaredType: String, isNotNull: Bool, defaultValueSQL: String?, primaryKeyIndex: Int) {
        self.init(
            name: name, declaredType: declaredType, isNotNull: isNotNull, defaultValueSQL: defaultValueSQL,
            primaryKeyIndex: primaryKeyIndex, onUpdateSQL: nil)
    }

    /// Describes a column whose value the database sets on every update of its row
    /// (``onUpdateSQL``).
    ///
    /// For example, `ColumnInfo(name: "last_update", declaredType: "timestamp", isNotNull: true, defaultValueSQL: "current_timestamp()", primaryKeyIndex: 0, onUpdateSQL: "current_timestamp()")`.
    public init(
        name: String, declaredType: String, isNotNull: Bool, defaultValueSQL: String?, primaryKeyIndex: Int,
        onUpdateSQL: String?
    ) {
        self.name = name
        self.declaredType = declaredType
        self.isNotNull = isNotNull
        self.defaultValueSQL = defaultValueSQL
        self.primaryKeyIndex = primaryKeyIndex
        self.onUpdateSQL = onUpdateSQL
    }

    /// Whether the database computes the column's value (`GENERATED ALWAYS AS (…)`,
    /// stored or virtual: its ``defaultValueSQL`` says so, as `GENERATED ALWAYS AS (expression)
    /// STORED` or `VIRTUAL`, on every engine; SQLite's expression is read from the table's
    /// `CREATE TABLE` text). It is read, never written: BaseDAL leaves it out of every
    /// `INSERT` and `UPDATE`.
    ///
    /// For example, `columns.filter(\.isGenerated).map(\.name)`.
    public var isGenerated: Bool { defaultValueSQL.map(Self.saysGenerated) ?? false }

    /// Whether a default's SQL text, as ``defaultValueSQL`` holds it, is a generated
    /// column's.
    package static func saysGenerated(_ defaultValueSQL: String) -> Bool {
        defaultValueSQL.utf8.count > 20 && defaultValueSQL.prefix(21).uppercased() == "GENERATED ALWAYS AS ("
    }
}

extension Database {
    /// The columns of `table` in declaration order, read from the database; throws
    /// ``DALError/Code/schemaMismatch`` when there is no such table or view.
    ///
    /// For example, `let columns = try db.columns(in: "users")`.
    public func columns(in table: String) throws -> [ColumnInfo] {
        try access.check()
        return try connection.columns(in: table)
    }

    /// Whether a table (or view) named `name` exists.
    ///
    /// For example, `if try !db.tableExists("users") { … }`.
    public func tableExists(_ name: String) throws -> Bool {
        try access.check()
        return try connection.tableExists(name)
    }
}

/// What kind of schema object a name denotes, as far as writes and rowids go.
///
/// For example, `try db.tableKind(of: "pairs") == .withoutRowIDTable`.
public enum TableKind: Sendable, Hashable {
    /// An ordinary table: every row has a rowid (an `INTEGER PRIMARY KEY` is its alias).
    case rowIDTable
    /// A `WITHOUT ROWID` table: rows are identified by their primary key only.
    case withoutRowIDTable
    /// A view: read-only unless `INSTEAD OF` triggers say otherwise; no rowid.
    case view
    /// A virtual table (FTS, R-Tree…).
    case virtualTable
}

extension Database {
    /// Whether `name` is a table (with or without rowid), a view or a virtual table;
    /// throws ``DALError/Code/schemaMismatch`` when there is no such object.
    ///
    /// For example, `if try db.tableKind(of: "orders") == .rowIDTable { … }`.
    public func tableKind(of name: String) throws -> TableKind {
        try access.check()
        return try connection.tableKind(of: name)
    }

    /// The column of table `name` that is its rowid under another name (SQLite's `INTEGER
    /// PRIMARY KEY`), if one is; `nil` on engines without rowids.
    package func rowIDAlias(in name: String) throws -> String? {
        try access.check()
        return try connection.rowIDAlias(in: name)
    }
}

/// A column's type affinity, by SQLite's rules for a declared type
/// (<https://sqlite.org/datatype3.html>, section 3.1): what SQLite converts stored values to.
///
/// For example, `ColumnAffinity(declaredType: "VARCHAR(20)") == .text` and
/// `ColumnAffinity(declaredType: "DATETIME") == .numeric`.
public enum ColumnAffinity: String, Sendable, Hashable {
    /// `INT` anywhere in the type: number-like text becomes an integer.
    case integer = "INTEGER"
    /// `CHAR`, `CLOB` or `TEXT`: numbers become text.
    case text = "TEXT"
    /// `BLOB`, or no type: values are stored as given.
    case blob = "BLOB"
    /// `REAL`, `FLOA` or `DOUB`: integers and number-like text become reals.
    case real = "REAL"
    /// Anything else (`NUMERIC`, `DECIMAL(10,2)`, `BOOLEAN`, `DATE`, `DATETIME`):
    /// number-like text becomes an integer or a real; other text stays text.
    case numeric = "NUMERIC"

    /// The affinity of a column declared as `declaredType`.
    public init(declaredType: String) {
        // As SQLite reads it: its bytes, ASCII letters compared without case (Unicode's
        // uppercasing would turn a dotless "ı" into "I"; SQLite does not).
        let type = String(
            decoding: declaredType.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
        func has(_ word: String) -> Bool { containsBytes(type, word) }
        if has("INT") {
            self = .integer
        } else if has("CHAR") || has("CLOB") || has("TEXT") {
            self = .text
        } else if has("BLOB") || type.isEmpty {
            self = .blob
        } else if has("REAL") || has("FLOA") || has("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }
}

extension ColumnInfo {
    /// The column's affinity (from ``declaredType``).
    ///
    /// For example, `try db.columns(in: "orders").first { $0.name == "placed_at" }?.affinity == .numeric`.
    public var affinity: ColumnAffinity { ColumnAffinity(declaredType: declaredType) }
}

extension Database {
    /// The plan the engine would use for `sql`, one line per step as the engine prints
    /// it: SQLite's `EXPLAIN QUERY PLAN` details (`SEARCH users USING INDEX …`, `SCAN
    /// orders`), PostgreSQL's `EXPLAIN` of the generic plan (`Index Scan using … on
    /// users`, `Seq Scan on orders`), planned with sequential scans discouraged, so that
    /// a table too small to be worth an index still shows whether one could be used.
    /// The statement is planned, never run; its parameters need no values.
    ///
    /// For example, `try db.queryPlan(of: "SELECT * FROM users WHERE email = ?")`.
    package func queryPlan(of sql: String) throws -> [String] {
        try access.check()
        return try connection.queryPlan(of: sql)
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

    /// A description of the table `name`.
    ///
    /// For example, `TableDescription(name: "tags", columns: columns, indexes: [], foreignKeys: [])`.
    public init(name: String, columns: [ColumnInfo], indexes: [IndexInfo], foreignKeys: [ForeignKeyInfo]) {
        self.name = name
        self.columns = columns
        self.indexes = indexes
        self.foreignKeys = foreignKeys
    }

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

    /// An index.
    ///
    /// For example, `IndexInfo(name: "users_age", isUnique: false, origin: "c", columns: ["age"])`.
    public init(name: String, isUnique: Bool, origin: String, columns: [String]) {
        self.name = name
        self.isUnique = isUnique
        self.origin = origin
        self.columns = columns
    }
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

    /// A foreign key.
    ///
    /// For example, `ForeignKeyInfo(columns: ["user_id"], table: "users", referencedColumns: ["id"],
    /// onUpdate: "NO ACTION", onDelete: "CASCADE")`.
    public init(columns: [String], table: String, referencedColumns: [String], onUpdate: String, onDelete: String) {
        self.columns = columns
        self.table = table
        self.referencedColumns = referencedColumns
        self.onUpdate = onUpdate
        self.onDelete = onDelete
    }
}
