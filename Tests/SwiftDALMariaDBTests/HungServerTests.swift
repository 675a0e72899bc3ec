import Foundation
import SwiftDAL
import SwiftDALMariaDB
import SwiftDALTestSupport
import Testing

/// A server that accepts connections and never answers (SIGSTOP): every wait has a deadline.
/// Each test starts a server of its own (the shared one must keep answering).
@Suite(.serialized) struct MariaDBHungServerTests {
    private func configuration() -> MariaDBConfiguration {
        var configuration = MariaDBConfiguration()
        configuration.callTimeout = .seconds(1)
        configuration.stopGracePeriod = .milliseconds(500)
        configuration.connectTimeout = .seconds(2)
        configuration.readTimeout = .seconds(20)
        configuration.maximumConnections = 2
        return configuration
    }

    @Test func aStatementSentToAHungServerEndsWithItsCall() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration())
        defer { try? pool.close() }
        try pool.checkConnection()
        server.pause()
        let start = ContinuousClock.now
        #expect(throws: (any Error).self) { try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } }
        let elapsed = ContinuousClock.now - start
        // The call's limit, then the grace period for KILL QUERY, then the socket is shut down.
        #expect(elapsed < .seconds(5), "ended after \(elapsed)")
        server.resume()
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } == 1)
    }

    @Test func connectingToAHungServerEndsAtTheConnectTimeout() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        var configuration = configuration()
        configuration.callTimeout = nil
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration)
        defer { try? pool.close() }
        server.pause()
        defer { server.resume() }
        let start = ContinuousClock.now
        let error = #expect(throws: MariaDBError.self) { try pool.checkConnection() }
        let elapsed = ContinuousClock.now - start
        #expect(error?.isConnectionFailure == true)
        #expect(elapsed < .seconds(8), "ended after \(elapsed)")
    }
}

extension MariaDBHungServerTests {
    /// A COMMIT sent to a server that stops answering: whether it committed is unknown,
    /// and the error says so (never a plain failure a caller would retry blindly).
    @Test func aCommitLostInFlightIsAnUnknownOutcome() throws {
        let server = try MariaDBServer.start()
        defer { server.stop() }
        let pool = try MariaDBPool(url: try server.makeDatabase(), configuration: configuration())
        defer { try? pool.close() }
        try pool.write { try $0.execute(sql: "CREATE TABLE t(id INT PRIMARY KEY)") }
        let error = #expect(throws: DALError.self) {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                server.pause()  // the COMMIT that follows gets no answer
            }
        }
        server.resume()
        #expect(error?.code == .outcomeUnknown, "\(String(describing: error))")
    }
}
