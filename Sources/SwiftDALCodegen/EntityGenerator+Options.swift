import SwiftDAL

extension EntityGenerator {
    /// How the generated code is named and exposed.
    ///
    /// For example, `EntityGenerator.Options(access: .internal, typeStems: ["people": "Person"])`.
    public struct Options: Sendable, Hashable {
        /// The access level of the generated declarations.
        public var access: AccessLevel
        /// Appended to a table's type stem for the entity (`User` + `Info`).
        public var entitySuffix: String
        /// Appended to a table's type stem for the DAL (`User` + `DAL`).
        public var dalSuffix: String
        /// Type stems chosen by hand, by table name, where the singular rule guesses wrong.
        public var typeStems: [String: String]

        /// Options with the defaults: public, `Info` and `DAL` suffixes, stems by rule.
        ///
        /// For example, `EntityGenerator.Options(entitySuffix: "Record")`.
        public init(
            access: AccessLevel = .public, entitySuffix: String = "Info", dalSuffix: String = "DAL",
            typeStems: [String: String] = [:]
        ) {
            self.access = access
            self.entitySuffix = entitySuffix
            self.dalSuffix = dalSuffix
            self.typeStems = typeStems
        }

        /// Checks the names with Swift's own identifier rule (letters of any script, digits
        /// after the first character, emoji, combining marks after the first character…):
        /// each suffix must be made of identifier characters (or be empty), the two must
        /// differ, and every stem plus each suffix must be a Swift type name that is not a
        /// keyword. Throws ``SwiftDAL/DALError/Code/schemaMismatch`` naming what is wrong.
        ///
        /// For example, `try EntityGenerator.Options(typeStems: ["客户": "客户"]).validate()` passes;
        /// `EntityGenerator.Options(typeStems: ["people": "Bad Name"])` throws.
        public func validate() throws {
            for (option, suffix) in [("entity suffix", entitySuffix), ("DAL suffix", dalSuffix)] {
                guard SwiftIdentifier.isSuffix(suffix) else {
                    throw DALError(
                        .schemaMismatch,
                        "the \(option) \(SwiftIdentifier.stringLiteral(suffix)) has characters a Swift identifier cannot have"
                    )
                }
            }
            guard entitySuffix != dalSuffix else {
                throw DALError(
                    .schemaMismatch,
                    "the entity and DAL suffixes are both \(SwiftIdentifier.stringLiteral(dalSuffix)): the entity and "
                        + "its DAL would have the same name")
            }
            for (table, stem) in typeStems.sorted(by: { $0.key < $1.key }) {
                for typeName in [stem + entitySuffix, stem + dalSuffix] where !SwiftIdentifier.isTypeName(typeName) {
                    throw DALError(
                        .schemaMismatch,
                        "the type stem \(SwiftIdentifier.stringLiteral(stem)) of table \(table) gives "
                            + "\(SwiftIdentifier.stringLiteral(typeName)), which is not a Swift type name; choose another "
                            + "stem or suffix",
                        table: table)
                }
            }
        }
    }

    /// The access level of generated declarations.
    ///
    /// For example, `options.access = .internal` (the command's `--internal`) for code
    /// inside a service's own module.
    public enum AccessLevel: String, Sendable, Hashable {
        /// `public`: for a DAL module that services import.
        case `public`
        /// `internal`: for DALs inside the service's own module.
        case `internal`
    }
}
