import SwiftDALConnection

/// A position in the primary's write-ahead log: what a reader needs to have replayed to
/// see a write. Opaque for callers: send ``description`` to a client (a header, a cookie)
/// and read it back with ``init(_:)`` on the next request, on any service instance.
///
/// For example:
///
/// ```swift
/// response.headers["X-Consistency"] = session.token?.description
/// let token = request.headers["X-Consistency"].flatMap(ConsistencyToken.init)
/// ```
public struct ConsistencyToken: Sendable, Hashable, Comparable, LosslessStringConvertible {
    /// The WAL position, as PostgreSQL's `pg_lsn` (high 32 bits / low 32 bits).
    let position: UInt64

    init(position: UInt64) {
        self.position = position
    }

    /// Reads a token written by ``description`` (or PostgreSQL's `X/Y` LSN text); `nil`
    /// for anything else, so that a tampered or foreign header is ignored, never SQL.
    public init?(_ description: String) {
        guard let position = Self.position(ofLSN: description) else { return nil }
        self.position = position
    }

    /// PostgreSQL's text form of the position (`16/B374D848`).
    public var description: String {
        String(position >> 32, radix: 16, uppercase: true) + "/"
            + String(position & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    /// Whether `left` is an earlier WAL position than `right` (a session keeps the later of two).
    public static func < (left: ConsistencyToken, right: ConsistencyToken) -> Bool { left.position < right.position }

    /// The position of an LSN in PostgreSQL's text form, or `nil`.
    static func position(ofLSN text: String) -> UInt64? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...8).contains(parts[0].count), (1...8).contains(parts[1].count),
            let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16)
        else { return nil }
        return high << 32 | low
    }
}

// swift-format-ignore: AmbiguousTrailingClosureOverload
// (`run` has a synchronous and an async form, like TaskLocal.withValue: the context chooses.)
/// The reads-after-writes state of one caller (a request, a user's session): the
/// newest write it made or was told about. Inside ``run(_:)-5b11m`` every read of a
/// ``PostgresCluster`` goes only to a replica that has replayed that write (or to the
/// primary), and every write moves the session on.
///
/// For example, in a request handler:
///
/// ```swift
/// let session = ConsistencySession(token: request.headers["X-Consistency"].flatMap(ConsistencyToken.init))
/// let user = try await session.run {
///     try await users.insert(newUser)
///     return try await users.findByEmail(newUser.email)   // never a stale replica
/// }
/// response.headers["X-Consistency"] = session.token?.description
/// ```
public final class ConsistencySession: Sendable {
    private struct State {
        var newest: ConsistencyToken?
        /// When the newest write whose WAL position is not known yet committed (monotonic
        /// nanoseconds): until a position read after it is known, reads go to the primary.
        var pendingWriteSince: UInt64?
    }

    private let state: Locked<State>

    /// A session that must see at least what `token` names (`nil`: nothing yet).
    ///
    /// For example, `let session = ConsistencySession(token: nil)`.
    public init(token: ConsistencyToken? = nil) {
        state = Locked(State(newest: token))
    }

    /// The newest write this session must see: send it back to the client.
    public var token: ConsistencyToken? { state.withLock { $0.newest } }

    /// Moves the session on to `token` (never back).
    ///
    /// For example, `session.advance(to: tokenFromAnotherService)`.
    public func advance(to token: ConsistencyToken) {
        state.withLock { state in
            if state.newest.map({ $0 < token }) ?? true { state.newest = token }
        }
    }

    /// Records a committed write whose WAL position could not be read (monotonic time).
    func markPendingWrite(since time: UInt64) {
        state.withLock { state in
            state.pendingWriteSince = max(state.pendingWriteSince ?? 0, time)
        }
    }

    /// When the newest write of unknown position committed, if there is one.
    var pendingWriteSince: UInt64? { state.withLock { $0.pendingWriteSince } }

    /// Settles the pending writes up to `since` with `token`, a primary position read after them.
    func resolvePendingWrite(since time: UInt64, with token: ConsistencyToken) {
        state.withLock { state in
            if state.newest.map({ $0 < token }) ?? true { state.newest = token }
            if let pending = state.pendingWriteSince, pending <= time { state.pendingWriteSince = nil }
        }
    }

    /// The session of the code running now, if any.
    @TaskLocal public static var current: ConsistencySession?

    /// Runs `body` with this session as ``current`` (synchronous code).
    ///
    /// For example, `try session.run { try users.findById(id) }`.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        try Self.$current.withValue(self, operation: body)
    }

    /// Runs `body` with this session as ``current`` (async code; the cluster carries it
    /// to its own threads).
    ///
    /// For example, `try await session.run { try await users.findById(id) }`.
    public func run<T>(_ body: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self, operation: body)
    }
}
