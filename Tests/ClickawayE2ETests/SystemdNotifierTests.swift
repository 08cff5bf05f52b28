import ClickawaySystem
import Glibc
import ProcessSupport
import Testing

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

        let signalled = UInt64(MonotonicClock.microseconds())
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
