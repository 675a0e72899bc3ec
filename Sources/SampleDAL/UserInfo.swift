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
    /// The table: `users`.
    public static let tableName = "users"
    /// The columns, in the order ``init(row:)`` reads them and ``encodeColumns(to:)`` writes them.
    public static let columnNames: [String]? = [
        "id", "name", "full_name", "email", "age", "score", "bio", "avatar", "created_at"
    ]

    // Optionals are spelled `Optional<T>`, not `T?`, on purpose: a `T?` stored property
    // starts as `nil` before any initializer runs, so initializers store it twice and the
    // optimizer keeps a copy of the whole entity on every row read (see "Adding a Table DAL").

    /// `nil` until inserted: SQLite assigns it.
    public var id: Optional<Int64>
    /// Column `name`: a short user name.
    public var name: String
    /// Column `full_name`: the full name, or `nil` (`NULL`).
    public var fullName: Optional<String>
    /// Column `email`: unique in the table (a second insert of one throws `SQLiteError.constraintUnique`).
    public var email: String
    /// Column `age`: at least 0 (a `CHECK` constraint).
    public var age: Int
    /// Column `score`: a number, 0 by default.
    public var score: Double
    /// Column `bio`: free text, or `nil` (`NULL`).
    public var bio: Optional<String>
    /// Column `avatar`: image bytes, or `nil` (`NULL`).
    public var avatar: Optional<Data>
    /// Column `created_at`: when the user was created, stored as UTC text.
    public var createdAt: Date

    /// A user; `id` is `nil` for a new one and `createdAt` defaults to now.
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

    /// Writes every column, in ``columnNames`` order.
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
