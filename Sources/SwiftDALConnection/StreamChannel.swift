import Dispatch

/// The bounded hand-over between a stream's producer, which runs on a SwiftDAL queue of
/// its own holding one connection, and its consumer, an `async` iteration.
///
/// The producer blocks in ``send(_:)`` while `capacity` elements are on their way
/// (buffered, or taken by the consumer and not yet asked past): it never reads ahead of
/// the consumer by more than that. The consumer takes everything buffered at once, so
/// that a fast consumer pays one hand-over per batch rather than per element.
///
/// Stopping (the consumer's task is cancelled, its iterator is released, or the call's
/// time limit passes) wakes the producer, whose next `send` throws: its statement is
/// reset, its transaction rolled back, and its connection goes back to the pool.
package final class StreamChannel<Element: Sendable>: Sendable {
    private enum Phase {
        /// No element asked for yet: the producer has not started.
        case idle
        case running
        /// The producer returned (`nil`) or threw; the error is delivered once, after the
        /// buffered elements.
        case finished((any Error)?)
        /// The consumer stopped, or the call was stopped: nothing more is delivered.
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
    /// or `error`.
    private func finish(_ error: (any Error)?) {
        let consumer = state.withLock { state -> CheckedContinuation<[Element]?, any Error>? in
            guard case .running = state.phase else { return nil }
            guard state.buffer.isEmpty, let consumer = state.consumer else {
                state.phase = .finished(error)
                return nil
            }
            state.consumer = nil
            state.phase = .finished(nil)
            return consumer
        }
        guard let consumer else { return }
        if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
    }

    /// Starts the producer, in a read access (one snapshot, read-only) under this
    /// channel's control, with the consumer's time limit and task context (a cluster's
    /// consistency session), read here, on the consumer's task.
    ///
    /// It runs on a serial queue of its own rather than the database's concurrent queue:
    /// it waits for the consumer for as long as the loop runs, and the concurrent queues
    /// share a few threads with Swift's cooperative pool (as many as the cores, on
    /// Linux), so a few slow loops would starve every task of the process, theirs too.
    private func start() {
        let limit = CallLimits.current
        let context = (database as? any TaskContextCapturing)?.captureTaskContext()
        makeQueue("SwiftDAL.stream").async { [self] in
            do {
                try ThreadAccess.running(under: control) {
                    let read = { try self.database.read { db in try self.produce(db, self) } }
                    let inContext = { try context.map { try $0(read) } ?? read() }
                    guard let limit else { return try inContext() }
                    try withDatabaseTimeout(limit, operation: inContext)
                }
                finish(nil)
            } catch {
                finish(error)
            }
        }
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
        case .stopped(let error): return .failure(error)
        }
    }

    private static func deliver(_ outcome: Outcome) throws -> [Element]? {
        switch outcome {
        case .batch(let batch): return batch
        case .end: return nil
        case .failure(let error): throw error
        }
    }

    /// Stops the stream for `reason`: drops what is buffered, fails a waiting consumer,
    /// wakes a waiting producer (whose `send` then throws) and, when the producer may be
    /// inside a statement, interrupts it. Does nothing once the stream has ended.
    package func stop(_ reason: CallControl.Reason) {
        let error = reason.error
        let (consumer, producerWaiting, stopped) = state.withLock {
            state -> (CheckedContinuation<[Element]?, any Error>?, Bool, Bool) in
            switch state.phase {
            case .finished, .stopped: return (nil, false, false)
            case .idle, .running: break
            }
            state.phase = .stopped(error)
            state.buffer = []
            let consumer = state.consumer
            state.consumer = nil
            let waiting = state.producerWaiting
            state.producerWaiting = false
            return (consumer, waiting, true)
        }
        guard stopped else { return }
        consumer?.resume(throwing: error)
        if producerWaiting {
            // Blocked between two rows, in no statement: waking it is enough (an interrupt
            // or a PostgreSQL cancel request would only race with its rollback).
            room.signal()
        } else {
            control.stop(reason)
        }
    }
}

/// A database whose reads depend on task-local values of the caller (a cluster's
/// consistency session). A stream's producer runs on a queue of its own, where those
/// values are not seen: it captures them on the consumer's task and runs within them.
package protocol TaskContextCapturing {
    /// The calling task's context, as a function that runs `work` within it on any thread.
    func captureTaskContext() -> @Sendable (_ work: () throws -> Void) throws -> Void
}
