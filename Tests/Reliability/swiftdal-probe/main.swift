// swiftdal-probe: measurements of the concurrency core that need a process of their own.
//
// A test process runs many tests at once, and they block Swift's cooperative threads
// themselves (synchronous tests do): the gaps of a ticker task, or the threads of the
// process, measured there say more about the other tests than about SwiftDAL. The tests
// run this probe as a child process and check what it prints (`key=value` lines).
//
//   swiftdal-probe ticker  --engine sqlite|postgres|mariadb [--url URL]
//       4 connections, 8 slow async reads (CPU-bound on SQLite, sleeping on a server)
//       and a task ticking every 10 ms meanwhile: longest_gap_ms, reads_completed.
//   swiftdal-probe waiters --engine sqlite|postgres|mariadb [--url URL]
//       every connection held, 2,000 async calls waiting in line: threads_before,
//       threads_waiting, callers_waiting, completed.
//   swiftdal-probe orphan  --engine postgres|mariadb
//       makes a TemporaryDirectory with a file in it, starts a throwaway server as the
//       tests do, prints server_pid=, directory= and temporary=, and dies by SIGKILL without
//       stopping it (no atexit or deinit runs): neither may outlive it.
import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Synchronization

enum ProbeEngine: String {
    case sqlite, postgres, mariadb
}

struct Arguments {
    var command = ""
    var engine = ProbeEngine.sqlite
    var url: String?

    init(_ words: [String]) throws {
        var words = words[...]
        command = words.popFirst() ?? ""
        while let word = words.popFirst() {
            switch word {
            case "--engine":
                guard let value = words.popFirst().flatMap(ProbeEngine.init(rawValue:)) else {
                    throw ProbeError("--engine takes sqlite, postgres or mariadb")
                }
                engine = value
            case "--url": url = words.popFirst()
            default: throw ProbeError("unknown argument \(word)")
            }
        }
    }
}

struct ProbeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The SQLite file a run made, removed (with its `-wal` and `-shm`) as the run ends.
let temporaryDatabase = Mutex<String?>(nil)

func removeTemporaryDatabase() {
    guard let path = temporaryDatabase.withLock({ $0 }) else { return }
    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// A pool of `connections` of the engine (SQLite: readers of a pool on a temporary file).
func makePool(_ arguments: Arguments, connections: Int) throws -> any DatabaseWriter {
    switch arguments.engine {
    case .sqlite:
        var configuration = Configuration()
        configuration.maximumReaderCount = connections
        let path = NSTemporaryDirectory() + "swiftdal-probe-\(UUID().uuidString).sqlite"
        temporaryDatabase.withLock { $0 = path }
        return try DatabasePool(path: path, configuration: configuration)
    case .postgres:
        guard let url = arguments.url else { throw ProbeError("--engine postgres needs --url") }
        var configuration = PostgresConfiguration()
        configuration.maximumConnections = connections
        return try PostgresPool(url: url, configuration: configuration)
    case .mariadb:
        guard let url = arguments.url else { throw ProbeError("--engine mariadb needs --url") }
        var configuration = MariaDBConfiguration()
        configuration.maximumConnections = connections
        return try MariaDBPool(url: url, configuration: configuration)
    }
}

/// `SELECT CAST(? AS <integer>)` of `value`, in the engine's spelling of the type.
func integerEcho(_ value: Int, engine: ProbeEngine) -> SQL {
    SQL(sql: "SELECT CAST(? AS \(engine == .mariadb ? "SIGNED" : "INTEGER"))", arguments: [value])
}

/// Makes a temporary directory, starts a throwaway server, prints their paths and the
/// server's process, and dies by SIGKILL.
func orphan(_ arguments: Arguments) throws {
    let files = try TemporaryDirectory()
    guard FileManager.default.createFile(atPath: files.file("kept"), contents: Data("x".utf8)) else {
        throw ProbeError("cannot write in \(files.path)")
    }
    let (pid, directory): (Int32, String)
    switch arguments.engine {
    case .sqlite: throw ProbeError("orphan takes --engine postgres or mariadb")
    case .postgres:
        let server = try PostgresServer.start()
        (pid, directory) = (server.serverProcessIDs.first ?? 0, server.directory)
    case .mariadb:
        let server = try MariaDBServer.start()
        (pid, directory) = (server.serverProcessID ?? 0, server.directory)
    }
    print("server_pid=\(pid)")
    print("directory=\(directory)")
    print("temporary=\(files.path)")
    fflush(nil)  // every stream: what was printed reaches the pipe before the kill
    kill(getpid(), SIGKILL)
}

/// A read that keeps a connection busy for about `seconds`: CPU-bound on SQLite (a query
/// that only its time limit ends), `pg_sleep` on PostgreSQL.
func slowRead(_ pool: any DatabaseWriter, engine: ProbeEngine, seconds: Double) async throws {
    switch engine {
    case .postgres:
        try await pool.read { db in try db.execute("SELECT pg_sleep(\(seconds))") }
    case .mariadb:
        try await pool.read { db in try db.execute("SELECT SLEEP(\(seconds))") }
    case .sqlite:
        do {
            _ = try await withDatabaseTimeout(.milliseconds(Int64(seconds * 1000))) {
                try await pool.read { db in
                    try db.fetchScalar(
                        Int.self,
                        SQL(
                            sql: "SELECT COUNT(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                + "FROM c WHERE x < 1000000000) SELECT x FROM c)"))
                }
            }
        } catch DALError.Code.timeout {}
    }
}

func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
}

func ticker(_ arguments: Arguments) async throws {
    let pool = try makePool(arguments, connections: 4)
    try await pool.read { db in _ = try db.fetchScalar(Int.self, "SELECT 1") }
    let slow = (0..<8).map { _ in
        Task { try await slowRead(pool, engine: arguments.engine, seconds: 1.5) }
    }
    var longestGap = Duration.zero
    let clock = ContinuousClock()
    var last = clock.now
    let end = last.advanced(by: .milliseconds(2500))
    while clock.now < end {
        try await Task.sleep(for: .milliseconds(10))
        let now = clock.now
        longestGap = max(longestGap, now - last)
        last = now
    }
    var completed = 0
    for call in slow {
        try await call.value
        completed += 1
    }
    let (seconds, attoseconds) = longestGap.components
    print("longest_gap_ms=\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)")
    print("reads_completed=\(completed)")
    try pool.close()
}

func waiters(_ arguments: Arguments) async throws {
    let pool = try makePool(arguments, connections: 2)
    let release = LockedFlag()
    // Every connection held (two readers, and SQLite's writer), so that the calls wait.
    let holders = (0..<(arguments.engine == .sqlite ? 3 : 2)).map { index in
        Task {
            let hold: @Sendable (Database) throws -> Void = { _ in
                while !release.isSet { usleep(1000) }
            }
            if index == 2 { try await pool.write(hold) } else { try await pool.read(hold) }
        }
    }
    let busy = arguments.engine == .sqlite ? 3 : 2
    while pool.statistics.connectionsInUse < busy { try await Task.sleep(for: .milliseconds(5)) }
    try await Task.sleep(for: .milliseconds(100))
    let before = threadCount()
    let count = 2_000
    let calls = (0..<count).map { index in
        Task {
            if index % 4 == 0 && arguments.engine == .sqlite {
                return try await pool.write { db in try db.fetchScalar(Int.self, integerEcho(index, engine: .sqlite)) }
            }
            let engine = arguments.engine
            return try await pool.read { db in try db.fetchScalar(Int.self, integerEcho(index, engine: engine)) }
        }
    }
    let deadline = ContinuousClock.now.advanced(by: .seconds(60))
    while pool.statistics.callersWaiting < count && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(5))
    }
    let waiting = pool.statistics.callersWaiting
    let during = threadCount()
    release.set()
    for holder in holders { try await holder.value }
    var completed = 0
    for (index, call) in calls.enumerated() where try await call.value == index { completed += 1 }
    print("threads_before=\(before)")
    print("threads_waiting=\(during)")
    print("callers_waiting=\(waiting)")
    print("completed=\(completed)")
    try pool.close()
}

final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

do {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    switch arguments.command {
    case "ticker": try await ticker(arguments)
    case "waiters": try await waiters(arguments)
    case "orphan": try orphan(arguments)
    default:
        throw ProbeError("usage: swiftdal-probe ticker|waiters|orphan --engine sqlite|postgres|mariadb [--url URL]")
    }
    removeTemporaryDatabase()
} catch {
    removeTemporaryDatabase()
    FileHandle.standardError.write(Data("swiftdal-probe: \(error)\n".utf8))
    exit(1)
}
