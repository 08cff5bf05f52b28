public import ClickawayJSON
internal import ClickawaySystem
internal import SystemPackage

/// `clickawayctl`'s end: connect, send one request line, read reply lines.
public final class ControlClient {
    private let fd: FileDescriptor
    private var input = LineBuffer(limit: 16 * 1024 * 1024)

    public enum Failure: Error, CustomStringConvertible {
        /// Nothing listens: the daemon is not running (or runs with another XDG_RUNTIME_DIR).
        case unreachable(path: String, reason: String)
        case broken(String)

        public var description: String {
            switch self {
            case .unreachable(let path, let reason):
                return "cannot reach the clickaway daemon at \(path) (\(reason)); start it with "
                    + "`systemctl --user start clickaway` or run `clickaway` in your graphical session"
            case .broken(let s): return s
            }
        }
    }

    public init(path: String) throws(Failure) {
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch { throw .unreachable(path: path, reason: "path too long") }
        do { fd = try FileDescriptor.connectedUnixSocket(address) } catch { throw .unreachable(path: path, reason: "\(error)") }
    }

    deinit { try? fd.close() }

    public func send(_ request: JSON) throws(Failure) {
        do {
            try fd.sendAll((request.text + "\n").utf8)
        } catch {
            throw .broken("the daemon closed the connection: \(error)")
        }
    }

    /// The next reply line, waiting at most `timeoutMs` (-1: forever). nil at end of stream.
    public func receive(timeoutMs: Int32 = 10_000) throws(Failure) -> JSON? {
        let deadline = timeoutMs < 0 ? nil : Deadline.inMilliseconds(Int64(timeoutMs))
        while true {
            if let line = input.next() {
                guard case .text(let text) = line else { throw .broken("reply too long") }
                do { return try JSON.parse(text) } catch { throw .broken("malformed reply from the daemon: \(error)") }
            }
            var chunk: [UInt8] = []
            let read: Int?
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

    /// One request, one reply.
    public func call(_ request: JSON, timeoutMs: Int32 = 10_000) throws(Failure) -> JSON {
        try send(request)
        guard let reply = try receive(timeoutMs: timeoutMs) else {
            throw .broken("the daemon closed the connection without answering (it refuses connections from other users)")
        }
        return reply
    }
}
