import Glibc
import SystemPackage

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
        guard let addr = unixAddress(path) else { throw .unreachable(path: path, reason: "path too long") }
        let s: FileDescriptor
        do { s = try newStreamSocket() } catch { throw .unreachable(path: path, reason: "\(error)") }
        guard withSockaddr(addr, { connect(s.rawValue, $0, $1) }) == 0 else {
            let e = Errno(rawValue: errno)
            try? s.close()
            throw .unreachable(path: path, reason: "\(e)")
        }
        fd = s
    }

    deinit { try? fd.close() }

    public func send(_ request: JSON) throws(Failure) {
        let bytes = Array(request.text.utf8) + [0x0A]
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw .broken("the daemon closed the connection: \(Errno(rawValue: errno))") }
            sent += n
        }
    }

    /// The next reply line, waiting at most `timeoutMs` (-1: forever). nil at end of stream.
    public func receive(timeoutMs: Int32 = 10_000) throws(Failure) -> JSON? {
        while true {
            if let line = input.next() {
                guard case .text(let text) = line else { throw .broken("reply too long") }
                do { return try JSON.parse(text) } catch { throw .broken("malformed reply from the daemon: \(error)") }
            }
            var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, timeoutMs)
            if ready == 0 { throw .broken("the daemon did not answer within \(timeoutMs) ms") }
            if ready < 0 {
                if errno == EINTR { continue }
                throw .broken("poll: \(Errno(rawValue: errno))")
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd.rawValue, $0.baseAddress, $0.count) }
            // A reset is the daemon hanging up too (it refuses other users' connections unread).
            if n == 0 || (n < 0 && errno == ECONNRESET) { return nil }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .broken("read: \(Errno(rawValue: errno))")
            }
            chunk.withUnsafeBytes { input.append(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
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
