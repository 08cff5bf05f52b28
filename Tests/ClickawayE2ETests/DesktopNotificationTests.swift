import ClickawayControl
import ClickawaySystem
import Foundation
import Glibc
import ProcessSupport
import SystemPackage
import Testing
import XTestHarness

/// A rejected configuration reaches the desktop: the daemon runs notify-send, and a real
/// dunst, on a session bus of the test's own, receives the notification.
@Suite("Desktop notifications of a rejected configuration", .serialized)
struct DesktopNotificationTests {
    /// A private session bus (no service activation: only our dunst can answer) and dunst on
    /// the fixture's Xvfb, with a rule that writes every clickaway notification to `record`.
    final class NotificationDaemon {
        let directory: URL
        let address: String
        let record: String
        private let bus: PrivateSessionBus
        private let dunst: ChildProcess

        init(display: String, in parent: URL) throws {
            directory = parent.appendingPathComponent("desktop")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            record = directory.appendingPathComponent("received").path
            // The rule's script gets appname, summary, body, icon and urgency as arguments.
            let script = directory.appendingPathComponent("record").path
            try TestFiles.write("#!/bin/sh\nprintf 'app=%s\\nsummary=%s\\nurgency=%s\\nbody=%s\\n.\\n' \"$1\" \"$2\" \"$5\" \"$3\" >> '\(record)'\n",
                                to: script, permissions: [.ownerReadWriteExecute])
            let dunstrc = directory.appendingPathComponent("dunstrc").path
            try TestFiles.write("[global]\n    follow = none\n[clickaway]\n    appname = clickaway\n    script = \(script)\n", to: dunstrc)

            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["WAYLAND_DISPLAY"] = nil
            environment["XDG_CONFIG_HOME"] = directory.path
            let bus = try PrivateSessionBus(in: directory, environment: environment)
            address = bus.address
            environment["DBUS_SESSION_BUS_ADDRESS"] = address
            let dunst = try ChildProcess(["dunst", "-config", dunstrc], environment: environment)
            do {
                // NameHasOwner activates nothing: true once dunst has taken the name.
                let ask = ["dbus-send", "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                           "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications"]
                try eventually("dunst to own org.freedesktop.Notifications on the test's bus", timeout: .seconds(10), every: .milliseconds(20)) {
                    try dunst.checkRunning(while: "starting")
                    return try ProgramRun.run(ask, environment: environment, limit: .seconds(5)).stdout.contains("boolean true")
                }
            } catch {
                dunst.stop()
                throw HarnessError("\(error); dunst's output:\n\(dunst.logTail)")
            }
            self.bus = bus
            self.dunst = dunst
        }

        deinit { dunst.stop() }

        /// The notifications dunst has received from clickaway so far, each as its fields.
        func received() -> [[String: String]] {
            guard let text = try? String(contentsOfFile: record, encoding: .utf8) else { return [] }
            return text.components(separatedBy: "\n.\n").filter { !$0.isEmpty }.map { entry in
                var fields: [String: String] = [:]
                var key = ""
                for line in entry.split(separator: "\n", omittingEmptySubsequences: false) {
                    if let equals = line.firstIndex(of: "="), ["app", "summary", "urgency", "body"].contains(String(line[..<equals])) {
                        key = String(line[..<equals])
                        fields[key] = String(line[line.index(after: equals)...])
                    } else {
                        fields[key, default: ""] += "\n" + line
                    }
                }
                return fields
            }
        }

        /// Waits until dunst has received `count` notifications, saying what it has if not.
        func await(_ count: Int, _ f: DaemonFixture) throws -> [[String: String]] {
            do {
                try eventually("dunst to receive notification \(count) from clickaway", timeout: .seconds(15), every: .milliseconds(20)) {
                    try dunst.checkRunning(while: "waiting for a notification")
                    return received().count >= count
                }
            } catch {
                throw HarnessError("\(error); received: \(received()); dunst:\n\(dunst.logTail)\nthe daemon's log:\n\(f.log)")
            }
            return received()
        }
    }

    static let good = BrokenConfigTests.pop
    static let typo = BrokenConfigTests.typo

    @Test func aRejectedReloadAndABrokenStartAreShown() throws {
        let f = try DaemonFixture(config: Self.typo)
        let desktop = try NotificationDaemon(display: f.xvfb.display, in: f.directory)
        try f.startDaemon(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": desktop.address])

        // At start: running with no popups, and the diagnostic.
        let atStart = try desktop.await(1, f)[0]
        #expect(atStart["app"] == "clickaway" && atStart["summary"] == "clickaway: configuration rejected", "\(atStart)")
        #expect(atStart["urgency"] == "CRITICAL", "\(atStart)")
        #expect(atStart["body"]?.contains("Running with no popups") == true, "\(atStart)")
        #expect(atStart["body"]?.contains("did you mean") == true, "\(atStart)")

        // Fixed, then broken again on a reload: the previous configuration keeps running.
        let events = try f.monitor()
        try f.editConfigInPlace(Self.good)
        _ = try events.await(.reloaded)
        try f.editConfigInPlace(Self.good + "[[popup]]\nname = \"pop\"\nrect = [0, 0, 10, 10]\n")
        _ = try events.await(.rejected)
        let reload = try desktop.await(2, f)[1]
        #expect(reload["body"]?.contains("The previous configuration keeps running.") == true, "\(reload)")
        #expect(reload["body"]?.contains("config.toml:6:8: error: popup \"pop\" → name: duplicate popup name") == true, "\(reload)")
    }

    /// `notify = false` in the running configuration: rejections are not shown; `true` again:
    /// they are. The record shows the second rejection was skipped, in order, with no sleep.
    @Test func notifyFalseKeepsThemOffTheDesktop() throws {
        let f = try DaemonFixture(config: Self.good)
        let desktop = try NotificationDaemon(display: f.xvfb.display, in: f.directory)
        try f.startDaemon(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": desktop.address])
        let events = try f.monitor()
        let broken = "[[popup]]\nname = \"first\"\nrect = [0, 0, 10, 10]\nbad_key = 1\n"
        try f.editConfigInPlace(broken)
        _ = try events.await(.rejected)
        _ = try desktop.await(1, f)

        try f.editConfigInPlace("[settings]\nnotify = false\n" + Self.good)
        _ = try events.await(.reloaded)
        try f.editConfigInPlace("[settings]\nnotify = false\n" + Self.good + "second_bad_key = 1\n")
        _ = try events.await(.rejected)

        try f.editConfigInPlace(Self.good)
        _ = try events.await(.reloaded)
        try f.editConfigInPlace(Self.good + "third_bad_key = 1\n")
        _ = try events.await(.rejected)
        let received = try desktop.await(2, f)
        #expect(received.count == 2, "\(received)")
        #expect(received[1]["body"]?.contains("third_bad_key") == true, "\(received)")
        #expect(!received.contains { $0["body"]?.contains("second_bad_key") == true }, "\(received)")
    }

    /// Without notify-send on PATH the daemon says so once and keeps running.
    @Test func aMissingNotifySendIsSaidOnce() throws {
        let f = try DaemonFixture(config: Self.good)
        let empty = f.directory.appendingPathComponent("empty-bin")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try f.startDaemon(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent", "PATH": empty.path])
        let events = try f.monitor()
        for key in ["a", "b"] {
            try f.editConfigInPlace(Self.good + "\(key)_bad = 1\n")
            _ = try events.await(.rejected)
            try f.sync()
        }
        let said = f.log.components(separatedBy: "notify-send is not on PATH").count - 1
        #expect(said == 1, "said \(said) times:\n\(f.log)")
        #expect(f.daemon?.isRunning == true)
    }
}
