import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    /// Writes every non-key column of `entity` to the row with primary key `key`;
    /// returns `false` when no row has that key.
    ///
    /// For example, `user.age += 1; try users.update(user, key: user.id!)`.
    @discardableResult
    public func update(_ entity: T, key: some EntityKey) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            try update(encode(entity, mapping), key: mapping.keyValues(key), db, mapping)
        }
    }

    /// Writes every non-key column of `entity` to the row with the entity's own primary
    /// key; returns `false` when no row has it (or the key is `NULL`).
    ///
    /// For example, `try users.update(user)`.
    @discardableResult
    public func update(_ entity: T) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            let columns = try encode(entity, mapping)
            let key = mapping.primaryKey.map { columns.value(for: $0) ?? .null }
            guard !key.contains(where: \.isNull) else { return false }
            return try update(columns, key: key, db, mapping)
        }
    }

    private func update(_ columns: ColumnValues, key: [SQLiteValue], _ db: Database, _ mapping: TableMapping) throws -> Bool {
        if mapping.isExplicit, let sql = mapping.updateSQL {
            var values = columns.values
            for position in mapping.keyPositions.sorted(by: >) { values.remove(at: position) }
            return try db.execute(SQL(sql: sql, arguments: StatementArguments(values: values + key))) > 0
        }
        // Codable mapping: the SQL follows the encoded properties (validated, cached per shape).
        let keySet = Set(mapping.primaryKey)
        let resolved = try columns.names.map { try mapping.column($0) }
        var values = [SQLiteValue]()
        for (column, value) in zip(resolved, columns.values) where !keySet.contains(column) {
            values.append(value)
        }
        guard !values.isEmpty else { return try exists(db, mapping, key) }
        let sql = try mapping.sql(.update(columns: columns.names)) {
            TableMapping.updateSQL(mapping.quotedTable, resolved.filter { !keySet.contains($0) }, mapping.keyPredicate, dialect)
        }
        return try db.execute(SQL(sql: sql, arguments: StatementArguments(values: values + key))) > 0
    }

    /// Writes the given columns (names checked against the table) of the row with
    /// primary key `key`; returns `false` when no row has it.
    ///
    /// For example, `try users.updateFields(["age": 32, "bio": nil], key: 42)`.
    @discardableResult
    public func updateFields(_ fields: [String: (any SQLiteValueConvertible)?], key: some EntityKey) throws -> Bool {
        guard !fields.isEmpty else {
            throw DALError(.invalidValue, "updateFields needs at least one column", table: tableName)
        }
        return try withMapping(writing: true) { db, mapping in
            let sorted = fields.sorted { $0.key < $1.key }
            let sql = try mapping.sql(.updateFields(sorted.map(\.key))) {
                let names = try sorted.map { try mapping.column($0.key) }
                guard Set(names.map { $0.lowercased() }).count == names.count else {
                    throw DALError(.invalidColumn, "updateFields names a column twice", table: mapping.table)
                }
                return TableMapping.updateSQL(mapping.quotedTable, names, mapping.keyPredicate, dialect)
            }
            var values = [SQLiteValue]()
            values.reserveCapacity(sorted.count + mapping.primaryKey.count)
            for (_, value) in sorted { values.append(try value?.sqliteValue() ?? .null) }
            values += try mapping.keyValues(key)
            return try db.execute(SQL(sql: sql, arguments: StatementArguments(values: values))) > 0
        }
    }

    func exists(_ db: Database, _ mapping: TableMapping, _ key: [SQLiteValue]) throws -> Bool {
        let sql = "SELECT EXISTS(SELECT 1 FROM \(mapping.quotedTable) WHERE \(mapping.keyPredicate))"
        return try db.fetchScalar(Bool.self, SQL(sql: sql, arguments: StatementArguments(values: key))) ?? false
    }
}
