import CRawPostgresBench
import Foundation
import SwiftDAL
import SwiftDALPostgres
import SwiftDALTestSupport

// swiftdal-bench --service: the service workload of Tests/Benchmarks/README.md. 16, 64 and 256
// concurrent async tasks, each request a `findById` (a random row) then an `insert`
// through a table DAL, on a pool of 10 connections, for a fixed time; requests/s, p50
// and p99. On PostgreSQL, beside it the ceiling: raw libpq from as many threads as
// connections, doing the same two prepared statements per request.

/// The table DAL the service workload calls, as a service declares one.
final class ServiceUserDAL: BaseDAL<ExplicitUser>, @unchecked Sendable {}

/// One line of the service report: the median over the rounds.
struct ServiceMeasurement: Codable, Sendable {
    let engine: String
    /// "SwiftDAL" or "raw libpq (ceiling)".
    let implementation: String
    /// Concurrent tasks (SwiftDAL) or threads (the ceiling).
    let concurrency: Int
    /// Requests per second in each round.
    let requestsPerSecond: [Double]
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    /// The client process's CPU time per request (user and system), in microseconds: the
    /// median over the rounds.
    let clientMicrosecondsPerRequest: Double
    /// SwiftDAL's requests per second ÷ the ceiling's in the same round (PostgreSQL), each round.
    let ratiosToCeiling: [Double]

    var medianRequestsPerSecond: Double { median(requestsPerSecond) }
}

/// One timed run: requests, latencies (µs), seconds, client CPU seconds.
private struct ServiceRun {
    var requests: Int
    var latencies: [Int64]
    var seconds: Double
    var clientCPU: Double

    var requestsPerSecond: Double { Double(requests) / seconds }
}

/// The `fraction` quantile of `values` (sorted in place), in milliseconds from microseconds.
private func quantile(_ values: [Int64], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))
    return Double(sorted[index]) / 1000
}

/// `tasks` concurrent tasks doing requests through `users` for `seconds`.
private func serviceRun(_ users: ServiceUserDAL, rows: Int64, run: Int64, tasks: Int, seconds: Double) async throws
    -> ServiceRun
{
    let clock = ContinuousClock()
    let cpu = processCPUSeconds()
    let start = clock.now
    let end = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
    let perTask = try await withThrowingTaskGroup(of: [Int64].self) { group in
        for task in 0..<tasks {
            group.addTask {
                var latencies = [Int64]()
                var ids = IDSequence(seed: 42 + UInt64(task), count: rows)
                var serial: Int64 = 0
                while clock.now < end {
                    let began = clock.now
                    _ = try await users.findById(ids.next())
                    serial += 1
                    // A new row of its own: numbered past the table's, apart for each run and task.
                    let row = rows + 1 + run * 100_000_000_000 + Int64(task) * 100_000_000 + serial
                    try await users.insert(ExplicitUser(row: row))
                    let (secondsPart, attoseconds) = (clock.now - began).components
                    latencies.append(secondsPart * 1_000_000 + attoseconds / 1_000_000_000_000)
                }
                return latencies
            }
        }
        var all = [[Int64]]()
        for try await latencies in group { all.append(latencies) }
        return all
    }
    let elapsed = clock.now - start
    let latencies = perTask.flatMap { $0 }
    return ServiceRun(
        requests: latencies.count, latencies: latencies,
        seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
        clientCPU: processCPUSeconds() - cpu)
}

/// The ceiling: raw libpq from `threads` threads, one connection each, for `seconds`.
private func ceilingRun(_ url: String, rows: Int64, run: Int64, threads: Int, seconds: Double) throws -> ServiceRun {
    let capacity: Int64 = 2_000_000
    var latencies = [Int64](repeating: 0, count: Int(capacity))
    var recorded: Int64 = 0
    var count: Int64 = 0
    var error = rawpg_error()
    let started = Date()
    let cpu = processCPUSeconds()
    guard
        rawpg_service(
            url, rows, rows + 1 + run * 100_000_000_000 + 50_000_000_000, Int32(threads), seconds, &latencies,
            capacity, &recorded, &count, &error) == 0
    else { throw BenchError("raw libpq service failed: \(message(of: error))") }
    return ServiceRun(
        requests: Int(count), latencies: Array(latencies.prefix(Int(recorded))),
        seconds: Date().timeIntervalSince(started), clientCPU: processCPUSeconds() - cpu)
}

/// A measurement from the rounds of one implementation and concurrency.
private func measurement(
    engine: String, implementation: String, concurrency: Int, runs: [ServiceRun], ratios: [Double] = []
) -> ServiceMeasurement {
    let latencies = runs.flatMap(\.latencies)
    return ServiceMeasurement(
        engine: engine, implementation: implementation, concurrency: concurrency,
        requestsPerSecond: runs.map(\.requestsPerSecond), p50Milliseconds: quantile(latencies, 0.5),
        p99Milliseconds: quantile(latencies, 0.99),
        clientMicrosecondsPerRequest: median(runs.map { $0.clientCPU * 1e6 / Double(max(1, $0.requests)) }),
        ratiosToCeiling: ratios)
}

/// `--service`: both engines (or the one `--engine` names), and the libpq ceiling. Each
/// round runs every concurrency level; on PostgreSQL each SwiftDAL run is paired with a
/// ceiling run beside it (the order turning every round), and the ratio is the median of
/// the pairs' ratios: the machine's slow phases move both sides of a pair alike.
func runServiceBench(_ options: BenchOptions) async throws {
    let seconds = options.serviceSeconds
    let rounds = options.serviceRounds
    let rows: Int64 = 10_000
    let connections = 10
    let levels = [16, 64, 256]
    var measurements = [ServiceMeasurement]()
    let both = !options.engineGiven
    var runNumber: Int64 = 0
    if both || options.engine == .sqlite {
        try FileManager.default.createDirectory(atPath: options.workDirectory, withIntermediateDirectories: true)
        let path = options.workDirectory + "/service.sqlite"
        try? FileManager.default.removeItem(atPath: path)
        var configuration = Configuration()
        configuration.maximumReaderCount = connections
        configuration.synchronous = .normal
        let pool = try DatabasePool(path: path, configuration: configuration)
        try await pool.write { db in try db.executeScript(sqliteServiceSchema) }
        let users = ServiceUserDAL(database: pool)
        _ = try await users.insertRange((1...rows).map { ExplicitUser(row: $0) })
        _ = try await serviceRun(users, rows: rows, run: runNumber, tasks: 16, seconds: 1)  // warm-up
        var runs = [Int: [ServiceRun]]()
        for round in 1...rounds {
            for tasks in levels {
                FileHandle.standardError.write(Data("service sqlite round \(round): \(tasks) tasks…\n".utf8))
                runNumber += 1
                runs[tasks, default: []].append(
                    try await serviceRun(users, rows: rows, run: runNumber, tasks: tasks, seconds: seconds))
            }
        }
        measurements += levels.map {
            measurement(engine: "sqlite", implementation: "SwiftDAL", concurrency: $0, runs: runs[$0] ?? [])
        }
        try pool.close()
    }
    if both || options.engine == .postgres {
        var server: PostgresServer?
        defer { server?.stop() }
        let baseURL: String
        if let url = options.postgresURL {
            baseURL = url
        } else {
            var settings = ["fsync": "on", "max_connections": "100"]
            settings.merge(options.serverSettings) { $1 }
            let started = try PostgresServer.start(settings: settings)
            server = started
            baseURL = try started.makeDatabase()
        }
        let setup = try PostgresPool(url: baseURL)
        try await setup.write { db in _ = try db.execute(sql: "CREATE SCHEMA IF NOT EXISTS \(benchSchema)") }
        try setup.close()
        let url = try benchConnectionString(baseURL)
        try preparePostgresTable(url, scale: PostgresScale(rows: rows), populated: true)
        var configuration = PostgresConfiguration()
        configuration.maximumConnections = connections
        let pool = try PostgresPool(url: url, configuration: configuration)
        let users = ServiceUserDAL(database: pool)
        _ = try await serviceRun(users, rows: rows, run: runNumber, tasks: 16, seconds: 1)  // warm-up
        _ = try ceilingRun(url, rows: rows, run: runNumber, threads: connections, seconds: 1)
        var swiftRuns = [Int: [ServiceRun]]()
        var ceilingRuns = [Int: [ServiceRun]]()
        var ratios = [Int: [Double]]()
        for round in 1...rounds {
            for tasks in levels {
                FileHandle.standardError.write(
                    Data("service postgres round \(round): \(tasks) tasks and the ceiling…\n".utf8))
                runNumber += 1
                var pair = [ServiceRun]()
                for side in round % 2 == 1 ? [0, 1] : [1, 0] {
                    if side == 0 {
                        let run = try await serviceRun(
                            users, rows: rows, run: runNumber, tasks: tasks, seconds: seconds)
                        swiftRuns[tasks, default: []].append(run)
                        pair.insert(run, at: 0)
                    } else {
                        let run = try ceilingRun(
                            url, rows: rows, run: runNumber, threads: connections, seconds: seconds)
                        ceilingRuns[tasks, default: []].append(run)
                        pair.append(run)
                    }
                }
                ratios[tasks, default: []].append(pair[0].requestsPerSecond / pair[1].requestsPerSecond)
            }
        }
        for tasks in levels {
            measurements.append(
                measurement(
                    engine: "postgres", implementation: "SwiftDAL", concurrency: tasks, runs: swiftRuns[tasks] ?? [],
                    ratios: ratios[tasks] ?? []))
        }
        measurements.append(
            measurement(
                engine: "postgres", implementation: "raw libpq (ceiling)", concurrency: connections,
                runs: levels.flatMap { ceilingRuns[$0] ?? [] }))
        try pool.close()
        let cleanup = try PostgresPool(url: baseURL)
        try await cleanup.write { db in _ = try db.execute(sql: "DROP TABLE IF EXISTS \(benchSchema).users") }
        try? await cleanup.write { db in _ = try db.execute(sql: "DROP SCHEMA IF EXISTS \(benchSchema)") }
        try cleanup.close()
    }
    let report = serviceReport(measurements, seconds: seconds, rounds: rounds, connections: connections)
    print(report.text)
    try writeReport(report.text, to: options.reportPath)
    try updateReadme(options.readmePath, block: "service", with: report.markdown)
    if let path = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(measurements).write(to: URL(fileURLWithPath: path))
    }
}

/// The benchmark schema of Tests/Benchmarks/README.md, on SQLite.
private let sqliteServiceSchema = """
    CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
                       age INTEGER NOT NULL, score REAL NOT NULL, bio TEXT);
    CREATE INDEX users_age ON users(age);
    """

/// The report as text (printed, `--report`) and as a Markdown table (`--readme`).
private func serviceReport(_ measurements: [ServiceMeasurement], seconds: Double, rounds: Int, connections: Int)
    -> (text: String, markdown: String)
{
    func ratio(_ measurement: ServiceMeasurement) -> String {
        guard !measurement.ratiosToCeiling.isEmpty else { return "—" }
        let sorted = measurement.ratiosToCeiling.sorted()
        return String(
            format: "%.0f%% (%.0f–%.0f%%)", 100 * median(sorted), 100 * sorted[0], 100 * sorted[sorted.count - 1])
    }
    var markdown = """
        | engine | implementation | concurrency | requests/s | p50 ms | p99 ms | client CPU µs/request | of the ceiling (rounds) |
        |---|---|---|---|---|---|---|---|

        """
    var text = """
        Service workload: each request a findById (a random row of 10,000) then an insert, through a table DAL,
        on a pool of \(connections) connections; \(rounds) rounds of \(seconds) s per line after a 1 s warm-up;
        concurrency is async tasks for SwiftDAL, threads (one connection each) for raw libpq. Requests/s and client
        CPU: medians over the rounds; p50/p99 over every request; of the ceiling: the median of the ratios of each
        round's SwiftDAL run to the ceiling run beside it (lowest–highest).

        """
    for measurement in measurements {
        let columns = [
            measurement.engine, measurement.implementation, "\(measurement.concurrency)",
            String(format: "%.0f", measurement.medianRequestsPerSecond),
            String(format: "%.2f", measurement.p50Milliseconds), String(format: "%.2f", measurement.p99Milliseconds),
            String(format: "%.0f", measurement.clientMicrosecondsPerRequest), ratio(measurement)
        ]
        markdown += "| " + columns.joined(separator: " | ") + " |\n"
        text += columns.joined(separator: "\t") + "\n"
    }
    return (text, markdown)
}
