import ClickawayControl
import ClickawayJSON
import ClickawaySystem
import Foundation
import Glibc
import ProcessSupport
import SystemPackage
import Testing
import XTestHarness

/// Clients of the same user that fill every connection the daemon has, in each way a client
/// can: a real client must still be answered every time, the abusers' memory stays bounded,
/// and whoever is let go to make room is told why (issue 24).
@Suite("Control socket: abusive clients", .serialized)
struct ControlSocketAbuseTests {
    static let config = ControlSocketTests.config

    /// A real client's `status` (connect, ask, read the answer), in microseconds.
    static func timedStatus(_ f: DaemonRun) throws -> Int64 {
        let start = MonotonicClock.microseconds()
        let reply: JSON
        do {
            reply = try ControlClient(path: f.socketPath).call(ControlRequest.status.json, timeoutMs: 10_000)
        } catch {
            throw HarnessError("a real status did not get through: \(error)\n\(f.log)")
        }
        let took = MonotonicClock.microseconds() - start
        #expect(reply["ok"]?.boolValue == true, "\(reply.text)")
        return took
    }

    /// The latencies' p50, p99 and max, in ms, as the benchmark prints them.
    static func summary(_ samples: [Int64]) -> (p50: Double, p99: Double, max: Double) {
        let sorted = samples.sorted()
        func at(_ q: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000 }
        return (at(0.5), at(0.99), Double(sorted.last ?? 0) / 1000)
    }

    /// Every real status was answered (each call waits at most 10 s, and a locked-out client
    /// fails there); how fast is `bench/ctlabuse`'s to measure, not a test's to assert.
    static func expectAnswered(_ samples: [Int64], during abuse: String) {
        let s = summary(samples)
        print("\(abuse): status p50 \(s.p50) ms, p99 \(s.p99) ms, max \(s.max) ms over \(samples.count)")
        #expect(!samples.isEmpty, "no real status was sent during \(abuse)")
    }

    static func residentKiB(_ pid: pid_t) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Whether the daemon has closed `fd`: its end of the stream, after whatever it was sent.
    static func isClosedByDaemon(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 0) == 1 else { return false }
        return p.revents & Int16(POLLHUP) != 0
    }

    /// A client that sends status requests as fast as its socket takes them and never reads.
    static func nonReader(_ f: DaemonRun) throws -> Int32 {
        let fd = try ControlSocketTests.connect(f.socketPath)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let burst = Array(String(repeating: ControlRequest.status.json.text + "\n", count: 8000).utf8)
        _ = ControlSocketTests.send(fd, burst)
        return fd
    }

    /// 64 clients that send requests and never read their replies: before, they locked every
    /// new connection out for good and grew the daemon by 20 MB. Now they are not read while
    /// their replies wait, and the one unread longest makes room for each new connection.
    @Test func clientsThatNeverReadCannotLockOutARealClient() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let pid = try #require(f.daemon?.pid)
        let before = Self.residentKiB(pid)
        var abusers = try (0..<ControlServer.maxClients).map { _ in try Self.nonReader(f) }
        defer { abusers.forEach { close($0) } }
        var samples: [Int64] = []
        for _ in 0..<40 {
            samples.append(try Self.timedStatus(f))
            // The one let go for it is replaced: the daemon stays full throughout.
            for (i, fd) in abusers.enumerated() where Self.isClosedByDaemon(fd) {
                close(fd)
                abusers[i] = try Self.nonReader(f)
            }
        }
        let run = try f.ctl(["status"])
        #expect(run.status == 0, "clickawayctl status among \(abusers.count) clients that never read: \(run.stderr)")
        Self.expectAnswered(samples, during: "64 clients that never read")
        let grown = Self.residentKiB(pid) - before
        #expect(grown < 16 * 1024, "the daemon grew by \(grown) KiB")
        print("64 clients that never read: the daemon grew by \(grown) KiB")
        #expect(f.daemon?.isRunning == true)
    }

    /// 16 waits, 32 monitors and 16 `add --pid` waiting for a window fill every connection
    /// and none is idle: before, a real client was locked out for up to 60 s. Now the oldest
    /// monitor makes room, and hears why; the waits' popups stay.
    @Test func waitsMonitorsAndPendingRequestsCannotLockOutARealClient() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        var open: [Int32] = []
        defer { open.forEach { close($0) } }
        func request(_ line: String) throws -> Int32 {
            let fd = try ControlSocketTests.connect(f.socketPath)
            open.append(fd)
            _ = ControlSocketTests.send(fd, Array((line + "\n").utf8))
            return fd
        }
        // This process has no window: its `add --pid` waits (for up to 60 s).
        for i in 0..<16 {
            _ = try request(#"{"request":"add","pid":\#(getpid()),"timeout_ms":60000,"popup":"pending-\#(i)"}"#)
        }
        try f.eventually("16 popups waiting for a window") { try f.report().waiting.count == 16 }
        for i in 0..<ControlServer.maxHolders {
            let fd = try request(#"{"request":"wait","rect":[\#(i * 10),0,5,5],"popup":"wait-\#(i)"}"#)
            #expect(ControlSocketTests.readLine(fd)?.contains(#""ok":true"#) == true)
        }
        var monitors: [Int32] = []
        func addMonitor() throws {
            let fd = try request(ControlRequest.monitor.json.text)
            #expect(ControlSocketTests.readLine(fd) == ControlReply.ok().text)
            monitors.append(fd)
        }
        for _ in 0..<ControlServer.maxMonitors { try addMonitor() }
        var samples: [Int64] = []
        var evicted = 0
        for _ in 0..<40 {
            samples.append(try Self.timedStatus(f))
            // The oldest monitor went, with a line that says why; a new one takes its place.
            let oldest = monitors.removeFirst()
            let line = try #require(ControlSocketTests.readLine(oldest, timeoutMs: 5000), "the oldest monitor was not told")
            let refusal = try #require(Refusal(reply: try JSON.parse(line)), "\(line)")
            #expect(refusal.closing && refusal.message.contains("this monitor was the oldest"), "\(line)")
            #expect(ControlSocketTests.readLine(oldest, timeoutMs: 5000) == nil)
            evicted += 1
            try addMonitor()
        }
        Self.expectAnswered(samples, during: "16 waits, 32 monitors, 16 pending requests")
        let report = try f.report()
        #expect(report.waiting.count == 16)
        #expect(report.open.filter { $0.popup.hasPrefix("wait-") }.count == 16)
        #expect(evicted == 40)
    }

    /// With every connection owed an answer (16 waits, 48 pending `add --pid`), the oldest
    /// makes room; clickawayctl says what happened in words that are true.
    @Test func whenAllAreOwedTheOldestGoesAndClickawayctlSaysWhy() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let first = try BackgroundCtl(f, ["open", "--pid", "\(getpid())", "--timeout", "60", "--name", "first"])
        try f.eventually("the first pending request") { try f.report().waiting.count == 1 }
        var open: [Int32] = []
        defer { open.forEach { close($0) } }
        for i in 0..<47 {
            let fd = try ControlSocketTests.connect(f.socketPath)
            open.append(fd)
            _ = ControlSocketTests.send(fd, Array((#"{"request":"add","pid":\#(getpid()),"timeout_ms":60000,"popup":"pending-\#(i)"}"# + "\n").utf8))
        }
        try f.eventually("48 popups waiting for a window") { try f.report().waiting.count == 48 }
        for i in 0..<ControlServer.maxHolders {
            let fd = try ControlSocketTests.connect(f.socketPath)
            open.append(fd)
            _ = ControlSocketTests.send(fd, Array((#"{"request":"wait","rect":[\#(i * 10),0,5,5],"popup":"wait-\#(i)"}"# + "\n").utf8))
            #expect(ControlSocketTests.readLine(fd)?.contains(#""ok":true"#) == true)
        }
        let run = try f.ctl(["status"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try first.exitStatus() == 2)
        #expect(first.stderr.contains("the daemon closed the connection: \(ControlServer.maxClients) connections were open, "
            + "all waiting for the daemon, and this one was the oldest"), "\(first.stderr)")
        #expect(!first.stderr.contains("other users"))
    }

    /// Two `wait`s on one connection: each hears how its popup ended, and what is left of
    /// them ends with the connection (before, the second outlived it).
    @Test func twoWaitsOnOneConnectionEndWithIt() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let fd = try ControlSocketTests.connect(f.socketPath)
        for name in ["one", "two", "three"] {
            _ = ControlSocketTests.send(fd, Array((#"{"request":"wait","rect":[0,0,5,5],"popup":"\#(name)"}"# + "\n").utf8))
            #expect(ControlSocketTests.readLine(fd)?.contains(#""popup":"\#(name)""#) == true)
        }
        #expect(Set(try f.openPopups()) == ["one", "two", "three"])
        // The first ends: its line comes, and the connection stays for the others.
        _ = try f.request(.close(popup: "one"))
        let ended = try #require(ControlSocketTests.readLine(fd))
        #expect(ended.contains(#""event":"gone""#) && ended.contains(#""popup":"one""#), "\(ended)")
        #expect(Set(try f.openPopups()) == ["two", "three"])
        close(fd)
        try f.eventually("the connection's popups to go with it") { try f.openPopups().isEmpty }
        #expect(try f.report().open.isEmpty)
    }

    /// The documented limit holds: a command of 255 (and 256) arguments of 4 KiB, even of
    /// characters JSON escapes, goes through `clickawayctl open`.
    @Test(arguments: [(255, "x"), (256, "\"")])
    func commandAtTheDocumentedLimit(count: Int, character: String) throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let argument = String(repeating: character, count: RuntimePopupRequest.maxArgumentBytes)
        let run = try f.ctl(["open", "--rect", "0,0,5,5", "--name", "big", "--", "true"] + Array(repeating: argument, count: count - 1))
        #expect(run.status == 0, "\(count) arguments of 4 KiB: \(run.stderr)")
        #expect(try f.openPopups() == ["big"])
    }

    /// A request longer than the daemon reads is refused in a closing line that names the
    /// limit, which clickawayctl's client reports instead of "Broken pipe".
    @Test func tooLongRequestNamesTheLimit() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let name = String(repeating: "n", count: ControlServer.maxLine + 1)
        let client = try ControlClient(path: f.socketPath)
        #expect {
            _ = try client.call(.object([("request", .string("open")), ("popup", .string(name))]))
        } throws: { error in
            let text = "\(error)"
            return text.contains("the daemon closed the connection: request longer than 8 MiB") && !text.contains("Broken pipe")
        }
        #expect(try f.status()["ok"]?.boolValue == true)
    }
}
