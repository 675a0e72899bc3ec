import Foundation

/// The report of `--engine mariadb`: ratios to raw C (Connector/C) measured in the same rounds.
struct MariaDBReport: Codable {
    var date: String
    var machine: String
    var serverVersion: String
    var clientVersion: String
    /// Where the server came from.
    var server: String
    /// The server's settings that decide durability and memory.
    var serverSettings: [String]
    var protocolNote =
        "raw C: server-side prepared statements, binary protocol, values bound, prepared once per workload; "
        + "SwiftDAL: the same (its statement cache)"
    var scale: PostgresScale
    var runs: Int
    var warmupRuns: Int
    var workloads: [Row]
    var concurrent: [MariaDBConcurrentMeasurement]
    /// This process's peak (the server's is not counted).
    var peakResidentKiB: Int

    struct Row: Codable {
        let workload: String
        let title: String
        let implementation: MariaDBImplementation
        let medianSeconds: Double
        /// The median CPU time of this process during a run (the client's share).
        let medianCPUSeconds: Double
        /// The median over the rounds of each run's time ÷ raw C's time in the same round.
        let ratioToRawC: Double
        /// The median time ÷ raw C's median time.
        let ratioOfMedians: Double
        /// The fastest run ÷ raw C's fastest run.
        let ratioOfFastest: Double
        /// Whether every run read what raw C read (`nil`: raw C did not run).
        let checksumsAgree: Bool?
        let seconds: [Double]
        let runRatioRange: ClosedRange<Double>?
    }

    init(
        options: BenchOptions, scale: PostgresScale, measurements: [MariaDBMeasurement],
        concurrent: [MariaDBConcurrentMeasurement], serverVersion: String, clientVersion: String, server: String,
        serverSettings: [String]
    ) {
        date = ISO8601DateFormatter().string(from: Date())
        machine =
            "\(ProcessInfo.processInfo.activeProcessorCount) cores, "
            + "\(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB"
        self.serverVersion = serverVersion
        self.clientVersion = clientVersion
        self.server = server
        self.serverSettings = serverSettings
        self.scale = scale
        runs = options.runs
        warmupRuns = options.warmup
        workloads = measurements.map { measurement in
            let raw = measurements.first { $0.workload == measurement.workload && $0.implementation == .raw }
            let ratios = raw.map { pairedRatios(measurement.seconds, over: $0.seconds) } ?? []
            return Row(
                workload: measurement.workload, title: measurement.title, implementation: measurement.implementation,
                medianSeconds: measurement.median, medianCPUSeconds: median(measurement.cpuSeconds),
                ratioToRawC: ratios.isEmpty ? 1 : median(ratios),
                ratioOfMedians: measurement.median / (raw?.median ?? measurement.median),
                ratioOfFastest: (measurement.seconds.min() ?? 0)
                    / (raw?.seconds.min() ?? measurement.seconds.min() ?? 1),
                checksumsAgree: raw.map { $0.checksums == measurement.checksums }, seconds: measurement.seconds,
                runRatioRange: ratios.min().flatMap { low in ratios.max().map { low...$0 } })
        }
        self.concurrent = concurrent
        peakResidentKiB = swiftdal_bench.peakResidentKiB()
    }

    func table() -> String {
        var lines = [
            "MariaDB \(serverVersion), Connector/C \(clientVersion); server: \(server)",
            "server settings: " + serverSettings.joined(separator: ", "),
            "\(scale.mariadbSummary)",
            "median of \(runs) runs after \(warmupRuns) warm-up, each run on a freshly created and populated table; \(machine)",
            "× raw C: the median of each run's time ÷ raw C's time in the same round; \(protocolNote)",
            "fastest ÷ fastest: the fastest run ÷ raw C's fastest run",
            "client CPU: this process's CPU time during a run (median); the rest of the time is the server's work and the round trips",
            ""
        ]
        lines.append(
            pad("workload", 22) + pad("implementation", 21) + pad("median s", 11, right: true)
                + pad("× raw C", 10, right: true) + pad("runs: lowest–highest", 22, right: true)
                + pad("median ÷ median", 17, right: true) + pad("fastest ÷ fastest", 19, right: true)
                + pad("client CPU s", 14, right: true) + "  checksum")
        for row in workloads {
            lines.append(
                pad("\(row.workload) \(row.title)", 22) + pad(row.implementation.rawValue, 21)
                    + pad(String(format: "%.4f", row.medianSeconds), 11, right: true)
                    + pad(String(format: "%.2f", row.ratioToRawC), 10, right: true)
                    + pad(
                        row.runRatioRange.map { String(format: "%.2f–%.2f", $0.lowerBound, $0.upperBound) } ?? "", 22,
                        right: true)
                    + pad(String(format: "%.2f", row.ratioOfMedians), 17, right: true)
                    + pad(String(format: "%.2f", row.ratioOfFastest), 19, right: true)
                    + pad(String(format: "%.4f", row.medianCPUSeconds), 14, right: true)
                    + "  " + (row.checksumsAgree.map { $0 ? "ok" : "MISMATCH" } ?? "-"))
        }
        if !concurrent.isEmpty {
            lines += [
                "",
                pad("W8 concurrent", 22) + pad("implementation", 21) + pad("readers", 8, right: true)
                    + pad("reads/s", 11, right: true) + pad("writes/s", 11, right: true) + pad("errors", 8, right: true)
                    + pad("retryable", 11, right: true) + "  checksum"
            ]
            for row in concurrent {
                let raw = concurrent.first { $0.readers == row.readers && $0.implementation == .raw }
                lines.append(
                    pad("", 22) + pad(row.implementation.rawValue, 21) + pad("\(row.readers)", 8, right: true)
                        + pad(String(format: "%.0f", row.readsPerSecond), 11, right: true)
                        + pad(String(format: "%.0f", row.writesPerSecond), 11, right: true)
                        + pad("\(row.errors)", 8, right: true) + pad("\(row.retryableErrors)", 11, right: true)
                        + "  " + (raw.map { $0.checksums == row.checksums ? "ok" : "MISMATCH" } ?? "-"))
            }
        }
        lines.append("")
        lines.append(
            "peak resident memory of the whole run (this process, not the server): "
                + String(format: "%.1f", Double(peakResidentKiB) / 1024) + " MiB")
        lines += targets()
        return lines.joined(separator: "\n")
    }

    /// The goal (the explicit mapping within ×1.3 of raw C), checked on this run's figures.
    func targets() -> [String] {
        var lines = ["", "targets (ratios to raw C in this run: × raw C / fastest ÷ fastest)"]
        func label(_ row: Row) -> String {
            "\(row.workload) ×\(String(format: "%.2f", row.ratioToRawC))/\(String(format: "%.2f", row.ratioOfFastest))"
        }
        for implementation in [MariaDBImplementation.explicit, .codable] {
            // W1B (the bulk path, against raw C's bulk executions) is reported, not part of
            // the W1–W7 goal.
            let rows = workloads.filter { $0.implementation == implementation && $0.workload != "W1B" }
            guard !rows.isEmpty else { continue }
            let over = rows.filter { max($0.ratioToRawC, $0.ratioOfFastest) > 1.3 }.map(label)
            let worst = rows.max {
                max($0.ratioToRawC, $0.ratioOfFastest) < max($1.ratioToRawC, $1.ratioOfFastest)
            }
            lines.append(
                "  " + pad("\(implementation.rawValue), W1–W7 ≤ ×1.3:", 44)
                    + (over.isEmpty
                        ? "met (highest \(worst.map(label) ?? "-"))" : "NOT met: " + over.joined(separator: ", ")))
            let runs = concurrent.filter { $0.implementation == implementation }.sorted { $0.readers < $1.readers }
            let raws = concurrent.filter { $0.implementation == .raw }
            if let first = runs.first, let last = runs.last, runs.count > 1 {
                let errors = runs.reduce(0) { $0 + $1.errors }
                let growth = last.readsPerSecond / first.readsPerSecond
                let ratios = runs.compactMap { row in
                    raws.first { $0.readers == row.readers }.map {
                        String(format: "×%.2f", $0.readsPerSecond / row.readsPerSecond)
                    }
                }
                lines.append(
                    "  " + pad("\(implementation.rawValue), W8:", 44)
                        + "\(errors) errors; reads ×\(String(format: "%.2f", growth)) from \(first.readers) to "
                        + "\(last.readers) readers; raw C's reads/s ÷ these: " + ratios.joined(separator: ", ")
                        + (errors == 0 ? "" : " (NOT met)"))
            }
        }
        for row in workloads where row.workload == "W1B" && row.implementation != .raw {
            lines.append(
                "  " + pad("W1B bulk insert (\(row.implementation.rawValue)):", 44)
                    + "×\(String(format: "%.2f", row.ratioToRawC))/\(String(format: "%.2f", row.ratioOfFastest)) "
                    + "of raw C's bulk executions (bulkInsert: bulk executions of 1,000 rows)")
        }
        return lines
    }

    /// The ratios to raw C (median of the paired ratios / fastest ÷ fastest) as a Markdown
    /// table (the README's generated block `mariadb`).
    func markdownTable() -> String {
        markdownRatioTable(
            header: "| workload | explicit × raw C | Codable × raw C |",
            workloads.map {
                let ratio = String(format: "%.2f / %.2f", $0.ratioToRawC, $0.ratioOfFastest)
                return ($0.workload, $0.title, $0.implementation.rawValue, ratio)
            })
    }

    /// W1–W7 (W8 is in the JSON), titles quoted.
    func csv() -> String {
        var lines = [
            "workload,title,implementation,median_seconds,ratio_to_raw_c,checksums_agree,run_ratio_min,run_ratio_max,ratio_of_medians,ratio_of_fastest,median_client_cpu_seconds"
        ]
        for row in workloads {
            let range = row.runRatioRange.map { "\($0.lowerBound),\($0.upperBound)" } ?? ","
            lines.append(
                "\(row.workload),\"\(row.title)\",\(row.implementation.rawValue),\(row.medianSeconds),\(row.ratioToRawC),\(row.checksumsAgree.map(String.init) ?? ""),\(range),\(row.ratioOfMedians),\(row.ratioOfFastest),\(row.medianCPUSeconds)"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
