/// The Swift type generated for a column, from its declared type by SQLite's own
/// affinity rules (<https://sqlite.org/datatype3.html>, section 3.1), with the type names
/// of the NUMERIC affinity that say what they hold given their Swift types: exact numbers
/// (`DECIMAL`, `NUMERIC`, `MONEY`…) → `Decimal`, `BOOLEAN` → `Bool`, dates → `Date`.
enum ColumnTypeMapping {
    /// The first words of declared types that mean an exact number: `DECIMAL(10,2)`,
    /// `NUMERIC`, `NUMBER` (Oracle), `MONEY` and `SMALLMONEY` (SQL Server), `CURRENCY`
    /// (Access), `DEC` and `FIXED` (MySQL's synonyms of `DECIMAL`).
    static let exactNumberTypes: Set<String> = ["DECIMAL", "DEC", "NUMERIC", "NUMBER", "MONEY", "SMALLMONEY", "CURRENCY", "FIXED"]

    /// The Swift type (without optionality) of a column declared as `declaredType`, and
    /// whether the type needs Foundation.
    static func swiftType(forDeclaredType declaredType: String) -> (name: String, needsFoundation: Bool) {
        let type = declaredType.uppercased()
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
        // Any other name (TIME, JSON, UUID…): whatever storage class SQLite kept, exactly.
        return ("SQLiteValue", false)
    }
}
