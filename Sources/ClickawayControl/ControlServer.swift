import Glibc
import SystemPackage

/// The daemon's end of the control socket: a directory only its owner can enter, a socket
/// only its owner can open, and peers of another uid refused by SO_PEERCRED.
/// Everything is non-blocking; the daemon's poll loop drives it.
public final class ControlServer {
    public let path: String
    public let listener: FileDescriptor
    private var clients: [Int32: Client] = [:]
    /// Numbers connections, so a late answer never goes to a newer client on a reused descriptor.
    private var nextSerial: UInt64 = 0
    /// Longest request line accepted: requests are small, anything longer is refused.
    public static let maxLine = 64 * 1024
    /// Most a client may leave unread; one that stops reading is dropped, not buffered forever.
    public static let maxPendingOutput = 1024 * 1024
    /// Connections beyond this are closed at once, so clients cannot use up the daemon's
    /// descriptors (and a listener that cannot accept would wake poll forever).
    public static let maxClients = 64

    final class Client {
        let fd: FileDescriptor
        var input = LineBuffer(limit: ControlServer.maxLine)
        var output: [UInt8] = []
        var closeAfterWrite = false
        var subscribed = false
        let serial: UInt64
        init(fd: FileDescriptor, serial: UInt64) {
            self.fd = fd
            self.serial = serial
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(directory: String) throws(Failure) {
        path = directory + "/ctl.sock"
        try Self.prepareDirectory(directory)
        guard let addr = unixAddress(path) else { throw Failure(description: "socket path \(path) is too long") }
        if Self.someoneListens(addr) {
            throw Failure(description: "another clickaway is already running (its control socket \(path) answers)")
        }
        unlink(path)
        let fd: FileDescriptor
        do { fd = try newStreamSocket() } catch { throw Failure(description: "cannot create the control socket: \(error)") }
        // The socket is created 0600 by umask so there is no moment it is open to others.
        let oldMask = umask(0o177)
        let bound = withSockaddr(addr) { bind(fd.rawValue, $0, $1) }
        umask(oldMask)
        guard bound == 0, listen(fd.rawValue, 16) == 0 else {
            let e = Errno(rawValue: errno)
            try? fd.close()
            throw Failure(description: "cannot listen on \(path): \(e)")
        }
        chmod(path, 0o600)
        setNonBlocking(fd)
        listener = fd
    }

    deinit {
        for c in clients.values { try? c.fd.close() }
        try? listener.close()
        unlink(path)
    }

    private static func prepareDirectory(_ dir: String) throws(Failure) {
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            throw Failure(description: "cannot create \(dir): \(Errno(rawValue: errno))")
        }
        var st = stat()
        guard lstat(dir, &st) == 0 else { throw Failure(description: "cannot inspect \(dir): \(Errno(rawValue: errno))") }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw Failure(description: "\(dir) exists and is not a directory") }
        guard st.st_uid == getuid() else {
            throw Failure(description: "\(dir) belongs to uid \(st.st_uid), not to you (uid \(getuid())): refusing to put the control socket there")
        }
        if st.st_mode & 0o777 != 0o700 { chmod(dir, 0o700) }
    }

    private static func someoneListens(_ addr: sockaddr_un) -> Bool {
        guard let fd = try? newStreamSocket() else { return false }
        defer { try? fd.close() }
        return withSockaddr(addr) { connect(fd.rawValue, $0, $1) } == 0
    }

    /// Descriptors the poll loop should watch, with whether each wants POLLOUT.
    public var pollDescriptors: [(fd: Int32, wantsWrite: Bool)] {
        [(listener.rawValue, false)] + clients.values.map { ($0.fd.rawValue, !$0.output.isEmpty) }
    }

    /// A request line from a client; `reply` sends one line back.
    public struct Request {
        public let client: Int32
        /// Which connection on that descriptor.
        public let serial: UInt64
        public let line: String
    }

    /// Handles readiness on `fd`; returns the complete request lines it produced.
    public func handle(fd: Int32, readable: Bool, writable: Bool) -> [Request] {
        if fd == listener.rawValue {
            acceptAll()
            return []
        }
        guard let c = clients[fd] else { return [] }
        var requests: [Request] = []
        if readable {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) {
                drop(fd)
                return []
            }
            if n > 0 {
                chunk.withUnsafeBytes { c.input.append(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                while let line = c.input.next() {
                    switch line {
                    case .text(let text): requests.append(Request(client: fd, serial: c.serial, line: text))
                    case .tooLong:
                        send(JSONReply.error("request longer than \(Self.maxLine) bytes").text, to: fd, thenClose: true)
                        return requests
                    }
                }
            }
        }
        if writable { flushOutput(c) }
        return requests
    }

    /// Queues one line for a client and writes what the socket takes now.
    public func send(_ line: String, to fd: Int32, thenClose: Bool = false) {
        guard let c = clients[fd] else { return }
        guard c.output.count <= Self.maxPendingOutput else {
            drop(fd)
            return
        }
        c.output.append(contentsOf: Array(line.utf8) + [0x0A])
        if thenClose { c.closeAfterWrite = true }
        flushOutput(c)
    }

    /// Answers `request` later (after a reload): only if its connection is still the one open.
    public func reply(_ line: String, to request: Request) {
        guard clients[request.client]?.serial == request.serial else { return }
        send(line, to: request.client)
    }

    public var clientDescriptors: [Int32] { Array(clients.keys) }

    /// From now on the client receives every `broadcast` line (`monitor`).
    public func subscribe(_ fd: Int32) { clients[fd]?.subscribed = true }

    public var hasSubscribers: Bool { clients.values.contains { $0.subscribed } }

    public var subscriberCount: Int { clients.values.filter(\.subscribed).count }

    /// Sends one line to every subscribed client. One that has left more than
    /// `maxPendingOutput` unread is dropped so that it cannot grow the daemon.
    public func broadcast(_ line: String) {
        for c in clients.values where c.subscribed { send(line, to: c.fd.rawValue) }
    }

    private func flushOutput(_ c: Client) {
        while !c.output.isEmpty {
            let n = c.output.withUnsafeBytes { Glibc.send(c.fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { return }
                drop(c.fd.rawValue)
                return
            }
            c.output.removeFirst(n)
        }
        if c.closeAfterWrite { drop(c.fd.rawValue) }
    }

    private func acceptAll() {
        while true {
            // accept4 is _GNU_SOURCE-only in the Glibc module; set the flags by hand.
            let fd = accept(listener.rawValue, nil, nil)
            guard fd >= 0 else { return }
            let descriptor = FileDescriptor(rawValue: fd)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            setNonBlocking(descriptor)
            guard peerUID(descriptor) == getuid(), clients.count < Self.maxClients else {
                try? descriptor.close()
                continue
            }
            nextSerial += 1
            clients[fd] = Client(fd: descriptor, serial: nextSerial)
        }
    }

    public func drop(_ fd: Int32) {
        guard let c = clients.removeValue(forKey: fd) else { return }
        try? c.fd.close()
    }
}

/// Reply lines: `{"ok":true,...}` or `{"ok":false,"error":"..."}`.
public enum JSONReply {
    public static func ok(_ fields: [(String, JSON)] = []) -> JSON { .object([("ok", .bool(true))] + fields) }
    public static func error(_ message: String) -> JSON { .object([("ok", .bool(false)), ("error", .string(message))]) }
}
