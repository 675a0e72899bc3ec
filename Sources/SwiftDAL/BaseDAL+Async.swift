import SwiftDALConnection
import SwiftDALEntity

// The async form of every write operation: the same work, run on the writer's serial
// queue, never on Swift's cooperative pool. Each behaves exactly as its synchronous
// twin documents.
extension BaseDAL {
    func onWriter<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await database.perform(writing: true, work)
    }

    /// For example, `try await users.insert(user)`.
    public func insert(_ entity: T) async throws {
        try await onWriter { try self.insert(entity) }
    }

    /// For example, `let id = try await users.insert2(user)`.
    public func insert2(_ entity: T) async throws -> Int64 {
        try await onWriter { try self.insert2(entity) }
    }

    /// For example, `try await users.insertRange(imported)`.
    @discardableResult
    public func insertRange(_ entities: [T]) async throws -> Int {
        try await onWriter { try self.insertRange(entities) }
    }

    /// For example, `let ids = try await users.insertRange2(newUsers)`.
    public func insertRange2(_ entities: [T]) async throws -> [Int64] {
        try await onWriter { try self.insertRange2(entities) }
    }

    /// For example, `let loaded = try await users.bulkInsert(importedUsers)`.
    @discardableResult
    public func bulkInsert(_ entities: [T]) async throws -> Int {
        try await onWriter { try self.bulkInsert(entities) }
    }

    /// For example, `let found = try await users.updateRange(changedUsers)`.
    @discardableResult
    public func updateRange(_ entities: [T]) async throws -> Int {
        try await onWriter { try self.updateRange(entities) }
    }

    /// For example, `try await users.updateFieldsRange([(key: 42, fields: ["age": 33])])`.
    @discardableResult
    public func updateFieldsRange<Key: EntityKey>(
        _ changes: [(key: Key, fields: [String: (any DatabaseValueConvertible)?])]
    ) async throws -> Int {
        try await onWriter { try self.updateFieldsRange(changes) }
    }

    /// For example, `try await users.updateFieldRange("score", [(key: 42, value: 4.5)])`.
    @discardableResult
    public func updateFieldRange<Key: EntityKey, Value: DatabaseValueConvertible>(
        _ fieldName: String, _ changes: [(key: Key, value: Value)]
    ) async throws -> Int {
        try await onWriter { try self.updateFieldRange(fieldName, changes) }
    }

    /// For example, `try await products.upsertRange(catalogFeed)`.
    public func upsertRange(_ entities: [T]) async throws {
        try await onWriter { try self.upsertRange(entities) }
    }

    /// For example, `try await users.update(user, key: 42)`.
    @discardableResult
    public func update(_ entity: T, key: some EntityKey) async throws -> Bool {
        try await onWriter { try self.update(entity, key: key) }
    }

    /// For example, `try await users.update(user)`.
    @discardableResult
    public func update(_ entity: T) async throws -> Bool {
        try await onWriter { try self.update(entity) }
    }

    /// For example, `try await users.updateFields(["age": 32], key: 42)`.
    @discardableResult
    public func updateFields(_ fields: [String: (any DatabaseValueConvertible)?], key: some EntityKey) async throws
        -> Bool
    {
        try await onWriter { try self.updateFields(fields, key: key) }
    }

    /// For example, `try await users.updateField("score", to: 4.5, key: 42)`.
    @discardableResult
    public func updateField(
        _ fieldName: String, to value: some DatabaseValueConvertible, key: some EntityKey
    ) async throws -> Bool {
        try await onWriter { try self.updateField(fieldName, to: value, key: key) }
    }

    /// For example, `try await users.upsert(user)`.
    public func upsert(_ entity: T) async throws {
        try await onWriter { try self.upsert(entity) }
    }

    /// For example, `try await users.deleteById(42)`.
    @discardableResult
    public func deleteById(_ id: some EntityKey) async throws -> Bool {
        try await onWriter { try self.deleteById(id) }
    }

    /// For example, `try await users.deleteByCondition("age < \(0)")`.
    @discardableResult
    public func deleteByCondition(_ condition: SQL) async throws -> Int {
        try await onWriter { try self.deleteByCondition(condition) }
    }
}
