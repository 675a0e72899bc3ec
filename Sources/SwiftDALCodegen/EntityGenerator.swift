public import SwiftDAL

/// Writes the Swift source of explicitly mapped entities and their table DALs from a
/// database's own schema, so that a table gets the fast mapping (columns read by index,
/// no `Codable`) without anyone writing the mapping by hand.
///
/// For each table: an entity struct (`users` → `UserInfo`) with one property per column,
/// a memberwise initializer, ``SwiftDAL/Entity/init(row:)`` and ``SwiftDAL/Entity/encodeColumns(to:)``,
/// and a `BaseDAL` subclass (`UserDAL`); for a view or a table without a primary key,
/// the entity declares an empty key and its DAL is a `ReadOnlyDAL` subclass (finds,
/// counts, paging; no writes). Column types follow SQLite's affinity rules:
/// `INTEGER` → `Int64`, `TEXT`/`VARCHAR` → `String`, `REAL` → `Double`, `BLOB` → `Data`,
/// with `DECIMAL`/`NUMERIC`/`MONEY`… → `Decimal`, `BOOLEAN` → `Bool`,
/// `DATE`/`DATETIME`/`TIMESTAMP` → `Date`; columns without a type and other names of the
/// NUMERIC affinity (`TIME`, `JSON`…) → ``SwiftDAL/DatabaseValue`` (whatever SQLite stored).
/// Nullable columns are optionals (`Optional<DatabaseValue>` too), and so are `NOT NULL`
/// columns with a default: `nil` there means the default on insert, and an update keeps
/// the stored value. A rowid table's `INTEGER PRIMARY KEY` is `Optional<Int64>`, `nil`
/// until SQLite assigns it on insert. Only `NOT NULL` columns without a default and the
/// other key columns are required arguments of the memberwise initializer.
///
/// For example:
///
/// ```swift
/// let queue = try DatabaseQueue(path: "Fixtures/sample.sqlite", mode: .readOnly)
/// let source = try queue.read { db in try EntityGenerator().source(for: ["users"], in: db) }
/// try source.write(toFile: "Sources/MyDAL/UserInfo.swift", atomically: true, encoding: .utf8)
/// ```
public struct EntityGenerator: Sendable {
    /// The options in use.
    public var options: Options

    /// A generator with `options`.
    ///
    /// For example, `let generator = EntityGenerator(options: .init(access: .internal))`.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// What would be generated for `table` (a table or a view): the names and types,
    /// column by column, and whether its DAL is read-only. The type names are the table's
    /// own (the stem by rule or from ``Options/typeStems``); ``source(for:in:origin:)``
    /// numbers names that two tables would share. Throws
    /// ``SwiftDAL/DALError/Code/schemaMismatch`` for a missing table, options that
    /// ``Options/validate()`` refuses, or a type name that would hide one the generated
    /// code uses, and ``SwiftDAL/SQLiteError`` for a view SQLite cannot describe (one whose table
    /// was dropped).
    ///
    /// For example, `try generator.model(of: "users", in: db).properties.map(\.name)`.
    public func model(of table: String, in db: Database) throws -> EntityModel {
        try options.validate()
        return try model(
            of: db.describe(table: table), stem: options.typeStems[table] ?? Naming.typeStem(ofTable: table), in: db)
    }

    /// ``model(of:in:)`` for a table already described, with its type stem.
    private func model(of description: TableDescription, stem: String, in db: Database) throws -> EntityModel {
        let table = description.name
        let primaryKey = description.primaryKey
        let kind = try db.tableKind(of: table)
        // BaseDAL updates and deletes by key: a view, or a table without a key, gets a ReadOnlyDAL.
        let readOnlyReason: EntityModel.ReadOnlyReason? =
            kind == .view ? .view : primaryKey.isEmpty ? .noPrimaryKey : nil
        for typeName in [stem + options.entitySuffix, stem + options.dalSuffix] {
            guard SwiftIdentifier.isTypeName(typeName) else {
                throw DALError(
                    .schemaMismatch, "\(typeName) is not a Swift type name; choose another stem or suffix", table: table
                )
            }
            guard !Self.namesTheCodeUses.contains(typeName) else {
                throw DALError(
                    .schemaMismatch,
                    "\(typeName) would hide the type of that name the generated code uses; give table \(table) "
                        + "a type stem of its own (--stem)",
                    table: table)
            }
        }
        let rowIDKey = Self.rowIDKey(of: description, kind: kind, engine: db.engine)
        var used = Set<String>()
        var properties = [EntityModel.Property]()
        for (position, column) in description.columns.enumerated() {
            var name = Naming.propertyName(ofColumn: column.name, position: position)
            if used.contains(name) {
                var number = 2
                while used.contains(name + String(number)) { number += 1 }
                name += String(number)
            }
            used.insert(name)
            var (typeName, needsFoundation) = ColumnTypeMapping.swiftType(
                forDeclaredType: column.declaredType, engine: db.engine)
            let isRowIDKey = column.name == rowIDKey
            // A key the database assigns is the `Int64` `insert2` returns and `findById`
            // takes (a `Decimal` is no key type), even where its type holds more (MariaDB's
            // `BIGINT UNSIGNED AUTO_INCREMENT`: `insert2` refuses a key past `Int64.max`).
            if isRowIDKey, typeName == "Decimal" {
                typeName = "Int64"
                needsFoundation = false
            }
            let isKey = column.primaryKeyIndex > 0
            // A WITHOUT ROWID table's key columns are NOT NULL whether declared so or not.
            let isNotNull = column.isNotNull || (kind == .withoutRowIDTable && isKey)
            // Required: a key column SQLite does not assign (SQLite lets a rowid table's
            // other keys hold NULL, a legacy bug it keeps, but no row should), and a NOT
            // NULL column without a default. Otherwise `nil` means something: NULL, the
            // column's default on insert (BaseDAL leaves the column out), the rowid to come.
            let isOptional = isRowIDKey || (!isKey && (!isNotNull || column.defaultValueSQL != nil))
            properties.append(
                EntityModel.Property(
                    column: column.name, name: name, typeName: typeName, isOptional: isOptional,
                    isAssignedByDatabase: isRowIDKey, needsFoundation: needsFoundation,
                    declaredType: column.declaredType, isNotNull: isNotNull, defaultValueSQL: column.defaultValueSQL,
                    onUpdateSQL: column.onUpdateSQL))
        }
        return EntityModel(
            tableName: table, entityName: stem + options.entitySuffix, dalName: stem + options.dalSuffix,
            primaryKey: primaryKey, properties: properties, readOnlyReason: readOnlyReason)
    }

    /// The Swift source for `tables` and views (when `nil`: every table and view of the
    /// database but SQLite's own, virtual tables' shadow tables and SwiftDAL's
    /// `swiftdal_migrations`), one entity and one DAL each, in the order given (by name
    /// when `nil`). Tables get a ``SwiftDAL/BaseDAL``; views and tables without a primary key get a
    /// ``SwiftDAL/ReadOnlyDAL`` (finds, counts, paging; no writes), and the header lists them and
    /// why. A view SQLite cannot describe (its table was dropped) is left out of the
    /// whole-database file, and named in the header with SQLite's message; asked for by
    /// name, it throws. A PostgreSQL partition is left out too (its rows are read and
    /// written through its partitioned table's DAL), and the header names it with its
    /// table. `origin` is named in the header comment (say how to regenerate the file). Type names that two tables would share are numbered and listed in the
    /// header (see ``model(of:in:)``); two hand-chosen stems that clash are an error
    /// naming both tables, and so is a table listed twice. Throws for the reasons of
    /// ``model(of:in:)`` too.
    ///
    /// For example, `try generator.source(for: nil, in: db, origin: "swift run swiftdal-gen --database app.sqlite")`.
    public func source(for tables: [String]? = nil, in db: Database, origin: String? = nil) throws -> String {
        try options.validate()
        var descriptions = [TableDescription]()
        var leftOut = [SourceWriter.LeftOut]()
        if let tables {
            try SchemaObjects.checkDistinct(tables)
            // Each table as the schema spells it (`order details` given for `Order Details`
            // on SQLite, which matches names in any case): the generated `tableName` must
            // also name it on an engine where quoted names are exact.
            let known = try SchemaObjects.names(in: db)
            descriptions = try tables.map { name in
                let sameLetters = known.filter { $0.lowercased() == name.lowercased() }
                let spelled = known.contains(name) ? name : sameLetters.count == 1 ? sameLetters[0] : name
                return try db.describe(table: spelled)
            }
        } else {
            for name in try SchemaObjects.names(in: db) {
                do {
                    descriptions.append(try db.describe(table: name))
                } catch {
                    leftOut.append(SourceWriter.LeftOut(name: name, why: .undescribable(SchemaObjects.reason(error))))
                }
            }
            // Named in the header, so that a reader looking for one finds why it has no DAL.
            leftOut += try db.dialect.partitions(db).map {
                SourceWriter.LeftOut(name: $0.name, why: .partition(of: $0.table))
            }
        }
        let names = try TypeNames(for: descriptions.map(\.name), options: options)
        let models = try descriptions.map { description in
            try model(of: description, stem: names.stems[description.name] ?? "", in: db)
        }
        return SourceWriter(access: options.access).file(
            models, origin: origin, leftOut: leftOut, renamings: names.renamings)
    }

    /// The column that is the rowid, which SQLite assigns on insert: the single
    /// `INTEGER PRIMARY KEY` of a rowid table. SQLite makes no index for that key, and
    /// one for every other key (`INT PRIMARY KEY`, `INTEGER PRIMARY KEY DESC`, a `TEXT`
    /// key), which tells the quirks apart without parsing the `CREATE TABLE`.
    ///
    /// On PostgreSQL: the single integer primary-key column that the database fills in
    /// (an identity column, or one with a default such as a serial's `nextval`).
    static func rowIDKey(of description: TableDescription, kind: TableKind, engine: DatabaseEngine) -> String? {
        guard kind == .rowIDTable else { return nil }
        return engine.dialect.generatedKeyColumn(of: description)
    }

    /// The types the generated code names: an entity or DAL of one of these names would
    /// hide it (a table `bases` would otherwise give `class BaseDAL: BaseDAL<BaseInfo>`).
    static let namesTheCodeUses: Set<String> = [
        "BaseDAL", "Entity", "RowView", "ColumnValues", "DatabaseValue", "Data", "Date", "Int64", "String", "Double",
        "Bool", "Optional", "Hashable", "Sendable", "Decimal", "ReadOnlyDAL", "SwiftDAL", "Foundation", "UUID"
    ]
}
