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
/// server answers it (or says the session is gone, 1094), for at most ``givingUpAfter``.
///
/// A session id is unique only within one run of the server: each connection reads the
/// server's `Uptime` as it opens, and before killing, the reaper reads it again. A session
/// of an earlier run of the server (their starts more than ``sameRunTolerance`` apart:
/// `Uptime` counts whole seconds) is dropped, never killed: its id may name another
/// client's session now. (A server restarted within about three seconds of its previous
/// start is the one case this cannot tell.)
///
/// For example, a pool shares one among its connections:
/// `let reaper = MariaDBSessionReaper(endpoint: endpoint)`, and a connection given up on
/// calls `reaper.end(sessionID: connectionID, serverStartedAt: serverStartedAt)`.
final class MariaDBSessionReaper: @unchecked Sendable {
    /// A session to end: its id, and when its run of the server started (by `Uptime`).
    private struct Session {
        let id: UInt
        let serverStartedAt: ContinuousClock.Instant
        let givenUpAt: ContinuousClock.Instant
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
    /// How far apart two readings of one run's start may be: each is off by up to a second
    /// (`Uptime` counts whole seconds), plus the time its answer took.
    static let sameRunTolerance: Duration = .seconds(2)

    /// A reaper that reaches the server at `endpoint` (its connect and read timeouts bound
    /// each try).
    init(endpoint: MariaDBEndpoint) {
        self.endpoint = endpoint
    }

    /// Ends session `sessionID` of the server's run that started at `serverStartedAt`, from
    /// the reaper's thread; returns at once (never blocks: it is called on the path that
    /// fires time limits).
    func end(sessionID: UInt, serverStartedAt: ContinuousClock.Instant) {
        let session = Session(id: sessionID, serverStartedAt: serverStartedAt, givenUpAt: .now)
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
        guard let mysql = try? MariaDBConnect.open(endpoint, multiStatements: false) else { return sessions }
        defer { mysql_close(mysql) }
        guard let uptime = Self.uptime(mysql) else { return sessions }
        let startedAt = ContinuousClock.now - uptime
        var left = [Session]()
        for (index, session) in sessions.enumerated() {
            // A session of an earlier run: it ended with that run, and its id is not its own now.
            let apart =
                startedAt > session.serverStartedAt
                ? startedAt - session.serverStartedAt : session.serverStartedAt - startedAt
            guard apart < Self.sameRunTolerance else { continue }
            let statement = "KILL CONNECTION \(session.id)"
            if mysql_real_query(mysql, statement, UInt(statement.utf8.count)) == 0 { continue }
            switch mysql_errno(mysql) {
            case 1094: continue  // unknown thread: the session has ended already
            case 2006, 2013: return left + sessions[index...]  // the connection broke: next round
            default: left.append(session)  // refused for now (1040, too many connections, …)
            }
        }
        return left
    }

    /// How long the server has been running (`Uptime`, whole seconds), or `nil` when it
    /// does not say.
    private static func uptime(_ mysql: UnsafeMutablePointer<MYSQL>) -> Duration? {
        let query = "SHOW GLOBAL STATUS LIKE 'Uptime'"
        guard mysql_real_query(mysql, query, UInt(query.utf8.count)) == 0, let result = mysql_store_result(mysql)
        else { return nil }
        defer { mysql_free_result(result) }
        guard mysql_num_fields(result) == 2, let row = mysql_fetch_row(result), let field = row[1],
            let seconds = Int64(String(cString: field))
        else { return nil }
        return .seconds(seconds)
    }
}
