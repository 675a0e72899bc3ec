import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shuts a socket down unless ``finish()`` comes within `limit`, or before the call
/// opening the connection is stopped: the bound of a server engine's session setup after
/// its handshake (the client encoding, the session's settings), which waits on the server
/// before the call's control has a connection to interrupt. A server that finished the
/// handshake and then does not answer (a pooler queueing the session behind a busy server,
/// a server frozen after authentication) then fails the setup instead of holding the call
/// that opens the connection for good.
///
/// For example, `let watch = SocketWatch(socket: fd, limit: .seconds(10))`, the setup,
/// then `guard watch.finish() else { throw … }`.
package final class SocketWatch: Sendable {
    private static let running = 0
    private static let finished = 1
    /// The limit passed (or the call stopped) and the socket is being shut down.
    private static let expiring = 2
    /// The socket is shut down.
    private static let expired = 3

    private final class State: Sendable {
        let value = Atomic<Int>(SocketWatch.running)
        let socket: Int32

        init(socket: Int32) { self.socket = socket }

        /// Shuts the socket down unless the watch finished.
        func expire() {
            guard
                value.compareExchange(
                    expected: SocketWatch.running, desired: SocketWatch.expiring, ordering: .acquiringAndReleasing
                )
                .exchanged
            else { return }
            shutdown(socket, Int32(SHUT_RDWR))
            value.store(SocketWatch.expired, ordering: .releasing)
        }
    }

    /// How long the watch waits.
    package let limit: Duration
    private let state: State
    private let entry: DeadlineScheduler.Entry?
    /// The control of the call opening the connection, if any.
    private let control: CallControl?

    /// Starts watching `socket` (a negative one is never shut down); the call opening the
    /// connection (`currentCallControl()`), if any, ends the watch early when it stops.
    package init(socket: Int32, limit: Duration) {
        self.limit = limit
        let state = State(socket: socket)
        self.state = state
        control = currentCallControl()
        guard socket >= 0 else {
            entry = nil
            return
        }
        entry = DeadlineScheduler.shared.schedule(after: limit) { state.expire() }
        // An `async` call opens its connection on a pool's thread, where no time limit of
        // its task is to be read: its control says when it stops.
        control?.onStop { _ in state.expire() }
    }

    /// What the setup throws when ``finish()`` says the watch expired: the stop's error
    /// when the call was stopped (`CancellationError`, its time limit's), else
    /// `unfinished` (the server did not finish the setup in time).
    package func error(otherwise unfinished: @autoclosure () -> any Error) -> any Error {
        control?.reason?.error ?? unfinished()
    }

    /// Ends the watch; `false` when the limit passed, or the call stopped, first (the
    /// socket is shut down, and whatever the setup got from it does not count). Once it
    /// returns, the watch never touches the socket: the caller may close it (a shutdown
    /// under way, a few instructions, is waited for, so that the socket's number cannot be
    /// reused by another connection of the process before it).
    package func finish() -> Bool {
        if let entry { DeadlineScheduler.shared.cancel(entry) }
        let (exchanged, original) = state.value.compareExchange(
            expected: Self.running, desired: Self.finished, ordering: .acquiringAndReleasing)
        if exchanged || original == Self.finished { return true }
        while state.value.load(ordering: .acquiring) != Self.expired { sched_yield() }
        return false
    }
}
