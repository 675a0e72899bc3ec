import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    /// Writes the non-key columns of `entity` that differ from what the row with primary
    /// key `key` stores; returns `false` when no row has that key.
    ///
    /// Only changed columns are written, compared as the entity reads them: a value read
    /// and written back unchanged leaves the stored bytes as they were (a date stored as
    /// `'1948-12-08'`, a number stored as text, JSON with its own spacing), and a
    /// `NOT NULL` column with a default keeps its value when the entity holds `nil`.
    /// When nothing changed, nothing is written. Use ``updateFields(_:key:)-4v49t`` to write
    /// given values whatever is stored. With a ``ReadOnlyDAL/scope`` only a row inside it is found
    /// and updated; the tenant column is never written (an entity carrying another
    /// tenant's value throws ``DALError/Code/scopeViolation``; `nil` keeps the row's).
    ///
    /// For example, `user.age += 1; try users.update(user, key: user.id!)`.
    @discardableResult
    public func update(_ entity: T, key: some EntityKey) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            let columns = try encode(entity, mapping)
            try checkTenant(columns, mapping)
            let key = try mapping.keyValues(key)
            return try atomically(db) { try updateChangedColumns(columns, key: key, db, mapping) }
        }
    }

    /// Writes the non-key columns of `entity` that differ from what the row with the
    /// entity's own primary key stores (see ``update(_:key:)-7i5vy``); returns `false` when no
    /// row has it (or the key is `NULL`).
    ///
    /// For example, `try users.update(user)`.
    @discardableResult
    public func update(_ entity: T) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            let columns = try encode(entity, mapping)
            try checkTenant(columns, mapping)
            let key = mapping.primaryKey.map { columns.value(for: $0) ?? .null }
            guard !key.contains(where: \.isNull) else { return false }
            return try atomically(db) { try updateChangedColumns(columns, key: key, db, mapping) }
        }
    }

    /// Updates the row with `key` to `columns`, writing only the columns whose value
    /// differs from the stored one; `false` when there is no such row (in the scope).
    /// Runs inside a transaction (the read and the write see the same row). The tenant
    /// column is never written (the caller checked the entity's value).
    func updateChangedColumns(_ columns: ColumnValues, key: [DatabaseValue], _ db: Database, _ mapping: TableMapping)
        throws -> Bool
    {
        let keyAndScope = key + scopeValues
        guard let stored = try db.fetchFirst(lockedRowQuery(keyAndScope, mapping), { try storedRow($0, mapping) })
        else { return false }
        guard let query = try changedColumnsQuery(columns, stored: stored, keyAndScope: keyAndScope, mapping)
        else { return true }
        return try db.execute(query) > 0
    }

    /// The row with the key and scope values `keyAndScope`, locked until the transaction
    /// ends (on engines that lock rows), as `storedRow` reads it.
    func lockedRowQuery(_ keyAndScope: [DatabaseValue], _ mapping: TableMapping) -> SQL {
        SQL(
            sql: mapping.findByIdSQL + mapping.dialect.lockForUpdateClause,
            arguments: StatementArguments(values: keyAndScope))
    }

    /// A stored row as stored, and as this entity type reads it (then written again): a
    /// value is unchanged when it equals either.
    func storedRow(_ row: RowView, _ mapping: TableMapping) throws -> StoredRow {
        let canonical = (try? decode(row, mapping)).flatMap { try? encodeUnvalidated($0, mapping) }
        return StoredRow(raw: try row.copy(), canonical: canonical)
    }

    /// The `UPDATE` of the columns of `columns` that differ from `stored` (`nil` when none
    /// does), for the row with the key and scope values `keyAndScope`. Never the key or
    /// the tenant column.
    func changedColumnsQuery(
        _ columns: ColumnValues, stored: StoredRow, keyAndScope: [DatabaseValue], _ mapping: TableMapping
    ) throws -> SQL? {
        let keySet = Set(mapping.primaryKey)
        var names = [String]()
        var values = [DatabaseValue]()
        for (index, name) in columns.names.enumerated() {
            let column = try mapping.column(name)
            if keySet.contains(column) || column == mapping.scope.tenantColumn { continue }
            let value = columns.values[index]
            // Compared as stored (bytes, bit patterns), not as Swift compares the values:
            // "Caf\u{E9}" and "Cafe\u{301}" are equal strings, 0.0 and -0.0 equal doubles.
            if let position = mapping.selectedPosition(of: column), stored.raw.values[position].isIdentical(to: value) {
                continue
            }
            if let canonical = stored.canonical?.value(for: name), canonical.isIdentical(to: value) { continue }
            if value.isNull && mapping.keepsStoredValueForNull(column) { continue }
            names.append(column)
            values.append(value)
        }
        guard !names.isEmpty else { return nil }
        let sql = try mapping.sql(.update(columns: names)) {
            TableMapping.updateSQL(mapping.quotedTable, names, mapping.scopedKeyPredicate, mapping.dialect)
        }
        return SQL(sql: sql, arguments: StatementArguments(values: values + keyAndScope))
    }

    /// Writes the given columns (names checked against the table) of the row with
    /// primary key `key`, whatever they store now; returns `false` when no row has it.
    /// With a ``ReadOnlyDAL/scope`` only a row inside it is written, and the tenant column cannot be
    /// named (``DALError/Code/scopeViolation``).
    ///
    /// For example, `try users.updateFields(["age": 32, "bio": nil], key: 42)`.
    @discardableResult
    public func updateFields(_ fields: [String: (any DatabaseValueConvertible)?], key: some EntityKey) throws -> Bool {
        guard !fields.isEmpty else {
            throw DALError(.invalidValue, "updateFields needs at least one column", table: tableName)
        }
        return try withMapping(writing: true) { db, mapping in
            try db.execute(try updateFieldsQuery(fields, key: key, mapping)) > 0
        }
    }

    /// Writes column `fieldName` (checked against the table) of the row with primary key
    /// `key`, whatever it stores now; returns `false` when no row has it. The one-column
    /// ``updateFields(_:key:)-4v49t`` without a dictionary: the value keeps its type, and
    /// the statement is the one prepared for that column. With a ``ReadOnlyDAL/scope``
    /// only a row inside it is written, and the tenant column cannot be named
    /// (``DALError/Code/scopeViolation``).
    ///
    /// For example, `try users.updateField("score", to: 4.5, key: 42)`, or
    /// `try users.updateField("bio", to: nil as String?, key: 42)` to store `NULL`.
    @discardableResult
    public func updateField(_ fieldName: String, to value: some DatabaseValueConvertible, key: some EntityKey) throws
        -> Bool
    {
        try withMapping(writing: true) { db, mapping in
            try db.execute(try updateFieldQuery(fieldName, { try value.databaseValue() }, key: key, mapping)) > 0
        }
    }

    /// The `UPDATE` of `updateFields(fields, key: key)` (`fields` not empty).
    @usableFromInline
    func updateFieldsQuery(
        _ fields: [String: (any DatabaseValueConvertible)?], key: some EntityKey, _ mapping: TableMapping
    ) throws -> SQL {
        // One column (the usual call): no sort, no lock, no hashing.
        if fields.count == 1, let field = fields.first {
            return try updateFieldQuery(field.key, { try field.value?.databaseValue() ?? .null }, key: key, mapping)
        }
        let sorted = fields.sorted { $0.key < $1.key }
        let sql = try mapping.sql(.updateFields(sorted.map(\.key))) { try updateFieldsSQL(sorted.map(\.key), mapping) }
        var values = [DatabaseValue]()
        values.reserveCapacity(sorted.count + mapping.primaryKeyWidth + scopeValues.count)
        for (_, value) in sorted { values.append(try value?.databaseValue() ?? .null) }
        values += try mapping.keyValues(key)
        values += scopeValues
        return SQL(sql: sql, arguments: StatementArguments(values: values))
    }

    /// Throws unless `updateField` may write column `fieldName`: a column of the table, not
    /// the tenant column.
    @usableFromInline
    func checkUpdatableField(_ fieldName: String, _ mapping: TableMapping) throws {
        _ = try mapping.updateFieldSQL(fieldName)
    }

    /// The `UPDATE` of column `fieldName` to `value()` in the row with primary key `key`
    /// (the column is checked before the value is converted, as `updateFields` does).
    @usableFromInline
    func updateFieldQuery(
        _ fieldName: String, _ value: () throws -> DatabaseValue, key: some EntityKey, _ mapping: TableMapping
    ) throws -> SQL {
        let sql = try mapping.updateFieldSQL(fieldName)
        let value = try value()
        // No scope: the value, then the key's arguments, in one array.
        if !mapping.isScoped { return SQL(sql: sql, arguments: try mapping.keyArguments(key).prepending(value)) }
        var values = [DatabaseValue]()
        values.reserveCapacity(1 + mapping.primaryKeyWidth + scopeValues.count)
        values.append(value)
        // Appended one by one: `+=` of two- and zero-element arrays cost more.
        for value in try mapping.keyValues(key) { values.append(value) }
        for value in scopeValues { values.append(value) }
        return SQL(sql: sql, arguments: StatementArguments(values: values))
    }

    /// The UPDATE of `updateFields` for the columns `fieldNames` (checked against the
    /// table, each named once, not the tenant column).
    private func updateFieldsSQL(_ fieldNames: [String], _ mapping: TableMapping) throws -> String {
        let names = try fieldNames.map { try mapping.column($0) }
        guard Set(names).count == names.count else {  // resolved spellings: the same column twice
            throw DALError(.invalidColumn, "updateFields names a column twice", table: mapping.table)
        }
        if let tenant = mapping.scope.tenantColumn, names.contains(tenant) {
            throw DALError(
                .scopeViolation,
                "updateFields cannot write the tenant column \(tenant): a row never changes tenant",
                table: mapping.table, column: tenant)
        }
        return TableMapping.updateSQL(mapping.quotedTable, names, mapping.scopedKeyPredicate, mapping.dialect)
    }
}

/// A row `update` compares an entity with: as stored, and as the entity type reads it.
struct StoredRow {
    let raw: Row
    let canonical: ColumnValues?
}
