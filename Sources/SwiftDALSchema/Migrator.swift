public import SwiftDALConnection
public import SwiftDALEntity

/// Versioned schema migrations: an ordered list of named steps. Each pending step runs
/// in its own `IMMEDIATE` transaction and is recorded in the table `swiftdal_migrations`
/// in that same transaction, so a step is applied completely or not at all, and running
/// the migrator again applies only what is missing. After each step the foreign keys of
/// the whole database are checked; a violation rolls the step back.
///
/// A database that records steps this app does not know (it was migrated by a newer
/// version) is refused with ``DALError/Code/schemaMismatch`` rather than written to.
///
/// For example:
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("1-create-tags") { db in
///     try db.create(TableDefinition("tags") { t in
///         t.column("id", .integer)
///         t.column("label", .text, notNull: true, unique: true)
///         t.primaryKey(["id"])
///     })
/// }
/// migrator.register("2-add-tag-color") { db in
///     try db.execute("ALTER TABLE tags ADD COLUMN color TEXT")
/// }
/// try migrator.migrate(pool)
/// ```
public struct Migrator: Sendable {
    /// One named step, as ``Migrator/register(_:disablesForeignKeys:_:)`` records it.
    ///
    /// For example, `migrator.register("2-add-tag-color") { db in try db.execute("ALTER TABLE tags ADD COLUMN color TEXT") }`
    /// appends one.
    public struct Migration: Sendable {
        /// The step's name, recorded when it is applied; never rename an applied step.
        public let id: String
        /// Whether foreign-key enforcement is off while the step runs (needed to rebuild a
        /// table that others reference; the keys are still checked before it commits).
        public let disablesForeignKeys: Bool
        let body: @Sendable (Database) throws -> Void
    }

    /// The name of the table that records applied steps.
    public static let historyTable = "swiftdal_migrations"

    /// The registered steps, in order.
    public private(set) var migrations: [Migration] = []

    /// How long ``migrate(_:upTo:)-(DatabaseWriter,_)`` waits for another instance's migrations on a server
    /// (PostgreSQL's advisory lock, MariaDB's `GET_LOCK`; MariaDB counts whole seconds)
    /// before it throws ``SwiftDAL/DALError/Code/timeout`` having migrated nothing: an
    /// instance that hung while migrating holds the others that long at most. SQLite's
    /// step transactions wait as any writer does. Five minutes by default.
    ///
    /// For example, `migrator.lockTimeout = .seconds(30)`.
    public var lockTimeout: Duration = .seconds(300)

    /// An empty list of steps.
    ///
    /// For example, `var migrator = Migrator()`.
    public init() {}

    /// Appends a step. Steps run in the order they are registered.
    ///
    /// For example, `migrator.register("3-rebuild-orders", disablesForeignKeys: true) { db in try db.rebuild(table: newOrders) }`.
    public mutating func register(
        _ id: String, disablesForeignKeys: Bool = false, _ body: @escaping @Sendable (Database) throws -> Void
    ) {
        migrations.append(Migration(id: id, disablesForeignKeys: disablesForeignKeys, body: body))
    }

    /// Applies the pending steps (up to and including `target`, or all), and returns
    /// the names of the steps it applied.
    ///
    /// For example, `let applied = try migrator.migrate(pool)`.
    @discardableResult
    public func migrate(_ writer: any DatabaseWriter, upTo target: String? = nil) throws -> [String] {
        try writer.reentrantWrite { db in try migrate(db, upTo: target) }
    }

    /// Applies the pending steps on a connection that is not in a transaction.
    ///
    /// For example, `try migrator.migrate(db)`.
    @discardableResult
    public func migrate(_ db: Database, upTo target: String? = nil) throws -> [String] {
        guard !db.isInTransaction else {
            throw DALError(.invalidSQL, "migrations cannot run inside a transaction: each step opens its own")
        }
        let steps = try steps(upTo: target)
        // Several service instances may start at once: the engine's lock (PostgreSQL's
        // advisory lock) lets one migrate while the others wait, then find nothing left to
        // do. The lock is the session's: when it cannot be released (the call was stopped,
        // the connection failed), the connection is closed rather than lent again with it,
        // and the server releases it as the session ends.
        let dialect = db.dialect
        try dialect.lockMigrations(db, key: Self.advisoryLockKey, waitingAtMost: lockTimeout)
        defer {
            do {
                try dialect.unlockMigrations(db, key: Self.advisoryLockKey)
            } catch {
                db.discardAfterUse()
            }
        }
        try db.execute(sql: dialect.createMigrationHistory(quoteIdentifier(Self.historyTable)))
        let applied = Set(try appliedMigrations(db))
        var done = [String]()
        for step in steps where !applied.contains(step.id) {
            try apply(step, db)
            done.append(step.id)
        }
        return done
    }

    /// The key of the PostgreSQL advisory lock that serializes migrations (the bytes of
    /// "SwiftDAL" read as a 64-bit integer).
    public static let advisoryLockKey: Int64 = 0x5377_6966_7444_414C

    /// The names of the steps recorded in the database, in the order they were applied.
    /// Throws when the database records steps this migrator does not know.
    ///
    /// For example, `try migrator.appliedMigrations(db)`.
    public func appliedMigrations(_ db: Database) throws -> [String] {
        guard try db.tableExists(Self.historyTable) else { return [] }
        let applied = try db.fetchColumn(
            String.self,
            SQL(
                sql:
                    "SELECT id FROM \(quoteIdentifier(Self.historyTable)) ORDER BY \(db.dialect.migrationHistoryOrder)"
            ))
        let known = Set(migrations.map(\.id))
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            throw DALError(
                .schemaMismatch,
                "the database's schema is newer than this app knows: it records migration(s) "
                    + "\(unknown.joined(separator: ", ")), which this app does not have "
                    + "(its last is \(migrations.last?.id ?? "none")); upgrade the app")
        }
        return applied
    }

    /// The names of the steps not yet applied, in order, without applying them.
    ///
    /// For example, `if try !migrator.pendingMigrations(pool).isEmpty { … }`.
    public func pendingMigrations(_ reader: any DatabaseReader) throws -> [String] {
        try reader.reentrantRead { db in
            let applied = Set(try appliedMigrations(db))
            return migrations.map(\.id).filter { !applied.contains($0) }
        }
    }

    private func steps(upTo target: String?) throws -> ArraySlice<Migration> {
        var seen = Set<String>()
        for migration in migrations where !seen.insert(migration.id).inserted {
            throw DALError(.invalidValue, "migration \(migration.id) is registered twice")
        }
        guard let target else { return migrations[...] }
        guard let index = migrations.firstIndex(where: { $0.id == target }) else {
            throw DALError(.invalidValue, "there is no migration named \(target)")
        }
        return migrations[...index]
    }

    /// Runs `step` and records it, in a transaction of its own (the engine's way: see
    /// `EngineDialect.runMigrationStep`).
    private func apply(_ step: Migration, _ db: Database) throws {
        do {
            try db.dialect.runMigrationStep(db, disablesForeignKeys: step.disablesForeignKeys) {
                try step.body(db)
                try db.execute(
                    SQL(sql: "INSERT INTO \(quoteIdentifier(Self.historyTable)) (id) VALUES (?)", arguments: [step.id]))
            }
        } catch let error as DALError {
            let failed = Self.failed(db)
            var failure = error
            failure.message = "migration \(step.id) \(failed): \(error.message)"
            throw failure
        } catch {
            throw DALError(
                .schemaMismatch, "migration \(step.id) \(Self.failed(db)): \(error)", underlying: error)
        }
        try db.clearStatementCache()
    }

    /// What a failed step left: nothing where the engine rolls DDL back; elsewhere the
    /// engine's dialect says, in the error, whether DDL had committed part of the step.
    private static func failed(_ db: Database) -> String {
        db.dialect.rollsBackDDL
            ? "failed and was rolled back"
            : "failed and is not recorded"
    }
}

extension Database {
    /// Rebuilds a table into `definition`, the way SQLite documents for changes that
    /// `ALTER TABLE` cannot make: create the new table under a temporary name, copy the
    /// rows of the columns both have (or `copying`), drop the old table, rename the new
    /// one, then create its indexes. Run it in a migration registered with
    /// `disablesForeignKeys: true` (the migrator still checks the keys before it commits);
    /// recreate any views or triggers on the table in the same migration.
    ///
    /// For example, `try db.rebuild(table: ordersWithQuantityCheck)`.
    public func rebuild(table definition: TableDefinition, copying columns: [String]? = nil) throws {
        guard dialect.rebuildsTables else {
            throw DALError(
                .unsupportedOperation,
                "rebuild is SQLite's way around its ALTER TABLE; on \(engine) change \(definition.name) in place "
                    + "with ALTER TABLE (ADD CONSTRAINT, ALTER COLUMN …)",
                table: definition.name)
        }
        guard try fetchScalar(Bool.self, "PRAGMA foreign_keys") == false else {
            throw DALError(
                .invalidSQL,
                "rebuilding \(definition.name) needs foreign keys off: register the migration with disablesForeignKeys: true",
                table: definition.name)
        }
        let existing = Set(try self.columns(in: definition.name).map { $0.name.identifierKey })
        let copied = columns ?? definition.columns.map(\.name).filter { existing.contains($0.identifierKey) }
        let temporary = "swiftdal_rebuild_\(definition.name)"
        try drop(table: temporary, ifExists: true)
        try create(definition.renamed(temporary))
        let list = copied.map(quoteIdentifier).joined(separator: ", ")
        try execute(
            sql:
                "INSERT INTO \(quoteIdentifier(temporary)) (\(list)) SELECT \(list) FROM \(quoteIdentifier(definition.name))"
        )
        try drop(table: definition.name)
        try execute(sql: "ALTER TABLE \(quoteIdentifier(temporary)) RENAME TO \(quoteIdentifier(definition.name))")
        for statement in try definition.createStatements().dropFirst() {
            try execute(sql: statement)
        }
    }
}
