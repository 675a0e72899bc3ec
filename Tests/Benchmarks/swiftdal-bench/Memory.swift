import CRawBench
import Foundation

/// Peak resident memory of this process's address space, in KiB: `VmHWM` of
/// /proc/self/status. (`getrusage`'s `ru_maxrss` survives `execve`, so a child process
/// would report its parent's peak.)
/// (/proc files report a size of 0, so they are read until end of file, not by size.)
func peakResidentKiB() -> Int {
    guard let file = FileHandle(forReadingAtPath: "/proc/self/status") else { return -1 }
    defer { try? file.close() }
    let status = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        if let kib = Int(line.dropFirst(6).split(whereSeparator: \.isWhitespace).first ?? "") { return kib }
    }
    return -1
}

/// What a probe child process does: one piece of work, then its peak memory on stdout.
func runProbe(_ options: BenchOptions) throws {
    guard let probe = options.probe, let path = options.probePath else {
        throw BenchError("--probe needs --probe-path")
    }
    let implementation: Implementation
    switch options.probeImplementation {
    case nil, "raw": implementation = .raw
    case "explicit": implementation = .explicit
    case "codable": implementation = .codable
    case let name?: throw BenchError("unknown --probe-implementation \(name) (raw, explicit, codable)")
    }
    var checksum: Int64 = 0
    switch (probe, implementation) {
    case ("idle", _):
        break
    case ("W2", .raw):
        checksum = try rawCall("W2") { rawbench_w2_fetch_all(path, &$0, &$1) }.checksum
    case ("W2", .explicit):
        checksum = try SwiftWorkloads<ExplicitUser>(path: path, rows: options.rows).w2FetchAll().checksum
    case ("W2", .codable):
        checksum = try SwiftWorkloads<CodableUser>(path: path, rows: options.rows).w2FetchAll().checksum
    case ("stream", _):
        checksum = try SwiftWorkloads<ExplicitUser>(path: path, rows: options.rows).stream()
    default:
        throw BenchError("unknown probe \(probe)")
    }
    print("peak_kib=\(peakResidentKiB()) checksum=\(checksum)")
}

struct MemoryMeasurement: Codable {
    let probe: String
    let implementation: Implementation?
    let rows: Int64
    let peakKiB: Int
    let checksum: Int64
}

/// Runs one probe in a child process (so its peak memory is its own).
func measureInChild(probe: String, implementation: Implementation?, path: String, rows: Int64, pragmas: [String])
    throws -> MemoryMeasurement
{
    var arguments = ["--probe", probe, "--probe-path", path, "--rows", String(rows)]
    arguments += pragmas.flatMap { ["--pragma", $0] }
    if let implementation { arguments += ["--probe-implementation", implementation.optionName] }
    let fields = try runProbeChild(probe: probe, arguments: arguments)
    guard let peak = fields["peak_kib"] else { throw BenchError("probe \(probe) printed no peak") }
    return MemoryMeasurement(
        probe: probe, implementation: implementation, rows: rows, peakKiB: Int(peak),
        checksum: fields["checksum"] ?? 0)
}

func runMemoryProbes(_ options: BenchOptions) throws -> [MemoryMeasurement] {
    var results = [MemoryMeasurement]()
    let path = options.workDirectory + "/memory.sqlite"
    try prepareDatabase(path, rows: options.rows, populated: true)
    let pragmas = options.pragmaArguments
    results.append(
        try measureInChild(probe: "idle", implementation: nil, path: path, rows: options.rows, pragmas: pragmas))
    for implementation in Implementation.timedDefaults {
        results.append(
            try measureInChild(
                probe: "W2", implementation: implementation, path: path, rows: options.rows, pragmas: pragmas))
    }
    removeDatabase(path)
    let streamPath = options.workDirectory + "/stream.sqlite"
    FileHandle.standardError.write(Data("populating \(options.streamRows) rows for the streaming probe…\n".utf8))
    try prepareDatabase(streamPath, rows: options.streamRows, populated: true)
    results.append(
        try measureInChild(
            probe: "stream", implementation: .explicit, path: streamPath, rows: options.streamRows, pragmas: pragmas))
    removeDatabase(streamPath)
    return results
}

/// Runs this program again as a probe child with `arguments` and returns the
/// `name=value` fields it printed (at least `peak_kib`).
func runProbeChild(probe: String, arguments: [String]) throws -> [String: Int64] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchError("probe \(probe) exited with \(process.terminationStatus)")
    }
    var fields = [String: Int64]()
    for pair in output.split(whereSeparator: \.isWhitespace) {
        let parts = pair.split(separator: "=")
        if parts.count == 2, let value = Int64(parts[1]) { fields[String(parts[0])] = value }
    }
    guard fields["peak_kib"] != nil else { throw BenchError("probe \(probe) printed no peak: \(output)") }
    return fields
}
