import Dispatch

/// The bounded hand-over between a stream's producer, which runs on the thread of the
/// connection it holds (an `async` call of its database, see ``PoolCore``), and its
/// consumer, an `async` iteration.
///
/// The producer blocks in ``send(_:)`` while `capacity` elements are on their way
/// (buffered, or taken by the consumer and not yet asked past): it never reads ahead of
/// the consumer by more than that. The consumer takes everything buffered at once, so
/// that a fast consumer pays one hand-over per batch rather than per element.
///
/// Stopping (the consumer's task is cancelled, its iterator is released, or the call's
/// time limit passes) wakes the producer, whose next `send` throws: its statement is
/// reset, its transaction rolled back, and its connection goes back to the pool. A
/// consumer waiting for elements gets the stop's error only then, once the transaction is
/// over (a released iterator has no one waiting: the producer ends on its own, at once).
package final class StreamChannel<Element: Sendable>: Sendable {
    private enum Phase {
        /// No element asked for yet: the producer has not started.
        case idle
        case running
        /// The producer returned (`nil`) or threw; the error is delivered once, after the
        /// buffered elements.
        case finished((any Error)?)
        /// The consumer stopped, or the call was stopped: nothing more is delivered, and a
        /// waiting consumer gets the error once the producer has ended.
        case stopped(any Error)
    }

    private struct State {
        var phase = Phase.idle
        var buffer: [Element] = []
        /// Elements the consumer took at its last take, which it may still be working
        /// through: they count against the capacity until it asks again.
        var taken = 0
        /// The consumer waiting for elements, if it is.
        var consumer: CheckedContinuation<[Element]?, any Error>?
        /// Whether the producer is blocked in `send`, waiting for room.
        var producerWaiting = false
        /// Elements the producer has sent so far.
        var produced = 0
        /// Whether the producer has ended (its connection is back in its pool).
        var producerEnded = false
        /// Why the stream was stopped, if it was.
        var stopReason: CallControl.Reason?
        /// The producer's task while it waits for a connection or runs.
        var producer: Task<Void, Never>?
    }

    /// What `send` does after looking at the state.
    private enum SendAction: Sendable {
        case sent, wait
        case handOver(CheckedContinuation<[Element]?, any Error>, [Element])
        case stop(any Error)
    }

    private enum Outcome: Sendable {
        case batch([Element])
        case end
        case failure(any Error)
    }

    /// The most elements on their way at once (see the type's documentation).
    package let capacity: Int
    /// Not a `Mutex`: the producer and the consumer contend for it all the time (see
    /// ``Locked``).
    private let state = Locked(State())
    /// Signalled once for each wait of the producer (`producerWaiting` set to false).
    private let room = DispatchSemaphore(value: 0)
    /// The producer's call: cancelling the consumer stops it, its time limit stops us.
    private let control = CallControl()
    private let database: any DatabaseReader
    private let produce: @Sendable (Database, StreamChannel<Element>) throws -> Void

    package init(
        capacity: Int, database: any DatabaseReader,
        produce: @escaping @Sendable (Database, StreamChannel<Element>) throws -> Void
    ) {
        self.capacity = max(1, capacity)
        self.database = database
        self.produce = produce
        control.onStop { [weak self] reason in
            // The time limit passed (a cancellation stops the channel first).
            self?.stop(reason)
        }
    }

    /// Elements the producer has sent so far (for tests of the bound).
    package var producedCount: Int { state.withLock { $0.produced } }

    // MARK: The producer's side (SwiftDAL's thread)

    /// Hands `element` to the consumer, waiting while `capacity` elements are on their
    /// way; throws (`CancellationError`, or the time limit's error) once the stream is
    /// stopped.
    package func send(_ element: Element) throws {
        while true {
            let action = state.withLock { state -> SendAction in
                if case .stopped(let error) = state.phase { return .stop(error) }
                guard state.buffer.count + state.taken < capacity else {
                    state.producerWaiting = true
                    return .wait
                }
                state.buffer.append(element)
                state.produced += 1
                guard let consumer = state.consumer else { return .sent }
                state.consumer = nil
                let batch = state.buffer
                state.buffer = []
                state.taken = batch.count
                return .handOver(consumer, batch)
            }
            switch action {
            case .sent: return
            case .handOver(let consumer, let batch):
                consumer.resume(returning: batch)
                return
            case .stop(let error): throw error
            case .wait: room.wait()
            }
        }
    }

    /// Records the producer's end: the consumer gets the buffered elements, then the end
    /// or `error`; after a stop, the stop's error (a time limit's saying whether the
    /// producer's connection was closed).
    private func finish(_ error: (any Error)?, connectionClosed: Bool) {
        let (consumer, failure) = state.withLock {
            state -> (CheckedContinuation<[Element]?, any Error>?, (any Error)?) in
            state.producerEnded = true
            state.producer = nil
            switch state.phase {
            case .stopped(let stopError):
                defer { state.consumer = nil }
                // The stop's error was written before the producer ended: whether its
                // transaction was rolled back or its connection closed (a hung server) is
                // known only now.
                var delivered = stopError
                if connectionClosed, let reason = state.stopReason, reason.saysWhetherRolledBack {
                    delivered = reason.error(connectionClosed: true)
                    state.phase = .stopped(delivered)
                }
                return (state.consumer, delivered)
            case .running:
                guard state.buffer.isEmpty, let consumer = state.consumer else {
                    state.phase = .finished(error)
                    return (nil, nil)
                }
                state.consumer = nil
                state.phase = .finished(nil)
                return (consumer, error)
            case .idle, .finished:
                return (nil, nil)
            }
        }
        guard let consumer else { return }
        if let failure { consumer.resume(throwing: failure) } else { consumer.resume(returning: nil) }
    }

    /// Starts the producer: an `async` call of the database (it waits for a connection in
    /// line, holding no thread, then runs on the connection's thread), in a read access
    /// (one snapshot, read-only) under this channel's control, with the consumer's time
    /// limit. Its task inherits the consumer's task-local values (a cluster's consistency
    /// session).
    private func start() {
        let limit = CallLimits.current
        let task = Task { [self] in
            do {
                try await database.perform(writing: false) { [self] in
                    // The pool knows the call by its own control (`perform`'s): a shutdown
                    // stopping it (`.shutDown`), or a cancellation, stops the stream, whose
                    // statement runs under ours. Its time limit is the stream's own, which
                    // ours keeps: a second stop racing ours there once made the error say
                    // "rolled back" on a hung server.
                    currentCallControl()?.onStop { [weak self] reason in
                        if case .timedOut = reason { return }
                        self?.stop(reason)
                    }
                    try ThreadAccess.running(under: control) {
                        let read = { try self.database.read { db in try self.produce(db, self) } }
                        guard let limit else { return try read() }
                        try withDatabaseTimeout(limit, operation: read)
                    }
                }
                finish(nil, connectionClosed: false)
            } catch {
                // Whether the read's connection was closed as it stopped (its rollback
                // included), as the access saw it before giving the connection back.
                finish(error, connectionClosed: control.closedConnection)
            }
        }
        let stopped = state.withLock { state -> Bool in
            guard !state.producerEnded else { return false }
            state.producer = task
            if case .stopped = state.phase { return true }
            return false
        }
        if stopped { task.cancel() }
    }

    // MARK: The consumer's side

    /// The next elements (at least one), or `nil` at the end; starts the producer at the
    /// first call. `spare` is an emptied array whose storage the producer may reuse.
    package func take(reusing spare: consuming [Element]) async throws -> [Element]? {
        var spare = spare
        spare.removeAll(keepingCapacity: true)
        let (outcome, launch, wake) = state.withLock { state -> (Outcome?, Bool, Bool) in
            state.taken = 0
            let outcome = Self.ready(&state, reusing: &spare)
            var launch = false
            if case .idle = state.phase {
                state.phase = .running
                launch = true
            }
            let wake = state.producerWaiting && state.buffer.count + state.taken < capacity
            if wake { state.producerWaiting = false }
            return (outcome, launch, wake)
        }
        if wake { room.signal() }
        if launch { start() }
        if let outcome { return try Self.deliver(outcome) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (consumer: CheckedContinuation<[Element]?, any Error>) in
                var none = [Element]()
                let outcome = state.withLock { state -> Outcome? in
                    if let outcome = Self.ready(&state, reusing: &none) { return outcome }
                    state.consumer = consumer
                    return nil
                }
                guard let outcome else { return }
                consumer.resume(with: Result { try Self.deliver(outcome) })
            }
        } onCancel: {
            stop(.cancelled)
        }
    }

    /// What the consumer gets now without waiting, if anything: the buffered elements,
    /// else the end, the producer's error (once) or the stop's.
    private static func ready(_ state: inout State, reusing spare: inout [Element]) -> Outcome? {
        if !state.buffer.isEmpty {
            let batch = state.buffer
            state.buffer = spare
            spare = []
            state.taken = batch.count
            return .batch(batch)
        }
        switch state.phase {
        case .idle, .running: return nil
        case .finished(nil): return .end
        case .finished(let error?):
            state.phase = .finished(nil)
            return .failure(error)
        case .stopped(let error):
            // Not before the producer has ended: its transaction is over then.
            return state.producerEnded ? .failure(error) : nil
        }
    }

    private static func deliver(_ outcome: Outcome) throws -> [Element]? {
        switch outcome {
        case .batch(let batch): return batch
        case .end: return nil
        case .failure(let error): throw error
        }
    }

    /// Stops the stream for `reason`: drops what is buffered, wakes a waiting producer
    /// (whose `send` then throws), withdraws a producer still waiting for a connection and,
    /// when the producer may be inside a statement, interrupts it. A waiting consumer gets
    /// the error once the producer has ended. Does nothing once the stream has ended.
    package func stop(_ reason: CallControl.Reason) {
        let error = reason.error
        let (consumer, producerWaiting, producer, stopped) = state.withLock {
            state -> (CheckedContinuation<[Element]?, any Error>?, Bool, Task<Void, Never>?, Bool) in
            switch state.phase {
            case .finished, .stopped: return (nil, false, nil, false)
            case .idle, .running: break
            }
            let started = { if case .running = state.phase { return true } else { return false } }()
            state.phase = .stopped(error)
            state.stopReason = reason
            state.buffer = []
            // A consumer waits for the producer's end (unless there is no producer).
            var consumer: CheckedContinuation<[Element]?, any Error>?
            if !started || state.producerEnded {
                consumer = state.consumer
                state.consumer = nil
            }
            let waiting = state.producerWaiting
            state.producerWaiting = false
            return (consumer, waiting, state.producer, true)
        }
        guard stopped else { return }
        consumer?.resume(throwing: error)
        producer?.cancel()  // still in line for a connection: it leaves the line
        if producerWaiting {
            // Blocked between two rows, in no statement: waking it is enough (an interrupt
            // or a PostgreSQL cancel request would only race with its rollback).
            room.signal()
        } else {
            control.stop(reason)
        }
    }
}
