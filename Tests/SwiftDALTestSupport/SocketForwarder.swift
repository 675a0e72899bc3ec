import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on 127.0.0.1 that forwards each connection to a Unix socket: a middleman
/// between a client and a server, as a proxy, a load balancer or Docker's port mapping is
/// (the server sees the forwarder's side, not the client's address and port). Each
/// connection is pumped by two threads of its own; ``stop()`` ends them all.
///
/// For example: `let forwarder = try SocketForwarder(to: server.socketPath)`, then
/// connect to `127.0.0.1:\(forwarder.port)`; `forwarder.stop()` at the end.
public final class SocketForwarder: @unchecked Sendable {
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var open: Set<Int32> = []
    private var stopped = false

    /// Listens on an ephemeral port of 127.0.0.1, forwarding to the Unix socket at `path`.
    public init(to path: String) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestFailure() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw TestFailure()
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptConnections(forwardingTo: path) }.start()
    }

    /// Stops listening and ends every forwarded connection (both sides see it closed).
    public func stop() {
        let sockets = lock.withLock { () -> Set<Int32> in
            stopped = true
            return open
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func acceptConnections(forwardingTo path: String) {
        defer { close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            guard let upstream = Self.connect(to: path), register(client, upstream) else {
                close(client)
                continue
            }
            let ended = Counter()
            for (from, to) in [(client, upstream), (upstream, client)] {
                Thread { [self] in
                    Self.pump(from: from, to: to)
                    shutdown(to, Int32(SHUT_RDWR))
                    shutdown(from, Int32(SHUT_RDWR))
                    guard ended.increment() == 2 else { return }
                    lock.withLock {
                        open.remove(client)
                        open.remove(upstream)
                    }
                    close(client)
                    close(upstream)
                }.start()
            }
        }
    }

    private func register(_ client: Int32, _ upstream: Int32) -> Bool {
        let accepted = lock.withLock { () -> Bool in
            guard !stopped else { return false }
            open.insert(client)
            open.insert(upstream)
            return true
        }
        if !accepted { close(upstream) }
        return accepted
    }

    private static func connect(to path: String) -> Int32? {
        let upstream = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard upstream >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(upstream)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard connected else {
            close(upstream)
            return nil
        }
        return upstream
    }

    private static func pump(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(target, $0.baseAddress! + sent, count - sent) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                sent += written
            }
        }
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() -> Int {
            lock.withLock {
                value += 1
                return value
            }
        }
    }
}
