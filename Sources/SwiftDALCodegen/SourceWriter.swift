import SwiftDALConnection

/// Writes the Swift text of ``EntityModel``s. Everything it writes is decided by the
/// models and the access level alone (no date, no path), so that generating twice from
/// the same schema gives the same bytes.
struct SourceWriter {
    let access: EntityGenerator.AccessLevel

    /// The access modifier and a space (`"public "`), or nothing for internal code.
    private var modifier: String { access == .public ? "public " : "" }

    /// A whole file: header, imports, then each model.
    func file(
        _ models: [EntityModel], origin: String?, leftOut: [LeftOut] = [], renamings: [TypeNames.Renaming] = []
    ) -> String {
        var lines = header(models, origin: origin, leftOut: leftOut, renamings: renamings)
        lines.append("")
        let importModifier = access == .public ? "public " : ""
        if models.contains(where: { $0.properties.contains(where: \.needsFoundation) }) {
            lines.append("\(importModifier)import Foundation")
        }
        lines.append("\(importModifier)import SwiftDAL")
        for model in models {
            lines.append("")
            lines += entity(model)
            lines.append("")
            lines += dal(model)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The entity struct of `model`.
    func entity(_ model: EntityModel) -> [String] {
        let properties = model.properties
        var lines = [
            "/// A row of `\(SwiftIdentifier.commentText(model.tableName))`, mapped explicitly (columns read by index, no Codable).",
            "///",
            "/// For example, `let rows = try \(model.dalName)(database: pool).getAll()`.",
            "\(modifier)struct \(model.entityName): Entity, Hashable {",
            "    \(modifier)static let tableName = \(SwiftIdentifier.stringLiteral(model.tableName))"
        ]
        if model.primaryKey.isEmpty {
            lines.append("    \(modifier)static let primaryKey: [String] = []")
        } else if model.primaryKey != ["id"] {
            lines.append(
                "    \(modifier)static let primaryKey = [\(model.primaryKey.map(SwiftIdentifier.stringLiteral).joined(separator: ", "))]"
            )
        }
        lines.append("    \(modifier)static let columnNames: [String]? = [")
        lines += Self.wrapped(properties.map { SwiftIdentifier.stringLiteral($0.column) }, indent: "        ")
        lines.append("    ]")
        for property in properties {
            lines.append("")
            lines.append(
                "    /// Column `\(SwiftIdentifier.commentText(property.column))` (\(Self.columnSummary(property))).")
            if let note = Self.nilNote(property) { lines.append("    /// \(note)") }
            lines.append("    \(modifier)\(property.declaration)")
        }
        let parameters = properties.map { property in
            let defaultValue = property.isOptional ? " = nil" : ""
            return
                "\(SwiftIdentifier.escaped(property.name)): \(property.typeName)\(property.isOptional ? "?" : "")\(defaultValue)"
        }
        lines += ["", "    /// An entity with every column given; an optional left out is `nil` (see each property)."]
        lines += Self.parenthesized("    \(modifier)init(", parameters, ") {", indent: "    ")
        lines += properties.map {
            "        self.\(SwiftIdentifier.escaped($0.name)) = \(SwiftIdentifier.escaped($0.name))"
        }
        lines += [
            "    }",
            "",
            "    /// Reads a row of exactly ``columnNames``, by index.",
            "    \(modifier)init(row: RowView) throws {"
        ]
        // Every column is read before the entity exists, then moved in by the memberwise
        // initializer: assigning the properties one by one between `try`s leaves a
        // partly initialized entity on the error paths, and the optimizer then copies it.
        let arguments = properties.enumerated().map { index, property in
            "\(SwiftIdentifier.argumentLabel(property.name)): row[\(index)]"
        }
        lines += Self.parenthesized("        try self.init(", arguments, ")", indent: "        ")
        lines += [
            "    }",
            "",
            "    /// Writes every column, in ``columnNames`` order.",
            "    \(modifier)func encodeColumns(to columns: inout ColumnValues) throws {"
        ]
        lines += properties.map {
            "        try columns.encode(self.\(SwiftIdentifier.escaped($0.name)), for: \(SwiftIdentifier.stringLiteral($0.column)))"
        }
        lines += ["    }", "}"]
        return lines
    }

    /// The DAL class of `model`: a `BaseDAL`, or a `ReadOnlyDAL` for a view or a table
    /// without a primary key.
    func dal(_ model: EntityModel) -> [String] {
        let table = SwiftIdentifier.commentText(model.tableName)
        let example = "/// For example, `let count = try \(model.dalName)(database: pool).getRecordCount()`."
        guard let reason = model.readOnlyReason else {
            return [
                "/// The DAL of `\(table)`: finds, counts, paging, inserts, updates and deletes",
                "/// come from `BaseDAL`; add the table's own queries in an extension.",
                "///",
                example,
                "\(modifier)final class \(model.dalName): BaseDAL<\(model.entityName)>, @unchecked Sendable {}"
            ]
        }
        return [
            "/// The read-only DAL of `\(table)` (\(Self.readOnlyExplanation(reason))): finds, counts and",
            "/// paging come from `ReadOnlyDAL`, which has no insert, update or delete; add the",
            "/// \(reason == .view ? "view" : "table")'s own queries in an extension.",
            "///",
            example,
            "\(modifier)final class \(model.dalName): ReadOnlyDAL<\(model.entityName)>, @unchecked Sendable {}"
        ]
    }

    /// Why a DAL is read-only, in a few words.
    static func readOnlyExplanation(_ reason: EntityModel.ReadOnlyReason) -> String {
        switch reason {
        case .view: return "a view"
        case .noPrimaryKey: return "no primary key, which BaseDAL's updates and deletes need"
        }
    }

    /// The column's declared type, `NOT NULL` and default, as a comment says them:
    /// `TEXT NOT NULL DEFAULT 'new'`.
    static func columnSummary(_ property: EntityModel.Property) -> String {
        var summary = property.declaredType.isEmpty ? "no declared type" : property.declaredType
        if property.isNotNull { summary += " NOT NULL" }
        if let defaultValue = property.defaultValueSQL {
            // MariaDB's catalog says `AUTO_INCREMENT` where a default would be: a keyword
            // of the column, not a default value.
            summary += defaultValue == "AUTO_INCREMENT" ? " AUTO_INCREMENT" : " DEFAULT " + defaultValue
        }
        if let onUpdate = property.onUpdateSQL { summary += " ON UPDATE " + onUpdate }
        return SwiftIdentifier.commentText(summary)
    }

    /// What `nil` means for an optional property whose `nil` is not simply `NULL`.
    static func nilNote(_ property: EntityModel.Property) -> String? {
        if property.isAssignedByDatabase { return "`nil` until the database assigns it on insert." }
        if let defaultValue = property.defaultValueSQL, ColumnInfo.saysGenerated(defaultValue) {
            return "Computed by the database: read, never written (inserts and updates leave it out)."
        }
        guard property.isOptional, property.defaultValueSQL != nil else { return nil }
        return property.isNotNull
            ? "`nil` means the default on insert; an update keeps the stored value."
            : "`nil` means the default on insert, NULL on update."
    }

    /// `head`, the comma-separated `items` and `tail` on one line when that fits in 110
    /// characters; otherwise `head`, the items wrapped one level deeper than `indent`,
    /// and `tail` on a line of its own at `indent`.
    static func parenthesized(_ head: String, _ items: [String], _ tail: String, indent: String) -> [String] {
        let line = head + items.joined(separator: ", ") + tail
        if line.count <= 110 { return [line] }
        return [head] + wrapped(items, indent: indent + "    ", lastComma: false) + [indent + tail]
    }

    /// `items` separated by commas, as lines of at most about 110 characters.
    static func wrapped(_ items: [String], indent: String, lastComma: Bool = true) -> [String] {
        var lines = [String]()
        var line = ""
        for (position, item) in items.enumerated() {
            let piece = item + (position < items.count - 1 || lastComma ? "," : "")
            if !line.isEmpty && indent.count + line.count + 1 + piece.count > 110 {
                lines.append(indent + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + piece
        }
        if !line.isEmpty { lines.append(indent + line) }
        return lines
    }
}
