import Foundation
import SwiftDAL

struct TrialResult {
    var reportedCommits: Int64
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
    let reported = text.split(separator: "\n").compactMap { line -> Int64? in
        line.hasPrefix("committed ") ? Int64(line.dropFirst(10)) : nil
    }.max() ?? 0
    return TrialResult(reportedCommits: reported, problems: try verify(path: path, mode: mode, reported: reported))
}

/// Integrity, every reported commit present, no partial transaction, state consistent.
func verify(path: String, mode: CrashMode, reported: Int64) throws -> [String] {
    guard FileManager.default.fileExists(atPath: path) else {
        return reported == 0 ? [] : ["the database file is missing but \(reported) commits were reported"]
    }
    var problems = [String]()
    let queue = try DatabaseQueue(path: path, configuration: mode.configuration)
    defer { try? queue.close() }
    let integrity = try queue.read { try $0.fetchScalar(String.self, "PRAGMA integrity_check") }
    if integrity != "ok" { problems.append("integrity_check: \(integrity ?? "nil")") }
    guard try queue.read({ try $0.tableExists("crash_state") }) else {
        return problems + (reported == 0 ? [] : ["no tables but \(reported) commits were reported"])
    }
    let rows = CrashRowDAL(database: queue)
    let state = try CrashStateDAL(database: queue).findById(1)
    let lastTxn = state?.lastTxn ?? 0
    if lastTxn < reported {
        problems.append("commit \(reported) was reported but the database only has up to \(lastTxn)")
    }
    let perTxn = try queue.read { db in
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
