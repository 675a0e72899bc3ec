import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    /// Deletes the row with primary key `id`; returns `false` when there was none.
    ///
    /// For example, `try users.deleteById(42)`.
    @discardableResult
    public func deleteById(_ id: some EntityKey) throws -> Bool {
        try withMapping(writing: true) { db, mapping in
            let sql = "DELETE FROM \(mapping.quotedTable) WHERE \(mapping.keyPredicate)"
            return try db.execute(SQL(sql: sql, arguments: try mapping.keyArguments(id))) > 0
        }
    }

    /// Deletes the rows matching `condition` and returns how many. An empty condition is
    /// refused (write `"1 = 1"` to mean every row).
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
            try db.execute(try conditionQuery(mapping, .delete(condition: condition.sql), prefix: "DELETE", condition: condition))
        }
    }
}
