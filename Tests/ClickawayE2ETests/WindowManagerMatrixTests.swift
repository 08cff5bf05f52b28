import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// Everything that depends on the window manager, under 13 real ones and in the three X11
/// modes: a window popup found under the manager's framing, inside clicks passing, outside
/// clicks swallowed or replayed, a replayed click focusing its window as the same click does
/// without clickaway, `rect` popups, a real program (yad) as a popup, and nothing left
/// grabbed or frozen afterwards. Each case is one display with one window manager, started
/// once, running every step in turn; the cases run in parallel.
@Suite("Window manager matrix")
struct WindowManagerMatrixTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let wm: WindowManagerKind
        let backend: XBackend
        var testDescription: String { "\(wm) \(backend.rawValue)" }
    }

    static let cases = WindowManagerKind.allCases.flatMap { wm in [XBackend.grab, .shield, .auto].map { Case(wm: wm, backend: $0) } }

    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "pop"
        window = { class = "Pop" }

        [[popup]]
        name = "replay"
        window = { class = "ReplayPop" }
        outside_click = "replay"

        [[popup]]
        name = "yad"
        window = { class = "YadPop" }

        [[popup]]
        name = "panel"
        rect = [1000, 20, 200, 100]

        """

    static let otherRect = Rect(x: 150, y: 420, width: 300, height: 200)
    static let targetRect = Rect(x: 700, y: 380, width: 400, height: 250)
    /// Under the `panel` rectangle, to receive the clicks inside it.
    static let backdropRect = Rect(x: 950, y: 0, width: 330, height: 160)

    @Test(arguments: cases) func windowManagerDependentBehaviour(_ c: Case) throws {
        let f = try DaemonFixture(config: Self.config, windowManager: c.wm, backend: c.backend)
        let run = try MatrixRun(f, c)
        try run.step("window popup", run.windowPopupIsFoundUnderTheFrameAndPassesInsideClicks)
        try run.step("family", run.aDialogOfThePopupIsInsideIt)
        try run.step("swallow", run.outsideClickIsSwallowed)
        try run.step("replay", run.replayedClickFocusesTheWindowUnderIt)
        try run.step("rect popup", run.rectPopup)
        try run.step("real program", run.realProgramPopup)
        try run.step("nothing left", run.nothingIsLeftGrabbedOrFrozen)
    }
}

/// One case of the matrix: the daemon and its monitor, and the windows every step uses.
private final class MatrixRun {
    let f: DaemonFixture
    let c: WindowManagerMatrixTests.Case
    let events: EventStream
    let other: TestWindow
    let target: TestWindow
    let backdrop: TestWindow
    /// Whether the window manager keeps `_NET_ACTIVE_WINDOW` (xmonad's default does not).
    let activeWindowKept: Bool
    /// Button 1, but spectrwm holds it on the root, so grab mode dismisses with button 3 there.
    let button: UInt8

    init(_ f: DaemonFixture, _ c: WindowManagerMatrixTests.Case) throws {
        self.f = f
        self.c = c
        let wm = try #require(f.windowManager)
        activeWindowKept = try wm.setsActiveWindow()
        button = c.backend == .grab && c.wm.rootButtons.contains(1) ? 3 : 1
        try f.startDaemon()
        events = try f.monitor()
        other = try f.client.createWindow(at: WindowManagerMatrixTests.otherRect, wmClass: WMClass(instance: "other", windowClass: "Other"))
        target = try f.client.createWindow(at: WindowManagerMatrixTests.targetRect, wmClass: WMClass(instance: "target", windowClass: "Target"))
        backdrop = try f.client.createWindow(at: WindowManagerMatrixTests.backdropRect, wmClass: WMClass(instance: "backdrop", windowClass: "Backdrop"))
        try f.sync()
    }

    /// Runs one step; an error says which, under which manager and mode, with the logs.
    func step(_ name: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            throw HarnessError("\(name): \(error)\n\(context)")
        }
    }

    var context: String { "\(c.testDescription); \(f.windowManager?.logTail ?? "")\nthe daemon's log:\n\(f.log)" }

    /// Where a window's client area is on screen, and its middle.
    func center(_ w: TestWindow) throws -> (x: Int32, y: Int32) {
        let r = try f.client.connection.rootRect(w.id)
        return (r.x + r.width / 2, r.y + r.height / 2)
    }

    func awaitEvent(_ name: MonitorEvent.Name, popup: String) throws -> JSON {
        while true {
            let event = try events.await(name)
            if event["popup"]?.stringValue == popup { return event }
        }
    }

    func openEntry(_ popup: String) throws -> JSON? {
        try f.status()["open"]?.arrayValue?.first { $0["popup"]?.stringValue == popup }
    }

    /// Clicks on `w` and waits for its press. Where a click on an unfocused window only
    /// focuses it (xmonad), the window is focused first with a click of its own.
    func clickReaches(_ w: TestWindow, at point: (x: Int32, y: Int32), button: UInt8) throws {
        let before = f.client.presses(w).count
        if !c.wm.passesFocusingClick, try !f.client.isFocused(w, activeWindow: false) {
            try f.click(point.x, point.y, button: button)
            try f.client.waitForFocus(w, activeWindow: false)
        }
        try f.click(point.x, point.y, button: button)
        try awaitPress(w, after: before)
    }

    /// The window manager may replay its own click-to-focus grab in its own time, which no
    /// sync with the daemon covers: wait for the press itself.
    func awaitPress(_ w: TestWindow, after count: Int) throws {
        if f.client.presses(w).count > count { return }
        try f.client.wait("a press on window 0x\(String(w.id, radix: 16)) (\(c.testDescription))") { event in
            if case .buttonPress(let b) = event, b.window == w.id { return true }
            return nil
        }
    }

    func windowPopupIsFoundUnderTheFrameAndPassesInsideClicks() throws {
        let popup = try f.window(Layout.popup, class: "Pop")
        _ = try awaitEvent(.opened, popup: "pop")
        let entry = try #require(try openEntry("pop"), "pop is not open: \(context)")
        // The client is the window the test created, not the manager's frame around it.
        #expect(entry["window"]?.stringValue == "0x" + String(popup.id, radix: 16), "\(entry.text) \(context)")
        let r = (entry["rect"]?.arrayValue ?? []).compactMap(\.intValue).map(Int32.init)
        try #require(r.count == 4)
        let client = try f.client.connection.rootRect(popup.id)
        #expect(r[0] <= client.x && r[1] <= client.y && r[0] + r[2] >= client.x + client.width
                && r[1] + r[3] >= client.y + client.height, "the popup's rectangle \(r) does not enclose its window \(client)")

        try clickReaches(popup, at: try center(popup), button: button)
        #expect(f.client.deleteRequests(popup) == 0, "\(context)")
        #expect(try f.openPopups().contains("pop"))
        self.popup = popup
    }

    private var popup: TestWindow?

    /// A dialog of the popup's window (WM_TRANSIENT_FOR it, with the popup's own class, as
    /// yad's file chooser has) is no second popup: a click on it is inside the popup.
    func aDialogOfThePopupIsInsideIt() throws {
        let popup = try #require(popup)
        let dialog = try f.client.createWindow(at: Rect(x: 450, y: 100, width: 200, height: 150),
                                               wmClass: WMClass(instance: "pop", windowClass: "Pop"), type: "dialog",
                                               transientFor: popup.id)
        try f.eventually("the dialog to join the popup's family") {
            try openEntry("pop")?["members"]?.arrayValue?.contains { $0.stringValue == "0x" + String(dialog.id, radix: 16) } == true
        }
        #expect(try f.openPopups() == ["pop"], "the dialog counts as a popup of its own")
        try clickReaches(dialog, at: try center(dialog), button: button)
        #expect(f.client.deleteRequests(popup) == 0, "a click on the popup's dialog dismissed it: \(context)")
        try f.client.destroy(dialog)
        try f.eventually("the dialog to leave the family") { try openEntry("pop")?["members"]?.arrayValue?.isEmpty == true }
    }

    func outsideClickIsSwallowed() throws {
        let popup = try #require(popup)
        let point = try center(target)
        try f.click(point.x, point.y, button: button)
        _ = try awaitEvent(.closed, popup: "pop")
        try f.settle()
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.isDestroyed(popup), "\(context)")
        #expect(f.client.presses(target).isEmpty, "the swallowed press reached the window under it: \(context)")
        #expect(f.client.releases(target).isEmpty)
    }

    func replayedClickFocusesTheWindowUnderIt() throws {
        // Without any popup open nothing intercepts: the manager focuses the other window.
        let otherPoint = try center(other)
        try f.click(otherPoint.x, otherPoint.y, button: 1)
        try f.client.waitForFocus(other, activeWindow: activeWindowKept)
        let replayPopup = try f.window(Layout.popup, class: "ReplayPop")
        _ = try awaitEvent(.opened, popup: "replay")
        try #require(try !f.client.isFocused(target, activeWindow: false))

        let pressesBefore = f.client.presses(target).count
        let point = try center(target)
        try f.click(point.x, point.y, button: button)
        _ = try awaitEvent(.closed, popup: "replay")
        try f.settle()
        #expect(f.client.isDestroyed(replayPopup))
        do {
            try f.client.waitForFocus(target, activeWindow: activeWindowKept)
        } catch {
            Issue.record("the replayed click did not focus the window under it: \(error)\n\(context)")
        }
        if c.wm.passesFocusingClick {
            try awaitPress(target, after: pressesBefore)
        }
    }

    func rectPopup() throws {
        let open = try f.ctl(["open", "panel"])
        #expect(open.status == 0, "\(open.stderr)")
        _ = try awaitEvent(.opened, popup: "panel")
        try clickReaches(backdrop, at: (1100, 70), button: button)
        #expect(try f.openPopups().contains("panel"), "an inside click dismissed the panel: \(context)")

        let pressesBefore = f.client.presses(target).count
        let point = try center(target)
        try f.click(point.x, point.y, button: button)
        _ = try awaitEvent(.closed, popup: "panel")
        try f.settle()
        #expect(f.client.presses(target).count == pressesBefore, "the swallowed press reached the window under it: \(context)")
    }

    /// yad, a GTK program, as a window popup: found by the window carrying WM_STATE, closed
    /// by WM_DELETE_WINDOW on an outside click. xmonad and dwm tile it (they float no window
    /// without a fixed size), so there a second tiled window keeps part of the screen outside
    /// it (xmonad's other half; dwm's stack column, right of yad in the master column).
    func realProgramPopup() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = f.xvfb.display
        environment["WAYLAND_DISPLAY"] = nil
        environment["HOME"] = f.directory.path
        environment["NO_AT_BRIDGE"] = "1"
        if c.wm.tilesResizableWindows {
            try f.client.createWindow(at: Rect(x: 0, y: 0, width: 200, height: 200),
                                      wmClass: WMClass(instance: "tiled", windowClass: "Tiled"), fixedSize: false)
        }
        let yad = try ChildProcess(["yad", "--fixed", "--class=YadPop", "--geometry=300x150+100+100",
                                    "--text=clickaway", "--no-buttons"], environment: environment)
        defer { yad.stop() }
        try awaitViewableClient(class: "YadPop", of: yad)
        let opened = try awaitEvent(.opened, popup: "yad")
        let window = try #require(opened["window"]?.stringValue.flatMap { UInt32($0.dropFirst(2), radix: 16) })
        let x = f.client.connection
        #expect(try x.wmClass(window)?.windowClass == "YadPop")
        #expect(try x.wmState(window) == .normal, "the popup's window is not the one the manager manages: \(context)")
        let r = (opened["rect"]?.arrayValue ?? []).compactMap(\.intValue).map(Int32.init)
        try #require(r.count == 4)
        let point = try center(target)
        try #require(!Rect(x: r[0], y: r[1], width: r[2], height: r[3]).contains(x: point.x, y: point.y),
                     "yad covers the point outside it to click: \(r)")

        try f.click(point.x, point.y, button: button)
        _ = try awaitEvent(.closed, popup: "yad")
        try waitUntil("yad to exit after WM_DELETE_WINDOW", timeout: .seconds(10)) { !yad.isRunning }
    }

    /// A GTK program's start, which on a loaded machine (two suites of 13 managers, each
    /// starting yad at once) took longer than the 10 s the daemon has to announce a window:
    /// wait for the window itself first, as long as for a window manager's start, so the
    /// daemon's own bound counts from when there is a window to see.
    func awaitViewableClient(class windowClass: String, of program: ChildProcess) throws {
        let x = f.client.connection
        try eventually("a viewable \(windowClass) window of pid \(program.pid)",
                       timeout: .seconds(40), every: .milliseconds(20)) {
            guard program.isRunning else { throw HarnessError("pid \(program.pid) exited before showing a window\n\(program.logTail)") }
            return try x.queryTree(x.root).children.contains { top in
                guard (try? x.getWindowAttributes(top).mapState) == .viewable,
                      let client = try? x.findClient(of: top).client else { return false }
                return (try? x.wmClass(client))??.windowClass == windowClass
            }
        }
    }

    func nothingIsLeftGrabbedOrFrozen() throws {
        try f.sync()
        let status = try f.status()
        #expect(status["open"]?.arrayValue?.isEmpty == true, "\(status.text)")
        #expect(status["grab"]?["active"]?.boolValue == false, "\(status.text)")
        #expect(status["shield"]?["mapped"]?.boolValue != true, "\(status.text)")
        // Nobody holds the pointer: another program can grab it at once.
        let probe = try TestClient(display: f.xvfb.display)
        #expect(try probe.connection.grabPointer(probe.connection.root, events: [.buttonPress], cursor: nil) == nil)
        probe.connection.ungrabPointer()
        try probe.connection.sync()
        try clickReaches(target, at: try center(target), button: 1)
        let releases = f.client.releases(target).count
        if releases == 0 {
            try f.client.wait("the release on the window after its press") { event in
                if case .buttonRelease(let b) = event, b.window == target.id { return true }
                return nil
            }
        }
    }
}
