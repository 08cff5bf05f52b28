import ClickawayControl
import ClickawayJSON
import ClickawaySystem
import Foundation
import Glibc
import ProcessSupport
import SystemPackage
import Testing
import XTestHarness

/// The control socket against clients that misbehave: none of them may hurt the daemon or
/// keep it from serving the next client.
@Suite("Control socket: permissions and bad clients", .serialized)
struct ControlSocketTests {
    static let config = "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\n"

    /// A raw connection, to send what ControlClient never would.
    static func connect(_ path: String) throws -> Int32 {
        do {
            return try FileDescriptor.connectedUnixSocket(try UnixSocketAddress(path: path)).rawValue
        } catch {
            throw HarnessError("cannot connect to \(path): \(error)")
        }
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until a newline or the end of the stream, at most `timeoutMs`.
    static func readLine(_ fd: Int32, timeoutMs: Int32 = 10_000) -> String? {
        var data: [UInt8] = []
        while !data.contains(0x0A) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, timeoutMs) == 1 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            data += chunk[..<n]
        }
        return data.isEmpty ? nil : String(decoding: data.prefix { $0 != 0x0A }, as: UTF8.self)
    }

    func expectServing(_ f: DaemonFixture, after what: String) throws {
        #expect(f.daemon?.isRunning == true, "the daemon died after \(what): \(f.log)")
        #expect(try f.status()["ok"]?.boolValue == true, "status failed after \(what)")
    }

    @Test func directoryIs0700AndSocketIs0600() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        var st = stat()
        #expect(stat(f.runtimeDirectory.path + "/clickaway", &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700)
        #expect(stat(f.socketPath, &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(st.st_mode & 0o777 == 0o600)
    }

    @Test func garbageGetsAnErrorReply() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        for garbage in ["hello", "{\"request\":", "[1,2,3]", "{\"request\":\"explode\"}", "{\"request\":42}", "\u{7f}\u{1}"] {
            let fd = try Self.connect(f.socketPath)
            defer { close(fd) }
            _ = Self.send(fd, Array((garbage + "\n").utf8))
            let reply = try JSON.parse(try #require(Self.readLine(fd), "no reply to \(garbage)"))
            #expect(reply["ok"]?.boolValue == false, "\(garbage) → \(reply.text)")
            #expect(reply["error"]?.stringValue?.isEmpty == false)
        }
        try expectServing(f, after: "garbage")
    }

    @Test func tenMegabyteLineIsRefusedAndTheDaemonGoesOn() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let fd = try Self.connect(f.socketPath)
        defer { close(fd) }
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
        var sent = 0
        // The daemon stops reading after 64 KiB and closes: sending fails early, as it should.
        while sent < 10 * 1024 * 1024 {
            let n = Self.send(fd, chunk)
            if n <= 0 { break }
            sent += n
        }
        if let line = Self.readLine(fd, timeoutMs: 5000) {
            #expect(line.contains("longer than"), "\(line)")
        }
        try expectServing(f, after: "a 10 MB line")
    }

    @Test func halfWrittenRequestDoesNotBlockOthers() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let fd = try Self.connect(f.socketPath)
        defer { close(fd) }
        _ = Self.send(fd, Array("{\"request\":\"sta".utf8))
        try expectServing(f, after: "a half-written request")
        _ = Self.send(fd, Array("tus\"}\n".utf8))
        let reply = try JSON.parse(try #require(Self.readLine(fd)))
        #expect(reply["ok"]?.boolValue == true)
        #expect(reply["backend"]?.stringValue == "x11-grab")
    }

    @Test func clientThatLeavesMidReplyDoesNotHurt() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        for _ in 0..<5 {
            let fd = try Self.connect(f.socketPath)
            // Many replies queued, none read, then gone: the daemon's writes fail with EPIPE.
            let burst = String(repeating: "{\"request\":\"status\"}\n", count: 500)
            _ = Self.send(fd, Array(burst.utf8))
            close(fd)
        }
        try expectServing(f, after: "clients that left mid-reply")
    }

    /// Idle connections of the same user (a script that forgot to close, a stuck client)
    /// cannot lock a real clickawayctl out: the one idle longest makes room.
    @Test func idleConnectionsMakeRoomForARealClient() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let idle = try (0..<(ControlServer.maxClients + 16)).map { _ in try Self.connect(f.socketPath) }
        defer { idle.forEach { close($0) } }
        try f.sync()
        let run = try f.ctl(["status"])
        #expect(run.status == 0, "clickawayctl status with \(idle.count) idle connections open: \(run.stderr)")
        // The first ones were let go to make room: they read why, then the end of the stream.
        let line = try #require(Self.readLine(idle[0], timeoutMs: 5000), "the connection idle longest is still open after 5 s")
        let refusal = try #require(Refusal(reply: try JSON.parse(line)), "\(line)")
        #expect(refusal.closing && refusal.message.contains("idle longest"), "\(line)")
        #expect(Self.readLine(idle[0], timeoutMs: 5000) == nil, "the connection idle longest was not closed")
        try expectServing(f, after: "\(idle.count) idle connections")
    }

    /// Monitors are limited, so that they too leave room for requests.
    @Test func monitorsAreLimitedAndRequestsStillServed() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        var monitors: [Int32] = []
        defer { monitors.forEach { close($0) } }
        for _ in 0..<ControlServer.maxMonitors {
            let fd = try Self.connect(f.socketPath)
            monitors.append(fd)
            _ = Self.send(fd, Array((ControlRequest.monitor.json.text + "\n").utf8))
            #expect(Self.readLine(fd) == ControlReply.ok().text)
        }
        let refused = try Self.connect(f.socketPath)
        defer { close(refused) }
        _ = Self.send(refused, Array((ControlRequest.monitor.json.text + "\n").utf8))
        let reply = try JSON.parse(try #require(Self.readLine(refused)))
        #expect(Refusal(reply: reply)?.message.contains("\(ControlServer.maxMonitors) monitors are connected already") == true, "\(reply.text)")
        let idle = try (0..<ControlServer.maxClients).map { _ in try Self.connect(f.socketPath) }
        defer { idle.forEach { close($0) } }
        #expect(try f.ctl(["status"]).status == 0)
        #expect(try f.report().monitors == ControlServer.maxMonitors)
        // The monitors still hear the daemon.
        try f.window(Layout.popup, class: "Pop")
        for fd in monitors.prefix(3) {
            #expect(Self.readLine(fd).map { $0.contains(#""event":"opened""#) } == true)
        }
    }
}
