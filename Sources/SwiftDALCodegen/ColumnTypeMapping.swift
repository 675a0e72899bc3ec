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
        let type = declaredType.uppercased()
        if type == "BYTEA" { return ("Data", true) }
        if type == "UUID" { return ("UUID", true) }
        if engine == .postgres, type == "JSON" || type == "JSONB" { return ("String", false) }
        // The affinity rules, in SQLite's order.
        if type.contains("INT") { return ("Int64", false) }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return ("String", false) }
        if type.contains("BLOB") { return ("Data", true) }
        if type.isEmpty { return ("SQLiteValue", false) }  // no affinity: any storage class
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return ("Double", false) }
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
}
