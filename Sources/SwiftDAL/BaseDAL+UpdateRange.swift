import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    /// Writes the changed columns of every entity, each by its own primary key, exactly as
    /// ``update(_:)-1hpg9`` does for one, in one transaction (all or none); returns how
    /// many entities found their row (one whose values are all stored already counts, and
    /// nothing is written for it; one whose key is `NULL` finds none).
    ///
    /// On PostgreSQL the statements are pipelined: the stored rows are read, then the
    /// changed ones written, a round trip per thousand rows rather than one per row. When
    /// an update fails, nothing of the batch is written, and the engine error's
    /// ``DatabaseError/batchIndex`` is the failing entity's index in `entities`. Inside a
    /// `write` the batch joins that transaction as a savepoint. With a
    /// ``ReadOnlyDAL/scope`` only rows inside it are found, as with `update`.
    ///
    /// For example:
    ///
    /// ```swift
    /// var team = try users.find(condition: "age < \(30)")
    /// for index in team.indices { team[index].age += 1 }
    /// let found = try users.updateRange(team)
    /// ```
    @discardableResult
    public func updateRange(_ entities: [T]) throws -> Int {
        guard !entities.isEmpty else { return 0 }
        return try withMapping(writing: true) { db, mapping in
            // A `nil` key (a `NULL` in it) finds no row, as with `update`.
            var rows = [(columns: ColumnValues, keyAndScope: [DatabaseValue]?)]()
            rows.reserveCapacity(entities.count)
            for entity in entities {
                let columns = try encode(entity, mapping)
                try checkTenant(columns, mapping)
                let key = mapping.primaryKey.map { columns.value(for: $0) ?? .null }
                rows.append((columns, key.contains(where: \.isNull) ? nil : key + scopeValues))
            }
            // Two entities with one key: the second must see the first's write, so they run
            // one by one, as `update` would.
            func oneByOne() throws -> Int {
                var found = 0
                for (index, row) in rows.enumerated() {
                    guard let keyAndScope = row.keyAndScope else { continue }
                    let key = Array(keyAndScope.prefix(mapping.primaryKey.count))
                    try positioningBatchErrors(at: index) {
                        if try updateChangedColumns(row.columns, key: key, db, mapping) { found += 1 }
                    }
                }
                return found
            }
            if Self.repeatsAKey(rows.compactMap(\.keyAndScope)) {
                return try db.inTransaction(.immediate) { try oneByOne() }
            }
            return try db.inTransaction(.immediate) {
                let stored = try lockedStoredRows(rows.map(\.keyAndScope), db, mapping)
                if Self.findsARowTwice(stored, mapping) { return try oneByOne() }
                var updates = [(entity: Int, query: SQL)]()
                for (index, row) in rows.enumerated() {
                    guard let found = stored[index], let keyAndScope = row.keyAndScope,
                        let query = try changedColumnsQuery(
                            row.columns, stored: found, keyAndScope: keyAndScope, mapping)
                    else { continue }
                    updates.append((index, query))
                }
                if !updates.isEmpty {
                    try renumberingBatchErrors({ updates[$0].entity }) {
                        _ = try db.executeBatch(count: updates.count) { updates[$0].query }
                    }
                }
                return stored.count(where: { $0 != nil })
            }
        }
    }

    /// Writes the given columns of many rows, each by its key, exactly as
    /// ``updateFields(_:key:)-4v49t`` does for one row, in one transaction (all or none);
    /// returns how many rows were found (and written).
    ///
    /// On PostgreSQL the updates are pipelined (a round trip per thousand rows). When one
    /// fails, nothing is written, and the engine error's ``DatabaseError/batchIndex`` is
    /// its index in `changes`. Inside a `write` the batch joins that transaction as a
    /// savepoint.
    ///
    /// For example:
    ///
    /// ```swift
    /// let written = try users.updateFieldsRange(results.map { (key: $0.userID, fields: ["score": $0.score]) })
    /// ```
    @discardableResult @inlinable
    public func updateFieldsRange<Key: EntityKey>(
        _ changes: [(key: Key, fields: [String: (any DatabaseValueConvertible)?])]
    ) throws -> Int {
        guard !changes.isEmpty else { return 0 }
        // Inlinable, so that it is specialized for the caller's key type, and the changes
        // read in place: unspecialized, an array of generic tuples costs a metadata lookup
        // and value-witness copies per change (~1,400 instructions; callgrind, PostgreSQL W5).
        return try changes.withUnsafeBufferPointer { changes in
            if let empty = changes.indices.first(where: { changes[$0].fields.isEmpty }) {
                throw DALError(
                    .invalidValue, "updateFieldsRange: change \(empty) names no column (each needs at least one)",
                    table: tableName)
            }
            return try withMapping(writing: true) { db, mapping in
                try db.inTransaction(.immediate) {
                    try db.executeBatch(count: changes.count) { index in
                        try updateFieldsQuery(changes[index].fields, key: changes[index].key, mapping)
                    }
                }
            }
        }
    }

    /// Writes column `fieldName` (checked against the table) of many rows, each by its key
    /// and to its own value, exactly as ``updateField(_:to:key:)-a0u7`` does for one row, in one
    /// transaction (all or none); returns how many rows were found (and written). The
    /// batch form of `updateField`: one statement text for every row, each value keeping
    /// its type, no dictionary per row (``updateFieldsRange(_:)-8qwyo`` writes several columns).
    ///
    /// On PostgreSQL the updates are pipelined (a round trip per thousand rows). When one
    /// fails, nothing is written, and the engine error's ``DatabaseError/batchIndex`` is
    /// its index in `changes`. Inside a `write` the batch joins that transaction as a
    /// savepoint. With a ``ReadOnlyDAL/scope`` only rows inside it are written, and the
    /// tenant column cannot be named (``DALError/Code/scopeViolation``), even in an empty
    /// batch. A `nil` of an optional type (`nil as String?`) stores `NULL`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let written = try users.updateFieldRange("score", results.map { (key: $0.userID, value: $0.score) })
    /// ```
    @discardableResult @inlinable
    public func updateFieldRange<Key: EntityKey, Value: DatabaseValueConvertible>(
        _ fieldName: String, _ changes: [(key: Key, value: Value)]
    ) throws -> Int {
        guard !changes.isEmpty else {
            // Nothing to write, but the column is checked as `updateField` checks it.
            return try withMapping(writing: false) { _, mapping in
                try checkUpdatableField(fieldName, mapping)
                return 0
            }
        }
        // Inlinable and read in place, as `updateFieldsRange`: specialized for the caller's
        // key and value types.
        return try changes.withUnsafeBufferPointer { changes in
            try withMapping(writing: true) { db, mapping in
                try db.inTransaction(.immediate) {
                    try db.executeBatch(count: changes.count) { index in
                        try updateFieldQuery(
                            fieldName, { try changes[index].value.databaseValue() }, key: changes[index].key, mapping)
                    }
                }
            }
        }
    }

    /// Upserts every entity exactly as ``upsert(_:)-m2gr`` does for one, in one transaction (all
    /// or none): a row that has the entity's key gets the columns whose value changed, and
    /// the other entities are inserted (with `ON CONFLICT(key) DO UPDATE`).
    ///
    /// On PostgreSQL the statements are pipelined: the stored rows are read, then the
    /// inserts and updates sent, a round trip per thousand rows rather than one per row.
    /// When a row fails, nothing of the batch is written, and the engine error's
    /// ``DatabaseError/batchIndex`` is its index in `entities`. With a ``ReadOnlyDAL/scope``,
    /// a key that belongs to a row outside it throws ``DALError/Code/scopeViolation`` and
    /// nothing is written.
    ///
    /// For example, `try products.upsertRange(catalogFeed)`.
    public func upsertRange(_ entities: [T]) throws {
        guard !entities.isEmpty else { return }
        try withMapping(writing: true) { db, mapping in
            var rows = [(columns: ColumnValues, keyAndScope: [DatabaseValue]?)]()
            rows.reserveCapacity(entities.count)
            for entity in entities {
                let columns = try applyingTenant(try encode(entity, mapping), mapping)
                let key = mapping.primaryKey.map { columns.value(for: $0) ?? .null }
                rows.append((columns, key.contains(where: \.isNull) ? nil : key + scopeValues))
            }
            // Two entities with one key: the second must see the first's write, so they run
            // one by one, as `upsert` would.
            func oneByOne() throws {
                for (index, row) in rows.enumerated() {
                    try positioningBatchErrors(at: index) { try upsertRow(row.columns, db, mapping) }
                }
            }
            if Self.repeatsAKey(rows.compactMap(\.keyAndScope)) {
                try db.inTransaction(.immediate) { try oneByOne() }
                return
            }
            try db.inTransaction(.immediate) {
                let stored = try lockedStoredRows(rows.map(\.keyAndScope), db, mapping)
                if Self.findsARowTwice(stored, mapping) { return try oneByOne() }
                var writes = [(entity: Int, query: SQL)]()
                for (index, row) in rows.enumerated() {
                    if let found = stored[index], let keyAndScope = row.keyAndScope {
                        if let query = try changedColumnsQuery(
                            row.columns, stored: found, keyAndScope: keyAndScope, mapping)
                        {
                            writes.append((index, query))
                        }
                    } else {
                        var columns = row.columns
                        let plan = try mapping.insertPlan(for: columns)
                        writes.append((index, plan.query(columns.takeValues(), upsert: true)))
                    }
                }
                guard !writes.isEmpty else { return }
                let changed = try refusingOutOfScopeUpserts(mapping) {
                    try renumberingBatchErrors({ writes[$0].entity }) {
                        try db.executeBatch(count: writes.count) { writes[$0].query }
                    }
                }
                // Each write changes its row, but an upsert whose key belongs to a row outside
                // the scope, which its conflict clause leaves alone.
                if changed < writes.count && mapping.isScoped {
                    throw DALError(
                        .scopeViolation,
                        "upsertRange: a row with the key of one of the entities exists outside this DAL's scope "
                            + "(another tenant's, or deleted); nothing was written",
                        table: mapping.table)
                }
            }
        }
    }

    /// The stored row of each key and scope values of `keys` (`nil` for a `nil` key, and
    /// for a key no row has), locked until the transaction ends: one pipelined batch on
    /// PostgreSQL. An engine error's ``DatabaseError/batchIndex`` is its key's position in
    /// `keys`.
    private func lockedStoredRows(_ keys: [[DatabaseValue]?], _ db: Database, _ mapping: TableMapping) throws
        -> [StoredRow?]
    {
        let keyed = keys.indices.filter { keys[$0] != nil }
        var stored = [StoredRow?](repeating: nil, count: keys.count)
        let position: (Int) -> Int = { keyed[$0] }
        try renumberingBatchErrors(position) {
            _ = try db.executeBatch(count: keyed.count) { index in
                lockedRowQuery(keys[keyed[index]] ?? [], mapping)
            } row: { index, row in
                stored[keyed[index]] = try storedRow(row, mapping)
            }
        }
        return stored
    }

    /// Whether two entities found one row: keys Swift holds distinct but the server holds
    /// equal (`citext`, a `uuid` written in another case, `char(n)` padding, MariaDB's
    /// case-insensitive collations) find the same row, whose key comes back as stored,
    /// once for each. Each entity's changed columns would then be computed against the row
    /// as it was before the batch, and the row end as neither entity.
    static func findsARowTwice(_ stored: [StoredRow?], _ mapping: TableMapping) -> Bool {
        let positions = mapping.primaryKey.map { mapping.selectedPosition(of: $0) }
        var seen = Set<[DatabaseValue]>()
        for row in stored {
            guard let row else { continue }
            var key = [DatabaseValue]()
            for position in positions {
                guard let position else { return true }  // (the key is always read; else: to be safe)
                key.append(row.raw.values[position])
            }
            if !seen.insert(key).inserted { return true }
        }
        return false
    }

    /// Whether two of `keys` are equal (or might be: text compares as Swift's `==`, so a
    /// false alarm only sends a batch down the one-by-one path).
    static func repeatsAKey(_ keys: [[DatabaseValue]]) -> Bool {
        var seen = Set<[DatabaseValue]>()
        seen.reserveCapacity(keys.count)
        return keys.contains { !seen.insert($0).inserted }
    }
}
