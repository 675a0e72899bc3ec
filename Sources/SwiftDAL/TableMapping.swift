import SwiftDALConnection
import SwiftDALEntity
import SwiftDALIDAL

/// The shapes of SQL that a DAL builds on demand (they depend on a field name, a list
/// of columns, a condition's text or an order), cached so that repeated calls reuse the
/// same text: no rebuilding, no revalidation, and a cheap statement-cache hit.
enum GeneratedSQLKey: Hashable {
    case existsRecord(condition: String?)
    case fieldList(field: String, condition: String?)
    case fieldValue(field: String)
    case updateFields([String])
    case select(condition: String?, order: OrderBy?, limit: LimitKind, named: Bool)
    case count(condition: String?)
    case delete(condition: String?)
    case softDelete(condition: String?, named: Bool)
    case purge(condition: String?)
    case restore(condition: String?, named: Bool)
    case update(columns: [String])
    case page(condition: String?, order: [String], after: [Bool]?, named: Bool)

    enum LimitKind: Hashable {
        case none, limit, limitOffset
    }
}

/// What a DAL knows about its table, read from the database once (at first use):
/// the real columns, the validated key and sort columns, and the SQL text of the fixed
/// statements, so that no SQL is rebuilt on hot paths.
@usableFromInline
final class TableMapping: Sendable {
    let dialect: any EngineDialect
    @usableFromInline let table: String
    let quotedTable: String
    /// A table with or without rowid, or a view.
    let kind: TableKind
    let columns: [ColumnInfo]
    /// Each column's name as `String` holds it (see ``StringWords``), in `columns` order
    /// (empty where a `String` is not two words). Sound while `columns` keeps the names
    /// alive: a long name's words point at its storage.
    private let nameWords: [StringWords]
    /// The position in `columns` of each column, by its ASCII case-folded name (the first
    /// column of a folded name when several share it).
    private let foldedPositions: [String: Int]
    /// The columns (as the table spells them) that are `NOT NULL` and have a default: a
    /// `nil` there means "not given" (the default on insert, the stored value on update).
    private let notNullWithDefault: Set<String>
    /// `SELECT EXISTS(… WHERE <column> = ?)` for each column, in `columns` order: built
    /// once, so `isExist(fieldName:value:)` needs no lock and no hashing per call.
    private let existsSQL: [String]
    /// `UPDATE … SET <column> = ? WHERE <scopedKeyPredicate>` for each column, in
    /// `columns` order (`nil` for the tenant column, which is never written): the usual
    /// one-column `updateFields` needs no lock and no hashing per call.
    private let updateFieldSQL: [String?]
    /// The primary-key columns, as the table spells them (empty for a view without one).
    let primaryKey: [String]
    /// The primary key when it is one column of integer affinity (what `insert2` reads
    /// back with `RETURNING` on engines without rowids).
    let integerKeyColumn: String?
    @usableFromInline let primaryKeyWidth: Int
    /// Whether the key is one integer column that is not the rowid, on a table with rowids
    /// (SQLite's `INT PRIMARY KEY`): `insert2` reads it back with `RETURNING`, as the
    /// rowid is not the key there.
    let keyIsNotTheRowID: Bool
    /// Whether the key is one column whose type holds numbers above `Int64.max` (MariaDB's
    /// `BIGINT UNSIGNED`, a `NUMERIC` key): `insert2`, which returns an `Int64`, undoes its
    /// insert when the new key does not fit one, rather than report a committed row as failed.
    let keyMayExceedInt64: Bool
    /// The `identifierKey`s of the columns the database computes (``ColumnInfo/isGenerated``):
    /// read, but left out of every `INSERT` and `UPDATE` (the server refuses a value for them).
    let generatedColumnKeys: Set<String>
    /// The columns SELECTed for entities: the entity's explicit list, or every column.
    let selectedColumns: [String]
    /// Positions in `selectedColumns`, by column name as the table spells it.
    private let selectedPositions: [String: Int]
    /// Whether the entity maps columns explicitly (by index, in `selectedColumns` order).
    let isExplicit: Bool
    let selectSQL: String
    /// `key1 = ? AND …`: the primary key alone (see ``scopedKeyPredicate``).
    let keyPredicate: String
    /// The primary key and the scope: what every key lookup, update and delete by key
    /// matches. Its arguments are the key's, then the DAL's `scopeValues` (its tenant).
    let scopedKeyPredicate: String
    /// `SELECT … WHERE <scopedKeyPredicate>`.
    @usableFromInline let findByIdSQL: String
    /// The scope, resolved against the table (see ``DALScope``).
    let scope: ScopeSQL
    /// Whether the scope restricts the rows the DAL sees (key lookups then bind the DAL's
    /// `scopeValues` after the key).
    @usableFromInline let isScoped: Bool
    /// Whether the scope has a tenant column (the DAL must then have a tenant).
    let hasTenantColumn: Bool
    /// Whether the DAL declares any scope (a tenant or a soft-delete column).
    let hasScope: Bool
    let defaultOrderClause: String
    let defaultOrder: OrderBy
    /// The insert plan of an explicit entity (its shape is known up front).
    private let explicitInsertPlan: InsertPlan?
    /// The last insert plan of a Codable entity (one shape per entity type, usually).
    private let codableInsertPlan = Locked<InsertPlan?>(nil)
    /// Generated SQL by shape; bounded so that ad-hoc conditions cannot grow it forever.
    private let generated = Locked(GeneratedSQL())
    private static let generatedLimit = 512

    init<T: Entity>(
        entity: T.Type, table: String, primaryKey configuredKey: [String], requiresPrimaryKey: Bool,
        defaultSort: OrderBy?, scope declaredScope: DALScope = .none, includesDeletedRows: Bool = false,
        db: Database, dialect: any EngineDialect
    ) throws {
        self.dialect = dialect
        self.table = table
        let columns = try db.columns(in: table)
        kind = try db.tableKind(of: table)
        self.columns = columns
        nameWords = StringWords.areHeld ? columns.map { StringWords($0.name) } : []
        var folded = [String: Int]()
        for (position, column) in columns.enumerated().reversed() {
            folded[column.name.identifierKey] = position
        }
        foldedPositions = folded
        notNullWithDefault = Set(columns.filter { $0.isNotNull && $0.defaultValueSQL != nil }.map(\.name))
        let tableColumns = columns.map(\.name).joined(separator: ", ")

        func resolveAll(_ names: [String], _ what: String) throws -> [String] {
            let unknown = names.filter { folded[$0.identifierKey] == nil }
            guard unknown.isEmpty else {
                throw DALError(
                    .schemaMismatch,
                    "\(what) name(s) \(unknown.joined(separator: ", ")) that table \(table) does not have "
                        + "(its columns: \(tableColumns))",
                    table: table, column: unknown.first)
            }
            return names.compactMap { folded[$0.identifierKey].map { columns[$0].name } }
        }

        guard !configuredKey.isEmpty || !requiresPrimaryKey else {
            throw DALError(
                .schemaMismatch,
                "a DAL that writes needs a primary key for \(table): declare it in the entity (static let primaryKey), "
                    + "or use ReadOnlyDAL",
                table: table)
        }
        let key = try resolveAll(configuredKey, "the primary key")
        let selected: [String]
        if let explicit = T.columnNames {
            selected = try resolveAll(explicit, "\(T.self).columnNames")
        } else {
            selected = columns.map(\.name)
        }
        var positions = [String: Int]()
        for (index, name) in selected.enumerated() where positions[name] == nil { positions[name] = index }
        selectedPositions = positions
        let quotedTable = dialect.quote(table)
        let scope = try ScopeSQL(
            declaredScope, includesDeletedRows: includesDeletedRows, table: table, quotedTable: quotedTable,
            columns: columns,
            resolve: { try resolveAll([$0], $1)[0] }, dialect: dialect)
        self.scope = scope
        hasTenantColumn = scope.tenantColumn != nil
        isScoped = scope.visibleRows != nil
        hasScope = scope.tenantColumn != nil || scope.softDeleteColumn != nil
        let scopeSuffix = scope.visibleRows.map { " AND \($0)" } ?? ""
        existsSQL = columns.map {
            "SELECT EXISTS(SELECT 1 FROM \(quotedTable) WHERE \(dialect.quote($0.name)) = \(dialect.placeholder)\(scopeSuffix))"
        }
        let select = "SELECT \(selected.map(dialect.quote).joined(separator: ", ")) FROM \(quotedTable)"
        let predicate = key.map { "\(dialect.quote($0)) = \(dialect.placeholder)" }.joined(separator: " AND ")
        updateFieldSQL = columns.map {
            $0.name == scope.tenantColumn
                ? nil : Self.updateSQL(quotedTable, [$0.name], predicate + scopeSuffix, dialect)
        }
        // Without a key or a sort field, rows come in the order of the first column.
        let sort = defaultSort ?? OrderBy(column: selected.first ?? columns[0].name)
        var order = [String]()
        for term in sort.terms {
            let name = try resolveAll([term.column], "the default sort field")[0]
            order.append("\(dialect.quote(name)) \(term.direction.rawValue)")
        }
        primaryKey = key
        primaryKeyWidth = key.count
        integerKeyColumn =
            key.count == 1 && columns.first(where: { $0.name == key[0] })?.affinity == .integer ? key[0] : nil
        let integerKeyIsNotTheRowID = kind == .rowIDTable && !dialect.returnsInsertedKeys && integerKeyColumn != nil
        keyIsNotTheRowID = try integerKeyIsNotTheRowID && db.rowIDAlias(in: table) != integerKeyColumn
        keyMayExceedInt64 =
            key.count == 1
            && columns.first(where: { $0.name == key[0] }).map { column in
                let type = column.declaredType.lowercased()
                return (type.contains("bigint") && type.contains("unsigned")) || type.hasPrefix("numeric")
                    || type.hasPrefix("decimal")
            } == true
        let generatedKeys = Set(columns.filter(\.isGenerated).map(\.name.identifierKey))
        generatedColumnKeys = generatedKeys
        selectedColumns = selected
        isExplicit = T.columnNames != nil
        selectSQL = select
        keyPredicate = predicate
        scopedKeyPredicate = predicate + scopeSuffix
        findByIdSQL = key.isEmpty ? "" : "\(select) WHERE \(predicate)\(scopeSuffix)"
        defaultOrder = sort
        defaultOrderClause = "ORDER BY " + order.joined(separator: ", ")
        self.quotedTable = quotedTable
        let omittable = Self.omittableColumns(columns, key: key)
        // The names an explicit entity's encoding leaves (its generated columns removed).
        let written = generatedKeys.isEmpty ? selected : selected.filter { !generatedKeys.contains($0.identifierKey) }
        explicitInsertPlan =
            T.columnNames == nil
            ? nil
            : InsertPlan(
                encodedNames: written, resolved: written, key: key, omittable: omittable, table: quotedTable,
                upsertGuard: scope.upsertGuard, dialect: dialect)
        self.omittable = omittable
    }

    /// The columns an insert leaves out when their value is `NULL`: key columns (SQLite
    /// assigns a rowid alias; any other key column gets `NULL` either way) and columns
    /// with a default (a `nil` means "not given": the default applies).
    private static func omittableColumns(_ columns: [ColumnInfo], key: [String]) -> Set<String> {
        Set(key).union(columns.filter { $0.defaultValueSQL != nil }.map(\.name))
    }
    private let omittable: Set<String>

    static func insertSQL(_ table: String, _ columns: [String], _ dialect: any EngineDialect) -> String {
        guard !columns.isEmpty else { return "INSERT INTO \(table) DEFAULT VALUES" }
        let names = columns.map(dialect.quote).joined(separator: ", ")
        let placeholders = Array(repeating: dialect.placeholder, count: columns.count).joined(separator: ", ")
        return "INSERT INTO \(table) (\(names)) VALUES (\(placeholders))"
    }

    static func updateSQL(_ table: String, _ columns: [String], _ keyPredicate: String, _ dialect: any EngineDialect)
        -> String
    {
        let assignments = columns.map { "\(dialect.quote($0)) = \(dialect.placeholder)" }.joined(separator: ", ")
        return "UPDATE \(table) SET \(assignments) WHERE \(keyPredicate)"
    }

    /// The SQL built on demand: by key, and the last one asked for, which a repeated call
    /// (the same operation and condition text) finds by comparing keys, without hashing
    /// the condition's text (callgrind, W7: the hashed lookup cost ~850 instructions of
    /// every `getRecordCount(condition:)`).
    private struct GeneratedSQL {
        var byKey = [GeneratedSQLKey: String]()
        /// The last key looked up, and its SQL (`nil` before the first): hot loops ask for
        /// one key again and again. Not optional, so that comparing it with a key neither
        /// wraps nor copies either (the optional's comparison cost ~290 instructions a call).
        var lastKey = GeneratedSQLKey.fieldValue(field: "")
        var lastSQL: String?
    }

    /// The SQL for `key`, built by `build` on first use and reused afterwards.
    func sql(_ key: GeneratedSQLKey, _ build: () throws -> String) throws -> String {
        let cached = generated.withLock { generated -> String? in
            if generated.lastKey == key, let last = generated.lastSQL { return last }
            guard let sql = generated.byKey[key] else { return nil }
            generated.lastKey = key
            generated.lastSQL = sql
            return sql
        }
        if let cached { return cached }
        let sql = try build()
        generated.withLock { generated in
            if generated.byKey.count >= Self.generatedLimit { generated.byKey.removeAll(keepingCapacity: true) }
            generated.byKey[key] = sql
            generated.lastKey = key
            generated.lastSQL = sql
        }
        return sql
    }

    /// How to insert an entity whose encoding wrote `names`, in that order: the explicit
    /// mapping's plan, or for a Codable entity the plan of the previous insert when the
    /// names are the same (the usual case: one entity type, one shape), else a new one,
    /// validated against the table.
    func insertPlan(for columns: ColumnValues) throws -> InsertPlan {
        // An explicit entity that wrote exactly its columns: its names need not be read.
        if columns.hasExactlyTheExpectedNames, let explicitInsertPlan { return explicitInsertPlan }
        return try insertPlan(for: columns.names)
    }

    func insertPlan(for names: [String]) throws -> InsertPlan {
        // (An explicit entity's names were checked against its columnNames; a scope may
        // have added the tenant column after them.)
        if let explicitInsertPlan, names.count == explicitInsertPlan.encodedNames.count { return explicitInsertPlan }
        if let plan = codableInsertPlan.withLock({ $0 }), plan.encodedNames == names { return plan }
        let plan = InsertPlan(
            encodedNames: names, resolved: try names.map { try column($0) }, key: primaryKey, omittable: omittable,
            table: quotedTable, upsertGuard: scope.upsertGuard, dialect: dialect)
        codableInsertPlan.withLock { $0 = plan }
        return plan
    }

    /// Whether a `NULL` for `column` (as the table spells it) means "keep what is stored"
    /// in an update: the column is `NOT NULL` and has a default.
    func keepsStoredValueForNull(_ column: String) -> Bool {
        notNullWithDefault.contains(column)
    }

    /// The position of `column` (as the table spells it) in `selectedColumns`.
    func selectedPosition(of column: String) -> Int? {
        selectedPositions[column]
    }

    /// The table's spelling of column `name`: the column spelled exactly so, else the
    /// first one equal to it in ASCII case-insensitive comparison; or a thrown
    /// ``DALError/Code/invalidColumn`` naming it. (A PostgreSQL table can have both
    /// `"Name"` and `name`: each is found by its own spelling.)
    func column(_ name: String) throws -> String {
        columns[try position(ofColumn: name)].name
    }

    /// The position in `columns` of column `name`, as ``column(_:)`` resolves it: an exact
    /// spelling found by a linear scan of short strings (no hashing, the usual case), any
    /// other by the case-insensitive map.
    @inline(__always)
    private func position(ofColumn name: String) throws -> Int {
        // A name spelled as the table spells it, in a string held as the column's (a short
        // literal, the usual argument): found by two words a column.
        if StringWords.areHeld, let position = nameWords.firstIndex(of: StringWords(name)) { return position }
        // Lengths first (a count of a native string is read from its header): `==` on two
        // different short strings asks Unicode's rules (~22 instructions each), and most
        // columns of a table differ in length from the one asked for.
        let length = name.utf8.count
        if let position = columns.firstIndex(where: { $0.name.utf8.count == length && $0.name == name }) {
            return position
        }
        if let position = foldedPositions[name.identifierKey] { return position }
        // Another Unicode form of a name whose letters the ASCII folding did not match
        // (`"E\u{301}mile"` for `"\u{C9}mile"`): the scan by `==` alone, on the error path.
        if let position = columns.firstIndex(where: { $0.name == name }) { return position }
        throw DALError(
            .invalidColumn,
            "table \(table) has no column named \(quoteIdentifier(name)) "
                + "(its columns: \(columns.map(\.name).joined(separator: ", ")))",
            table: table, column: name)
    }

    /// The existence check on column `name` (see ``existsSQL``).
    func existsSQL(_ name: String) throws -> String {
        existsSQL[try position(ofColumn: name)]
    }

    /// The one-column `UPDATE` of `updateFields` for column `name` (see ``updateFieldSQL``);
    /// the tenant column throws ``DALError/Code/scopeViolation``.
    func updateFieldSQL(_ name: String) throws -> String {
        let position = try position(ofColumn: name)
        guard let sql = updateFieldSQL[position] else {
            let tenant = columns[position].name
            throw DALError(
                .scopeViolation,
                "updateFields cannot write the tenant column \(tenant): a row never changes tenant",
                table: table, column: tenant)
        }
        return sql
    }

    /// `column(name)`, quoted.
    func quotedColumn(_ name: String) throws -> String { dialect.quote(try column(name)) }

    /// The `ORDER BY` clause for `orderBy` (validated and quoted), or the default one;
    /// breaking ties by the key, the primary key's columns it does not name follow it, in
    /// the direction of its last term. A page by offset (`findWithPager`) needs them:
    /// without them, rows that tie on the sort columns have no fixed order, and
    /// PostgreSQL's and MariaDB's top-N sorts put them differently for each
    /// `LIMIT … OFFSET`, so pages skipped some rows and repeated others (Chinook's invoices
    /// by date, 7 a page: 8 of 412 never shown on PostgreSQL, 17 on MariaDB).
    func orderClause(_ orderBy: OrderBy?, breakingTiesByKey: Bool = false) throws -> String {
        guard orderBy != nil || breakingTiesByKey else { return defaultOrderClause }
        let requested = orderBy ?? defaultOrder
        if let problem = requested.parseError {
            throw DALError(.invalidColumn, "invalid ORDER BY for table \(table): \(problem)", table: table)
        }
        var named = [String]()
        var terms = [String]()
        for term in requested.terms {
            let name = try column(term.column)
            named.append(name)
            terms.append("\(dialect.quote(name)) \(term.direction.rawValue)")
        }
        if breakingTiesByKey {
            let direction = requested.terms.last?.direction ?? .ascending
            for name in primaryKey where !named.contains(name) {
                terms.append("\(dialect.quote(name)) \(direction.rawValue)")
            }
        }
        return "ORDER BY " + terms.joined(separator: ", ")
    }

    /// The arguments of `key`, checked against the primary key's width (inlinable, so
    /// that a single-value key binds without an array).
    @inlinable
    func keyArguments(_ key: some EntityKey) throws -> StatementArguments {
        let arguments = try key.keyArguments()
        guard arguments.count == primaryKeyWidth else { throw keyWidthMismatch(arguments.count) }
        return arguments
    }

    /// The error for a key of `count` values on this table.
    @usableFromInline
    func keyWidthMismatch(_ count: Int) -> DALError {
        guard primaryKeyWidth > 0 else {
            return DALError(
                .unsupportedOperation,
                "\(table) has no primary key, so rows cannot be looked up by key; declare one in the entity "
                    + "(static let primaryKey) or use a condition",
                table: table)
        }
        return DALError(
            .invalidValue,
            "table \(table) has a \(primaryKey.count)-column primary key (\(primaryKey.joined(separator: ", "))) "
                + "but the key has \(count) value(s)",
            table: table)
    }

    /// The key values of `key`, checked against the primary key's width.
    @usableFromInline
    func keyValues(_ key: some EntityKey) throws -> [DatabaseValue] {
        let values = try key.keyValues()
        guard values.count == primaryKeyWidth else { throw keyWidthMismatch(values.count) }
        return values
    }
}

/// The INSERT statements for one shape of encoded properties: which columns may be
/// left out when `NULL` (key columns, columns with a default), the statements for the
/// two usual cases built up front, and the others built once and cached.
final class InsertPlan: Sendable {
    /// The property names as the entity encoded them.
    let encodedNames: [String]
    /// The same columns as the table spells them.
    private let resolved: [String]
    /// Positions (in `encodedNames`) of the primary-key columns, ascending.
    let keyPositions: [Int]
    /// Positions of the columns left out when `NULL`, ascending (the key's among them).
    private let omittablePositions: [Int]
    private let isKeyPosition: [Bool]
    private let key: [String]
    private let table: String
    /// The condition an upsert's `DO UPDATE` must meet (the scope), or `nil`.
    private let upsertGuard: String?
    private let dialect: any EngineDialect
    /// The statements for nothing left out and for the key left out,
    /// `[insert, upsert, insert returning the key]`.
    private let withEveryColumn: [String]
    private let withoutKey: [String]
    /// Statements for other sets of left-out positions.
    private let others = Locked<[[Int]: [String]]>([:])

    init(
        encodedNames: [String], resolved: [String], key: [String], omittable: Set<String>, table: String,
        upsertGuard: String? = nil, dialect: any EngineDialect
    ) {
        self.encodedNames = encodedNames
        self.resolved = resolved
        self.key = key
        self.table = table
        self.upsertGuard = upsertGuard
        self.dialect = dialect
        let keySet = Set(key)
        keyPositions = resolved.indices.filter { keySet.contains(resolved[$0]) }
        omittablePositions = resolved.indices.filter { omittable.contains(resolved[$0]) }
        isKeyPosition = resolved.map { keySet.contains($0) }
        withEveryColumn = Self.statements(resolved, key: key, table: table, upsertGuard: upsertGuard, dialect: dialect)
        let keyless = resolved.indices.filter { !keySet.contains(resolved[$0]) }.map { resolved[$0] }
        withoutKey = Self.statements(keyless, key: key, table: table, upsertGuard: upsertGuard, dialect: dialect)
    }

    /// `[INSERT, INSERT … ON CONFLICT(key) DO UPDATE [WHERE guard], INSERT … RETURNING key]`
    /// of `columns` (the last only used with a one-column key: on an engine that returns
    /// keys, and on SQLite for an integer key that is not the rowid).
    private static func statements(
        _ columns: [String], key: [String], table: String, upsertGuard: String?, dialect: any EngineDialect
    ) -> [String] {
        let insert = TableMapping.insertSQL(table, columns, dialect)
        let keySet = Set(key)
        let updated = columns.filter { !keySet.contains($0) }
        let upsert = dialect.upsertClause(
            conflictColumns: key, updateColumns: updated, where: updated.isEmpty ? nil : upsertGuard)
        let returning =
            key.count == 1 ? "\(insert) RETURNING \(dialect.quote(key[0]))" : insert
        return [insert, "\(insert) \(upsert)", returning]
    }

    /// The positions of `values` (in `encodedNames` order) an insert of them writes: all
    /// but the `NULL` key columns and the `NULL` columns with a default (as `query`).
    func writtenPositions(of values: [DatabaseValue]) -> [Int] {
        let omitted = omittablePositions.filter { values[$0].isNull }
        guard !omitted.isEmpty else { return Array(values.indices) }
        return values.indices.filter { !omitted.contains($0) }
    }

    /// Which of ``writtenPositions(of:)``'s omittable positions `values` leaves out, as
    /// bits (the n-th omittable position's is bit n): rows with the same bits write the
    /// same positions. `nil` past 64 omittable positions.
    func omittedBits(of values: [DatabaseValue]) -> UInt64? {
        guard omittablePositions.count <= 64 else { return nil }
        var bits: UInt64 = 0
        for (bit, position) in omittablePositions.enumerated() where values[position].isNull {
            bits |= 1 << UInt64(bit)
        }
        return bits
    }

    /// The names of the columns at `positions`.
    func columnNames(at positions: [Int]) -> [String] {
        positions.map { resolved[$0] }
    }

    /// The statement for `values` (in `encodedNames` order) and the values it binds:
    /// `NULL` key columns and `NULL` columns with a default are left out.
    func query(_ values: consuming [DatabaseValue], upsert: Bool, returningKey: Bool = false) -> SQL {
        let variant = returningKey ? 2 : upsert ? 1 : 0
        // The usual cases without allocating: nothing to leave out, or only the key.
        var nullKeys = 0
        var nullOthers = 0
        for position in omittablePositions where values[position].isNull {
            if isKeyPosition[position] { nullKeys += 1 } else { nullOthers += 1 }
        }
        if nullKeys == 0 && nullOthers == 0 {
            return SQL(sql: withEveryColumn[variant], arguments: StatementArguments(values: values))
        }
        if nullOthers == 0 && nullKeys == keyPositions.count {
            for position in keyPositions.reversed() { values.remove(at: position) }
            return SQL(sql: withoutKey[variant], arguments: StatementArguments(values: values))
        }
        let omitted = omittablePositions.filter { values[$0].isNull }
        let statements =
            others.withLock { $0[omitted] }
            ?? {
                let kept = resolved.indices.filter { !omitted.contains($0) }.map { resolved[$0] }
                let built = Self.statements(kept, key: key, table: table, upsertGuard: upsertGuard, dialect: dialect)
                others.withLock { cache in
                    if cache.count >= 64 { cache.removeAll() }
                    cache[omitted] = built
                }
                return built
            }()
        for position in omitted.reversed() { values.remove(at: position) }
        return SQL(sql: statements[variant], arguments: StatementArguments(values: values))
    }
}

/// A string's two words, as `String` holds them. A name of up to 15 UTF-8 bytes is held
/// within them (no storage object), so two names in the same bytes have the same words;
/// longer ones have the same words only when they share their storage. Strings whose
/// words are equal are always equal, so equal words find a column without asking
/// Unicode's rules (which `==` does for two different short strings, ~22 instructions).
struct StringWords: Equatable {
    private let first: UInt64
    private let second: UInt64

    /// Whether a `String` is two 64-bit words on this platform (not on a 32-bit one):
    /// only then may a string be read as its words.
    static var areHeld: Bool { MemoryLayout<String>.size == MemoryLayout<Self>.size }

    /// The words of `string` (only where ``areHeld``).
    init(_ string: String) {
        self = unsafeBitCast(string, to: Self.self)
    }
}
