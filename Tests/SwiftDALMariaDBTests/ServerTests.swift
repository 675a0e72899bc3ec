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
    }
}
