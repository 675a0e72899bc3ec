public import Foundation
public import SwiftDAL

/// The DAL of `orders` (each order belongs to a user: a foreign key with `ON DELETE CASCADE`).
///
/// For example, `let recent = try orders.findByUser(1)`.
public final class OrderDAL: BaseDAL<OrderInfo>, @unchecked Sendable {
    /// Newest orders first by default.
    public override var defaultSortField: String { "placed_at" }
    /// Descending, so that the newest orders come first.
    public override var defaultSortDirection: SortDirection { .descending }

    /// Refuses orders that could never be valid, before SQLite sees them.
    public override func validate(_ order: OrderInfo) throws {
        guard order.unitPrice >= 0 else {
            throw DALError(
                .invalidValue, "an order cannot have a negative price", table: tableName, column: "unit_price")
        }
    }

    /// The orders of one user, newest first.
    ///
    /// For example, `try orders.findByUser(1)`.
    public func findByUser(_ userID: Int64) throws -> [OrderInfo] {
        try find(condition: "user_id = \(userID)")
    }

    /// The total spent by one user (exact decimal arithmetic, summed in Swift).
    ///
    /// For example, `try orders.totalSpent(by: 1)`.
    public func totalSpent(by userID: Int64) throws -> Decimal {
        try findByUser(userID).reduce(Decimal(0)) { $0 + $1.total }
    }
}

/// The DAL of `user_tags` (composite primary key).
///
/// For example, `try tags.insert(UserTag(userID: 1, tag: "admin"))`.
public final class UserTagDAL: BaseDAL<UserTag>, @unchecked Sendable {
    /// The tags of one user, sorted.
    ///
    /// For example, `try tags.tags(of: 1)`.
    public func tags(of userID: Int64) throws -> [String] {
        try getFieldList("tag", condition: "user_id = \(userID)", as: String.self)
    }
}
