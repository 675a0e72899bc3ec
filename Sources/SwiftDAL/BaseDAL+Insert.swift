import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    /// Inserts `entity`; a `nil` primary key is assigned by SQLite. Throws
    /// ``SQLiteError`` on a constraint violation (`constraintKind` tells which).
    ///
    /// For example, `try users.insert(UserInfo(name: "Ann", email: "ann@example.com", age: 31))`.
    public func insert(_ entity: T) throws {
        _ = try insert2(entity)
    }

    /// Inserts `entity` exactly like ``insert(_:)``, and also returns the new row's
    /// rowid (the full 64-bit value; the assigned primary key for `INTEGER PRIMARY KEY`).
    ///
    /// For example, `let id = try users.insert2(newUser)`.
    public func insert2(_ entity: T) throws -> Int64 {
        try withMapping(writing: true) { db, mapping in
            try db.execute(try insertQuery(entity, mapping, upsert: false))
            return db.lastInsertedRowID
        }
    }

    /// Inserts every entity in one transaction (all or none), reusing one prepared
    /// statement; returns how many were inserted. Inside a `write` it joins that
    /// transaction as a savepoint.
    ///
    /// For example, `try users.insertRange(importedUsers)`.
    @discardableResult
    public func insertRange(_ entities: [T]) throws -> Int {
        guard !entities.isEmpty else { return 0 }
        return try withMapping(writing: true) { db, mapping in
            try db.inTransaction(.immediate) {
                for entity in entities {
                    try db.execute(try insertQuery(entity, mapping, upsert: false))
                }
                return entities.count
            }
        }
    }

    /// Inserts `entity`, or updates every non-key column of the row with the same
    /// primary key, in one atomic statement (`INSERT … ON CONFLICT(key) DO UPDATE`):
    /// never an update-then-insert race. Conflicts on other unique columns still throw.
    ///
    /// For example, `try users.upsert(user)`.
    public func upsert(_ entity: T) throws {
        _ = try withMapping(writing: true) { db, mapping in
            try db.execute(try insertQuery(entity, mapping, upsert: true))
        }
    }

    /// The `INSERT` (or upsert) for `entity`: key columns holding `NULL` are left out so
    /// that SQLite assigns them.
    func insertQuery(_ entity: T, _ mapping: TableMapping, upsert: Bool) throws -> SQL {
        var columns = try encode(entity, mapping)
        if mapping.isExplicit, let all = upsert ? mapping.upsertAllSQL : mapping.insertAllSQL,
            let withoutKey = upsert ? mapping.upsertWithoutKeySQL : mapping.insertWithoutKeySQL
        {
            return Self.insertQuery(columns.takeValues(), keyPositions: mapping.keyPositions, all, withoutKey)
        }
        // Codable mapping: the SQL follows the encoded properties (validated and built
        // once per shape of properties, then reused).
        let plan = try mapping.insertPlan(for: columns.names, upsert: upsert)
        return Self.insertQuery(columns.takeValues(), keyPositions: plan.keyPositions, plan.sqlWithKey, plan.sqlWithoutKey)
    }

    /// `withKey` with every value, or, when the values at `keyPositions` are all `NULL`,
    /// `withoutKey` with the rest (SQLite assigns the key).
    private static func insertQuery(
        _ values: consuming [SQLiteValue], keyPositions: [Int], _ withKey: String, _ withoutKey: String
    ) -> SQL {
        // `consuming`: the caller's values are moved in and edited in place, never copied.
        guard keyPositions.allSatisfy({ values[$0].isNull }) else {
            return SQL(sql: withKey, arguments: StatementArguments(values: values))
        }
        for position in keyPositions.sorted(by: >) { values.remove(at: position) }
        return SQL(sql: withoutKey, arguments: StatementArguments(values: values))
    }
}
