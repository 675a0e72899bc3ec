public import SwiftDALConnection
public import SwiftDALEntity

extension Database {
    /// Every difference between `definition` and the real table that would make reads or
    /// writes fail: missing columns, types whose values SQLite would store in a form the
    /// entity cannot read back, nullability that would fail, a different primary key,
    /// and `NOT NULL` columns without a default that the entity does not write. Empty
    /// when they match.
    ///
    /// Types follow SQLite's affinity rules (``ColumnAffinity``), not the spelling of
    /// the declared type: a `REAL` property on a `NUMERIC` or `DOUBLE` column is fine, and
    /// so is a text property (a date, a decimal) on a `DATETIME` or `DECIMAL` column; an
    /// integer or real property on a `TEXT` column is not (SQLite would store the number
    /// as text), nor a text property on an `INTEGER` or `REAL` column (number-like text
    /// would become a number). Nullability: an optional property on a `NOT NULL` column is
    /// fine when the column has a default (`nil` means the default) or is the rowid; a
    /// non-optional property on a nullable primary-key column is fine (SQLite allows a
    /// `NULL` key only through a legacy quirk).
    ///
    /// For example, `let problems = try db.schemaMismatches(for: UserInfo.tableDefinition())`.
    public func schemaMismatches(for definition: TableDefinition) throws -> [String] {
        guard try tableExists(definition.name) else { return ["table \(definition.name) does not exist"] }
        let real = try describe(table: definition.name)
        var problems = [String]()
        var realByName = [String: ColumnInfo]()
        for column in real.columns { realByName[column.name.identifierKey] = column }
        let realKey = Set(real.primaryKey.map { $0.identifierKey })
        for column in definition.columns {
            guard let actual = realByName.removeValue(forKey: column.name.identifierKey) else {
                problems.append("column \(column.name) is missing")
                continue
            }
            if let problem = Self.typeProblem(writing: column.type, into: actual) {
                problems.append("column \(column.name): \(problem)")
            }
            let isKey = realKey.contains(column.name.identifierKey)
            if column.isNotNull && !actual.isNotNull && !isKey {
                problems.append("column \(column.name) is nullable, but the entity cannot hold NULL")
            }
            let rowidAlias =
                isKey && realKey.count == 1 && actual.affinity == .integer
                && actual.declaredType.uppercased() == "INTEGER"
            if !column.isNotNull && actual.isNotNull && actual.defaultValueSQL == nil && !rowidAlias {
                problems.append("column \(column.name) is NOT NULL without a default, but the entity may hold nil")
            }
        }
        return problems + Self.unwrittenAndKeyProblems(realByName, real, expectedKey: definition.primaryKey)
    }

    /// Every difference between an entity known only by its column list (an explicit
    /// mapping without a ``TableDefinition``, as `swiftdal-gen` writes them) and the real
    /// table: columns the list names that the table lacks, `NOT NULL` columns without a
    /// default that the entity does not write, and a different primary key (when
    /// `primaryKey` is not empty). Types and nullability are not checked: the list does
    /// not say them. Empty when they match.
    ///
    /// For example, `let problems = try db.schemaMismatches(forColumns: ["id", "name"], primaryKey: ["id"], table: "artists")`.
    public func schemaMismatches(forColumns names: [String], primaryKey: [String], table: String) throws -> [String] {
        guard try tableExists(table) else { return ["table \(table) does not exist"] }
        let real = try describe(table: table)
        var realByName = [String: ColumnInfo]()
        for column in real.columns { realByName[column.name.identifierKey] = column }
        var problems = [String]()
        for name in names where realByName.removeValue(forKey: name.identifierKey) == nil {
            problems.append("column \(name) is missing")
        }
        return problems + Self.unwrittenAndKeyProblems(realByName, real, expectedKey: primaryKey)
    }

    /// What both checks find once the entity's columns are matched: the table's columns
    /// left (`unwritten`) that are `NOT NULL` without a default, which the entity's inserts
    /// would fail on, and a primary key other than `expectedKey` (when that names one).
    private static func unwrittenAndKeyProblems(
        _ unwritten: [String: ColumnInfo], _ real: TableDescription, expectedKey: [String]
    ) -> [String] {
        var problems = [String]()
        for extra in unwritten.values.sorted(by: { $0.name < $1.name })
        where extra.isNotNull && extra.defaultValueSQL == nil {
            problems.append("column \(extra.name) is NOT NULL without a default but the entity does not write it")
        }
        if !expectedKey.isEmpty && expectedKey.map({ $0.identifierKey }) != real.primaryKey.map({ $0.identifierKey }) {
            problems.append(
                "primary key is (\(real.primaryKey.joined(separator: ", "))), expected (\(expectedKey.joined(separator: ", ")))"
            )
        }
        return problems
    }

    /// Why values of `type` written into `column` would not read back, or `nil`.
    private static func typeProblem(writing type: ColumnType, into column: ColumnInfo) -> String? {
        let affinity = column.affinity
        let declared = column.declaredType.isEmpty ? "untyped" : column.declaredType.uppercased()
        switch (type, affinity) {
        case (.integer, .text), (.real, .text):
            return "\(declared) has TEXT affinity: SQLite would store the entity's \(type.rawValue) values as text"
        case (.text, .integer), (.text, .real):
            return "\(declared) has \(affinity.rawValue) affinity: SQLite would store number-like text as a number"
        default:
            return nil
        }
    }

    /// Throws ``DALError/Code/schemaMismatch`` naming every difference between the
    /// entity's table definition and the real table.
    ///
    /// For example, at startup: `try db.checkSchema(of: UserInfo.self)`.
    public func checkSchema<E: Entity>(of entity: E.Type) throws {
        try checkSchema(try E.tableDefinition(), for: "\(E.self)")
    }

    /// Throws ``DALError/Code/schemaMismatch`` naming every difference between
    /// `definition` and the real table; `entityName` names the code's side in the message.
    ///
    /// For example, `try db.checkSchema(definition, for: "UserInfo")`.
    public func checkSchema(_ definition: TableDefinition, for entityName: String) throws {
        try Self.throwMismatches(try schemaMismatches(for: definition), of: entityName, table: definition.name)
    }

    /// Throws ``DALError/Code/schemaMismatch`` naming every difference between the columns
    /// and key of an entity known only by its column list (see
    /// ``schemaMismatches(forColumns:primaryKey:table:)``) and the real table.
    package func checkSchema(columns names: [String], primaryKey: [String], table: String, for entityName: String)
        throws
    {
        try Self.throwMismatches(
            try schemaMismatches(forColumns: names, primaryKey: primaryKey, table: table), of: entityName, table: table)
    }

    private static func throwMismatches(_ problems: [String], of entityName: String, table: String) throws {
        guard problems.isEmpty else {
            throw DALError(
                .schemaMismatch, "\(entityName) does not match table \(table): " + problems.joined(separator: "; "),
                table: table)
        }
    }
}
