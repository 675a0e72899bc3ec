import CRawBench
import CRawPostgresBench
import Foundation
import SwiftDAL
import SwiftDALPostgres
import SwiftDALTestSupport

// swiftdal-bench --engine postgres: W1–W8 of Tests/Benchmarks/README.md ("PostgreSQL") through SwiftDAL
// on a PostgresPool, beside a raw libpq C baseline doing the same work (Tests/Benchmarks/CRawPostgresBench),
// in the same run, the order turning every round, as ratios to raw libpq.

/// One way of doing the work on PostgreSQL.
enum PostgresImplementation: String, CaseIterable, Codable, Sendable {
    /// libpq, one prepared statement per workload, one round trip per statement.
    case raw = "raw libpq"
    /// libpq in pipeline mode (W1 and W5): statements sent in batches before their results are read.
    case pipelined = "raw libpq pipelined"
    case explicit = "SwiftDAL explicit"
    case codable = "SwiftDAL Codable"

    /// The name `--implementations` takes.
    var optionName: String {
        switch self {
        case .raw: "raw"
        case .pipelined: "pipelined"
        case .explicit: "explicit"
        case .codable: "codable"
        }
    }
}

/// How much work each workload does on PostgreSQL. Over a socket every statement is a
/// round trip, so the table is smaller than SQLite's (10,000 rows instead of 100,000);
/// the operations that count rows scale with it, the others are as Tests/Benchmarks/README.md says.
/// W2 is one statement whatever the size: it fetches Tests/Benchmarks/README.md's 100,000 rows, so
/// that it measures the fetch and not the opening of a pool that every run also does (a
/// connection, its session settings and, for SwiftDAL, the table's catalog check: about
/// 2.6 ms on this machine, a fifth of a 10,000-row fetch).
struct PostgresScale: Codable, Sendable {
    static let defaultRows: Int64 = 10_000
    static let defaultFetchRows: Int64 = 100_000
    static let defaultRuns = 9

    /// Rows in the table, and rows W1 inserts (Tests/Benchmarks/README.md: 100,000).
    var rows: Int64
    /// Rows in W2's table, all fetched (Tests/Benchmarks/README.md: 100,000; `--rows` when given).
    var fetchRows: Int64
    /// W3, W3a and W6 operations: one per row (Tests/Benchmarks/README.md: N).
    var lookups: Int64
    /// W4 queries of up to 100 rows (as Tests/Benchmarks/README.md).
    var filters: Int64 = 1_000
    /// W5 updates (as Tests/Benchmarks/README.md).
    var updates: Int64 = 10_000
    /// W7 counts (as Tests/Benchmarks/README.md).
    var counts: Int64 = 1_000
    /// Statements per sync of the pipelined W1 and W5 baselines.
    var pipelineBatch: Int64 = 1_000
    /// W8: lookups per reader (Tests/Benchmarks/README.md: 25,000) and rows the writer inserts
    /// (Tests/Benchmarks/README.md: 10,000), in transactions of `concurrentBatch` (as Tests/Benchmarks/README.md).
    var concurrentLookups: Int64
    var concurrentWrites: Int64
    var concurrentBatch: Int64 = 100

    init(rows: Int64, fetchRows: Int64? = nil) {
        self.rows = rows
        self.fetchRows = fetchRows ?? rows
        lookups = rows
        concurrentLookups = max(1, rows / 4)
        concurrentWrites = max(1, rows / 4)
    }

    var summary: String {
        "\(rows) rows; W1 \(rows) inserts (pipelined, and W5: syncs every \(pipelineBatch)), W2 \(fetchRows) rows, "
            + "W3/W3a/W6 \(lookups) operations, W4 \(filters) × LIMIT 100, W5 \(updates) updates, W7 \(counts) counts, "
            + "W8 \(concurrentLookups) lookups per reader while \(concurrentWrites) rows are inserted in "
            + "transactions of \(concurrentBatch)"
    }
}

/// One workload on PostgreSQL.
struct PostgresWorkload: Sendable {
    let id: String
    let title: String
    /// Whether the table starts populated with the rows (all but W1).
    let populated: Bool
    /// The implementations that do this workload (the pipelined baseline only inserts and updates).
    let implementations: [PostgresImplementation]
    /// Runs the workload; returns the seconds of its measured region (the workload alone,
    /// see `measured(_:)`) and its checksum.
    let run: @Sendable (PostgresImplementation, String, PostgresScale) throws -> (seconds: Double, checksum: Int64)
}

/// The text of a libpq baseline's error.
func message(of error: rawpg_error) -> String {
    withUnsafeBytes(of: error.message) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
}

/// Calls a raw libpq workload; throws its error.
func rawPostgresCall(
    _ name: String, _ body: (inout Int64, inout Double, UnsafeMutablePointer<rawpg_error>) -> Int32
) throws -> (seconds: Double, checksum: Int64) {
    var checksum: Int64 = 0
    var seconds = 0.0
    var error = rawpg_error()
    let code = withUnsafeMutablePointer(to: &error) { body(&checksum, &seconds, $0) }
    guard code == 0 else { throw BenchError("raw libpq \(name) failed: \(message(of: error))") }
    return (seconds, checksum)
}

func postgresSwiftCall(
    _ implementation: PostgresImplementation, _ url: String, _ scale: PostgresScale,
    explicit: (PostgresSwiftWorkloads<ExplicitUser>) throws -> (seconds: Double, checksum: Int64),
    codable: (PostgresSwiftWorkloads<CodableUser>) throws -> (seconds: Double, checksum: Int64)
) throws -> (seconds: Double, checksum: Int64) {
    switch implementation {
    case .explicit: try explicit(PostgresSwiftWorkloads<ExplicitUser>(url: url, scale: scale))
    case .codable: try codable(PostgresSwiftWorkloads<CodableUser>(url: url, scale: scale))
    case .raw, .pipelined: throw BenchError("\(implementation.rawValue) is not a Swift implementation")
    }
}

private let plain: [PostgresImplementation] = [.raw, .explicit, .codable]

let postgresWorkloads: [PostgresWorkload] = [
    PostgresWorkload(id: "W0", title: "open + count", populated: true, implementations: plain) {
        implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W0") { rawpg_open_count(url, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w0OpenCount() }, codable: { try $0.w0OpenCount() })
    },
    PostgresWorkload(
        id: "W1", title: "insert", populated: false, implementations: [.raw, .pipelined, .explicit, .codable]
    ) {
        implementation, url, scale in
        switch implementation {
        case .raw: try rawPostgresCall("W1") { rawpg_w1_insert(url, scale.rows, &$0, &$1, $2) }
        case .pipelined:
            try rawPostgresCall("W1 pipelined") {
                rawpg_w1_insert_pipelined(url, scale.rows, scale.pipelineBatch, &$0, &$1, $2)
            }
        default:
            try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w1Insert() }, codable: { try $0.w1Insert() })
        }
    },
    PostgresWorkload(id: "W1B", title: "bulk insert", populated: false, implementations: plain) {
        implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W1B") { rawpg_w1_copy(url, scale.rows, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w1Bulk() }, codable: { try $0.w1Bulk() })
    },
    PostgresWorkload(id: "W2", title: "fetch-all", populated: true, implementations: plain) {
        implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W2") { rawpg_w2_fetch_all(url, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w2FetchAll() }, codable: { try $0.w2FetchAll() })
    },
    PostgresWorkload(id: "W3", title: "lookup", populated: true, implementations: plain) { implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W3") { rawpg_w3_lookup(url, scale.rows, scale.lookups, 1, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w3Lookup(inTransaction: true) },
                codable: { try $0.w3Lookup(inTransaction: true) })
    },
    PostgresWorkload(id: "W3A", title: "lookup, per call", populated: true, implementations: plain) {
        implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W3a") { rawpg_w3_lookup(url, scale.rows, scale.lookups, 0, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w3Lookup(inTransaction: false) },
                codable: { try $0.w3Lookup(inTransaction: false) })
    },
    PostgresWorkload(id: "W4", title: "filter", populated: true, implementations: plain) { implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W4") { rawpg_w4_filter(url, scale.filters, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w4Filter() }, codable: { try $0.w4Filter() })
    },
    PostgresWorkload(
        id: "W5", title: "update", populated: true, implementations: [.raw, .pipelined, .explicit, .codable]
    ) {
        implementation, url, scale in
        switch implementation {
        case .raw:
            try rawPostgresCall("W5") { rawpg_w5_update(url, scale.rows, scale.updates, &$0, &$1, $2) }
        case .pipelined:
            try rawPostgresCall("W5 pipelined") {
                rawpg_w5_update_pipelined(url, scale.rows, scale.updates, scale.pipelineBatch, &$0, &$1, $2)
            }
        default:
            try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w5Update() }, codable: { try $0.w5Update() })
        }
    },
    PostgresWorkload(id: "W6", title: "exists", populated: true, implementations: plain) { implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W6") { rawpg_w6_exists(url, scale.rows, scale.lookups, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w6Exists() }, codable: { try $0.w6Exists() })
    },
    PostgresWorkload(id: "W7", title: "count", populated: true, implementations: plain) { implementation, url, scale in
        implementation == .raw
            ? try rawPostgresCall("W7") { rawpg_w7_count(url, scale.counts, &$0, &$1, $2) }
            : try postgresSwiftCall(
                implementation, url, scale, explicit: { try $0.w7Count() }, codable: { try $0.w7Count() })
    }
]

/// Results of one workload and implementation over every run.
struct PostgresMeasurement: Codable {
    let workload: String
    let title: String
    let implementation: PostgresImplementation
    var seconds: [Double] = []
    /// This process's CPU time during each run (the client's share of the wall time: the
    /// rest is the server's work and the socket's round trips, the same on both sides).
    var cpuSeconds: [Double] = []
    var checksums: [Int64] = []
    var median: Double { swiftdal_bench.median(seconds) }
}

/// The CPU time this process has used so far (every thread), in seconds.
func processCPUSeconds() -> Double {
    var time = timespec()
    guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time) == 0 else { return 0 }
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// W8 for one implementation and reader count.
struct PostgresConcurrentMeasurement: Codable {
    let implementation: PostgresImplementation
    let readers: Int
    let readsPerSecond: Double
    let writesPerSecond: Double
    /// Failed lookups and write transactions, over every run (warm-up included).
    let errors: Int64
    /// Of those, serialization failures and deadlocks.
    let retryableErrors: Int64
    /// The readers' checksum of every run (the same in every run when all went well).
    let checksums: [Int64]
}

/// A fresh `users` table for a run: empty (W1) or with the scale's rows.
func preparePostgresTable(_ url: String, scale: PostgresScale, populated: Bool) throws {
    var error = rawpg_error()
    guard rawpg_setup(url, scale.rows, populated ? 1 : 0, &error) == 0 else {
        throw BenchError("setting up the table failed: \(message(of: error))")
    }
}

/// Runs every selected workload `warmup + runs` times for every implementation that does
/// it, each on a freshly created table, the order of the implementations turning by one
/// place every round; records the runs after the warm-up.
func runPostgresWorkloads(_ options: BenchOptions, url: String, scale: PostgresScale) throws -> [PostgresMeasurement] {
    let selected = postgresWorkloads.filter { options.workloads?.contains($0.id) ?? true }
    var results: [String: PostgresMeasurement] = [:]
    for round in 0..<(options.warmup + options.runs) {
        let recorded = round >= options.warmup
        let label =
            recorded ? "run \(round - options.warmup + 1)/\(options.runs)" : "warm-up \(round + 1)/\(options.warmup)"
        for workload in selected {
            let implementations = options.postgresImplementations.filter(workload.implementations.contains)
            // W2's table holds `fetchRows` rows; the others `rows`.
            var scale = scale
            if workload.id == "W2" { scale.rows = scale.fetchRows }
            for implementation in rotated(implementations, by: round) {
                try preparePostgresTable(url, scale: scale, populated: workload.populated)
                let (seconds, checksum) = try workload.run(implementation, url, scale)
                let cpu = rawbench_last_cpu_seconds()
                FileHandle.standardError.write(
                    Data(
                        ("postgres \(label) \(workload.id) \(implementation.rawValue): \(String(format: "%.4f", seconds)) s "
                            + "(client CPU \(String(format: "%.4f", cpu)) s)\n").utf8))
                guard recorded else { continue }
                let key = workload.id + implementation.rawValue
                var measurement =
                    results[key]
                    ?? PostgresMeasurement(workload: workload.id, title: workload.title, implementation: implementation)
                measurement.seconds.append(seconds)
                measurement.cpuSeconds.append(cpu)
                measurement.checksums.append(checksum)
                results[key] = measurement
            }
        }
    }
    return selected.flatMap { workload in
        options.postgresImplementations.compactMap { results[workload.id + $0.rawValue] }
    }
}

/// W8 at `readers` readers for every implementation (the pipelined baseline has none),
/// rounds and order as for W1–W7; the median reads/s and writes/s of the recorded rounds,
/// and the errors of all rounds.
func runPostgresConcurrent(_ options: BenchOptions, url: String, scale: PostgresScale, readers: Int) throws
    -> [PostgresConcurrentMeasurement]
{
    let implementations = options.postgresImplementations.filter { $0 != .pipelined }
    var runs = [PostgresImplementation: [PostgresConcurrentResult]]()
    var errors = [PostgresImplementation: (all: Int64, retryable: Int64)]()
    for round in 0..<(options.warmup + options.runs) {
        let recorded = round >= options.warmup
        let label =
            recorded ? "run \(round - options.warmup + 1)/\(options.runs)" : "warm-up \(round + 1)/\(options.warmup)"
        for implementation in rotated(implementations, by: round) {
            try preparePostgresTable(url, scale: scale, populated: true)
            let result: PostgresConcurrentResult
            switch implementation {
            case .raw, .pipelined:
                var failures: Int64 = 0
                var checksum: Int64 = 0
                var readSeconds = 0.0
                var writeSeconds = 0.0
                var error = rawpg_error()
                guard
                    rawpg_w8_concurrent(
                        url, scale.rows, Int32(readers), scale.concurrentLookups, scale.concurrentWrites,
                        scale.concurrentBatch,
                        &failures, &readSeconds, &writeSeconds, &checksum, &error) == 0
                else { throw BenchError("raw libpq W8 failed: \(message(of: error))") }
                result = PostgresConcurrentResult(
                    readSeconds: readSeconds, writeSeconds: writeSeconds, errors: failures, retryableErrors: 0,
                    checksum: checksum)
            case .explicit:
                result = try PostgresSwiftWorkloads<ExplicitUser>(url: url, scale: scale).w8Concurrent(readers: readers)
            case .codable:
                result = try PostgresSwiftWorkloads<CodableUser>(url: url, scale: scale).w8Concurrent(readers: readers)
            }
            errors[implementation, default: (0, 0)].all += result.errors
            errors[implementation, default: (0, 0)].retryable += result.retryableErrors
            FileHandle.standardError.write(
                Data(
                    "postgres \(label) W8 \(readers) reader(s) \(implementation.rawValue): \(String(format: "%.4f", result.readSeconds)) s\n"
                        .utf8))
            if recorded { runs[implementation, default: []].append(result) }
        }
    }
    return implementations.compactMap { implementation in
        guard let results = runs[implementation], !results.isEmpty else { return nil }
        return PostgresConcurrentMeasurement(
            implementation: implementation, readers: readers,
            readsPerSecond: median(results.map { Double(Int64(readers) * scale.concurrentLookups) / $0.readSeconds }),
            writesPerSecond: median(results.map { Double(scale.concurrentWrites) / $0.writeSeconds }),
            errors: errors[implementation]?.all ?? 0, retryableErrors: errors[implementation]?.retryable ?? 0,
            checksums: results.map(\.checksum))
    }
}

/// The bench's schema: every unqualified name (the table `users`, on both sides) resolves
/// there, so that a server given with `--postgres-url` keeps its own tables.
let benchSchema = "swiftdal_bench"

/// `url` with the bench's schema as the search path (libpq's `options`), for both sides.
func benchConnectionString(_ url: String) throws -> String {
    guard !url.contains("options") else {
        throw BenchError(
            "the connection string sets options: the bench sets search_path through them; give one without")
    }
    if url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") {
        return url + (url.contains("?") ? "&" : "?") + "options=-c%20search_path%3D\(benchSchema)"
    }
    return url + " options='-c search_path=\(benchSchema)'"
}

/// The server's version and its settings that are not built-in defaults (from
/// configuration files, the command line or the environment), read through SwiftDAL.
func serverDescription(_ url: String) throws -> (version: String, settings: [String]) {
    let pool = try PostgresPool(url: url)
    defer { try? pool.close() }
    return try pool.read { db in
        let version = try db.fetchScalar(String.self, "SHOW server_version") ?? "?"
        let settings = try db.fetchAll(
            """
            SELECT name || '=' || current_setting(name) FROM pg_settings
            WHERE source NOT IN ('default', 'override', 'client', 'session')
               OR name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_level', 'shared_buffers', 'work_mem', 'jit')
            ORDER BY name
            """
        ) { row -> String in try row[0] }
        return (version, settings)
    }
}

/// `--engine postgres`: starts a throwaway server unless given one, runs the workloads and
/// prints (and writes) the report.
/// The server a PostgreSQL run measures on: `--postgres-url`'s (no server to stop), or a
/// throwaway one started with initdb's defaults (fsync back on: PostgresServer turns it
/// off for tests) and `--server-setting`s, which the caller stops.
func benchServer(_ options: BenchOptions) throws -> (server: PostgresServer?, url: String) {
    if let url = options.postgresURL { return (nil, url) }
    FileHandle.standardError.write(Data("starting a throwaway PostgreSQL server…\n".utf8))
    var settings = ["fsync": "on"]
    settings.merge(options.serverSettings) { $1 }
    let server = try PostgresServer.start(settings: settings)
    do {
        return (server, try server.makeDatabase())
    } catch {
        server.stop()
        throw error
    }
}

func runPostgresBench(_ options: BenchOptions) throws {
    let (server, baseURL) = try benchServer(options)
    defer { server?.stop() }
    let serverLabel =
        server == nil
        ? "given with --postgres-url (\(try PostgresPool(url: baseURL).name))"
        : "throwaway, started for the run (PostgresServer: initdb -E UTF8 --locale=C, a private Unix socket)"
    let setup = try PostgresPool(url: baseURL)
    try setup.write { db in _ = try db.execute(sql: "CREATE SCHEMA IF NOT EXISTS \(benchSchema)") }
    try setup.close()
    let url = try benchConnectionString(baseURL)
    let (version, settings) = try serverDescription(url)
    let scale = PostgresScale(
        rows: options.rows, fetchRows: options.rowsGiven ? options.rows : PostgresScale.defaultFetchRows)
    FileHandle.standardError.write(Data("PostgreSQL \(version); \(scale.summary)\n".utf8))
    let measurements = try runPostgresWorkloads(options, url: url, scale: scale)
    var concurrent = [PostgresConcurrentMeasurement]()
    if options.workloads?.contains("W8") ?? true {
        for readers in [1, 2, 4] {
            FileHandle.standardError.write(Data("postgres W8 with \(readers) reader(s)…\n".utf8))
            concurrent += try runPostgresConcurrent(options, url: url, scale: scale, readers: readers)
        }
    }
    // Leave a given server as it was: the bench's table, and its schema when empty.
    let cleanup = try PostgresPool(url: baseURL)
    try cleanup.write { db in _ = try db.execute(sql: "DROP TABLE IF EXISTS \(benchSchema).users") }
    try? cleanup.write { db in _ = try db.execute(sql: "DROP SCHEMA IF EXISTS \(benchSchema)") }
    try cleanup.close()
    let report = PostgresReport(
        options: options, scale: scale, measurements: measurements, concurrent: concurrent, serverVersion: version,
        libpqVersion: rawpg_library_version(), server: serverLabel, serverSettings: settings)
    print(report.table())
    try writeReport(report.table(), to: options.reportPath)
    try updateReadme(options.readmePath, block: "postgres", with: report.markdownTable())
    if let path = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    }
    if let path = options.csvPath { try report.csv().write(toFile: path, atomically: true, encoding: .utf8) }
}
