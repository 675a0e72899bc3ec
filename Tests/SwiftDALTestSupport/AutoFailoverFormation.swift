import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real high-availability manager for tests: pg_auto_failover (`pg_autoctl`, Debian's
/// `postgresql-15-auto-failover`), its monitor and two or more data nodes on this machine,
/// each a PostgreSQL server on 127.0.0.1 with a port of its own, all in a fresh temporary
/// directory, run as the `postgres` user when this process is root, and stopped by
/// ``stop()`` (or when released). Starting takes about a minute.
///
/// For example:
///
/// ```swift
/// let formation = try AutoFailoverFormation.start(nodes: 3, synchronousStandbys: 1)
/// defer { formation.stop() }
/// let cluster = try PostgresCluster(primary: formation.writerURL, replicas: formation.nodeURLs)
/// try formation.performFailover()
/// ```
public final class AutoFailoverFormation: @unchecked Sendable {
    /// The directory holding the monitor's and the nodes' data directories.
    public let directory: String
    private let ports: [Int]
    private let runAsPostgres: Bool
    private let environment: [String]
    private let lock = NSLock()
    /// The `pg_autoctl … --run` processes: the monitor's, then each node's.
    private var processes: [pid_t] = []
    private var stopped = false
    /// Stops the formation if this process ends without stopping it (killed, crashed).
    private var watcher: OrphanWatcher?

    /// Whether `pg_autoctl` and PostgreSQL's server programs are installed.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/pg_autoctl") && PostgresServer.isAvailable
    }

    private init(directory: String, ports: [Int], runAsPostgres: Bool, environment: [String]) {
        self.directory = directory
        self.ports = ports
        self.runAsPostgres = runAsPostgres
        self.environment = environment
    }

    /// Starts the monitor and `nodes` nodes (two or more), and waits until one node is the
    /// primary and the others its secondaries (at most `timeout`).
    ///
    /// `synchronousStandbys` is the formation's `number-sync-standbys`: how many standbys
    /// must confirm a commit before the primary acknowledges it. At 0 (pg_auto_failover's
    /// default) the monitor switches synchronous replication off whenever no standby is a
    /// healthy secondary, to keep writes available (state `wait_primary`), and version 2.0
    /// does so at the start of a planned failover of two nodes too (its issue #774): writes
    /// acknowledged then can be lost. At 1 or more (three nodes or more) writes wait instead.
    ///
    /// For example, `let formation = try AutoFailoverFormation.start(nodes: 3, synchronousStandbys: 1)`.
    public static func start(
        nodes: Int = 2, synchronousStandbys: Int = 0, timeout: Duration = .seconds(180)
    ) throws -> AutoFailoverFormation {
        guard nodes >= 2, synchronousStandbys >= 0, synchronousStandbys < nodes - 1 || synchronousStandbys == 0 else {
            throw PostgresServer.StartFailure(
                description:
                    "pg_auto_failover: \(nodes) nodes cannot keep \(synchronousStandbys) synchronous standbys "
                    + "(two nodes or more; fewer synchronous standbys than standbys)")
        }
        guard isAvailable else {
            throw PostgresServer.StartFailure(
                description: "pg_auto_failover was not found (Debian: apt-get install postgresql-15-auto-failover)")
        }
        let directory = "/tmp/swiftdal-pg-autoctl-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory + "/home", withIntermediateDirectories: true)
        let runAsPostgres = geteuid() == 0
        if runAsPostgres {
            for path in [directory, directory + "/home"] {
                try FileManager.default.setAttributes(
                    [.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: path)
            }
        }
        let base = 20_000 + Int.random(in: 0..<19_000)
        let binaries = "/usr/lib/postgresql/15/bin"
        let environment = [
            "PATH=\(binaries):/usr/bin:/bin", "HOME=\(directory)/home", "XDG_CONFIG_HOME=\(directory)/home/config",
            "XDG_DATA_HOME=\(directory)/home/data", "LC_ALL=C"
        ]
        let formation = AutoFailoverFormation(
            directory: directory, ports: Array(base...(base + nodes)), runAsPostgres: runAsPostgres,
            environment: environment)
        formation.startWatcher()
        do {
            try formation.launch(
                [
                    "create", "monitor", "--pgdata", directory + "/monitor", "--pgport", "\(base)", "--auth", "trust",
                    "--no-ssl", "--hostname", "127.0.0.1", "--run"
                ], log: "monitor.log")
            // The monitor is set up once its log says it manages it (a `pg_autoctl show`
            // before then races its setup for the configuration's directory).
            try formation.waitForLog("monitor.log", containing: "Managing the monitor", timeout: timeout)
            for node in 1...nodes {
                // One node after the other: the first becomes the primary.
                try formation.launch(
                    [
                        "create", "postgres", "--pgdata", directory + "/node\(node)", "--pgport", "\(base + node)",
                        "--auth", "trust", "--no-ssl", "--hostname", "127.0.0.1", "--name", "node\(node)",
                        "--monitor", "postgres://autoctl_node@127.0.0.1:\(base)/pg_auto_failover?sslmode=prefer",
                        "--run"
                    ], log: "node\(node).log")
                try formation.waitForState(
                    node == 1 ? ["single"] : ["primary"] + Array(repeating: "secondary", count: node - 1),
                    timeout: timeout)
            }
            if synchronousStandbys > 0 {
                // On the monitor's SQL function: `pg_autoctl set formation number-sync-standbys`
                // of 2.0 reads a stale `errno` and refuses every value.
                // The monitor's own decisions (keeping the primary synchronous while a
                // standby is away) follow the setting at once; the primary then applies the
                // new `synchronous_standby_names` (`apply_settings`): wait until it has.
                let printed = try formation.runOnMonitor(
                    "SELECT pgautofailover.set_formation_number_sync_standbys('default', \(synchronousStandbys))")
                guard printed.trimmingCharacters(in: .whitespacesAndNewlines) == "t" else {
                    throw PostgresServer.StartFailure(
                        description: "pg_auto_failover refused number-sync-standbys \(synchronousStandbys): \(printed)")
                }
                try formation.waitForEvent(
                    "applied replication properties change", after: "updating number_sync_standbys", timeout: timeout)
            }
        } catch {
            formation.stop()
            throw error
        }
        return formation
    }

    /// The writer's multi-host URI as the monitor hands it out
    /// (`target_session_attrs=read-write`), as the user `postgres`.
    public var writerURL: String {
        let nodePorts = ports.dropFirst()
        return "host=\(nodePorts.map { _ in "127.0.0.1" }.joined(separator: ",")) "
            + "port=\(nodePorts.map(String.init).joined(separator: ",")) user=postgres dbname=postgres "
            + "target_session_attrs=read-write connect_timeout=2"
    }

    /// The data nodes' names, `node1`, `node2`, …, in node order.
    private var nodeNames: [String] { (1..<ports.count).map { "node\($0)" } }

    /// Each node's own connection string, as the user `postgres`.
    public var nodeURLs: [String] {
        ports.dropFirst().map { "host=127.0.0.1 port=\($0) user=postgres dbname=postgres connect_timeout=2" }
    }

    /// The URI `pg_autoctl show uri` prints for the formation.
    public func monitorURI() throws -> String {
        try run(["show", "uri", "--pgdata", directory + "/monitor", "--formation", "default"])
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .last { $0.hasPrefix("postgres://") } ?? ""
    }

    /// Asks the monitor for a failover and waits until a former secondary is the primary
    /// and every other node its secondary again (at most `timeout`).
    public func performFailover(timeout: Duration = .seconds(120)) throws {
        _ = try run(["perform", "failover", "--pgdata", directory + "/monitor"])
        try waitForState(["primary"] + Array(repeating: "secondary", count: nodeNames.count - 1), timeout: timeout)
    }

    /// The monitor's last `count` events (state changes and their reasons), oldest first:
    /// what a test prints when a failover did not go as it expected.
    public func events(count: Int = 40) throws -> String {
        try run(["show", "events", "--pgdata", directory + "/monitor", "--count", String(count)])
    }

    /// The nodes' current states, as the monitor reports them (`primary`, `secondary`,
    /// `draining`, …), in node order.
    public func states() throws -> [String] {
        let text = try run(["show", "state", "--pgdata", directory + "/monitor"])
        return nodeNames.map { name in
            text.split(separator: "\n").first { $0.hasPrefix(name) || $0.contains(" \(name) ") }
                .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
                .flatMap { $0.count >= 2 ? $0[$0.count - 2] : nil } ?? "?"
        }
    }

    /// Waits until the log `name` holds `text`.
    private func waitForLog(_ name: String, containing text: String, timeout: Duration) throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if readWholeFile(directory + "/" + name).contains(text) { return }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw PostgresServer.StartFailure(
            description: "pg_auto_failover: \(name) never said \(text): "
                + String(readWholeFile(directory + "/" + name).suffix(1500)))
    }

    /// Waits until one of the monitor's events says `text`, after one that says `earlier`.
    private func waitForEvent(_ text: String, after earlier: String, timeout: Duration) throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            // Oldest first: `text` in what follows the last event saying `earlier`.
            if let log = try? events(count: 100), let mark = log.range(of: earlier, options: .backwards),
                log[mark.upperBound...].contains(text)
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        throw PostgresServer.StartFailure(description: "pg_auto_failover: no event said \(text) after \(earlier)")
    }

    /// Waits until the nodes' reported states are `expected` in some order.
    private func waitForState(_ expected: [String], timeout: Duration) throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var last = [String]()
        var lastError: (any Error)?
        while ContinuousClock.now < deadline {
            do {
                last = try states()
                lastError = nil
            } catch {
                lastError = error
                Thread.sleep(forTimeInterval: 0.5)
                continue
            }
            let reached = last.filter { $0 != "?" }
            if reached.sorted() == expected.sorted()
                || (expected == ["single"] && reached.contains("single"))
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        throw PostgresServer.StartFailure(
            description:
                "pg_auto_failover did not reach \(expected) (last: \(last), \(lastError.map { "\($0)" } ?? "")): "
                + String(readWholeFile(directory + "/monitor.log").suffix(1500)))
    }

    /// Watches this process: if it ends without ``stop()`` (killed, crashed), a shell left
    /// behind kills every process of the formation (the `pg_autoctl` supervisors, their
    /// children, which rename themselves, and the servers) and removes its directory. (The
    /// bracketed letters keep the pattern from matching the watcher's own command line.)
    private func startWatcher() {
        let cleanup = """
            for round in 1 2 3 4 5; do
                found=$(pgrep -f -- '(-[D]|--pgdat[a]) \(directory)/')
                [ -z "$found" ] && break
                all="$found"
                for p in $found; do all="$all $(pgrep -P "$p" | tr '\\n' ' ')"; done
                kill -KILL $all 2>/dev/null
                sleep 1
            done
            """
        let watcher = OrphanWatcher(cleanup: cleanup, directory: directory)
        lock.withLock { self.watcher = watcher }
    }

    /// Stops every node and the monitor, and removes the files.
    public func stop() {
        let (running, watcher) = lock.withLock { () -> ([pid_t], OrphanWatcher?) in
            defer {
                stopped = true
                processes = []
                self.watcher = nil
            }
            return (stopped ? [] : processes, self.watcher)
        }
        watcher?.cancel()
        guard !running.isEmpty else { return }
        for pgdata in nodeNames.reversed() + ["monitor"] {
            _ = try? run(["stop", "--pgdata", directory + "/" + pgdata])
        }
        for pid in running.reversed() {
            terminate(pid)
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
        }
        // Servers the manager started and that outlived it.
        let leftovers = runningProcesses(containing: directory)
        for pid in leftovers { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit {
        stop()
    }

    // MARK: Running pg_autoctl

    private func command(_ arguments: [String]) -> [String] {
        let autoctl = ["/usr/bin/env", "-i"] + environment + ["/usr/bin/pg_autoctl"] + arguments
        return runAsPostgres
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"] + autoctl : autoctl
    }

    /// Runs SQL on the monitor's database with `psql`, as `autoctl_node`; returns what it printed.
    @discardableResult
    private func runOnMonitor(_ sql: String) throws -> String {
        let psql =
            ["/usr/bin/env", "-i"] + environment + [
                "/usr/bin/psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p",
                "\(ports[0])",
                "-U", "autoctl_node", "-d", "pg_auto_failover", "-c", sql
            ]
        let full =
            runAsPostgres ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"] + psql : psql
        let (status, output) = try runProgram(full[0], Array(full.dropFirst()))
        guard status == 0 else {
            throw PostgresServer.StartFailure(
                description: "psql on the monitor failed (\(status)): \(output.suffix(1500))")
        }
        return output
    }

    /// Starts a long-running `pg_autoctl … --run`, its output in `log`.
    private func launch(_ arguments: [String], log: String) throws {
        let pid = try spawnInBackground(command(arguments), outputPath: directory + "/" + log)
        lock.withLock { processes.append(pid) }
    }

    /// Runs a `pg_autoctl` command to its end; returns what it printed.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let (status, output) = try runProgram(command(arguments)[0], Array(command(arguments).dropFirst()))
        guard status == 0 else {
            throw PostgresServer.StartFailure(
                description: "pg_autoctl \(arguments.joined(separator: " ")) failed (\(status)): \(output.suffix(1500))"
            )
        }
        return output
    }
}

/// The processes whose command line holds `text`.
private func runningProcesses(containing text: String) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry in
        guard let pid = pid_t(entry) else { return nil }
        let commandLine = readWholeFile("/proc/\(entry)/cmdline")
        return commandLine.contains(text) ? pid : nil
    }
}
