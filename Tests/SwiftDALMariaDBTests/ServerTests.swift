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
            guard Int32(entry) != nil, let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else {
                return false
            }
            return String(decoding: data, as: UTF8.self).contains(server.directory)
        }
        #expect(remaining.isEmpty, "processes \(remaining)")
    }
}
