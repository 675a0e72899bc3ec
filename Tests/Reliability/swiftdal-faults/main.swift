import CSwiftDALFaults
import Foundation
import SwiftDAL

// swiftdal-faults: out-of-memory and I/O-error sweeps through SwiftDAL's public API.
//   swiftdal-faults oom|io [--negative-control] [--limit N]
// For each injection point N (1, 2, 3, …) a fresh database runs DAL transactions while
// the Nth allocation (or write/sync/truncate) and every later one fails. Then the fault
// is lifted and the run checks: the failure surfaced as a typed SwiftDAL error, the same
// connection keeps working, integrity holds, every acknowledged transaction is present
// and whole. The sweep ends at the first N the workload completes without reaching.
// The negative control acknowledges a transaction even when its write threw (a swallowed
// error): the checks must catch it.

struct FaultRow: Entity, Codable {
    static let tableName = "fault_rows"
    var id: Int64?
    var txn: Int64
    var k: Int64
    var payload: String
}

final class FaultRowDAL: BaseDAL<FaultRow>, @unchecked Sendable {}

let migrator: Migrator = {
    var migrator = Migrator()
    migrator.register("1") { db in
        try db.create(table: FaultRow.self)
        try db.execute(sql: "CREATE INDEX fault_rows_txn ON fault_rows(txn)")
    }
    return migrator
}()

enum Kind: String { case oom, io }

struct PointResult {
    var reached = false
    var errorCode: String?
    var untyped: String?
    var problems: [String] = []
}

let transactions: Int64 = 8
let rowsPerTransaction: Int64 = 3

func arm(_ kind: Kind, _ n: Int64) {
    kind == .oom ? swiftdal_faults_fail_allocations_after(n) : swiftdal_faults_fail_io_after(n)
}

func reached(_ kind: Kind) -> Bool {
    kind == .oom ? swiftdal_faults_allocations_refused() > 0 : swiftdal_faults_io_failed() > 0
}

func check(_ queue: DatabaseQueue, acknowledged: [Int64], label: String) throws -> [String] {
    var problems = [String]()
    let integrity = try queue.read { try $0.fetchScalar(String.self, "PRAGMA integrity_check") }
    if integrity != "ok" { problems.append("\(label): integrity_check \(integrity ?? "nil")") }
    let counts = try queue.read { db in
        try db.fetchAll("SELECT txn, COUNT(*) FROM fault_rows WHERE txn > 0 GROUP BY txn") { row in
            (try row.decode(Int64.self, at: 0), try row.decode(Int64.self, at: 1))
        }
    }
    let present = Dictionary(uniqueKeysWithValues: counts)
    for txn in acknowledged where present[txn] != rowsPerTransaction {
        problems.append(
            "\(label): acknowledged transaction \(txn) has \(present[txn] ?? 0) of \(rowsPerTransaction) rows")
    }
    for (txn, count) in present where count != rowsPerTransaction {
        problems.append("\(label): transaction \(txn) is partial (\(count) rows)")
    }
    return problems
}

func runPoint(_ kind: Kind, n: Int64, journal: Configuration.JournalMode, negative: Bool, directory: String) throws
    -> PointResult
{
    var result = PointResult()
    let path = "\(directory)/\(kind.rawValue)-\(journal.rawValue)-\(n).sqlite"
    defer {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    var configuration = Configuration()
    configuration.journalMode = journal
    configuration.synchronous = .full
    if kind == .io { configuration.vfsName = "swiftdal-faulty" }
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    try migrator.migrate(queue)
    let rows = FaultRowDAL(database: queue)
    var acknowledged = [Int64]()
    arm(kind, n)
    for txn in 1...transactions {
        do {
            try queue.write { _ in
                for k in 0..<rowsPerTransaction {
                    _ = try rows.insert2(
                        FaultRow(txn: txn, k: k, payload: String(repeating: "x", count: Int(100 + txn * 37 + k))))
                }
                if txn > 1 {
                    _ = try rows.updateFields(["payload": "updated by \(txn)"], key: (txn - 1) * rowsPerTransaction)
                }
            }
            acknowledged.append(txn)
        } catch let error as SQLiteError {
            result.errorCode = "SQLite \(error.code.rawValue)"
            if negative { acknowledged.append(txn) }
            break
        } catch let error as DALError {
            result.errorCode = "DALError.\(error.code)"
            if negative { acknowledged.append(txn) }
            break
        } catch {
            result.untyped = "\(type(of: error)): \(error)"
            break
        }
    }
    result.reached = reached(kind)
    arm(kind, 0)
    if result.reached && result.errorCode == nil && result.untyped == nil {
        // SQLite may absorb a fault (a failed cache allocation it can do without): fine,
        // as long as the checks below hold.
        result.errorCode = "absorbed"
    }
    if let untyped = result.untyped { result.problems.append("untyped error: \(untyped)") }
    // The process, and the same connection, keep working; that write is acknowledged too.
    var recovered = false
    do {
        try queue.write { _ in _ = try rows.insert2(FaultRow(txn: -1, k: 0, payload: "after the fault")) }
        recovered = true
    } catch {
        result.problems.append("the connection did not recover: \(error)")
    }
    result.problems += try check(queue, acknowledged: acknowledged, label: "same connection")
    try queue.close()
    let reopened = try DatabaseQueue(path: path, configuration: configuration)
    result.problems += try check(reopened, acknowledged: acknowledged, label: "reopened")
    if recovered, try FaultRowDAL(database: reopened).getRecordCount(condition: "txn = \(-1)") != 1 {
        result.problems.append("the write acknowledged after the fault is not in the file")
    }
    try reopened.close()
    return result
}

func sweep(_ kind: Kind, journal: Configuration.JournalMode, negative: Bool, limit: Int64, directory: String) throws
    -> Bool
{
    var points = 0
    var failures = 0
    var codes = [String: Int]()
    var firstProblem: String?
    var n: Int64 = 1
    while n <= limit {
        let result = try runPoint(kind, n: n, journal: journal, negative: negative, directory: directory)
        guard result.reached else { break }
        points += 1
        codes[result.errorCode ?? result.untyped ?? "none", default: 0] += 1
        if !result.problems.isEmpty {
            failures += 1
            firstProblem = firstProblem ?? "N=\(n): " + result.problems.joined(separator: "; ")
        }
        n += 1
    }
    let complete = n <= limit
    let summary = codes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    print(
        "\(kind.rawValue) \(journal.rawValue.lowercased().padding(toLength: 6, withPad: " ", startingAt: 0)) injection points \(points)\(complete ? "" : " (limit reached)"), failing checks \(failures); errors: \(summary)"
    )
    if let firstProblem { print("  first problem: \(firstProblem)") }
    return negative ? failures > 0 : (failures == 0 && complete)
}

/// Both journal modes' sweeps, in a directory of their own removed when they end, passed or
/// thrown. (A function of its own: `exit`, which ends this program, runs no `defer`, so the
/// directory's `defer` must end before it.)
func sweeps(_ kind: Kind, negative: Bool, limit: Int64) throws -> Bool {
    let directory = NSTemporaryDirectory() + "swiftdal-faults-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var ok = true
    for journal in [Configuration.JournalMode.wal, .delete] {
        ok = try sweep(kind, journal: journal, negative: negative, limit: limit, directory: directory) && ok
    }
    return ok
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let kind = arguments.first.flatMap(Kind.init(rawValue:)) else {
        print("usage: swiftdal-faults oom|io [--negative-control] [--limit N]")
        exit(2)
    }
    // Before any other SQLite call: the allocator can only be replaced before initialization.
    guard swiftdal_faults_install_allocator() == 0, swiftdal_faults_register_vfs() == 0 else {
        FileHandle.standardError.write(Data("cannot install the fault injectors\n".utf8))
        exit(1)
    }
    let negative = arguments.contains("--negative-control")
    let limit = arguments.firstIndex(of: "--limit").flatMap { Int64(arguments[$0 + 1]) } ?? 20_000
    let ok = try sweeps(kind, negative: negative, limit: limit)
    print(
        ok
            ? (negative
                ? "ok: the negative control was caught"
                : "ok: every injection point surfaced a typed error and lost nothing acknowledged")
            : "FAILED")
    exit(ok ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("swiftdal-faults: \(error)\n".utf8))
    exit(1)
}
