public import SwiftDAL

/// The DAL of `users`: everything from ``SwiftDAL/BaseDAL``, plus a few queries of its own, and
/// users listed by name unless told otherwise.
///
/// For example:
///
/// ```swift
/// let users = UserDAL(database: pool)
/// let ann = try users.findByEmail("ann@example.com")
/// let matches = try users.search(keyword: "mar")    // name or full name
/// ```
public final class UserDAL: BaseDAL<UserInfo>, @unchecked Sendable {
    /// Users are listed by name by default.
    public override var defaultSortField: String { "name" }

    /// The user with this email, or `nil`.
    ///
    /// For example, `try users.findByEmail("alice@example.com")`.
    public func findByEmail(_ email: String) throws -> UserInfo? {
        try findSingle(condition: "email = \(email)")
    }

    /// The classic keyword search: users whose name or full name contains `keyword`, as
    /// the engine's `LIKE` compares: ASCII case folded on SQLite, case-sensitive on
    /// PostgreSQL and on MariaDB's binary collations. The keyword is bound, and its
    /// `%`/`_` match literally.
    ///
    /// For example, `try users.search(keyword: "50%")` finds "50%", not every name.
    public func search(keyword: String, orderBy: OrderBy? = nil) throws -> [UserInfo] {
        try find(
            condition: "name LIKE \(containing: keyword) OR full_name LIKE \(containing: keyword)", orderBy: orderBy)
    }

    /// Users whose age is in `range`, oldest first.
    ///
    /// For example, `try users.findByAge(18...30)`.
    public func findByAge(_ range: ClosedRange<Int>) throws -> [UserInfo] {
        try find(condition: "age BETWEEN \(range.lowerBound) AND \(range.upperBound)", orderBy: "age DESC, id")
    }

    /// `async` form of ``findByEmail(_:)``.
    ///
    /// For example, `try await users.findByEmail("alice@example.com")`.
    public func findByEmail(_ email: String) async throws -> UserInfo? {
        try await findSingle(condition: "email = \(email)")
    }
}
