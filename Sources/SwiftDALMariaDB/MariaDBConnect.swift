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
    /// `multiStatements`, scripts of several statements. `connectTimeout` (whole seconds)
    /// replaces the endpoint's when it is shorter (a call's time limit).
    static func open(
        _ endpoint: MariaDBEndpoint, multiStatements: Bool, connectTimeout shorter: UInt32? = nil
    ) throws -> UnsafeMutablePointer<MYSQL> {
        guard libraryInitialized, let mysql = mysql_init(nil) else {
            throw MariaDBError(code: 2001, sqlState: "HY000", message: "cannot initialize the MariaDB client library")
        }
        var connectTimeout = min(endpoint.connectTimeout, shorter ?? .max)
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

extension MariaDBConnect {
    /// Delivers `KILL QUERY` for `session` over a short-lived second connection to
    /// `endpoint` (on a ``StopRequestSender`` thread), once the server reached is the
    /// session's (the same run of the same server: a session id names one session only
    /// within one run, and an address may lead to another server after a failover) and
    /// the session is still there as the pool user's own (``MariaDBSessionReaper/kill(_:_:onlyItsStatement:)``).
    /// Whether it was delivered does not matter here: the statement's own result (1317,
    /// query interrupted, or its rows) is what the call sees, and a stop not answered
    /// within the grace period gives the connection up.
    static func killQuery(of session: MariaDBSessionReaper.Session, at endpoint: MariaDBEndpoint) {
        guard let mysql = try? open(MariaDBSessionReaper.killing(endpoint), multiStatements: false) else { return }
        defer { mysql_close(mysql) }
        guard MariaDBSessionReaper.serverRun(of: mysql) == session.serverRun else { return }
        _ = MariaDBSessionReaper.kill(session, mysql, onlyItsStatement: true)
    }
}
