import CRawBench
import CRawMariaDBBench
import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport

// swiftdal-bench --engine mariadb: W1–W8 of Tests/Benchmarks/README.md, as the PostgreSQL mode runs
// them, through SwiftDAL on a MariaDBPool, beside a raw C baseline over MariaDB
// Connector/C doing the same work (Tests/Benchmarks/CRawMariaDBBench), in the same run,
// the order turning every round, as ratios to raw C.

/// One way of doing the work on MariaDB.
enum MariaDBImplementation: String, CaseIterable, Codable, Sendable {
    /// Connector/C, server-side prepared statements (binary protocol), one round trip per statement.
    case raw = "raw C"
    case explicit = "SwiftDAL explicit"
    case codable = "SwiftDAL Codable"

    /// The name `--implementations` takes.
    var optionName: String {
        switch self {
        case .raw: "raw"
        case .explicit: "explicit"
        case .codable: "codable"
        }
    }
}

/// Where the raw C side connects: the parts of a `mysql://` URL as C strings, kept for the
/// object's lifetime.
final class MariaDBTarget: @unchecked Sendable {
    /// The URL the Swift side opens its pools with.
    let url: String
    private let target: rawmy_target
    private let strings: [UnsafeMutablePointer<CChar>]

    /// Parses `mysql://user:password@host:port/database?socket=/path` as `MariaDBPool` does.
    init(url: String) throws {
        guard url.hasPrefix("mysql://") || url.hasPrefix("mariadb://"), let components = URLComponents(string: url)
        else { throw BenchError("a MariaDB URL looks like mysql://user:password@host:port/database?socket=/path") }
        var strings = [UnsafeMutablePointer<CChar>]()
        func keep(_ text: String?) throws -> UnsafePointer<CChar>? {
            guard let text else { return nil }
            guard let copy = strdup(text) else { throw BenchError("out of memory") }
            strings.append(copy)
            return UnsafePointer(copy)
        }
        var target = rawmy_target()
        do {
            target.host = try keep(components.host.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding })
            target.user = try keep(components.percentEncodedUser?.removingPercentEncoding)
            target.password = try keep(components.percentEncodedPassword?.removingPercentEncoding)
            let path = components.path.drop { $0 == "/" }
            target.database = try keep(path.isEmpty ? nil : String(path))
            target.socket = try keep(
                components.queryItems?.first { $0.name == "socket" || $0.name == "unix_socket" }?.value)
            target.port = UInt32(clamping: components.port ?? 0)
        } catch {
            for string in strings { free(string) }
            throw error
        }
        self.url = url
        self.target = target
        self.strings = strings
    }

    deinit { for string in strings { free(string) } }

    /// Calls `body` with the C target (valid only inside `body`).
    func withTarget<T>(_ body: (UnsafePointer<rawmy_target>) throws -> T) rethrows -> T {
        try withUnsafePointer(to: target) { try body($0) }
    }
}

/// One workload on MariaDB.
struct MariaDBWorkload: Sendable {
    let id: String
    let title: String
    /// Whether the table starts populated with the rows (all but W1).
    let populated: Bool
    /// Runs the workload; returns the seconds of its measured region (the workload alone)
    /// and its checksum.
    let run:
        @Sendable (MariaDBImplementation, MariaDBTarget, PostgresScale) throws -> (seconds: Double, checksum: Int64)
}

/// The text of a Connector/C baseline's error.
func message(of error: rawmy_error) -> String {
    withUnsafeBytes(of: error.message) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
}

/// Calls a raw Connector/C workload with the target; throws its error.
func rawMariaDBCall(
    _ name: String, _ target: MariaDBTarget,
    _ body: (UnsafePointer<rawmy_target>, inout Int64, inout Double, UnsafeMutablePointer<rawmy_error>) -> Int32
) throws -> (seconds: Double, checksum: Int64) {
    var checksum: Int64 = 0
    var seconds = 0.0
    var error = rawmy_error()
    let code = target.withTarget { pointer in
        withUnsafeMutablePointer(to: &error) { body(pointer, &checksum, &seconds, $0) }
    }
    guard code == 0 else { throw BenchError("raw C \(name) failed: \(message(of: error))") }
    return (seconds, checksum)
}

func mariadbSwiftCall(
    _ implementation: MariaDBImplementation, _ target: MariaDBTarget, _ scale: PostgresScale,
    explicit: (MariaDBSwiftWorkloads<ExplicitUser>) throws -> (seconds: Double, checksum: Int64),
    codable: (MariaDBSwiftWorkloads<CodableUser>) throws -> (seconds: Double, checksum: Int64)
) throws -> (seconds: Double, checksum: Int64) {
    switch implementation {
    case .explicit: try explicit(MariaDBSwiftWorkloads<ExplicitUser>(url: target.url, scale: scale))
    case .codable: try codable(MariaDBSwiftWorkloads<CodableUser>(url: target.url, scale: scale))
    case .raw: throw BenchError("\(implementation.rawValue) is not a Swift implementation")
    }
}

let mariadbWorkloads: [MariaDBWorkload] = [
    MariaDBWorkload(id: "W1", title: "insert", populated: false) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W1", target) { rawmy_w1_insert($0, scale.rows, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w1Insert() }, codable: { try $0.w1Insert() })
    },
    MariaDBWorkload(id: "W1B", title: "bulk insert", populated: false) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W1B", target) { rawmy_w1_bulk($0, scale.rows, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w1Bulk() }, codable: { try $0.w1Bulk() })
    },
    MariaDBWorkload(id: "W2", title: "fetch-all", populated: true) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W2", target) { rawmy_w2_fetch_all($0, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w2FetchAll() }, codable: { try $0.w2FetchAll() })
    },
    MariaDBWorkload(id: "W3", title: "lookup", populated: true) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W3", target) { rawmy_w3_lookup($0, scale.rows, scale.lookups, 1, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w3Lookup(inTransaction: true) },
                codable: { try $0.w3Lookup(inTransaction: true) })
    },
    MariaDBWorkload(id: "W3A", title: "lookup, per call", populated: true) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W3a", target) { rawmy_w3_lookup($0, scale.rows, scale.lookups, 0, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w3Lookup(inTransaction: false) },
                codable: { try $0.w3Lookup(inTransaction: false) })
    },
    MariaDBWorkload(id: "W4", title: "filter", populated: true) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W4", target) { rawmy_w4_filter($0, scale.filters, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w4Filter() }, codable: { try $0.w4Filter() })
    },
    MariaDBWorkload(id: "W5", title: "update", populated: true) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W5", target) { rawmy_w5_update($0, scale.rows, scale.updates, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w5Update() }, codable: { try $0.w5Update() })
    },
    MariaDBWorkload(id: "W6", title: "exists", populated: true) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W6", target) { rawmy_w6_exists($0, scale.rows, scale.lookups, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w6Exists() }, codable: { try $0.w6Exists() })
    },
    MariaDBWorkload(id: "W7", title: "count", populated: true) { implementation, target, scale in
        implementation == .raw
            ? try rawMariaDBCall("W7", target) { rawmy_w7_count($0, scale.counts, &$1, &$2, $3) }
            : try mariadbSwiftCall(
                implementation, target, scale, explicit: { try $0.w7Count() }, codable: { try $0.w7Count() })
    }
]

/// Results of one workload and implementation over every run.
struct MariaDBMeasurement: Codable {
    let workload: String
    let title: String
    let implementation: MariaDBImplementation
    var seconds: [Double] = []
    /// This process's CPU time during each run (the client's share of the wall time).
    var cpuSeconds: [Double] = []
    var checksums: [Int64] = []
    var median: Double { swiftdal_bench.median(seconds) }
}

/// W8 for one implementation and reader count.
struct MariaDBConcurrentMeasurement: Codable {
    let implementation: MariaDBImplementation
    let readers: Int
    let readsPerSecond: Double
    let writesPerSecond: Double
    /// Failed lookups and write transactions, over every run (warm-up included).
    let errors: Int64
    /// Of those, deadlocks and lock wait timeouts (retryable).
    let retryableErrors: Int64
    /// The readers' checksum of every run.
    let checksums: [Int64]
}

/// A fresh `users` table for a run: empty (W1) or with the scale's rows.
func prepareMariaDBTable(_ target: MariaDBTarget, scale: PostgresScale, populated: Bool) throws {
    var error = rawmy_error()
    let code = target.withTarget { rawmy_setup($0, scale.rows, populated ? 1 : 0, &error) }
    guard code == 0 else { throw BenchError("setting up the table failed: \(message(of: error))") }
}

/// Runs every selected workload `warmup + runs` times for every implementation, each on a
/// freshly created table, the order of the implementations turning by one place every
/// round; records the runs after the warm-up.
func runMariaDBWorkloads(_ options: BenchOptions, target: MariaDBTarget, scale: PostgresScale) throws
    -> [MariaDBMeasurement]
{
    let selected = mariadbWorkloads.filter { options.workloads?.contains($0.id) ?? true }
    var results: [String: MariaDBMeasurement] = [:]
    for round in 0..<(options.warmup + options.runs) {
        let recorded = round >= options.warmup
        let label =
            recorded ? "run \(round - options.warmup + 1)/\(options.runs)" : "warm-up \(round + 1)/\(options.warmup)"
        for workload in selected {
            // W2's table holds `fetchRows` rows; the others `rows`.
            var scale = scale
            if workload.id == "W2" { scale.rows = scale.fetchRows }
            for implementation in rotated(options.mariadbImplementations, by: round) {
                try prepareMariaDBTable(target, scale: scale, populated: workload.populated)
                let (seconds, checksum) = try workload.run(implementation, target, scale)
                let cpu = rawbench_last_cpu_seconds()
                FileHandle.standardError.write(
                    Data(
                        ("mariadb \(label) \(workload.id) \(implementation.rawValue): \(String(format: "%.4f", seconds)) s "
                            + "(client CPU \(String(format: "%.4f", cpu)) s)\n").utf8))
                guard recorded else { continue }
                let key = workload.id + implementation.rawValue
                var measurement =
                    results[key]
                    ?? MariaDBMeasurement(workload: workload.id, title: workload.title, implementation: implementation)
                measurement.seconds.append(seconds)
                measurement.cpuSeconds.append(cpu)
                measurement.checksums.append(checksum)
                results[key] = measurement
            }
        }
    }
    return selected.flatMap { workload in
        options.mariadbImplementations.compactMap { results[workload.id + $0.rawValue] }
    }
}

/// W8 at `readers` readers for every implementation, rounds and order as for W1–W7.
func runMariaDBConcurrent(_ options: BenchOptions, target: MariaDBTarget, scale: PostgresScale, readers: Int) throws
    -> [MariaDBConcurrentMeasurement]
{
    var runs = [MariaDBImplementation: [PostgresConcurrentResult]]()
    var errors = [MariaDBImplementation: (all: Int64, retryable: Int64)]()
    for round in 0..<(options.warmup + options.runs) {
        let recorded = round >= options.warmup
        let label =
            recorded ? "run \(round - options.warmup + 1)/\(options.runs)" : "warm-up \(round + 1)/\(options.warmup)"
        for implementation in rotated(options.mariadbImplementations, by: round) {
            try prepareMariaDBTable(target, scale: scale, populated: true)
            let result: PostgresConcurrentResult
            switch implementation {
            case .raw:
                var failures: Int64 = 0
                var checksum: Int64 = 0
                var readSeconds = 0.0
                var writeSeconds = 0.0
                var error = rawmy_error()
                let code = target.withTarget {
                    rawmy_w8_concurrent(
                        $0, scale.rows, Int32(readers), scale.concurrentLookups, scale.concurrentWrites,
                        scale.concurrentBatch, &failures, &readSeconds, &writeSeconds, &checksum, &error)
                }
                guard code == 0 else { throw BenchError("raw C W8 failed: \(message(of: error))") }
                result = PostgresConcurrentResult(
                    readSeconds: readSeconds, writeSeconds: writeSeconds, errors: failures, retryableErrors: 0,
                    checksum: checksum)
            case .explicit:
                result = try MariaDBSwiftWorkloads<ExplicitUser>(url: target.url, scale: scale)
                    .w8Concurrent(readers: readers)
            case .codable:
                result = try MariaDBSwiftWorkloads<CodableUser>(url: target.url, scale: scale)
                    .w8Concurrent(readers: readers)
            }
            errors[implementation, default: (0, 0)].all += result.errors
            errors[implementation, default: (0, 0)].retryable += result.retryableErrors
            FileHandle.standardError.write(
                Data(
                    "mariadb \(label) W8 \(readers) reader(s) \(implementation.rawValue): \(String(format: "%.4f", result.readSeconds)) s\n"
                        .utf8))
            if recorded { runs[implementation, default: []].append(result) }
        }
    }
    return options.mariadbImplementations.compactMap { implementation in
        guard let results = runs[implementation], !results.isEmpty else { return nil }
        return MariaDBConcurrentMeasurement(
            implementation: implementation, readers: readers,
            readsPerSecond: median(results.map { Double(Int64(readers) * scale.concurrentLookups) / $0.readSeconds }),
            writesPerSecond: median(results.map { Double(scale.concurrentWrites) / $0.writeSeconds }),
            errors: errors[implementation]?.all ?? 0, retryableErrors: errors[implementation]?.retryable ?? 0,
            checksums: results.map(\.checksum))
    }
}

/// The database the bench works in on a server given with `--mariadb-url`: created when
/// missing (utf8mb4_nopad_bin), so that the server's own tables are never touched.
let mariadbBenchDatabase = "swiftdal_bench"

/// The server a MariaDB run measures on: `--mariadb-url`'s (no server to stop; the bench
/// works in its own database there), or a throwaway one (`MariaDBServer`: mariadbd as an
/// unprivileged user in /tmp/swiftdal-my-*, on a private Unix socket), durable as the
/// server's built-in default is (`innodb_flush_log_at_trx_commit=1`: MariaDBServer sets 0
/// for tests), plus `--server-setting`s, which the caller stops.
func mariadbBenchServer(_ options: BenchOptions) throws -> (server: MariaDBServer?, url: String) {
    if let given = options.mariadbURL {
        guard var components = URLComponents(string: given) else { throw BenchError("cannot parse \(given)") }
        let setup = try MariaDBPool(url: given)
        defer { try? setup.close() }
        try setup.reentrantWrite { db in
            _ = try db.execute(
                sql: "CREATE DATABASE IF NOT EXISTS \(mariadbBenchDatabase) CHARACTER SET utf8mb4 "
                    + "COLLATE utf8mb4_nopad_bin")
        }
        components.path = "/" + mariadbBenchDatabase
        guard let url = components.string else { throw BenchError("cannot build the bench's URL from \(given)") }
        return (nil, url)
    }
    FileHandle.standardError.write(Data("starting a throwaway MariaDB server…\n".utf8))
    var settings = ["innodb-flush-log-at-trx-commit": "1"]
    settings.merge(options.serverSettings) { $1 }
    let server = try MariaDBServer.start(options: settings.sorted { $0.key < $1.key }.map { "--\($0.key)=\($0.value)" })
    do {
        return (server, try server.makeDatabase())
    } catch {
        server.stop()
        throw error
    }
}

/// The server's version and the settings that decide its durability and memory.
func mariadbServerDescription(_ url: String) throws -> (version: String, settings: [String]) {
    let pool = try MariaDBPool(url: url)
    defer { try? pool.close() }
    return try pool.read { db in
        let version = try db.fetchScalar(String.self, "SELECT VERSION()") ?? "?"
        let settings = try db.fetchAll(
            """
            SELECT CONCAT(LOWER(VARIABLE_NAME), '=', VARIABLE_VALUE) FROM information_schema.GLOBAL_VARIABLES
            WHERE VARIABLE_NAME IN ('INNODB_FLUSH_LOG_AT_TRX_COMMIT', 'INNODB_BUFFER_POOL_SIZE', 'INNODB_LOG_FILE_SIZE',
              'SYNC_BINLOG', 'LOG_BIN', 'INNODB_DOUBLEWRITE', 'MAX_CONNECTIONS', 'TRANSACTION_ISOLATION')
            ORDER BY 1
            """
        ) { row -> String in try row[0] }
        return (version, settings)
    }
}

/// `--engine mariadb`: starts a throwaway server unless given one, runs the workloads and
/// prints (and writes) the report; the server is stopped on every path.
func runMariaDBBench(_ options: BenchOptions) throws {
    let (server, url) = try mariadbBenchServer(options)
    defer { server?.stop() }
    let serverLabel =
        server == nil
        ? "given with --mariadb-url (database \(mariadbBenchDatabase))"
        : "throwaway, started for the run (MariaDBServer: mariadb-install-db, a private Unix socket)"
    let target = try MariaDBTarget(url: url)
    let (version, settings) = try mariadbServerDescription(url)
    let scale = PostgresScale(
        rows: options.rows, fetchRows: options.rowsGiven ? options.rows : PostgresScale.defaultFetchRows)
    FileHandle.standardError.write(Data("MariaDB \(version); \(scale.mariadbSummary)\n".utf8))
    let measurements = try runMariaDBWorkloads(options, target: target, scale: scale)
    var concurrent = [MariaDBConcurrentMeasurement]()
    if options.workloads?.contains("W8") ?? true {
        for readers in [1, 2, 4] {
            FileHandle.standardError.write(Data("mariadb W8 with \(readers) reader(s)…\n".utf8))
            concurrent += try runMariaDBConcurrent(options, target: target, scale: scale, readers: readers)
        }
    }
    // Leave a given server as it was, but for the bench's (empty) database.
    if server == nil {
        let cleanup = try MariaDBPool(url: url)
        try cleanup.reentrantWrite { db in _ = try db.execute(sql: "DROP TABLE IF EXISTS users") }
        try cleanup.close()
    }
    let report = MariaDBReport(
        options: options, scale: scale, measurements: measurements, concurrent: concurrent, serverVersion: version,
        clientVersion: String(cString: rawmy_library_version()), server: serverLabel, serverSettings: settings)
    print(report.table())
    try writeReport(report.table(), to: options.reportPath)
    try updateReadme(options.readmePath, block: "mariadb", with: report.markdownTable())
    if let path = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    }
    if let path = options.csvPath { try report.csv().write(toFile: path, atomically: true, encoding: .utf8) }
}

extension PostgresScale {
    /// The scale as the MariaDB run uses it (no pipelining there).
    var mariadbSummary: String {
        "\(rows) rows; W1 \(rows) inserts, W2 \(fetchRows) rows, W3/W3a/W6 \(lookups) operations, "
            + "W4 \(filters) × LIMIT 100, W5 \(updates) updates, W7 \(counts) counts, "
            + "W8 \(concurrentLookups) lookups per reader while \(concurrentWrites) rows are inserted in "
            + "transactions of \(concurrentBatch)"
    }
}
