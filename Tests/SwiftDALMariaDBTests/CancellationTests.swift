import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Synchronization
import Testing

@Suite struct MariaDBCancellationTests {
    /// The statements of other sessions that run `SLEEP` now, from the server's process list.
    private func sleepers(_ outside: OutsideView) throws -> Int {
        Int(
            try outside.sql(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE 'SELECT SLEEP%' AND ID <> CONNECTION_ID()"
            )) ?? -1
    }

    @Test func aCallTimeoutStopsASleepingStatementOnTheServer() throws {
        var configuration = MariaDBConfiguration()
        configuration.callTimeout = .milliseconds(500)
        configuration.maximumConnections = 1
        let (pool, outside) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        let start = ContinuousClock.now
        let error = #expect(throws: DALError.self) {
            try pool.read { db in _ = try db.fetchScalar(Int.self, "SELECT SLEEP(30)") }
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.code == .timeout)
        #expect(elapsed < .seconds(10), "stopped after \(elapsed)")
        #expect(try sleepers(outside) == 0)
        // The connection (the pool's only one) runs the next call.
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } == 1)
    }

    /// Behind a middleman (a proxy, a load balancer, Docker's port mapping) the server sees
    /// the session come from the middleman's side, not from the client's port: a stop's
    /// `KILL QUERY` still reaches the statement (it was once refused there, and the
    /// statement ran on after its connection was given up on). Here a TCP port forwarded
    /// to the server's socket.
    @Test func aStopThroughAProxyStillKillsTheStatement() throws {
        let server = try SharedMariaDB.shared()
        let (database, _) = try SharedMariaDB.makeDatabase()
        let forwarder = try SocketForwarder(to: server.socketPath)
        defer { forwarder.stop() }
        var configuration = MariaDBConfiguration()
        configuration.callTimeout = .seconds(1)
        configuration.stopGracePeriod = .seconds(3)
        configuration.maximumConnections = 1
        let pool = try MariaDBPool(
            url: "mysql://root@127.0.0.1:\(forwarder.port)/\(database)", configuration: configuration)
        defer { try? pool.close() }
        let session = try #require(try pool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") })
        let error = #expect(throws: DALError.self) {
            try pool.read { try $0.fetchScalar(Int.self, "SELECT SLEEP(30)") }
        }
        #expect(error?.code == .timeout)
        // Killed within the grace period: the connection is kept (its session serves the
        // next call), and the statement is gone from the server.
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT CONNECTION_ID()") } == session)
        let running = try server.sql(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = \(session) AND INFO LIKE 'SELECT SLEEP%'")
        #expect(running.hasPrefix("0"))
    }

    @Test func cancellingTheTaskStopsASleepingStatementOnTheServer() async throws {
        // Limits a loaded machine cannot reach: the call is to be stopped by its cancel.
        var configuration = MariaDBConfiguration()
        configuration.connectTimeout = .seconds(100)
        configuration.acquireTimeout = .seconds(100)
        let (pool, outside) = try makeMariaDBPool(configuration)
        defer { try? pool.close() }
        let ended = CallEnd()
        let task = Task {
            do {
                let value = try await pool.read { db in try db.fetchScalar(Int.self, "SELECT SLEEP(120)") }
                ended.note("returned \(String(describing: value))")
                return value
            } catch {
                ended.note("threw \(error)")
                throw error
            }
        }
        // Wait until the statement runs on the server, then cancel the task.
        var running = false
        // (By time: each look starts a client, seconds apart on a loaded machine; the
        // statement sleeps long enough to be seen however slow the looks are. A call that
        // ended before it was seen says how.)
        let looking = ContinuousClock.now
        while !running, ended.how == nil, ContinuousClock.now - looking < .seconds(120) {
            try await Task.sleep(for: .milliseconds(25))
            running = try await blocking { try self.sleepers(outside) } == 1
        }
        #expect(running, "the call \(ended.how ?? "did not run after \(ContinuousClock.now - looking)")")
        // Witnessed on the server, and timed on a thread of its own from the cancel: the
        // task's own end is read on Swift's cooperative threads, which other tests'
        // blocking work (sync calls to SIGSTOPped servers) may hold for seconds (24 s once,
        // in CI on a loaded machine). A statement left to run would stay up to 2 min more;
        // a loose bound catches that, not a slow machine (each look starts a client).
        let cancelled = ContinuousClock.now
        task.cancel()
        let gone = try await blocking { () -> Duration in
            while try self.sleepers(outside) > 0, ContinuousClock.now - cancelled < .seconds(60) { usleep(20_000) }
            return ContinuousClock.now - cancelled
        }
        #expect(gone < .seconds(15), "the statement ran \(gone) after the cancel")
        let result = await task.result
        #expect(throws: (any Error).self) { try result.get() }
        #expect(try await blocking { try self.sleepers(outside) } == 0)
    }
}

/// How an awaited call ended, noted by the task that ran it.
private final class CallEnd: Sendable {
    private let ending = Mutex<String?>(nil)
    var how: String? { ending.withLock { $0 } }
    func note(_ how: String) { ending.withLock { $0 = how } }
}
