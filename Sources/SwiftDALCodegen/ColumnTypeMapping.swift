import SwiftDAL

/// The Swift type generated for a column, from its declared type by SQLite's own
/// affinity rules (<https://sqlite.org/datatype3.html>, section 3.1), with the type names
/// of the NUMERIC affinity that say what they hold given their Swift types: exact numbers
/// (`DECIMAL`, `NUMERIC`, `MONEY`…) → `Decimal`, `BOOLEAN` → `Bool`, dates → `Date`.
enum ColumnTypeMapping {
    /// The first words of declared types that mean an exact number: `DECIMAL(10,2)`,
    /// `NUMERIC`, `NUMBER` (Oracle), `MONEY` and `SMALLMONEY` (SQL Server), `CURRENCY`
    /// (Access), `DEC` and `FIXED` (MySQL's synonyms of `DECIMAL`).
    static let exactNumberTypes: Set<String> = [
        "DECIMAL", "DEC", "NUMERIC", "NUMBER", "MONEY", "SMALLMONEY", "CURRENCY", "FIXED"
    ]

    /// The Swift type (without optionality) of a column declared as `declaredType`, and
    /// whether the type needs Foundation.
    /// PostgreSQL's names that say what they hold come first: `bytea`, `uuid`, and
    /// `json`/`jsonb`, which PostgreSQL always returns as text (on SQLite a `JSON` column
    /// has NUMERIC affinity, where `'5'` becomes the integer 5: `SQLiteValue` there).
    static func swiftType(
        forDeclaredType declaredType: String, engine: DatabaseEngine = .sqlite
    ) -> (name: String, needsFoundation: Bool) {
        if engine == .postgres { return postgresSwiftType(forDeclaredType: declaredType) }
        let type = declaredType.uppercased()
        if type == "BYTEA" { return ("Data", true) }
        if type == "UUID" { return ("UUID", true) }
        if engine == .postgres, type == "JSON" || type == "JSONB" { return ("String", false) }
        // The affinity rules, as SQLite applies them (ColumnAffinity: bytes, ASCII case).
        switch ColumnAffinity(declaredType: declaredType) {
        case .integer: return ("Int64", false)
        case .text: return ("String", false)
        case .blob:
            // No declared type: no affinity, any storage class.
            return declaredType.isEmpty ? ("SQLiteValue", false) : ("Data", true)
        case .real: return ("Double", false)
        case .numeric: break
        }
        // NUMERIC affinity.
        if type.hasPrefix("BOOL") { return ("Bool", false) }
        if type.contains("DATE") || type.contains("TIMESTAMP") { return ("Date", true) }
        // SQLite keeps a number-like value as INTEGER or REAL and anything else as TEXT:
        // `Decimal` reads INTEGER, REAL and numeric TEXT, and stores text, losslessly.
        let firstWord = String(type.prefix { $0.isLetter })
        if exactNumberTypes.contains(firstWord) { return ("Decimal", true) }
        // Any other name (TIME, INTERVAL…): whatever storage class the database gave, exactly.
        return ("SQLiteValue", false)
    }

    /// PostgreSQL's types, by the name the catalog writes (`format_type`), each to a Swift
    /// type that reads it and writes it back as it was. Affinity rules do not apply: they
    /// made `interval` and `point` an `Int64` (the names hold "INT") and `money` a
    /// `Decimal` (it reads as `$1,234.56`). Every type has a text form the server reads
    /// back, so a type with no closer Swift type is a `String`: money, intervals and
    /// times of day, network addresses, bit strings, full-text values, geometric values,
    /// ranges, arrays, enums, domains, `json`, `jsonb`, `xml`, and any other.
    static func postgresSwiftType(forDeclaredType declaredType: String) -> (name: String, needsFoundation: Bool) {
        let type = declaredType.lowercased()
        if type.hasSuffix("]") { return ("String", false) }  // an array: its text form
        var base = Substring(type.prefix { $0 != "(" })
        while base.last == " " { base = base.dropLast() }
        switch base {
        case "smallint", "integer", "bigint", "oid": return ("Int64", false)
        case "real", "double precision": return ("Double", false)
        case "numeric", "decimal": return ("Decimal", true)
        case "boolean": return ("Bool", false)
        case "bytea": return ("Data", true)
        case "uuid": return ("UUID", true)
        case "date", "timestamp with time zone", "timestamp without time zone", "timestamp":
            return ("Date", true)
        default: return ("String", false)
        }
    }
}
