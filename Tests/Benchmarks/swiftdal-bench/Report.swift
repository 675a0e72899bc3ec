import Foundation

struct BenchReport: Codable {
    var date: String
    var machine: String
    var sqliteVersion: String
    var rows: Int64
    var runs: Int
    var warmupRuns: Int
    /// Pragmas set on every connection of both sides (none for the committed figures).
    var pragmas: [String]
    var workloads: [Row]
    var concurrent: [ConcurrentMeasurement]
    var memory: [MemoryMeasurement]
    var peakResidentKiB: Int

    struct Row: Codable {
        let workload: String
        let title: String
        let implementation: Implementation
        let medianSeconds: Double
        /// The ratio to raw C: the median over the runs of each run's time divided by
        /// raw C's time in the same round. Runs of one round are seconds apart, so a slow
        /// phase of a shared machine (they last seconds, and move every implementation by
        /// up to ×1.7) hits both sides of a ratio, where the ratio of two medians can pair
        /// a fast raw C median with a slow one.
        let ratioToRawC: Double
        /// The median time divided by raw C's median time.
        let ratioOfMedians: Double
        let checksumsAgree: Bool
        let seconds: [Double]
        /// The lowest and highest of the per-round ratios: how far noise moves one run.
        let runRatioRange: ClosedRange<Double>?
    }

    init(
        options: BenchOptions, measurements: [Measurement], concurrent: [ConcurrentMeasurement],
        memory: [MemoryMeasurement], sqliteVersion: String
    ) {
        date = ISO8601DateFormatter().string(from: Date())
        machine =
            "\(ProcessInfo.processInfo.activeProcessorCount) cores, "
            + "\(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB"
        self.sqliteVersion = sqliteVersion
        rows = options.rows
        runs = options.runs
        warmupRuns = options.warmup
        pragmas = options.pragmaArguments
        workloads = measurements.map { measurement in
            let raw = measurements.first { $0.workload == measurement.workload && $0.implementation == .raw }
            let ratios = raw.map { pairedRatios(measurement.seconds, over: $0.seconds) } ?? []
            return Row(
                workload: measurement.workload, title: measurement.title, implementation: measurement.implementation,
                medianSeconds: measurement.median,
                ratioToRawC: ratios.isEmpty ? 1 : median(ratios),
                ratioOfMedians: measurement.median / (raw?.median ?? measurement.median),
                checksumsAgree: raw.map { $0.checksums == measurement.checksums } ?? false,
                seconds: measurement.seconds,
                runRatioRange: ratios.min().flatMap { low in ratios.max().map { low...$0 } })
        }
        self.concurrent = concurrent
        self.memory = memory
        peakResidentKiB = swiftdal_bench.peakResidentKiB()
    }

    func table() -> String {
        var lines = [
            "rows \(rows), median of \(runs) runs after \(warmupRuns) warm-up, SQLite \(sqliteVersion), \(machine)",
            "× raw C: the median of each run's time ÷ raw C's time in the same round",
            "pragmas on every connection, both sides: "
                + (pragmas.isEmpty ? "none beyond the benchmark's" : pragmas.joined(separator: ", ")),
            ""
        ]
        lines.append(
            pad("workload", 22) + pad("implementation", 20) + pad("median s", 11, right: true)
                + pad("× raw C", 9, right: true) + pad("runs: lowest–highest", 22, right: true)
                + pad("median ÷ median", 17, right: true) + "  checksum")
        for row in workloads {
            lines.append(
                pad("\(row.workload) \(row.title)", 22) + pad(row.implementation.rawValue, 20)
                    + pad(String(format: "%.4f", row.medianSeconds), 11, right: true)
                    + pad(String(format: "%.2f", row.ratioToRawC), 9, right: true)
                    + pad(
                        row.runRatioRange.map { String(format: "%.2f–%.2f", $0.lowerBound, $0.upperBound) } ?? "", 22,
                        right: true)
                    + pad(String(format: "%.2f", row.ratioOfMedians), 17, right: true)
                    + "  " + (row.checksumsAgree ? "ok" : "MISMATCH"))
        }
        if !concurrent.isEmpty {
            lines += [
                "",
                pad("W8 concurrent", 22) + pad("implementation", 20) + pad("readers", 8, right: true)
                    + pad("reads/s", 11, right: true) + pad("writes/s", 11, right: true) + pad("BUSY", 6, right: true)
                    + pad("errors", 8, right: true)
            ]
            for row in concurrent {
                lines.append(
                    pad("", 22) + pad(row.implementation.rawValue, 20) + pad("\(row.readers)", 8, right: true)
                        + pad(String(format: "%.0f", row.readsPerSecond), 11, right: true)
                        + pad(String(format: "%.0f", row.writesPerSecond), 11, right: true)
                        + pad("\(row.busyErrors)", 6, right: true) + pad("\(row.otherErrors)", 8, right: true))
            }
        }
        if !memory.isEmpty {
            lines += [
                "", "peak resident memory (child process per probe; above idle: less the idle process's peak)",
                "  " + pad("probe", 44) + pad("peak", 12, right: true) + pad("above idle", 14, right: true)
            ]
            for probe in memory {
                let what =
                    probe.probe == "stream"
                    ? "stream \(probe.rows) rows (BaseDAL.forEach)"
                    : probe.probe == "idle" ? "idle process" : "W2 fetch-all \(probe.implementation?.rawValue ?? "")"
                let above = aboveIdleKiB(probe).map { String(format: "%.1f MiB", Double($0) / 1024) } ?? "-"
                lines.append(
                    "  " + pad(what, 44)
                        + pad(String(format: "%.1f MiB", Double(probe.peakKiB) / 1024), 12, right: true)
                        + pad(above, 14, right: true))
            }
        }
        lines.append("")
        lines.append(
            "peak resident memory of the whole run: \(String(format: "%.1f", Double(peakResidentKiB) / 1024)) MiB")
        lines += targets()
        return lines.joined(separator: "\n")
    }

    /// A probe's peak less the idle process's (the same binary, doing nothing): what the
    /// work itself took. `nil` without an idle probe.
    func aboveIdleKiB(_ probe: MemoryMeasurement) -> Int? {
        guard probe.probe != "idle", let idle = memory.first(where: { $0.probe == "idle" }) else { return nil }
        return probe.peakKiB - idle.peakKiB
    }

    /// The targets of the benchmark issue, checked on this run's figures.
    func targets() -> [String] {
        var lines = ["", "targets (ratios to raw C in this run)"]
        for implementation in [Implementation.explicit, .codable] {
            let rows = workloads.filter { $0.implementation == implementation && $0.workload != "W8" }
            guard !rows.isEmpty else { continue }
            func label(_ row: Row) -> String { "\(row.workload) ×\(String(format: "%.2f", row.ratioToRawC))" }
            let over = rows.filter { $0.ratioToRawC > 1.5 }.map(label)
            let worst = rows.max { $0.ratioToRawC < $1.ratioToRawC }
            lines.append(
                "  " + pad("\(implementation.rawValue), W1–W7 ≤ ×1.5:", 44)
                    + (over.isEmpty
                        ? "met (highest \(worst.map(label) ?? "-"))" : "NOT met: " + over.joined(separator: ", ")))
            let runs = concurrent.filter { $0.implementation == implementation }.sorted { $0.readers < $1.readers }
            if let first = runs.first, let last = runs.last, runs.count > 1 {
                let busy = runs.reduce(0) { $0 + $1.busyErrors }
                let growth = last.readsPerSecond / first.readsPerSecond
                lines.append(
                    "  " + pad("\(implementation.rawValue), W8:", 44)
                        + "\(busy) SQLITE_BUSY; reads ×\(String(format: "%.2f", growth)) from \(first.readers) to "
                        + "\(last.readers) readers" + (busy == 0 && growth > 1 ? "" : " (NOT met)"))
            }
            let raw = memory.first { $0.probe == "W2" && $0.implementation == .raw }.flatMap(aboveIdleKiB)
            if let raw, raw > 0,
                let mine = memory.first(where: { $0.probe == "W2" && $0.implementation == implementation })
                    .flatMap(aboveIdleKiB)
            {
                let ratio = Double(mine) / Double(raw)
                lines.append(
                    "  " + pad("\(implementation.rawValue), fetch-all memory above idle ≤ ×2:", 44)
                        + "×\(String(format: "%.2f", ratio))" + (ratio <= 2 ? "" : " (NOT met)"))
            }
        }
        if let stream = memory.first(where: { $0.probe == "stream" }) {
            let megabytes = Double(stream.peakKiB) * 1024 / 1_000_000
            lines.append(
                "  " + pad("\(stream.rows) rows streamed < 50 MB:", 44)
                    + "\(String(format: "%.1f", megabytes)) MB" + (megabytes < 50 ? "" : " (NOT met)"))
        }
        return lines
    }

    func csv() -> String {
        var lines = [
            "workload,title,implementation,median_seconds,ratio_to_raw_c,checksums_agree,run_ratio_min,run_ratio_max,ratio_of_medians"
        ]
        for row in workloads {
            let range = row.runRatioRange.map { "\($0.lowerBound),\($0.upperBound)" } ?? ","
            lines.append(
                "\(row.workload),\(row.title),\(row.implementation.rawValue),\(row.medianSeconds),\(row.ratioToRawC),\(row.checksumsAgree),\(range),\(row.ratioOfMedians)"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A horizontal bar chart of the ratios to raw C, one group per workload.
    func svg() -> String {
        let swiftRows = workloads.filter { $0.implementation != .raw }
        let barHeight = 14.0
        let gap = 6.0
        let groupGap = 12.0
        let left = 150.0
        let width = 460.0
        let maxRatio = max(2.0, (swiftRows.map(\.ratioToRawC).max() ?? 1) * 1.1)
        let groups = Dictionary(grouping: swiftRows, by: \.workload)
        let order = workloads.map(\.workload).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let height = 60 + Double(order.count) * (2 * (barHeight + gap) + groupGap)
        func x(_ ratio: Double) -> Double { left + ratio / maxRatio * width }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(left + width + 80))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="20" font-size="14" font-weight="bold">SwiftDAL time ÷ raw SQLite C time (lower is better; \(rows) rows, median of \(runs) paired runs)</text>

            """
        var y = 40.0
        for workload in order {
            let rows = groups[workload] ?? []
            svg += "<text x=\"10\" y=\"\(y + barHeight + 4)\">\(workload) \(rows.first?.title ?? "")</text>\n"
            for row in rows.sorted(by: { $0.implementation.rawValue > $1.implementation.rawValue }) {
                let color = row.implementation == .explicit ? "#2b6cb0" : "#dd6b20"
                svg +=
                    "<rect x=\"\(left)\" y=\"\(y)\" width=\"\(x(row.ratioToRawC) - left)\" height=\"\(barHeight)\" fill=\"\(color)\"/>\n"
                svg +=
                    "<text x=\"\(x(row.ratioToRawC) + 4)\" y=\"\(y + barHeight - 3)\">×\(String(format: "%.2f", row.ratioToRawC))</text>\n"
                y += barHeight + gap
            }
            y += groupGap
        }
        for (ratio, label) in [(1.0, "raw C"), (1.5, "×1.5 target")] {
            svg +=
                "<line x1=\"\(x(ratio))\" y1=\"30\" x2=\"\(x(ratio))\" y2=\"\(y)\" stroke=\"#444\" stroke-dasharray=\"4 3\"/>\n"
            svg += "<text x=\"\(x(ratio) - 20)\" y=\"\(y + 14)\">\(label)</text>\n"
        }
        svg +=
            "<rect x=\"\(left + width - 150)\" y=\"32\" width=\"10\" height=\"10\" fill=\"#2b6cb0\"/><text x=\"\(left + width - 136)\" y=\"41\">explicit mapping</text>\n"
        svg +=
            "<rect x=\"\(left + width - 150)\" y=\"48\" width=\"10\" height=\"10\" fill=\"#dd6b20\"/><text x=\"\(left + width - 136)\" y=\"57\">Codable mapping</text>\n"
        return svg + "</svg>\n"
    }
}

/// `seconds[i] / baseline[i]` for the rounds both have.
func pairedRatios(_ seconds: [Double], over baseline: [Double]) -> [Double] {
    zip(seconds, baseline).compactMap { $1 > 0 ? $0 / $1 : nil }
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let count = text.count
    guard count < width else { return text + " " }
    let spaces = String(repeating: " ", count: width - count)
    return right ? spaces + text : text + spaces
}

/// Writes `table` to `path` (when given), headed by the date and the command of this run,
/// so that a committed report says where its figures come from without a hand edit.
func writeReport(_ table: String, to path: String?) throws {
    guard let path else { return }
    let header = "# Written by the run of \(runDate): \(runCommand)\n\n"
    try (header + table + (table.hasSuffix("\n") ? "" : "\n")).write(toFile: path, atomically: true, encoding: .utf8)
}

/// This run's command, as it would be typed.
let runCommand = (["swift run -c release swiftdal-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")

/// The date every file this run writes is stamped with (the first write's moment: one
/// date for the report and the README's tables).
let runDate = ISO8601DateFormatter().string(from: Date())

extension BenchReport {
    /// The ratios to raw C as a Markdown table (the README's generated block).
    func markdownTable() -> String {
        markdownRatioTable(
            header: "| workload | explicit mapping × raw C | Codable mapping × raw C |",
            workloads.map {
                ($0.workload, $0.title, $0.implementation.rawValue, String(format: "%.2f", $0.ratioToRawC))
            })
    }
}

extension PostgresReport {
    /// The ratios to raw libpq (median of the paired ratios / fastest ÷ fastest) as a
    /// Markdown table (the README's generated block).
    func markdownTable() -> String {
        markdownRatioTable(
            header: "| workload | explicit × raw libpq | Codable × raw libpq |",
            workloads.map {
                let ratio = String(format: "%.2f / %.2f", $0.ratioToRawLibpq, $0.ratioOfFastest)
                return ($0.workload, $0.title, $0.implementation.rawValue, ratio)
            })
    }
}

/// One row per workload, in the order they ran, with the explicit and the Codable
/// mapping's ratio (`rows`: each implementation's ratio of each workload, formatted; the
/// implementation by its report name, the same on both engines).
func markdownRatioTable(
    header: String, _ rows: [(workload: String, title: String, implementation: String, ratio: String)]
) -> String {
    var lines = [header, "|---|---|---|"]
    var seen = Set<String>()
    for row in rows where seen.insert(row.workload).inserted {
        func ratio(_ implementation: Implementation) -> String {
            rows.first { $0.workload == row.workload && $0.implementation == implementation.rawValue }?.ratio ?? "–"
        }
        lines.append("| \(row.workload) \(row.title) | \(ratio(.explicit)) | \(ratio(.codable)) |")
    }
    return lines.joined(separator: "\n")
}

/// Replaces the lines between `<!-- swiftdal-bench BLOCK: begin -->` and
/// `<!-- swiftdal-bench BLOCK: end -->` in the Markdown file at `path` (when given) with
/// `table`, headed by this run's date and command: the README's figures are the run's own.
func updateReadme(_ path: String?, block: String, with table: String) throws {
    guard let path else { return }
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let begin = "<!-- swiftdal-bench \(block): begin -->"
    let end = "<!-- swiftdal-bench \(block): end -->"
    guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex)
    else {
        throw BenchError("\(path) has no block \(begin) … \(end) to write the \(block) figures into")
    }
    let body = "\n_Written by the run of \(runDate): `\(runCommand)`._\n\n\(table)\n"
    try (text[..<start.upperBound] + body + text[stop.lowerBound...]).write(
        toFile: path, atomically: true, encoding: .utf8)
}
