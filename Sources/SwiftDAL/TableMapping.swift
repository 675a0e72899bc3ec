import Synchronization
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
    case update(columns: [String])

    enum LimitKind: Hashable {
        case none, limit, limitOffset
    }
}

/// What a BaseDAL knows about its table, read from the database once (at first use):
/// the real columns, the validated key and sort columns, and the SQL text of the fixed
/// statements, so that no SQL is rebuilt on hot paths.
@usableFromInline
final class TableMapping: Sendable {
    let dialect: any SQLDialect
    @usableFromInline let table: String
    let quotedTable: String
    let columns: [ColumnInfo]
    private let canonicalNames: [String: String]
    /// `SELECT EXISTS(… WHERE <column> = ?)` for each column, in `columns` order: built
    /// once, so `isExist(fieldName:value:)` needs no lock and no hashing per call.
    private let existsSQL: [String]
    /// The primary-key columns, as the table spells them.
    let primaryKey: [String]
    @usableFromInline let primaryKeyWidth: Int
    /// The columns SELECTed for entities: the entity's explicit list, or every column.
    let selectedColumns: [String]
    /// Whether the entity maps columns explicitly (by index, in `selectedColumns` order).
    let isExplicit: Bool
    let selectSQL: String
    let keyPredicate: String
    @usableFromInline let findByIdSQL: String
    let defaultOrderClause: String
    let defaultOrder: OrderBy
    /// For explicit entities: positions of the key columns in `selectedColumns`.
    let keyPositions: [Int]
    let insertAllSQL: String?
    let insertWithoutKeySQL: String?
    let updateSQL: String?
    let upsertAllSQL: String?
    let upsertWithoutKeySQL: String?
    /// The last insert plans of a Codable entity (one per `upsert` flag).
    private let insertPlans = Mutex<[Bool: InsertPlan]>([:])
    /// Generated SQL by shape; bounded so that ad-hoc conditions cannot grow it forever.
    private let generated = Mutex<[GeneratedSQLKey: String]>([:])
    private static let generatedLimit = 512

    init<T: Entity>(
        entity: T.Type, table: String, primaryKey configuredKey: [String], defaultSort: OrderBy, db: Database,
        dialect: any SQLDialect
    ) throws {
        self.dialect = dialect
        self.table = table
        let columns = try db.columns(in: table)
        self.columns = columns
        var canonical = [String: String]()
        for column in columns.reversed() {
            canonical[column.name.lowercased()] = column.name
        }
        canonicalNames = canonical
        let tableColumns = columns.map(\.name).joined(separator: ", ")

        func resolveAll(_ names: [String], _ what: String) throws -> [String] {
            let unknown = names.filter { canonical[$0.lowercased()] == nil }
            guard unknown.isEmpty else {
                throw DALError(
                    .schemaMismatch,
                    "\(what) name(s) \(unknown.joined(separator: ", ")) that table \(table) does not have "
                        + "(its columns: \(tableColumns))",
                    table: table, column: unknown.first)
            }
            return names.compactMap { canonical[$0.lowercased()] }
        }

        guard !configuredKey.isEmpty else {
            throw DALError(.schemaMismatch, "a DAL needs a primary key for table \(table)", table: table)
        }
        let key = try resolveAll(configuredKey, "the primary key")
        let selected: [String]
        if let explicit = T.columnNames {
            selected = try resolveAll(explicit, "\(T.self).columnNames")
        } else {
            selected = columns.map(\.name)
        }
        let quotedTable = dialect.quote(table)
        existsSQL = columns.map {
            "SELECT EXISTS(SELECT 1 FROM \(quotedTable) WHERE \(dialect.quote($0.name)) = \(dialect.placeholder))"
        }
        let select = "SELECT \(selected.map(dialect.quote).joined(separator: ", ")) FROM \(quotedTable)"
        let predicate = key.map { "\(dialect.quote($0)) = \(dialect.placeholder)" }.joined(separator: " AND ")
        var order = [String]()
        for term in defaultSort.terms {
            let name = try resolveAll([term.column], "the default sort field")[0]
            order.append("\(dialect.quote(name)) \(term.direction.rawValue)")
        }
        primaryKey = key
        primaryKeyWidth = key.count
        selectedColumns = selected
        isExplicit = T.columnNames != nil
        selectSQL = select
        keyPredicate = predicate
        findByIdSQL = "\(select) WHERE \(predicate)"
        defaultOrder = defaultSort
        defaultOrderClause = "ORDER BY " + order.joined(separator: ", ")

        if isExplicit {
            let keySet = Set(key)
            keyPositions = key.compactMap { selected.firstIndex(of: $0) }
            let nonKey = selected.filter { !keySet.contains($0) }
            let upsert = dialect.upsertClause(conflictColumns: key, updateColumns: nonKey)
            insertAllSQL = Self.insertSQL(quotedTable, selected, dialect)
            insertWithoutKeySQL = Self.insertSQL(quotedTable, nonKey, dialect)
            updateSQL = nonKey.isEmpty ? nil : Self.updateSQL(quotedTable, nonKey, predicate, dialect)
            upsertAllSQL = "\(Self.insertSQL(quotedTable, selected, dialect)) \(upsert)"
            upsertWithoutKeySQL = "\(Self.insertSQL(quotedTable, nonKey, dialect)) \(upsert)"
        } else {
            keyPositions = []
            insertAllSQL = nil
            insertWithoutKeySQL = nil
            updateSQL = nil
            upsertAllSQL = nil
            upsertWithoutKeySQL = nil
        }
        self.quotedTable = quotedTable
    }

    static func insertSQL(_ table: String, _ columns: [String], _ dialect: any SQLDialect) -> String {
        guard !columns.isEmpty else { return "INSERT INTO \(table) DEFAULT VALUES" }
        let names = columns.map(dialect.quote).joined(separator: ", ")
        let placeholders = Array(repeating: dialect.placeholder, count: columns.count).joined(separator: ", ")
        return "INSERT INTO \(table) (\(names)) VALUES (\(placeholders))"
    }

    static func updateSQL(_ table: String, _ columns: [String], _ keyPredicate: String, _ dialect: any SQLDialect) -> String {
        let assignments = columns.map { "\(dialect.quote($0)) = \(dialect.placeholder)" }.joined(separator: ", ")
        return "UPDATE \(table) SET \(assignments) WHERE \(keyPredicate)"
    }

    /// The SQL for `key`, built by `build` on first use and reused afterwards.
    func sql(_ key: GeneratedSQLKey, _ build: () throws -> String) throws -> String {
        if let cached = generated.withLock({ $0[key] }) { return cached }
        let sql = try build()
        generated.withLock { cache in
            if cache.count >= Self.generatedLimit { cache.removeAll(keepingCapacity: true) }
            cache[key] = sql
        }
        return sql
    }

    /// How to insert an entity whose encoding wrote `names`, in that order: the plan of
    /// the previous insert when the names are the same (the usual case: one entity type,
    /// one shape), else a new one, validated against the table.
    func insertPlan(for names: [String], upsert: Bool) throws -> InsertPlan {
        if let plan = insertPlans.withLock({ $0[upsert] }), plan.encodedNames == names { return plan }
        let resolved = try names.map { try column($0) }
        let keySet = Set(primaryKey)
        let keyPositions = resolved.indices.filter { keySet.contains(resolved[$0]) }
        func statement(_ columns: [String]) -> String {
            var sql = Self.insertSQL(quotedTable, columns, dialect)
            if upsert {
                let nonKey = columns.filter { !keySet.contains($0) }
                sql += " " + dialect.upsertClause(conflictColumns: primaryKey, updateColumns: nonKey)
            }
            return sql
        }
        // A key column the encoding left out counts as NULL (SQLite assigns it).
        let plan = InsertPlan(
            encodedNames: names, keyPositions: keyPositions, sqlWithKey: statement(resolved),
            sqlWithoutKey: statement(resolved.filter { !keySet.contains($0) }))
        insertPlans.withLock { $0[upsert] = plan }
        return plan
    }

    /// The table's spelling of column `name` (ASCII case-insensitive), or a thrown
    /// ``DALError/Code/invalidColumn`` naming it.
    func column(_ name: String) throws -> String {
        if let real = canonicalNames[name.lowercased()] { return real }
        throw DALError(
            .invalidColumn,
            "table \(table) has no column named \(quoteIdentifier(name)) "
                + "(its columns: \(columns.map(\.name).joined(separator: ", ")))",
            table: table, column: name)
    }

    /// The existence check on column `name` (see ``existsSQL``): an exact spelling is
    /// found by a linear scan of short strings, any other by the case-insensitive map.
    func existsSQL(_ name: String) throws -> String {
        if let position = columns.firstIndex(where: { $0.name == name }) { return existsSQL[position] }
        let real = try column(name)
        guard let position = columns.firstIndex(where: { $0.name == real }) else {
            throw DALError(.invalidColumn, "table \(table) has no column named \(quoteIdentifier(name))", table: table)
        }
        return existsSQL[position]
    }

    /// `column(name)`, quoted.
    func quotedColumn(_ name: String) throws -> String { dialect.quote(try column(name)) }

    /// The `ORDER BY` clause for `orderBy` (validated and quoted), or the default one.
    func orderClause(_ orderBy: OrderBy?) throws -> String {
        guard let orderBy else { return defaultOrderClause }
        if let problem = orderBy.parseError {
            throw DALError(.invalidColumn, "invalid ORDER BY for table \(table): \(problem)", table: table)
        }
        let terms = try orderBy.terms.map { "\(try quotedColumn($0.column)) \($0.direction.rawValue)" }
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
        DALError(
            .invalidValue,
            "table \(table) has a \(primaryKey.count)-column primary key (\(primaryKey.joined(separator: ", "))) "
                + "but the key has \(count) value(s)",
            table: table)
    }

    /// The key values of `key`, checked against the primary key's width.
    @usableFromInline
    func keyValues(_ key: some EntityKey) throws -> [SQLiteValue] {
        let values = try key.keyValues()
        guard values.count == primaryKeyWidth else { throw keyWidthMismatch(values.count) }
        return values
    }
}

/// The INSERT statements for one shape of encoded properties.
final class InsertPlan: Sendable {
    /// The property names as the entity encoded them.
    let encodedNames: [String]
    /// Positions (in `encodedNames`) of the primary-key columns, ascending.
    let keyPositions: [Int]
    /// The INSERT with every encoded column.
    let sqlWithKey: String
    /// The INSERT without the key columns, for a key that is all NULL (SQLite assigns it).
    let sqlWithoutKey: String

    init(encodedNames: [String], keyPositions: [Int], sqlWithKey: String, sqlWithoutKey: String) {
        self.encodedNames = encodedNames
        self.keyPositions = keyPositions
        self.sqlWithKey = sqlWithKey
        self.sqlWithoutKey = sqlWithoutKey
    }
}
