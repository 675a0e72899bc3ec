/// An opaque position in a keyset-paged listing: where the next page starts. Send its
/// ``token`` to the client (a JSON field, a query parameter) and build it again from
/// what the client sends back; only the DAL that issued it reads it.
///
/// The token holds the sort-key values of the last row of the page (the primary key
/// among them), the order, and a fingerprint of the table, condition and scope, signed
/// with HMAC-SHA256. It is readable, not secret (it holds values of a row the caller
/// was just given), but it cannot be forged or altered: a token that is garbage,
/// truncated, tampered with, signed with another key, or made for another table, order,
/// condition or scope makes `findPage` throw ``DALError/Code/invalidCursor``, before
/// any SQL runs.
///
/// For example:
///
/// ```swift
/// let page = try users.findPage(after: request.cursor.map(PageCursor.init), limit: 20)
/// response.nextCursor = page.nextCursor?.token      // nil on the last page
/// ```
public struct PageCursor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The token's text (URL-safe base64, no padding).
    public let token: String

    /// A cursor from a token a client sent back; it is checked when it is used.
    ///
    /// For example, `PageCursor(request.query["cursor"] ?? "")`.
    public init(_ token: String) {
        self.token = token
    }

    /// Encodes as the bare token string.
    public init(from decoder: any Decoder) throws {
        token = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes as the bare token string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(token)
    }

    /// The token.
    public var description: String { token }
}

/// One page of a keyset-paged listing: the entities, and the cursor of the next page
/// (`nil` when this page is the last).
///
/// For example:
///
/// ```swift
/// var cursor: PageCursor? = nil
/// repeat {
///     let page = try users.findPage(after: cursor, limit: 100, orderBy: "id")
///     try export(page.items)
///     cursor = page.nextCursor
/// } while cursor != nil
/// ```
public struct KeysetPage<Element: Sendable>: Sendable {
    /// The entities of this page, in the listing's order.
    public var items: [Element]
    /// Where the next page starts; `nil` when no row follows this page.
    public var nextCursor: PageCursor?

    /// A page of `items`, followed by the page at `nextCursor`.
    ///
    /// For example, `KeysetPage(items: [], nextCursor: nil)`.
    public init(items: [Element], nextCursor: PageCursor?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
