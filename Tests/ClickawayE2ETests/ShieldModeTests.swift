import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// What only the shield mode does: clicks in its holes never touch the daemon, it stays on
/// top, its shape follows the popups, and `auto` falls back to it when a grab is refused.
@Suite("X11 shield mode", .serialized)
struct ShieldModeTests {
    static let pop = "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\ngrace_ms = 0\n"

    func holes(_ f: DaemonFixture) throws -> [[Int64]] {
        try f.status()["shield"]?["holes"]?.arrayValue?.map { $0.arrayValue?.compactMap(\.intValue) ?? [] } ?? []
    }

    @Test func insideClicksArriveWhileTheDaemonIsStopped() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .shield)
        try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try f.isIntercepting())
        #expect(try holes(f) == [[100, 100, 300, 200]])

        // Over the shield the daemon grabs the root (a click let through then reaches the
        // window manager's grabs); once the pointer is in a hole it holds no grab at all.
        #expect(try f.status()["grab"]?["active"]?.boolValue == true)
        try f.input.motion(x: 150, y: 130)
        try f.sync()
        #expect(try f.status()["grab"]?["active"]?.boolValue == false)
        let pid = try #require(f.daemon?.pid)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        try f.input.click(1, at: 150, 130)
        // The daemon cannot answer a sync while stopped: wait on the window's own events.
        try f.client.wait("the release inside the popup while the daemon is stopped") { event in
            if case .buttonRelease(let b) = event, b.window == popup.id { return true }
            return nil
        }
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 30)])
        #expect(f.client.releases(popup) == [Click(button: 1, x: 50, y: 30)])
        kill(pid, SIGCONT)
        try f.sync()
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(try f.openPopups() == ["pop"])
    }

    @Test func shieldStaysOnTopWhenAWindowMapsAboveIt() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .shield)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        let shield = try #require(f.status()["shield"]?["window"]?.stringValue)
        let late = try f.window(Rect(x: 600, y: 300, width: 300, height: 300), class: "Late")
        try f.sync()
        let top = try #require(f.client.connection.queryTree(f.client.connection.root).children.last)
        #expect("0x" + String(top, radix: 16) == shield)

        // So a click on the late window is outside the popup: dismissed, and swallowed.
        try f.click(700, 400)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.presses(late).isEmpty)
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
    }

    /// Another program's menu mapped just after the popup, before the daemon has read the
    /// popup's window and mapped the shield (the daemon stopped meanwhile, so both maps come
    /// in one batch): it stays above the shield, as one mapped after the shield does. One
    /// mapped before the popup is covered.
    @Test func menuMappedJustAfterThePopupStaysAboveTheShield() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .shield)
        try f.startDaemon()
        let other = try TestClient(display: f.xvfb.display)
        let earlier = try other.createWindow(at: Rect(x: 600, y: 100, width: 100, height: 100), overrideRedirect: true)
        try f.sync()
        let pid = try #require(f.daemon?.pid)
        kill(pid, SIGSTOP)
        let popup: TestWindow
        let menu: TestWindow
        do {
            defer { kill(pid, SIGCONT) }
            popup = try f.client.createWindow(at: Layout.popup, wmClass: WMClass(instance: "pop", windowClass: "Pop"),
                                              closesOnDelete: true)
            menu = try other.createWindow(at: Rect(x: 600, y: 300, width: 100, height: 100), overrideRedirect: true)
        }
        try f.sync()
        #expect(try f.openPopups() == ["pop"])
        let shield = try #require(f.status()["shield"]?["window"]?.stringValue.flatMap { UInt32($0.dropFirst(2), radix: 16) })
        let stacking = try f.client.connection.queryTree(f.client.connection.root).children
        let at = { (w: UInt32) in try #require(stacking.firstIndex(of: w), "0x\(String(w, radix: 16)) is not a child of the root") }
        #expect(try at(menu.id) > at(shield), "the menu mapped after the popup is below the shield")
        #expect(try at(earlier.id) < at(shield), "the window mapped before the popup is above the shield")
        #expect(try at(popup.id) < at(shield))

        // A click on the menu (it holds no grab of its own) is decided as in the grab mode:
        // outside the popup, which is dismissed, and swallowed.
        try f.click(650, 350)
        #expect(f.client.deleteRequests(popup) == 1)
        try other.drain()
        #expect(other.presses(menu) == [])
    }

    /// The same with `outside_click = "replay"`: the click on the window above the shield
    /// dismisses the popup and goes on to the window, as in the grab mode.
    @Test func aClickAboveTheShieldIsReplayedAsInTheGrabMode() throws {
        let f = try DaemonFixture(config: Self.pop + "outside_click = \"replay\"\n", backend: .shield)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        let other = try TestClient(display: f.xvfb.display)
        let notification = try other.createWindow(at: Rect(x: 600, y: 300, width: 100, height: 100), overrideRedirect: true)
        try f.sync()
        #expect(try f.openPopups() == ["pop"])
        try f.click(650, 350)
        #expect(f.client.deleteRequests(popup) == 1)
        try f.eventually("the click to reach the window above the shield") {
            try other.drain()
            return other.presses(notification) == [Click(button: 1, x: 50, y: 50)]
        }
    }

    /// Two popups open, the second a menu of another program mapped above the shield: a click
    /// on it is inside it and outside the first, which it dismisses, and reaches the menu, as
    /// in the grab mode. With the first one gone, a click on the menu is inside and touches
    /// nothing.
    @Test(arguments: XBackend.allCases)
    func aClickOnOnePopupAboveTheShieldDismissesTheOther(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop + "\n[[popup]]\nname = \"menu\"\nwindow = { class = \"Menu\" }\ngrace_ms = 0\n",
                                  backend: backend)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        let other = try TestClient(display: f.xvfb.display)
        let menu = try other.createWindow(at: Rect(x: 600, y: 300, width: 100, height: 100),
                                          wmClass: WMClass(instance: "menu", windowClass: "Menu"), overrideRedirect: true)
        try f.sync()
        #expect(try f.openPopups().sorted() == ["menu", "pop"])
        try f.click(650, 350)
        #expect(f.client.deleteRequests(popup) == 1, "the click on the menu did not dismiss the popup below")
        try f.eventually("the click to reach the menu") {
            try other.drain()
            return other.presses(menu) == [Click(button: 1, x: 50, y: 50)]
        }
        try f.eventually("the popup to close") { try f.openPopups() == ["menu"] }
        try f.click(660, 360)
        try f.eventually("the second click to reach the menu") {
            try other.drain()
            return other.presses(menu).count == 2
        }
        #expect(try f.openPopups() == ["menu"], "a click inside the one popup open dismissed it")
    }

    /// Another client unmaps the shield while a popup is open: it comes back on top of the
    /// windows it covers (its own earlier map is no menu to stay below).
    @Test func shieldUnmappedByAnotherClientComesBackOnTop() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .shield)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        let shield = try #require(f.status()["shield"]?["window"]?.stringValue.flatMap { UInt32($0.dropFirst(2), radix: 16) })
        let other = try TestClient(display: f.xvfb.display)
        for _ in 0..<2 {
            other.connection.unmapWindow(shield)
            try other.connection.sync()
            try f.sync()
            try f.sync()
            let x = f.client.connection
            #expect(try x.getWindowAttributes(shield).mapState == .viewable)
            #expect(try x.queryTree(x.root).children.last == shield, "the shield is not on top after it was mapped again")
        }
        // Mapped again below nothing: no restack against a sibling that is itself.
        #expect(!f.log.contains("BadMatch"), "\(f.log)")
        try f.click(700, 400)
        #expect(f.client.deleteRequests(popup) == 1)
    }

    /// A press let through from the shield's own grab leaves the pointer in its pinhole, and
    /// the end of that grab says the pointer left the shield. The root's grabs stay all the
    /// same: else they went, and came back with the next move, a round trip each time, too
    /// late for a press right after the move, which the shield's grab took again.
    @Test func aClickLetThroughKeepsTheRootGrabsWhileThePointerIsInItsPinhole() throws {
        let config = Self.pop + "\n[[popup]]\nname = \"keep\"\nwindow = { class = \"Keep\" }\ngrace_ms = 3600000\n"
        let f = try DaemonFixture(config: config, backend: .shield)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        try f.window(Rect(x: 700, y: 400, width: 200, height: 200), class: "Keep")
        // Inside one popup is outside the other: no hole, the daemon decides every click.
        #expect(try holes(f).isEmpty)
        try f.input.motion(x: 150, y: 130)
        try f.sync()
        #expect(try f.status()["grab"]?["active"]?.boolValue == true)
        // With Shift held, no grab on the root matches: the shield's own grab takes the press.
        let shift = try #require(f.client.connection.keycodes(forKeysym: 0xffe1).min())
        try f.input.keyDown(shift)
        try f.click(150, 130)
        try f.input.keyUp(shift)
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 30)])
        #expect(try f.status()["grab"]?["active"]?.boolValue == true, "the root's grabs went when the pointer was left in the pinhole")
        try f.click(150, 130)
        #expect(f.client.presses(popup).count == 2)
        #expect(try Set(f.openPopups()) == ["pop", "keep"])
        // Over the shield again: the pinhole closes, the grabs stay.
        try f.input.motion(x: 600, y: 300)
        try f.sync()
        #expect(try f.status()["grab"]?["active"]?.boolValue == true)
        try f.click(150, 140)
        #expect(f.client.presses(popup).count == 3)
    }

    /// The click let through dismisses the other popup, which makes the one it landed in a
    /// hole: the pointer left in the pinhole is in that hole, and the next click there never
    /// waits for the daemon.
    @Test func aPinholeThatEndsUpInAHoleLeavesNoGrab() throws {
        let config = Self.pop + "\n[[popup]]\nname = \"other\"\nwindow = { class = \"Other\" }\ngrace_ms = 0\noutside_click = \"replay\"\n"
        let f = try DaemonFixture(config: config, backend: .shield)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        let other = try f.window(Rect(x: 700, y: 400, width: 200, height: 200), class: "Other")
        try f.click(150, 130)
        #expect(f.client.deleteRequests(other) == 1)
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 30)])
        #expect(try f.openPopups() == ["pop"])
        #expect(try holes(f) == [[100, 100, 300, 200]])
        #expect(try f.status()["grab"]?["active"]?.boolValue == false, "the root's grabs stayed with the pointer in a hole")
        let pid = try #require(f.daemon?.pid)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        try f.input.click(1, at: 150, 130)
        try f.client.wait("the second release inside the popup while the daemon is stopped") { event in
            if case .buttonRelease(let b) = event, b.window == popup.id, f.client.releases(popup).count == 2 { return true }
            return nil
        }
        #expect(f.client.presses(popup).count == 2)
    }

    @Test func shapeFollowsAMovingPopup() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .shield)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        try f.client.move(popup, to: Rect(x: 700, y: 400, width: 300, height: 200))
        try f.sync()
        #expect(try holes(f) == [[700, 400, 300, 200]])

        try f.click(750, 450)
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 50)])
        #expect(try f.openPopups() == ["pop"])
        try f.click(150, 150)  // where the popup was
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.presses(under).isEmpty)
    }

    @Test func swallowedPressStaysHeldWhileAnotherButtonComesAndGoes() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .shield)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        try f.window(Layout.popup, class: "Pop")
        try f.input.motion(x: 600, y: 500)
        try f.sync()
        // With Shift held, no grab on the root matches: the shield's own grab takes the press.
        let shift = try #require(f.client.connection.keycodes(forKeysym: 0xffe1).min())
        try f.input.keyDown(shift)
        defer { try? f.input.keyUp(shift) }
        try f.input.press(1)
        try f.settle()
        #expect(try f.openPopups().isEmpty)
        try f.input.press(3)
        try f.input.release(3)
        try f.settle()
        #expect(try f.status()["shield"]?["mapped"]?.boolValue == true, "the shield holds button 1's click")
        try f.input.release(1)
        try f.settle()
        #expect(try f.status()["shield"]?["mapped"]?.boolValue == false)
        #expect(f.client.presses(under).isEmpty)
        #expect(f.client.releases(under).isEmpty)
    }

    @Test func autoFallsBackToTheShieldWhenAGrabIsRefused() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .auto)
        let under = try f.client.createWindow(at: Layout.background)
        // Another client holds button 1 with NumLock on the root (a window manager's binding):
        // the daemon's grab of that combination is refused.
        let other = try TestClient(display: f.xvfb.display)
        let numLock = try other.connection.modifierMask(forKeysym: Keysym.numLock)
        try #require(!numLock.isEmpty)
        #expect(other.grabOnRoot(button: 1, modifiers: numLock) == nil)
        try f.startDaemon()
        #expect(try f.status()["backend"]?.stringValue == "x11-grab")
        let events = try f.monitor()

        let popup = try f.window(Layout.popup, class: "Pop")
        let status = try f.status()
        #expect(status["backend"]?.stringValue == "x11-shield")
        #expect(status["fallback"]?.stringValue?.contains("cannot grab button 1 with NumLock") == true)
        // Over the shield it grabs the root again, all but the combination the other client
        // holds: the grabs go out as the pointer enters the shield, and their refusals are
        // known once the server has answered them, which a sync does not wait for.
        var held: [JSON] = []
        try f.eventually("the refused combination to be known as refused over the shield") {
            held = try f.status()["grab"]?["held"]?.arrayValue ?? []
            return !held.contains { $0["button"]?.intValue == 1 && $0["modifiers"]?.stringValue == "NumLock" }
        }
        #expect(held.contains { $0["button"]?.intValue == 1 && $0["modifiers"]?.stringValue == "no modifiers" })
        #expect(f.log.contains("switching to the shield mode"))
        // The refusal says what happens to those clicks now: the shield takes them.
        let takes = "the shield mode takes those clicks instead"
        #expect(status["last_error"]?.stringValue?.contains(takes) == true, "\(status["last_error"]?.text ?? "")")
        let refusal = try events.await(.grabRefused)
        #expect(refusal["message"]?.stringValue?.contains(takes) == true, "\(refusal.text)")
        #expect(!f.log.contains("will not dismiss popups"), "\(f.log)")

        try f.click(600, 500)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.isDestroyed(popup))
        #expect(f.client.presses(under).isEmpty)
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
    }

    /// A server without XFixes: the shield mode says so and the daemon does not start; the
    /// grab mode starts and dismisses as usual, and a reload to the shield keeps the grabs and
    /// says why.
    @Test func withoutXFixesTheShieldSaysSoAndTheGrabsGoOn() throws {
        let noXFixes = ["-extension", "XFIXES"]
        let shieldOnly = try DaemonFixture(config: Self.pop, backend: .shield, serverArguments: noXFixes)
        #expect(throws: (any Error).self, "clickaway started in the shield mode without XFixes") { try shieldOnly.startDaemon() }
        #expect(shieldOnly.log.contains("the X server has no XFIXES extension"), "\(shieldOnly.log)")

        let f = try DaemonFixture(config: "[settings]\nbackend = \"x11-grab\"\n" + Self.pop, backend: .configured,
                                  serverArguments: noXFixes)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        #expect(f.log.contains("the shield mode is not available"), "\(f.log)")
        try f.editConfigInPlace("[settings]\nbackend = \"x11-shield\"\n" + Self.pop)
        #expect(try f.ctl(["reload"]).status == 0)
        #expect(f.log.contains("cannot switch to backend x11-shield: the X server has no XFIXES extension; keeping x11-grab"),
                "\(f.log)")
        #expect(try f.status()["backend"]?.stringValue == "x11-grab")
        #expect(try f.status()["last_error"]?.stringValue?.contains("cannot switch to backend x11-shield") == true)

        let popup = try f.window(Layout.popup, class: "Pop")
        try f.click(600, 500)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.presses(under).isEmpty)
    }

    @Test func explicitShieldIgnoresAnotherClientsRootGrab() throws {
        let f = try DaemonFixture(config: Self.pop, backend: .shield)
        try f.client.createWindow(at: Layout.background)
        let other = try TestClient(display: f.xvfb.display)
        let numLock = try other.connection.modifierMask(forKeysym: Keysym.numLock)
        #expect(other.grabOnRoot(button: 1, modifiers: numLock) == nil)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        // The shield's map puts the pointer over it, and that crossing takes the root's grabs:
        // the crossing may come after the window's sync began, their answers after it ended.
        try f.sync()
        // The shield keeps the combination the other client holds on the root: no error.
        let refused = try f.status()["grab"]?["refused"]?.arrayValue ?? []
        #expect(refused.contains { $0["button"]?.intValue == 1 && $0["modifiers"]?.stringValue == "NumLock" })
        #expect(try f.status()["last_error"]?.isNull == true)
        try f.click(600, 500)
        #expect(f.client.deleteRequests(popup) == 1)
    }
}

/// The Escape key, in both modes: the topmost popup with `escape = true` goes, nothing else.
@Suite("Escape key", .serialized)
struct EscapeKeyTests {
    static func nested(escapeKey: String = "swallow") -> String {
        """
        [defaults]
        escape = true
        escape_key = "\(escapeKey)"
        grace_ms = 0

        [[popup]]
        name = "menu"
        window = { class = "Menu" }

        [[popup]]
        name = "sub"
        parent = "menu"
        window = { class = "Sub" }

        """
    }

    static func escapeKeycode(_ f: DaemonFixture) throws -> UInt8 {
        try #require(f.client.connection.keycodes(forKeysym: Keysym.escape).min())
    }

    @Test(arguments: XBackend.allCases) func escapeClosesTheTopmostNestedPopupFirst(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.nested(), backend: backend)
        try f.startDaemon()
        let menu = try f.window(Layout.popup, class: "Menu")
        let sub = try f.window(Rect(x: 420, y: 100, width: 200, height: 200), class: "Sub")
        try f.client.focus(menu)
        #expect(try f.status()["escape"]?["active"]?.boolValue == true)
        let escape = try Self.escapeKeycode(f)

        try f.input.key(escape)
        try f.settle()
        #expect(f.client.deleteRequests(sub) == 1)
        #expect(f.client.deleteRequests(menu) == 0)
        #expect(try f.openPopups() == ["menu"])
        #expect(f.client.keys(menu).isEmpty, "swallowed by default")

        try f.input.key(escape)
        try f.settle()
        #expect(f.client.deleteRequests(menu) == 1)
        #expect(try f.openPopups().isEmpty)
        #expect(try f.status()["escape"]?["active"]?.boolValue == false)
    }

    @Test func escapeReplayedReachesTheFocusedWindow() throws {
        let f = try DaemonFixture(config: Self.nested(escapeKey: "replay"))
        try f.startDaemon()
        let menu = try f.window(Layout.popup, class: "Menu")
        try f.client.focus(menu)
        let escape = try Self.escapeKeycode(f)
        try f.input.key(escape)
        try f.settle()
        #expect(f.client.deleteRequests(menu) == 1)
        #expect(f.client.keys(menu) == [escape])
    }

    @Test func escapeIsNotGrabbedWithoutAnEscapePopup() throws {
        let f = try DaemonFixture(config: "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\n")
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        try f.client.focus(popup)
        #expect(try f.status()["escape"]?["active"]?.boolValue == false)
        let escape = try Self.escapeKeycode(f)
        try f.input.key(escape)
        try f.settle()
        #expect(f.client.keys(popup) == [escape])
        #expect(try f.openPopups() == ["pop"])
    }

    @Test func refusedEscapeGrabIsReported() throws {
        let f = try DaemonFixture(config: Self.nested())
        let other = try TestClient(display: f.xvfb.display)
        let escape = try Self.escapeKeycode(f)
        #expect(other.connection.check(other.connection.grabKey(keycode: escape, modifiers: [], window: other.connection.root)) == nil)
        try f.startDaemon()
        try f.window(Layout.popup, class: "Menu")
        let status = try f.status()
        #expect(status["escape"]?["refused"]?.arrayValue?.first?["modifiers"]?.stringValue == "no modifiers")
        #expect(status["last_error"]?.stringValue?.contains("cannot grab Escape with no modifiers") == true)
    }
}
