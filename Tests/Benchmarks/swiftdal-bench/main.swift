import CRawBench
import Foundation
import SwiftDAL
import Synchronization

// swiftdal-bench: SwiftDAL and the raw SQLite C API on the same workloads, same run
// (`--engine postgres`: SwiftDAL on PostgreSQL and raw libpq, see PostgresBench.swift).
do {
    guard let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) else { exit(0) }
    if let probe = options.streamProbe {
        try runStreamProbe(options, probe: probe)
        exit(0)
    }
    if let trials = options.failoverLossTrials {
        try runFailoverLoss(options, trials: trials)
        exit(0)
    }
    if options.serviceOnly {
        try await runServiceBench(options)
        exit(0)
    }
    if options.streamOnly {
        try runStreamBench(options)
        exit(0)
    }
    if options.instructions {
        let counts = try runInstructionCounts(options)
        let table = instructionTable(counts, options: options)
        print(table)
        try writeReport(table, to: options.reportPath)
        if let path = options.jsonPath {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(counts).write(to: URL(fileURLWithPath: path))
        }
        exit(0)
    }
    if options.engine == .postgres {
        try runPostgresBench(options)
        exit(0)
    }
    if options.engine == .mariadb {
        try runMariaDBBench(options)
        exit(0)
    }
    if options.engine == .cluster {
        try runClusterBench(options)
        exit(0)
    }
    extraPragmas.withLock { $0 = options.pragmas }
    guard rawbench_set_pragmas(try options.pragmaSQL) == 0 else {
        throw BenchError("out of memory setting the pragmas")
    }
    if options.probe != nil {
        try runProbe(options)
        exit(0)
    }
    try FileManager.default.createDirectory(atPath: options.workDirectory, withIntermediateDirectories: true)
    if let writes = options.walGrowthWrites {
        try runWALGrowth(writes: writes, directory: options.workDirectory)
        exit(0)
    }
    let sqliteVersion =
        try DatabaseQueue.inMemory().read { try $0.fetchScalar(String.self, "SELECT sqlite_version()") } ?? "?"
    let measurements = try runWorkloads(options)
    var concurrent = [ConcurrentMeasurement]()
    if options.workloads?.contains("W8") ?? true {
        for readers in [1, 2, 4] {
            FileHandle.standardError.write(Data("W8 with \(readers) reader(s)…\n".utf8))
            concurrent += try runConcurrent(options, readers: readers)
        }
    }
    let memory = options.memory ? try runMemoryProbes(options) : []
    let report = BenchReport(
        options: options, measurements: measurements, concurrent: concurrent, memory: memory,
        sqliteVersion: sqliteVersion)
    print(report.table())
    try writeReport(report.table(), to: options.reportPath)
    try updateReadme(options.readmePath, block: "sqlite", with: report.markdownTable())
    if let path = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    }
    if let path = options.csvPath { try report.csv().write(toFile: path, atomically: true, encoding: .utf8) }
    if let path = options.svgPath { try report.svg().write(toFile: path, atomically: true, encoding: .utf8) }
} catch {
    FileHandle.standardError.write(Data("swiftdal-bench failed: \(error)\n".utf8))
    exit(1)
}
