import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real MariaDB server started for tests: `mariadb-install-db` into a fresh temporary
/// directory, then `mariadbd` on a private Unix socket (no TCP port), with `root` reachable
/// over that socket without a password; stopped and removed by ``stop()`` or when
/// released. As root, the server runs as the `mysql` user (`setpriv`), which owns the
/// directory. It starts with `--no-defaults`: nothing of the machine's `my.cnf` applies,
/// and its character set and time zone are the server's built-in defaults (SwiftDAL's
/// connections set theirs per session; ``makeDatabaseName()`` creates `utf8mb4_nopad_bin`
/// databases).
///
/// Nothing it starts outlives the test process: ``stop()`` (or `deinit`) ends the server,
/// and a watcher process started beside it ends the server and removes the directory
/// when the test process is gone without stopping it (a crash, a `SIGKILL`).
///
/// For example:
///
/// ```swift
/// let server = try MariaDBServer.start()
/// defer { server.stop() }
/// let pool = try MariaDBPool(url: try server.makeDatabase())
/// ```
public final class MariaDBServer: @unchecked Sendable {
    /// The directory holding the data directory, the socket and the log.
    public let directory: String
    private let runAsMySQL: Bool
    private let lock = NSLock()
    private var serverPID: pid_t?
    private var watcher: OrphanWatcher?
    private var databases = 0

    /// Why the server could not start (with the end of its error log).
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    /// The server's Unix socket.
    public var socketPath: String { directory + "/run/m.sock" }
    /// The data directory.
    public var dataDirectory: String { directory + "/data" }

    private init(directory: String, runAsMySQL: Bool) {
        self.directory = directory
        self.runAsMySQL = runAsMySQL
    }

    /// Whether MariaDB's server programs are installed (`mariadbd`, `mariadb-install-db`).
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: server) && FileManager.default.isExecutableFile(atPath: installDB)
    }

    private static let server = "/usr/sbin/mariadbd"
    private static let installDB = "/usr/bin/mariadb-install-db"
    private static let client = "/usr/bin/mariadb"

    /// Creates a data directory and starts a server on it; waits (at most 60 s) until it
    /// accepts connections. `options` are extra `mariadbd` options (`--max-connections=50`).
    ///
    /// For example, `let server = try MariaDBServer.start(options: ["--max-connections=50"])`.
    public static func start(options: [String] = []) throws -> MariaDBServer {
        guard isAvailable else {
            throw StartFailure(description: "MariaDB's server was not found (Debian: apt-get install mariadb-server)")
        }
        // Short: a Unix socket path must fit in 107 bytes.
        let directory = "/tmp/swiftdal-my-" + UUID().uuidString.prefix(8).lowercased()
        // A temporary directory of its own: servers installed at once in the shared /tmp
        // collided on their temporary tables' names ("Unknown table 'mysql.tmp_proxies_priv'").
        let paths = [directory, directory + "/run", directory + "/tmp"]
        for path in paths {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let runAsMySQL = geteuid() == 0
        if runAsMySQL {
            for path in paths {
                try FileManager.default.setAttributes(
                    [.ownerAccountName: "mysql", .groupOwnerAccountName: "mysql"], ofItemAtPath: path)
            }
        }
        let server = MariaDBServer(directory: directory, runAsMySQL: runAsMySQL)
        do {
            try server.install()
            try server.startServer(options: options)
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    /// The command that runs `arguments` as the `mysql` user when this process is root.
    private func command(_ arguments: [String]) -> [String] {
        runAsMySQL
            ? ["/usr/bin/setpriv", "--reuid=mysql", "--regid=mysql", "--clear-groups"] + arguments
            : arguments
    }

    private func install() throws {
        let install = command([
            Self.installDB, "--no-defaults", "--datadir=\(dataDirectory)", "--tmpdir=\(directory)/tmp",
            "--auth-root-authentication-method=normal",
            "--skip-test-db", "--skip-name-resolve"
        ])
        let (status, output) = try runProgram(install[0], Array(install.dropFirst()))
        guard status == 0 else {
            throw StartFailure(description: "mariadb-install-db failed (\(status)): \(output.suffix(2000))")
        }
    }

    private func startServer(options: [String]) throws {
        let arguments =
            [
                Self.server, "--no-defaults", "--datadir=\(dataDirectory)", "--tmpdir=\(directory)/tmp",
                "--socket=\(socketPath)",
                "--skip-networking", "--pid-file=\(directory)/run/m.pid", "--log-error=\(directory)/err.log",
                "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=16M", "--innodb-flush-log-at-trx-commit=0",
                "--skip-log-bin", "--max-connections=200"
            ] + options
        let pid = try spawnInBackground(command(arguments), outputPath: directory + "/mariadbd.out")
        lock.withLock { serverPID = pid }
        startWatcher(serverPID: pid)
        let started = waitFor(attempts: 600, pause: 100_000) {
            guard isRunning(pid) else { return true }
            return (try? sql("SELECT 1")) != nil
        }
        guard started, isRunning(pid) else {
            throw StartFailure(
                description: "mariadbd did not start: \(readWholeFile(directory + "/err.log").suffix(2000))")
        }
    }

    /// A process that ends the server and removes the directory once this process is gone;
    /// ``stop()`` ends it first.
    private func startWatcher(serverPID: pid_t) {
        let watcher = OrphanWatcher(cleanup: OrphanWatcher.stopping(String(serverPID)), directory: directory)
        lock.withLock { self.watcher = watcher }
    }

    /// Whether the child `pid` still runs (reaps it when it has exited).
    private func isRunning(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// The server's process id while it runs.
    public var serverProcessID: Int32? { lock.withLock { serverPID } }

    /// Stops the server with SIGSTOP: it keeps accepting connections (the kernel queues
    /// them) and never answers, as a hung server does. ``resume()`` (or ``stop()``) lets it
    /// go on.
    ///
    /// For example, `server.pause(); defer { server.resume() }`.
    /// Returns once every thread of the server has stopped (`kill` returns before that:
    /// a thread on another core can still answer a statement sent just after it).
    public func pause() {
        guard let pid = serverProcessID else { return }
        kill(pid, SIGSTOP)
        _ = waitFor(attempts: 200, pause: 5_000) {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return !tasks.isEmpty
                && tasks.allSatisfy { task in
                    // /proc/<pid>/task/<tid>/stat: "tid (name) state …"; T is stopped.
                    let stat = readWholeFile("/proc/\(pid)/task/\(task)/stat")
                    guard let close = stat.lastIndex(of: ")") else { return false }
                    return stat[stat.index(after: close)...].dropFirst().first == "T"
                }
        }
    }

    /// Lets a server stopped by ``pause()`` go on.
    ///
    /// For example, `server.resume()`.
    public func resume() {
        if let pid = serverProcessID { kill(pid, SIGCONT) }
    }

    /// A `mysql://` URL for `database` as `root` over the server's socket.
    ///
    /// For example, `MariaDBPool(url: server.url(database: "shop"))`.
    public func url(database: String = "mysql") -> String {
        "mysql://root@localhost/\(database)?socket=\(socketPath)"
    }

    /// Creates a new, empty database (`utf8mb4`, binary collation) and returns its URL
    /// (one per test keeps tests apart on one server).
    ///
    /// For example, `let url = try server.makeDatabase()`.
    public func makeDatabase() throws -> String {
        url(database: try makeDatabaseName())
    }

    /// Creates a new, empty database (`utf8mb4`, binary collation) and returns its name.
    ///
    /// For example, `let name = try server.makeDatabaseName()`.
    public func makeDatabaseName() throws -> String {
        let name: String = lock.withLock {
            databases += 1
            return "test_\(databases)"
        }
        try sql("CREATE DATABASE \(name) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin")
        return name
    }

    /// Runs `sql` with the `mariadb` client as `root` (outside SwiftDAL), returning what it
    /// prints: rows one per line, values separated by tabs, no column names.
    ///
    /// For example, `try server.sql("SELECT COUNT(*) FROM users", database: "test_1")`.
    @discardableResult
    public func sql(_ sql: String, database: String? = nil) throws -> String {
        var arguments = ["--no-defaults", "--socket=\(socketPath)", "--user=root", "-N", "-B", "--connect-timeout=5"]
        if let database { arguments.append("--database=\(database)") }
        arguments += ["-e", sql]
        let (status, output) = try runProgram(Self.client, arguments)
        guard status == 0 else {
            throw StartFailure(description: "mariadb -e failed (\(status)): \(output.suffix(2000))")
        }
        return output
    }

    /// Stops the server (SIGTERM, a clean shutdown; SIGKILL after 30 s), its watcher, and
    /// removes its files. Safe to call more than once.
    ///
    /// For example, `server.stop()`.
    public func stop() {
        let (server, watcher) = lock.withLock { () -> (pid_t?, OrphanWatcher?) in
            defer {
                serverPID = nil
                self.watcher = nil
            }
            return (serverPID, self.watcher)
        }
        if let server {
            kill(server, SIGCONT)
            kill(server, SIGTERM)
            if !waitFor(attempts: 300, pause: 100_000, until: { !isRunning(server) }) {
                kill(server, SIGKILL)
                _ = waitFor(attempts: 100, pause: 20_000, until: { !isRunning(server) })
            }
        }
        watcher?.cancel()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit {
        stop()
    }
}
