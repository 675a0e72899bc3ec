import Foundation
import SwiftDAL
import SwiftDALTestSupport
import Testing

@testable import SwiftDALConnection
@testable import SwiftDALMariaDB

/// The session reaper kills the session it was given and no other: a session of another
/// user, of another run of the server, or (over TCP) from another address is left alone even
/// when the reaper's user may see and kill any session (`PROCESS`, `CONNECTION ADMIN`).
/// Seen from outside: the server's process list.
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
        let rootPool = try MariaDBPool(url: rootURL, configuration: Self.oneConnection)
        defer { try? rootPool.close() }
        let appPool = try MariaDBPool(url: appURL, configuration: Self.oneConnection)
        defer { try? appPool.close() }
        // Each pool's one connection, idle between calls: its session stays on the server.
        let rootSession = try Self.sessionID(rootPool)
        let appSession = try Self.sessionID(appPool)
        let run = try #require(
            try appPool.read { try $0.fetchScalar(String.self, SQL(sql: MariaDBSessionReaper.serverRunQuery)) })
        let reaper = MariaDBSessionReaper(endpoint: try MariaDBEndpoint(url: appURL, configuration: Self.oneConnection))

        try Self.end(rootSession, ofRun: run, host: "localhost", by: reaper)
        #expect(try Self.sessionID(rootPool) == rootSession, "another user's session was killed")
        try Self.end(
            appSession, ofRun: "elsewhere:3306:/data/:1000000000", host: "localhost", by: reaper,
            expectingItToStay: true)
        #expect(try Self.sessionID(appPool) == appSession, "a session of another run was killed")
        try Self.end(appSession, ofRun: run, host: "localhost", by: reaper)
        #expect(try Self.isGone(appSession, on: server), "its own session was left running")
        // The root pool's session went on; the app pool's was killed, and is replaced.
        #expect(try Self.sessionID(rootPool) == rootSession)
        #expect(try Self.sessionID(appPool) != appSession)
    }

    /// Over TCP the session must also come from where the server saw it come from when it
    /// opened (its address and port): a session of the same id from elsewhere is left alone.
    @Test func overTCPTheReaperKillsOnlyASessionFromTheConnectionsOwnAddress() throws {
        let (server, port, database) = try startTCPServer(password: "secret")
        defer { server.stop() }
        let url = "mysql://app:secret@127.0.0.1:\(port)/\(database)"
        let pool = try MariaDBPool(url: url, configuration: Self.oneConnection)
        defer { try? pool.close() }
        let session = try Self.sessionID(pool)
        let host = try server.sql("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = \(session)")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let portText = host.split(separator: ":").last.map(String.init) ?? ""
        let clientPort = try #require(UInt16(portText), "host \(host)")
        let run = try #require(
            try pool.read { try $0.fetchScalar(String.self, SQL(sql: MariaDBSessionReaper.serverRunQuery)) })
        let reaper = MariaDBSessionReaper(endpoint: try MariaDBEndpoint(url: url, configuration: Self.oneConnection))

        let otherPort = clientPort == .max ? clientPort - 1 : clientPort + 1
        try Self.end(session, ofRun: run, host: "127.0.0.1:\(otherPort)", by: reaper, expectingItToStay: true)
        #expect(try Self.sessionID(pool) == session, "a session from another port was killed")
        try Self.end(session, ofRun: run, host: host, by: reaper)
        #expect(try Self.isGone(session, on: server), "the session from the connection's own address was left running")
    }

    static var oneConnection: MariaDBConfiguration {
        var settings = MariaDBConfiguration()
        settings.maximumConnections = 1
        return settings
    }

    /// The session of `pool`'s one connection.
    static func sessionID(_ pool: MariaDBPool) throws -> Int {
        try #require(try pool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") })
    }

    /// Hands session `id` to `reaper` and waits until the reaper is done with it (a bound
    /// for a hang, not a timing assertion: one round against a live server). When the
    /// session is expected to stay, a moment more lets a wrongly killed session leave.
    static func end(
        _ id: Int, ofRun run: String, host: String, by reaper: MariaDBSessionReaper, expectingItToStay: Bool = false
    ) throws {
        reaper.end(MariaDBSessionReaper.Session(id: UInt(id), serverRun: run, host: host))
        try #require(waitFor(attempts: 600, pause: 50_000) { reaper.isIdle })
        if expectingItToStay { usleep(200_000) }
    }

    /// Whether session `id` has left `server`'s process list (waiting up to 30 s: a killed
    /// session leaves it as its thread ends).
    static func isGone(_ id: Int, on server: MariaDBServer) throws -> Bool {
        try waitFor(attempts: 300, pause: 100_000) {
            try server.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = \(id)").hasPrefix("0")
        }
    }
}
