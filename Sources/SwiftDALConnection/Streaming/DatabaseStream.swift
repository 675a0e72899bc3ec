/// The rows of a query (``Row``) or the entities of a table DAL, delivered one at a time
/// to a `for try await` loop with bounded memory: for exports, batch jobs and responses
/// streamed over large tables. Made by ``DatabaseReader/stream(_:)`` and by a table DAL's
/// `stream(condition:orderBy:)`.
///
/// - **One snapshot.** Iterating runs the query once, in a read access of its own (a
///   read-only transaction: one consistent snapshot), on a SwiftDAL queue of its own
///   (never Swift's cooperative pool), holding one connection until the loop ends. Each
///   iteration of the sequence runs the query again; a sequence never iterated runs
///   nothing. On a ``DatabasePool`` it reads from a reader; on a PostgreSQL cluster, from
///   a replica (within the current consistency session).
/// - **Bounded memory, backpressure.** The reading side stays at most ``bufferSize``
///   elements ahead of your loop: when that many are waiting, it stops reading until
///   the loop asks for more. SQLite steps its statement; PostgreSQL reads through a
///   server-side cursor, ``bufferSize`` rows per `FETCH`, never the whole result.
/// - **Early stop and cancellation.** Leaving the loop (`break`, `return`, a thrown
///   error), or releasing the iterator, stops the query: its statement is reset, its
///   transaction rolled back and its connection goes back to the pool. Cancelling the
///   task that iterates does the same, and the loop throws `CancellationError`.
/// - **Errors** the query meets midway (a typed ``SQLiteError`` or `PostgresError`, a
///   ``DALError``) are thrown by the loop after the elements read before them.
/// - **Time limits.** A ``withDatabaseTimeout(_:isolation:operation:)`` around the loop (or
///   ``Configuration/callTimeout``) bounds the whole iteration, from its first element to
///   its last, including the time your loop spends on each element (the connection is
///   held all that time): past it, the loop throws ``DALError/Code/timeout``. Give a long
///   export a limit of its own.
///
/// While the loop runs, the stream holds one of the database's connections: on a
/// ``DatabaseQueue`` (one connection), or a pool whose other connections are all busy,
/// a call to the same database inside the loop waits for a connection that only the end
/// of the loop frees. Finish the loop first, or use a pool with connections to spare.
///
/// For example:
///
/// ```swift
/// for try await row in pool.stream("SELECT id, email FROM users WHERE age > \(30)") {
///     try await export(id: row.decode(Int64.self, at: 0), email: row.decode(String.self, at: 1))
/// }
/// ```
public struct DatabaseStream<Element: Sendable>: AsyncSequence, Sendable {
    /// What the loop throws: the engine's typed errors, ``DALError``, `CancellationError`.
    ///
    /// For example, `catch let error as SQLiteError { … }` around the loop.
    public typealias Failure = any Error

    /// How far the reading side may run ahead of the loop, in elements (and the rows of
    /// one PostgreSQL `FETCH`): the most elements a stream holds at once.
    ///
    /// For example, `let held = DatabaseStream<UserInfo>.bufferSize  // 256`.
    public static var bufferSize: Int { 256 }

    private let database: any DatabaseReader
    private let capacity: Int
    private let produce: @Sendable (Database, StreamChannel<Element>) throws -> Void

    /// A stream whose producer runs `produce` in a read access of `database`, handing each
    /// element to the channel (``StreamChannel/send(_:)``); for the DAL layer.
    package init(
        database: any DatabaseReader, capacity: Int = Self.bufferSize,
        produce: @escaping @Sendable (Database, StreamChannel<Element>) throws -> Void
    ) {
        self.database = database
        self.capacity = capacity
        self.produce = produce
    }

    /// An iterator that runs the query at its first `next()`.
    ///
    /// For example, `var rows = stream.makeAsyncIterator(); let first = try await rows.next()`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(StreamChannel(capacity: capacity, database: database, produce: produce))
    }

    /// Iterates a ``DatabaseStream``; releasing it (with every copy) stops the query.
    ///
    /// For example, `while let user = try await iterator.next() { … }`.
    public struct Iterator: AsyncIteratorProtocol {
        private let channel: StreamChannel<Element>
        private let lifetime: Lifetime
        /// The elements taken from the channel, delivered from `index` on.
        private var batch: [Element] = []
        private var index = 0
        private var isDone = false

        /// Stops the stream when the iterator's last copy is released.
        private final class Lifetime: Sendable {
            let channel: StreamChannel<Element>

            init(_ channel: StreamChannel<Element>) { self.channel = channel }

            deinit { channel.stop(.cancelled) }
        }

        init(_ channel: StreamChannel<Element>) {
            self.channel = channel
            lifetime = Lifetime(channel)
        }

        /// Elements the reading side has produced so far (tests compare it with the
        /// elements consumed, to check the bound).
        package var producedCount: Int { channel.producedCount }

        /// The next element, or `nil` at the end; throws the query's error, or
        /// `CancellationError` when the iterating task is cancelled.
        ///
        /// For example, `let first = try await iterator.next()`.
        public mutating func next() async throws -> Element? {
            try await next(isolation: nil)
        }

        /// ``next()`` from an actor-isolated loop (what `for try await` calls): the
        /// iterator stays in the caller's isolation.
        ///
        /// For example, `let first = try await iterator.next(isolation: #isolation)`.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Element? {
            if index < batch.count {
                if Task.isCancelled { return try stopCancelled() }
                defer { index += 1 }
                return batch[index]
            }
            return try await refill(isolation: actor)
        }

        private mutating func stopCancelled() throws -> Element? {
            isDone = true
            batch = []
            channel.stop(.cancelled)
            throw CancellationError()
        }

        /// Takes the next batch from the channel (waiting for one) and returns its first
        /// element.
        private mutating func refill(isolation actor: isolated (any Actor)?) async throws -> Element? {
            guard !isDone else { return nil }
            if Task.isCancelled { return try stopCancelled() }
            var spare = [Element]()
            swap(&spare, &batch)
            index = 0
            do {
                guard let next = try await channel.take(reusing: spare), !next.isEmpty else {
                    isDone = true
                    return nil
                }
                batch = next
                index = 1
                return next[0]
            } catch {
                isDone = true
                throw error
            }
        }
    }
}

@available(*, unavailable)
extension DatabaseStream.Iterator: Sendable {}

extension DatabaseReader {
    /// The rows of `query` as a ``DatabaseStream``: read in a read-only access of their
    /// own (one snapshot), at most ``DatabaseStream/bufferSize`` rows ahead of the loop,
    /// each a copied ``Row``. See ``DatabaseStream`` for early stops, cancellation and
    /// time limits.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await row in pool.stream("SELECT * FROM events WHERE day = \(day) ORDER BY id") {
    ///     try await sink.write(row)
    /// }
    /// ```
    public func stream(_ query: SQL) -> DatabaseStream<Row> {
        DatabaseStream(database: self) { db, channel in
            try db.streamRows(query, fetchSize: channel.capacity) { row in try channel.send(try row.copy()) }
        }
    }

    /// ``stream(_:)`` for SQL text with explicit arguments.
    ///
    /// For example, `for try await row in pool.stream(sql: "SELECT * FROM t WHERE a = ?", arguments: [1]) { … }`.
    public func stream(sql: String, arguments: StatementArguments = StatementArguments()) -> DatabaseStream<Row> {
        stream(SQL(sql: sql, arguments: arguments))
    }
}
