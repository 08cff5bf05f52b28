import ClickawayControl
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// A datagram socket standing in for systemd's notification socket: bound at a filesystem
/// path or in the abstract namespace, with SO_PASSCRED so each message carries its sender's
/// pid, which systemd checks against the unit's main pid (NotifyAccess=main).
final class NotifySocket {
    /// What $NOTIFY_SOCKET must say to reach this socket.
    let environmentValue: String
    private let fd: Int32
    private let path: String?

    struct Message {
        let text: String
        let senderPID: pid_t

        var lines: [Substring] { text.split(separator: "\n") }

        func value(_ key: String) -> String? {
            lines.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
    }

    init(abstract: Bool) throws {
        let name = "clickaway-notify-\(getpid())-\(UUID().uuidString.prefix(8))"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("cannot create a datagram socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8]
        if abstract {
            path = nil
            environmentValue = "@" + name
            bytes = [0] + Array(name.utf8)  // no terminator: the length ends an abstract name
        } else {
            let socketPath = FileManager.default.temporaryDirectory.appendingPathComponent(name + ".sock").path
            path = socketPath
            environmentValue = socketPath
            bytes = Array(socketPath.utf8) + [0]
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw HarnessError("cannot bind a datagram socket at \(environmentValue): \(reason)")
        }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    /// The next datagram, or nil when none arrives within `timeout`.
    func next(within timeout: Duration) throws -> Message? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = try receive() { return message }
            let left = deadline - .now
            guard left > .zero else { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
        }
    }

    /// Reads messages until one holds `line` (e.g. "READY=1"); fails saying which never came.
    func waitFor(_ line: String, within timeout: Duration, _ context: @autoclosure () -> String = "") throws -> Message {
        let deadline = ContinuousClock.now + timeout
        var seen: [String] = []
        while let message = try next(within: deadline - .now) {
            if message.lines.contains(Substring(line)) { return message }
            seen.append(message.text.replacingOccurrences(of: "\n", with: "\\n"))
        }
        throw HarnessError("no \(line) arrived on \(environmentValue) within \(timeout); messages seen instead: "
            + (seen.isEmpty ? "none" : seen.joined(separator: " | ")) + context())
    }

    /// One waiting datagram and its sender's pid, nil when none is waiting.
    private func receive() throws -> Message? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var control = [UInt64](repeating: 0, count: 8)  // 64 bytes, aligned for cmsghdr
        let (count, senderPID): (Int, pid_t) = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    let n = recvmsg(fd, &header, Int32(MSG_DONTWAIT))
                    guard n >= 0 else { return (n, 0) }
                    return (n, Self.credentialsPID(controlBytes, length: Int(header.msg_controllen)))
                }
            }
        }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return nil }
            throw HarnessError("cannot read \(environmentValue): \(String(cString: strerror(errno)))")
        }
        return Message(text: String(decoding: buffer[..<count], as: UTF8.self), senderPID: senderPID)
    }

    /// The pid in an SCM_CREDENTIALS control message (struct ucred: pid, uid, gid), 0 if none.
    private static func credentialsPID(_ control: UnsafeMutableRawBufferPointer, length: Int) -> pid_t {
        let scmCredentials: Int32 = 2  // SCM_CREDENTIALS, hidden behind _GNU_SOURCE in Glibc's module
        let headerSize = MemoryLayout<cmsghdr>.size
        guard length >= headerSize + MemoryLayout<pid_t>.size else { return 0 }
        let header = control.load(as: cmsghdr.self)
        guard header.cmsg_level == SOL_SOCKET, header.cmsg_type == scmCredentials else { return 0 }
        return control.load(fromByteOffset: headerSize, as: pid_t.self)
    }
}

/// sd_notify(3) by hand: datagrams on a real socket, byte for byte.
@Suite struct SystemdNotifierTests {
    @Test(arguments: [false, true])
    func sendsTheExactDatagramFromThisProcess(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.environmentValue]))

        #expect(notifier.send("READY=1\nSTATUS=watching 3 popups"))
        let message = try #require(try socket.next(within: .seconds(5)), "no datagram arrived at \(socket.environmentValue)")
        #expect(message.text == "READY=1\nSTATUS=watching 3 popups")
        #expect(message.senderPID == getpid())
        #expect(notifier.lastFailure == nil)

        #expect(notifier.send("WATCHDOG=1"))
        #expect(try socket.next(within: .seconds(5))?.text == "WATCHDOG=1")
    }

    @Test func reloadingCarriesTheMonotonicClockAndAOneLineStatus() throws {
        let socket = try NotifySocket(abstract: false)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.environmentValue]))

        let before = monotonicMicroseconds()
        #expect(notifier.sendReloading(status: "reloading\nconfig.toml"))
        let after = monotonicMicroseconds()

        let message = try #require(try socket.next(within: .seconds(5)), "no RELOADING=1 arrived")
        #expect(message.lines.first == "RELOADING=1")
        #expect(message.value("STATUS") == "reloading config.toml")
        let stamp = try #require(message.value("MONOTONIC_USEC").flatMap { UInt64($0) }, "no MONOTONIC_USEC in \(message.text)")
        #expect((before...after).contains(stamp))
    }

    @Test func noSocketInTheEnvironmentMeansNoNotifier() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "200000"]) == nil)
    }

    @Test(arguments: [
        ("relative/notify", "neither an absolute path nor an abstract socket name"),
        ("/" + String(repeating: "x", count: 200), "longer than a Unix socket address allows"),
        ("/nonexistent/clickaway/notify", "No such file or directory"),
    ])
    func anUnusableSocketFailsEverySendAndSaysWhy(name: String, reason: String) throws {
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": name]))
        #expect(!notifier.send("READY=1"))
        let failure = try #require(notifier.lastFailure)
        #expect(failure.contains(reason), "\(failure)")
        #expect(failure.contains(name))
    }

    /// WATCHDOG_USEC=200000 asks for a ping at least every 200 ms: we ping every 100.
    @Test(arguments: [
        (["WATCHDOG_USEC": "200000"], 100),
        (["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "\(getpid())"], 100),
        (["WATCHDOG_USEC": "30000000"], 15_000),
        (["WATCHDOG_USEC": "1000"], 1),  // half a millisecond rounds up to the smallest interval
        (["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "\(getppid())"], nil),  // another process's watchdog
        (["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "me"], nil),
        (["WATCHDOG_USEC": "soon"], nil),
        (["WATCHDOG_USEC": "-200000"], nil),
        (["WATCHDOG_USEC": "0"], nil),
        (["WATCHDOG_USEC": "18446744073709551615"], nil),  // USEC_INFINITY
        (["WATCHDOG_PID": "\(getpid())"], nil),
        ([:], nil),
    ] as [([String: String], Int64?)])
    func watchdogInterval(environment: [String: String], expectedMs: Int64?) throws {
        let notifier = try #require(SystemdNotifier(
            environment: environment.merging(["NOTIFY_SOCKET": "@clickaway-unused"]) { $1 }))
        #expect(notifier.watchdogIntervalMs == expectedMs)
    }

    /// systemd not reading must never stall the daemon: once the socket's queue is full, send
    /// fails at once instead of waiting (MSG_DONTWAIT).
    @Test func aFullQueueFailsInsteadOfBlocking() throws {
        let socket = try NotifySocket(abstract: true)
        let probe = FloodProbe(try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.environmentValue])))
        let finished = DispatchSemaphore(value: 0)
        Thread {
            probe.flood()
            finished.signal()
        }.start()
        guard finished.wait(timeout: .now() + 30) == .success else {
            Issue.record("send blocked on a socket nobody reads (the sending thread is left stuck)")
            return
        }
        let failure = try #require(probe.firstFailure, "\(FloodProbe.attempts) datagrams fitted in an unread socket's queue")
        #expect(failure.index > 0)
        #expect(failure.reason?.contains("Resource temporarily unavailable") == true, "\(failure.reason ?? "no reason")")
        withExtendedLifetime(socket) {}
    }

    /// Sends until a send fails, on a thread of its own so a blocking send cannot hang the test.
    private final class FloodProbe: @unchecked Sendable {
        static let attempts = 100_000
        let notifier: SystemdNotifier
        /// Read only after the flooding thread has signalled that it finished.
        var firstFailure: (index: Int, reason: String?)?

        init(_ notifier: SystemdNotifier) { self.notifier = notifier }

        func flood() {
            for index in 0..<Self.attempts where !notifier.send("WATCHDOG=1") {
                firstFailure = (index, notifier.lastFailure)
                return
            }
        }
    }

    private func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}

/// The daemon under a stand-in for systemd: NOTIFY_SOCKET and WATCHDOG_USEC as a Type=notify
/// unit with WatchdogSec= sets them.
@Suite("systemd notification, end to end", .serialized)
struct SystemdNotificationE2ETests {
    static let config = """
        [[popup]]
        name = "pop"
        window = { class = "Pop" }
        """

    @Test func daemonReportsReadyThenPingsTheWatchdog() throws {
        let socket = try NotifySocket(abstract: false)
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon(extraEnvironment: ["NOTIFY_SOCKET": socket.environmentValue, "WATCHDOG_USEC": "200000"])
        let pid = try #require(f.daemon?.pid)

        let ready = try socket.waitFor("READY=1", within: .seconds(10), "\ndaemon log:\n\(f.log)")
        #expect(ready.senderPID == pid, "READY=1 came from pid \(ready.senderPID), not the daemon's \(pid)")
        // Twice: a watchdog is a heartbeat, not a single message.
        for _ in 0..<2 {
            let ping = try socket.waitFor("WATCHDOG=1", within: .seconds(5), "\ndaemon log:\n\(f.log)")
            #expect(ping.senderPID == pid)
        }
    }

    @Test func daemonAnswersSighupWithReloadingThenReady() throws {
        let socket = try NotifySocket(abstract: true)
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon(extraEnvironment: ["NOTIFY_SOCKET": socket.environmentValue])
        let pid = try #require(f.daemon?.pid)
        _ = try socket.waitFor("READY=1", within: .seconds(10), "\ndaemon log:\n\(f.log)")

        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let signalled = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        kill(pid, SIGHUP)

        let reloading = try socket.waitFor("RELOADING=1", within: .seconds(5), "\ndaemon log:\n\(f.log)")
        #expect(reloading.senderPID == pid)
        // Type=notify-reload only accepts a RELOADING=1 stamped after it sent the signal.
        let stamp = try #require(reloading.value("MONOTONIC_USEC").flatMap { UInt64($0) },
                                 "RELOADING=1 without MONOTONIC_USEC: \(reloading.text)")
        #expect(stamp >= signalled)
        _ = try socket.waitFor("READY=1", within: .seconds(5), "\ndaemon log:\n\(f.log)")
    }
}
