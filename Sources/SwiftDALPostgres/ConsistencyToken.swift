import SwiftDALConnection

/// Where a session's newest write is in a cluster's history: the cluster (its system
/// identifier), the timeline and the position in the write-ahead log (WAL) of the primary
/// that committed it. A replica serves the session only when it follows that timeline of
/// that system and has replayed past that position.
///
/// Opaque for callers: send ``description`` to a client (a header, a cookie) and read it
/// back with ``init(_:)`` on the next request, on any service instance. It is signed with
/// the cluster's ``ConsistencyTokenKey`` (HMAC-SHA256): a token that was tampered with,
/// forged, signed with another key or issued by another cluster is **ignored**, as if the
/// client had sent none (the session then reads what any read without a token may read).
/// ``init(_:)`` only checks the form; the cluster checks the signature when it uses it.
///
/// For example:
///
/// ```swift
/// response.headers["X-Consistency"] = session.token?.description
/// let token = request.headers["X-Consistency"].flatMap(ConsistencyToken.init)
/// ```
public struct ConsistencyToken: Sendable, Hashable, LosslessStringConvertible {
    /// The cluster's system identifier (`pg_control_system()`).
    let system: UInt64
    /// The timeline the primary was on when the write committed.
    let timeline: UInt32
    /// The WAL position, as PostgreSQL's `pg_lsn` (high 32 bits / low 32 bits).
    let position: UInt64
    /// The signature over the fields above (16 bytes of HMAC-SHA256).
    let signature: [UInt8]

    /// The token's form: a version byte, the fields, the signature.
    static let version: UInt8 = 1
    static let signatureLength = 16

    /// A token for a position, signed with `key`.
    init(system: UInt64, timeline: UInt32, position: UInt64, key: ConsistencyTokenKey) {
        self.system = system
        self.timeline = timeline
        self.position = position
        signature = key.signature(Self.signedBytes(system: system, timeline: timeline, position: position))
    }

    /// Reads a token written by ``description``: `nil` for anything else (garbage, a cut
    /// or padded text, an older form), never SQL. Whether its signature holds is checked by
    /// the cluster that uses it.
    public init?(_ description: String) {
        guard let bytes = Self.decodeBase64URL(description),
            bytes.count == 1 + 8 + 4 + 8 + Self.signatureLength, bytes[0] == Self.version
        else { return nil }
        system = Self.integer(bytes[1..<9])
        timeline = UInt32(Self.integer(bytes[9..<13]))
        position = Self.integer(bytes[13..<21])
        signature = Array(bytes[21...])
    }

    /// The token as text (base64url, 50 characters): send it to the client as it is.
    public var description: String {
        Self.encodeBase64URL(Self.signedBytes(system: system, timeline: timeline, position: position) + signature)
    }

    /// Whether `key` signed the token.
    func isSigned(by key: ConsistencyTokenKey) -> Bool {
        HMACSHA256.constantTimeEquals(
            key.signature(Self.signedBytes(system: system, timeline: timeline, position: position)), signature)
    }

    /// Whether this token names a later point of the same system's history than `other`:
    /// a later timeline, or a later position on the same one. Tokens of two systems are
    /// not ordered (`false` both ways).
    func isLater(than other: ConsistencyToken) -> Bool {
        guard system == other.system else { return false }
        return timeline != other.timeline ? timeline > other.timeline : position > other.position
    }

    private static func signedBytes(system: UInt64, timeline: UInt32, position: UInt64) -> [UInt8] {
        [version] + bigEndian(system) + bigEndian(UInt64(timeline)).suffix(4) + bigEndian(position)
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func encodeBase64URL(_ bytes: [UInt8]) -> String {
        var output = [UInt8]()
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<(chunk.count + 1) {
                output.append(alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of unpadded base64url text that re-encodes to itself exactly (so that no
    /// two texts name one token), or `nil`.
    private static func decodeBase64URL(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 128 else { return nil }
        var values = [UInt32]()
        for byte in text.utf8 {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt32(value))
        }
        guard values.count % 4 != 1 else { return nil }
        var bytes = [UInt8]()
        var index = 0
        while index < values.count {
            let group = values[index..<min(index + 4, values.count)]
            let value = group.enumerated().reduce(UInt32(0)) { $0 | $1.element << (18 - 6 * UInt32($1.offset)) }
            for position in 0..<(group.count - 1) {
                bytes.append(UInt8(truncatingIfNeeded: value >> (16 - 8 * position)))
            }
            index += 4
        }
        guard encodeBase64URL(bytes) == text else { return nil }
        return bytes
    }
}

/// The secret that signs a cluster's ``ConsistencyToken``s (HMAC-SHA256), so that a
/// client can carry a token but not forge or alter one.
///
/// ``PostgresClusterConfiguration/tokenSigningKey`` is ``processDefault`` unless set: a
/// random key made once per process, so a token issued by one service instance is
/// ignored by another, and by the same one after a restart. A service on several machines
/// gives every instance the same secret (from its configuration, not its code), at least
/// 16 bytes, and keeps it private.
///
/// For example:
///
/// ```swift
/// var configuration = PostgresClusterConfiguration()
/// configuration.tokenSigningKey = try ConsistencyTokenKey(secret: environment["CONSISTENCY_SECRET"] ?? "")
/// ```
public struct ConsistencyTokenKey: Sendable, CustomStringConvertible {
    /// The HMAC key, derived from the secret (so that the secret is never the key of
    /// anything else SwiftDAL signs).
    private let macKey: [UInt8]

    /// A key from `secret`, which must hold at least 16 bytes (``SwiftDAL/DALError/Code/invalidValue``
    /// otherwise).
    ///
    /// For example, `try ConsistencyTokenKey(secret: Array(secretData))`.
    public init(secret: some Collection<UInt8>) throws {
        guard secret.count >= 16 else {
            throw DALError(.invalidValue, "a token signing secret needs at least 16 bytes, not \(secret.count)")
        }
        self.init(checkedSecret: secret)
    }

    /// A key from the UTF-8 bytes of `secret` (at least 16 bytes).
    ///
    /// For example, `try ConsistencyTokenKey(secret: "a long random string from the configuration")`.
    public init(secret: String) throws {
        try self.init(secret: Array(secret.utf8))
    }

    private init(checkedSecret secret: some Collection<UInt8>) {
        macKey = HMACSHA256.authenticationCode(for: Array("SwiftDAL consistency token v1".utf8), key: secret)
    }

    /// A random key made once per process (see the type's documentation).
    ///
    /// For example, `configuration.tokenSigningKey = .processDefault`.
    public static let processDefault: ConsistencyTokenKey = {
        var generator = SystemRandomNumberGenerator()  // the kernel's CSPRNG (getrandom on Linux)
        return ConsistencyTokenKey(checkedSecret: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }()

    /// The first 16 bytes of the HMAC of `bytes`.
    func signature(_ bytes: [UInt8]) -> [UInt8] {
        Array(HMACSHA256.authenticationCode(for: bytes, key: macKey).prefix(ConsistencyToken.signatureLength))
    }

    /// Never the secret.
    public var description: String { "ConsistencyTokenKey(…)" }
}

/// A position in the WAL from PostgreSQL's text form of an LSN (`16/B374D848`), or `nil`.
func walPosition(ofLSN text: String) -> UInt64? {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, (1...8).contains(parts[0].count), (1...8).contains(parts[1].count),
        let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16)
    else { return nil }
    return high << 32 | low
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

    /// Moves the session on to `token`, never back: kept only when it names a later point
    /// of the same cluster's history (a later timeline, or a later position on the same
    /// one) than the session's token, or when the session has none. (Its signature is
    /// checked when a cluster uses it.)
    ///
    /// For example, `session.advance(to: tokenFromAnotherService)`.
    public func advance(to token: ConsistencyToken) {
        state.withLock { state in
            if state.newest.map({ token.isLater(than: $0) }) ?? true { state.newest = token }
        }
    }

    /// Moves the session on to `token`, a write this session committed on the cluster
    /// signing with `key`: as ``advance(to:)``, but a token the cluster could not use
    /// (another key's, another cluster's, forged) is replaced rather than kept, so that the
    /// session's next reads see its own write.
    func record(_ token: ConsistencyToken, signedBy key: ConsistencyTokenKey) {
        state.withLock { state in
            if let newest = state.newest, newest.system == token.system, !token.isLater(than: newest),
                newest.isSigned(by: key)
            {
                return  // a later point of this cluster's history is kept
            }
            state.newest = token
        }
    }

    /// Forgets the session's token (a cluster found it was not one it signed).
    func discardToken(_ token: ConsistencyToken) {
        state.withLock { state in
            if state.newest == token { state.newest = nil }
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
            if state.newest.map({ token.isLater(than: $0) || token.system != $0.system }) ?? true {
                state.newest = token
            }
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
