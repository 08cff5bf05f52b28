import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import Glibc
import ProcessSupport
import SystemPackage
import Testing
import XTestHarness

/// `monitor`: the events of a scripted session, in the order they happened.
@Suite("monitor", .serialized)
struct MonitorTests {
    static let config = "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\ngrace_ms = 0\n"

    @Test func seesASessionInOrder() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let events = try f.monitor()

        let popup = try f.window(Layout.popup, class: "Pop")
        let opened = try events.next("opened")
        #expect(opened["event"]?.stringValue == "opened")
        #expect(opened["popup"]?.stringValue == "pop")
        #expect(opened["window"]?.stringValue == "0x" + String(popup.id, radix: 16))
        #expect(opened["rect"]?.arrayValue?.compactMap(\.intValue) == [100, 100, 300, 200])

        try f.click(900, 600)
        let dismissed = try events.next("dismissed")
        #expect(dismissed["event"]?.stringValue == "dismissed")
        #expect(dismissed["popups"]?.arrayValue?.compactMap(\.stringValue) == ["pop"])
        #expect(dismissed["reason"]?.stringValue == "outside")
        #expect(dismissed["button"]?.intValue == 1)
        #expect(dismissed["x"]?.intValue == 900)
        #expect(dismissed["y"]?.intValue == 600)
        #expect(dismissed["click"]?.stringValue == "swallow")
        let closed = try events.next("closed")
        #expect(closed["event"]?.stringValue == "closed")
        #expect(closed["window"] == opened["window"])

        try f.editConfigInPlace("[[popup]]\nname = 1\n")
        #expect(try events.next("rejected")["event"]?.stringValue == "rejected")
        try f.editConfigInPlace(Self.config)
        #expect(try events.next("reloaded")["event"]?.stringValue == "reloaded")

        // Another client holds button 1 without modifiers: the next popup's grab is refused,
        // which the daemon hears once the server has answered, after the popup opened.
        let other = try TestClient(display: f.xvfb.display)
        #expect(other.grabOnRoot(button: 1, modifiers: []) == nil)
        try f.window(Layout.popup, class: "Pop")
        #expect(try events.next("opened")["event"]?.stringValue == "opened")
        let refused = try events.next("grab_refused")
        #expect(refused["event"]?.stringValue == "grab_refused")
        #expect(refused["button"]?.intValue == 1)
        #expect(refused["modifiers"]?.stringValue == "no modifiers")
        #expect(refused["error"]?.stringValue == "BadAccess")
    }

    @Test func ctlMonitorPrintsLinesAndEndsWhenTheDaemonGoes() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let output = f.directory.appendingPathComponent("monitor.out").path
        let file = try FileDescriptor.open(output, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: .ownerReadWrite)
        let p = try ChildProcess([DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl").path, "monitor"],
                                 environment: f.environment, stdout: file)
        try file.close()
        defer { p.stop() }

        try eventually("clickawayctl monitor to subscribe", timeout: .seconds(10)) {
            try f.status()["monitors"]?.intValue == 1
        }
        try f.window(Layout.popup, class: "Pop")
        var lines: [String] = []
        try eventually("clickawayctl monitor to print the \"opened\" event", timeout: .seconds(10)) {
            lines = (try? String(contentsOfFile: output, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
            return !lines.isEmpty
        }
        let first = try JSON.parse(lines[0])
        #expect(first["event"]?.stringValue == "opened")

        f.stopDaemon()
        #expect(p.signalAndWait(0, within: .seconds(10)) == 0, "clickawayctl monitor did not exit 0 after the daemon stopped")
    }
}
