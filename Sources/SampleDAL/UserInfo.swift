public import Foundation
public import SwiftDAL

/// A row of `users`, mapped explicitly (by column index, no Codable): the hot-path style.
///
/// For example:
///
/// ```swift
/// let user = UserInfo(name: "ann", fullName: "Ann Lee", email: "ann@example.com", age: 31)
/// let id = try users.insert2(user)
/// ```
public struct UserInfo: Entity, Hashable {
    public static let tableName = "users"
    public static let columnNames: [String]? = [
        "id", "name", "full_name", "email", "age", "score", "bio", "avatar", "created_at",
    ]

    // Optionals are spelled `Optional<T>`, not `T?`, on purpose: a `T?` stored property
    // starts as `nil` before any initializer runs, so initializers store it twice and the
    // optimizer keeps a copy of the whole entity on every row read (see README, "Performance").

    /// `nil` until inserted: SQLite assigns it.
    public var id: Optional<Int64>
    public var name: String
    public var fullName: Optional<String>
    public var email: String
    public var age: Int
    public var score: Double
    public var bio: Optional<String>
    public var avatar: Optional<Data>
    public var createdAt: Date

    public init(
        id: Int64? = nil, name: String, fullName: String? = nil, email: String, age: Int, score: Double = 0,
        bio: String? = nil, avatar: Data? = nil, createdAt: Date = Date()
    ) {
        self.id = id
        self.name = name
        self.fullName = fullName
        self.email = email
        self.age = age
        self.score = score
        self.bio = bio
        self.avatar = avatar
        self.createdAt = createdAt
    }

    /// Reads every column first, then builds the entity in one step (assigning properties
    /// one by one between `try`s would leave a partly built entity that the optimizer copies).
    public init(row: RowView) throws {
        try self.init(
            id: row[0], name: row[1], fullName: row[2], email: row[3], age: row[4], score: row[5], bio: row[6],
            avatar: row[7], createdAt: row[8])
    }

    /// The table as this version of the code expects it (an explicitly mapped entity
    /// declares it; Codable entities derive theirs).
    public static func tableDefinition() throws -> TableDefinition {
        TableDefinition(tableName) { t in
            t.column("id", .integer)
            t.column("name", .text, notNull: true)
            t.column("full_name", .text)
            t.column("email", .text, notNull: true, unique: true)
            t.column("age", .integer, notNull: true, default: .value(0), check: "age >= 0")
            t.column("score", .real, notNull: true, default: .value(0))
            t.column("bio", .text)
            t.column("avatar", .blob)
            t.column("created_at", .text, notNull: true, default: .expression("CURRENT_TIMESTAMP"))
            t.primaryKey(["id"])
            t.index("users_age", on: ["age"])
        }
    }

    public func encodeColumns(to columns: inout ColumnValues) throws {
        try columns.encode(id, for: "id")
        try columns.encode(name, for: "name")
        try columns.encode(fullName, for: "full_name")
        try columns.encode(email, for: "email")
        try columns.encode(age, for: "age")
        try columns.encode(score, for: "score")
        try columns.encode(bio, for: "bio")
        try columns.encode(avatar, for: "avatar")
        try columns.encode(createdAt, for: "created_at")
    }
}
