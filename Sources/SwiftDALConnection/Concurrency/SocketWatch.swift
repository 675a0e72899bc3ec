import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shuts a socket down unless ``finish()`` comes within `limit`: the bound of a server
/// engine's session setup after its handshake (the client encoding, the session's
/// settings), which waits on the server before any call's control can stop it. A server
/// that finished the handshake and then does not answer (a pooler queueing the session
/// behind a busy server, a server frozen after authentication) then fails the setup
/// instead of holding the call that opens the connection for good.
///
/// For example, `let watch = SocketWatch(socket: fd, limit: .seconds(10))`, the setup,
/// then `guard watch.finish() else { throw … }`.
package final class SocketWatch: Sendable {
    private static let running = 0
    private static let finished = 1
    private static let expired = 2

    private final class State: Sendable {
        let value = Atomic<Int>(SocketWatch.running)
    }

    /// How long the watch waits.
    package let limit: Duration
    private let state = State()
    private let entry: DeadlineScheduler.Entry?

    /// Starts watching `socket` (a negative one is never shut down).
    package init(socket: Int32, limit: Duration) {
        self.limit = limit
        guard socket >= 0 else {
            entry = nil
            return
        }
        let state = state
        entry = DeadlineScheduler.shared.schedule(after: limit) {
            guard
                state.value.compareExchange(
                    expected: Self.running, desired: Self.expired, ordering: .acquiringAndReleasing
                )
                .exchanged
            else { return }
            shutdown(socket, Int32(SHUT_RDWR))
        }
    }

    /// Ends the watch; `false` when the limit passed first (the socket is shut down, and
    /// whatever the setup got from it does not count).
    package func finish() -> Bool {
        if let entry { DeadlineScheduler.shared.cancel(entry) }
        let (exchanged, original) = state.value.compareExchange(
            expected: Self.running, desired: Self.finished, ordering: .acquiringAndReleasing)
        return exchanged || original == Self.finished
    }
}
