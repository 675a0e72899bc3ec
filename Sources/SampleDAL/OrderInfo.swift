public import Foundation
public import SwiftDAL

/// A row of `orders`, mapped by `Codable` alone (no mapping code): property names are
/// the column names, `Decimal` is stored losslessly as text, `Date` as UTC text.
///
/// For example, `try orders.insert(OrderInfo(userID: 1, product: "Pen", quantity: 2, unitPrice: 0.99))`.
public struct OrderInfo: Entity, Codable, Hashable {
    public static let tableName = "orders"

    public var id: Int64?
    public var userID: Int64
    public var product: String
    public var quantity: Int
    public var unitPrice: Decimal
    public var placedAt: Date

    enum CodingKeys: String, CodingKey {
        case id
        case userID = "user_id"
        case product
        case quantity
        case unitPrice = "unit_price"
        case placedAt = "placed_at"
    }

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
    public static let tableName = "user_tags"
    public static let primaryKey = ["user_id", "tag"]

    public var userID: Int64
    public var tag: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case tag
    }

    public init(userID: Int64, tag: String) {
        self.userID = userID
        self.tag = tag
    }
}
