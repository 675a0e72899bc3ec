import Foundation
import SwiftDAL
import SwiftDALTestSupport
import Testing

@testable import SwiftDALConnection
@testable import SwiftDALMariaDB

/// The session reaper kills the session it was given and no other: a session of another
/// user, or of another run of the server, is left alone even when the reaper's user may
/// kill any session (`SUPER`). Seen from outside: the server's process list.
@Suite struct MariaDBReaperTests {
    @Test func theReaperKillsOnlyItsOwnSessionOfTheSameServerRun() throws {
        let server = try SharedMariaDB.shared()
        let (database, rootURL) = try SharedMariaDB.makeDatabase()
        let user = "reaper_\(database)"
        try server.sql(
            "CREATE USER \(user)@localhost IDENTIFIED BY 'secret'; GRANT ALL ON \(database).* TO \(user)@localhost; "
                + "GRANT SUPER, CONNECTION ADMIN, PROCESS ON *.* TO \(user)@localhost")
        defer { _ = try? server.sql("DROP USER \(user)@localhost") }
        let appURL = rootURL.replacingOccurrences(of: "mysql://root@", with: "mysql://\(user):secret@")
        var settings = MariaDBConfiguration()
        settings.maximumConnections = 1
        let rootPool = try MariaDBPool(url: rootURL, configuration: settings)
        defer { try? rootPool.close() }
        let appPool = try MariaDBPool(url: appURL, configuration: settings)
        defer { try? appPool.close() }
        // Each pool's one connection, idle between calls: its session stays on the server.
        let rootSession = try #require(try rootPool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") })
        let appSession = try #require(try appPool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") })
        let run = try #require(
            try appPool.read { try $0.fetchScalar(String.self, SQL(sql: MariaDBSessionReaper.serverRunQuery)) })
        let reaper = MariaDBSessionReaper(endpoint: try MariaDBEndpoint(url: appURL, configuration: settings))
        func ends(_ session: Int, ofRun run: String) throws -> Bool {
            reaper.end(MariaDBSessionReaper.Session(id: UInt(session), serverRun: run, clientPort: nil))
            // A bound for a hang, not a timing assertion: one round against a live server.
            #expect(waitFor(attempts: 600, pause: 50_000) { reaper.isIdle })
            let left = try server.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = \(session)")
            return left.hasPrefix("0")
        }
        #expect(try !ends(rootSession, ofRun: run), "another user's session was killed")
        #expect(try !ends(appSession, ofRun: "elsewhere:3306:1000000000"), "a session of another run was killed")
        #expect(try ends(appSession, ofRun: run), "its own session was left running")
        // The root pool's session went on; the app pool's was killed, and is replaced.
        #expect(try rootPool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") } == rootSession)
        #expect(try appPool.read { try $0.fetchScalar(Int.self, "SELECT 1") } == 1)
    }
}
