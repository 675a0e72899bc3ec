import Foundation
import SwiftDALTestSupport

// `--instructions`: instructions per workload and implementation, counted by valgrind's
// callgrind around the measured region only (`rawbench_region`, through which the C
// harness and the Swift workloads alike run their timed part). Wall times on a shared
// machine move by ×2 between rounds; these counts repeat to a fraction of a percent, and
// decide a hot-path change.

/// One workload and implementation's count.
struct InstructionCount: Codable {
    let workload: String
    let title: String
    /// The implementation's name in the reports ("raw C", "SwiftDAL explicit", …).
    let implementation: String
    let instructions: Int64
}

/// One child process of `--instructions`: a workload and an implementation.
private struct CountedRun {
    let workload: String
    let title: String
    /// The name `--implementations` takes, and the one the reports print.
    let option: String
    let label: String
}

/// Counts W1–W7 (W8 is concurrent: its count would measure the scheduler) for every
/// selected implementation, each in its own child process under callgrind: the bench's
/// own binary, its debug information stripped (valgrind 3.19 cannot read Swift 6's), one
/// warm-up run then the counted run (`--zero-before` the region: only the last region's
/// instructions remain). On PostgreSQL the count is the client's (the server's processes
/// are not traced), on a throwaway server unless `--postgres-url` names one; on MariaDB
/// the same (`--mariadb-url`).
func runInstructionCounts(_ options: BenchOptions) throws -> [InstructionCount] {
    let valgrind = try executable(named: "valgrind", package: "valgrind")
    let objcopy = try executable(named: "objcopy", package: "binutils")
    try FileManager.default.createDirectory(atPath: options.workDirectory, withIntermediateDirectories: true)
    if let profiles = options.profilesDirectory {
        try FileManager.default.createDirectory(atPath: profiles, withIntermediateDirectories: true)
    }
    let binary = options.workDirectory + "/swiftdal-bench-stripped-\(getpid())"
    let bench = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    let (status, output) = try run(objcopy, ["--strip-debug", bench, binary])
    guard status == 0 else { throw BenchError("objcopy --strip-debug failed: \(output)") }
    defer { try? FileManager.default.removeItem(atPath: binary) }

    var runs = [CountedRun]()
    var engineArguments = [String]()
    var server: PostgresServer?
    defer { server?.stop() }
    var mariadbServer: MariaDBServer?
    defer { mariadbServer?.stop() }
    switch options.engine {
    case .sqlite:
        for workload in workloads where options.workloads?.contains(workload.id) ?? true {
            runs += options.implementations.map {
                CountedRun(workload: workload.id, title: workload.title, option: $0.optionName, label: $0.rawValue)
            }
        }
        engineArguments = options.pragmaArguments.flatMap { ["--pragma", $0] }
    case .postgres:
        for workload in postgresWorkloads where options.workloads?.contains(workload.id) ?? true {
            runs += options.postgresImplementations.filter(workload.implementations.contains).map {
                CountedRun(workload: workload.id, title: workload.title, option: $0.optionName, label: $0.rawValue)
            }
        }
        let url: String
        (server, url) = try benchServer(options)
        engineArguments = ["--engine", "postgres", "--postgres-url", url]
    case .mariadb:
        for workload in mariadbWorkloads where options.workloads?.contains(workload.id) ?? true {
            runs += options.mariadbImplementations.map {
                CountedRun(workload: workload.id, title: workload.title, option: $0.optionName, label: $0.rawValue)
            }
        }
        let url: String
        (mariadbServer, url) = try mariadbBenchServer(options)
        engineArguments = ["--engine", "mariadb", "--mariadb-url", url]
    case .cluster:
        throw BenchError("--instructions runs on sqlite, postgres or mariadb")
    }

    var counts = [InstructionCount]()
    for counted in runs {
        let outFile =
            (options.profilesDirectory ?? options.workDirectory)
            + "/callgrind.\(counted.workload).\(counted.option).out"
        defer { if options.profilesDirectory == nil { try? FileManager.default.removeItem(atPath: outFile) } }
        let arguments =
            [
                "--tool=callgrind", "--toggle-collect=rawbench_region", "--zero-before=rawbench_region",
                "--collect-atstart=no", "--callgrind-out-file=\(outFile)", binary,
                "--workloads", counted.workload, "--implementations", counted.option,
                "--rows", String(options.rows), "--runs", "1", "--warmup", "1", "--no-memory",
                "--work-dir", options.workDirectory + "/\(counted.workload)-\(counted.option)"
            ] + engineArguments
        FileHandle.standardError.write(Data("callgrind \(counted.workload) \(counted.label)…\n".utf8))
        let (status, output) = try run(valgrind, arguments, environment: ["SWIFT_DETERMINISTIC_HASHING": "1"])
        guard status == 0 else {
            throw BenchError(
                "callgrind \(counted.workload) \(counted.label) exited with \(status): \(output.suffix(2000))")
        }
        counts.append(
            InstructionCount(
                workload: counted.workload, title: counted.title, implementation: counted.label,
                instructions: try callgrindTotal(outFile)))
    }
    return counts
}

/// The instruction count of a callgrind output file: its `summary:` line, the events
/// counted since the last zeroing. It equals the region's inclusive cost as
/// `callgrind_annotate --inclusive=yes` shows it; the `totals:` line (summed from the cost
/// lines) read about 2% higher on W5.
func callgrindTotal(_ path: String) throws -> Int64 {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    for line in text.split(separator: "\n") where line.hasPrefix("summary:") {
        if let value = line.split(separator: " ").dropFirst().first.flatMap({ Int64($0) }) { return value }
    }
    throw BenchError("no summary line in \(path)")
}

/// The report of `--instructions`: instructions per implementation and the ratio to raw C.
func instructionTable(_ counts: [InstructionCount], options: BenchOptions) -> String {
    let postgres = options.engine == .postgres
    let client = postgres || options.engine == .mariadb
    let baseline =
        switch options.engine {
        case .postgres: PostgresImplementation.raw.rawValue
        case .mariadb: MariaDBImplementation.raw.rawValue
        case .sqlite, .cluster: Implementation.raw.rawValue
        }
    var lines = [
        (client ? "client instructions (this process; the server's are not counted)" : "instructions")
            + " in the measured region (callgrind, one warm-up run then the counted one; \(options.rows) rows)",
        "× \(baseline): instructions ÷ \(baseline)'s for the same workload",
        "",
        pad("workload", 22) + pad("implementation", 22) + pad("instructions", 16, right: true)
            + pad("× \(baseline)", 14, right: true)
    ]
    for count in counts {
        let raw = counts.first { $0.workload == count.workload && $0.implementation == baseline }
        let ratio = raw.map { String(format: "%.2f", Double(count.instructions) / Double($0.instructions)) } ?? "-"
        lines.append(
            pad("\(count.workload) \(count.title)", 22) + pad(count.implementation, 22)
                + pad(count.instructions.formatted(), 16, right: true) + pad(ratio, 14, right: true))
    }
    return lines.joined(separator: "\n")
}

/// The path of `name` on the PATH, or an error saying which Debian package has it.
func executable(named name: String, package: String) throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw BenchError("\(name) not found: it comes with Debian's \(package) (apt-get install \(package))")
}

/// Runs `path` with `arguments`; returns its exit status and its output (both streams).
func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, output)
}
