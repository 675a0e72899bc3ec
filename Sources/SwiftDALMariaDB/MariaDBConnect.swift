internal import CSwiftDALMariaDB
import Dispatch
import Foundation
import SwiftDALConnection

/// Opening Connector/C connections (`MYSQL*`) with deadlines.
enum MariaDBConnect {
    /// `mysql_library_init`, once per process, before the first `mysql_init` (which is not
    /// thread-safe when it has to initialize the library itself).
    private static let libraryInitialized: Bool = mysql_server_init(0, nil, nil) == 0

    /// A connection to `endpoint`: connect, read and write timeouts set (nothing waits on
    /// the server without a deadline), UTF-8 (`utf8mb4`) on the wire, `CLIENT_FOUND_ROWS`
    /// (an `UPDATE` reports the rows it matched, as SQLite and PostgreSQL do) and, when
    /// `multiStatements`, scripts of several statements.
    static func open(_ endpoint: MariaDBEndpoint, multiStatements: Bool) throws -> UnsafeMutablePointer<MYSQL> {
        guard libraryInitialized, let mysql = mysql_init(nil) else {
            throw MariaDBError(code: 2001, sqlState: "HY000", message: "cannot initialize the MariaDB client library")
        }
        var connectTimeout = endpoint.connectTimeout
        var readTimeout = endpoint.readTimeout
        var writeTimeout = endpoint.writeTimeout
        mysql_options(mysql, MYSQL_OPT_CONNECT_TIMEOUT, &connectTimeout)
        mysql_options(mysql, MYSQL_OPT_READ_TIMEOUT, &readTimeout)
        mysql_options(mysql, MYSQL_OPT_WRITE_TIMEOUT, &writeTimeout)
        mysql_options(mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4")
        // Connector/C would otherwise read the machine's my.cnf only when asked: nothing to
        // do. A socket given is used; else a host's TCP port.
        var flags = swiftdal_mariadb_client_found_rows | swiftdal_mariadb_client_multi_results
        if multiStatements { flags |= swiftdal_mariadb_client_multi_statements }
        let connected = mysql_real_connect(
            mysql, endpoint.socket == nil ? endpoint.host : "localhost", endpoint.user, endpoint.password,
            endpoint.database, endpoint.port, endpoint.socket, flags)
        guard connected != nil else {
            let error = MariaDBError(
                code: Int(mysql_errno(mysql)), sqlState: String(cString: mysql_sqlstate(mysql)),
                message: "cannot connect to MariaDB (\(endpoint.name)): " + String(cString: mysql_error(mysql)))
            mysql_close(mysql)
            throw error
        }
        return mysql
    }
}

/// One `KILL QUERY` request for the statement a connection runs. It is sent by a
/// ``MariaDBKillSender`` thread over a short-lived second connection, never by the thread
/// that asks for it (connecting waits for the server: a server that does not answer would
/// hold the caller, and with it the path that fires every time limit of the process).
final class MariaDBKillRequest: @unchecked Sendable {
    private enum Phase {
        case waiting, sending, answered, withdrawn
    }

    private let endpoint: MariaDBEndpoint
    private let connectionID: UInt
    private let phase = Locked(Phase.waiting)
    private let answered = DispatchSemaphore(value: 0)

    init(endpoint: MariaDBEndpoint, connectionID: UInt) {
        self.endpoint = endpoint
        self.connectionID = connectionID
    }

    /// Connects, sends `KILL QUERY <id>`, disconnects (unless withdrawn first). Whether it
    /// was delivered does not matter here: the statement's own result (1317, query
    /// interrupted, or its rows) is what the call sees.
    func send() {
        let proceed = phase.withLock { phase -> Bool in
            guard phase == .waiting else { return false }
            phase = .sending
            return true
        }
        guard proceed else { return }
        if let mysql = try? MariaDBConnect.open(endpoint, multiStatements: false) {
            let statement = "KILL QUERY \(connectionID)"
            _ = mysql_real_query(mysql, statement, UInt(statement.utf8.count))
            mysql_close(mysql)
        }
        phase.withLock { $0 = .answered }
        answered.signal()
    }

    /// Makes sure the request can no longer reach the server: withdrawn when it was not
    /// sent yet, or answered within `limit`. Whether the connection may run statements
    /// again: `false` when the request is still on its way (and may stop a later statement).
    func settle(waitingAtMost limit: Duration) -> Bool {
        let current = phase.withLock { phase -> Phase in
            if phase == .waiting { phase = .withdrawn }
            return phase
        }
        switch current {
        case .waiting, .withdrawn, .answered: return true
        case .sending:
            let nanoseconds = Int(clamping: limit.clampedNanoseconds)
            return answered.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
        }
    }
}

/// The threads that send one pool's kill requests: at most two at once, so that a server
/// that does not answer holds two threads at most (each for its connect timeout), and the
/// requests behind them wait their turn (their calls abandon their connections when the
/// grace period passes first). A thread ends when no request is left.
final class MariaDBKillSender: @unchecked Sendable {
    private struct State {
        var queue: [MariaDBKillRequest] = []
        var threads = 0
    }

    private let state = Locked(State())
    static let maximumThreads = 2

    /// Sends `request` from a sender thread, starting one when fewer than two run; returns at once.
    func send(_ request: MariaDBKillRequest) {
        let startThread = state.withLock { state -> Bool in
            state.queue.append(request)
            guard state.threads < Self.maximumThreads else { return false }
            state.threads += 1
            return true
        }
        guard startThread else { return }
        Thread { [self] in
            setCurrentThreadName("dal-my-kill")
            while let next = state.withLock({ state -> MariaDBKillRequest? in
                guard !state.queue.isEmpty else {
                    state.threads -= 1
                    return nil
                }
                return state.queue.removeFirst()
            }) {
                next.send()
            }
        }.start()
    }
}
