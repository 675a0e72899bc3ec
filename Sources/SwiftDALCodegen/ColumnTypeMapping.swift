/// The Swift type generated for a column, from its declared type by SQLite's own
/// affinity rules (<https://sqlite.org/datatype3.html>, section 3.1), with the common
/// `BOOLEAN` and date type names of the NUMERIC affinity given their Swift types.
enum ColumnTypeMapping {
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
        if type.contains("DATE") || type.contains("TIME") { return ("Date", true) }
        // DECIMAL, NUMERIC…: SQLite stores INTEGER, REAL or TEXT depending on the value.
        return ("SQLiteValue", false)
    }
}
