import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// A row keyed by two columns, with values of the types a long list must compare with.
private struct Pair: Entity, Codable {
    static let tableName = "pairs"
    static let primaryKey = ["a", "b"]
    var a: Int64
    var b: String
    var token: UUID
    var at: Date
    var amount: Decimal
}

/// Any number of keys and values, of every type, on both engines; a statement past what
/// the engine takes is refused with a typed error before anything is sent.
@Suite struct SizeLimitTests {
    private func database(_ engine: Engine) throws -> (any DatabaseWriter, TemporaryDirectory?) {
        switch engine {
        case .sqlite:
            let directory = try TemporaryDirectory()
            let pool = try DatabasePool(path: directory.file("pairs.sqlite"))
            try pool.reentrantWrite { db in
                try db.executeScript(
                    "CREATE TABLE pairs(a INTEGER NOT NULL, b TEXT NOT NULL, token TEXT NOT NULL, at TEXT NOT NULL, "
                        + "amount TEXT NOT NULL, PRIMARY KEY(a, b))")
            }
            return (pool, directory)
        case .postgres:
            let pool = try makePostgresPool()
            try pool.reentrantWrite { db in
                try db.executeScript(
                    "CREATE TABLE pairs(a BIGINT NOT NULL, b TEXT NOT NULL, token UUID NOT NULL, "
                        + "at TIMESTAMPTZ NOT NULL, amount NUMERIC NOT NULL, PRIMARY KEY(a, b))")
            }
            return (pool, nil)
        case .mariadb:
            let pool = try MariaDBPool(url: SharedMariaDB.makeDatabase().url)
            try pool.reentrantWrite { db in
                try db.executeScript(
                    "CREATE TABLE pairs(a BIGINT NOT NULL, b VARCHAR(100) NOT NULL, token UUID NOT NULL, "
                        + "at DATETIME(6) NOT NULL, amount DECIMAL(65,30) NOT NULL, PRIMARY KEY(a, b))")
            }
            return (pool, nil)
        }
    }

    @Test(arguments: Engine.allCases)
    func anyNumberOfKeysAndValuesOfEveryType(_ engine: Engine) throws {
        let (database, directory) = try database(engine)
        defer {
            try? database.close()
            _ = directory
        }
        let pairs = BaseDAL<Pair>(database: database)
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        let rows = (0..<10_000).map { index in
            Pair(
                a: Int64(index), b: "b\(index % 7) \"quoted\" \\ back", token: UUID(),
                at: base.addingTimeInterval(Double(index)), amount: Decimal(index) / 100)
        }
        _ = try pairs.insertRange(rows)
        // 12,000 composite keys (2,000 of them absent) in one call.
        let keys = rows.map { CompositeKey($0.a, $0.b) } + (20_000..<22_000).map { CompositeKey(Int64($0), "none") }
        #expect(try pairs.findByIds(keys).count == 10_000)
        // Long \(values:) lists of uuids, timestamps and numerics (5,000 each).
        let some = Array(rows.prefix(5_000))
        #expect(try pairs.getRecordCount(condition: "token IN (\(values: some.map(\.token)))") == 5_000)
        #expect(try pairs.getRecordCount(condition: "at IN (\(values: some.map(\.at)))") == 5_000)
        #expect(try pairs.getRecordCount(condition: "amount IN (\(values: some.map(\.amount)))") == 5_000)
        #expect(try pairs.getRecordCount(condition: "token NOT IN (\(values: some.map(\.token)))") == 5_000)
        #expect(
            try pairs.getRecordCount(
                condition: "b IN (\(values: ["b1 \"quoted\" \\ back"] + (0..<500).map { "x\($0)" }))") > 0)
        #expect(try pairs.getRecordCount(condition: "a IN (\(values: (0..<20_000).map { Int64($0) }))") == 10_000)
    }

    /// A statement of 10,000 parameters, prepared on the server and described before its
    /// first run (its parameters' description, 40,006 bytes, is longer than the 30,000
    /// bytes libpq reads of such a message): it runs, on a connection that stays usable.
    @Test func aStatementOfManyParametersRuns() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        try pool.reentrantWrite { db in try db.executeScript("CREATE TABLE t(x DOUBLE PRECISION)") }
        try pool.reentrantWrite { db in try db.execute("INSERT INTO t VALUES (\(2.5)), (\(7.5)), (\(20_000.5))") }
        let reals = (0..<10_000).map { Double($0) + 0.5 }  // reals keep one parameter each
        for _ in 0..<2 {
            let count = try pool.reentrantRead { db in
                try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t WHERE x IN (\(values: reals))")
            }
            #expect(count == 2)
        }
        #expect(try pool.reentrantRead { db in try db.fetchScalar(Int.self, "SELECT 1") } == 1)
        #expect(pool.statistics.connectionsOpen == 1)
    }

    /// More parameters than PostgreSQL takes (65,535): a typed error before anything is
    /// sent, the connection untouched (it used to come back as a dropped connection).
    @Test func tooManyParametersAreRefusedBeforeAnythingIsSent() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        try pool.reentrantWrite { db in try db.executeScript("CREATE TABLE t(x DOUBLE PRECISION)") }
        let reals = (0..<70_000).map { Double($0) + 0.5 }  // reals keep one parameter each
        let refused = #expect(throws: DALError.self) {
            _ = try pool.reentrantRead { db in
                try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t WHERE x IN (\(values: reals))")
            }
        }
        #expect(refused?.code == .argumentMismatch)
        #expect(try pool.reentrantRead { db in try db.fetchScalar(Int.self, "SELECT 1") } == 1)
        #expect(pool.statistics.connectionsOpen == 1)  // the same connection, not replaced
    }
}
