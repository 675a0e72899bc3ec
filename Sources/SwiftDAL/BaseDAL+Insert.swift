import SwiftDALConnection
import SwiftDALEntity

extension BaseDAL {
    /// Inserts `entity`. A `nil` primary key is assigned by SQLite, and a `nil` for a
    /// column with a `DEFAULT` leaves the column out, so that its default applies (see
    /// "What nil means" in <doc:TheOperations>). Throws ``SQLiteError`` on a constraint violation
    /// (`constraintKind` tells which). With a tenant ``ReadOnlyDAL/scope`` the row gets the DAL's
    /// tenant; an entity carrying another tenant's value throws
    /// ``DALError/Code/scopeViolation`` (so do `insert2`, `insertRange` and `upsert`).
    ///
    /// For example, `try users.insert(UserInfo(name: "Ann", email: "ann@example.com", age: 31))`.
    public func insert(_ entity: T) throws {
        try withMapping(writing: true) { db, mapping in
            _ = try db.execute(try insertQuery(entity, mapping, upsert: false))
        }
    }

    /// Inserts `entity` exactly like ``insert(_:)-14pzp``, and also returns the new row's
    /// key: the full 64-bit value, the one ``ReadOnlyDAL/findById(_:)-9njmh`` takes.
    ///
    /// On SQLite that is the rowid, which an `INTEGER PRIMARY KEY` names; for a key of one
    /// integer column that is not the rowid (`INT PRIMARY KEY`, `BIGINT PRIMARY KEY`,
    /// `INTEGER PRIMARY KEY DESC`) the key itself, read back with `RETURNING` (an entity
    /// without a value for it throws ``DALError/Code/noRowID`` and inserts nothing: SQLite
    /// assigns no such key); for a table whose key is not one integer column (text,
    /// composite), the rowid, which is not its key. On PostgreSQL and MariaDB it is the key,
    /// read back with `RETURNING`. A `WITHOUT ROWID` table, a view, or elsewhere a key that
    /// is not one integer column has no such number: `insert2` then throws
    /// ``DALError/Code/noRowID`` before inserting anything (use ``insert(_:)-14pzp``: the
    /// entity's own key identifies the row). It never returns another row's key.
    ///
    /// For example, `let id = try users.insert2(newUser)`.
    public func insert2(_ entity: T) throws -> Int64 {
        try withMapping(writing: true) { db, mapping in
            if mapping.dialect.returnsInsertedKeys || mapping.keyIsNotTheRowID {
                return try insertReturningKey(entity, db, mapping)
            }
            try checkHasRowID(mapping, "insert2")
            return try db.insert(try insertQuery(entity, mapping, upsert: false))
        }
    }

    /// Inserts every entity exactly like `insertRange(_:)` (one transaction, all or
    /// none; pipelined on PostgreSQL), and also returns each new row's rowid, in the order
    /// of `entities`: what `insert2(_:)` returns for one entity (on PostgreSQL the
    /// key `RETURNING` reads back, for a table whose key is one integer column).
    ///
    /// For example:
    ///
    /// ```swift
    /// let ids = try users.insertRange2(newUsers)
    /// for (user, id) in zip(newUsers, ids) { print(user.name, id) }
    /// ```
    public func insertRange2(_ entities: [T]) throws -> [Int64] {
        guard !entities.isEmpty else { return [] }
        return try withMapping(writing: true) { db, mapping in
            var ids = [Int64]()
            ids.reserveCapacity(entities.count)
            if mapping.dialect.returnsInsertedKeys || mapping.keyIsNotTheRowID {
                try checkReturnsKey(mapping, "insertRange2")
                try db.inTransaction(.immediate) {
                    _ = try db.executeBatch(count: entities.count) { index in
                        try insertQuery(entities[index], mapping, upsert: false, returningKey: true)
                    } row: { index, row in
                        // One key per entity, in order: a row a trigger skipped (or doubled)
                        // fails the batch inside its transaction, and nothing is written.
                        guard index == ids.count else {
                            throw DALError(
                                .noRowID, "the INSERT of entity \(index) returned no key, or more than one",
                                table: mapping.table)
                        }
                        ids.append(try row.decode(Int64.self, at: 0))
                    }
                    guard ids.count == entities.count else {
                        throw DALError(
                            .noRowID, "the INSERTs returned \(ids.count) keys for \(entities.count) rows",
                            table: mapping.table)
                    }
                }
                return ids
            }
            try checkHasRowID(mapping, "insertRange2")
            try db.inTransaction(.immediate) {
                for (index, entity) in entities.enumerated() {
                    do {
                        ids.append(try db.insert(try insertQuery(entity, mapping, upsert: false)))
                    } catch var error as any BatchPositionedError
                        where (error as? any DatabaseError)?.concernsTheBatchItem == true
                    {
                        error.batchIndex = index
                        throw error
                    }
                }
            }
            return ids
        }
    }

    /// Throws ``DALError/Code/noRowID`` for a table without rowids (SQLite).
    private func checkHasRowID(_ mapping: TableMapping, _ method: String) throws {
        guard mapping.kind == .rowIDTable else {
            throw DALError(
                .noRowID,
                "\(mapping.table) is \(mapping.kind == .view ? "a view" : "a WITHOUT ROWID table"): it has no rowid "
                    + "for \(method) to return; use insert(_:), the entity's own key identifies the row",
                table: mapping.table)
        }
    }

    /// Throws ``DALError/Code/noRowID`` for a table whose key `RETURNING` cannot read back as
    /// one integer (engines without rowids).
    private func checkReturnsKey(_ mapping: TableMapping, _ method: String) throws {
        guard mapping.kind != .view, mapping.integerKeyColumn != nil, mapping.primaryKey.count == 1 else {
            throw DALError(
                .noRowID,
                "\(mapping.table)'s primary key is not one integer column: \(method) has no new key to return; "
                    + "use insert(_:), the entity's own key identifies the row",
                table: mapping.table)
        }
    }

    /// Inserts every entity in one transaction (all or none), reusing one prepared
    /// statement; returns how many were inserted. Inside a `write` it joins that
    /// transaction as a savepoint.
    ///
    /// On PostgreSQL the inserts are pipelined: sent a thousand at a time without waiting
    /// for each one's answer, so a batch costs a round trip per thousand rows, not per row.
    /// On MariaDB rows that write the same columns go as bulk executions (one statement run
    /// for up to a thousand rows of values in one round trip). When a row fails, nothing is
    /// inserted, and the engine error (a constraint violation, say) tells which entity
    /// failed: ``DatabaseError/batchIndex`` is its index in `entities` (`nil` for a
    /// constraint deferred to the commit, which fails the batch as a whole).
    ///
    /// For example:
    ///
    /// ```swift
    /// do {
    ///     try users.insertRange(importedUsers)
    /// } catch let error as any DatabaseError where error.constraintKind == .unique {
    ///     print("user \(error.batchIndex ?? -1) is already there; nothing was imported")
    /// }
    /// ```
    @discardableResult
    public func insertRange(_ entities: [T]) throws -> Int {
        guard !entities.isEmpty else { return 0 }
        return try withMapping(writing: true) { db, mapping in
            try db.inTransaction(.immediate) {
                _ = try db.executeBatch(count: entities.count) { index in
                    try insertQuery(entities[index], mapping, upsert: false)
                }
                return entities.count
            }
        }
    }

    /// Inserts every entity as ``insertRange(_:)-33w5n`` does (one transaction, all or none; a
    /// `nil` key or a `nil` for a column with a default leaves the column to its default),
    /// through the engine's bulk path: for loading large sets. Returns how many were
    /// inserted.
    ///
    /// On PostgreSQL the rows stream through one `COPY … FROM STDIN` (text format, every
    /// value escaped): no statement per row, the server's fastest way in. Rows that leave
    /// different columns to their defaults go in a `COPY` each (more than 8 such runs, and
    /// the rows go as pipelined `INSERT`s instead, as with `insertRange`). Constraints,
    /// defaults and triggers apply as for `INSERT`; where `COPY` would not do what
    /// `INSERT`s do, the rows go as pipelined `INSERT`s: a view, a table with row-level
    /// security or rules, a value for a `GENERATED ALWAYS` identity column, `Data` for a
    /// column that is not `bytea`. When a row fails, nothing is inserted, and the engine
    /// error's ``DatabaseError/batchIndex`` is its index in `entities` (the line the server
    /// names; `nil` for a check that runs after the row: a foreign key, a deferred
    /// constraint). On SQLite, where no statement costs a round trip, and on MariaDB (where
    /// ``insertRange(_:)-33w5n`` sends bulk executions), it is ``insertRange(_:)-33w5n``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let loaded = try users.bulkInsert(try importedUsers(from: file))
    /// ```
    @discardableResult
    public func bulkInsert(_ entities: [T]) throws -> Int {
        guard !entities.isEmpty else { return 0 }
        return try withMapping(writing: true) { db, mapping in
            guard db.hasBulkPath else { return try insertRange(entities) }
            return try db.inTransaction(.immediate) {
                // Every row encoded first: rows that write the same columns share a COPY.
                var encoded = [(values: [DatabaseValue], plan: InsertPlan, written: [Int])]()
                encoded.reserveCapacity(entities.count)
                // The previous row's written positions, shared by the next rows that leave out
                // the same columns (one array for them all, and equal at once by identity).
                var previous: (plan: InsertPlan, omitted: UInt64, written: [Int])?
                for entity in entities {
                    var columns = try applyingTenant(try encode(entity, mapping), mapping)
                    let plan = try mapping.insertPlan(for: columns)
                    let values = columns.takeValues()
                    let omitted = plan.omittedBits(of: values)
                    let written: [Int]
                    if let previous, previous.plan === plan, let omitted, previous.omitted == omitted {
                        written = previous.written
                    } else {
                        written = plan.writtenPositions(of: values)
                        if let omitted { previous = (plan, omitted, written) }
                    }
                    encoded.append((values, plan, written))
                }
                // (A constant: a variable, captured by the closures below, was checked for
                // exclusive access at each read of a row, ~85 instructions a row.)
                let rows = encoded
                // Runs of rows that write the same columns, each a COPY (two round trips): when
                // the rows alternate, pipelined INSERTs cost fewer.
                var runs = [Range<Int>]()
                var first = 0
                while first < rows.count {
                    var end = first + 1
                    while end < rows.count && rows[end].written == rows[first].written
                        && rows[end].plan === rows[first].plan
                    {
                        end += 1
                    }
                    runs.append(first..<end)
                    first = end
                }
                func insert(_ run: Range<Int>) throws -> Int {
                    try renumberingBatchErrors({ run.lowerBound + $0 }) {
                        try db.executeBatch(count: run.count) {
                            rows[run.lowerBound + $0].plan.query(rows[run.lowerBound + $0].values, upsert: false)
                        }
                    }
                }
                if runs.count > Self.bulkRunsLimit { return try insert(0..<rows.count) }
                var loaded = 0
                for run in runs {
                    let written = rows[run.lowerBound].written
                    // (Every column left to its default: COPY needs at least one column.)
                    let blobs = Set(
                        written.indices.filter { column in
                            rows[run].contains { if case .blob = $0.values[written[column]] { true } else { false } }
                        })
                    let copied =
                        written.isEmpty
                        ? nil
                        : try renumberingBatchErrors({ run.lowerBound + $0 }) {
                            try db.copyRows(
                                into: mapping.quotedTable,
                                columns: rows[run.lowerBound].plan.columnNames(at: written),
                                blobColumns: blobs, count: run.count
                            ) { index, values in
                                // (The row read in place: a copy of it retained its three parts.)
                                let row = run.lowerBound + index
                                for position in written { values.append(rows[row].values[position]) }
                            }
                        }
                    loaded += try copied ?? insert(run)
                }
                return loaded
            }
        }
    }

    /// More runs of rows writing different columns than this, and `bulkInsert` sends
    /// pipelined `INSERT`s instead of a `COPY` per run.
    static var bulkRunsLimit: Int { 8 }

    /// Inserts `entity`, or, when a row has its primary key, writes the columns whose
    /// value differs from the stored one (exactly like ``update(_:)-1hpg9``), atomically: the
    /// check and the write run in one `IMMEDIATE` transaction, and the insert carries
    /// `ON CONFLICT(key) DO UPDATE`. Conflicts on other unique columns still throw.
    /// With a ``ReadOnlyDAL/scope``, only a row inside it is updated: when the key belongs to a row
    /// outside it (another tenant's, or a soft-deleted one) nothing is written and
    /// ``DALError/Code/scopeViolation`` is thrown.
    ///
    /// For example, `try users.upsert(user)`.
    public func upsert(_ entity: T) throws {
        try withMapping(writing: true) { db, mapping in
            let columns = try applyingTenant(try encode(entity, mapping), mapping)
            try atomically(db) { try upsertRow(columns, db, mapping) }
        }
    }

    /// `upsert` of the encoded row `columns` (its tenant applied), inside a transaction.
    func upsertRow(_ columns: ColumnValues, _ db: Database, _ mapping: TableMapping) throws {
        var columns = columns
        let key = mapping.primaryKey.map { columns.value(for: $0) ?? .null }
        if !key.contains(where: \.isNull), try updateChangedColumns(columns, key: key, db, mapping) { return }
        let plan = try mapping.insertPlan(for: columns)
        let query = plan.query(columns.takeValues(), upsert: true)
        let changed = try refusingOutOfScopeUpserts(mapping) { try db.execute(query) }
        if changed == 0 && mapping.isScoped {
            throw DALError(
                .scopeViolation,
                "upsert: a row with this key exists outside this DAL's scope (another tenant's, or deleted); "
                    + "nothing was written",
                table: mapping.table)
        }
    }

    /// Runs `body`, an upsert (or a batch holding some), turning the engine's refusal of a
    /// row outside the scope (see `EngineDialect.isUpsertRefusal`) into
    /// ``DALError/Code/scopeViolation``.
    func refusingOutOfScopeUpserts<R>(_ mapping: TableMapping, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch  where mapping.isScoped && mapping.dialect.isUpsertRefusal(error, conflictColumns: mapping.primaryKey) {
            throw DALError(
                .scopeViolation,
                "upsert: a row with this key exists outside this DAL's scope (another tenant's, or deleted); "
                    + "nothing was written",
                table: mapping.table)
        }
    }

    /// `insert2` on an engine without rowids: the new row's key, read back with
    /// `RETURNING`, for a table whose primary key is one integer column (an identity or
    /// serial column, or a key the entity gives).
    private func insertReturningKey(_ entity: T, _ db: Database, _ mapping: TableMapping) throws -> Int64 {
        try checkReturnsKey(mapping, "insert2")
        let query = try insertQuery(entity, mapping, upsert: false, returningKey: true)
        func inserted() throws -> Int64 {
            let key: Int64?
            do {
                key = try db.fetchScalar(Int64.self, query)
            } catch let error as DALError where error.code == .conversionFailed && mapping.keyMayExceedInt64 {
                throw DALError(
                    .noRowID,
                    "the new row's key does not fit the Int64 insert2 returns (above Int64.max): its insert was "
                        + "undone. Use insert, and read the key back as a UInt64, Decimal or String",
                    table: mapping.table, sql: query.sql, underlying: error)
            }
            guard let id = key else {
                throw DALError(
                    .noRowID,
                    "the INSERT returned no key (nothing was inserted): \(mapping.table)'s key is not its rowid, "
                        + "so SQLite assigns none; give the entity its key", table: mapping.table, sql: query.sql)
            }
            return id
        }
        // SQLite stores a NULL in an integer key that is not the rowid, and a key may not
        // fit an Int64: the insert is undone then (in a savepoint, or a transaction of its
        // own: MariaDB has no savepoint outside one).
        guard mapping.keyIsNotTheRowID || mapping.keyMayExceedInt64 else { return try inserted() }
        return try db.isInTransaction ? db.inSavepoint(inserted) : db.inTransaction(.immediate, inserted)
    }

    /// The `INSERT` (or upsert) for `entity` (see ``InsertPlan/query(_:upsert:)``).
    func insertQuery(_ entity: T, _ mapping: TableMapping, upsert: Bool, returningKey: Bool = false) throws -> SQL {
        // Read as a `let`, then moved: a `var` passed to `insertPlan(for:)` was copied for the
        // call (its three arrays retained and released, ~190 instructions an insert).
        let encoded = try applyingTenant(try encode(entity, mapping), mapping)
        let plan = try mapping.insertPlan(for: encoded)
        var columns = consume encoded
        return plan.query(columns.takeValues(), upsert: upsert, returningKey: returningKey)
    }

    /// Runs `body` in an `IMMEDIATE` transaction, or in the one already open.
    func atomically<R>(_ db: Database, _ body: () throws -> R) throws -> R {
        if db.isInTransaction { return try body() }
        return try db.inTransaction(.immediate, body)
    }
}
