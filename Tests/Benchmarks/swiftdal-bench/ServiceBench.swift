import CRawPostgresBench
import Foundation
import SwiftDAL
import SwiftDALPostgres
import SwiftDALTestSupport

// swiftdal-bench --service: the service workload of BENCHMARKS.md. 16, 64 and 256
// concurrent async tasks, each request a `findById` (a random row) then an `insert`
// through a table DAL, on a pool of 10 connections, for a fixed time; requests/s, p50
// and p99. On PostgreSQL, beside it the ceiling: raw libpq from as many threads as
// connections, doing the same two prepared statements per request.

/// The table DAL the service workload calls, as a service declares one.
final class ServiceUserDAL: BaseDAL<ExplicitUser>, @unchecked Sendable {}

/// One line of the service report.
struct ServiceMeasurement: Codable, Sendable {
    let engine: String
    /// "SwiftDAL" or "raw libpq (ceiling)".
    let implementation: String
    /// Concurrent tasks (SwiftDAL) or threads (the ceiling).
    let concurrency: Int
    let requests: Int
    let seconds: Double
    let p50Milliseconds: Double
    let p99Milliseconds: Double

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
private func serviceRun(_ users: ServiceUserDAL, rows: Int64, tasks: Int, seconds: Double) async throws
    -> (requests: Int, latencies: [Int64], seconds: Double)
{
    let clock = ContinuousClock()
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
                    let row = rows + 1 + Int64(task) * 100_000_000 + serial
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
    return (
        latencies.count, latencies,
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    )
}

/// The service workload on `database` (already holding `rows` users): a short warm-up,
/// then each concurrency level.
private func serviceMeasurements(
    engine: String, database: any DatabaseWriter, rows: Int64, seconds: Double
) async throws -> [ServiceMeasurement] {
    let users = ServiceUserDAL(database: database)
    _ = try await serviceRun(users, rows: rows, tasks: 16, seconds: min(1, seconds))
    var measurements = [ServiceMeasurement]()
    for tasks in [16, 64, 256] {
        FileHandle.standardError.write(Data("service \(engine): \(tasks) tasks for \(seconds) s…\n".utf8))
        let run = try await serviceRun(users, rows: rows, tasks: tasks, seconds: seconds)
        measurements.append(
            ServiceMeasurement(
                engine: engine, implementation: "SwiftDAL", concurrency: tasks, requests: run.requests,
                seconds: run.seconds, p50Milliseconds: quantile(run.latencies, 0.5),
                p99Milliseconds: quantile(run.latencies, 0.99)))
    }
    return measurements
}

/// `--service`: both engines (or the one `--engine` names), and the libpq ceiling.
func runServiceBench(_ options: BenchOptions) async throws {
    let seconds = options.serviceSeconds
    let rows: Int64 = 10_000
    let connections = 10
    var measurements = [ServiceMeasurement]()
    let both = !options.engineGiven
    if both || options.engine == .sqlite {
        try FileManager.default.createDirectory(atPath: options.workDirectory, withIntermediateDirectories: true)
        let path = options.workDirectory + "/service.sqlite"
        try? FileManager.default.removeItem(atPath: path)
        var configuration = Configuration()
        configuration.maximumReaderCount = connections
        configuration.synchronous = .normal
        let pool = try DatabasePool(path: path, configuration: configuration)
        try await pool.write { db in try db.executeScript(sqliteServiceSchema) }
        _ = try await ServiceUserDAL(database: pool).insertRange((1...rows).map { ExplicitUser(row: $0) })
        measurements += try await serviceMeasurements(engine: "sqlite", database: pool, rows: rows, seconds: seconds)
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
        let scale = PostgresScale(rows: rows)
        try preparePostgresTable(url, scale: scale, populated: true)
        var configuration = PostgresConfiguration()
        configuration.maximumConnections = connections
        let pool = try PostgresPool(url: url, configuration: configuration)
        measurements += try await serviceMeasurements(
            engine: "postgres", database: pool, rows: rows, seconds: seconds)
        try pool.close()
        FileHandle.standardError.write(Data("service postgres: raw libpq, \(connections) threads…\n".utf8))
        try preparePostgresTable(url, scale: scale, populated: true)
        let capacity: Int64 = 4_000_000
        var latencies = [Int64](repeating: 0, count: Int(capacity))
        var recorded: Int64 = 0
        var count: Int64 = 0
        var error = rawpg_error()
        let started = Date()
        guard
            rawpg_service(
                url, rows, Int32(connections), seconds, &latencies, capacity, &recorded, &count, &error) == 0
        else { throw BenchError("raw libpq service failed: \(message(of: error))") }
        let elapsed = Date().timeIntervalSince(started)
        let kept = Array(latencies.prefix(Int(recorded)))
        measurements.append(
            ServiceMeasurement(
                engine: "postgres", implementation: "raw libpq (ceiling)", concurrency: connections,
                requests: Int(count), seconds: elapsed, p50Milliseconds: quantile(kept, 0.5),
                p99Milliseconds: quantile(kept, 0.99)))
        let cleanup = try PostgresPool(url: baseURL)
        try await cleanup.write { db in _ = try db.execute(sql: "DROP TABLE IF EXISTS \(benchSchema).users") }
        try? await cleanup.write { db in _ = try db.execute(sql: "DROP SCHEMA IF EXISTS \(benchSchema)") }
        try cleanup.close()
    }
    let report = serviceReport(measurements, seconds: seconds, connections: connections)
    print(report.text)
    try writeReport(report.text, to: options.reportPath)
    try updateReadme(options.readmePath, block: "service", with: report.markdown)
    if let path = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(measurements).write(to: URL(fileURLWithPath: path))
    }
}

/// The benchmark schema of BENCHMARKS.md, on SQLite.
private let sqliteServiceSchema = """
    CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
                       age INTEGER NOT NULL, score REAL NOT NULL, bio TEXT);
    CREATE INDEX users_age ON users(age);
    """

/// The report as text (printed, `--report`) and as a Markdown table (`--readme`).
private func serviceReport(_ measurements: [ServiceMeasurement], seconds: Double, connections: Int)
    -> (text: String, markdown: String)
{
    let ceiling = measurements.first { $0.implementation.hasPrefix("raw") }?.requestsPerSecond
    func ratio(_ measurement: ServiceMeasurement) -> String {
        guard measurement.engine == "postgres", let ceiling, !measurement.implementation.hasPrefix("raw") else {
            return "—"
        }
        return String(format: "%.0f%%", 100 * measurement.requestsPerSecond / ceiling)
    }
    var markdown = """
        | engine | implementation | concurrency | requests/s | p50 ms | p99 ms | of the ceiling |
        |---|---|---|---|---|---|---|

        """
    var text = """
        Service workload: each request a findById (a random row of 10,000) then an insert, through a table DAL,
        on a pool of \(connections) connections, \(seconds) s per line (after a 1 s warm-up); concurrency is async
        tasks for SwiftDAL, threads (one connection each) for raw libpq.

        """
    for measurement in measurements {
        let columns = [
            measurement.engine, measurement.implementation, "\(measurement.concurrency)",
            String(format: "%.0f", measurement.requestsPerSecond), String(format: "%.2f", measurement.p50Milliseconds),
            String(format: "%.2f", measurement.p99Milliseconds), ratio(measurement)
        ]
        markdown += "| " + columns.joined(separator: " | ") + " |\n"
        text += columns.joined(separator: "\t") + "\n"
    }
    return (text, markdown)
}
