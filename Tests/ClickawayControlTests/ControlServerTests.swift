import ClickawayControl
import ClickawayJSON
import ClickawaySystem
import Foundation
import Glibc
import Testing

/// The control server's policies on its own loop, with raw clients: turns, the output cap,
/// connections that hold popups, and who makes room for a new connection (issue 24).
@Suite("Control server: turns, caps, holds and eviction", .serialized)
final class ControlServerTests {
    let directory: String
    let loop: PollLoop
    let server: ControlServer
    var clients: [Int32] = []

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-ctl-\(UUID().uuidString)").path
        loop = try PollLoop()
        server = try ControlServer(directory: directory, loop: loop)
        loop.schedule(bound) { _ in }
    }

    /// A wait of the loop that never sleeps longer than 20 ms: every wait below is bounded.
    private let bound = LoopTimer()
    func waitBounded() {
        bound.deadline = .inMilliseconds(20)
        loop.wait()
    }

    deinit {
        clients.forEach { close($0) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    func connect() throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in server.path.utf8.enumerated() { raw[i] = byte }
        }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(ok == 0, "connect: \(errno)")
        clients.append(fd)
        return fd
    }

    func send(_ fd: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// Whether the server has closed `fd` (after whatever it sent).
    func isClosed(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1 && p.revents & Int16(POLLHUP) != 0
    }

    /// Lines sent to `fd` and not read yet.
    func lines(_ fd: Int32) -> [String] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { break }
            data += chunk[..<n]
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Passes of the loop until `condition`, at most 5 s.
    func pump(until what: String, _ condition: () -> Bool) throws {
        let deadline = Deadline(after: .seconds(5))
        while !condition() {
            try #require(!deadline.hasPassed(), "timed out waiting for \(what)")
            waitBounded()
        }
    }

    /// The requests of one pass.
    func pass() -> [ControlServer.Request] {
        waitBounded()
        var requests: [ControlServer.Request] = []
        while let r = server.nextRequest() { requests.append(r) }
        return requests
    }

    func request(from fd: Int32, _ line: String) throws -> ControlServer.Request {
        send(fd, line + "\n")
        var found: ControlServer.Request?
        try pump(until: "the request \(line)") {
            while let r = server.nextRequest() { if r.line == line { found = r } }
            return found != nil
        }
        return found!
    }

    /// The request line limit and the documented command limit agree: a request at every
    /// field's limit, of characters JSON escapes six-fold, fits in one line.
    @Test func theLargestValidRequestFits() throws {
        let control = "\u{1}"
        let argument = String(repeating: control, count: RuntimePopupRequest.maxArgumentBytes)
        let command = JSON.array(Array(repeating: .string(argument), count: RuntimePopupRequest.maxArguments - 1))
        let anchors = JSON.array(Array(repeating: JSON.array([.int(-(1 << 20)), .int(-(1 << 20)), .int(1 << 20), .int(1 << 20)]),
                                       count: RuntimePopupRequest.maxAnchors))
        let name = String(repeating: "n", count: RuntimePopupRequest.maxNameLength)
        let request = JSON.object([
            ("request", .string("wait")), ("popup", .string(name)), ("rect", .array([.int(0), .int(0), .int(5), .int(5)])),
            ("output", .string(String(repeating: control, count: RuntimePopupRequest.maxOutputLength))),
            ("like", .string(String(name.dropLast()) + "l")), ("parent", .string(String(name.dropLast()) + "p")), ("anchors", anchors),
            ("dismiss", .object([("command", .array([.string("p")] + (command.arrayValue ?? [])))])),
        ])
        let bytes = request.text.utf8.count
        print("the largest request: \(bytes) bytes of \(ControlServer.maxLine)")
        #expect(bytes <= ControlServer.maxLine)
        _ = try ControlRequest(line: request.text)
    }

    /// One request of each connection a pass, so one that sends a thousand cannot keep
    /// another's waiting.
    @Test func requestsAreHandedOutInTurns() throws {
        let busy = try connect(), other = try connect()
        send(busy, String(repeating: "{\"request\":\"status\"}\n", count: 1000))
        send(other, "{\"request\":\"sync\"}\n")
        var seen: [String] = []
        try pump(until: "the other connection's request") {
            var requests: [ControlServer.Request] = []
            while let r = server.nextRequest() { requests.append(r) }
            #expect(requests.count <= 2, "\(requests.count) requests in one pass from two connections")
            for r in requests { server.send("{\"ok\":true}", to: r.client) }
            seen += requests.map(\.line)
            return seen.contains("{\"request\":\"sync\"}")
        }
        #expect(seen.filter { $0.contains("status") }.count <= 2)
    }

    /// A client that never reads is not read either: its requests wait in its socket, not in
    /// the daemon's memory.
    @Test func aClientThatDoesNotReadIsNotRead() throws {
        let fd = try connect()
        var handed = 0
        // Status replies of 16 KiB: the socket fills after a few dozen.
        let reply = "{\"ok\":true,\"pad\":\"" + String(repeating: "x", count: 16 * 1024) + "\"}"
        for _ in 0..<50 {
            send(fd, String(repeating: "{\"request\":\"status\"}\n", count: 100))
            for r in pass() {
                handed += 1
                server.send(reply, to: r.client)
            }
        }
        #expect(handed < 200, "\(handed) requests handed out to a client that reads nothing")
        #expect(!isClosed(fd), "a client whose replies fit the cap is not dropped")
    }

    /// A monitor that stops reading is dropped when an event passes the cap.
    @Test func monitorThatStopsReadingIsDroppedAtTheCap() throws {
        let fd = try connect()
        let r = try request(from: fd, "{\"request\":\"monitor\"}")
        #expect(server.subscribe(r.client))
        let event = "{\"event\":\"opened\",\"pad\":\"" + String(repeating: "x", count: 64 * 1024) + "\"}"
        var sent = 0
        while server.subscriberCount > 0 && sent < 100 {
            server.broadcast(event)
            sent += 1
        }
        #expect(server.subscriberCount == 0, "still subscribed after \(sent) events of 64 KiB unread")
        // The socket's buffer, then the 1 MiB cap: never much more.
        #expect(sent * 64 * 1024 < ControlServer.maxPendingOutput + 2 * 1024 * 1024)
        try pump(until: "the monitor to be closed") { isClosed(fd) }
    }

    /// Each popup a connection holds hears its own end; the connection closes after the
    /// last, and closing it first reports it, however many it holds.
    @Test func aConnectionHoldingTwoPopups() throws {
        let fd = try connect()
        let a = try request(from: fd, "{\"request\":\"wait\",\"popup\":\"a\"}")
        let b = try request(from: fd, "{\"request\":\"wait\",\"popup\":\"b\"}")
        #expect(server.hold(a.connection) && server.hold(b.connection))
        server.finish(a.connection, with: "{\"event\":\"gone\",\"popup\":\"a\"}")
        try pump(until: "a's last line") { !lines(fd).isEmpty || isClosed(fd) }
        #expect(!isClosed(fd), "the connection closed while it still held b")
        close(fd)
        clients.removeAll { $0 == fd }
        var hangUps: [ControlServer.Connection] = []
        try pump(until: "the hang-up") {
            hangUps += server.takeHangUps()
            return !hangUps.isEmpty
        }
        #expect(hangUps == [b.connection])
    }

    /// Full, a new connection is always taken; who makes room: idle longest, then unread
    /// longest, then the oldest monitor, then the oldest connection owed an answer.
    @Test func evictionOrder() throws {
        let owed = try connect()
        _ = try request(from: owed, "{\"request\":\"reload\"}")
        let monitor = try connect()
        #expect(server.subscribe(try request(from: monitor, "{\"request\":\"monitor\"}").client))
        let stalled = try connect()
        let reply = "{\"ok\":true,\"pad\":\"" + String(repeating: "x", count: 64 * 1024) + "\"}"
        let asked = try request(from: stalled, "{\"request\":\"status\"}")
        for _ in 0..<8 { server.send(reply, to: asked.client) }
        var idle: [Int32] = []
        for _ in 0..<(ControlServer.maxClients - 3) {
            // Taken one by one: a full backlog would block connect(2).
            idle.append(try connect())
            try pump(until: "the connection taken") { server.connectionCount == idle.count + 3 }
        }
        /// A new connection, which then asks for a reload nobody answers (so it is not idle).
        func newcomer(evicts fd: Int32, saying words: String?) throws {
            let new = try connect()
            try pump(until: "room made") { isClosed(fd) }
            let said = lines(fd).last
            if let words {
                #expect(said?.contains(words) == true, "\(said ?? "nothing")")
            } else {
                #expect(said == nil || !said!.contains("closing"), "\(said ?? "")")
            }
            _ = try request(from: new, "{\"request\":\"reload\"}")
            #expect(server.connectionCount == ControlServer.maxClients)
        }
        for fd in idle { try newcomer(evicts: fd, saying: "idle longest") }
        // Its socket is full: it is not told.
        try newcomer(evicts: stalled, saying: nil)
        try newcomer(evicts: monitor, saying: "this monitor was the oldest")
        try newcomer(evicts: owed, saying: "all waiting for the daemon, and this one was the oldest")
    }
}
