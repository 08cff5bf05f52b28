internal import ClickawayJSON
public import ClickawaySystem
internal import Glibc
internal import SystemPackage

/// The daemon's end of the control socket: a directory only its owner can enter, a socket
/// only its owner can open, and peers of another uid refused by SO_PEERCRED.
///
/// Non-blocking throughout: the listener and every client register with the daemon's
/// `PollLoop`, and the requests they send wait in a queue for the daemon (`nextRequest()`).
/// A new connection is always taken: when `maxClients` are open, the one idle longest
/// (no request waiting for its answer, not a monitor) makes room for it.
public final class ControlServer {
    public let path: String
    private let listener: FileDescriptor
    private let loop: PollLoop
    private var clients: [Int32: Client] = [:]
    private var requests: [Request] = []
    /// Numbers connections, so a late answer never goes to a newer client on a reused descriptor.
    private var nextSerial: UInt64 = 0
    /// Longest request line accepted: requests are small, anything longer is refused.
    public static let maxLine = 64 * 1024
    /// Most a client may leave unread; one that stops reading is dropped, not buffered forever.
    public static let maxPendingOutput = 1024 * 1024
    /// Connections open at once, so clients cannot use up the daemon's descriptors.
    public static let maxClients = 64
    /// Monitors at once: at least half of the connections stay for requests.
    public static let maxMonitors = 32
    /// Connections holding a popup (`wait`) at once: with the monitors, a quarter of the
    /// connections still stay for requests.
    public static let maxHolders = 16
    /// The connections that closed while holding a popup, not taken yet (`takeHangUps()`).
    private var hangUps: [Connection] = []

    private final class Client {
        let fd: FileDescriptor
        let serial: UInt64
        var registration: PollLoop.Registration?
        var input = LineBuffer(limit: ControlServer.maxLine)
        var output: [UInt8] = []
        var closeAfterWrite = false
        var subscribed = false
        /// A popup lives as long as this connection (`wait`).
        var holding = false
        /// Requests read and not answered yet (a reload answers when it is done).
        var unanswered = 0
        /// When it last sent or was sent anything (MonotonicClock ms).
        var lastActive: Int64

        init(fd: FileDescriptor, serial: UInt64, now: Int64) {
            self.fd = fd
            self.serial = serial
            lastActive = now
        }

        /// May be closed to make room: nothing of its own is going on.
        var isIdle: Bool { !subscribed && !holding && unanswered == 0 && output.isEmpty }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// Another daemon answers on the socket: starting again will not help.
        public var alreadyRunning = false
    }

    /// One request line from a client; answer it with `send(_:to:)` or `reply(_:to:)`.
    public struct Request: Sendable {
        public let client: Int32
        /// Which connection on that descriptor.
        public let serial: UInt64
        public let line: String

        public var connection: Connection { Connection(client: client, serial: serial) }
    }

    /// One connection: its descriptor, and which connection on it.
    public struct Connection: Hashable, Sendable {
        public let client: Int32
        public let serial: UInt64
    }

    public init(directory: String, loop: PollLoop) throws(Failure) {
        path = directory + "/ctl.sock"
        self.loop = loop
        try Self.prepareDirectory(directory)
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch { throw Failure(description: "socket path \(path) is too long") }
        if Self.someoneListens(address) {
            throw Failure(description: "another clickaway is already running (its control socket \(path) answers)", alreadyRunning: true)
        }
        unlink(path)
        let fd: FileDescriptor
        do { fd = try FileDescriptor.unixSocket(.stream) } catch { throw Failure(description: "cannot create the control socket: \(error)") }
        do throws(Errno) {
            // Created 0600 by the umask, so there is no moment it is open to others.
            let oldMask = umask(0o177)
            defer { umask(oldMask) }
            try fd.bind(to: address)
            try fd.listen(backlog: 16)
            try fd.setNonBlocking()
        } catch {
            try? fd.close()
            throw Failure(description: "cannot listen on \(path): \(error)")
        }
        chmod(path, 0o600)
        listener = fd
        loop.watch(fd) { [unowned self] _ in acceptAll() }
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

    private static func someoneListens(_ address: UnixSocketAddress) -> Bool {
        guard let fd = try? FileDescriptor.connectedUnixSocket(address) else { return false }
        try? fd.close()
        return true
    }

    /// The oldest request not handed out yet.
    public func nextRequest() -> Request? {
        requests.isEmpty ? nil : requests.removeFirst()
    }

    /// Queues one line for a client and writes what the socket takes now. A line that
    /// answers a request (not a monitor's event) counts as its answer.
    public func send(_ line: String, to fd: Int32, answering: Bool = true, thenClose: Bool = false) {
        guard let c = clients[fd] else { return }
        guard c.output.count <= Self.maxPendingOutput else {
            drop(fd)
            return
        }
        if answering { c.unanswered = max(0, c.unanswered - 1) }
        c.output.append(contentsOf: line.utf8)
        c.output.append(0x0A)
        if thenClose { c.closeAfterWrite = true }
        flushOutput(c)
    }

    /// Answers `request` later (after a reload): only if its connection is still the one open.
    public func reply(_ line: String, to request: Request) {
        guard clients[request.client]?.serial == request.serial else { return }
        send(line, to: request.client)
    }

    /// From now on the client receives every `broadcast` line (`monitor`); false when
    /// `maxMonitors` are subscribed already.
    public func subscribe(_ fd: Int32) -> Bool {
        guard subscriberCount < Self.maxMonitors else { return false }
        clients[fd]?.subscribed = true
        return true
    }

    /// From now on a popup lives as long as the connection (`wait`): it is never closed to
    /// make room, and its end is reported by `takeHangUps()`. False when `maxHolders` hold
    /// popups already, or the connection is gone.
    public func hold(_ connection: Connection) -> Bool {
        guard let c = clients[connection.client], c.serial == connection.serial,
              clients.values.filter(\.holding).count < Self.maxHolders else { return false }
        c.holding = true
        return true
    }

    /// Sends the last line to a connection that holds a popup, and closes it once written.
    public func finish(_ connection: Connection, with line: String) {
        guard let c = clients[connection.client], c.serial == connection.serial else { return }
        c.holding = false
        send(line, to: connection.client, answering: false, thenClose: true)
    }

    /// The connections that closed while holding a popup since the last call.
    public func takeHangUps() -> [Connection] {
        defer { hangUps = [] }
        return hangUps
    }

    public var hasSubscribers: Bool { clients.values.contains { $0.subscribed } }

    public var subscriberCount: Int { clients.values.filter(\.subscribed).count }

    /// Sends one line to every subscribed client. One that has left more than
    /// `maxPendingOutput` unread is dropped so that it cannot grow the daemon.
    public func broadcast(_ line: String) {
        for c in clients.values where c.subscribed { send(line, to: c.fd.rawValue, answering: false) }
    }

    // MARK: - Connections

    private func acceptAll() {
        while true {
            let accepted: FileDescriptor?
            do { accepted = try listener.acceptConnection() } catch { return }
            guard let fd = accepted else { return }
            guard fd.peerUID == getuid(), makeRoom() else {
                try? fd.close()
                continue
            }
            nextSerial += 1
            let client = Client(fd: fd, serial: nextSerial, now: MonotonicClock.milliseconds())
            clients[fd.rawValue] = client
            client.registration = loop.watch(fd, writing: { !client.output.isEmpty }) { [unowned self] readiness in
                service(client, readiness)
            }
        }
    }

    /// Whether a new connection fits, closing the client idle longest when it would not.
    private func makeRoom() -> Bool {
        guard clients.count >= Self.maxClients else { return true }
        // Connections accepted in one burst share a millisecond: then the oldest goes.
        guard let idlest = clients.values.filter(\.isIdle).min(by: { ($0.lastActive, $0.serial) < ($1.lastActive, $1.serial) }) else {
            return false
        }
        drop(idlest.fd.rawValue)
        return true
    }

    private func service(_ c: Client, _ readiness: Readiness) {
        if readiness.canRead { read(c) }
        if readiness.contains(.writable), clients[c.fd.rawValue] === c { flushOutput(c) }
    }

    private func read(_ c: Client) {
        var chunk: [UInt8] = []
        let n: Int?
        do { n = try c.fd.readAvailable(appendingTo: &chunk, chunk: 4096) } catch {
            drop(c.fd.rawValue)
            return
        }
        guard let n else { return }
        guard n > 0 else {
            drop(c.fd.rawValue)
            return
        }
        c.lastActive = MonotonicClock.milliseconds()
        c.input.append(chunk)
        while let line = c.input.next() {
            switch line {
            case .text(let text):
                c.unanswered += 1
                requests.append(Request(client: c.fd.rawValue, serial: c.serial, line: text))
            case .tooLong:
                send(Refusal("request longer than \(Self.maxLine) bytes").json.text, to: c.fd.rawValue, answering: false, thenClose: true)
                return
            }
        }
    }

    private func flushOutput(_ c: Client) {
        while !c.output.isEmpty {
            let n: Int
            do { n = try c.fd.writeAvailable(c.output) } catch {
                drop(c.fd.rawValue)
                return
            }
            guard n > 0 else { return }
            c.output.removeFirst(n)
            c.lastActive = MonotonicClock.milliseconds()
        }
        if c.closeAfterWrite { drop(c.fd.rawValue) }
    }

    public func drop(_ fd: Int32) {
        guard let c = clients.removeValue(forKey: fd) else { return }
        if c.holding { hangUps.append(Connection(client: fd, serial: c.serial)) }
        if let registration = c.registration { loop.remove(registration) }
        requests.removeAll { $0.client == fd && $0.serial == c.serial }
        try? c.fd.close()
    }
}
