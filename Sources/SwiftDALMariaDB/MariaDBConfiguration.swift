import Foundation
public import SwiftDALConnection

/// How a ``MariaDBPool`` connects and lends its connections.
///
/// For example:
///
/// ```swift
/// var configuration = MariaDBConfiguration()
/// configuration.maximumConnections = 20
/// configuration.readTimeout = .seconds(120)
/// let pool = try MariaDBPool(url: "mysql://app:secret@db.internal/shop", configuration: configuration)
/// ```
public struct MariaDBConfiguration: Sendable {
    /// The most connections the pool opens (each on first need).
    public var maximumConnections = 10
    /// How long a `read`, `write` or DAL call waits for a free connection before it
    /// throws ``SwiftDAL/DALError/Code/connectionUnavailable``.
    public var acquireTimeout: Duration = .seconds(10)
    /// How long opening a connection may wait for the server (`MYSQL_OPT_CONNECT_TIMEOUT`,
    /// whole seconds, at least 1). A `connect_timeout` in the URL takes precedence.
    public var connectTimeout: Duration = .seconds(10)
    /// The backstop for a server that stops answering: a read from the server that waits
    /// longer fails, and the connection is closed (`MYSQL_OPT_READ_TIMEOUT`; Connector/C
    /// retries a read up to three times, so a statement may wait up to three times this).
    /// It bounds every statement's duration too: make it longer than the slowest query.
    public var readTimeout: Duration = .seconds(600)
    /// The same backstop for writes to the server (`MYSQL_OPT_WRITE_TIMEOUT`).
    public var writeTimeout: Duration = .seconds(60)
    /// How long a stopped call's statement (its time limit passed, its task cancelled) may
    /// take to end after `KILL QUERY`: past it, the connection is abandoned (its socket shut
    /// down; the pool opens another).
    public var stopGracePeriod: Duration = .milliseconds(1000)
    /// A time limit for every call on the pool, counted from the call's start (its wait
    /// for a connection, and the connect if one opens, included): a call still running when
    /// it passes is stopped (`KILL QUERY`) and throws ``SwiftDAL/DALError/Code/timeout``.
    /// `nil`: none.
    public var callTimeout: Duration?
    /// The isolation level of `write` transactions (`nil`: the server's default,
    /// repeatable read). `read` transactions are read-only, repeatable read.
    public var writeIsolation: IsolationLevel?
    /// Called after each statement runs, with its SQL (placeholders only) and duration.
    public var trace: (@Sendable (TraceEvent) -> Void)?
    /// Told of every statement (see ``SwiftDAL/DatabaseObserver``). `nil`: nothing is measured.
    public var observer: (any DatabaseObserver)?
    /// Statements that run longer are reported with ``SwiftDAL/StatementEvent/isSlow`` set.
    public var slowStatementThreshold: Duration?

    /// The defaults above.
    ///
    /// For example, `let pool = try MariaDBPool(url: url, configuration: MariaDBConfiguration())`.
    public init() {}
}

/// Where and how to connect, parsed from a `mysql://` URL: what a connection and its
/// cancel requests (another connection, for `KILL QUERY`) both need.
struct MariaDBEndpoint: Sendable {
    var host: String?
    var port: UInt32 = 0
    var socket: String?
    var user: String?
    var password: String?
    var database: String?
    var connectTimeout: UInt32
    var readTimeout: UInt32
    var writeTimeout: UInt32

    /// What the connection is called in errors: host (or socket) and database, never the
    /// user's password.
    var name: String {
        let place = socket == nil ? "\(host ?? "localhost")\(port == 0 ? "" : ":\(port)")" : "localhost"
        return "mysql://\(place)/\(database ?? "")" + (socket.map { " (socket \($0))" } ?? "")
    }

    /// Whole seconds, rounded up, from 1 to the most Connector/C counts in milliseconds
    /// without overflowing (`Int32.max` ms, about 24.8 days): a longer time limit, however
    /// large, is that one (it once trapped on `.seconds(Int64.max)`).
    static func seconds(_ duration: Duration) -> UInt32 {
        let milliseconds = Int(duration.clampedMilliseconds)
        let rounded: Int = milliseconds / 1000 + (milliseconds % 1000 > 0 ? 1 : 0)
        let most: Int = Int(Int32.max) / 1000
        return UInt32(min(max(1, rounded), most))
    }

    /// Parses `mysql://user:password@host:port/database?socket=/path&connect_timeout=5`
    /// (`mariadb://` too). Without a socket, a host other than `localhost` is reached
    /// over TCP (port 3306 by default).
    init(url: String, configuration: MariaDBConfiguration) throws {
        guard !url.utf8.contains(0) else { throw DALError(.invalidValue, "the URL contains a NUL character") }
        guard url.hasPrefix("mysql://") || url.hasPrefix("mariadb://"), let components = URLComponents(string: url)
        else {
            throw DALError(.invalidValue, "a MariaDB URL looks like mysql://user:password@host:port/database")
        }
        host = components.host.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding }
        port = components.port.map { UInt32(clamping: $0) } ?? 0
        user = components.percentEncodedUser?.removingPercentEncoding
        password = components.percentEncodedPassword?.removingPercentEncoding
        let path = components.path.drop(while: { $0 == "/" })
        database = path.isEmpty ? nil : String(path)
        connectTimeout = Self.seconds(configuration.connectTimeout)
        readTimeout = Self.seconds(configuration.readTimeout)
        writeTimeout = Self.seconds(configuration.writeTimeout)
        for item in components.queryItems ?? [] {
            guard let value = item.value else { continue }
            switch item.name {
            case "socket", "unix_socket": socket = value
            case "connect_timeout":
                guard let timeout = UInt32(value), timeout > 0 else {
                    throw DALError(.invalidValue, "connect_timeout must be a positive number of seconds")
                }
                connectTimeout = timeout
            default:
                throw DALError(.invalidValue, "unknown MariaDB URL parameter \(item.name)")
            }
        }
    }
}
