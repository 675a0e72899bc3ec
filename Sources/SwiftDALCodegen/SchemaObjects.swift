import SwiftDAL

/// What the generator writes when it is given no list: the tables and views of a database.
enum SchemaObjects {
    /// The main schema's tables, views and virtual tables, sorted by name; left out are
    /// SQLite's own (`sqlite_…`), the shadow tables that hold a virtual table's data
    /// (FTS5's `docs_data`, `docs_idx`…) and SwiftDAL's `swiftdal_migrations`.
    static func names(in db: Database) throws -> [String] {
        if db.engine == .postgres {
            // Tables, views and materialized views of the schemas on the search path.
            return try db.fetchColumn(
                String.self,
                """
                SELECT c.relname FROM pg_class c
                WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND pg_table_is_visible(c.oid)
                AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
                ORDER BY c.relname
                """
            ).filter { $0 != "swiftdal_migrations" }
        }
        // pragma_table_list (SQLite 3.37+) tells shadow tables apart; older libraries
        // fall back to the schema table, which lists them as ordinary tables.
        var names = try? db.fetchColumn(
            String.self,
            """
            SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'view', 'virtual')
            AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
        if names == nil {
            names = try db.fetchColumn(
                String.self,
                """
                SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                ORDER BY name
                """)
        }
        return (names ?? []).filter { $0 != "swiftdal_migrations" }
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
