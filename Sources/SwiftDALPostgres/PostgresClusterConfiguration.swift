import SwiftDALConnection

/// How a ``PostgresCluster`` routes and checks its hosts.
///
/// For example:
///
/// ```swift
/// var configuration = PostgresClusterConfiguration()
/// configuration.maximumReplicaLag = .bytes(1 << 20)
/// configuration.tokenSigningKey = try ConsistencyTokenKey(secret: secretFromTheEnvironment)
/// ```
public struct PostgresClusterConfiguration: Sendable {
    /// How far behind a replica may be and still serve reads without a token.
    ///
    /// For example, `configuration.maximumReplicaLag = .time(.seconds(2))`.
    public enum ReplicaLag: Sendable, Hashable {
        /// At most this many bytes of the primary's write-ahead log not yet replayed.
        case bytes(Int64)
        /// At most this stale (see ``PostgresClusterConfiguration/maximumStaleness``): a
        /// tighter bound than that one.
        case time(Duration)
    }

    /// The settings of each host's pool (the primary's and each replica's).
    public var pool = PostgresConfiguration()
    /// A replica further behind leaves the rotation until it catches up (16 MiB).
    public var maximumReplicaLag = ReplicaLag.bytes(16 << 20)
    /// How stale a replica may be and still serve reads without a token, always (5 s): a
    /// replica is as stale as the time since the newest health check whose reading of the
    /// primary's WAL position it has replayed. That stays right when its upstream is gone
    /// (a primary that died, a network cut): no more of the primary's positions reach it,
    /// and its staleness grows from the last one it had, whatever its lag in bytes says.
    /// When no primary answers at all, the replicas leave the rotation once this bound
    /// has passed (a read then goes to the primary, and fails if none answers).
    public var maximumStaleness: Duration = .seconds(5)
    /// How often each replica's health and lag are checked.
    public var healthCheckInterval: Duration = .milliseconds(250)
    /// How long a health check waits for a host's answer. A replica that does not answer
    /// in time (a hung server accepts connections and never answers) leaves the rotation,
    /// and the reads waiting on it are stopped: those that had no answer yet run elsewhere.
    /// The checks of all hosts run at once, each on a connection of its own: one hung host
    /// never delays the others' checks.
    public var healthCheckTimeout: Duration = .seconds(2)
    /// Whether reads in a ``ConsistencySession`` honour its token (turn off only to see,
    /// in a test, the stale read it prevents).
    public var readYourWrites = true
    /// The key that signs the ``ConsistencyToken``s this cluster issues, and checks the
    /// ones it is given: a random key per process unless set (see ``ConsistencyTokenKey``).
    /// Give every instance of a service the same one.
    public var tokenSigningKey = ConsistencyTokenKey.processDefault

    /// The defaults above.
    ///
    /// For example, `let cluster = try PostgresCluster(primary: url, replicas: [r1, r2], configuration: .init())`.
    public init() {}
}

/// What a ``PostgresCluster`` last learned of a replica.
///
/// For example, `cluster.replicaStatuses.filter(\.isInRotation).count`.
public struct ReplicaStatus: Sendable, Hashable {
    /// The replica's host, port and database.
    public let name: String
    /// Whether reads may go to it now.
    public let isInRotation: Bool
    /// The bytes of WAL it had not replayed at the last check (`nil`: unknown).
    public let lagBytes: Int64?
    /// How stale it was at the last check (see ``PostgresClusterConfiguration/maximumStaleness``;
    /// `nil`: unknown).
    public let staleness: Duration?
    /// The timeline it receives WAL on (`nil`: unknown, or it follows no primary).
    public let timeline: UInt32?
    /// Why it is out of the rotation, when it is.
    public let problem: String?
}
