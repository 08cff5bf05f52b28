import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayX11
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// Nesting, anchors, exclusions, regions, buttons, triggers, refused grabs, crashes and
/// window managers: the daemon against a real X server, settled with `sync`.
@Suite("X11 clicks, grab and shield mode, more cases, end to end", .serialized)
struct InterceptionCasesTests {
    static func pop(_ name: String = "pop", class windowClass: String = "Pop", extra: String = "") -> String {
        """
        [[popup]]
        name = "\(name)"
        window = { class = "\(windowClass)" }
        grace_ms = 0
        \(extra)

        """
    }

    // MARK: 1. Nesting

    static let nested = pop("menu", class: "Menu") + pop("sub", class: "Sub", extra: "parent = \"menu\"")
    static let subRect = Rect(x: 420, y: 100, width: 200, height: 200)

    @Test(arguments: XBackend.allCases) func clickInsideParentOutsideChildDismissesOnlyTheChild(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.nested, backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let menu = try f.window(Layout.popup, class: "Menu")
        let sub = try f.window(Self.subRect, class: "Sub")
        #expect(Set(try f.openPopups()) == ["menu", "sub"])

        try f.click(150, 130)
        #expect(f.client.deleteRequests(sub) == 1)
        #expect(f.client.isDestroyed(sub))
        #expect(f.client.deleteRequests(menu) == 0)
        #expect(f.client.presses(menu) == [Click(button: 1, x: 50, y: 30)])
        #expect(f.client.presses(under).isEmpty)
        #expect(try f.openPopups() == ["menu"])
    }

    @Test(arguments: XBackend.allCases) func clickOutsideParentAndChildDismissesBoth(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.nested, backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let menu = try f.window(Layout.popup, class: "Menu")
        let sub = try f.window(Self.subRect, class: "Sub")

        try f.click(900, 600)
        #expect(f.client.deleteRequests(menu) == 1)
        #expect(f.client.deleteRequests(sub) == 1)
        #expect(f.client.isDestroyed(menu))
        #expect(f.client.isDestroyed(sub))
        #expect(f.client.presses(under).isEmpty)
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
    }

    // MARK: 2. Anchor

    @Test(arguments: XBackend.allCases) func clickOnAnchorRectDismissesNothingAndPasses(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(extra: "anchors = [ { rect = [600, 0, 100, 30] } ]"), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")

        try f.click(650, 15)
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(f.client.presses(under) == [Click(button: 1, x: 650, y: 15)])
        #expect(f.client.releases(under) == [Click(button: 1, x: 650, y: 15)])
        #expect(try f.openPopups() == ["pop"])
    }

    // MARK: 3. Exclusion

    @Test(arguments: XBackend.allCases) func clickOnExcludedWindowDismissesNothingAndReachesIt(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop() + """
            [[exclude]]
            window = { class = "Keyboard" }
            """, backend: backend)
        try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let keyboard = try f.window(Rect(x: 600, y: 400, width: 300, height: 200), class: "Keyboard")
        let popup = try f.window(Layout.popup, class: "Pop")

        try f.click(700, 500)
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(f.client.presses(keyboard) == [Click(button: 1, x: 100, y: 100)])
        #expect(f.client.releases(keyboard) == [Click(button: 1, x: 100, y: 100)])
        #expect(try f.openPopups() == ["pop"])
    }

    // MARK: 4. passthrough

    @Test(arguments: XBackend.allCases) func passthroughMarginDismissesButCardDoesNot(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(extra: """
            passthrough = true
              [[popup.region]]
              name = "card"
              rect = [20, 20, 100, 100]
            """), backend: backend)
        try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")

        try f.click(150, 150)  // (50, 50) in the window: on the card
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 50)])
        #expect(try f.openPopups() == ["pop"])

        try f.click(350, 250)  // (250, 150) in the window: its margin
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.isDestroyed(popup))
        #expect(f.client.presses(popup).count == 1)
        #expect(try f.openPopups().isEmpty)
    }

    // MARK: 5. slop

    @Test(arguments: XBackend.allCases) func clickWithinSlopDoesNotDismiss(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(extra: "slop = 10"), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")

        try f.click(405, 150)  // 5 px right of the window's right edge (x 100..<400)
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(f.client.presses(under) == [Click(button: 1, x: 405, y: 150)])
        #expect(try f.openPopups() == ["pop"])
    }

    // MARK: 6. grace_ms

    @Test(arguments: XBackend.allCases) func outsideClickWithinGraceDoesNotDismissAndPasses(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: """
            [[popup]]
            name = "pop"
            window = { class = "Pop" }
            grace_ms = 60000
            """, backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try f.isIntercepting())

        try f.click(600, 500)
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(f.client.presses(under) == [Click(button: 1, x: 600, y: 500)])
        #expect(f.client.releases(under) == [Click(button: 1, x: 600, y: 500)])
        #expect(try f.openPopups() == ["pop"])
    }

    // MARK: 7. Buttons

    @Test(arguments: XBackend.allCases) func unlistedButtonPassesAndDismissesNothing(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(extra: "buttons = [1]"), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")

        try f.click(600, 500, button: 3)
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(f.client.presses(under) == [Click(button: 3, x: 600, y: 500)])
        #expect(try f.openPopups() == ["pop"])
    }

    @Test(arguments: XBackend.allCases) func wheelIsNotGrabbedByDefault(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        if backend == .grab {
            #expect(try f.status()["grab"]?["buttons"]?.arrayValue?.compactMap(\.intValue) == [1, 2, 3])
        }

        try f.click(600, 500, button: 4)
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(f.client.presses(under) == [Click(button: 4, x: 600, y: 500)])
        #expect(try f.openPopups() == ["pop"])
    }

    // MARK: 8. trigger = "click"

    @Test(arguments: XBackend.allCases) func clickTriggerDismissesOnPressAndReleaseOutside(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(extra: "trigger = \"click\""), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")

        try f.input.motion(x: 600, y: 500)
        try f.input.press(1)
        try f.settle()
        try f.input.motion(x: 620, y: 510)
        try f.input.release(1)
        try f.settle()
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.isDestroyed(popup))
        #expect(f.client.presses(under).isEmpty)
        #expect(try f.openPopups().isEmpty)
    }

    // MARK: 9. Refused grab

    @Test func refusedGrabIsReportedAndOtherButtonsStillWork() throws {
        let f = try DaemonFixture(config: Self.pop())
        try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let other = try TestClient(display: f.xvfb.display)
        #expect(other.grabOnRoot(button: 1, modifiers: []) == nil)
        let popup = try f.window(Layout.popup, class: "Pop")

        let status = try f.status()
        let refused = status["grab"]?["refused"]?.arrayValue ?? []
        #expect(refused.contains { $0["button"]?.intValue == 1 && $0["modifiers"]?.stringValue == "no modifiers" })
        #expect(!refused.contains { $0["button"]?.intValue == 2 })
        #expect(status["last_error"]?.stringValue?.contains("cannot grab button 1") == true)

        try f.click(600, 500, button: 2)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(try f.openPopups().isEmpty)
    }

    // MARK: 10. kill -9

    @Test(arguments: XBackend.allCases) func killedDaemonLeavesThePointerFree(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try f.isIntercepting())

        #expect(f.daemon!.signalAndWait(SIGKILL) != nil)
        try f.input.click(1, at: 600, 500)
        // The server drops the dead client's grabs when it notices the closed connection:
        // nothing to sync with any more, so poll (bounded).
        try waitUntil("the press to reach the window under the popup") {
            (try? f.client.drain()) != nil && !f.client.presses(under).isEmpty
        }
        #expect(f.client.presses(under) == [Click(button: 1, x: 600, y: 500)])
        try waitUntil("the release to reach the window under the popup") {
            (try? f.client.drain()) != nil && !f.client.releases(under).isEmpty
        }
        #expect(f.client.deleteRequests(popup) == 0)
    }

    // MARK: 11. Slow dismiss command

    @Test(arguments: XBackend.allCases) func slowDismissCommandDoesNotBlockTheNextClick(_ backend: XBackend) throws {
        let command = "dismiss = { command = [\"sleep\", \"30\"] }"
        let f = try DaemonFixture(config: Self.pop("a", class: "A", extra: command) + Self.pop("b", class: "B", extra: command), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let a = try f.window(Layout.popup, class: "A", closesOnDelete: false)
        let b = try f.window(Rect(x: 500, y: 100, width: 200, height: 200), class: "B", closesOnDelete: false)
        #expect(Set(try f.openPopups()) == ["a", "b"])

        // Inside b, outside a: dismisses a only.
        let started = ContinuousClock.now
        try f.click(600, 200)
        #expect(try f.openPopups() == ["b"])
        #expect(f.client.presses(b) == [Click(button: 1, x: 100, y: 100)])

        // Right after, with a's command still sleeping: dismisses b.
        try f.click(900, 600)
        #expect(try f.openPopups().isEmpty)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(f.client.presses(under).isEmpty)
        // A command action does not close the windows: they stay mapped.
        #expect(try f.client.connection.getWindowAttributes(a.id).mapState == .viewable)
        #expect(try f.client.connection.getWindowAttributes(b.id).mapState == .viewable)
    }

    // MARK: 12. A busy X server

    /// The loop never waits for the X server's answer to its grabs: with the server held by
    /// another client (GrabServer: it answers nobody else, as a busy one answers late), a
    /// popup opened by request is answered and `status` lists it; once the server is let go,
    /// the grabs are there and an outside click is intercepted as usual.
    @Test func grabsAreNotWaitedFor() throws {
        let f = try DaemonFixture(config: Self.pop())
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let holder = try TestClient(display: f.xvfb.display)
        try holder.grabServer()
        var held = true
        defer { if held { try? holder.ungrabServer() } }

        let open = try f.ctl(["open", "--rect", "100,100,300,200", "--name", "busy", "--grace", "0"], limit: .seconds(10))
        #expect(open.status == 0, "the daemon did not answer while the X server was held: \(open.output)")
        let status = try f.ctl(["status"], limit: .seconds(10))
        #expect(status.status == 0 && status.stdout.contains("busy"), "\(status.output)")

        try holder.ungrabServer()
        held = false
        #expect(try f.isIntercepting())
        try f.click(900, 600)
        #expect(f.client.presses(under).isEmpty, "the outside click reached the window below")
        #expect(try f.openPopups().isEmpty)
    }

    /// Nor for the screen's outputs after RandR says they changed: with the server held by
    /// the client that switched the screen off, the daemon answers; once the server is let
    /// go the outputs are read again (a sync waits for that), and a popup placed on an
    /// output goes with it and comes back with it.
    @Test func outputsAreReadAgainWithoutWaiting() throws {
        let config = """
            [[popup]]
            name = "panel"
            rect = [100, 100, 300, 200]
            output = "screen"
            grace_ms = 0
            """
        let f = try DaemonFixture(config: config)
        try f.startDaemon()
        let open = try f.ctl(["open", "panel"])
        #expect(open.status == 0, "\(open.output)")
        #expect(try f.openPopups() == ["panel"])

        let holder = try TestClient(display: f.xvfb.display)
        try holder.grabServer()
        var held = true
        defer { if held { try? holder.ungrabServer() } }
        let switchOn = try holder.switchOffScreens()
        let status = try f.ctl(["status"], limit: .seconds(10))
        #expect(status.status == 0, "the daemon did not answer while the X server was held: \(status.output)")
        try holder.ungrabServer()
        held = false

        // A sync waits for the outputs being read, as it does for windows.
        try f.sync()
        #expect(try f.openPopups().isEmpty, "the panel did not go with its output")
        try switchOn()
        try f.sync()
        #expect(try f.openPopups() == ["panel"], "the panel did not come back with its output")
    }

    /// A server without RandR: the daemon says what that costs and works as usual. It sends
    /// no RandR request, which makes libxcb close the connection (at start, it did).
    @Test(arguments: XBackend.allCases) func withoutRandRPopupsWorkAsUsual(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(), backend: backend, serverArguments: ["-extension", "RANDR"])
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        #expect(f.log.contains("the X server has no RANDR extension: rectangles with output"), "\(f.log)")
        let popup = try f.window(Layout.popup, class: "Pop")
        try f.click(150, 150)
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 50)], "the inside click did not reach the popup")
        try f.click(600, 500)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.presses(under).isEmpty, "the outside click reached the window below")
    }

    /// Nor for entering the shield mode: what the shield needs of the server is asked at
    /// start, so a reload that switches to it (as `auto`'s fallback does) only sends requests.
    /// With the server held by another client the reload and `status` are answered; once it
    /// is let go the shield is up with the open popup's hole, and an outside click is
    /// swallowed and dismisses.
    /// A rectangle popup at (100, 100) under `backend`, for the tests that reload to another one.
    static func panel(backend: String) -> String {
        """
        [settings]
        backend = "\(backend)"

        [[popup]]
        name = "panel"
        rect = [100, 100, 300, 200]
        grace_ms = 0
        """
    }

    @Test func aReloadToTheShieldIsNotWaitedFor() throws {
        let f = try DaemonFixture(config: Self.panel(backend: "x11-grab"), backend: .configured)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let open = try f.ctl(["open", "panel"])
        #expect(open.status == 0, "\(open.output)")
        #expect(try f.status()["backend"]?.stringValue == "x11-grab")
        #expect(try f.status()["shield"]?.isNull != false, "a shield reported in the grab mode")

        let holder = try TestClient(display: f.xvfb.display)
        try holder.grabServer()
        var held = true
        defer { if held { try? holder.ungrabServer() } }
        try f.editConfigInPlace(Self.panel(backend: "x11-shield"))
        let reload = try f.ctl(["reload"], limit: .seconds(10))
        #expect(reload.status == 0, "the reload was not answered while the X server was held: \(reload.output)")
        let status = try f.ctl(["status", "--json"], limit: .seconds(10))
        #expect(status.status == 0 && status.stdout.contains("x11-shield"),
                "the daemon did not answer, or not in the shield mode, while the X server was held: \(status.output)")
        try holder.ungrabServer()
        held = false

        try f.sync()
        let shield = try f.status()["shield"]
        #expect(shield?["mapped"]?.boolValue == true, "\(shield?.text ?? "no shield")")
        #expect(shield?["holes"]?.arrayValue?.map { $0.arrayValue?.compactMap(\.intValue) ?? [] } == [[100, 100, 300, 200]])
        try f.click(900, 600)
        #expect(f.client.presses(under).isEmpty, "the outside click reached the window below")
        #expect(try f.openPopups().isEmpty)
    }

    /// In the grab mode every press wakes the press thread, which then takes the CPU from a
    /// busy X server at once (short slices), and so does the loop's thread, whose state lock
    /// the press waits for; in the shield mode both take the default slices, which halved its
    /// late presses in a burst of windows (BENCHMARKS.md). A reload switches both ways.
    @Test func theThreadsTakeShortSlicesInTheGrabModeOnly() throws {
        guard TimeSlice.kernelTakesCustomSlices else { return }
        let f = try DaemonFixture(config: Self.panel(backend: "x11-grab"), backend: .configured)
        try f.startDaemon()
        let pid = try #require(f.daemon?.pid)
        let loop = "/proc/\(pid)/sched"
        guard TimeSlice.of(loop) != nil else { return } // a kernel that does not show se.slice
        let presses = try #require(TimeSlice.schedFile(ofThread: "presses", in: pid), "the daemon has no thread named presses")
        let short = Int(ShortSlices.nanoseconds)
        func expectSlices(_ backend: String) throws {
            #expect(try f.status()["backend"]?.stringValue == backend)
            for (thread, sched) in [("loop's", loop), ("press", presses)] {
                let slice = TimeSlice.of(sched)
                if backend == "x11-shield" {
                    #expect(slice != nil && slice != short, "the shield mode left the \(thread) thread the short slices")
                } else {
                    #expect(slice == short, "in the grab mode, the \(thread) thread has slices of \(slice.map(String.init) ?? "?") ns")
                }
            }
        }
        try expectSlices("x11-grab")
        for backend in ["x11-shield", "x11-grab"] {
            try f.editConfigInPlace(Self.panel(backend: backend))
            let reload = try f.ctl(["reload"])
            #expect(reload.status == 0, "\(reload.output)")
            try expectSlices(backend)
        }
    }

    // MARK: 13. openbox

    @Test(arguments: XBackend.allCases) func framedPopupUnderOpenbox(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop(), openbox: true, backend: backend)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        let clientRect = try f.client.connection.rootRect(popup.id)

        let open = try f.status()["open"]?.arrayValue ?? []
        try #require(open.count == 1)
        #expect(open[0]["popup"]?.stringValue == "pop")
        #expect(open[0]["window"]?.stringValue == "0x" + String(popup.id, radix: 16))
        let r = (open[0]["rect"]?.arrayValue ?? []).compactMap(\.intValue).map(Int32.init)
        try #require(r.count == 4)
        let frame = Rect(x: r[0], y: r[1], width: r[2], height: r[3])
        #expect(frame.x <= clientRect.x && frame.y <= clientRect.y)
        #expect(frame.x + frame.width >= clientRect.x + clientRect.width)
        #expect(frame.y + frame.height >= clientRect.y + clientRect.height)
        #expect(frame.width * frame.height > clientRect.width * clientRect.height)

        try f.click(clientRect.x + 50, clientRect.y + 30)
        try f.client.waitForPresses(1, on: popup, "the press inside the framed popup (openbox replays it)")
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 30)])
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(try f.openPopups() == ["pop"])

        try f.click(1000, 650)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.isDestroyed(popup))
        #expect(try f.openPopups().isEmpty)
    }
}
