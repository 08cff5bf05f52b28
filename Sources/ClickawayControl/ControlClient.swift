public import ClickawayJSON
internal import ClickawaySystem
internal import Glibc
internal import SystemPackage

/// `clickawayctl`'s end: connect, send one request line, read reply lines.
public final class ControlClient {
    private let fd: FileDescriptor
    private let path: String
    private var input = LineBuffer(limit: 16 * 1024 * 1024)

    public enum Failure: Error, CustomStringConvertible {
        /// Nothing listens: the daemon is not running (or runs with another XDG_RUNTIME_DIR).
        case unreachable(path: String, reason: String)
        case broken(String)
        /// The daemon's last line said why it closes the connection (too many connections,
        /// a request too long, another user's).
        case closed(reason: String)
        /// `receive(timeoutMs:interruptedBy:)`'s other descriptor became readable first.
        case interrupted

        public var description: String {
            switch self {
            case .unreachable(let path, let reason):
                return "cannot reach the clickaway daemon at \(path) (\(reason)); start it with "
                    + "`systemctl --user start clickaway` or run `clickaway` in your graphical session"
            case .broken(let s): return s
            case .closed(let reason): return "the daemon closed the connection: \(reason)"
            case .interrupted: return "interrupted"
            }
        }
    }

    public init(path: String) throws(Failure) {
        self.path = path
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch { throw .unreachable(path: path, reason: "path too long") }
        do { fd = try FileDescriptor.connectedUnixSocket(address) } catch { throw .unreachable(path: path, reason: "\(error)") }
    }

    deinit { try? fd.close() }

    public func send(_ request: JSON) throws(Failure) {
        do {
            try fd.sendAll((request.text + "\n").utf8)
        } catch {
            // The daemon may have said why before it closed: a request too long, too many connections.
            if case .closed(let reason)? = try? receiveClosing() { throw .closed(reason: reason) }
            throw .broken("the daemon closed the connection before it had read the request (\(error)); " + hangUpReason)
        }
    }

    /// A closing line already sent, thrown as `.closed`.
    private func receiveClosing() throws(Failure) -> Failure? {
        do { _ = try receive(timeoutMs: 1000) } catch { return error }
        return nil
    }

    /// Why the daemon may have closed the connection without a word: SO_PEERCRED says
    /// whether it runs as another user, who is refused.
    private var hangUpReason: String {
        if let uid = fd.peerUID, uid != getuid() {
            return "the daemon at \(path) runs as uid \(uid), not as you (uid \(getuid())), and refuses other users' connections"
        }
        return "it said nothing about why (did it stop or restart?)"
    }

    /// The next reply line, waiting at most `timeoutMs` (-1: forever). nil at end of stream.
    /// When `interruption` (a descriptor, e.g. a signal's self-pipe) becomes readable first,
    /// throws `.interrupted`.
    public func receive(timeoutMs: Int32 = 10_000, interruptedBy interruption: Int32? = nil) throws(Failure) -> JSON? {
        let deadline = timeoutMs < 0 ? nil : Deadline.inMilliseconds(Int64(timeoutMs))
        while true {
            if let line = input.next() {
                guard case .text(let text) = line else { throw .broken("reply too long") }
                let reply: JSON
                do { reply = try JSON.parse(text) } catch { throw .broken("malformed reply from the daemon: \(error)") }
                if let refusal = Refusal(reply: reply), refusal.closing { throw .closed(reason: refusal.message) }
                return reply
            }
            var chunk: [UInt8] = []
            let read: Int?
            if let interruption {
                let first: Int32?
                do { first = try Self.firstReadable([interruption, fd.rawValue], until: deadline) } catch {
                    throw .broken("poll: \(error)")
                }
                if first == interruption { throw .interrupted }
            }
            do throws(Errno) {
                guard try fd.wait(until: deadline).canRead else { throw .timedOut }
                read = try fd.readAvailable(appendingTo: &chunk)
            } catch .timedOut {
                throw .broken("the daemon did not answer within \(timeoutMs) ms")
            } catch .connectionReset {
                // The daemon hanging up too (it refuses other users' connections unread).
                return nil
            } catch {
                throw .broken("read: \(error)")
            }
            if read == 0 { return nil }
            input.append(chunk)
        }
    }

    /// The first of `descriptors` that is readable (or hung up) by `deadline`, nil if none is.
    private static func firstReadable(_ descriptors: [Int32], until deadline: Deadline?) throws(Errno) -> Int32? {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = try systemCall { poll(&entries, nfds_t(entries.count), Deadline.pollTimeout(deadline)) }
        guard ready > 0 else { return nil }
        return entries.first { $0.revents != 0 }?.fd
    }

    /// One request, one reply.
    public func call(_ request: JSON, timeoutMs: Int32 = 10_000) throws(Failure) -> JSON {
        try send(request)
        guard let reply = try receive(timeoutMs: timeoutMs) else {
            throw .broken("the daemon closed the connection without answering: " + hangUpReason)
        }
        return reply
    }
}
