import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayX11
import Foundation
import Glibc
import ProcessSupport
import SystemPackage
import Testing
import XTestHarness

/// Where a popup's family ends (issue 43), under openbox and i3 in the three X11 modes. Same
/// client is not the same popup: what a program had on screen before its popup opened is a
/// bystander, and a click on it is outside the popup; what the popup opens (a dropdown
/// transient for it, a menu of the same client mapped after it) is inside. A window stacked
/// above the shield (a notification mapped after the popup opened) is decided as in grab mode.
/// Each case is judged by what the programs print or receive, not by the daemon's events alone.
@Suite("Family boundaries")
struct FamilyBoundaryTests {
    static let cases = RealProgramTests.cases

    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "ewwlike"
        window = { class = "EwwLikePopup" }

        [[popup]]
        name = "ewwlike-replay"
        window = { class = "EwwLikeReplay" }
        outside_click = "replay"

        [[popup]]
        name = "pop"
        window = { class = "Pop" }

        [[popup]]
        name = "pop-replay"
        window = { class = "PopReplay" }
        outside_click = "replay"

        """

    /// eww's shape in GTK3: one process, one X connection, an override-redirect bar mapped
    /// first, then a managed popup whose combo dropdown hangs below it. A click on the bar
    /// dismisses the popup (and reaches the bar only with `replay`); the dropdown's item is
    /// chosen with the popup left open; a click on the desktop dismisses it.
    @Test(arguments: cases) func anEwwLikeProgramsBarIsOutsideItsPopup(_ c: RealProgramTests.Case) throws {
        let run = try ProgramsRun(c, config: Self.config)
        let program = try EwwLikeProgram(run)
        defer { program.stop() }
        try run.step("bar, swallow", { try program.aClickOnTheBarDismissesThePopup(replay: false) })
        try run.step("bar, replay", { try program.aClickOnTheBarDismissesThePopup(replay: true) })
        try run.step("dropdown", program.theDropdownBelowThePopupIsInsideIt)
    }

    /// A test client's own windows on one connection: the window it clicks was mapped before
    /// the popup, so the click is outside the popup, whatever kind either window is. A menu of
    /// the same connection mapped after the popup is inside it.
    @Test(arguments: cases) func aWindowOfTheSameConnectionMappedBeforeThePopupIsOutside(_ c: RealProgramTests.Case) throws {
        let run = try ProgramsRun(c, config: Self.config)
        let script = try OneConnection(run)
        for variant in OneConnection.Variant.allCases {
            try run.step("\(variant)", { try script.aClickOnTheFirstWindowDismissesThePopup(variant) })
        }
        try run.step("menu mapped after the popup", script.aMenuMappedAfterThePopupIsInside)
    }

    /// A dunst notification mapped after the popup opened (above the shield in shield mode):
    /// a click on it is outside the popup in every mode; with `replay` it also reaches dunst,
    /// which closes the notification clicked; with `swallow` it does not.
    @Test(arguments: cases) func aClickOnANotificationIsOutsideThePopup(_ c: RealProgramTests.Case) throws {
        let run = try ProgramsRun(c, config: Self.config)
        let notifications = try NotificationRun(run)
        try run.step("notification, swallow", { try notifications.aClickOnTheNotificationDismissesThePopup(replay: false) })
        try run.step("notification, replay", { try notifications.aClickOnTheNotificationDismissesThePopup(replay: true) })
    }
}

// MARK: - Shared

extension ProgramsRun {
    /// The popups dismissed so far (each `dismissed` event's popups), after a sync. It reads
    /// every event sent so far: wait for what opened or closed by the status, not by events.
    func dismissedSoFar() throws -> [String] {
        try dismissalsSoFar().flatMap { $0["popups"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    }

    /// Waits (bounded) until the daemon no longer has `popup` open.
    func awaitClosed(_ popup: String) throws {
        try f.eventually("\(popup) to close") { try openEntry(popup) == nil }
    }

    /// The family members the daemon reports for the open instance of `popup`.
    func members(_ popup: String) throws -> [String] {
        try openEntry(popup)?["members"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// What the daemon says of a click at `point`, for failure messages.
    func explain(_ x: Int32, _ y: Int32) -> String {
        (try? f.ctl(["hit", "\(x)", "\(y)"]).stdout) ?? "(hit failed)"
    }

    func center(_ r: Rect) -> (x: Int32, y: Int32) { (r.x + r.width / 2, r.y + r.height / 2) }

    /// The end of the daemon's log, for failure messages.
    var logTail: String { "the daemon's log, last lines:\n" + f.log.split(separator: "\n").suffix(30).joined(separator: "\n") }
}

// MARK: - A. An eww-like GTK3 program

/// The program: python3 and GTK 3, one process and one X connection. It maps an override-
/// redirect bar (a `Gtk.WindowType.POPUP` window, as eww's `:wm-ignore` bars) with a button,
/// then reads commands from a fifo: `open CLASS` maps a managed popup of that WM_CLASS with a
/// combo box whose dropdown hangs below it, `close` destroys it, `ping N` answers `pong N`
/// once every X event sent to it before has been handled. It prints what happens.
final class EwwLikeProgram {
    static let script = #"""
        import os, sys
        import gi
        gi.require_version("Gtk", "3.0")
        gi.require_version("Gdk", "3.0")
        from gi.repository import Gdk, Gtk, GLib

        GLib.set_prgname("ewwlike")
        commands = os.open(sys.argv[1], os.O_RDWR | os.O_NONBLOCK)
        pending = b""
        popup = None

        def say(text):
            print(text, flush=True)

        bar = Gtk.Window(type=Gtk.WindowType.POPUP)
        bar.set_title("ewwlike-bar")
        bar.move(100, 0)
        bar.set_size_request(400, 32)
        button = Gtk.Button(label="bar button")
        button.connect("clicked", lambda b: say("bar clicked"))
        bar.add(button)
        bar.show_all()

        def deleted(window, event, window_class):
            say("popup " + window_class + " deleted")
            return False

        def open_popup(window_class):
            global popup
            popup = Gtk.Window(type=Gtk.WindowType.TOPLEVEL)
            popup.set_wmclass(window_class.lower(), window_class)
            popup.set_title("ewwlike-popup")
            popup.set_resizable(False)
            popup.set_default_size(240, 60)
            popup.move(700, 100)
            box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
            combo = Gtk.ComboBoxText()
            for item in ["one", "two", "three", "four", "five", "six"]:
                combo.append_text(item)
            combo.set_active(0)
            combo.connect("changed", lambda c: say("chosen " + c.get_active_text()))
            box.pack_start(combo, False, False, 0)
            popup.add(box)
            popup.connect("delete-event", deleted, window_class)
            popup.show_all()

        def command(fd, condition):
            global pending, popup
            try:
                pending += os.read(fd, 4096)
            except BlockingIOError:
                return True
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                words = line.decode().split()
                if words[0] == "open":
                    open_popup(words[1])
                elif words[0] == "close":
                    if popup is not None:
                        popup.destroy()
                        popup = None
                elif words[0] == "ping":
                    Gdk.Display.get_default().sync()
                    while Gtk.events_pending():
                        Gtk.main_iteration_do(False)
                    say("pong " + words[1])
            return True

        GLib.io_add_watch(commands, GLib.IO_IN, command)
        Gtk.main()

        """#

    let run: ProgramsRun
    let process: ChildProcess
    let output: String
    let commands: CommandFifo
    let bar: ProgramsRun.Found
    private var pings = 0

    init(_ run: ProgramsRun) throws {
        self.run = run
        let script = run.work.appendingPathComponent("ewwlike.py").path
        try TestFiles.write(Self.script, to: script)
        commands = try CommandFifo(run.work.appendingPathComponent("ewwlike.commands").path)
        // Debian's python3, where python3-gi is (not a python3 first on PATH).
        (process, output) = try run.start("ewwlike", "exec /usr/bin/python3 ewwlike.py ewwlike.commands")
        do {
            bar = try run.awaitWindow("the eww-like bar", of: process) { $0.overrideRedirect && $0.properties.title == "ewwlike-bar" }
        } catch {
            process.stop()
            commands.close()
            throw error
        }
    }

    func stop() {
        process.stop()
        commands.close()
    }

    var printed: [String] { run.read(output).split(separator: "\n").map(String.init) }

    func send(_ command: String) throws {
        try commands.send(command)
    }

    /// Returns once the program has handled every X event sent to it before now.
    func ping() throws {
        pings += 1
        let pong = "pong \(pings)"
        try send("ping \(pings)")
        try awaitLine(pong, "the program to answer ping \(pings)")
    }

    func awaitLine(_ line: String, _ what: String) throws {
        do {
            try eventually(what, timeout: .seconds(10), every: .milliseconds(20)) {
                try process.checkRunning(while: "waiting for \(what)")
                return printed.contains(line)
            }
        } catch {
            throw HarnessError("\(error); it printed \(printed)\n\(process.logTail)")
        }
    }

    /// Opens the popup with `windowClass` and waits until the daemon has it open as `popup`.
    func openPopup(_ windowClass: String, as popup: String) throws -> ProgramsRun.Found {
        try send("open \(windowClass)")
        let window = try run.awaitWindow("the eww-like popup \(windowClass)", of: process) { $0.properties.windowClass == windowClass }
        _ = try run.awaitEvent(.opened, popup: popup)
        return window
    }

    /// The popup, if a failed step left it open, is closed by the program, so that the next
    /// step starts as the first did.
    func closeIfOpen(_ popup: String) throws {
        guard try run.openEntry(popup) != nil else { return }
        try send("close")
        try run.awaitClosed(popup)
    }

    /// (1) A click on the bar's button, with the popup open, dismisses it: the bar is the
    /// program's but was on screen before the popup opened. With `swallow` the bar gets no
    /// click; with `replay` it does.
    func aClickOnTheBarDismissesThePopup(replay: Bool) throws {
        let (windowClass, name) = replay ? ("EwwLikeReplay", "ewwlike-replay") : ("EwwLikePopup", "ewwlike")
        let popup = try openPopup(windowClass, as: name)
        defer { try? closeIfOpen(name) }
        let point = run.center(bar.rect)
        let members = try run.members(name)
        let hit = run.explain(point.x, point.y)
        let clicksBefore = printed.filter { $0 == "bar clicked" }.count
        try run.click(point.x, point.y)
        let dismissed = try run.dismissedSoFar()
        #expect(dismissed == [name], """
            a click on the bar (mapped before the popup, same X client) did not dismiss the popup \(name): \
            dismissed \(dismissed); the popup's members were \(members) (the bar is \(hex(bar.client))); hit said:
            \(hit)
            \(run.logTail)
            """)
        if dismissed.contains(name) {
            try awaitLine("popup \(windowClass) deleted", "the popup to be asked to close")
            try run.awaitGone("the popup \(windowClass)") { $0.client == popup.client }
            try run.awaitClosed(name)
        }
        if replay {
            try awaitLine("bar clicked", "the replayed click to reach the bar's button")
        } else {
            try ping()
            let clicks = printed.filter { $0 == "bar clicked" }.count
            #expect(clicks == clicksBefore, "the click swallowed for the popup \(name) reached the bar: it printed \(printed)")
        }
    }

    /// (2) The combo's dropdown (override-redirect, transient for the popup) hangs below the
    /// popup: a click on its last item chooses it and leaves the popup open. (3) A click on
    /// the desktop then dismisses the popup.
    func theDropdownBelowThePopupIsInsideIt() throws {
        let popup = try openPopup("EwwLikePopup", as: "ewwlike")
        defer { try? closeIfOpen("ewwlike") }
        let deletedBefore = printed.filter { $0 == "popup EwwLikePopup deleted" }.count
        let r = popup.rect
        try run.click(r.x + r.width / 2, r.y + 15)
        let dropdown = try run.awaitWindow("the combo's dropdown", of: process) {
            $0.overrideRedirect && $0.properties.types.contains("combo")
        }
        #expect(dropdown.properties.transientFor == popup.client, "\(dropdown.properties)")
        try run.expectNotCoveredByTheShield(dropdown, "the combo's dropdown")
        let item = (x: dropdown.rect.x + dropdown.rect.width / 2, y: dropdown.rect.y + dropdown.rect.height - 15)
        try #require(item.y >= r.y + r.height, "the dropdown's last item \(item) is not below the popup \(r): \(dropdown.rect)")
        try run.f.eventually("the dropdown to join the popup's family") {
            try run.members("ewwlike").contains(hex(dropdown.client))
        }
        try run.click(item.x, item.y)
        try awaitLine("chosen six", "the dropdown's last item to be chosen")
        try run.awaitGone("the dropdown") { $0.client == dropdown.client }
        #expect(try run.dismissedSoFar().isEmpty, "choosing in the dropdown dismissed something")
        #expect(try run.openEntry("ewwlike") != nil, "choosing in the dropdown closed the popup")
        #expect(printed.filter { $0 == "popup EwwLikePopup deleted" }.count == deletedBefore, "the popup was asked to close: \(printed)")

        try run.click(RealProgramTests.nowhere.x, RealProgramTests.nowhere.y)
        let dismissed = try run.dismissedSoFar()
        #expect(dismissed == ["ewwlike"], "a click on the desktop dismissed \(dismissed)")
        if dismissed.contains("ewwlike") {
            try eventually("the popup to be asked to close", timeout: .seconds(10), every: .milliseconds(20)) {
                printed.filter { $0 == "popup EwwLikePopup deleted" }.count > deletedBefore
            }
            try run.awaitGone("the popup") { $0.client == popup.client }
            try run.awaitClosed("ewwlike")
        }
    }
}

// MARK: - B. One connection makes both the window it clicks and the popup

/// A test script's windows, all on one X connection of their own.
final class OneConnection {
    enum Variant: CaseIterable, CustomStringConvertible {
        /// An override-redirect window (a bar, a dock), then a managed popup.
        case overrideRedirectThenManagedPopup
        /// An override-redirect window, then an override-redirect popup.
        case overrideRedirectThenOverrideRedirectPopup
        /// A managed window, then a managed popup.
        case managedThenManagedPopup
        /// An override-redirect window, then a managed popup whose outside clicks are replayed.
        case overrideRedirectThenReplayPopup

        var description: String {
            switch self {
            case .overrideRedirectThenManagedPopup: "override-redirect window, then managed popup"
            case .overrideRedirectThenOverrideRedirectPopup: "override-redirect window, then override-redirect popup"
            case .managedThenManagedPopup: "managed window, then managed popup"
            case .overrideRedirectThenReplayPopup: "override-redirect window, then managed popup with replay"
            }
        }

        var firstIsOverrideRedirect: Bool { self != .managedThenManagedPopup }
        var popupIsOverrideRedirect: Bool { self == .overrideRedirectThenOverrideRedirectPopup }
        var replay: Bool { self == .overrideRedirectThenReplayPopup }
    }

    static let firstRect = Rect(x: 150, y: 420, width: 300, height: 200)
    static let popupRect = Rect(x: 700, y: 100, width: 300, height: 200)
    static let menuRect = Rect(x: 720, y: 320, width: 150, height: 120)

    let run: ProgramsRun
    let client: TestClient

    init(_ run: ProgramsRun) throws {
        self.run = run
        client = try TestClient(display: run.f.xvfb.display)
    }

    private func popupWindow(_ variant: Variant) throws -> TestWindow {
        let windowClass = variant.replay ? "PopReplay" : "Pop"
        return try client.createWindow(at: Self.popupRect, wmClass: WMClass(instance: windowClass.lowercased(), windowClass: windowClass),
                                       title: "popup", closesOnDelete: true, overrideRedirect: variant.popupIsOverrideRedirect)
    }

    private func cleanUp(_ windows: [TestWindow]) throws {
        try client.drain()
        for w in windows where !client.isDestroyed(w) { try client.destroy(w) }
        try run.f.eventually("every popup to close") { try run.f.openPopups().isEmpty }
    }

    func aClickOnTheFirstWindowDismissesThePopup(_ variant: Variant) throws {
        let name = variant.replay ? "pop-replay" : "pop"
        let first = try client.createWindow(at: Self.firstRect, wmClass: WMClass(instance: "script", windowClass: "Script"),
                                            title: "first", overrideRedirect: variant.firstIsOverrideRedirect)
        try run.f.sync()
        let popup = try popupWindow(variant)
        defer { try? cleanUp([first, popup]) }
        try run.f.sync()
        _ = try run.awaitEvent(.opened, popup: name)
        try #require(run.f.client.connection.sameClient(first.id, popup.id))

        let point = run.center(Self.firstRect)
        let members = try run.members(name)
        let hit = run.explain(point.x, point.y)
        try run.click(point.x, point.y)
        let dismissed = try run.dismissedSoFar()
        #expect(dismissed == [name], """
            a click on the window mapped before the popup (same connection) did not dismiss \(name): dismissed \
            \(dismissed); the popup's members were \(members) (the window is \(hex(first.id))); hit said:
            \(hit)
            \(run.logTail)
            """)
        // The popup closes on WM_DELETE_WINDOW once the client reads it.
        try client.drain()
        if dismissed.contains(name) {
            #expect(client.deleteRequests(popup) == 1, "the popup got \(client.deleteRequests(popup)) WM_DELETE_WINDOW")
            try run.awaitClosed(name)
        }
        if variant.replay {
            try client.waitForPresses(1, on: first, "the replayed press on the window mapped before the popup")
        } else {
            #expect(client.presses(first).isEmpty, "the swallowed press reached the window under it: \(client.presses(first))")
        }
    }

    /// An override-redirect window of the same connection mapped after the popup (its menu) is
    /// in its family: a click on it reaches it and dismisses nothing.
    func aMenuMappedAfterThePopupIsInside() throws {
        let popup = try popupWindow(.overrideRedirectThenManagedPopup)
        try run.f.sync()
        _ = try run.awaitEvent(.opened, popup: "pop")
        let menu = try client.createWindow(at: Self.menuRect, wmClass: WMClass(instance: "script", windowClass: "Script"),
                                           title: "menu", type: "popup_menu", overrideRedirect: true)
        defer { try? cleanUp([menu, popup]) }
        try run.f.eventually("the menu to join the popup's family") { try run.members("pop").contains(hex(menu.id)) }
        let point = run.center(Self.menuRect)
        try run.click(point.x, point.y)
        try client.waitForPresses(1, on: menu, "the press on the popup's menu")
        #expect(try run.dismissedSoFar().isEmpty, "a click on the popup's menu dismissed something")
        try client.drain()
        #expect(client.deleteRequests(popup) == 0, "a click on the popup's menu asked the popup to close")
        #expect(try run.openEntry("pop") != nil, "a click on the popup's menu closed it")
    }
}

// MARK: - C. A dunst notification mapped after the popup

/// A private session bus (no service activation) and dunst on the run's display, started
/// once a popup is open: its notifications sit top-right, away from the popup, never expire,
/// and a click closes the one clicked.
final class NotificationRun {
    let run: ProgramsRun
    let directory: URL
    let address: String
    let environment: [String: String]
    private let bus: PrivateSessionBus
    private var dunst: ChildProcess?
    private var sent = 0

    init(_ run: ProgramsRun) throws {
        self.run = run
        directory = run.work.appendingPathComponent("dunst")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var environment = run.environment
        environment["XDG_CONFIG_HOME"] = directory.path
        bus = try PrivateSessionBus(in: directory, environment: environment)
        address = bus.address
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        self.environment = environment
    }

    deinit { dunst?.stop() }

    func startDunst() throws -> ChildProcess {
        if let dunst { return dunst }
        let dunstrc = directory.appendingPathComponent("dunstrc").path
        try TestFiles.write("""
            [global]
                follow = none
                origin = top-right
                offset = 20x200
                width = 300
                height = 100
                mouse_left_click = close_current
                mouse_middle_click = close_current
                mouse_right_click = close_current
            [urgency_low]
                timeout = 0
            [urgency_normal]
                timeout = 0
            [urgency_critical]
                timeout = 0

            """, to: dunstrc)
        let dunst = try ChildProcess(["dunst", "-config", dunstrc], environment: environment)
        self.dunst = dunst
        // NameHasOwner activates nothing: true once dunst has taken the name.
        let ask = ["dbus-send", "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                   "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications"]
        do {
            try eventually("dunst to own org.freedesktop.Notifications on the test's bus", timeout: .seconds(10), every: .milliseconds(20)) {
                try dunst.checkRunning(while: "starting")
                return try ProgramRun.run(ask, environment: environment, limit: .seconds(5)).stdout.contains("boolean true")
            }
        } catch {
            throw HarnessError("\(error); dunst's output:\n\(dunst.logTail)")
        }
        return dunst
    }

    func dunstctl(_ arguments: [String]) throws -> String {
        let result = try ProgramRun.run(["dunstctl"] + arguments, environment: environment, limit: .seconds(10))
        guard result.status == 0 else { throw HarnessError("dunstctl \(arguments): \(result.output)") }
        return result.stdout
    }

    func displayed() throws -> Int { Int(try dunstctl(["count", "displayed"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }

    /// The summaries of the notifications closed so far.
    func closed() throws -> [String] {
        let history = try JSON.parse(try dunstctl(["history"]))
        let entries = history["data"]?.arrayValue?.first?.arrayValue ?? []
        return entries.compactMap { $0["summary"]?["data"]?.stringValue }
    }

    func notify(_ summary: String) throws {
        let sent = try ProgramRun.run(["notify-send", "-t", "0", summary, "a notification from the tests"], environment: environment,
                                      limit: .seconds(10))
        guard sent.status == 0 else { throw HarnessError("notify-send: \(sent.output)") }
    }

    /// With the popup open, dunst shows two notifications, one above the other, in one
    /// window mapped after the popup. A click on the lower one dismisses the popup; with
    /// `replay` dunst closes that notification, with `swallow` it does not. Then a click on
    /// the upper one, with nothing open, closes it: dunst handles its clicks in order, so once
    /// it has, what it did with the first click is known.
    func aClickOnTheNotificationDismissesThePopup(replay: Bool) throws {
        let (windowClass, name) = replay ? ("PopReplay", "pop-replay") : ("Pop", "pop")
        let pop = try run.f.window(RealProgramTests.popRect, class: windowClass)
        _ = try run.awaitEvent(.opened, popup: name)
        defer {
            try? run.f.client.drain()
            if !run.f.client.isDestroyed(pop) { try? run.f.client.destroy(pop) }
        }
        let dunst = try startDunst()
        sent += 1
        let (upper, lower) = ("upper-\(sent)", "lower-\(sent)")
        try notify(upper)
        let single = try run.awaitWindow("dunst's window", of: dunst) { $0.overrideRedirect && $0.properties.windowClass == "Dunst" }
        try notify(lower)
        let window = try run.awaitWindow("dunst's window with two notifications", of: dunst) {
            $0.client == single.client && $0.rect.height > single.rect.height * 3 / 2
        }
        try #require(try displayed() == 2, "dunst does not show two notifications")
        let p = RealProgramTests.popRect, w = window.rect
        try #require(w.y + w.height <= p.y || p.y + p.height <= w.y || w.x + w.width <= p.x || p.x + p.width <= w.x,
                     "dunst's window \(w) is on the popup \(p)")
        try run.expectNotCoveredByTheShield(window, "dunst's notification")

        let lowerPoint = (x: window.rect.x + window.rect.width / 2, y: window.rect.y + window.rect.height * 3 / 4)
        let hit = run.explain(lowerPoint.x, lowerPoint.y)
        try run.click(lowerPoint.x, lowerPoint.y)
        let dismissed = try run.dismissedSoFar()
        #expect(dismissed == [name], """
            a click on dunst's notification (window \(hex(window.client)), mapped after the popup) did not dismiss \
            \(name): dismissed \(dismissed); hit said:
            \(hit)
            \(run.logTail)
            """)
        // The popup closes on WM_DELETE_WINDOW once the test client reads it; one not
        // dismissed is closed here, so that the next click has nothing open.
        try run.f.settle()
        if dismissed.contains(name) {
            #expect(run.f.client.deleteRequests(pop) == 1, "the popup got \(run.f.client.deleteRequests(pop)) WM_DELETE_WINDOW")
        } else {
            try run.f.client.destroy(pop)
        }
        try run.awaitClosed(name)

        // Nothing is open now: this click goes straight to dunst, after the first.
        let upperPoint = (x: window.rect.x + window.rect.width / 2, y: window.rect.y + 12)
        try run.click(upperPoint.x, upperPoint.y)
        var closed: [String] = []
        do {
            try eventually("dunst to close the upper notification, clicked with nothing open", timeout: .seconds(10),
                           every: .milliseconds(20)) {
                try dunst.checkRunning(while: "closing a notification")
                closed = try self.closed()
                return closed.contains(upper)
            }
        } catch {
            throw HarnessError("\(error); closed: \(closed); dunst:\n\(dunst.logTail)")
        }
        if replay {
            #expect(closed.contains(lower), "the replayed click did not reach dunst: closed only \(closed)")
            #expect(try displayed() == 0)
        } else {
            #expect(!closed.contains(lower), "the swallowed click reached dunst, which closed the notification clicked: \(closed)")
            #expect(try displayed() == 1)
            _ = try dunstctl(["close-all"])
        }
        try eventually("dunst to show nothing", timeout: .seconds(10), every: .milliseconds(20)) { try displayed() == 0 }
    }
}
