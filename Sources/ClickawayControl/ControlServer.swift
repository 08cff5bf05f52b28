internal import ClickawayJSON
public import ClickawaySystem
internal import Glibc
internal import SystemPackage

/// The daemon's end of the control socket: a directory only its owner can enter, a socket
/// only its owner can open, and peers of another uid refused by SO_PEERCRED (told so in one
/// closing line).
///
/// Non-blocking throughout: the listener and every client register with the daemon's
/// `PollLoop`. Requests are handed out by `nextRequest()` in turns: each connection at most
/// one request per pass of the loop, and only once its last reply has left (a client that
/// does not read its replies is not read either, so it costs neither memory nor time).
///
/// A new connection is always taken. When `maxClients` are open, one makes room for it, by
/// this policy (`Eviction`): the connection idle longest (nothing asked, nothing owed either
/// way); else the one that has left its replies or events unread longest; else the oldest
/// monitor; else the oldest connection the daemon owes something to (a `wait`, whose popups
/// go with it, or a request answered later: `reload`, `add` with `pid`). The connection let
/// go is told why in a closing line when its socket can take it.
public final class ControlServer {
    public let path: String
    private let listener: FileDescriptor
    private let loop: PollLoop
    private var clients: [Int32: Client] = [:]
    /// Connections that may have a request to hand out, in the order they get their turn.
    /// Looked at on every pass of the loop, so with no runtime exclusivity check: each access
    /// is one statement here that calls out to no other code. bench/callgrind, inside click:
    /// 138 instructions a click without it (BENCHMARKS.md, the daemon's part of an inside click).
    @exclusivity(unchecked) private var ready: [Client] = []
    /// Counts the loop's passes: a connection's turn comes at most once a pass.
    private var pass: UInt64 = 0
    /// Numbers connections, so a late answer never goes to a newer client on a reused descriptor.
    private var nextSerial: UInt64 = 0
    /// Longest request line accepted: any request within `RuntimePopupRequest`'s limits fits,
    /// 256 command arguments of 4 KiB of any characters included (at most 6 MiB escaped).
    public static let maxLine = 8 * 1024 * 1024
    /// Most unfinished request bytes held for all connections together: past it, the
    /// connection holding the most is refused.
    public static let maxBufferedInput = 16 * 1024 * 1024
    /// Most a client may leave unread; one that stops reading is dropped when an append
    /// passes it, not buffered forever.
    public static let maxPendingOutput = 1024 * 1024
    /// Most left unread by all connections together: past it, the connection with the most
    /// unread is dropped.
    public static let maxTotalPendingOutput = 8 * 1024 * 1024
    /// The send buffer asked of the kernel for each connection (which doubles it).
    static let socketBuffer: Int32 = 16 * 1024
    /// Connections open at once, so clients cannot use up the daemon's descriptors.
    public static let maxClients = 64
    /// Monitors at once: at least half of the connections stay for requests.
    public static let maxMonitors = 32
    /// Connections holding a popup (`wait`) at once: with the monitors, a quarter of the
    /// connections still stay for requests.
    public static let maxHolders = 16
    /// The connections that closed while holding a popup or owed an answer, not taken yet
    /// (`takeHangUps()`). No runtime exclusivity check, as for `ready`: bench/callgrind, inside
    /// click: 70 instructions a click without it (BENCHMARKS.md, the daemon's part of an inside
    /// click).
    @exclusivity(unchecked) private var hangUps: [Connection] = []
    /// Bytes queued for all clients.
    private var totalOutput = 0

    private final class Client {
        let fd: FileDescriptor
        let serial: UInt64
        var registration: PollLoop.Registration?
        var input = LineBuffer(limit: ControlServer.maxLine)
        /// Looked at before every wait (`wantsInput`, the watch's `writing`): no runtime
        /// exclusivity check, as for `ready`: bench/callgrind, inside click: 152 instructions a
        /// click without it (BENCHMARKS.md, the daemon's part of an inside click).
        @exclusivity(unchecked) var output: [UInt8] = []
        var closeAfterWrite = false
        var subscribed = false
        /// Popups that live as long as this connection (`wait`), not ended yet.
        var holds = 0
        /// Requests handed out and not answered yet (a reload answers when it is done).
        var unanswered = 0
        /// When it last sent anything or took some of what it was sent (MonotonicClock ms).
        var lastActive: Int64
        /// The pass its last request was handed out in.
        var servedPass: UInt64 = 0
        var isReady = false
        /// A complete line read and not handed out yet.
        var linesWaiting = false

        init(fd: FileDescriptor, serial: UInt64, now: Int64) {
            self.fd = fd
            self.serial = serial
            lastActive = now
        }

        /// Reads more only when every line read is handed out and every reply has left: a
        /// client that does not read is not read either.
        var wantsInput: Bool { output.isEmpty && !closeAfterWrite && !linesWaiting }
    }

    /// Who makes room for a new connection, first to last.
    public enum Eviction: Int, Comparable, Sendable, CaseIterable {
        /// Nothing asked and nothing owed: idle longest first.
        case idle
        /// Replies or events waiting for the client to read them: unread longest first.
        case notReading
        /// A monitor reading its events: oldest first.
        case monitor
        /// A `wait` (its popups go with it) or a request answered later: oldest first.
        case owed

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

        /// The closing line's reason.
        public func reason(idleSeconds: Int64) -> String {
            let full = "\(ControlServer.maxClients) connections were open"
            return switch self {
            case .idle: "\(full) and this one, idle longest (\(idleSeconds) s), made room for a new one"
            case .notReading: "\(full), none idle, and this one, its replies unread longest (\(idleSeconds) s), made room for a new one"
            case .monitor: "\(full), none idle or stalled, and this monitor was the oldest: it made room for a new one"
            case .owed: "\(full), all waiting for the daemon, and this one was the oldest: it made room for a new one"
            }
        }
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

    /// The listener in the loop: accepts, counts passes, and keeps the loop from sleeping
    /// while requests read wait for their turn.
    private final class ListenerSource: PollSource {
        unowned let server: ControlServer
        let pollDescriptor: FileDescriptor
        init(server: ControlServer, listener: FileDescriptor) {
            self.server = server
            pollDescriptor = listener
        }
        func prepareToSleep() -> Bool { server.hasTurnsWaiting }
        func pollReturned(_ readiness: Readiness) {
            server.pass &+= 1
            if readiness.canRead { server.acceptAll() }
        }
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
            // Created 0600 (Linux gives the socket file the mode of the socket's inode, less
            // the umask), so there is no moment it is open to others; not by setting the umask,
            // which is the whole process's and would change what other threads create meanwhile.
            guard fchmod(fd.rawValue, 0o600) == 0 else { throw Errno(rawValue: errno) }
            try fd.bind(to: address)
            try fd.listen(backlog: 16)
            try fd.setNonBlocking()
        } catch {
            try? fd.close()
            throw Failure(description: "cannot listen on \(path): \(error)")
        }
        chmod(path, 0o600)
        listener = fd
        loop.add(ListenerSource(server: self, listener: fd))
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

    /// The next request, in turns: the connection waiting longest for its turn first, each
    /// at most once a pass of the loop. nil when no connection has a turn in this pass.
    public func nextRequest() -> Request? {
        var i = 0
        while i < ready.count {
            let c = ready[i]
            guard clients[c.fd.rawValue] === c, c.output.isEmpty, !c.closeAfterWrite else {
                // Gone, or its replies not taken yet: back in line when they are (`flushOutput`).
                ready.remove(at: i)
                c.isReady = false
                continue
            }
            guard c.servedPass != pass else {
                i += 1
                continue
            }
            let line = c.input.next()
            let after = c.input.state()
            c.linesWaiting = after == .line || after == .tooLong
            switch line {
            case .text(let text):
                c.servedPass = pass
                c.unanswered += 1
                // Its next request waits for the next pass, behind the others.
                ready.remove(at: i)
                ready.append(c)
                return Request(client: c.fd.rawValue, serial: c.serial, line: text)
            case .tooLong:
                ready.remove(at: i)
                c.isReady = false
                refuseTooLong(c)
            case nil:
                ready.remove(at: i)
                c.isReady = false
            }
        }
        return nil
    }

    /// Whether requests read wait for a turn in the next pass.
    private var hasTurnsWaiting: Bool {
        // Before every wait, mostly with nobody in line: the runtime exclusivity check of
        // `clients` is not paid then.
        guard !ready.isEmpty else { return false }
        return ready.contains { clients[$0.fd.rawValue] === $0 && $0.output.isEmpty && !$0.closeAfterWrite }
    }

    /// In line for a turn, when it has a line waiting and its replies have left.
    private func makeReady(_ c: Client) {
        guard !c.isReady, c.linesWaiting, c.output.isEmpty, !c.closeAfterWrite else { return }
        c.isReady = true
        ready.append(c)
    }

    private func refuseTooLong(_ c: Client) {
        let limit = Self.maxLine / (1024 * 1024)
        let line = Refusal("request longer than \(limit) MiB (\(Self.maxLine) bytes), the longest the daemon reads; "
            + "commands are limited to \(RuntimePopupRequest.maxArguments) arguments of \(RuntimePopupRequest.maxArgumentBytes) bytes",
            closing: true).json.text
        send(line, to: c.fd.rawValue, answering: false, thenClose: true)
    }

    /// Queues one line for a client and writes what the socket takes now. A line that
    /// answers a request (not a monitor's event) counts as its answer. A client whose unread
    /// output passes `maxPendingOutput` with this line is dropped, and so is the one with
    /// the most unread when all of them pass `maxTotalPendingOutput`.
    public func send(_ line: String, to fd: Int32, answering: Bool = true, thenClose: Bool = false) {
        guard let c = clients[fd], !c.closeAfterWrite else { return }
        if answering { c.unanswered = max(0, c.unanswered - 1) }
        let before = c.output.count
        c.output.append(contentsOf: line.utf8)
        c.output.append(0x0A)
        totalOutput += c.output.count - before
        if thenClose { c.closeAfterWrite = true }
        flushOutput(c)
        guard clients[fd] === c else { return }
        if c.output.count > Self.maxPendingOutput {
            drop(fd)
            return
        }
        if totalOutput > Self.maxTotalPendingOutput, let most = clients.values.max(by: { $0.output.count < $1.output.count }) {
            drop(most.fd.rawValue)
        }
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

    /// From now on one more popup lives as long as the connection (`wait`): its end is
    /// reported by `takeHangUps()` (with every other popup the connection holds). False when
    /// `maxHolders` other connections hold popups already, or the connection is gone.
    public func hold(_ connection: Connection) -> Bool {
        guard let c = clients[connection.client], c.serial == connection.serial,
              c.holds > 0 || clients.values.filter({ $0.holds > 0 }).count < Self.maxHolders else { return false }
        c.holds += 1
        return true
    }

    /// Sends the last line of one popup the connection holds; once its last popup has ended,
    /// closes the connection when that is written.
    public func finish(_ connection: Connection, with line: String) {
        guard let c = clients[connection.client], c.serial == connection.serial else { return }
        c.holds = max(0, c.holds - 1)
        send(line, to: connection.client, answering: false, thenClose: c.holds == 0)
    }

    /// The connections that closed while holding a popup or waiting for an answer (an
    /// `add --pid` whose window has not come) since the last call.
    public func takeHangUps() -> [Connection] {
        defer { hangUps = [] }
        return hangUps
    }

    public var hasSubscribers: Bool { clients.values.contains { $0.subscribed } }

    public var subscriberCount: Int { clients.values.filter(\.subscribed).count }

    /// Connections open now.
    public var connectionCount: Int { clients.count }

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
            if let peer = fd.peerUID, peer != getuid() {
                Self.tryToSay(Refusal("this clickaway daemon serves uid \(getuid()) only, and you are uid \(peer)", closing: true).json.text, on: fd)
                try? fd.close()
                continue
            }
            makeRoom()
            // A small socket buffer: a client that stops reading stalls after a few replies
            // (the monitors' bursts wait in `output`, up to `maxPendingOutput`).
            var size = Self.socketBuffer
            _ = setsockopt(fd.rawValue, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            nextSerial += 1
            let client = Client(fd: fd, serial: nextSerial, now: MonotonicClock.milliseconds())
            clients[fd.rawValue] = client
            client.registration = loop.watch(fd, reading: { client.wantsInput }, writing: { !client.output.isEmpty }) { [unowned self] readiness in
                service(client, readiness)
            }
        }
    }

    /// One line written now if the socket takes all of it, else nothing: a connection about
    /// to be closed is told why when it can be.
    private static func tryToSay(_ line: String, on fd: FileDescriptor) {
        _ = try? fd.writeAvailable(Array((line + "\n").utf8))
    }

    private func eviction(of c: Client) -> Eviction {
        if !c.output.isEmpty { return .notReading }
        if c.subscribed { return .monitor }
        if c.holds > 0 || c.unanswered > 0 { return .owed }
        return .idle
    }

    /// Closes one connection by the eviction policy when `maxClients` are open.
    private func makeRoom() {
        guard clients.count >= Self.maxClients else { return }
        // Connections accepted in one burst share a millisecond: then the oldest goes.
        let victim = clients.values.min { a, b in
            let (ea, eb) = (eviction(of: a), eviction(of: b))
            if ea != eb { return ea < eb }
            switch ea {
            case .idle, .notReading: return (a.lastActive, a.serial) < (b.lastActive, b.serial)
            case .monitor, .owed: return a.serial < b.serial
            }
        }
        guard let victim else { return }
        let kind = eviction(of: victim)
        if victim.output.isEmpty {
            let seconds = (MonotonicClock.milliseconds() - victim.lastActive) / 1000
            Self.tryToSay(Refusal(kind.reason(idleSeconds: seconds), closing: true).json.text, on: victim.fd)
        }
        drop(victim.fd.rawValue)
    }

    private func service(_ c: Client, _ readiness: Readiness) {
        if readiness.contains(.writable) || !c.wantsInput && !readiness.intersection([.hangUp, .error]).isEmpty {
            flushOutput(c)
        }
        guard clients[c.fd.rawValue] === c else { return }
        if readiness.canRead && c.wantsInput { read(c) }
    }

    private func read(_ c: Client) {
        var chunk: [UInt8] = []
        let n: Int?
        do { n = try c.fd.readAvailable(appendingTo: &chunk) } catch {
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
        if c.input.count > 64 * 1024 {
            let held = clients.values.reduce(0) { $0 + $1.input.count }
            if held > Self.maxBufferedInput, let most = clients.values.max(by: { $0.input.count < $1.input.count }) {
                send(Refusal("the daemon holds \(Self.maxBufferedInput / (1024 * 1024)) MiB of unfinished requests already; "
                    + "this one, the largest, is refused", closing: true).json.text, to: most.fd.rawValue, answering: false, thenClose: true)
                if most === c { return }
            }
        }
        switch c.input.state() {
        case .line:
            c.linesWaiting = true
            makeReady(c)
        case .tooLong:
            refuseTooLong(c)
        case .empty, .partial:
            break
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
            totalOutput -= n
            c.lastActive = MonotonicClock.milliseconds()
        }
        if c.closeAfterWrite {
            drop(c.fd.rawValue)
            return
        }
        makeReady(c)
    }

    public func drop(_ fd: Int32) {
        guard let c = clients.removeValue(forKey: fd) else { return }
        totalOutput -= c.output.count
        if c.holds > 0 || c.unanswered > 0 { hangUps.append(Connection(client: fd, serial: c.serial)) }
        if let registration = c.registration { loop.remove(registration) }
        if c.isReady { ready.removeAll { $0 === c } }
        try? c.fd.close()
    }
}
