import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

@Suite struct MariaDBTCPTests {
    /// Over TCP with a password (percent-encoded in the URL): connects, runs, and a wrong
    /// password is a typed error that never shows the password.
    @Test func aPasswordOverTCP() throws {
        let (server, port, database) = try startTCPServer(password: "s3cr:t@/x")
        defer { server.stop() }
        let pool = try MariaDBPool(url: "mysql://app:s3cr%3At%40%2Fx@127.0.0.1:\(port)/\(database)")
        defer { try? pool.close() }
        #expect(try pool.read { try $0.fetchScalar(String.self, "SELECT CURRENT_USER()") } == "app@127.0.0.1")
        let wrong = try MariaDBPool(url: "mysql://app:wrong-hunter2@127.0.0.1:\(port)/\(database)")
        defer { try? wrong.close() }
        let error = #expect(throws: MariaDBError.self) { try wrong.checkConnection() }
        #expect(error?.code == 1045)
        #expect(error.map { "\($0)" }?.contains("hunter2") == false)
    }
}
