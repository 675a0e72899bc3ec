import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

/// An enum whose raw values include one above `Int64.max`.
private enum Mask: UInt64, Codable {
    case none = 0
    case all = 18_446_744_073_709_551_615
}

/// An enum whose raw values are integers.
private enum Tier: Int, Codable {
    case basic = 1
    case gold = 2
}

/// A wrapper whose JSON is one number: a `Decimal` of more digits than a double keeps.
private struct Price: Codable, Equatable {
    var value: Decimal
    init(_ value: Decimal) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Decimal.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// A wrapper whose JSON is one number: a `Double`.
private struct Ratio: Codable, Equatable {
    var value: Double
    init(_ value: Double) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Double.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

private struct Account: Entity, Codable, Equatable {
    static let tableName = "accounts"
    var id: Int64?
    var mask: Mask?
    var tier: Tier?
    var price: Price?
    var ratio: Ratio?
}

/// Codable values that are neither `DatabaseValueConvertible` nor JSON objects (enums with
/// raw values, single-value wrappers) are stored as a plain value that reads back as written,
/// and a stored value that does not decode is an error that does not quote it.
@Suite struct CodableValueFidelityTests {
    private func accounts() throws -> (DatabaseQueue, BaseDAL<Account>) {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE accounts(id INTEGER PRIMARY KEY, mask ANY, tier ANY, price ANY, ratio ANY) STRICT")
        }
        return (queue, BaseDAL<Account>(database: queue))
    }

    /// The storage class and the text of column `column` of row `id`, read with SQL.
    private func stored(_ queue: DatabaseQueue, _ column: String, id: Int64) throws -> String {
        try queue.read { db in
            let row = try #require(
                try db.fetchOne(SQL(sql: "SELECT typeof(\(column)) || ':' || \(column) FROM accounts WHERE id = \(id)"))
            )
            return try row.decode(String.self, at: 0)
        }
    }

    @Test func numbersADoubleCannotHoldAreStoredAsTheirDigits() throws {
        let (queue, accounts) = try accounts()
        let digits = try #require(Decimal(string: "12345678901234567890.123456789"))
        var account = Account(mask: .all, tier: .gold, price: Price(digits), ratio: Ratio(0.1))
        account.id = try accounts.insert2(account)
        let id = try #require(account.id)
        #expect(try accounts.findById(id) == account)
        #expect(try stored(queue, "mask", id: id) == "text:18446744073709551615")
        #expect(try stored(queue, "price", id: id) == "text:12345678901234567890.123456789")
        // Numbers a double or an integer holds exactly keep their plain storage class.
        #expect(try stored(queue, "tier", id: id) == "integer:2")
        #expect(try stored(queue, "ratio", id: id) == "real:0.1")

        // Read back and written back: nothing changes; a change is written.
        let read = try #require(try accounts.findById(id))
        #expect(try accounts.update(read))
        #expect(try stored(queue, "mask", id: id) == "text:18446744073709551615")
        var changed = read
        changed.mask = Mask.none
        changed.price = Price(Decimal(string: "0.000000000000000000000000000001")!)
        #expect(try accounts.update(changed))
        #expect(try accounts.findById(id) == changed)
        changed.mask = .all
        #expect(try accounts.update(changed))
        #expect(try accounts.findById(id)?.mask == .all)
    }

    @Test func aWrappedNegativeZeroKeepsItsSign() throws {
        let (queue, accounts) = try accounts()
        let id = try accounts.insert2(Account(ratio: Ratio(-0.0)))
        #expect(try accounts.findById(id)?.ratio?.value.sign == .minus)
        #expect(try stored(queue, "ratio", id: id).hasPrefix("real:"))
    }

    @Test func aStoredValueThatDoesNotDecodeIsNotQuotedInTheError() throws {
        let (queue, accounts) = try accounts()
        try queue.write { db in
            try db.execute("INSERT INTO accounts(id, tier) VALUES (1, 4111111111111111)")
            try db.execute("INSERT INTO accounts(id, mask) VALUES (2, 4222222222222222)")
            try db.execute("INSERT INTO accounts(id, price) VALUES (3, '{\"secret\": 4333333333333333}')")
            try db.execute("INSERT INTO accounts(id, tier) VALUES (4, '\"4444444444444444\"')")
        }
        for (id, column) in [(Int64(1), "tier"), (2, "mask"), (3, "price"), (4, "tier")] {
            let error = #expect(throws: DALError.self) { _ = try accounts.findById(id) }
            #expect(error?.code == .conversionFailed)
            #expect(error?.column == column)
            let description = String(describing: error)
            #expect(!description.contains("4111") && !description.contains("4222"), "\(description)")
            #expect(!description.contains("4333") && !description.contains("4444"), "\(description)")
            #expect(!description.contains("secret"), "\(description)")
        }
    }
}
