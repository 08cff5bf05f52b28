import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import SystemPackage
import Testing
import WaylandHarness

/// Window popups on headless KWin 5.27: the daemon loads its KWin script over KWin's session
/// bus, and real GTK programs (a small GTK 3 program, yad) are the popups. What each click did
/// is judged by the programs: what they print, whether they are still running.
@Suite(.serialized) struct KWinWindowTests {
    /// The steps follow each other within milliseconds here: no grace period.
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "gtk"
        window = { app_id = "clickaway-kwin-gtk" }

        [[popup]]
        name = "calendar"
        window = { app_id = "yad" }
        """

    /// No window popup configured: the windows become popups at run time.
    static let noWindowPopup = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "unrelated"
        rect = [0, 0, 1, 1]
        """

    /// The window's size as the program asks for it: KWin here draws no decorations (no
    /// decoration plugin headless), so the frame is the window.
    static let size = (width: Int32(240), height: Int32(120))

    /// The popup opens with its frame; a click inside reaches the program; a dialog transient
    /// for it, reaching past it, is inside; the window moved by a KWin script moves its hole;
    /// a click where it was dismisses it, and KWin closes it.
    @Test func aGTKWindowMatchedByAppIdIsAPopupWithItsFrame() throws {
        try withWaylandDaemon(.kwin, config: Self.config, kwinScripting: true) { f in
            let events = try f.monitor()
            let program = try WaylandGTKProgram(kwin: f)
            defer { program.stop() }
            let rect = try program.awaitPopup(f, events)
            #expect((rect.width, rect.height) == Self.size, "\(rect)")
            let status = try f.status()
            #expect(status["kwin"]?["version"]?.intValue == 5, "\(status.text)")
            #expect(try f.ctl(["status"]).stdout.contains("kwin:     1 windows with a role"))

            // Inside, on the window's last pixel: the program gets the press.
            try f.click(rect.x + rect.width - 1, rect.y + rect.height - 1)
            try program.awaitLine("press kwin-gtk-popup \(rect.width - 1) \(rect.height - 1) 1", "the press inside to reach the window")
            #expect(try f.openPopups() == ["gtk"])

            // A dialog transient for it, wider than it: inside, where it reaches past the popup.
            try program.send("dialog")
            // KWin centres it on the popup: the holes' bounds are the dialog.
            var dialog = rect
            try f.eventually("the dialog in the popup's family") {
                dialog = try Self.holeBounds(f)
                return try Self.members(f).count == 1 && dialog.width > rect.width
            }
            try f.click(dialog.x + 2, dialog.y + dialog.height / 2)
            try program.awaitLine("press kwin-gtk-popup-dialog 2 \(dialog.height / 2) 1", "the press on the dialog to reach it")
            #expect(try f.openPopups() == ["gtk"])
            try program.send("close-dialog")
            try f.eventually("the dialog to leave the family") { try Self.members(f).isEmpty }

            // Moved by a KWin script, as a user's drag would: the hole follows.
            try f.compositor.runKWinScript("""
                workspace.clientList().forEach(function (w) {
                    if (w.caption === "kwin-gtk-popup") w.frameGeometry = { x: 100, y: 100, width: w.frameGeometry.width, height: w.frameGeometry.height };
                });
                """)
            let moved = Rect(x: 100, y: 100, width: rect.width, height: rect.height)
            try f.eventually("the daemon to see the window at (100, 100)") { try f.report().open.first?.rect == moved }
            try f.click(105, 105 + rect.height - 10)
            try program.awaitLine("press kwin-gtk-popup 5 \(rect.height - 5) 1", "the press at the new place to reach the window")
            #expect(try f.openPopups() == ["gtk"])

            // Where it was, now outside: dismissed, KWin asks the window to close.
            try f.click(rect.x + rect.width / 2, rect.y + rect.height / 2)
            try program.awaitLine("kwin-gtk-popup deleted", "KWin to close the window")
            #expect(try events.await(.dismissed)["popups"] == .array([.string("gtk")]))
            #expect(try f.below.clicks().filter(\.isPressed).isEmpty, "the outside click was swallowed")
        }
    }

    /// KWin lists a GTK combo box's dropdown (an xdg_popup) as a window transient for its
    /// toplevel: it is in the popup's family, so an item below the popup is chosen, not a
    /// dismissal, with no `slop`.
    @Test func aDropdownBelowThePopupIsInsideIt() throws {
        try withWaylandDaemon(.kwin, config: Self.config, kwinScripting: true) { f in
            let events = try f.monitor()
            let program = try WaylandGTKProgram(kwin: f)
            defer { program.stop() }
            let rect = try program.awaitPopup(f, events)
            try program.send("dropdown")
            // The holes' bounds reach down to the dropdown's last item.
            var bounds = rect
            try f.eventually("the dropdown in the popup's family") {
                bounds = try Self.holeBounds(f)
                return try Self.members(f).count == 1 && bounds.y + bounds.height > rect.y + rect.height + 20
            }
            // The last item, below the popup.
            try f.click(rect.x + rect.width / 2, bounds.y + bounds.height - 8)
            try program.awaitLine("chosen six", "the last item to be chosen")
            #expect(try f.openPopups() == ["gtk"])
            try f.eventually("the dropdown to close") { try Self.members(f).isEmpty }
        }
    }

    /// `open --pid` takes the window of a process as it appears (yad, a real program);
    /// `show` draws it; an outside click dismisses it and yad, asked to close, exits.
    @Test func openByPidTakesYadsWindowAndShowDrawsIt() throws {
        try withWaylandDaemon(.kwin, config: Self.noWindowPopup, kwinScripting: true) { f in
            let events = try f.monitor()
            let yad = try ChildProcess(["yad", "--text=clickaway", "--title=kwin-yad", "--width=300", "--height=150"],
                                       environment: WaylandGTKProgram.environment(directory: f.directory, waylandSocket: f.compositor.waylandSocket))
            defer { yad.stop() }
            let open = try f.ctl(["open", "--pid", "\(yad.pid)", "--name", "yadpopup"], limit: .seconds(20))
            #expect(open.status == 0, "\(open.output)\n\(f.log)\n\(yad.logTail)")
            let opened = try events.await(.opened)
            #expect(opened["popup"]?.stringValue == "yadpopup")
            let entry = try #require(try f.report().open.first)
            let show = try f.ctl(["show", "yadpopup", "--for", "60"])
            #expect(show.status == 0 && show.stdout.contains("drawing yadpopup on 1 output"), "\(show.output)")
            // Outside it: dismissed, and yad closes as on its close button.
            let outside = entry.rect.x > 50 ? entry.rect.x - 20 : entry.rect.x + entry.rect.width + 20
            try f.click(outside, entry.rect.y + 10)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("yadpopup")]))
            try eventually("yad to exit", timeout: .seconds(10), every: .milliseconds(20)) { !yad.isRunning }
            try f.ctlOK(["show", "--off"])
        }
    }

    /// `pick` in a KDE session: the daemon's overlay takes the click and KWin's script names
    /// the window; the block printed matches it by app_id, and the click reaches no window.
    /// `open --window` with the number it printed makes the window a popup.
    @Test func pickNamesTheGTKWindowAndOpenTakesItsNumber() throws {
        try withWaylandDaemon(.kwin, config: Self.noWindowPopup, kwinScripting: true) { f in
            let events = try f.monitor()
            let program = try WaylandGTKProgram(kwin: f)
            defer { program.stop() }
                        // KWin has its first frame once GTK's round trip is back; the daemon has KWin's
            // report of it once the script answers the sync's ping.
            try program.ping()
            try f.sync()
            var environment = f.environment
            environment["PATH"] = "/usr/bin:/bin"
            environment["XDG_CURRENT_DESKTOP"] = "KDE"
            let pick = try PickProcess(["pick", "--timeout", "20", "--json"], environment: environment)
            try pick.readUntil("pick to ask for a click", timeout: .seconds(10)) { pick.stderr.contains("click the window to describe") }
            try f.eventually("the overlay to take every click for the pick") { try f.status()["overlay"]?["holes"] == .array([]) }
            try f.sync()
            // KWin centres a new window: 240x120 on the 1280x720 output.
            try f.click(640, 400)
            let r = try pick.finish(timeout: .seconds(15))
            #expect(r.status == 0, "\(r.stderr)")
            let picked = try JSON.parse(r.stdout)
            #expect(picked["app_id"]?.stringValue == "clickaway-kwin-gtk" && picked["title"]?.stringValue == "kwin-gtk-popup", "\(r.stdout)")
            #expect(picked["match"]?["app_id"]?.stringValue == "clickaway-kwin-gtk", "\(r.stdout)")
            #expect(!program.printed.contains { $0.hasPrefix("press kwin-gtk-popup ") }, "the pick's click reached the window")
            let window = try #require(picked["window"]?.stringValue, "\(r.stdout)")
            let rect = try #require(Rect(json: picked["rect"]), "\(r.stdout)")

            try f.ctlOK(["open", "--window", window, "--name", "picked"])
            #expect(try events.await(.opened)["popup"]?.stringValue == "picked")
            #expect(try f.report().open.first { $0.popup == "picked" }?.rect == rect)
            try f.click(rect.x + rect.width + 30, rect.y + 10)
            try program.awaitLine("kwin-gtk-popup deleted", "KWin to close the window picked")
        }
    }

    /// The daemon stopped: KWin no longer runs its script, and its file is gone.
    @Test func stoppingTheDaemonUnloadsTheScript() throws {
        try withWaylandDaemon(.kwin, config: Self.config, kwinScripting: true) { f in
            let script = try #require(try f.status()["kwin"]?["script"]?.stringValue)
            #expect(FileManager.default.fileExists(atPath: script))
            #expect(try Self.isScriptLoaded(f) == true)
            f.stopDaemon()
            #expect(try Self.isScriptLoaded(f) == false)
            #expect(!FileManager.default.fileExists(atPath: script))
        }
    }

    /// The daemon killed (no chance to unload anything): the script's watchdog finds its bus
    /// name gone and unloads the script within its 10 s.
    @Test func aKilledDaemonsScriptUnloadsItself() throws {
        try withWaylandDaemon(.kwin, config: Self.config, kwinScripting: true) { f in
            #expect(try Self.isScriptLoaded(f) == true)
            let daemon = try #require(f.daemon)
            #expect(daemon.signalAndWait(SIGKILL) != nil, "the daemon did not die of SIGKILL")
            try eventually("KWin to unload the killed daemon's script", timeout: .seconds(15), every: .milliseconds(250)) {
                try !Self.isScriptLoaded(f)
            }
        }
    }

    static func isScriptLoaded(_ f: WaylandDaemonFixture) throws -> Bool {
        try f.compositor.kwinScripting("isScriptLoaded", ["clickaway"]).contains("boolean true")
    }

    /// The windows of the open popup's family, from `status`.
    static func members(_ f: WaylandDaemonFixture) throws -> [String] { try f.report().open.first?.members ?? [] }

    /// The bounds of the overlay's holes: where clicks go through, the popup and its family.
    static func holeBounds(_ f: WaylandDaemonFixture) throws -> Rect {
        let holes = try f.status()["overlay"]?["holes"]?.arrayValue?.compactMap { Rect(json: $0) } ?? []
        guard var bounds = holes.first else { throw HarnessError("the overlay has no holes") }
        for hole in holes.dropFirst() {
            let right = max(bounds.x + bounds.width, hole.x + hole.width), bottom = max(bounds.y + bounds.height, hole.y + hole.height)
            bounds = Rect(x: min(bounds.x, hole.x), y: min(bounds.y, hole.y), width: 0, height: 0)
            bounds.width = right - bounds.x
            bounds.height = bottom - bounds.y
        }
        return bounds
    }
}

/// The GTK program of these tests on KWin: app_id `clickaway-kwin-gtk`, title
/// `kwin-gtk-popup`, 240x120, with a combo box (its dialog, 420x260, reaches past it).
extension WaylandGTKProgram {
    static let kwinName = "kwin-gtk-popup"

    convenience init(kwin f: WaylandDaemonFixture) throws {
        try self.init(directory: f.directory, waylandSocket: f.compositor.waylandSocket, daemonLog: { f.log }, name: Self.kwinName,
                      appId: "clickaway-kwin-gtk", width: 240, height: 120, combo: true)
    }

    /// Waits for the daemon to open the popup "gtk"; returns its rectangle.
    func awaitPopup(_ f: WaylandDaemonFixture, _ events: EventStream) throws -> Rect {
        let opened = try events.await(.opened, timeoutMs: 20_000)
        #expect(opened["popup"]?.stringValue == "gtk")
        guard let entry = try f.report().open.first else { throw HarnessError("no popup open after \"opened\"\n\(f.log)") }
        return entry.rect
    }
}
