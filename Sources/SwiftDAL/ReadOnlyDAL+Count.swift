import SwiftDALConnection
import SwiftDALEntity

extension ReadOnlyDAL {
    /// `COUNT(*)` of the rows matching `condition` (every row when `nil`).
    ///
    /// For example, `let adults = try users.getRecordCount(condition: "age >= \(18)")`.
    public func getRecordCount(condition: SQL? = nil) throws -> Int {
        try withMapping(writing: false) { db, mapping in try count(db, mapping, condition) }
    }

    func count(_ db: Database, _ mapping: TableMapping, _ condition: SQL?) throws -> Int {
        let query = try conditionQuery(
            mapping, { .count(condition: $0) }, prefix: "SELECT COUNT(*)", condition: condition)
        return try db.fetchScalar(Int.self, query) ?? 0
    }

    /// Whether any row matches `condition` (`SELECT EXISTS(…)`: stops at the first match).
    ///
    /// For example, `if try users.isExistRecord(condition: "age > \(100)") { … }`.
    public func isExistRecord(condition: SQL) throws -> Bool {
        try withMapping(writing: false) { db, mapping in
            let query = try conditionQuery(
                mapping, { .existsRecord(condition: $0) }, prefix: "SELECT EXISTS(SELECT 1", condition: condition,
                suffix: ")")
            return try db.fetchScalar(Bool.self, query) ?? false
        }
    }

    /// Whether any row has `value` in column `fieldName` (checked against the table's
    /// columns; an unknown name throws ``DALError/Code/invalidColumn``).
    ///
    /// For example, `if try users.isExist(fieldName: "email", value: email) { … }`.
    public func isExist(fieldName: String, value: some DatabaseValueConvertible) throws -> Bool {
        try withMapping(writing: false) { db, mapping in
            let sql = try mapping.existsSQL(fieldName)
            // Arguments built in place in the query (a `var` appended to on one path, or a
            // `let` chosen between two, cost a copy of them on every call: callgrind, W6).
            if mapping.isScoped {
                let arguments = try scopedArguments(StatementArguments(value: try value.databaseValue()))
                return try db.fetchScalar(Bool.self, SQL(sql: sql, arguments: arguments)) ?? false
            }
            return try db.fetchScalar(
                Bool.self, SQL(sql: sql, arguments: StatementArguments(value: try value.databaseValue())))
                ?? false
        }
    }

    /// The distinct values of column `fieldName` in the rows matching `condition` (every
    /// row when `nil`), sorted; ask for an optional type when the column holds `NULL`s.
    ///
    /// For example, `let ages = try users.getFieldList("age", as: Int.self)`.
    public func getFieldList<Value: DatabaseValueConvertible>(
        _ fieldName: String, condition: SQL? = nil, as type: Value.Type = DatabaseValue.self
    ) throws -> [Value] {
        try withMapping(writing: false) { db, mapping in
            let column = try mapping.quotedColumn(fieldName)
            let query = try conditionQuery(
                mapping, { .fieldList(field: fieldName, condition: $0) }, prefix: "SELECT DISTINCT \(column)",
                condition: condition, suffix: " ORDER BY \(column)")
            return try db.fetchColumn(Value.self, query)
        }
    }

    /// Column `fieldName` of the row with primary key `id`; `nil` when there is no such
    /// row or the value is `NULL`.
    ///
    /// For example, `let email = try users.getFieldValue(42, fieldName: "email", as: String.self)`.
    public func getFieldValue<Value: DatabaseValueConvertible>(
        _ id: some EntityKey, fieldName: String, as type: Value.Type = DatabaseValue.self
    ) throws -> Value? {
        try withMapping(writing: false) { db, mapping in
            let sql = try mapping.sql(.fieldValue(field: fieldName)) {
                "SELECT \(try mapping.quotedColumn(fieldName)) FROM \(mapping.quotedTable) WHERE \(mapping.scopedKeyPredicate)"
            }
            let value = try db.fetchFirst(SQL(sql: sql, arguments: try scopedKeyArguments(id, mapping))) {
                try $0.decode(Value?.self, at: 0)
            }
            return value ?? nil
        }
    }

    /// The first column of every row of any query (values bound), converted to `Value`.
    /// The query is run as written: a DAL's ``scope`` does not apply to it (add the
    /// tenant condition yourself).
    ///
    /// For example, `let names = try users.sqlValueList("SELECT name FROM users WHERE age > \(30)", as: String.self)`.
    public func sqlValueList<Value: DatabaseValueConvertible>(_ sql: SQL, as type: Value.Type = DatabaseValue.self)
        throws
        -> [Value]
    {
        try read { db in try db.fetchColumn(Value.self, sql) }
    }
}
