import SwiftDAL

/// The entity and DAL type names of the tables generated together: distinct, and the
/// same for the same schema and options.
///
/// Hand-chosen stems (``EntityGenerator/Options/typeStems``) are taken as given: two
/// that give the same name are an error naming both tables. Stems made by the naming
/// rule step aside: when two tables would get the same name (they differ only in
/// characters a Swift name drops: `user-log` and `user_log`, `客户` and `客户!`), the
/// later one in table order is numbered (`UserLog2Info`), and the file's header says so.
struct TypeNames {
    /// A table whose rule-made stem was numbered.
    struct Renaming: Sendable, Hashable {
        /// The numbered table.
        let table: String
        /// Its entity and DAL names.
        let entityName: String, dalName: String
        /// The table that has the name it would have had.
        let sharedWith: String
        /// That table's entity name.
        let sharedEntityName: String
    }

    /// The type stem of each table.
    private(set) var stems: [String: String] = [:]
    /// The tables numbered, in table order.
    private(set) var renamings: [Renaming] = []

    /// Names for `tables` (in the order given) under `options`.
    init(for tables: [String], options: EntityGenerator.Options) throws {
        var owners = [String: String]()  // type name → table
        for table in tables {
            guard let stem = options.typeStems[table] else { continue }
            for typeName in [stem + options.entitySuffix, stem + options.dalSuffix] {
                if let other = owners[typeName] {
                    throw DALError(
                        .schemaMismatch,
                        "tables \(other) and \(table) would both be \(typeName); give one a type stem of its own",
                        table: table)
                }
                owners[typeName] = table
            }
            stems[table] = stem
        }
        for table in tables where options.typeStems[table] == nil {
            let base = Naming.typeStem(ofTable: table)
            var stem = base
            var number = 2
            while owners[stem + options.entitySuffix] != nil || owners[stem + options.dalSuffix] != nil {
                stem = base + String(number)
                number += 1
            }
            if stem != base {
                let other = owners[base + options.entitySuffix] ?? owners[base + options.dalSuffix] ?? ""
                renamings.append(
                    Renaming(
                        table: table, entityName: stem + options.entitySuffix, dalName: stem + options.dalSuffix,
                        sharedWith: other, sharedEntityName: (stems[other] ?? base) + options.entitySuffix))
            }
            owners[stem + options.entitySuffix] = table
            owners[stem + options.dalSuffix] = table
            stems[table] = stem
        }
    }
}
