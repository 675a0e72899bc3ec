import Foundation
import SwiftDAL

// swiftdal-crash: crash consistency of SwiftDAL's writes under SIGKILL.
//   swiftdal-crash driver [--trials N] [--modes wal-normal,wal-full,delete-full] [--negative-control]
//   swiftdal-crash driver --pool [--trials N] [--negative-control]   (pool-wal-normal,pool-wal-full)
//   swiftdal-crash child --path P --mode M [--report-early]      (started by the driver)
// The driver prints one line per mode and exits non-zero when a check fails (or, with
// --negative-control, when the control that reports commits too early is not caught).
// The pool modes write through a DatabasePool while reader threads read through it.
let usage = """
    usage: swiftdal-crash driver [--trials N] [--modes LIST] [--pool] [--negative-control]
                                 [--work-dir DIR (kept)]
             (modes: \(CrashMode.allCases.map(\.rawValue).joined(separator: ", ")); by default the
             first three, through a DatabaseQueue; --pool runs the last two, through a DatabasePool
             with \(poolReaderThreads) reader threads busy)
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
        if mode.usesPool {
            try runPoolChild(path: path, mode: mode, reportEarly: arguments.contains("--report-early"))
        }
        try runChild(path: path, mode: mode, reportEarly: arguments.contains("--report-early"))
    case "readonly-probe":
        guard let path = value(after: "--path", in: arguments) else { throw DALError(.invalidValue, usage) }
        try runReadOnlyProbe(path: path)
    case "driver":
        let trials = value(after: "--trials", in: arguments).flatMap(Int.init) ?? 60
        let modes =
            try value(after: "--modes", in: arguments).map { list in
                try list.split(separator: ",").map { name in
                    guard let mode = CrashMode(rawValue: String(name)) else { throw DALError(.invalidValue, usage) }
                    return mode
                }
            } ?? (arguments.contains("--pool") ? CrashMode.poolModes : CrashMode.queueModes)
        let negative = arguments.contains("--negative-control")
        // A directory given with --work-dir keeps the trials' files; the default one is removed.
        let given = value(after: "--work-dir", in: arguments)
        let directory = given ?? NSTemporaryDirectory() + "swiftdal-crash-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Not a `defer`: `exit` below would skip it.
        let removeDirectory = { if given == nil { try? FileManager.default.removeItem(atPath: directory) } }
        let failed: Bool
        do {
            failed = try runDriver(modes: modes, trials: trials, negative: negative, directory: directory)
        } catch {
            removeDirectory()
            throw error
        }
        removeDirectory()
        exit(failed ? 1 : 0)
    default:
        print(usage)
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("swiftdal-crash: \(error)\n".utf8))
    exit(1)
}
