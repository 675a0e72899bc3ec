import SwiftDALConnection
import SwiftDALEntity
import SwiftDALIDAL

// The async form of every read operation: the same work, run on SwiftDAL's own threads
// (the readers' queue), never on Swift's cooperative pool. Each behaves exactly as its
// synchronous twin documents.
extension ReadOnlyDAL {
    func onReader<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await database.perform(writing: false, work)
    }

    /// For example, `let user = try await users.findById(42)`.
    public func findById(_ id: some EntityKey) async throws -> T? {
        try await onReader { try self.findById(id) }
    }

    /// For example, `try await users.findByIds([1, 2, 3])`.
    public func findByIds(_ ids: [some EntityKey]) async throws -> [T] {
        try await onReader { try self.findByIds(ids) }
    }

    /// For example, `try await users.findSingle(condition: "email = \(email)")`.
    public func findSingle(condition: SQL, orderBy: OrderBy? = nil) async throws -> T? {
        try await onReader { try self.findSingle(condition: condition, orderBy: orderBy) }
    }

    /// For example, `try await users.find(condition: "age > \(30)")`.
    public func find(condition: SQL, orderBy: OrderBy? = nil) async throws -> [T] {
        try await onReader { try self.find(condition: condition, orderBy: orderBy) }
    }

    /// For example, `try await users.findFirst()`.
    public func findFirst(orderBy: OrderBy? = nil) async throws -> T? {
        try await onReader { try self.findFirst(orderBy: orderBy) }
    }

    /// For example, `try await users.findLast()`.
    public func findLast(orderBy: OrderBy? = nil) async throws -> T? {
        try await onReader { try self.findLast(orderBy: orderBy) }
    }

    /// For example, `try await users.findTop(10, orderBy: "score DESC")`.
    public func findTop(_ count: Int, condition: SQL? = nil, orderBy: OrderBy? = nil) async throws -> [T] {
        try await onReader { try self.findTop(count, condition: condition, orderBy: orderBy) }
    }

    /// For example, `try await users.findWithPager(pager: PagerInfo(pageIndex: 1, pageSize: 20))`.
    public func findWithPager(condition: SQL? = nil, pager: PagerInfo, orderBy: OrderBy? = nil) async throws -> Page<T>
    {
        try await onReader { try self.findWithPager(condition: condition, pager: pager, orderBy: orderBy) }
    }

    /// For example, `try await users.getAll()`.
    public func getAll(orderBy: OrderBy? = nil) async throws -> [T] {
        try await onReader { try self.getAll(orderBy: orderBy) }
    }

    /// For example, `try await users.getRecordCount()`.
    public func getRecordCount(condition: SQL? = nil) async throws -> Int {
        try await onReader { try self.getRecordCount(condition: condition) }
    }

    /// For example, `try await users.isExistRecord(condition: "age > \(100)")`.
    public func isExistRecord(condition: SQL) async throws -> Bool {
        try await onReader { try self.isExistRecord(condition: condition) }
    }

    /// For example, `try await users.isExist(fieldName: "email", value: email)`.
    public func isExist(fieldName: String, value: some DatabaseValueConvertible) async throws -> Bool {
        try await onReader { try self.isExist(fieldName: fieldName, value: value) }
    }

    /// For example, `try await users.getFieldList("age", as: Int.self)`.
    public func getFieldList<Value: DatabaseValueConvertible>(
        _ fieldName: String, condition: SQL? = nil, as type: Value.Type = DatabaseValue.self
    ) async throws -> [Value] {
        try await onReader { try self.getFieldList(fieldName, condition: condition, as: type) }
    }

    /// For example, `try await users.getFieldValue(42, fieldName: "email", as: String.self)`.
    public func getFieldValue<Value: DatabaseValueConvertible>(
        _ id: some EntityKey, fieldName: String, as type: Value.Type = DatabaseValue.self
    ) async throws -> Value? {
        try await onReader { try self.getFieldValue(id, fieldName: fieldName, as: type) }
    }

    /// For example, `try await users.sqlValueList("SELECT name FROM users", as: String.self)`.
    public func sqlValueList<Value: DatabaseValueConvertible>(_ sql: SQL, as type: Value.Type = DatabaseValue.self)
        async throws -> [Value]
    {
        try await onReader { try self.sqlValueList(sql, as: type) }
    }

    /// For example, `try await users.fetchEntities("SELECT * FROM users WHERE age > \(30)")`.
    public final func fetchEntities(_ sql: SQL) async throws -> [T] {
        try await onReader { try self.fetchEntities(sql) }
    }

    /// For example, at a service's startup, `try await users.verifySchema()`.
    public final func verifySchema() async throws {
        try await onReader { try self.verifySchema() }
    }
}
