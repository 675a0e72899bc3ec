import Foundation
import SwiftDAL

struct BenchOptions {
    var rows: Int64 = 100_000
    /// Whether `--rows` was given (else each engine's default applies).
    var rowsGiven = false
    var runs = 9
    var warmup = 1
    /// Pragmas set on every connection of every implementation, after the defaults.
    var pragmas: [Pragma] = []
    var streamRows: Int64 = 1_000_000
    var workDirectory = NSTemporaryDirectory() + "swiftdal-bench"
    var jsonPath: String?
    /// Where to write the printed report too, headed by its date and command.
    var reportPath: String?
    /// A Markdown file (the README) whose generated block of this engine's ratios to
    /// rewrite with this run's.
    var readmePath: String?
    var csvPath: String?
    var svgPath: String?
    var workloads: Set<String>?
    var implementations: [Implementation] = Implementation.timedDefaults
    var memory = true
    var probe: String?
    var probeImplementation: String?
    var probePath: String?
    /// `--stream`: only measure streaming (memory and time), see StreamBench.swift.
    var streamOnly = false
    /// `--stream-probe NAME`: the child process of `--stream`.
    var streamProbe: String?
    /// `--wal-growth N`: only measure the write-ahead log under a long reader, with N writes.
    var walGrowthWrites: Int?
    /// `--engine`: SQLite (the default run) or PostgreSQL (its own workloads, baseline and report).
    var engine = BenchEngine.sqlite
    /// `--postgres-url`: the server to measure on; `nil` starts a throwaway server for the run.
    var postgresURL: String?
    /// `--mariadb-url`: the MariaDB server to measure on; `nil` starts a throwaway server for the run.
    var mariadbURL: String?
    /// `--server-setting NAME=VALUE`: settings of the throwaway PostgreSQL server (or
    /// `mariadbd` options `--NAME=VALUE` of the throwaway MariaDB server), after the bench's own.
    var serverSettings: [String: String] = [:]
    /// The PostgreSQL mode's implementations (`--implementations` with `--engine postgres`).
    var postgresImplementations: [PostgresImplementation] = PostgresImplementation.allCases
    /// The MariaDB mode's implementations (`--implementations` with `--engine mariadb`).
    var mariadbImplementations: [MariaDBImplementation] = MariaDBImplementation.allCases
    /// `--service`: only the service workload (ServiceBench.swift), on both engines unless
    /// `--engine` names one.
    var serviceOnly = false
    /// `--service-seconds N`: how long each run of the service workload lasts.
    var serviceSeconds = 5.0
    /// `--service-rounds N`: rounds of the service workload (each runs every line).
    var serviceRounds = 3
    /// Whether `--engine` was given.
    var engineGiven = false
    /// `--instructions`: count instructions per workload under callgrind instead of timing.
    var instructions = false
    /// `--keep-profiles DIR`: with `--instructions`, where each run's callgrind profile is kept.
    var profilesDirectory: String?
    /// `--failover-loss N`: only measure what a failover loses, N trials per replication mode.
    var failoverLossTrials: Int?

    static let usage = """
        usage: swift run -c release swiftdal-bench [options]

        Runs workloads W1-W8 (Tests/Benchmarks/README.md) through SwiftDAL (explicit and
        Codable mappings) and through the raw SQLite C API, in the same run, and prints
        median seconds, the ratio to raw C, whether checksums agree, and peak memory.
          --rows N           rows in the table (default 100000)
          --runs N           runs per workload; the median is reported (default 9)
          --warmup N         unrecorded runs of each workload first (default 1): the first
                             run in a process pays for growing the heap, whoever runs it
          --workloads LIST   comma-separated ids to run, e.g. W1,W3,W8 (default all)
          --implementations LIST  comma-separated subset of raw,explicit,codable,rawswift
                             (default raw,explicit,codable; with --instructions all four;
                             ratios need raw). rawswift: hand-written Swift straight over
                             SQLite's C API, no library — what Swift itself costs
          --stream-rows N    rows for the streaming memory probes (default 1000000)
          --stream           only measure streaming --stream-rows rows through DatabaseStream
                             (for try await over users.stream()): peak memory of a child
                             process, against an idle child and getAll(); with --engine
                             postgres, on a throwaway server (or --postgres-url)
          --no-memory        skip the memory probes (child processes)
          --report PATH      also write the printed report to PATH, headed by the run's
                             date and command (the committed results/latest*.txt)
          --readme PATH      rewrite the ratio table between the markers
                             <!-- swiftdal-bench ENGINE: begin/end --> in PATH (README.md)
                             with this run's, its date and command beside it
          --json PATH        also write the results as JSON
          --csv PATH         also write the results as CSV
          --svg PATH         also write an SVG bar chart of the ratios
          --work-dir PATH    where the database files go (default: a temporary directory)
          --pragma NAME=VALUE  set a pragma on every connection, raw C's and SwiftDAL's alike
                             (repeatable), e.g. --pragma cache_size=-20000; the report
                             names them. The committed figures use none
          --instructions     count the instructions of W1-W7 instead of timing them: each
                             workload and implementation in a child process under valgrind's
                             callgrind, counting the measured region only (the workload, not
                             opening or closing the database), after one warm-up run; prints
                             instructions and the ratio to raw C (default rows 20000;
                             --rows, --workloads, --implementations, --pragma, --report and
                             --json apply). With --engine postgres: the client's
                             instructions against raw libpq's, on a throwaway server unless
                             --postgres-url (default rows 10000). Needs valgrind and objcopy
                             (Debian: valgrind, binutils). With --engine mariadb: the
                             client's instructions against raw C over Connector/C, on a
                             throwaway server unless --mariadb-url (default rows 10000)
          --keep-profiles DIR  with --instructions: keep each run's callgrind profile as
                             DIR/callgrind.<workload>.<implementation>.out (read them with
                             callgrind_annotate: where a workload's instructions go)
          --wal-growth N     only measure the write-ahead log's size while one read is held
                             and N writes run, then after the reader ends (SQLite's default
                             against SwiftDAL's journal size limit)

        PostgreSQL (the same workloads against a raw libpq C baseline; see Tests/Benchmarks/README.md):
          --engine postgres  run on PostgreSQL instead of SQLite (default rows 10000 and
                             100000 for W2's fetch, runs 9; --rows sets both;
                             --rows, --runs, --warmup, --workloads, --json and --csv apply;
                             --implementations takes raw,pipelined,explicit,codable)
          --postgres-url URL the server to use (a libpq keyword string or postgresql:// URI);
                             the bench works in its own schema swiftdal_bench there. Default:
                             a throwaway server started for the run (initdb's defaults, fsync
                             on) and stopped after it
          --server-setting NAME=VALUE  a setting of the throwaway server (repeatable), e.g.
                             --server-setting fsync=off
          --engine cluster   a throwaway primary and two hot standbys: the W8 mix on the
                             primary alone and on a PostgresCluster of all three, and the
                             routing cost per read (--rows, --runs up to 5, --json apply)

        MariaDB (the same workloads against a raw C baseline over MariaDB Connector/C):
          --engine mariadb   run on MariaDB instead of SQLite: SwiftDAL on a MariaDBPool
                             against raw C with server-side prepared statements (mysql_stmt_*,
                             binary protocol), the same SQL and transactions (default rows
                             10000 and 100000 for W2's fetch, runs 9; --rows sets both;
                             --rows, --runs, --warmup, --workloads, --report, --readme (block
                             "mariadb"), --json, --csv and --instructions apply;
                             --implementations takes raw,explicit,codable)
          --mariadb-url URL  the server to use (mysql://user:password@host:port/database, or
                             ?socket=/path for a Unix socket); the bench works in its own
                             database swiftdal_bench there (created when missing). Default:
                             a throwaway server started for the run (MariaDBServer: mariadbd
                             as an unprivileged user in /tmp/swiftdal-my-*, InnoDB,
                             innodb_flush_log_at_trx_commit=1) and stopped after it
          --server-setting NAME=VALUE  with --engine mariadb: a mariadbd option --NAME=VALUE
                             of the throwaway server (repeatable)

        The service workload (Tests/Benchmarks/README.md, "A service under load"):
          --service          16, 64 and 256 concurrent async tasks, each request a findById
                             then an insert through a table DAL, on a pool of 10: requests/s,
                             p50 and p99 on SQLite and PostgreSQL (--engine names one; a
                             throwaway server unless --postgres-url), and the ceiling: raw
                             libpq from 10 threads, one connection each. --report, --readme
                             (block "service") and --json apply
          --service-seconds N  how long each run lasts (default 5)
          --service-rounds N   rounds, each running every line (default 3); on PostgreSQL
                             each SwiftDAL run is paired with a ceiling run, the order
                             turning every round

        What a failover can lose:
          --failover-loss N  N trials each with asynchronous and synchronous replication: a
                             throwaway primary and standby, 4 writers, the primary killed
                             (SIGKILL) after 1 s, the standby promoted, the acknowledged
                             writes it lacks counted. --report, --readme (block "failover")
                             and --json apply
        """

    /// `NAME=VALUE` as a pragma, checked by SwiftDAL's own rule (the same text also goes to
    /// the C harness).
    static func pragma(_ text: String) throws -> Pragma {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw BenchError("--pragma needs NAME=VALUE, not \(text)") }
        let pragma = Pragma(name: parts[0], value: parts[1])
        _ = try pragma.sql()
        return pragma
    }

    /// The pragmas as given: `NAME=VALUE`.
    var pragmaArguments: [String] { pragmas.map { "\($0.name)=\($0.value)" } }

    /// The pragmas as one SQL text for the C harness.
    var pragmaSQL: String {
        get throws { try pragmas.map { try $0.sql() + ";" }.joined(separator: " ") }
    }

    static func parse(_ arguments: [String]) throws -> BenchOptions? {
        var options = BenchOptions()
        var remaining = arguments[...]
        var implementationNames: [Substring]?
        var runsGiven = false
        var sqliteOnly = [String]()
        func value(_ name: String) throws -> String {
            guard let value = remaining.popFirst() else { throw BenchError("\(name) needs a value") }
            return value
        }
        func number(_ name: String) throws -> Int64 {
            guard let number = Int64(try value(name)), number > 0 else {
                throw BenchError("\(name) needs a positive number")
            }
            return number
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--rows":
                options.rows = try number(argument)
                options.rowsGiven = true
            case "--runs":
                options.runs = Int(try number(argument))
                runsGiven = true
            case "--warmup":
                guard let count = Int(try value(argument)), count >= 0 else {
                    throw BenchError("\(argument) needs a number of runs (0 or more)")
                }
                options.warmup = count
            case "--stream-rows": options.streamRows = try number(argument)
            case "--workloads":
                options.workloads = Set(try value(argument).split(separator: ",").map { $0.uppercased() })
            case "--implementations":
                implementationNames = try value(argument).split(separator: ",")
            case "--no-memory": options.memory = false
            case "--instructions": options.instructions = true
            case "--keep-profiles": options.profilesDirectory = try value(argument)
            case "--wal-growth":
                options.walGrowthWrites = Int(try number(argument))
                sqliteOnly.append(argument)
            case "--json": options.jsonPath = try value(argument)
            case "--report": options.reportPath = try value(argument)
            case "--readme": options.readmePath = try value(argument)
            case "--csv": options.csvPath = try value(argument)
            case "--svg":
                options.svgPath = try value(argument)
                sqliteOnly.append(argument)
            case "--work-dir": options.workDirectory = try value(argument)
            case "--pragma":
                options.pragmas.append(try pragma(try value(argument)))
                sqliteOnly.append(argument)
            case "--engine":
                let name = try value(argument)
                guard let engine = BenchEngine(rawValue: name.lowercased()) else {
                    throw BenchError("--engine takes sqlite, postgres, mariadb or cluster, not \(name)")
                }
                options.engine = engine
                options.engineGiven = true
            case "--postgres-url": options.postgresURL = try value(argument)
            case "--mariadb-url": options.mariadbURL = try value(argument)
            case "--server-setting":
                let parts = try value(argument).split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty else { throw BenchError("--server-setting needs NAME=VALUE") }
                options.serverSettings[parts[0]] = parts[1]
            case "--probe": options.probe = try value(argument)
            case "--probe-implementation": options.probeImplementation = try value(argument)
            case "--probe-path": options.probePath = try value(argument)
            case "--stream": options.streamOnly = true
            case "--service": options.serviceOnly = true
            case "--failover-loss": options.failoverLossTrials = Int(try number(argument))
            case "--service-seconds": options.serviceSeconds = Double(try number(argument))
            case "--service-rounds": options.serviceRounds = Int(try number(argument))
            case "--stream-probe": options.streamProbe = try value(argument)
            case "-h", "--help":
                print(usage)
                return nil
            default: throw BenchError("unknown option \(argument)\n\(usage)")
            }
        }
        if options.mariadbURL != nil && options.engine != .mariadb {
            throw BenchError("--mariadb-url needs --engine mariadb")
        }
        if options.engine == .mariadb {
            for (given, option) in [
                (options.failoverLossTrials != nil, "--failover-loss"), (options.serviceOnly, "--service"),
                (options.streamOnly, "--stream"), (options.postgresURL != nil, "--postgres-url")
            ] where given {
                throw BenchError("\(option) does not run with --engine mariadb")
            }
        }
        if options.profilesDirectory != nil && !options.instructions {
            throw BenchError("--keep-profiles goes with --instructions")
        }
        if options.failoverLossTrials != nil { return options }
        if options.serviceOnly {
            guard options.engine != .cluster else { throw BenchError("--service runs on sqlite or postgres") }
            if !options.engineGiven { options.engine = .sqlite }
            return options
        }
        switch options.engine {
        case .sqlite:
            if options.instructions && !options.rowsGiven { options.rows = 20_000 }
            if options.instructions { options.implementations = Implementation.allCases }
            if options.postgresURL != nil || !options.serverSettings.isEmpty {
                throw BenchError("--postgres-url and --server-setting need --engine postgres")
            }
            if let implementationNames {
                options.implementations = try implementationNames.map { name in
                    switch name.lowercased() {
                    case "raw": return .raw
                    case "explicit": return .explicit
                    case "codable": return .codable
                    case "rawswift": return .rawSwift
                    default: throw BenchError("unknown implementation \(name)")
                    }
                }
            }
        case .mariadb:
            if let option = sqliteOnly.first { throw BenchError("\(option) is for the SQLite run only") }
            if options.mariadbURL != nil && !options.serverSettings.isEmpty {
                throw BenchError("--server-setting sets up the throwaway server: it does not go with --mariadb-url")
            }
            if !options.rowsGiven { options.rows = PostgresScale.defaultRows }
            if !runsGiven { options.runs = PostgresScale.defaultRuns }
            if let implementationNames {
                options.mariadbImplementations = try implementationNames.map { name in
                    switch name.lowercased() {
                    case "raw": return .raw
                    case "explicit": return .explicit
                    case "codable": return .codable
                    default: throw BenchError("unknown implementation \(name) (MariaDB: raw, explicit, codable)")
                    }
                }
            }
            if let workloads = options.workloads {
                let known = Set(mariadbWorkloads.map(\.id) + ["W8"])
                if let unknown = workloads.sorted().first(where: { !known.contains($0) }) {
                    throw BenchError("unknown workload \(unknown) (MariaDB: W1, W2, W3, W3A, W4, W5, W6, W7, W8)")
                }
            }
        case .postgres, .cluster:
            if let option = sqliteOnly.first { throw BenchError("\(option) is for the SQLite run only") }
            if options.postgresURL != nil && !options.serverSettings.isEmpty {
                throw BenchError("--server-setting sets up the throwaway server: it does not go with --postgres-url")
            }
            if !options.rowsGiven { options.rows = PostgresScale.defaultRows }
            if !runsGiven { options.runs = PostgresScale.defaultRuns }
            if options.instructions && options.engine == .cluster {
                throw BenchError("--instructions runs on sqlite, postgres or mariadb")
            }
            if let implementationNames {
                options.postgresImplementations = try implementationNames.map { name in
                    switch name.lowercased() {
                    case "raw": return .raw
                    case "pipelined": return .pipelined
                    case "explicit": return .explicit
                    case "codable": return .codable
                    default:
                        throw BenchError(
                            "unknown implementation \(name) (PostgreSQL: raw, pipelined, explicit, codable)")
                    }
                }
            }
        }
        return options
    }
}

/// The engine a run measures.
enum BenchEngine: String {
    case sqlite, postgres, mariadb, cluster
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
