import Foundation
import SampleDAL
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

/// The package's Fixtures directory.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures").path

let sampleDatabase = fixturesDirectory + "/sample.sqlite"

/// Records the SQL of every statement run, so that tests can assert the SQL.
final class SQLRecorder: Sendable {
    private let statements = Locked<[String]>([])

    func record(_ sql: String) { statements.withLock { $0.append(sql) } }
    var all: [String] { statements.withLock { $0 } }
    var last: String? { all.last }
    func reset() { statements.withLock { $0.removeAll() } }

    var configuration: Configuration {
        var configuration = Configuration()
        configuration.trace = { [self] event in record(event.sql) }
        return configuration
    }
}

/// The sample DALs over an in-memory copy of Fixtures/sample.sqlite (never modified).
struct Sample {
    let queue: DatabaseQueue
    let users: UserDAL
    let orders: OrderDAL
    let tags: UserTagDAL
    let recorder = SQLRecorder()

    init() throws {
        queue = try DatabaseQueue(Database.inMemoryCopy(of: sampleDatabase, configuration: recorder.configuration))
        users = UserDAL(database: queue)
        orders = OrderDAL(database: queue)
        tags = UserTagDAL(database: queue)
        recorder.reset()
    }
}

func newUser(_ name: String, age: Int = 30) -> UserInfo {
    UserInfo(name: name, email: "\(name)@test.example", age: age)
}
