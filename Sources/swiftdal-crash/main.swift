import Foundation
import SwiftDAL

// swiftdal-crash: crash consistency of SwiftDAL's writes under SIGKILL.
//   swiftdal-crash driver [--trials N] [--modes wal-normal,wal-full,delete-full] [--negative-control]
//   swiftdal-crash child --path P --mode M [--report-early]      (started by the driver)
// The driver prints one line per mode and exits non-zero when a check fails (or, with
// --negative-control, when the control that reports commits too early is not caught).
let usage = """
    usage: swiftdal-crash driver [--trials N] [--modes LIST] [--negative-control] [--work-dir DIR]
           swiftdal-crash child --path PATH --mode MODE [--report-early]
           swiftdal-crash readonly-probe --path PATH
             (run as a non-root user on a file it cannot write: opens it read-write through
             SwiftDAL, tries a write, and exits 0 only if a typed SQLITE_READONLY error came
             back and reads still work)
    """

func value(after flag: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    switch arguments.first {
    case "child":
        guard let path = value(after: "--path", in: arguments),
            let mode = value(after: "--mode", in: arguments).flatMap(CrashMode.init(rawValue:))
        else { throw DALError(.invalidValue, usage) }
        try runChild(path: path, mode: mode, reportEarly: arguments.contains("--report-early"))
    case "readonly-probe":
        guard let path = value(after: "--path", in: arguments) else { throw DALError(.invalidValue, usage) }
        try runReadOnlyProbe(path: path)
    case "driver":
        let trials = value(after: "--trials", in: arguments).flatMap(Int.init) ?? 60
        let modes = value(after: "--modes", in: arguments).map { list in
            list.split(separator: ",").compactMap { CrashMode(rawValue: String($0)) }
        } ?? CrashMode.allCases
        let negative = arguments.contains("--negative-control")
        let directory = value(after: "--work-dir", in: arguments)
            ?? NSTemporaryDirectory() + "swiftdal-crash-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var failed = false
        print("mode          trials  commits reported  trials failing checks  \(negative ? "(negative control: must fail)" : "")")
        for mode in modes {
            var failing = 0
            var commits: Int64 = 0
            var firstProblem: String?
            for trial in 0..<trials {
                let result = try runTrial(mode: mode, reportEarly: negative, directory: directory, trial: trial)
                commits += result.reportedCommits
                if !result.problems.isEmpty {
                    failing += 1
                    firstProblem = firstProblem ?? result.problems.joined(separator: "; ")
                }
            }
            print("\(mode.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))  \(String(trials).padding(toLength: 6, withPad: " ", startingAt: 0))  \(String(commits).padding(toLength: 16, withPad: " ", startingAt: 0))  \(failing)")
            if let firstProblem { print("  first problem: \(firstProblem)") }
            failed = failed || (negative ? failing == 0 : failing > 0)
        }
        print(failed ? "FAILED" : (negative ? "ok: the negative control was caught" : "ok: every reported commit survived, no partial transaction"))
        exit(failed ? 1 : 0)
    default:
        print(usage)
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("swiftdal-crash: \(error)\n".utf8))
    exit(1)
}
