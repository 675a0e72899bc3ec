import Foundation
import SwiftDALTestSupport
import Testing

@Suite struct MariaDBServerTests {
    @Test func aThrowawayServerStartsAnswersAndStops() throws {
        let server = try MariaDBServer.start()
        let pid = try #require(server.serverProcessID)
        #expect(try server.sql("SELECT 1 + 1").trimmingCharacters(in: .whitespacesAndNewlines) == "2")
        let name = try server.makeDatabaseName()
        #expect(
            try server.sql(
                "SELECT DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '\(name)'"
            )
            .trimmingCharacters(in: .whitespacesAndNewlines) == "utf8mb4_nopad_bin")
        server.stop()
        #expect(kill(pid, 0) != 0)
        #expect(!FileManager.default.fileExists(atPath: server.directory))
        // Nothing started for it remains (the server, its watcher, the watcher's sleep).
        let remaining = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard Int32(entry) != nil else { return false }
            return commandLine(ofProcess: entry).contains(server.directory)
        }
        #expect(remaining.isEmpty, "processes \(remaining)")
    }

    /// `/proc/<pid>/cmdline`, read with `read(2)`: Foundation's file reading leaks its
    /// buffer on a `/proc` file, which reports a size of 0 (LeakSanitizer, CI).
    private func commandLine(ofProcess pid: String) -> String {
        let descriptor = open("/proc/\(pid)/cmdline", O_RDONLY)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
