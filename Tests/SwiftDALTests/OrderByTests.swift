import SampleDAL
import SwiftDAL
import Testing

/// `OrderBy`: the text form parsed and validated against the table's columns (no SQL gets
/// through it), and one meaning per text whatever its spelling (a literal, a string
/// variable, `OrderBy(parsing:)`, a column name with spaces or a comma).
@Suite struct OrderByTests {
    @Test func orderByTextFormIsParsedAndValidated() throws {
        let sample = try Sample()
        #expect(try sample.users.getAll(orderBy: "AGE desc, id").first?.name == "erin")
        let injected = #expect(throws: DALError.self) { _ = try sample.users.getAll(orderBy: "age; DROP TABLE users") }
        #expect(injected?.code == .invalidColumn)
        let badDirection = #expect(throws: DALError.self) { _ = try sample.users.getAll(orderBy: "age sideways") }
        #expect(badDirection?.message.contains("sideways") == true)
        let empty = #expect(throws: DALError.self) { _ = try sample.users.getAll(orderBy: "") }
        #expect(empty?.code == .invalidColumn)
        // A bare column name takes a shortcut; it must read exactly as the full parse does.
        #expect(OrderBy(parsing: "id").terms == [OrderBy.Term(column: "id")])
        #expect(OrderBy(parsing: "age;DROP").terms == [OrderBy.Term(column: "age;DROP")])
        #expect(OrderBy(parsing: " id").terms == [OrderBy.Term(column: "id")])
        #expect(OrderBy(parsing: "id,").parseError != nil)
        #expect(OrderBy(parsing: "é\u{2003}DESC").terms == [OrderBy.Term(column: "é", direction: .descending)])
        let spoofed = #expect(throws: DALError.self) { _ = try sample.users.getAll(orderBy: "age;DROP") }
        #expect(spoofed?.code == .invalidColumn)
    }

    @Test func orderByHasOneMeaningPerTextWhateverItsSpelling() throws {
        struct Line: Entity, Codable {
            static let tableName = "lines"
            var id: Int64
            var orderID: Int64
            var total: Int64
            enum CodingKeys: String, CodingKey {
                case id
                case orderID = "Order ID"
                case total = "Total, net"
            }
        }
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(
                sql: #"CREATE TABLE lines(id INTEGER PRIMARY KEY, "Order ID" INTEGER, "Total, net" INTEGER)"#)
            try db.execute(sql: #"INSERT INTO lines VALUES (1, 30, 5), (2, 10, 7), (3, 20, 6)"#)
        }
        let lines = BaseDAL<Line>(database: queue)
        let name = "Order ID"
        let literal = try lines.getAll(orderBy: "Order ID").map(\.id)
        #expect(literal == [2, 3, 1])
        #expect(try lines.getAll(orderBy: OrderBy(name)).map(\.id) == literal)
        #expect(try lines.getAll(orderBy: OrderBy(parsing: name)).map(\.id) == literal)
        #expect(try lines.getAll(orderBy: OrderBy(column: name)).map(\.id) == literal)
        #expect(try lines.getAll(orderBy: "Order ID DESC").map(\.id) == [1, 3, 2])
        let descending = "Order ID desc"
        #expect(try lines.getAll(orderBy: OrderBy(descending)).map(\.id) == [1, 3, 2])
        // A name with a comma is written in double quotes, as in SQL.
        #expect(try lines.getAll(orderBy: #""Total, net" DESC"#).map(\.id) == [2, 3, 1])
        #expect(try lines.getAll(orderBy: OrderBy(column: "Total, net", .descending)).map(\.id) == [2, 3, 1])
        // The text form reads back as the same order.
        for order in [
            OrderBy(column: "Total, net", .descending), "Order ID", OrderBy("a \"b\"", .ascending).then("id DESC")
        ] {
            #expect(OrderBy(order.description) == order, "\(order)")
        }
        #expect(
            #expect(throws: DALError.self) { _ = try lines.getAll(orderBy: "Order ID sideways, id") }?.code
                == .invalidColumn)
        #expect(#expect(throws: DALError.self) { _ = try lines.getAll(orderBy: #""unclosed"#) }?.code == .invalidColumn)
        // After a quoted name, only a direction: a typo is refused, not read as ascending.
        #expect(OrderBy(#""Total, net" DSC"#).parseError != nil)
        #expect(OrderBy(#""Order ID" DESC, id"#).terms.first?.direction == .descending)
        let typo = #expect(throws: DALError.self) { _ = try lines.getAll(orderBy: OrderBy(#""Total, net" DSC"#)) }
        #expect(typo?.message.contains("DSC") == true, "\(String(describing: typo))")
    }
}
