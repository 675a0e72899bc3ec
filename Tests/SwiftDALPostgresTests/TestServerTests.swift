import Foundation
import SwiftDALEngineTestSupport
import SwiftDALTestSupport
import Testing

/// Whether process `pid` runs (a zombie, which nothing may reap in a container, does not).
private func isAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    guard let close = stat.lastIndex(of: ")") else { return false }
    return stat[stat.index(after: close)...].dropFirst().first != "Z"
}

/// Nothing the tests start outlives them: the throwaway servers are watched from outside
/// the process that started them.
@Suite struct TestServerTests {
    /// A process that starts a server as the tests do and dies by SIGKILL (no `atexit`, no
    /// `deinit`: a crashed or killed test run) leaves no server process and no files: not
    /// the server's, nor those of its `TemporaryDirectory`s.
    @Test(.timeLimit(.minutes(2)), arguments: [Engine.postgres, .mariadb])
    func aServerDoesNotOutliveTheProcessThatStartedIt(_ engine: Engine) async throws {
        let probe = probePath
        let (_, output) = try await blocking { try runProgram(probe, ["orphan", "--engine", engine.rawValue]) }
        var values = [String: String]()
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        let pid = try #require(values["server_pid"].flatMap { Int32($0) }, "\(output)")
        let directory = try #require(values["directory"], "\(output)")
        #expect(pid > 1)
        #expect(directory.hasPrefix("/tmp/swiftdal-"))
        let temporary = try #require(values["temporary"], "\(output)")
        let processDirectory = (temporary as NSString).deletingLastPathComponent
        #expect(processDirectory.contains("swiftdal-tests-"))
        let gone = { (path: String) in !FileManager.default.fileExists(atPath: path) }
        try await eventually { !isAlive(pid) && gone(directory) && gone(processDirectory) }
        #expect(!isAlive(pid), "the server \(pid) outlived the process that started it")
        #expect(gone(directory))
        #expect(gone(temporary) && gone(processDirectory), "\(processDirectory) outlived its process")
    }
}
