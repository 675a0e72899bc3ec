import SwiftDAL

/// The Swift type generated for a column, from its declared type: each engine's dialect
/// knows its own type names (SQLite by its affinity rules, with the NUMERIC names that say
/// what they hold: exact numbers → `Decimal`, `BOOLEAN` → `Bool`, dates → `Date`;
/// PostgreSQL by the catalog's names).
enum ColumnTypeMapping {
    /// The Swift type (without optionality) of a column declared as `declaredType` on
    /// `engine`, and whether the type needs Foundation.
    static func swiftType(
        forDeclaredType declaredType: String, engine: DatabaseEngine = .sqlite
    ) -> (name: String, needsFoundation: Bool) {
        engine.dialect.swiftType(forDeclaredType: declaredType)
    }
}
