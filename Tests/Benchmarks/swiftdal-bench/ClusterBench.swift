import Foundation
import SwiftDAL
import SwiftDALPostgres
import SwiftDALTestSupport

// swiftdal-bench --engine cluster: what replicas give a read-heavy service (issue 15).
//
// A throwaway primary (fsync on) and two hot standbys fed by streaming replication, all
// on this machine. Two measurements, each repeated with the order turning:
//
// 1. The W8 mix (readers doing per-call lookups while one writer inserts in batches of
//    100) on the primary alone (a PostgresPool) and on the primary plus two replicas (a
//    PostgresCluster: reads to the replicas in turn, writes to the primary).
// 2. The routing cost per read: one thread of per-call lookups on a pool of one replica,
//    on the cluster, and on the cluster inside a ConsistencySession holding a token (each
//    read then checks the replica's replay position first).
//
// Every server shares the same cores, so replicas add no hardware here: the first
// figure shows what the routing does on one machine, not what more machines give.

/// One measurement's result, for the report and the JSON.
struct ClusterMeasurement: Codable {
    var setup: String
    var readers: Int
    var readsPerSecond: Double
    var writesPerSecond: Double
    var errors: Int64
}

/// The routing cost: microseconds per read, median of the rounds.
struct RoutingMeasurement: Codable {
    var setup: String
    var microsecondsPerRead: Double
}

func runClusterBench(_ options: BenchOptions) throws {
    guard options.postgresURL == nil else {
        throw BenchError("--engine cluster starts its own primary and standbys: it does not take --postgres-url")
    }
    FileHandle.standardError.write(Data("starting a throwaway primary and two standbys…\n".utf8))
    var settings = ["fsync": "on", "wal_keep_size": "256MB"]
    settings.merge(options.serverSettings) { $1 }
    let primary = try PostgresServer.start(settings: settings)
    defer { primary.stop() }
    let database = try primary.makeDatabaseName()
    let baseURL = primary.connectionString(database: database)
    let setup = try PostgresPool(url: baseURL)
    try setup.write { db in _ = try db.execute(sql: "CREATE SCHEMA IF NOT EXISTS \(benchSchema)") }
    try setup.close()
    let scale = PostgresScale(rows: options.rows)
    let url = try benchConnectionString(baseURL)
    try preparePostgresTable(url, scale: scale, populated: true)
    let standbys = try (0..<2).map { _ in try primary.makeStandby() }
    defer { for standby in standbys { standby.stop() } }
    let replicaURLs = try standbys.map { try benchConnectionString($0.connectionString(database: database)) }
    let (version, _) = try serverDescription(url)

    func makeCluster(connections: Int) throws -> PostgresCluster {
        var configuration = PostgresClusterConfiguration()
        configuration.pool.maximumConnections = connections
        let cluster = try PostgresCluster(primary: url, replicas: replicaURLs, configuration: configuration)
        // Wait (up to a minute) until both replicas have caught up and joined the rotation.
        let joined = waitFor(attempts: 2400, pause: 25_000, until: { cluster.checkHealth().allSatisfy(\.isInRotation) })
        guard joined else {
            throw BenchError("the replicas did not join the rotation: \(cluster.checkHealth().compactMap(\.problem))")
        }
        // Reads really go to the standbys.
        let onStandby = try cluster.read { db in try db.fetchScalar(Bool.self, "SELECT pg_is_in_recovery()") }
        guard onStandby == true else { throw BenchError("a cluster read did not reach a standby") }
        return cluster
    }

    let workloads = PostgresSwiftWorkloads<ExplicitUser>(url: url, scale: scale)
    /// Removes the rows a W8 run inserted, so that every run inserts the same rows.
    func resetTable() throws {
        let pool = try PostgresPool(url: url)
        try pool.write { db in _ = try db.execute("DELETE FROM users WHERE id > \(scale.rows)") }
        try pool.close()
    }
    var mixes = [ClusterMeasurement]()
    let rounds = max(1, min(options.runs, 5))
    for readers in [4, 8] {
        var alone = [PostgresConcurrentResult]()
        var replicated = [PostgresConcurrentResult]()
        for round in 0..<rounds {
            FileHandle.standardError.write(Data("cluster W8 \(readers) readers, round \(round + 1)/\(rounds)…\n".utf8))
            for variant in round % 2 == 0 ? [0, 1] : [1, 0] {
                if variant == 0 {
                    var configuration = PostgresConfiguration()
                    configuration.maximumConnections = readers + 1
                    let pool = try PostgresPool(url: url, configuration: configuration)
                    alone.append(try workloads.w8Concurrent(on: pool, readers: readers))
                    try pool.close()
                    try resetTable()
                } else {
                    let cluster = try makeCluster(connections: readers + 1)
                    replicated.append(try workloads.w8Concurrent(on: cluster, readers: readers))
                    try cluster.close()
                    try resetTable()
                }
            }
        }
        for (name, results) in [("primary alone", alone), ("primary + 2 replicas", replicated)] {
            let reads = results.map { Double(scale.concurrentLookups * Int64(readers)) / $0.readSeconds }.sorted()
            let writes = results.map { Double(scale.concurrentWrites) / $0.writeSeconds }.sorted()
            mixes.append(
                ClusterMeasurement(
                    setup: name, readers: readers, readsPerSecond: reads[reads.count / 2],
                    writesPerSecond: writes[writes.count / 2], errors: results.reduce(0) { $0 + $1.errors }))
        }
    }

    // Routing cost: one thread, per-call lookups.
    let lookups = Int(min(scale.lookups, 5_000))
    func perRead(_ database: any DatabaseWriter, session: ConsistencySession?) throws -> Double {
        let users = BaseDAL<ExplicitUser>(database: database)
        var sequence = IDSequence(seed: 7, count: scale.rows)
        let clock = ContinuousClock()
        let start = clock.now
        var found = 0
        func lookUp() throws {
            for _ in 0..<lookups where try users.findById(sequence.next()) != nil { found += 1 }
        }
        if let session { try session.run { try lookUp() } } else { try lookUp() }
        guard found == lookups else { throw BenchError("routing: \(lookups - found) lookups found nothing") }
        return (clock.now - start).seconds / Double(lookups) * 1_000_000
    }
    var direct = [Double]()
    var routed = [Double]()
    var consistent = [Double]()
    let replicaPool = try PostgresPool(url: replicaURLs[0])
    let cluster = try makeCluster(connections: 2)
    // A token from a real write: each read in the session checks the replica has replayed it.
    let session = ConsistencySession()
    try session.run { try cluster.write { db in _ = try db.execute(sql: "UPDATE users SET age = age WHERE id = 1") } }
    guard session.token != nil else { throw BenchError("the cluster gave no consistency token for a write") }
    _ = try perRead(replicaPool, session: nil)  // warm both
    _ = try perRead(cluster, session: nil)
    for round in 0..<max(3, rounds) {
        FileHandle.standardError.write(Data("routing cost, round \(round + 1)…\n".utf8))
        let order = [0, 1, 2].map { ($0 + round) % 3 }
        for variant in order {
            switch variant {
            case 0: direct.append(try perRead(replicaPool, session: nil))
            case 1: routed.append(try perRead(cluster, session: nil))
            default: consistent.append(try perRead(cluster, session: session))
            }
        }
    }
    try replicaPool.close()
    try cluster.close()
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let routing = [
        RoutingMeasurement(setup: "a pool on one replica", microsecondsPerRead: median(direct)),
        RoutingMeasurement(setup: "the cluster (replicas in turn)", microsecondsPerRead: median(routed)),
        RoutingMeasurement(setup: "the cluster, read-your-writes session", microsecondsPerRead: median(consistent))
    ]

    var lines = [
        "PostgreSQL \(version): a primary and 2 hot standbys (streaming replication) on this machine, fsync on; "
            + "\(scale.rows) rows; W8: \(scale.concurrentLookups) per-call lookups per reader while "
            + "\(scale.concurrentWrites) rows are inserted in transactions of \(scale.concurrentBatch); median of \(rounds) rounds",
        "",
        "W8 mix                      readers    reads/s   writes/s  errors"
    ]
    for row in mixes {
        lines.append(
            row.setup.padding(toLength: 28, withPad: " ", startingAt: 0)
                + String(
                    format: "%7d %10.0f %10.0f %7lld", row.readers, row.readsPerSecond, row.writesPerSecond, row.errors)
        )
    }
    lines += [
        "", "routing cost (one thread, \(lookups) per-call lookups, median of \(direct.count) rounds)   µs per read"
    ]
    for row in routing {
        lines.append(
            row.setup.padding(toLength: 50, withPad: " ", startingAt: 0)
                + String(format: "%8.1f", row.microsecondsPerRead))
    }
    lines.append(
        String(
            format: "routing: %+.1f µs per read; read-your-writes check: %+.1f µs per read",
            median(routed) - median(direct), median(consistent) - median(routed)))
    print(lines.joined(separator: "\n"))
    if let path = options.jsonPath {
        struct Report: Codable {
            var server: String
            var rows: Int64
            var mixes: [ClusterMeasurement]
            var routing: [RoutingMeasurement]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Report(server: version, rows: scale.rows, mixes: mixes, routing: routing))
            .write(to: URL(fileURLWithPath: path))
    }
}
