import Dispatch
import Foundation
import SwiftDAL
import SwiftDALPostgres
import SwiftDALTestSupport
import Synchronization

// `--stream`: the peak memory and the time of streaming `--stream-rows` rows (default
// 1,000,000) through a DatabaseStream (`for try await user in users.stream()`), on SQLite
// (a DatabasePool) or PostgreSQL (`--engine postgres`: a throwaway server, or
// `--postgres-url`). Each measurement runs in a child process of its own, so that its peak
// resident memory (VmHWM) is its own: an idle child (the baseline), the stream, and
// `getAll()` of the same rows for contrast (what loading them costs).

/// Runs the stream measurements and prints them.
func runStreamBench(_ options: BenchOptions) throws {
    let rows = options.streamRows
    var server: PostgresServer?
    defer { server?.stop() }
    let target: String
    switch options.engine {
    case .postgres:
        var baseURL = options.postgresURL ?? ""
        if options.postgresURL == nil {
            FileHandle.standardError.write(Data("starting a throwaway PostgreSQL server…\n".utf8))
            let started = try PostgresServer.start(settings: ["fsync": "on"].merging(options.serverSettings) { $1 })
            server = started
            baseURL = try started.makeDatabase()
        }
        let setup = try PostgresPool(url: baseURL)
        try setup.write { db in _ = try db.execute(sql: "CREATE SCHEMA IF NOT EXISTS \(benchSchema)") }
        try setup.close()
        target = try benchConnectionString(baseURL)
        FileHandle.standardError.write(Data("populating \(rows) rows…\n".utf8))
        try preparePostgresTable(target, scale: PostgresScale(rows: rows), populated: true)
    case .sqlite, .cluster, .mariadb:
        try FileManager.default.createDirectory(atPath: options.workDirectory, withIntermediateDirectories: true)
        target = options.workDirectory + "/stream.sqlite"
        FileHandle.standardError.write(Data("populating \(rows) rows…\n".utf8))
        try prepareDatabase(target, rows: rows, populated: true)
    }
    let engine = options.engine == .postgres ? "postgres" : "sqlite"
    var lines = ["streaming \(rows) rows on \(engine) (peak resident memory of a child process each, VmHWM)"]
    var idle = 0
    for probe in ["idle", "async-stream", "getall"] {
        FileHandle.standardError.write(Data("probe \(probe)…\n".utf8))
        let fields = try runStreamChild(probe: probe, engine: engine, target: target, rows: rows)
        let peak = Int(fields["peak_kib"] ?? 0)
        if probe == "idle" { idle = peak }
        var line = "  \(probe.padding(toLength: 13, withPad: " ", startingAt: 0)) peak \(peak / 1024) MiB (\(peak) KiB)"
        if probe != "idle" {
            line += ", +\((peak - idle) / 1024) MiB over idle"
            line += ", rows \(fields["rows"] ?? 0), \(fields["millis"] ?? 0) ms, checksum \(fields["checksum"] ?? 0)"
        }
        lines.append(line)
    }
    if options.engine != .postgres { removeDatabase(target) }
    print(lines.joined(separator: "\n"))
}

/// Runs one probe in a child process and returns the `name=value` fields it printed.
private func runStreamChild(probe: String, engine: String, target: String, rows: Int64) throws -> [String: Int64] {
    try runProbeChild(
        probe: probe,
        arguments: ["--stream-probe", probe, "--probe-path", target, "--stream-rows", String(rows), "--engine", engine])
}

/// The child's side: one probe, then its peak memory, rows, time and checksum on stdout.
func runStreamProbe(_ options: BenchOptions, probe: String) throws {
    guard let target = options.probePath else { throw BenchError("--stream-probe needs --probe-path") }
    let postgres = options.engine == .postgres
    let start = ContinuousClock.now
    let (count, checksum) = try waitFor { () async throws -> (Int64, Int64) in
        if probe == "idle" { return (0, 0) }
        let database: any DatabaseWriter = postgres ? try PostgresPool(url: target) : try DatabasePool(path: target)
        defer { try? database.close() }
        let users = BaseDAL<ExplicitUser>(database: database)
        var count: Int64 = 0
        var checksum: Int64 = 0
        switch probe {
        case "async-stream":
            for try await user in users.stream() {
                count += 1
                checksum &+= user.checksum
            }
        case "getall":
            for user in try await users.getAll() {
                count += 1
                checksum &+= user.checksum
            }
        default:
            throw BenchError("unknown stream probe \(probe)")
        }
        return (count, checksum)
    }
    let elapsed = (ContinuousClock.now - start).components
    let millis = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    print("peak_kib=\(peakResidentKiB()) rows=\(count) millis=\(millis) checksum=\(checksum)")
}

/// Runs `work` on a task and waits for it (the probe's main thread has nothing else to do).
private func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await work()
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    guard let result = outcome.withLock({ $0 }) else { throw BenchError("the probe's task ended without a result") }
    return try result.get()
}
