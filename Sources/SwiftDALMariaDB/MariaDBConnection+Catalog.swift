import Foundation
import SwiftDALConnection

/// The catalog (`information_schema` of `DATABASE()`) and query plans (`EXPLAIN`).
extension MariaDBConnection {
    /// The columns in order: `COLUMN_TYPE` as the declared type, `COLUMN_DEFAULT` as the
    /// default's SQL (MariaDB's `NULL` default as none; an `AUTO_INCREMENT` column's as
    /// `AUTO_INCREMENT`; a generated column's as `GENERATED ALWAYS AS (…) VIRTUAL` or
    /// `STORED`), the position in the primary key. Table names compare exactly
    /// (`BINARY`), as SwiftDAL quotes them.
    func columns(in table: String) throws -> [ColumnInfo] {
        try uncounted {
            var columns = [ColumnInfo]()
            _ = try run(
                SQL(
                    sql: """
                        SELECT c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE = 'NO', c.COLUMN_DEFAULT, c.EXTRA,
                               COALESCE(k.ORDINAL_POSITION, 0), c.GENERATION_EXPRESSION
                        FROM information_schema.COLUMNS c
                        LEFT JOIN information_schema.KEY_COLUMN_USAGE k
                          ON k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME
                         AND k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY'
                        WHERE c.TABLE_SCHEMA = DATABASE() AND BINARY c.TABLE_NAME = ?
                        ORDER BY c.ORDINAL_POSITION
                        """, arguments: [table])
            ) { row in
                var defaultSQL = try row.decode(String?.self, at: 3)
                if defaultSQL == "NULL" { defaultSQL = nil }
                let extra = try row.decode(String?.self, at: 4) ?? ""
                if defaultSQL == nil, extra.lowercased().contains("auto_increment") { defaultSQL = "AUTO_INCREMENT" }
                // A generated column (`VIRTUAL GENERATED`, `STORED GENERATED`): said as
                // PostgreSQL says one, so that BaseDAL never writes it.
                let upperExtra = extra.uppercased()
                if upperExtra.hasSuffix(" GENERATED"), let expression = try row.decode(String?.self, at: 6) {
                    let storage = upperExtra.hasPrefix("VIRTUAL") ? "VIRTUAL" : "STORED"
                    defaultSQL = "GENERATED ALWAYS AS (\(expression)) \(storage)"
                }
                columns.append(
                    ColumnInfo(
                        name: try row.decode(String.self, at: 0), declaredType: try row.decode(String.self, at: 1),
                        isNotNull: try row.decode(Bool.self, at: 2), defaultValueSQL: defaultSQL,
                        primaryKeyIndex: try row.decode(Int.self, at: 5), onUpdateSQL: Self.onUpdate(inExtra: extra)))
            }
            guard !columns.isEmpty else {
                throw DALError(.schemaMismatch, "the database has no table or view named \(table)", table: table)
            }
            return columns
        }
    }

    /// What `EXTRA` says the server writes on an update of the row
    /// (`on update current_timestamp(6)` gives `current_timestamp(6)`), if anything.
    static func onUpdate(inExtra extra: String) -> String? {
        guard let range = extra.range(of: "on update ", options: .caseInsensitive) else { return nil }
        let value = extra[range.upperBound...].trimmingCharacters(in: .whitespaces)
        return value.isEmpty ? nil : value
    }

    func tableKind(of table: String) throws -> TableKind {
        try uncounted {
            var kind: String?
            _ = try run(
                SQL(
                    sql:
                        "SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND BINARY TABLE_NAME = ?",
                    arguments: [table])
            ) { row in kind = try row.decode(String.self, at: 0) }
            switch kind {
            case nil: throw DALError(.schemaMismatch, "the database has no table or view named \(table)", table: table)
            case "VIEW", "SYSTEM VIEW": return .view
            default: return .rowIDTable
            }
        }
    }

    func tableExists(_ name: String) throws -> Bool {
        try uncounted {
            var exists = false
            _ = try run(
                SQL(
                    sql:
                        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND BINARY TABLE_NAME = ?",
                    arguments: [name])
            ) { row in exists = try row.decode(Int.self, at: 0) > 0 }
            return exists
        }
    }

    /// `EXPLAIN` of the statement, its parameters bound as NULL: one line per row of the
    /// plan, `id select_type table=<name> type=<access> key=<index> rows=<n> extra=<…>`
    /// (the table as the statement names it: its alias when it has one).
    func queryPlan(of sql: String) throws -> [String] {
        let text = try MariaDBStatementText(sql)
        let arguments: StatementArguments
        switch text.parameters {
        case .positional(_, let count): arguments = StatementArguments(values: Array(repeating: .null, count: count))
        case .named(let names):
            arguments = StatementArguments(
                namedValues: Dictionary(names.map { ($0, DatabaseValue.null) }) { a, _ in a })
        }
        var lines = [String]()
        try uncounted {
            _ = try run(SQL(sql: "EXPLAIN " + sql, arguments: arguments)) { row in
                func field(_ name: String) throws -> String {
                    switch try row.decode(DatabaseValue.self, named: name) {
                    case .null: "NULL"
                    case .integer(let value): String(value)
                    case .real(let value): String(value)
                    case .text(let value): value
                    case .blob(let value): String(decoding: value, as: UTF8.self)
                    }
                }
                let table = try field("table")
                let quotedTable = table.contains(" ") ? quoteIdentifier(table) : table
                lines.append(
                    "\(try field("id")) \(try field("select_type")) table=\(quotedTable) type=\(try field("type")) "
                        + "key=\(try field("key")) rows=\(try field("rows")) extra=\(try field("Extra"))")
            }
        }
        return lines
    }

}
