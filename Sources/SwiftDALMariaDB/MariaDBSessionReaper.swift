internal import CSwiftDALMariaDB
import Foundation
import SwiftDALConnection

/// Ends on the server the sessions of connections a pool gave up on while a statement may
/// still run there: a stopped call whose `KILL QUERY` was not answered within the grace
/// period (the server hung, or could not be reached), so that its socket was shut down.
///
/// MariaDB has no check of the client while a statement runs: a session waiting on a row
/// lock keeps its transaction's earlier locks until that wait ends (up to
/// `innodb_lock_wait_timeout`, 50 s by default), and a long statement runs to its end,
/// before the server notices that the client went away. So the pool sends
/// `KILL CONNECTION <id>` for each such session from a thread of its own, over a
/// short-lived connection, and tries again (after 0.25 s, doubling up to 5 s) until the
/// server answers it (or the session is gone), for at most ``givingUpAfter``.
///
/// A session id names one session only within one run of one server, and only the session
/// itself is ever killed. Before each kill the reaper checks, on the server it reached:
/// - the same run of the same server (``Session/serverRun``: its host name, port, data
///   directory and start time, which the connection read as it opened; a server that does
///   not say is never sent a kill);
/// - the session still there, logged in as the reaper's user (the pool's), from where the
///   server saw it come from when it opened (its `PROCESSLIST.HOST`: over TCP an address
///   and port, the client's or a proxy's); a proxy that hands server sessions between
///   clients (whose session ids the client cannot know) gets no kill at all.
/// A session no longer there, or that the server says is not the reaper's to kill (1095),
/// is dropped; one of another run than the server reached is kept for a few more rounds
/// (a balancer may have sent the reaper elsewhere), and all are dropped when the server's
/// Unix socket file is gone (the server stopped).
///
/// For example, a pool shares one among its connections:
/// `let reaper = MariaDBSessionReaper(endpoint: endpoint)`, and a connection given up on
/// calls `reaper.end(session)`.
final class MariaDBSessionReaper: @unchecked Sendable {
    /// A session to end, as the reaper recognizes it on the server.
    struct Session: Sendable {
        /// `CONNECTION_ID()`.
        let id: UInt
        /// Which run of which server the session belongs to (``serverRun(of:)``).
        let serverRun: String
        /// Where the server sees the session come from (its `PROCESSLIST.HOST`: `localhost`
        /// over a Unix socket; over TCP, an address and port: the client's, or a proxy's or
        /// a port mapping's in between).
        let host: String
        var givenUpAt = ContinuousClock.now
        /// The rounds that reached another run of the server than the session's.
        var roundsElsewhere = 0

        /// Session `id` of server run `serverRun`, seen by the server as coming from `host`.
        init(id: UInt, serverRun: String, host: String) {
            self.id = id
            self.serverRun = serverRun
            self.host = host
        }

        /// The session of the connection `mysql`, whose id is `id`, as the server sees it;
        /// `nil` when the server does not say which run of it this is, or when its own id
        /// for the session is not `id` (a proxy that hands sessions between clients, whose
        /// ids mean nothing to a kill).
        init?(_ mysql: UnsafeMutablePointer<MYSQL>, id: UInt) {
            guard let row = MariaDBSessionReaper.firstRow(Self.ownSessionQuery, mysql), row.count == 3,
                let run = row[0], let seenID = row[1].flatMap({ UInt($0) }), seenID == id, let host = row[2]
            else { return nil }
            self.id = id
            serverRun = run
            self.host = host
        }

        /// The server's run (``serverRunQuery``), and the session's id and host as the
        /// server lists them: one round trip as the connection opens.
        static let ownSessionQuery =
            "SELECT (\(serverRunQuery)), CONNECTION_ID(), HOST FROM information_schema.PROCESSLIST "
            + "WHERE ID = CONNECTION_ID()"
    }

    private struct State {
        var sessions: [Session] = []
        var running = false
    }

    private let state = Locked(State())
    private let endpoint: MariaDBEndpoint

    /// How long the reaper keeps trying to end a session (the server unreachable all along).
    static let givingUpAfter: Duration = .seconds(300)
    /// The first wait between two rounds that left a session running; it doubles up to ``longestWait``.
    static let firstWait: Duration = .milliseconds(250)
    static let longestWait: Duration = .seconds(5)
    /// How many rounds may reach another run of the server than a session's before it is
    /// dropped (about 8 s of rounds).
    static let roundsElsewhereAtMost = 5

    /// A reaper that reaches the server at `endpoint`. Each try is bounded by its connect
    /// timeout, and by a read timeout of the same (at least 5 s, at most the endpoint's).
    init(endpoint: MariaDBEndpoint) {
        self.endpoint = Self.killing(endpoint)
    }

    /// `endpoint` for a connection that sends a kill: no database (a kill needs none, and
    /// the pool's may have been dropped), and read and write timeouts of the connect
    /// timeout (at least 5 s, at most the endpoint's): a kill is answered at once by a
    /// server that answers at all.
    static func killing(_ endpoint: MariaDBEndpoint) -> MariaDBEndpoint {
        var endpoint = endpoint
        endpoint.database = nil
        endpoint.readTimeout = min(endpoint.readTimeout, max(endpoint.connectTimeout, 5))
        endpoint.writeTimeout = min(endpoint.writeTimeout, max(endpoint.connectTimeout, 5))
        return endpoint
    }

    /// Ends `session` on the server, from the reaper's thread; returns at once (never
    /// blocks: it is called on the path that fires time limits).
    func end(_ session: Session) {
        var session = session
        session.givenUpAt = .now
        let start = state.withLock { state -> Bool in
            state.sessions.append(session)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        guard start else { return }
        Thread { [self] in
            setCurrentThreadName("dal-my-reaper")
            run()
        }.start()
    }

    /// Whether no session is left to end (the reaper's thread has ended or is ending).
    var isIdle: Bool { state.withLock { !$0.running } }

    /// Rounds of kills until no session is left.
    private func run() {
        var wait = Self.firstWait
        while true {
            let pending = state.withLock { state -> [Session]? in
                let now = ContinuousClock.now
                state.sessions.removeAll { now - $0.givenUpAt > Self.givingUpAfter }
                guard !state.sessions.isEmpty else {
                    state.running = false
                    return nil
                }
                defer { state.sessions = [] }
                return state.sessions
            }
            guard let pending else { return }
            let left = endSessions(pending)
            guard !left.isEmpty else {
                wait = Self.firstWait
                continue
            }
            state.withLock { $0.sessions.insert(contentsOf: left, at: 0) }
            Thread.sleep(forTimeInterval: Double(wait.clampedNanoseconds) / 1e9)
            wait = min(wait * 2, Self.longestWait)
        }
    }

    /// One round: the sessions of `sessions` still to end (the server could not be reached,
    /// or did not answer).
    private func endSessions(_ sessions: [Session]) -> [Session] {
        guard let mysql = try? MariaDBConnect.open(endpoint, multiStatements: false) else {
            // The server's socket file is gone: the server stopped, its sessions with it (one
            // started there later is another run). Anything else (a hung server, a full
            // backlog, a network) is tried again.
            if let socket = endpoint.socket, access(socket, F_OK) != 0 { return [] }
            return sessions
        }
        defer { mysql_close(mysql) }
        guard let run = Self.serverRun(of: mysql) else { return sessions }
        // A session of another run is never killed here; it is kept for a few more rounds
        // (a balancer may have sent this one to another server), then dropped (the server
        // restarted: the session ended with its run).
        var left = sessions.compactMap { session -> Session? in
            guard session.serverRun != run else { return nil }
            var session = session
            session.roundsElsewhere += 1
            return session.roundsElsewhere < Self.roundsElsewhereAtMost ? session : nil
        }
        for (index, session) in sessions.enumerated() where session.serverRun == run {
            switch Self.kill(session, mysql, onlyItsStatement: false) {
            case .ended: continue
            case .failed: left.append(session)
            case .connectionBroke: return left + sessions[index...].filter { $0.serverRun == run }
            }
        }
        return left
    }

    enum KillOutcome {
        /// Killed, gone already, or not the reaper's to kill: nothing more to do.
        case ended
        /// Refused for now (too many connections, …): tried again next round.
        case failed
        /// The reaper's connection broke: the rest wait for the next round.
        case connectionBroke
    }

    /// Checks that `session` is still there as the reaper's own (on the server `mysql` is
    /// connected to, whose run the caller checked), then kills it: `KILL QUERY` when
    /// `onlyItsStatement`, else `KILL CONNECTION`.
    static func kill(
        _ session: Session, _ mysql: UnsafeMutablePointer<MYSQL>, onlyItsStatement: Bool
    ) -> KillOutcome {
        let check =
            "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = \(session.id) "
            + "AND USER = SUBSTRING_INDEX(USER(), '@', 1)"
        guard let rows = query(check, mysql) else { return outcome(of: mysql_errno(mysql)) }
        guard let host = rows.first else { return .ended }  // gone, or another user's
        guard host == session.host else { return .ended }  // another client's, of the same id
        let statement = (onlyItsStatement ? "KILL QUERY " : "KILL CONNECTION ") + "\(session.id)"
        guard mysql_real_query(mysql, statement, UInt(statement.utf8.count)) != 0 else { return .ended }
        return outcome(of: mysql_errno(mysql))
    }

    /// What the server's error `code` means for a session the reaper tries to kill.
    private static func outcome(of code: UInt32) -> KillOutcome {
        switch code {
        case 1094, 1095, 1227: .ended  // unknown thread; not its owner; no right to
        case 2006, 2013: .connectionBroke
        default: .failed
        }
    }

    /// Which run of which server `mysql` is connected to: its host name, port, data
    /// directory (two servers of one host, socket-only, have the same name and port 0) and
    /// start time (`UNIX_TIMESTAMP() - Uptime`, both read by one statement, so exact
    /// whatever the clocks do), or `nil` when the server does not say.
    static func serverRun(of mysql: UnsafeMutablePointer<MYSQL>) -> String? {
        guard let rows = query(serverRunQuery, mysql), rows.count == 1, let run = rows[0] else { return nil }
        return run
    }

    /// The statement ``serverRun(of:)`` reads the server's run with.
    static let serverRunQuery =
        "SELECT CONCAT(@@hostname, ':', @@port, ':', @@datadir, ':', UNIX_TIMESTAMP() - CAST(VARIABLE_VALUE AS SIGNED)) "
        + "FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'"

    /// The columns of the first row `sql` returns (through the text protocol), or `nil`
    /// when it fails or returns no row.
    static func firstRow(_ sql: String, _ mysql: UnsafeMutablePointer<MYSQL>) -> [String?]? {
        guard mysql_real_query(mysql, sql, UInt(sql.utf8.count)) == 0, let result = mysql_store_result(mysql) else {
            return nil
        }
        defer { mysql_free_result(result) }
        let count = Int(mysql_num_fields(result))
        guard let row = mysql_fetch_row(result) else { return nil }
        return (0..<count).map { row[$0].map { String(cString: $0) } }
    }

    /// The first column of each row `sql` returns (through the text protocol), or `nil`
    /// when it fails.
    private static func query(_ sql: String, _ mysql: UnsafeMutablePointer<MYSQL>) -> [String?]? {
        guard mysql_real_query(mysql, sql, UInt(sql.utf8.count)) == 0, let result = mysql_store_result(mysql) else {
            return nil
        }
        defer { mysql_free_result(result) }
        guard mysql_num_fields(result) >= 1 else { return nil }
        var values = [String?]()
        while let row = mysql_fetch_row(result) {
            values.append(row[0].map { String(cString: $0) })
        }
        return values
    }
}
