import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// Windows that change after they map, and dismissals that do not take: the daemon's idea of
/// what is open follows what is on screen.
@Suite("Window popups: titles that change, dismissals that fail, a real xterm", .serialized)
struct WindowLifecycleTests {
    /// A window popup dismissed by running `command`.
    static func popup(dismissedBy command: [String]) -> String {
        let argv = command.map { "\"\($0)\"" }.joined(separator: ", ")
        return "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\ngrace_ms = 0\ndismiss = { command = [\(argv)] }\n"
    }

    @Test func titleChangedAfterMapIsMatchedAgain() throws {
        let f = try DaemonFixture(config: "[[popup]]\nname = \"pop\"\nwindow = { title = \"Popup\" }\ngrace_ms = 0\n")
        try f.startDaemon()
        let w = try f.window(Layout.popup, class: "Anything", title: "loading")
        #expect(try f.openPopups().isEmpty)

        try f.client.setTitle(w, "Popup")
        try f.sync()
        #expect(try f.openPopups() == ["pop"])
        #expect(try f.isIntercepting())

        try f.client.setTitle(w, "Popup (done)")
        try f.sync()
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
    }

    /// A window unmapped and mapped again is the popup it was (placed from what was read
    /// before, its properties still followed); one whose title changed while unmapped is
    /// matched by its new title.
    @Test func aWindowMappedAgainIsMatchedAsItIsNow() throws {
        let f = try DaemonFixture(config: "[[popup]]\nname = \"pop\"\nwindow = { title = \"Popup\" }\ngrace_ms = 0\n")
        try f.startDaemon()
        let w = try f.window(Layout.popup, class: "Anything", title: "Popup")
        #expect(try f.openPopups() == ["pop"])
        let connection = f.client.connection
        for round in 1...3 {
            connection.unmapWindow(w.id)
            connection.flush()
            try f.sync()
            #expect(try f.openPopups().isEmpty, "round \(round): unmapped")
            connection.mapWindow(w.id)
            connection.flush()
            try f.sync()
            #expect(try f.openPopups() == ["pop"], "round \(round): mapped again")
        }
        connection.unmapWindow(w.id)
        try f.client.setTitle(w, "Popup (done)")
        connection.mapWindow(w.id)
        connection.flush()
        try f.sync()
        #expect(try f.openPopups().isEmpty, "retitled while unmapped")
        connection.unmapWindow(w.id)
        try f.client.setTitle(w, "Popup")
        connection.mapWindow(w.id)
        connection.flush()
        try f.sync()
        #expect(try f.openPopups() == ["pop"], "retitled back while unmapped")
    }

    /// A window's properties are followed on the window reads' own connection: a sync waits
    /// for what that connection was sent before it too, every time (not only when its
    /// PropertyNotify happens to come before the daemon's own round trip's reply). The title
    /// is written and not waited for, as `xdotool set_window --name T; clickawayctl sync` does.
    @Test func everyTitleChangeIsSeenByTheNextSync() throws {
        let f = try DaemonFixture(config: "[[popup]]\nname = \"pop\"\nwindow = { title = \"Popup\" }\ngrace_ms = 0\n")
        try f.startDaemon()
        let w = try f.window(Layout.popup, class: "Anything", title: "loading")
        for round in 1...40 {
            let title = round.isMultiple(of: 2) ? "loading" : "Popup"
            try f.client.setTitle(w, title, waiting: false)
            try f.sync()
            #expect(try f.openPopups() == (title == "Popup" ? ["pop"] : []), "round \(round), title \(title)")
        }
    }

    /// What i3 and herbstluftwm do, played by the test: a frame with a WM_CLASS of its own
    /// around the client, the frame mapped first, WM_STATE set on the client only after.
    /// The frame is never taken for the client; the client counts once WM_STATE names it.
    @Test func clientIsTheWindowWithWMStateNotAFrameWithWMClass() throws {
        let f = try DaemonFixture(config: "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\ngrace_ms = 0\n"
                                  + "[[popup]]\nname = \"frame\"\nwindow = { class = \"i3-frame\" }\ngrace_ms = 0\n")
        try f.startDaemon()
        let (_, client) = try f.client.createFramed(Layout.popup, frameClass: WMClass(instance: "i3-frame", windowClass: "i3-frame"),
                                                    clientClass: WMClass(instance: "pop", windowClass: "Pop"))
        try f.sync()
        // No WM_STATE anywhere yet: the top-level is its own client, and nothing matches it
        // but the rule written for the frame's class.
        #expect(try f.openPopups() == ["frame"])

        try f.client.setWMState(client)
        try f.sync()
        let open = try f.status()["open"]?.arrayValue ?? []
        #expect(open.compactMap { $0["popup"]?.stringValue } == ["pop"])
        #expect(open.first?["window"]?.stringValue == "0x" + String(client, radix: 16))
        #expect(open.first?["rect"]?.arrayValue?.compactMap(\.intValue) == [100, 100, 300, 200], "the frame's rectangle")
    }

    @Test func commandThatCannotStartLeavesThePopupOpen() throws {
        let f = try DaemonFixture(config: Self.popup(dismissedBy: ["/nonexistent/close-it"]))
        try f.startDaemon()
        try f.window(Layout.popup, class: "Pop")
        try f.click(900, 600)
        #expect(try f.openPopups() == ["pop"])
        #expect(try f.isIntercepting())
        #expect(f.log.contains("cannot run dismiss command"))
    }

    @Test func failedCommandMakesThePopupOpenAgain() throws {
        let f = try DaemonFixture(config: Self.popup(dismissedBy: ["false"]))
        try f.startDaemon()
        try f.window(Layout.popup, class: "Pop")
        let events = try f.monitor()
        try f.click(900, 600)
        _ = try events.await(.dismissed)
        _ = try events.await(.closed)
        // `false` exits 1: reaped on SIGCHLD, the window still there counts as open again.
        let reopened = try events.await(.opened, timeoutMs: 5000)
        #expect(reopened["popup"]?.stringValue == "pop")
        #expect(f.log.contains("dismiss command failed"))
    }

    @Test func windowThatIgnoresTheDismissalCountsAsOpenAgain() throws {
        let f = try DaemonFixture(config: Self.popup(dismissedBy: ["true"]))
        try f.startDaemon()
        try f.window(Layout.popup, class: "Pop")
        let events = try f.monitor()
        try f.click(900, 600)
        _ = try events.await(.dismissed)
        _ = try events.await(.closed)
        #expect(try f.openPopups().isEmpty)
        let reopened = try events.await(.opened, timeoutMs: 10_000)
        #expect(reopened["popup"]?.stringValue == "pop", "\(reopened.text)\n\(f.log)")
        #expect(f.log.contains("still there"))
        // And an outside click dismisses it again.
        try f.click(900, 600)
        _ = try events.await(.dismissed)
    }

    /// The README's first popup, scripted: a real `xterm -class Popup`.
    @Test func realXtermIsClosedByAnOutsideClickAndKeptByInsideClicks() throws {
        let f = try DaemonFixture(config: """
            [[popup]]
            name = "term"
            window = { class = "Popup" }
            grace_ms = 0
            dismiss = "close"
            """)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let xterm = try ChildProcess(["xterm", "-class", "Popup", "-geometry", "40x10+200+150"],
                                     environment: f.environment)
        defer { xterm.stop() }
        var rect: [Int64] = []
        try eventually("xterm to map and be tracked as the popup \"term\"", timeout: .seconds(10)) {
            try f.sync()
            rect = try f.status()["open"]?.arrayValue?.first?["rect"]?.arrayValue?.compactMap(\.intValue) ?? []
            return rect.count == 4
        }
        let json = try f.ctl(["status", "--json"])
        let status = try JSON.parse(json.stdout.trimmingCharacters(in: .newlines))
        #expect(status["open"]?.arrayValue?.first?["popup"]?.stringValue == "term")
        #expect(status["open"]?.arrayValue?.first?["window"]?.stringValue?.hasPrefix("0x") == true)
        #expect(status["grab"]?["active"]?.boolValue == true)

        try f.click(Int32(rect[0] + rect[2] / 2), Int32(rect[1] + rect[3] / 2))
        #expect(xterm.isRunning)
        #expect(try f.openPopups() == ["term"])

        try f.click(1000, 650)
        try eventually("xterm to exit after WM_DELETE_WINDOW", timeout: .seconds(10)) { !xterm.isRunning }
        try f.sync()
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
        #expect(f.client.presses(under).isEmpty)
    }
}
