import Foundation
import SwiftDAL

/// A benchmark user, whichever mapping it uses.
protocol BenchUser: Entity {
    init(id: Int64?, name: String, email: String, age: Int, score: Double, bio: String?)
    var id: Int64? { get }
    var name: String { get }
    var email: String { get }
    var bio: String? { get }
}

extension BenchUser {
    /// Row `i` of the benchmark definition.
    init(row i: Int64) {
        self.init(
            id: nil, name: "user\(i)", email: "user\(i)@example.com", age: Int(18 + i % 60), score: Double(i) * 0.5,
            bio: i % 3 == 0 ? nil : "bio of user \(i)")
    }

    /// What the C harness adds up for a materialized user.
    var checksum: Int64 {
        (id ?? 0) + Int64(name.utf8.count) + Int64(email.utf8.count) + Int64(bio?.utf8.count ?? 0)
    }
}

/// Row `i` of BENCHMARKS.md, mapped explicitly (by column index, no Codable).
struct ExplicitUser: BenchUser {
    static let tableName = "users"
    static let columnNames: [String]? = ["id", "name", "email", "age", "score", "bio"]

    var id: Int64?
    var name: String
    var email: String
    var age: Int
    var score: Double
    var bio: String?
}

extension ExplicitUser {
    init(row: RowView) throws {
        id = try row[0]
        name = try row[1]
        email = try row[2]
        age = try row[3]
        score = try row[4]
        bio = try row[5]
    }

    func encodeColumns(to columns: inout ColumnValues) throws {
        try columns.encode(id, for: "id")
        try columns.encode(name, for: "name")
        try columns.encode(email, for: "email")
        try columns.encode(age, for: "age")
        try columns.encode(score, for: "score")
        try columns.encode(bio, for: "bio")
    }
}

/// The same row, mapped by Codable alone.
struct CodableUser: BenchUser, Codable {
    static let tableName = "users"

    var id: Int64?
    var name: String
    var email: String
    var age: Int
    var score: Double
    var bio: String?
}

/// The id sequence of BENCHMARKS.md (the same as rawbench_next_id).
struct IDSequence {
    var state: UInt64
    let count: Int64

    init(seed: UInt64 = 42, count: Int64) {
        state = seed
        self.count = count
    }

    mutating func next() -> Int64 {
        state = (state &* 1_103_515_245 &+ 12_345) % 2_147_483_648
        return Int64(state % UInt64(count)) + 1
    }
}
