internal import CSwiftDALPostgres
import Foundation
import SwiftDALConnection
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a libpq connection without waiting on a server past a deadline.
///
/// `PQconnectdb` waits for the server without a bound of its own but `connect_timeout`,
/// and nothing can interrupt it. Here the connection is driven by `PQconnectPoll` over the
/// socket, in slices of at most 50 ms, so that:
/// - each host gets at most the connect timeout (the URL's `connect_timeout`, else
///   ``PostgresConfiguration/connectTimeout``): a host that accepts the connection and
///   never answers (a hung server) has its socket shut down. The hosts of a multi-host
///   string are tried one by one, each as an attempt of its own (with the string's
///   `target_session_attrs`): libpq moves on from a refused host, but not from one whose
///   socket was shut down while it waited for an answer (the whole attempt failed, and a
///   promoted standby listed after a hung old primary was never tried);
/// - the call opening it stops with it: its cancellation or time limit ends the attempt.
///
/// The defaults SwiftDAL adds come before the user's string, which overrides them:
/// `fallback_application_name=SwiftDAL` (how sessions show in `pg_stat_activity`) and TCP
/// keepalives (30 s idle, then 5 probes 10 s apart) so that a peer that vanished from
/// the network is noticed on a TCP connection; Unix sockets ignore them.
package enum PostgresConnect {
    /// What lets a pool give up on the connections it is opening now (``abortAll()``): a
    /// cluster's replica that stopped answering, whose connects would each wait out the
    /// connect timeout (a read routed there before it left the rotation waited 10 s).
    final class Openings: Sendable {
        private let generation = Atomic<UInt64>(0)

        /// The generation an opening starts in.
        var current: UInt64 { generation.load(ordering: .acquiring) }

        /// Gives up on every opening begun before now.
        func abortAll() { generation.add(1, ordering: .releasing) }

        /// Whether an opening begun in `start` was given up on.
        func aborted(since start: UInt64) -> Bool { generation.load(ordering: .acquiring) != start }
    }

    static func open(
        _ connectionString: String, configuration: PostgresConfiguration, name: String, openings: Openings? = nil
    ) throws -> OpaquePointer {
        let gate = openings.map { ($0, $0.current) }
        try checkReadable(connectionString)
        let hostTimeout = connectTimeout(in: connectionString) ?? configuration.connectTimeout
        // What is left of the call's limit (a synchronous call's own, less its wait in
        // line; an `async` call's, or a limit set inside its work), for all the hosts
        // together.
        let callEnd: UInt64? = CallLimits.leftForOpening(callTimeout: configuration.callTimeout).map {
            DeadlineScheduler.now() &+ UInt64(CallControl.boundedNanoseconds($0))
        }
        guard let hosts = singleHostStrings(connectionString, keepingTargetSessionAttributes: true) else {
            return try attempt(
                connectionString, hostTimeout: hostTimeout, callEnd: callEnd, gate: gate, configuration: configuration,
                name: name)
        }
        var failures = [String]()
        var everyLoginRefused = true
        for host in hosts {
            do {
                return try attempt(
                    host, hostTimeout: hostTimeout, callEnd: callEnd, gate: gate, configuration: configuration,
                    name: name)
            } catch let error as PostgresError where error.sqlState == "08001" {
                // The call's own limit ends the whole attempt; a host's failure moves on.
                if let callEnd, DeadlineScheduler.now() >= callEnd { throw error }
                failures.append(error.message)
                everyLoginRefused = everyLoginRefused && error.isRefusedLogin
            }
        }
        var error = PostgresError(sqlState: "08001", message: failures.joined(separator: "\n"))
        error.isRefusedLogin = everyLoginRefused && !failures.isEmpty
        throw error
    }

    /// One libpq connection attempt at `connectionString` (one host, or libpq's own list).
    private static func attempt(
        _ connectionString: String, hostTimeout: Duration, callEnd: UInt64?, gate: (Openings, UInt64)?,
        configuration: PostgresConfiguration, name: String
    ) throws -> OpaquePointer {
        let keywords = [
            "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
            "dbname"
        ]
        let values = ["SwiftDAL", "1", "30", "10", "5", connectionString]
        let connection = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectStartParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw PostgresError(sqlState: "08001", message: "cannot connect to PostgreSQL (\(name)): out of memory")
        }
        do {
            try drive(connection, hostTimeout: hostTimeout, callEnd: callEnd, gate: gate)
            return connection
        } catch {
            PQfinish(connection)
            throw error
        }
    }

    /// Runs the connection's handshake to its end, or throws.
    private static func drive(
        _ connection: OpaquePointer, hostTimeout: Duration, callEnd: UInt64?, gate: (Openings, UInt64)?
    ) throws {
        let control = currentCallControl()
        let hostNanoseconds = UInt64(CallControl.boundedNanoseconds(hostTimeout))
        var socket: Int32 = -1
        var hostEnd: UInt64 = 0
        var status = PGRES_POLLING_WRITING
        while true {
            if PQstatus(connection) == CONNECTION_BAD || status == PGRES_POLLING_FAILED {
                throw failure(connection)
            }
            if status == PGRES_POLLING_OK { return }
            let current = PQsocket(connection)
            if current != socket {
                socket = current  // a new host (or a new attempt): its own timeout
                hostEnd = DeadlineScheduler.now() &+ hostNanoseconds
            }
            var ready = false
            while !ready {
                if let reason = control?.reason { throw reason.error }
                if let (openings, start) = gate, openings.aborted(since: start) {
                    throw PostgresError(
                        sqlState: "08001",
                        message: "the connection attempt was given up on: its server did not answer a health check")
                }
                let now = DeadlineScheduler.now()
                if let callEnd, now >= callEnd {
                    throw PostgresError(
                        sqlState: "08001", message: "the connection attempt ran past the call's time limit")
                }
                if now >= hostEnd {
                    // The host accepted the connection and never answered: give up on it
                    // (libpq reports it failed and tries the next host, if any).
                    if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
                    break
                }
                let slice = min(50_000_000, hostEnd - now, (callEnd ?? .max) - now)
                var descriptor = pollfd(
                    fd: socket, events: Int16(status == PGRES_POLLING_READING ? POLLIN : POLLOUT), revents: 0)
                let result = poll(&descriptor, 1, Int32(max(1, slice / 1_000_000)))
                ready = result != 0 || socket < 0
                if result < 0 && errno == EINTR { ready = false }
            }
            status = PQconnectPoll(connection)
        }
    }

    private static func failure(_ connection: OpaquePointer) -> PostgresError {
        let message = PQerrorMessage(connection).map { String(cString: $0) } ?? "unknown error"
        var error = PostgresError(
            sqlState: "08001", message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        error.isRefusedLogin = refusesTheLogin(message)
        return error
    }

    /// Whether libpq's message for a failed connection says that the server refused its
    /// credentials or its database (libpq gives no SQLSTATE for a connection that failed;
    /// read in the server's and libpq's English messages: under another `lc_messages` such
    /// a failure stays a plain connection failure).
    static func refusesTheLogin(_ message: String) -> Bool {
        [
            "password authentication failed", "no password supplied", "authentication failed for user",
            "no pg_hba.conf entry", "\" does not exist"
        ].contains { message.contains($0) }
    }

    /// Throws when libpq cannot read `connectionString`, with its message's quoted parts
    /// left out: they quote the string itself (`invalid percent-encoded token: "…"`, `missing
    /// "=" after "…"`), password included.
    private static func checkReadable(_ connectionString: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &message) else {
            let text = message.map { String(cString: $0) } ?? "out of memory"
            if let message { PQfreemem(message) }
            throw PostgresError(
                sqlState: "08001",
                message: "the connection string cannot be read: "
                    + PostgresError.redactingQuotedParts(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        defer { PQconninfoFree(options) }
        // A URL with two `@` before its query: the first one's password held an unescaped
        // `@`, and libpq read part of it as the host (`u:p@ssword/x@h/db` names host `ssword`
        // and database `x@h/db`, a host no check below can tell from a real one).
        if connectionString.hasPrefix("postgresql://") || connectionString.hasPrefix("postgres://"),
            connectionString.prefix(while: { $0 != "?" }).filter({ $0 == "@" }).count > 1
        {
            throw PostgresError(
                sqlState: "08001",
                message: "the connection URL holds more than one @ (not shown: it may hold a password's characters): "
                    + "write an @ in the user name or password as %40, a / as %2F and a : in the user name as %3A")
        }
        // libpq reads a URL whose password holds an unescaped `@` or `/` without complaint,
        // as a host or port made of the password's pieces (`postgresql://u:p@ss@h/db` names
        // host `ss@h`), and then quotes them in its error, and asks DNS for them. No host
        // holds an `@` but a socket's abstract name, which starts with one; a port is digits.
        for (name, value) in settings(of: options) where name == "host" || name == "port" {
            let parts = value.split(separator: ",", omittingEmptySubsequences: false)
            let wrong =
                name == "host"
                ? parts.contains { !$0.hasPrefix("/") && $0.dropFirst().contains("@") }
                : parts.contains { !$0.allSatisfy(\.isASCII) || !$0.allSatisfy(\.isNumber) }
            if wrong {
                throw PostgresError(
                    sqlState: "08001",
                    message: "the connection string's \(name) cannot be right (not shown: it may hold a "
                        + "password's characters): in a URL, write an @ in the user name or password as %40, "
                        + "a / as %2F and a : in the user name as %3A")
            }
        }
    }

    /// The settings libpq read into `options` that have a value, as (keyword, value).
    private static func settings(of options: UnsafeMutablePointer<PQconninfoOption>) -> [(String, String)] {
        var settings = [(String, String)]()
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { settings.append((String(cString: keyword), String(cString: value))) }
            option += 1
        }
        return settings
    }

    /// The `connect_timeout` a connection string names, if any.
    static func connectTimeout(in connectionString: String) -> Duration? {
        guard let options = PQconninfoParse(connectionString, nil) else { return nil }
        defer { PQconninfoFree(options) }
        guard let value = settings(of: options).first(where: { $0.0 == "connect_timeout" })?.1,
            let seconds = Int(value), seconds > 0
        else { return nil }
        return .seconds(max(2, seconds))  // libpq's own rule: less than 2 s is 2 s
    }

    /// Calls `body` with the strings as a NULL-terminated array of C strings.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R)
        -> R
    {
        let copies = strings.map { strdup($0) }
        let array = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: strings.count + 1)
        defer {
            array.deallocate()
            for copy in copies { free(copy) }
        }
        for (index, copy) in copies.enumerated() { array[index] = UnsafePointer(copy) }
        array[strings.count] = nil
        return body(UnsafePointer(array))
    }
}

extension PostgresConnect {
    /// One connection string per host of `connectionString` (a multi-host string names
    /// several: `host=a,b port=5432,5433`), each with every other setting of the original
    /// but `target_session_attrs` (unless `keepingTargetSessionAttributes`); `nil` when it
    /// names one host, or cannot be read.
    static func singleHostStrings(_ connectionString: String, keepingTargetSessionAttributes: Bool = false)
        -> [String]?
    {
        guard let options = PQconninfoParse(connectionString, nil) else { return nil }
        defer { PQconninfoFree(options) }
        let settings = settings(of: options)
        func list(_ name: String) -> [String] {
            settings.first { $0.0 == name }.map {
                $0.1.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
                ?? []
        }
        let hosts = list("host")
        let addresses = list("hostaddr")
        let ports = list("port")
        let count = max(hosts.count, addresses.count)
        guard count > 1 else { return nil }
        var perHost = ["host", "hostaddr", "port"]
        if !keepingTargetSessionAttributes { perHost.append("target_session_attrs") }
        let shared = settings.filter { !perHost.contains($0.0) }
        return (0..<count).map { index in
            var pairs = shared
            if index < hosts.count { pairs.append(("host", hosts[index])) }
            if index < addresses.count { pairs.append(("hostaddr", addresses[index])) }
            if !ports.isEmpty {
                pairs.append(("port", ports.count == 1 ? ports[0] : ports[min(index, ports.count - 1)]))
            }
            return pairs.map { "\($0.0)='\(quoted($0.1))'" }.joined(separator: " ")
        }
    }

    /// `value` for a single-quoted keyword value: backslashes and quotes escaped, scalar by
    /// scalar (`replacingOccurrences` compares Characters: a quote a combining mark follows
    /// stayed unescaped, and ended a password there).
    static func quoted(_ value: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if scalar == "\\" || scalar == "'" { escaped.append("\\") }
            escaped.append(scalar)
        }
        return String(escaped)
    }
}
