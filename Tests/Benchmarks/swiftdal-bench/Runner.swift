import CRawBench
import Foundation

/// One way of doing the work.
enum Implementation: String, CaseIterable, Codable {
    case raw = "raw C"
    case explicit = "SwiftDAL explicit"
    case codable = "SwiftDAL Codable"
    /// Hand-written Swift over SQLite's C API, no library (`SwiftFloor`): what Swift itself
    /// costs above C for the workload. Counted by `--instructions` by default; timed only
    /// when `--implementations` names it.
    case rawSwift = "raw Swift"

    /// The name `--implementations` and `--probe-implementation` take.
    var optionName: String {
        switch self {
        case .raw: "raw"
        case .explicit: "explicit"
        case .codable: "codable"
        case .rawSwift: "rawswift"
        }
    }

    /// What a timed run measures unless `--implementations` says otherwise.
    static let timedDefaults: [Implementation] = [.raw, .explicit, .codable]
}

/// One workload of the benchmark definition. Each side returns the seconds of its
/// measured region (the workload alone, see `measured(_:)`) and its checksum.
struct Workload: Sendable {
    let id: String
    let title: String
    /// Whether the table starts populated with the rows (all but W1).
    let populated: Bool
    let raw: @Sendable (String, Int64) throws -> (seconds: Double, checksum: Int64)
    let swift: @Sendable (Implementation, String, Int64) throws -> (seconds: Double, checksum: Int64)
}

/// Runs a raw C workload, which reports its checksum and measured seconds.
func rawCall(_ name: String, _ body: (inout Int64, inout Double) -> Int32) throws -> (
    seconds: Double, checksum: Int64
) {
    var checksum: Int64 = 0
    var seconds = 0.0
    let code = body(&checksum, &seconds)
    guard code == 0 else { throw BenchError("\(name) failed with SQLite code \(code)") }
    return (seconds, checksum)
}

func swiftCall(
    _ implementation: Implementation, _ path: String, _ rows: Int64,
    explicit: (SwiftWorkloads<ExplicitUser>) throws -> (seconds: Double, checksum: Int64),
    codable: (SwiftWorkloads<CodableUser>) throws -> (seconds: Double, checksum: Int64),
    floor: (SwiftFloor) throws -> (seconds: Double, checksum: Int64)
) throws -> (seconds: Double, checksum: Int64) {
    switch implementation {
    case .explicit: try explicit(SwiftWorkloads<ExplicitUser>(path: path, rows: rows))
    case .codable: try codable(SwiftWorkloads<CodableUser>(path: path, rows: rows))
    case .rawSwift: try floor(SwiftFloor(path: path, rows: rows))
    case .raw: throw BenchError("raw C is not a Swift implementation")
    }
}

/// Runs `body` as the measured region, through the C harness's `rawbench_measured` (so
/// that a time and a callgrind count cover the same work on every side), and returns what
/// it returned with its elapsed seconds.
func measured<T>(_ body: () throws -> T) throws -> (value: T, seconds: Double) {
    var result: Result<T, any Error>?
    let run: () -> Void = { result = Result { try body() } }
    let seconds = withoutActuallyEscaping(run) { run in
        let context = MeasuredContext(run)
        return withExtendedLifetime(context) {
            rawbench_measured(
                { pointer in
                    guard let pointer else { return }
                    Unmanaged<MeasuredContext>.fromOpaque(pointer).takeUnretainedValue().run()
                }, Unmanaged.passUnretained(context).toOpaque())
        }
    }
    guard let result else { throw BenchError("the measured region did not run") }
    return (try result.get(), seconds)
}

/// What `measured(_:)` hands the C region: the body to run.
final class MeasuredContext {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

let workloads: [Workload] = [
    Workload(
        id: "W1", title: "insert", populated: false,
        raw: { path, n in try rawCall("W1") { rawbench_w1_insert(path, n, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w1Insert() }, codable: { try $0.w1Insert() },
                floor: { try $0.w1Insert() })
        }),
    Workload(
        id: "W2", title: "fetch-all", populated: true,
        raw: { path, _ in try rawCall("W2") { rawbench_w2_fetch_all(path, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w2FetchAll() }, codable: { try $0.w2FetchAll() },
                floor: { try $0.w2FetchAll() })
        }),
    Workload(
        id: "W3", title: "lookup", populated: true,
        raw: { path, n in try rawCall("W3") { rawbench_w3_lookup(path, n, 1, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w3Lookup(inTransaction: true) },
                codable: { try $0.w3Lookup(inTransaction: true) }, floor: { try $0.w3Lookup(inTransaction: true) })
        }),
    Workload(
        id: "W3A", title: "lookup, per call", populated: true,
        raw: { path, n in try rawCall("W3a") { rawbench_w3_lookup(path, n, 0, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w3Lookup(inTransaction: false) },
                codable: { try $0.w3Lookup(inTransaction: false) }, floor: { try $0.w3Lookup(inTransaction: false) })
        }),
    Workload(
        id: "W4", title: "filter", populated: true,
        raw: { path, n in try rawCall("W4") { rawbench_w4_filter(path, n, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w4Filter() }, codable: { try $0.w4Filter() },
                floor: { try $0.w4Filter() })
        }),
    Workload(
        id: "W5", title: "update", populated: true,
        raw: { path, n in try rawCall("W5") { rawbench_w5_update(path, n, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w5Update() }, codable: { try $0.w5Update() },
                floor: { try $0.w5Update() })
        }),
    Workload(
        id: "W6", title: "exists", populated: true,
        raw: { path, n in try rawCall("W6") { rawbench_w6_exists(path, n, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w6Exists() }, codable: { try $0.w6Exists() },
                floor: { try $0.w6Exists() })
        }),
    Workload(
        id: "W7", title: "count", populated: true,
        raw: { path, n in try rawCall("W7") { rawbench_w7_count(path, n, &$0, &$1) } },
        swift: {
            try swiftCall(
                $0, $1, $2, explicit: { try $0.w7Count() }, codable: { try $0.w7Count() },
                floor: { try $0.w7Count() })
        })
]

/// Results of one workload and implementation over every run.
struct Measurement: Codable {
    let workload: String
    let title: String
    let implementation: Implementation
    var seconds: [Double] = []
    var checksums: [Int64] = []
    var median: Double { swiftdal_bench.median(seconds) }
}

/// `items` turned left by `places` (modulo their count).
func rotated<T>(_ items: [T], by places: Int) -> [T] {
    guard !items.isEmpty else { return items }
    let shift = places % items.count
    return Array(items[shift...] + items[..<shift])
}

/// The median of `values` (the upper middle one for an even count); `values` is not empty.
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Removes a database file and its WAL companions.
func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
    }
}

/// Creates a fresh database for a workload: empty (W1) or with `rows` rows.
func prepareDatabase(_ path: String, rows: Int64, populated: Bool) throws {
    removeDatabase(path)
    let code = populated ? rawbench_populate(path, rows) : rawbench_create(path)
    guard code == 0 else { throw BenchError("setting up \(path) failed with SQLite code \(code)") }
}

/// Runs every selected workload `runs` times for every implementation, interleaved so
/// that machine noise spreads over all of them, after `warmup` unrecorded rounds. The
/// order of the implementations turns by one place every round, so that none always runs
/// first or last in a round.
func runWorkloads(_ options: BenchOptions) throws -> [Measurement] {
    let selected = workloads.filter { options.workloads?.contains($0.id) ?? true }
    var results: [String: Measurement] = [:]
    for round in 0..<(options.warmup + options.runs) {
        let recorded = round >= options.warmup
        let label =
            recorded ? "run \(round - options.warmup + 1)/\(options.runs)" : "warm-up \(round + 1)/\(options.warmup)"
        for workload in selected {
            for implementation in rotated(options.implementations, by: round) {
                let path = options.workDirectory + "/\(workload.id)-\(implementation).sqlite"
                try prepareDatabase(path, rows: options.rows, populated: workload.populated)
                let (seconds, checksum) =
                    implementation == .raw
                    ? try workload.raw(path, options.rows)
                    : try workload.swift(implementation, path, options.rows)
                removeDatabase(path)
                FileHandle.standardError.write(
                    Data(
                        "\(label) \(workload.id) \(implementation.rawValue): \(String(format: "%.4f", seconds)) s\n"
                            .utf8))
                guard recorded else { continue }
                let key = workload.id + implementation.rawValue
                var measurement =
                    results[key]
                    ?? Measurement(workload: workload.id, title: workload.title, implementation: implementation)
                measurement.seconds.append(seconds)
                measurement.checksums.append(checksum)
                results[key] = measurement
            }
        }
    }
    return selected.flatMap { workload in
        options.implementations.compactMap { results[workload.id + $0.rawValue] }
    }
}

/// W8 for one implementation and reader count.
struct ConcurrentMeasurement: Codable {
    let implementation: Implementation
    let readers: Int
    let readsPerSecond: Double
    let writesPerSecond: Double
    let busyErrors: Int64
    let otherErrors: Int64
    let checksum: Int64
}

/// W8 for every implementation at `readers` readers: `options.warmup` unrecorded rounds,
/// then `options.runs` rounds, the order of the implementations turning every round (as
/// for W1–W7); reports the median reads/s and writes/s of the recorded rounds, and every
/// BUSY or other error of all rounds, warm-up included.
func runConcurrent(_ options: BenchOptions, readers: Int) throws -> [ConcurrentMeasurement] {
    let lookups: Int64 = 25_000
    let writes: Int64 = 10_000
    let batch: Int64 = 100
    var runs = [Implementation: [ConcurrentResult]]()
    // Errors count in warm-up rounds too: a BUSY is a BUSY whenever it happens.
    var errors = [Implementation: (busy: Int64, other: Int64)]()
    for round in 0..<(options.warmup + options.runs) {
        let recorded = round >= options.warmup
        let label =
            recorded ? "run \(round - options.warmup + 1)/\(options.runs)" : "warm-up \(round + 1)/\(options.warmup)"
        // (W8 has no raw Swift side: its concurrency would be a harness of its own.)
        for implementation in rotated(options.implementations.filter { $0 != .rawSwift }, by: round) {
            let path = options.workDirectory + "/W8-\(implementation).sqlite"
            try prepareDatabase(path, rows: options.rows, populated: true)
            defer { removeDatabase(path) }
            let result: ConcurrentResult
            switch implementation {
            case .raw:
                var busy: Int64 = 0
                var checksum: Int64 = 0
                var readSeconds = 0.0
                var writeSeconds = 0.0
                let code = rawbench_w8_concurrent(
                    path, options.rows, Int32(readers), lookups, writes, batch, &busy, &readSeconds, &writeSeconds,
                    &checksum)
                result = ConcurrentResult(
                    readSeconds: readSeconds, writeSeconds: writeSeconds, busyErrors: busy,
                    otherErrors: code == 0 ? 0 : 1, checksum: checksum)
            case .explicit:
                result = try SwiftWorkloads<ExplicitUser>(path: path, rows: options.rows)
                    .w8Concurrent(readers: readers, lookups: lookups, writes: writes, batch: batch)
            case .codable:
                result = try SwiftWorkloads<CodableUser>(path: path, rows: options.rows)
                    .w8Concurrent(readers: readers, lookups: lookups, writes: writes, batch: batch)
            case .rawSwift:
                continue
            }
            errors[implementation, default: (0, 0)].busy += result.busyErrors
            errors[implementation, default: (0, 0)].other += result.otherErrors
            FileHandle.standardError.write(
                Data(
                    "\(label) W8 \(readers) reader(s) \(implementation.rawValue): \(String(format: "%.4f", result.readSeconds)) s\n"
                        .utf8))
            if recorded { runs[implementation, default: []].append(result) }
        }
    }
    return options.implementations.compactMap { implementation in
        guard let results = runs[implementation], let last = results.last else { return nil }
        return ConcurrentMeasurement(
            implementation: implementation, readers: readers,
            readsPerSecond: median(results.map { Double(Int64(readers) * lookups) / $0.readSeconds }),
            writesPerSecond: median(results.map { Double(writes) / $0.writeSeconds }),
            busyErrors: errors[implementation]?.busy ?? 0, otherErrors: errors[implementation]?.other ?? 0,
            checksum: last.checksum)
    }
}
