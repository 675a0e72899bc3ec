// swift-tools-version: 6.0
//
// SwiftDAL: a layered data-access layer for Swift backend services on Linux, over SQLite
// (the embedded default), PostgreSQL (a primary and its replicas) and MariaDB.
//
// Layers (arrows point down only):
//   SampleDAL (UserDAL, OrderDAL, UserTagDAL: an example of table DALs, not a dependency)
//     -> SwiftDAL (BaseDAL, ReadOnlyDAL)
//     -> SwiftDALIDAL (IDAL, OrderBy, PagerInfo) and SwiftDALSchema (tables, Migrator)
//     -> SwiftDALEntity (Entity, keys, TableDefinition; SQLite the default engine of its DDL)
//     -> SwiftDALConnection (Database, SQL, values, rows, errors; the pool core and the
//        engine seam), which depends on no engine
// The engines, each a module of its own over SwiftDALConnection that alone imports its C
// client (SwiftDAL re-exports SQLite's, the embedded default):
//   SwiftDALSQLite (DatabaseQueue, DatabasePool)     -> CSwiftDALSQLite (libsqlite3)
//   SwiftDALPostgres (PostgresPool, PostgresCluster) -> CSwiftDALPostgres (libpq)
//   SwiftDALMariaDB (MariaDBPool)                    -> CSwiftDALMariaDB (libmariadb)
// Tools: swiftdal-gen (entities and DALs from a schema, SwiftDALCodegen), swiftdal-demo.
// Tests/ holds the suites, SwiftDALTestSupport, the benchmark and the reliability tools.
import PackageDescription

let package = Package(
    name: "SwiftDAL",
    // Linux is where it is built and tested; macOS 15 is the first with the
    // Synchronization module (Atomic, Mutex) the connection layer uses.
    platforms: [.macOS(.v15)],
    products: [
        // The modules SwiftDAL re-exports are part of its product, so that the public API check
        // (.ci/api-check) compares them too.
        .library(
            name: "SwiftDAL",
            targets: ["SwiftDAL", "SwiftDALIDAL", "SwiftDALEntity", "SwiftDALSchema", "SwiftDALSQLite"]),
        .library(name: "SwiftDALConnection", targets: ["SwiftDALConnection"]),
        .library(name: "SwiftDALSQLite", targets: ["SwiftDALSQLite"]),
        .library(name: "SampleDAL", targets: ["SampleDAL"]),
        .library(name: "SwiftDALPostgres", targets: ["SwiftDALPostgres"]),
        .library(name: "SwiftDALMariaDB", targets: ["SwiftDALMariaDB"]),
        .executable(name: "swiftdal-demo", targets: ["swiftdal-demo"]),
        .executable(name: "swiftdal-gen", targets: ["swiftdal-gen"])
    ],
    targets: [
        .systemLibrary(
            name: "CSwiftDALSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The connection layer, by concern (Sources/SwiftDALConnection/): Access (Database,
        // transactions, observation), Concurrency (the pool core, call control, deadlines,
        // worker threads), Engine (the protocols every engine's connection and rows
        // implement), SQL (the SQL type, arguments, the lexicon), Values, Errors, Streaming,
        // Support. It depends on no engine (EngineSeamTests).
        .target(
            name: "SwiftDALConnection"
        ),
        // The SQLite engine, the embedded default (its connection, statements, rows, queue and
        // pool, errors, dialect, backup): libsqlite3, imported by SwiftDALSQLite only.
        .target(
            name: "SwiftDALSQLite",
            dependencies: ["CSwiftDALSQLite", "SwiftDALConnection"]
        ),
        // The PostgreSQL engine: libpq, imported by SwiftDALPostgres only. A service that
        // uses SQLite alone never builds (or needs) either.
        .systemLibrary(
            name: "CSwiftDALPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(
            name: "SwiftDALPostgres",
            dependencies: ["CSwiftDALPostgres", "SwiftDALConnection"]
        ),
        // The MariaDB engine: the MySQL C API of libmariadb (Connector/C), imported by
        // SwiftDALMariaDB only. A service that uses SQLite alone never builds (or needs) it.
        .systemLibrary(
            name: "CSwiftDALMariaDB",
            pkgConfig: "libmariadb",
            providers: [.apt(["libmariadb-dev"])]
        ),
        .target(
            name: "SwiftDALMariaDB",
            dependencies: ["CSwiftDALMariaDB", "SwiftDALConnection"]
        ),
        .target(
            name: "SwiftDALEntity",
            dependencies: ["SwiftDALConnection", "SwiftDALSQLite"]
        ),
        .target(
            name: "SwiftDALIDAL",
            dependencies: ["SwiftDALEntity", "SwiftDALConnection"]
        ),
        .target(
            name: "SwiftDALSchema",
            dependencies: ["SwiftDALEntity", "SwiftDALConnection"]
        ),
        .target(
            name: "SwiftDAL",
            dependencies: ["SwiftDALIDAL", "SwiftDALSchema", "SwiftDALEntity", "SwiftDALConnection", "SwiftDALSQLite"]
        ),
        .target(
            name: "SampleDAL",
            dependencies: ["SwiftDAL"]
        ),
        // Code generation: explicitly mapped entities and table DALs from a database's schema.
        .target(
            name: "SwiftDALCodegen",
            dependencies: ["SwiftDAL"]
        ),
        .executableTarget(
            name: "swiftdal-gen",
            dependencies: ["SwiftDALCodegen", "SwiftDAL", "SwiftDALConnection", "SwiftDALPostgres", "SwiftDALMariaDB"]
        ),
        .executableTarget(
            name: "swiftdal-demo",
            dependencies: ["SampleDAL", "SwiftDALPostgres", "SwiftDALMariaDB", "SwiftDALTestSupport"]
        ),
        // Not the library: the benchmark, its raw C baselines and its results live under
        // Tests/Benchmarks, the crash, fault and fuzz harnesses under Tests/Reliability
        // (executable targets of this package only: no product, so a service cannot depend
        // on them; `swift run -c release swiftdal-bench` and the .ci scripts build them).
        //
        // Benchmarks (issue: speed close to the C API): the raw C baseline and the harness.
        .target(
            name: "CRawBench",
            path: "Tests/Benchmarks/CRawBench",
            linkerSettings: [.linkedLibrary("sqlite3"), .linkedLibrary("pthread")]
        ),
        // The raw libpq baseline of the PostgreSQL benchmarks (`swiftdal-bench --engine
        // postgres`); libpq's headers come through the system-library target.
        .target(
            name: "CRawPostgresBench",
            dependencies: ["CRawBench", "CSwiftDALPostgres"],
            path: "Tests/Benchmarks/CRawPostgresBench",
            linkerSettings: [.linkedLibrary("pthread")]
        ),
        // The raw MariaDB Connector/C baseline (`swiftdal-bench --engine mariadb`); libmariadb's
        // headers come through the system-library target.
        .target(
            name: "CRawMariaDBBench",
            dependencies: ["CRawBench", "CSwiftDALMariaDB"],
            path: "Tests/Benchmarks/CRawMariaDBBench",
            linkerSettings: [.linkedLibrary("pthread")]
        ),
        .executableTarget(
            name: "swiftdal-bench",
            dependencies: [
                "CRawBench", "CRawPostgresBench", "CRawMariaDBBench", "CSwiftDALSQLite", "SwiftDAL",
                "SwiftDALPostgres", "SwiftDALMariaDB", "SwiftDALTestSupport"
            ],
            path: "Tests/Benchmarks/swiftdal-bench",
            exclude: ["results", "schema.sql"]
        ),
        // Reliability (crash consistency under SIGKILL).
        .executableTarget(
            name: "swiftdal-crash",
            dependencies: ["SwiftDAL"],
            path: "Tests/Reliability/swiftdal-crash"
        ),
        // Reliability (measurements of the concurrency core that need a process of their own:
        // run by the tests as a child process).
        .executableTarget(
            name: "swiftdal-probe",
            dependencies: ["SwiftDAL", "SwiftDALPostgres", "SwiftDALMariaDB", "SwiftDALTestSupport"],
            path: "Tests/Reliability/swiftdal-probe"
        ),
        // Reliability (out-of-memory and I/O-error sweeps).
        .target(
            name: "CSwiftDALFaults",
            path: "Tests/Reliability/CSwiftDALFaults",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .executableTarget(
            name: "swiftdal-faults",
            dependencies: ["CSwiftDALFaults", "SwiftDAL"],
            path: "Tests/Reliability/swiftdal-faults"
        ),
        // Reliability (libFuzzer targets; built with -sanitize=fuzzer,address -DFUZZING).
        .target(
            name: "CSwiftDALFuzzSupport",
            path: "Tests/Reliability/CSwiftDALFuzzSupport"
        ),
        .executableTarget(
            name: "swiftdal-fuzz",
            dependencies: ["CSwiftDALFuzzSupport", "SwiftDAL"],
            path: "Tests/Reliability/swiftdal-fuzz",
            exclude: ["corpus"]
        ),
        // Throwaway servers and temporary directories for the tests, the benchmark and the
        // demo's `--postgres`/`--mysql` without a URL: not a product, not library code.
        .target(
            name: "SwiftDALTestSupport",
            dependencies: ["SwiftDALConnection"],
            path: "Tests/SwiftDALTestSupport"
        ),
        .testTarget(
            name: "SwiftDALConnectionTests",
            dependencies: ["SwiftDALConnection", "SwiftDALSQLite", "CSwiftDALSQLite", "SwiftDALTestSupport"]
        ),
        // What the engine test targets share: the engines, the sample database on each,
        // servers with replicas, a view from outside a pool (psql).
        .target(
            name: "SwiftDALEngineTestSupport",
            dependencies: ["SampleDAL", "SwiftDAL", "SwiftDALPostgres", "SwiftDALMariaDB", "SwiftDALTestSupport"],
            path: "Tests/SwiftDALEngineTestSupport"
        ),
        // The IDAL/BaseDAL contract on every engine (SQLite, PostgreSQL, MariaDB): each test's
        // body runs on all three, against the real servers the tests start.
        .testTarget(
            name: "SwiftDALConformanceTests",
            dependencies: [
                "SwiftDALPostgres", "SwiftDALMariaDB", "SampleDAL", "SwiftDAL", "SwiftDALTestSupport",
                "SwiftDALEngineTestSupport"
            ],
            // The SQL each operation writes, per engine (SQLDialectTests' transcripts).
            exclude: ["Golden"]
        ),
        // PostgreSQL's own: connections, placeholders, types, clusters, failover, hung servers.
        .testTarget(
            name: "SwiftDALPostgresTests",
            dependencies: [
                "SwiftDALPostgres", "SwiftDALMariaDB", "SampleDAL", "SwiftDAL", "SwiftDALCodegen",
                "SwiftDALTestSupport",
                "SwiftDALEngineTestSupport"
            ]
        ),
        .testTarget(
            name: "SwiftDALMariaDBTests",
            dependencies: ["SwiftDALMariaDB", "SwiftDAL", "SampleDAL", "SwiftDALCodegen", "SwiftDALTestSupport"]
        ),
        .testTarget(
            name: "SwiftDALTests",
            dependencies: ["SampleDAL", "SwiftDAL", "SwiftDALCodegen", "SwiftDALTestSupport"]
        )
    ],
    swiftLanguageModes: [.v6]
)

// The same strictness for every Swift target (swift-log style): explicit Sendable checks
// and the upcoming features that Swift 6 mode does not yet turn on.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
