import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real PostgreSQL server started for tests (and the demo's `--postgres`): `initdb`
/// into a fresh temporary directory, `pg_ctl start` on a private Unix socket (no TCP
/// port), trust authentication for the user `app`, stopped and removed by ``stop()`` or
/// when released. PostgreSQL refuses to run as root: as root, the server's commands run
/// as the `postgres` user (`setpriv`), which owns the directory.
///
/// For example:
///
/// ```swift
/// let server = try PostgresServer.start()
/// let pool = try PostgresPool(url: server.connectionString())
/// defer { server.stop() }
/// ```
public final class PostgresServer: @unchecked Sendable {
    /// The directory holding the data directory, the socket and the log.
    public let directory: String
    /// The port number naming the socket (`.s.PGSQL.<port>` in ``directory``).
    public let port: Int
    private let binaries: String
    private let runAsPostgres: Bool
    private let lock = NSLock()
    private var running = false
    private var databases = 0
    private var bouncerRunning = false
    /// The processes ``pause()`` stopped.
    private var paused: [pid_t] = []
    /// Ends the server (and its PgBouncer) should this process die without stopping it.
    private var watcher: OrphanWatcher?

    /// Why the server could not start.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    /// The data directory.
    public var dataDirectory: String { directory + "/data" }

    private init(directory: String, port: Int, binaries: String, runAsPostgres: Bool) {
        self.directory = directory
        self.port = port
        self.binaries = binaries
        self.runAsPostgres = runAsPostgres
    }

    /// Whether PostgreSQL's server programs are installed (`initdb`, `pg_ctl`).
    public static var isAvailable: Bool { findBinaries() != nil }

    /// Creates a cluster and starts it; throws ``StartFailure`` with the server's log when
    /// it cannot.
    ///
    /// For example, `let server = try PostgresServer.start(settings: ["max_connections": "20"])`.
    public static func start(settings: [String: String] = [:]) throws -> PostgresServer {
        guard let binaries = findBinaries() else {
            throw StartFailure(
                description: "PostgreSQL's server programs were not found (Debian: apt-get install postgresql)")
        }
        // Short: a Unix socket path must fit in 107 bytes.
        let directory = "/tmp/swiftdal-pg-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let runAsPostgres = geteuid() == 0
        if runAsPostgres {
            try FileManager.default.setAttributes(
                [.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: directory)
        }
        let server = PostgresServer(
            directory: directory, port: 20_000 + Int.random(in: 0..<20_000), binaries: binaries,
            runAsPostgres: runAsPostgres)
        do {
            try server.run(
                "initdb",
                ["-D", server.dataDirectory, "-A", "trust", "-U", "app", "-E", "UTF8", "--locale=C", "--no-sync"])
            var lines = [
                "port = \(server.port)", "unix_socket_directories = '\(directory)'", "listen_addresses = ''",
                "fsync = off"
            ]
            for (key, value) in settings.sorted(by: { $0.key < $1.key }) { lines.append("\(key) = \(value)") }
            try server.append(lines.joined(separator: "\n") + "\n", to: server.dataDirectory + "/postgresql.auto.conf")
            server.startWatcher()
            try server.startServer()
        } catch {
            server.removeFiles()
            throw error
        }
        return server
    }

    /// A connection string for `database` as the user `app`.
    ///
    /// For example, `server.connectionString(database: "shop")`.
    public func connectionString(database: String = "postgres") -> String {
        "host=\(directory) port=\(port) user=app dbname=\(database) connect_timeout=5"
    }

    /// Creates a new, empty database and returns its connection string (one per test
    /// keeps tests apart on one server).
    ///
    /// For example, `let url = try server.makeDatabase()`.
    public func makeDatabase() throws -> String {
        connectionString(database: try makeDatabaseName())
    }

    /// Creates a new, empty database and returns its name (its connection string on this
    /// server, or on a standby of it, is ``connectionString(database:)``).
    ///
    /// For example, `let name = try server.makeDatabaseName()`.
    public func makeDatabaseName() throws -> String {
        let name: String = lock.withLock {
            databases += 1
            return "test_\(databases)"
        }
        try run(
            "psql",
            [
                "-X", "-q", "-h", directory, "-p", "\(port)", "-U", "app", "-d", "postgres", "-c",
                "CREATE DATABASE \(name)"
            ])
        return name
    }

    /// A hot standby of this server, fed by streaming replication: `pg_basebackup -R`
    /// into a new directory, started on its own socket. Stop it with ``stop()``.
    ///
    /// For example, `let standby = try primary.makeStandby()`.
    public func makeStandby() throws -> PostgresServer {
        let directory = "/tmp/swiftdal-pg-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if runAsPostgres {
            try FileManager.default.setAttributes(
                [.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: directory)
        }
        let standby = PostgresServer(
            directory: directory, port: 20_000 + Int.random(in: 0..<20_000), binaries: binaries,
            runAsPostgres: runAsPostgres)
        do {
            try standby.run(
                "pg_basebackup",
                [
                    "-h", self.directory, "-p", "\(port)", "-U", "app", "-D", standby.dataDirectory, "-R", "-X",
                    "stream",
                    "--no-sync", "--checkpoint=fast"
                ])
            // The copied settings name the primary's port and socket: the standby's own come last.
            try standby.append(
                "port = \(standby.port)\nunix_socket_directories = '\(directory)'\nhot_standby_feedback = on\n",
                to: standby.dataDirectory + "/postgresql.auto.conf")
            standby.startWatcher()
            try standby.startServer()
        } catch {
            standby.removeFiles()
            throw error
        }
        return standby
    }

    /// Promotes this standby to a primary (`pg_ctl promote`), waiting until it accepts writes.
    ///
    /// For example, `try standby.promote()`.
    public func promote() throws {
        try run("pg_ctl", ["-D", dataDirectory, "-w", "promote"])
    }

    /// Starts PgBouncer in front of this server, in transaction pooling mode, on a socket
    /// of its own in ``directory``; returns its port. It is stopped with the server.
    ///
    /// For example, `let port = try server.startPgBouncer()`.
    public func startPgBouncer(poolSize: Int = 4) throws -> Int {
        let bouncerPort = 20_000 + Int.random(in: 0..<20_000)
        let configuration = directory + "/pgbouncer.ini"
        try write(
            """
            [databases]
            * = host=\(directory) port=\(port)
            [pgbouncer]
            listen_addr =
            listen_port = \(bouncerPort)
            unix_socket_dir = \(directory)
            auth_type = trust
            auth_file = \(directory)/pgbouncer-users.txt
            pool_mode = transaction
            default_pool_size = \(poolSize)
            max_client_conn = 200
            logfile = \(directory)/pgbouncer.log
            pidfile = \(directory)/pgbouncer.pid

            """, to: configuration)
        try write("\"app\" \"\"\n", to: directory + "/pgbouncer-users.txt")
        try run("/usr/sbin/pgbouncer", ["-d", configuration])
        lock.withLock { bouncerRunning = true }
        // Daemonized, it listens a moment later: wait until its socket accepts a connection
        // (the socket file appears at bind(), before listen(): a client connecting in
        // between was refused, which failed a test once under Thread Sanitizer). Probe once
        // per pause and stop at the first success: each probe waits in PgBouncer's listen
        // queue (128) until it is accepted, and a probe loop that went on connecting after
        // success filled that queue on a loaded machine, so the test's own connect failed
        // with EAGAIN ("Resource temporarily unavailable").
        let socket = directory + "/.s.PGSQL.\(bouncerPort)"
        guard waitFor(attempts: 250, pause: 20_000, until: { Self.acceptsConnections(atSocket: socket) }) else {
            throw StartFailure(
                description: "PgBouncer did not start: \(readWholeFile(directory + "/pgbouncer.log").suffix(2000))")
        }
        return bouncerPort
    }

    /// Whether a Unix-domain socket at `path` accepts a connection now.
    private static func acceptsConnections(atSocket path: String) -> Bool {
        #if canImport(Darwin)
            let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #else
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { field -> Bool in
            guard bytes.count < field.count else { return false }
            field.copyBytes(from: bytes)
            return true
        }
        guard fits else { return false }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    private func stopPgBouncer() {
        let running = lock.withLock { () -> Bool in
            defer { bouncerRunning = false }
            return bouncerRunning
        }
        guard running,
            let pid = Int32(readWholeFile(directory + "/pgbouncer.pid").trimmingCharacters(in: .whitespacesAndNewlines))
        else { return }
        terminate(pid)
    }

    /// The process ids of the running server: the postmaster first, then its children.
    public var serverProcessIDs: [Int32] {
        let firstLine = readWholeFile(dataDirectory + "/postmaster.pid").split(separator: "\n").first
        guard let postmaster = firstLine.flatMap({ pid_t($0.trimmingCharacters(in: .whitespaces)) }) else {
            return []
        }
        return [postmaster] + childProcesses(of: postmaster)
    }

    /// Stops the server's processes with SIGSTOP: it keeps accepting connections (the
    /// kernel queues them) and never answers, as a hung server does. ``resume()`` (or
    /// ``stop()``) lets it go on.
    public func pause() {
        let processes = serverProcessIDs
        lock.withLock { paused = processes }
        for pid in processes { kill(pid, SIGSTOP) }
    }

    /// Lets a server stopped by ``pause()`` go on.
    public func resume() {
        let processes = lock.withLock { () -> [pid_t] in
            defer { paused = [] }
            return paused
        }
        for pid in processes.reversed() { kill(pid, SIGCONT) }
    }

    private func write(_ text: String, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw StartFailure(description: "cannot write \(path)")
        }
        if runAsPostgres {
            try FileManager.default.setAttributes(
                [.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: path)
        }
    }

    /// Runs SQL with `psql` (outside SwiftDAL), returning what it prints.
    ///
    /// For example, `try server.psql("SELECT count(*) FROM users", database: "test_1")`.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try run(
            "psql", ["-X", "-q", "-t", "-A", "-h", directory, "-p", "\(port)", "-U", "app", "-d", database, "-c", sql])
    }

    /// Starts the stopped server again (same data).
    public func restart() throws {
        try startServer()
    }

    /// Stops the server: `fast` (a clean shutdown, sessions ended) or `immediate` (a crash).
    ///
    /// For example, `server.stopServer(mode: "immediate")`.
    public func stopServer(mode: String = "fast") {
        let wasRunning = lock.withLock { () -> Bool in
            defer { running = false }
            return running
        }
        guard wasRunning else { return }
        _ = try? run("pg_ctl", ["-D", dataDirectory, "-m", mode, "-w", "stop"])
    }

    /// Kills the server's processes with SIGKILL, as a machine that loses power takes a
    /// server down mid-flight (its files stay: ``restart()`` recovers it).
    ///
    /// For example, `server.crash()`.
    public func crash() {
        let processes = serverProcessIDs
        lock.withLock {
            running = false
            paused = []
        }
        for pid in processes { kill(pid, SIGKILL) }
        _ = waitFor(attempts: 250, pause: 20_000) { processes.allSatisfy { kill($0, 0) != 0 } }
        // The next start would refuse while the pid file names a process it cannot tell is gone.
        unlink(dataDirectory + "/postmaster.pid")
    }

    /// Stops the server and removes its files.
    public func stop() {
        resume()
        stopPgBouncer()
        stopServer()
        removeFiles()
        let watcher = lock.withLock { () -> OrphanWatcher? in
            defer { self.watcher = nil }
            return self.watcher
        }
        watcher?.cancel()
    }

    /// Watches over the server from outside this process: should it die without stopping
    /// the server (a crash, a trap), the postmaster named by `postmaster.pid` at that time
    /// (a restart changes it) is continued and its children with it (a paused server), shut
    /// down at once (SIGQUIT; SIGKILL after 10 s), and PgBouncer killed.
    private func startWatcher() {
        let cleanup = """
            b=$(cat '\(directory)/pgbouncer.pid' 2>/dev/null); [ -n "$b" ] && kill -KILL "$b" 2>/dev/null
            p=$(head -n 1 '\(dataDirectory)/postmaster.pid' 2>/dev/null)
            if [ -n "$p" ]; then
                pkill -CONT -P "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; kill -QUIT "$p" 2>/dev/null
                for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "$p" 2>/dev/null
            fi
            """
        let watcher = OrphanWatcher(cleanup: cleanup, directory: directory)
        lock.withLock { self.watcher = watcher }
    }

    deinit {
        stop()
    }

    private func startServer() throws {
        do {
            try run("pg_ctl", ["-D", dataDirectory, "-l", directory + "/log", "-w", "-t", "30", "start"])
        } catch {
            let log = readWholeFile(directory + "/log")
            throw StartFailure(description: "\(error)\n\(log.suffix(2000))")
        }
        lock.withLock { running = true }
    }

    private func removeFiles() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func append(_ text: String, to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// Runs one of PostgreSQL's programs (as `postgres` when this process is root) and
    /// returns what it printed; throws when it fails.
    @discardableResult
    private func run(_ program: String, _ arguments: [String]) throws -> String {
        let executable =
            program.hasPrefix("/") ? program : program == "psql" ? "/usr/bin/psql" : binaries + "/" + program
        let command =
            runAsPostgres
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups", executable] + arguments
            : [executable] + arguments
        // Output goes to a file, not a pipe: the server that `pg_ctl start` leaves running
        // would inherit a pipe, and reading it would never end.
        let outputPath = directory + "/command-\(UUID().uuidString).out"
        defer { unlink(outputPath) }
        let status = try spawnAndWait(command, outputPath: outputPath)
        let text = readWholeFile(outputPath)
        guard status == 0 else {
            throw StartFailure(
                description: "\(program) \(arguments.joined(separator: " ")) failed (\(status)): \(text)")
        }
        return text
    }

    private static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let directory = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: directory + "/initdb") { return directory }
        }
        return nil
    }
}

/// Runs `command` (its first element an absolute path) with its output in `outputPath`,
/// standard input from /dev/null and `LC_ALL=C`; returns its exit status. (posix_spawn and
/// waitpid: Foundation's `Process` did not always reap `pg_ctl` from a test thread.)
private func spawnAndWait(_ command: [String], outputPath: String) throws -> Int32 {
    let pid = try spawnInBackground(command, environment: ["LC_ALL": "C"], removing: ["PGDATA"], outputPath: outputPath)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw PostgresServer.StartFailure(description: "cannot wait for \(command[0])") }
    }
    // WIFEXITED/WEXITSTATUS are macros: the exit status is bits 8-15 when bits 0-6 are 0.
    return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}

/// Runs the program at `path` with `arguments` and returns its exit status and what it
/// printed (standard output and error together).
///
/// For example, `let (status, output) = try runProgram("/usr/bin/env", ["true"])`.
public func runProgram(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let outputPath = try TemporaryDirectory.processDirectory.get() + "/run-\(UUID().uuidString).out"
    defer { unlink(outputPath) }
    let status = try spawnAndWait([path] + arguments, outputPath: outputPath)
    return (status, readWholeFile(outputPath))
}

/// Starts `command` (its first element an absolute path) with its output in
/// `outputPath`, standard input from /dev/null, no signal blocked; returns its process id
/// without waiting (stop it with ``terminate(_:)``).
func spawnInBackground(
    _ command: [String], environment changes: [String: String] = [:], removing removed: [String] = [],
    outputPath: String
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var environment = ProcessInfo.processInfo.environment.merging(changes) { $1 }
    for name in removed { environment.removeValue(forKey: name) }
    let arguments = command.map { strdup($0) } + [nil]
    let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for argument in arguments { free(argument) }
        for variable in variables { free(variable) }
    }
    var pid = pid_t()
    let code = posix_spawn(&pid, command[0], &actions, &attributes, arguments, variables)
    guard code == 0 else {
        throw PostgresServer.StartFailure(description: "cannot run \(command[0]): \(String(cString: strerror(code)))")
    }
    return pid
}

/// Stops the process `pid` (not a child of this one): SIGTERM, then SIGKILL when it has
/// not exited within 2 s; waits until it is gone (at most 2 s more).
func terminate(_ pid: pid_t) {
    kill(pid, SIGTERM)
    guard !waitFor(attempts: 100, pause: 20_000, until: { kill(pid, 0) != 0 }) else { return }
    kill(pid, SIGKILL)
    _ = waitFor(attempts: 100, pause: 20_000, until: { kill(pid, 0) != 0 })
}

/// The processes whose parent is `parent` (from /proc).
private func childProcesses(of parent: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> pid_t? in
        guard let pid = pid_t(entry) else { return nil }
        // /proc/<pid>/stat: "pid (name) state ppid ..."; the name may hold spaces.
        let stat = readWholeFile("/proc/\(entry)/stat")
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 1, pid_t(fields[1]) == parent else { return nil }
        return pid
    }
}

/// The text of the file at `path` ("" when it cannot be read), read with POSIX calls
/// (`String(contentsOfFile:)` leaked its buffer for some files under LeakSanitizer).
func readWholeFile(_ path: String) -> String {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return "" }
    defer { close(descriptor) }
    var bytes = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Checks `condition` up to `attempts` times, sleeping `pause` microseconds between two
/// checks, and stops at the first check that holds; returns whether one did.
///
/// For example, `waitFor(attempts: 100, pause: 20_000) { kill(pid, 0) != 0 }`. (A loop
/// written `for _ in 0..<n where !condition() { sleep }` goes on evaluating the condition
/// after it holds, n times in all: this is the loop it is mistaken for.)
package func waitFor(attempts: Int, pause: UInt32, until condition: () throws -> Bool) rethrows -> Bool {
    for attempt in 0..<attempts {
        if try condition() { return true }
        if attempt < attempts - 1 { usleep(pause) }
    }
    return false
}

/// A process that watches over a server this process started: once this process is gone
/// (a crash, a kill, a trap: no `atexit` ran), it runs `cleanup` (a shell script that ends
/// the server) and removes `directory`, so that no server outlives the tests that started
/// it. It polls every second; ``OrphanWatcher/cancel()`` (the server's own `stop()`) ends
/// it first, without running `cleanup`.
struct OrphanWatcher {
    private let pid: pid_t?

    init(cleanup: String, directory: String) {
        // SIGTERM (from `cancel()`) ends it at once, its `sleep` included.
        let script = """
            trap 'kill $s 2>/dev/null; exit 0' TERM
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1 & s=$!; wait $s; done
            \(cleanup)
            rm -rf '\(directory)'
            """
        pid = try? spawnInBackground(["/bin/sh", "-c", script], outputPath: "/dev/null")
    }

    /// Ends the watcher (and reaps it), leaving the server to its owner.
    func cancel() {
        guard let pid else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<200 {
            if waitpid(pid, &status, WNOHANG) != 0 { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
    }

    /// A script that stops the process `pid` (SIGTERM, SIGKILL after 10 s).
    static func stopping(_ pid: String) -> String {
        """
        kill -TERM \(pid) 2>/dev/null
        for i in $(seq 1 100); do kill -0 \(pid) 2>/dev/null || break; sleep 0.1; done
        kill -KILL \(pid) 2>/dev/null
        """
    }
}
