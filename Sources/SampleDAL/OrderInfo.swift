public import Foundation
public import SwiftDAL

/// A row of `orders`, mapped by `Codable` alone (no mapping code): property names are
/// the column names, `Decimal` is stored losslessly as text, `Date` as UTC text.
///
/// For example, `try orders.insert(OrderInfo(userID: 1, product: "Pen", quantity: 2, unitPrice: 0.99))`.
public struct OrderInfo: Entity, Codable, Hashable {
    /// The table: `orders`.
    public static let tableName = "orders"

    /// The key; `nil` until inserted: SQLite assigns it.
    public var id: Int64?
    /// Column `user_id`: the user who placed the order (a foreign key to `users`).
    public var userID: Int64
    /// Column `product`: what was ordered.
    public var product: String
    /// Column `quantity`: how many, at least 1 (a `CHECK` constraint).
    public var quantity: Int
    /// Column `unit_price`: the price of one item, stored as text without loss.
    public var unitPrice: Decimal
    /// Column `placed_at`: when the order was placed, stored as UTC text.
    public var placedAt: Date

    enum CodingKeys: String, CodingKey {
        case id
        case userID = "user_id"
        case product
        case quantity
        case unitPrice = "unit_price"
        case placedAt = "placed_at"
    }

    /// An order; `id` is `nil` for a new one and `placedAt` defaults to now.
    public init(
        id: Int64? = nil, userID: Int64, product: String, quantity: Int, unitPrice: Decimal, placedAt: Date = Date()
    ) {
        self.id = id
        self.userID = userID
        self.product = product
        self.quantity = quantity
        self.unitPrice = unitPrice
        self.placedAt = placedAt
    }

    /// `quantity × unitPrice`, exact.
    public var total: Decimal { unitPrice * Decimal(quantity) }
}

/// A row of `user_tags`: a composite primary key `(user_id, tag)`, Codable mapping.
///
/// For example, `try tags.findById(CompositeKey(1, "admin"))`.
public struct UserTag: Entity, Codable, Hashable {
    /// The table: `user_tags` (a `WITHOUT ROWID` table).
    public static let tableName = "user_tags"
    /// The composite key: look rows up with `CompositeKey(userID, tag)`.
    public static let primaryKey = ["user_id", "tag"]

    /// Column `user_id`: the tagged user (a foreign key to `users`).
    public var userID: Int64
    /// Column `tag`: the tag's text.
    public var tag: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case tag
    }

    /// A tag of a user.
    public init(userID: Int64, tag: String) {
        self.userID = userID
        self.tag = tag
    }
}
