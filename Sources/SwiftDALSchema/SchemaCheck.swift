public import SwiftDALConnection
public import SwiftDALEntity

extension Database {
    /// Every difference between `definition` and the real table: missing or extra
    /// columns, type and nullability differences, a different primary key. Empty when
    /// they match.
    ///
    /// For example, `let problems = try db.schemaMismatches(for: UserInfo.tableDefinition())`.
    public func schemaMismatches(for definition: TableDefinition) throws -> [String] {
        guard try tableExists(definition.name) else { return ["table \(definition.name) does not exist"] }
        let real = try describe(table: definition.name)
        var problems = [String]()
        var realByName = [String: ColumnInfo]()
        for column in real.columns { realByName[column.name.lowercased()] = column }
        for column in definition.columns {
            guard let actual = realByName.removeValue(forKey: column.name.lowercased()) else {
                problems.append("column \(column.name) is missing")
                continue
            }
            let declared = actual.declaredType.uppercased()
            if !declared.contains(column.type.rawValue) {
                problems.append("column \(column.name) is \(declared.isEmpty ? "untyped" : declared), expected \(column.type.rawValue)")
            }
            let rowidAlias = definition.primaryKey.count == 1 && definition.primaryKey[0].lowercased() == column.name.lowercased()
                && column.type == .integer
            if column.isNotNull != actual.isNotNull && !rowidAlias {
                problems.append("column \(column.name) is \(actual.isNotNull ? "NOT NULL" : "nullable"), expected \(column.isNotNull ? "NOT NULL" : "nullable")")
            }
        }
        for extra in realByName.values.sorted(by: { $0.name < $1.name }) where extra.isNotNull && extra.defaultValueSQL == nil {
            problems.append("column \(extra.name) is NOT NULL without a default but the entity does not write it")
        }
        if !definition.primaryKey.isEmpty && definition.primaryKey.map({ $0.lowercased() }) != real.primaryKey.map({ $0.lowercased() }) {
            problems.append("primary key is (\(real.primaryKey.joined(separator: ", "))), expected (\(definition.primaryKey.joined(separator: ", ")))")
        }
        return problems
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
        let problems = try schemaMismatches(for: definition)
        guard problems.isEmpty else {
            throw DALError(
                .schemaMismatch, "\(entityName) does not match table \(definition.name): " + problems.joined(separator: "; "),
                table: definition.name)
        }
    }
}
