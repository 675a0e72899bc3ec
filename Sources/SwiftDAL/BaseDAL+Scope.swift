import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    // MARK: Purging and restoring (soft delete)

    /// Deletes the row with primary key `id` for good, soft-deleted or not (within the
    /// DAL's tenant); returns `false` when there was none. On a DAL without a soft-delete
    /// column it is ``deleteById(_:)-8r1bc``.
    ///
    /// For example, `try notes.purgeById(7)`.
    @discardableResult
    public func purgeById(_ id: some EntityKey) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            var arguments = try mapping.keyArguments(id)
            var predicate = mapping.keyPredicate
            if let tenant = mapping.scope.tenantPredicate {
                predicate += " AND \(tenant)"
                try arguments.append(contentsOf: StatementArguments(values: scopeValues))
            }
            return try db.execute(
                SQL(sql: "DELETE FROM \(mapping.quotedTable) WHERE \(predicate)", arguments: arguments)) > 0
        }
    }

    /// Deletes the rows matching `condition` for good, soft-deleted or not (within the
    /// DAL's tenant: the condition is ANDed with it in parentheses), and returns how
    /// many. An empty condition is refused (write `"1 = 1"` to mean every row).
    ///
    /// For example, `try notes.purgeByCondition("deleted_at < \(Date().addingTimeInterval(-30 * 86_400))")`.
    @discardableResult
    public func purgeByCondition(_ condition: SQL) throws -> Int {
        guard !condition.isEmpty else {
            throw DALError(
                .invalidValue, "purgeByCondition refuses an empty condition; write \"1 = 1\" to purge every row",
                table: tableName)
        }
        return try withMapping(writing: true) { db, mapping in
            try db.execute(
                try conditionQuery(
                    mapping, { .purge(condition: $0) }, prefix: "DELETE", condition: condition, rows: .anyDeletionState)
            )
        }
    }

    /// Brings back the soft-deleted row with primary key `id` (its soft-delete column set
    /// to `NULL`), within the DAL's tenant; returns `false` when no deleted row has that
    /// key. Throws ``DALError/Code/unsupportedOperation`` on a DAL without a soft-delete
    /// column.
    ///
    /// For example, `try notes.restoreById(7)`.
    @discardableResult
    public func restoreById(_ id: some EntityKey) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            guard let column = mapping.scope.quotedSoftDeleteColumn,
                let deleted = mapping.scope.predicate(.deletedOnly, named: false)
            else {
                throw DALError(
                    .unsupportedOperation, "restoreById needs a soft-delete column in the DAL's scope",
                    table: mapping.table)
            }
            var arguments = try mapping.keyArguments(id)
            try arguments.append(contentsOf: StatementArguments(values: scopeValues))
            let sql = "UPDATE \(mapping.quotedTable) SET \(column) = NULL WHERE \(mapping.keyPredicate) AND \(deleted)"
            return try db.execute(SQL(sql: sql, arguments: arguments)) > 0
        }
    }

    // MARK: Internals

    /// `columns` with the DAL's tenant in the tenant column (added when the entity does
    /// not encode it, set when it is `NULL`); an entity carrying another tenant's value
    /// throws ``DALError/Code/scopeViolation``. Unchanged without a tenant scope.
    func applyingTenant(_ columns: consuming ColumnValues, _ mapping: TableMapping) throws -> ColumnValues {
        guard let column = mapping.scope.tenantColumn, let tenant = scopeValues.first else { return columns }
        let key = column.identifierKey
        guard let index = columns.names.firstIndex(where: { $0.identifierKey == key }) else {
            var added = columns
            added.append(tenant, for: column)
            return added
        }
        let value = columns.values[index]
        // As stored: a tenant value equal to the DAL's only by Swift's canonical string
        // equivalence is stored as other bytes, which the scope's predicate does not match.
        if value.isIdentical(to: tenant) { return columns }
        guard value.isNull else { throw tenantMismatch(column, mapping) }
        var filled = ColumnValues(capacity: columns.count)
        for (position, name) in columns.names.enumerated() {
            filled.append(position == index ? tenant : columns.values[position], for: name)
        }
        return filled
    }

    /// Throws ``DALError/Code/scopeViolation`` when `columns` carry a tenant other than
    /// the DAL's (`NULL`, or the tenant column left out, means "keep the row's").
    func checkTenant(_ columns: ColumnValues, _ mapping: TableMapping) throws {
        guard let column = mapping.scope.tenantColumn, let tenant = scopeValues.first,
            let value = columns.value(for: column), !value.isNull, !value.isIdentical(to: tenant)
        else { return }
        throw tenantMismatch(column, mapping)
    }

    private func tenantMismatch(_ column: String, _ mapping: TableMapping) -> DALError {
        DALError(
            .scopeViolation, "the entity's \(column) is not this DAL's tenant: a DAL writes only its own tenant's rows",
            table: mapping.table, column: column)
    }

    /// `"deleted_at" = CURRENT_TIMESTAMP` (or `= ?` with the mark bound) for a DAL with a
    /// soft-delete column; `nil` for one without.
    func softDeleteAssignment(_ mapping: TableMapping, named: Bool = false) -> SQL? {
        guard let column = mapping.scope.quotedSoftDeleteColumn else { return nil }
        switch mapping.scope.deletionMark {
        case .currentTimestamp:
            return SQL(sql: "\(column) = CURRENT_TIMESTAMP")
        case .value(let value):
            if named {
                return SQL(
                    sql: "\(column) = :swiftdal_deletion_mark",
                    arguments: StatementArguments(namedValues: ["swiftdal_deletion_mark": value]))
            }
            return SQL(sql: "\(column) = ?", arguments: StatementArguments(value: value))
        }
    }
}

// The async forms of the operations above (kept here, beside their synchronous twins).
extension BaseDAL {
    /// For example, `try await notes.purgeById(7)`.
    @discardableResult
    public func purgeById(_ id: some EntityKey) async throws -> Bool {
        try await onWriter { try self.purgeById(id) }
    }

    /// For example, `try await notes.purgeByCondition("deleted_at < \(cutoff)")`.
    @discardableResult
    public func purgeByCondition(_ condition: SQL) async throws -> Int {
        try await onWriter { try self.purgeByCondition(condition) }
    }

    /// For example, `try await notes.restoreById(7)`.
    @discardableResult
    public func restoreById(_ id: some EntityKey) async throws -> Bool {
        try await onWriter { try self.restoreById(id) }
    }
}
