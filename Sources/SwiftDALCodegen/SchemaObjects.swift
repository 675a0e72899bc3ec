import SwiftDAL

/// What the generator writes when it is given no list: the tables and views of a database.
enum SchemaObjects {
    /// The tables, views and other relations of the database, sorted by name, as its
    /// engine lists them (SQLite: the main schema's tables, views and virtual tables, its
    /// own `sqlite_…` and virtual tables' shadow tables left out; PostgreSQL: those of the
    /// schemas on the search path); SwiftDAL's `swiftdal_migrations` is left out.
    static func names(in db: Database) throws -> [String] {
        try db.dialect.schemaObjectNames(db).filter { $0 != "swiftdal_migrations" }
    }

    /// Throws ``DALError/Code/schemaMismatch`` when `tables` names a table twice, as SQLite
    /// compares names (ASCII letters in any case): it would be generated twice.
    static func checkDistinct(_ tables: [String]) throws {
        var seen = [[UInt8]: String]()
        for table in tables {
            let folded = table.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
            if let other = seen[folded] {
                throw DALError(.schemaMismatch, "\(other) and \(table) name the same table: list it once", table: table)
            }
            seen[folded] = table
        }
    }

    /// Why `error`, thrown while describing a listed table or view, leaves it out: the
    /// message alone (a view whose table was dropped: `no such table: main.gone`).
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as any DatabaseError: return error.message
        case let error as DALError: return error.message
        default: return "\(error)"
        }
    }
}
