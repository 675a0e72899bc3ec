import Foundation
import SwiftDAL

struct TrialResult {
    var reportedCommits: Int64
    /// Reads the pool child's readers had completed by its last report (0 for a queue).
    var reads: Int64
    var problems: [String]
}

/// Starts the child, kills it with SIGKILL after a random delay, then checks the file.
func runTrial(mode: CrashMode, reportEarly: Bool, directory: String, trial: Int) throws -> TrialResult {
    let path = "\(directory)/crash-\(mode.rawValue)-\(trial).sqlite"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    process.arguments = ["child", "--path", path, "--mode", mode.rawValue] + (reportEarly ? ["--report-early"] : [])
    let pipe = Pipe()
    process.standardOutput = pipe
    let output = OutputCollector()
    try process.run()
    let reader = Thread { output.set(pipe.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    usleep(UInt32.random(in: 30_000...250_000))
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    let text = String(decoding: output.wait(), as: UTF8.self)
    let lines = text.split(separator: "\n")
    // "committed N" (queue) or "committed N reads R" (pool).
    let commits = lines.filter { $0.hasPrefix("committed ") }.map { $0.split(separator: " ") }
    let reported = commits.compactMap { $0.count > 1 ? Int64($0[1]) : nil }.max() ?? 0
    let reads = commits.compactMap { $0.count > 3 ? Int64($0[3]) : nil }.max() ?? 0
    // What the pool child's readers saw go wrong while it ran.
    let seen = lines.filter { $0.hasPrefix("problem ") }.map { String($0.dropFirst(8)) }
    let problems = try verify(path: path, mode: mode, reported: reported)
    return TrialResult(reportedCommits: reported, reads: reads, problems: seen + problems)
}

/// Integrity, every reported commit present, no partial transaction, state consistent.
func verify(path: String, mode: CrashMode, reported: Int64) throws -> [String] {
    guard FileManager.default.fileExists(atPath: path) else {
        return reported == 0 ? [] : ["the database file is missing but \(reported) commits were reported"]
    }
    var problems = [String]()
    // Reopened the way the child wrote: a pool after a pool (its writer recovers the WAL).
    let database: any DatabaseWriter =
        mode.usesPool
        ? try DatabasePool(path: path, configuration: mode.configuration)
        : try DatabaseQueue(path: path, configuration: mode.configuration)
    defer { try? database.close() }
    let integrity = try database.read { try $0.fetchScalar(String.self, "PRAGMA integrity_check") }
    if integrity != "ok" { problems.append("integrity_check: \(integrity ?? "nil")") }
    guard try database.read({ try $0.tableExists("crash_state") }) else {
        return problems + (reported == 0 ? [] : ["no tables but \(reported) commits were reported"])
    }
    let rows = CrashRowDAL(database: database)
    let state = try CrashStateDAL(database: database).findById(1)
    let lastTxn = state?.lastTxn ?? 0
    if lastTxn < reported {
        problems.append("commit \(reported) was reported but the database only has up to \(lastTxn)")
    }
    let perTxn = try database.read { db in
        try db.fetchAll("SELECT txn, COUNT(*), SUM(length(payload)) FROM crash_rows GROUP BY txn ORDER BY txn") { row in
            (try row.decode(Int64.self, at: 0), try row.decode(Int64.self, at: 1))
        }
    }
    for (txn, count) in perTxn where count != rowsPerTransaction {
        problems.append("transaction \(txn) is partial: \(count) of \(rowsPerTransaction) rows")
    }
    let maxTxn = perTxn.map(\.0).max() ?? 0
    if maxTxn != lastTxn { problems.append("rows go up to transaction \(maxTxn) but the state says \(lastTxn)") }
    if Set(perTxn.map(\.0)) != (lastTxn > 0 ? Set(1...lastTxn) : []) {
        problems.append("transactions 1...\(lastTxn) are not all present")
    }
    if try rows.getRecordCount() != Int(lastTxn * rowsPerTransaction) {
        problems.append("row count does not match \(lastTxn) transactions")
    }
    return problems
}

/// Runs `trials` trials of each mode and prints a line per mode; `true` when the run failed
/// (a check failed, or with `negative`, the control was not caught in any trial).
func runDriver(modes: [CrashMode], trials: Int, negative: Bool, directory: String) throws -> Bool {
    func column(_ value: Any, _ width: Int) -> String {
        "\(value)".padding(toLength: width, withPad: " ", startingAt: 0)
    }
    var failed = false
    let pool = modes.contains(where: \.usesPool)
    print(
        column("mode", 16) + column("trials", 8) + column("commits reported", 18) + column("trials failing checks", 23)
            + (pool ? column("reads before the kill", 23) : "") + (negative ? "(negative control: must fail)" : ""))
    for mode in modes {
        var failing = 0
        var commits: Int64 = 0
        var reads: Int64 = 0
        var firstProblem: String?
        for trial in 0..<trials {
            let result = try runTrial(mode: mode, reportEarly: negative, directory: directory, trial: trial)
            commits += result.reportedCommits
            reads += result.reads
            if !result.problems.isEmpty {
                failing += 1
                firstProblem = firstProblem ?? result.problems.joined(separator: "; ")
            }
        }
        print(
            column(mode.rawValue, 16) + column(trials, 8) + column(commits, 18) + column(failing, 23)
                + (pool ? column(mode.usesPool ? "\(reads)" : "-", 23) : ""))
        if let firstProblem { print("  first problem: \(firstProblem)") }
        failed = failed || (negative ? failing == 0 : failing > 0)
    }
    let verdict =
        negative ? "ok: the negative control was caught" : "ok: every reported commit survived, no partial transaction"
    print(failed ? "FAILED" : verdict)
    return failed
}

final class OutputCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}
