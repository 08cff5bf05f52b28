import ClickawayDaemon
import ClickawaySystem
import Foundation
import ProcessSupport
import Testing

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

        let before = UInt64(MonotonicClock.microseconds())
        #expect(notifier.sendReloading(status: "reloading\nconfig.toml"))
        let after = UInt64(MonotonicClock.microseconds())

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

}

