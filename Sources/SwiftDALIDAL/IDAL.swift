public import SwiftDALConnection
public import SwiftDALEntity

/// Every operation a table DAL offers, for one ``Entity`` type: the classic BaseDAL
/// contract. ``BaseDAL`` implements all of it once, generically; a table DAL is a
/// subclass of a few lines.
///
/// Conditions are ``SQL`` values built by interpolation, so every value is bound:
/// `find(condition: "age > \(minAge)")`. Column names given as strings (`fieldName`,
/// ``OrderBy``) are checked against the table's real columns and quoted.
///
/// Each operation has an `async` form of the same name, which runs on SwiftDAL's own
/// threads. Inside a `write { }` (or `read { }`) closure of the same database, calls
/// run on the held connection, within its transaction.
///
/// For example:
///
/// ```swift
/// func adults(in dal: some IDAL<UserInfo>) throws -> [UserInfo] {
///     try dal.find(condition: "age >= \(18)", orderBy: "name")
/// }
/// ```
public protocol IDAL<EntityType>: AnyObject, Sendable {
    /// The entity this DAL reads and writes.
    associatedtype EntityType: Entity

    /// The database the DAL works on.
    var database: any DatabaseWriter { get }
    /// The table name (default: the entity's).
    var tableName: String { get }
    /// The primary-key columns (default: the entity's).
    var primaryKey: [String] { get }
    /// The column used when no order is given (default: the first primary-key column).
    var defaultSortField: String { get }
    /// The direction used with ``defaultSortField`` (default: ascending).
    var defaultSortDirection: SortDirection { get }

    // MARK: Finding

    /// The entity with primary key `id`, or `nil`.
    func findById(_ id: some EntityKey) throws -> EntityType?
    /// The entities with the given primary keys (those that exist), in the default order.
    func findByIds(_ ids: [some EntityKey]) throws -> [EntityType]
    /// The first entity matching `condition` (in `orderBy`, or the default order), or `nil`.
    func findSingle(condition: SQL, orderBy: OrderBy?) throws -> EntityType?
    /// Every entity matching `condition`, in `orderBy` (or the default order).
    func find(condition: SQL, orderBy: OrderBy?) throws -> [EntityType]
    /// The first entity in `orderBy` (or the default order), or `nil` when the table is empty.
    func findFirst(orderBy: OrderBy?) throws -> EntityType?
    /// The last entity in `orderBy` (or the default order), or `nil` when the table is empty.
    func findLast(orderBy: OrderBy?) throws -> EntityType?
    /// At most `count` entities matching `condition` (all rows when `nil`).
    func findTop(_ count: Int, condition: SQL?, orderBy: OrderBy?) throws -> [EntityType]
    /// One page of the entities matching `condition`, with the total record count.
    func findWithPager(condition: SQL?, pager: PagerInfo, orderBy: OrderBy?) throws -> Page<EntityType>
    /// At most `limit` entities matching `condition` after `cursor` (keyset paging), and
    /// the cursor of the next page (`nil` on the last).
    func findPage(after cursor: PageCursor?, limit: Int, condition: SQL?, orderBy: OrderBy?) throws -> KeysetPage<
        EntityType
    >
    /// Every entity, in `orderBy` (or the default order).
    func getAll(orderBy: OrderBy?) throws -> [EntityType]
    /// The entities matching `condition`, as an `AsyncSequence` read with bounded memory
    /// (see ``DatabaseStream``): `for try await user in dal.stream(condition: nil, orderBy: nil) { … }`.
    func stream(condition: SQL?, orderBy: OrderBy?) -> DatabaseStream<EntityType>

    // MARK: Counting and existence

    /// `COUNT(*)` of the rows matching `condition` (all rows when `nil`).
    func getRecordCount(condition: SQL?) throws -> Int
    /// Whether any row matches `condition` (`EXISTS`, stops at the first match).
    func isExistRecord(condition: SQL) throws -> Bool
    /// Whether any row has `value` in column `fieldName`.
    func isExist(fieldName: String, value: some DatabaseValueConvertible) throws -> Bool

    // MARK: Field values

    /// The distinct values of column `fieldName` in the rows matching `condition`, sorted.
    func getFieldList<Value: DatabaseValueConvertible>(_ fieldName: String, condition: SQL?, as type: Value.Type) throws
        -> [Value]
    /// Column `fieldName` of the row with key `id`; `nil` when there is no such row.
    func getFieldValue<Value: DatabaseValueConvertible>(_ id: some EntityKey, fieldName: String, as type: Value.Type)
        throws -> Value?
    /// The first column of every row `sql` returns (any query, values bound).
    func sqlValueList<Value: DatabaseValueConvertible>(_ sql: SQL, as type: Value.Type) throws -> [Value]

    // MARK: Writing

    /// Inserts `entity`. A `nil` primary key is assigned by SQLite.
    func insert(_ entity: EntityType) throws
    /// Inserts `entity` like ``insert(_:)-1e7w6``, and returns the new row's key (64-bit), the
    /// one `findById` takes: SQLite's rowid where an `INTEGER PRIMARY KEY` names it, else a
    /// one-integer-column key read back (see `BaseDAL.insert2`).
    func insert2(_ entity: EntityType) throws -> Int64
    /// Inserts every entity in one transaction (all or none), reusing one prepared
    /// statement; returns how many were inserted.
    func insertRange(_ entities: [EntityType]) throws -> Int
    /// Writes every non-key column of `entity` to the row with key `key`; `false` when
    /// no row has that key.
    func update(_ entity: EntityType, key: some EntityKey) throws -> Bool
    /// Writes the given columns of the row with key `key`; `false` when no row has it.
    func updateFields(_ fields: [String: (any DatabaseValueConvertible)?], key: some EntityKey) throws -> Bool
    /// Inserts `entity`, or updates the row with its primary key when there is one, in
    /// one atomic statement (`INSERT … ON CONFLICT … DO UPDATE`).
    func upsert(_ entity: EntityType) throws
    /// Deletes the row with key `id`; `false` when there was none.
    func deleteById(_ id: some EntityKey) throws -> Bool
    /// Deletes the rows matching `condition` (which must not be empty); returns how many.
    func deleteByCondition(_ condition: SQL) throws -> Int

    // MARK: async forms (run on SwiftDAL's own threads)

    /// The `async` form of ``findById(_:)-3t2n``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findById(_ id: some EntityKey) async throws -> EntityType?
    /// The `async` form of ``findByIds(_:)-3xfp4``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findByIds(_ ids: [some EntityKey]) async throws -> [EntityType]
    /// The `async` form of ``findSingle(condition:orderBy:)-ik3m``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findSingle(condition: SQL, orderBy: OrderBy?) async throws -> EntityType?
    /// The `async` form of ``find(condition:orderBy:)-61qkm``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func find(condition: SQL, orderBy: OrderBy?) async throws -> [EntityType]
    /// The `async` form of ``findFirst(orderBy:)-3gl71``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findFirst(orderBy: OrderBy?) async throws -> EntityType?
    /// The `async` form of ``findLast(orderBy:)-9zhkh``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findLast(orderBy: OrderBy?) async throws -> EntityType?
    /// The `async` form of ``findTop(_:condition:orderBy:)-7koro``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findTop(_ count: Int, condition: SQL?, orderBy: OrderBy?) async throws -> [EntityType]
    /// The `async` form of ``findWithPager(condition:pager:orderBy:)-1no48``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findWithPager(condition: SQL?, pager: PagerInfo, orderBy: OrderBy?) async throws -> Page<EntityType>
    /// The `async` form of ``findPage(after:limit:condition:orderBy:)-39e6r``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func findPage(after cursor: PageCursor?, limit: Int, condition: SQL?, orderBy: OrderBy?) async throws -> KeysetPage<
        EntityType
    >
    /// The `async` form of ``getAll(orderBy:)-3533j``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func getAll(orderBy: OrderBy?) async throws -> [EntityType]
    /// The `async` form of ``getRecordCount(condition:)-2uweq``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func getRecordCount(condition: SQL?) async throws -> Int
    /// The `async` form of ``isExistRecord(condition:)-8o4ut``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func isExistRecord(condition: SQL) async throws -> Bool
    /// The `async` form of ``isExist(fieldName:value:)-orr2``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func isExist(fieldName: String, value: some DatabaseValueConvertible) async throws -> Bool
    /// The `async` form of ``getFieldList(_:condition:as:)-7gb52``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func getFieldList<Value: DatabaseValueConvertible>(_ fieldName: String, condition: SQL?, as type: Value.Type)
        async throws -> [Value]
    /// The `async` form of ``getFieldValue(_:fieldName:as:)-9p2nv``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func getFieldValue<Value: DatabaseValueConvertible>(_ id: some EntityKey, fieldName: String, as type: Value.Type)
        async throws -> Value?
    /// The `async` form of ``sqlValueList(_:as:)-pwmz``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func sqlValueList<Value: DatabaseValueConvertible>(_ sql: SQL, as type: Value.Type) async throws -> [Value]
    /// The `async` form of ``insert(_:)-1e7w6``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func insert(_ entity: EntityType) async throws
    /// The `async` form of ``insert2(_:)-2nzi5``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func insert2(_ entity: EntityType) async throws -> Int64
    /// The `async` form of ``insertRange(_:)-2zown``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func insertRange(_ entities: [EntityType]) async throws -> Int
    /// The `async` form of ``update(_:key:)-9nvk1``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func update(_ entity: EntityType, key: some EntityKey) async throws -> Bool
    /// The `async` form of ``updateFields(_:key:)-56cf4``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func updateFields(_ fields: [String: (any DatabaseValueConvertible)?], key: some EntityKey) async throws -> Bool
    /// The `async` form of ``upsert(_:)-71gjf``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func upsert(_ entity: EntityType) async throws
    /// The `async` form of ``deleteById(_:)-7kvar``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func deleteById(_ id: some EntityKey) async throws -> Bool
    /// The `async` form of ``deleteByCondition(_:)-56fp7``: runs it on SwiftDAL's own threads, so the
    /// caller's task waits without blocking a thread of Swift's cooperative pool.
    func deleteByCondition(_ condition: SQL) async throws -> Int
}
