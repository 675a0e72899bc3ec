import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    /// Deletes the row with primary key `id`; returns `false` when there was none.
    ///
    /// With a soft-delete ``ReadOnlyDAL/scope`` the row is not deleted but marked (its soft-delete
    /// column set, see ``DeletionMark``) and reads skip it from then on; `false` when it
    /// was already marked. With a tenant scope only the DAL's tenant's row is touched.
    /// ``purgeById(_:)-3hd0t`` deletes for good.
    ///
    /// For example, `try users.deleteById(42)`.
    @discardableResult
    public func deleteById(_ id: some EntityKey) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            let arguments = try scopedKeyArguments(id, mapping)
            guard let mark = softDeleteAssignment(mapping) else {
                let sql = "DELETE FROM \(mapping.quotedTable) WHERE \(mapping.scopedKeyPredicate)"
                return try db.execute(SQL(sql: sql, arguments: arguments)) > 0
            }
            let sql = "UPDATE \(mapping.quotedTable) SET \(mark.sql) WHERE \(mapping.scopedKeyPredicate)"
            return try db.execute(SQL(sql: sql, arguments: try concatenate(mark.arguments, arguments))) > 0
        }
    }

    /// Deletes the rows matching `condition` and returns how many. An empty condition is
    /// refused (write `"1 = 1"` to mean every row). With a ``ReadOnlyDAL/scope`` it deletes (or, with
    /// soft delete, marks) only rows inside it: the condition is ANDed with the scope in
    /// parentheses, so an `OR` in it cannot reach other tenants' rows.
    ///
    /// For example, `try sessions.deleteByCondition("expires_at < \(Date())")`.
    @discardableResult
    public func deleteByCondition(_ condition: SQL) throws -> Int {
        guard !condition.isEmpty else {
            throw DALError(
                .invalidValue, "deleteByCondition refuses an empty condition; write \"1 = 1\" to delete every row",
                table: tableName)
        }
        return try withMapping(writing: true) { db, mapping in
            let named = condition.arguments.namedValues != nil
            guard let mark = softDeleteAssignment(mapping, named: named) else {
                return try db.execute(
                    try conditionQuery(mapping, { .delete(condition: $0) }, prefix: "DELETE", condition: condition))
            }
            let query = try filteredQuery(
                mapping, { .softDelete(condition: $0, named: named) },
                head: { "UPDATE \(mapping.quotedTable) SET \(mark.sql)" }, condition: condition)
            return try db.execute(SQL(sql: query.sql, arguments: try concatenate(mark.arguments, query.arguments)))
        }
    }
}
