import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import WaylandHarness

/// Popups on headless GNOME Shell 43 through clickaway's Shell extension: real GTK programs
/// (a small GTK 3 program, yad) are the popups and the windows around them, and say what
/// reached them; the clicks come from a Clutter virtual pointer in the Shell, as a mouse's
/// would. Each test has a Shell of its own.
@Suite(.serialized) struct GnomeShellTests {
    static let popupAppId = "clickaway-gnome-popup"

    /// The steps follow each other within milliseconds here: no grace period.
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "gtk"
        window = { app_id = "\(popupAppId)" }
        escape = true

        [[popup]]
        name = "calendar"
        window = { class = "yad" }
        outside_click = "replay"

        [[popup]]
        name = "terminal"
        window = { app_id = "clickaway-gnome-foot" }

        [[popup]]
        name = "panel"
        rect = [100, 100, 300, 200]
        anchors = [ { rect = [600, 100, 300, 200] } ]
        """

    /// Where the tests put the popup's window and the window beside it.
    static let popupPlace = (x: Int32(100), y: Int32(100))
    static let otherPlace = (x: Int32(600), y: Int32(100))
    /// A point on the desktop, on no window.
    static let desktop = (x: Int32(1000), y: Int32(700))

    /// The popup's window (by app_id) and another one beside it, both placed, the popup open.
    private static func popupAndOther(_ f: GnomeDaemonFixture, _ events: EventStream) throws
        -> (popup: WaylandGTKProgram, other: WaylandGTKProgram, rect: Rect) {
        let other = try WaylandGTKProgram(f, name: "other", appId: "clickaway-gnome-other")
        try f.shell.moveWindow(titled: "other", to: otherPlace.x, otherPlace.y)
        let popup = try WaylandGTKProgram(f, name: "popup", appId: popupAppId)
        #expect(try events.await(.opened)["popup"]?.stringValue == "gtk")
        try f.shell.moveWindow(titled: "popup", to: popupPlace.x, popupPlace.y)
        let rect = try f.frame(of: "popup")
        #expect((rect.x, rect.y) == popupPlace, "\(rect)")
        try f.eventually("the daemon to see the popup where GNOME Shell put it") { try f.report().open.first?.rect == rect }
        return (popup, other, rect)
    }

    /// A window popup matched by app_id: its frame is its hole, so a click inside reaches it
    /// and never the daemon; a click on another window dismisses it, GNOME Shell asks it to
    /// close, and the click is swallowed: the other window gets nothing.
    @Test func aWindowMatchedByAppIdPassesInsideClicksAndSwallowsOutsideOnes() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, rect) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            let status = try f.report()
            #expect(status.backend == "gnome", "\(status.text)")
            guard case .wayland(let wayland) = status.display else { throw HarnessError("not a Wayland status: \(status.text)") }
            #expect(wayland.gnome?.connected == true && wayland.gnome?.shell.hasPrefix("43") == true, "\(status.text)")
            #expect(try f.ctl(["status"]).stdout.contains("gnome:    1 windows with a role"))

            // Inside, on its last pixel.
            try Self.insideClickReachesThePopupAlone(f, popup, rect.x + rect.width - 1, rect.y + rect.height - 1)
            try Self.outsideClickDismissesAndIsSwallowed(f, events, popup, other)
        }
    }

    /// A click at (x, y) inside the popup: the program gets the press, the daemon hears nothing.
    private static func insideClickReachesThePopupAlone(_ f: GnomeDaemonFixture, _ popup: WaylandGTKProgram, _ x: Int32, _ y: Int32) throws {
        try f.click(x, y)
        _ = try popup.awaitLine(startingWith: "press popup", "the press inside at (\(x), \(y)) to reach the popup")
        #expect(!f.log.contains("GNOME Shell press"), "the inside click reached the daemon:\n\(f.log)")
        #expect(try f.openPopups() == ["gtk"])
    }

    /// A click on the other window: the popup is dismissed and asked to close, and the click
    /// is swallowed.
    private static func outsideClickDismissesAndIsSwallowed(_ f: GnomeDaemonFixture, _ events: EventStream, _ popup: WaylandGTKProgram,
                                                            _ other: WaylandGTKProgram) throws {
        let otherRect = try f.frame(of: "other")
        try f.click(otherRect.x + otherRect.width / 2, otherRect.y + otherRect.height / 2)
        #expect(try events.await(.dismissed)["popups"] == .array([.string("gtk")]))
        try popup.awaitLine("popup deleted", "GNOME Shell to ask the popup to close")
        try f.sync()
        try other.ping()
        #expect(other.presses.isEmpty, "the swallowed click reached the other window: \(other.presses)")
    }

    /// yad matched by class, with outside_click = "replay": a click on another window
    /// dismisses it (yad, asked to close, exits) and then reaches that window, exactly once.
    @Test func aReplayedOutsideClickReachesTheWindowBelowExactlyOnce() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let other = try WaylandGTKProgram(f, name: "other", appId: "clickaway-gnome-other")
            defer { other.stop() }
            try f.shell.moveWindow(titled: "other", to: Self.otherPlace.x, Self.otherPlace.y)
            let yad = try ChildProcess(["yad", "--text=clickaway", "--title=gnome-yad", "--width=300", "--height=150"],
                                       environment: WaylandGTKProgram.environment(directory: f.directory, waylandSocket: f.shell.waylandSocket))
            defer { yad.stop() }
            #expect(try events.await(.opened, timeoutMs: 20_000)["popup"]?.stringValue == "calendar")
            try f.shell.moveWindow(titled: "gnome-yad", to: Self.popupPlace.x, Self.popupPlace.y)
            let otherRect = try f.frame(of: "other")
            try f.click(otherRect.x + 40, otherRect.y + otherRect.height / 2)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("calendar")]))
            _ = try other.awaitLine(startingWith: "press other", "the replayed click to reach the other window")
            try eventually("yad to exit", timeout: .seconds(10), every: .milliseconds(20)) { !yad.isRunning }
            try f.sync()
            try other.ping()
            #expect(other.presses.count == 1, "the other window got \(other.presses)")
            #expect(try f.openPopups().isEmpty)
        }
    }

    /// A button the popup does not list (8, back) dismisses nothing and passes: the layer,
    /// which stays, lets the click through a pinhole to the window below, exactly once.
    @Test func anUnlistedButtonGoesThroughTheLayerToTheWindowOnce() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, _) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            let otherRect = try f.frame(of: "other")
            try f.click(otherRect.x + 30, otherRect.y + otherRect.height / 2, button: 8)
            try other.awaitPresses(1, on: "other", "the click of button 8 to reach the other window")
            #expect(other.presses.allSatisfy { $0.hasSuffix(" 8") }, "\(other.presses)")
            try f.sync()
            try other.ping()
            #expect(other.presses.count == 1, "the other window got \(other.presses)")
            #expect(try f.openPopups() == ["gtk"])
            #expect(try f.shell.hasLayer())
        }
    }

    /// foot, a terminal that is no GTK program, matched by app_id: a click on the desktop
    /// dismisses it, and foot, asked to close by GNOME Shell, exits.
    @Test func footMatchedByAppIdClosesOnAClickOnTheDesktop() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let foot = try ChildProcess(["foot", "--app-id", "clickaway-gnome-foot", "--title", "gnome-foot", "--window-size-pixels", "400x300",
                                         "sleep", "300"], environment: WaylandGTKProgram.environment(directory: f.directory, waylandSocket: f.shell.waylandSocket))
            defer { foot.stop() }
            #expect(try events.await(.opened, timeoutMs: 20_000)["popup"]?.stringValue == "terminal")
            try f.shell.moveWindow(titled: "gnome-foot", to: Self.popupPlace.x, Self.popupPlace.y)
            try f.click(Self.desktop.x, Self.desktop.y)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("terminal")]))
            try eventually("foot to exit", timeout: .seconds(10), every: .milliseconds(20)) { !foot.isRunning }
        }
    }

    /// A rect popup opened by clickawayctl, with an anchor over another window: a click on
    /// the anchor reaches that window and dismisses nothing; a click on the desktop dismisses it.
    @Test func aRectPopupsAnchorPassesAndTheDesktopDismisses() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let other = try WaylandGTKProgram(f, name: "other", appId: "clickaway-gnome-other")
            defer { other.stop() }
            try f.shell.moveWindow(titled: "other", to: Self.otherPlace.x, Self.otherPlace.y)
            try f.ctlOK(["open", "panel"])
            #expect(try events.await(.opened)["popup"]?.stringValue == "panel")
            #expect(try f.shell.hasLayer())
            try f.click(Self.otherPlace.x + 50, Self.otherPlace.y + 50)
            _ = try other.awaitLine(startingWith: "press other", "the click on the anchor to reach the window under it")
            #expect(try f.openPopups() == ["panel"])
            try f.click(Self.desktop.x, Self.desktop.y)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("panel")]))
            try f.eventually("the layer to go with the last popup") { try !f.shell.hasLayer() }
        }
    }

    /// A dialog transient for the popup is inside it; the popup moved by GNOME Shell takes its
    /// hole along: a click at the new place reaches it, one where it was dismisses it.
    @Test func aTransientDialogIsInsideAndAMovedWindowsHoleFollows() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, rect) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }

            try popup.send("dialog")
            try f.eventually("the dialog in the popup's family") { try f.report().open.first?.members.count == 1 }
            // A point of the dialog outside the popup's own frame, once the daemon has the
            // dialog where GNOME Shell shows it (mutter may still be placing it when it is shown).
            var dialog = rect
            var point = (Int32(0), Int32(0))
            try f.eventually("the daemon to have the dialog where GNOME Shell shows it") {
                dialog = try f.frame(of: "popup-dialog")
                point = dialog.x + dialog.width - 5 > rect.x + rect.width
                    ? (dialog.x + dialog.width - 5, dialog.y + dialog.height / 2) : (dialog.x + dialog.width / 2, dialog.y + dialog.height - 5)
                return try f.ctl(["hit", "\(point.0)", "\(point.1)", "--json"]).stdout.contains(#""click":"pass""#)
            }
            #expect(!rect.contains(x: point.0, y: point.1), "dialog \(dialog) inside popup \(rect)")
            try f.click(point.0, point.1)
            _ = try popup.awaitLine(startingWith: "press popup-dialog", "the press on the dialog to reach it")
            #expect(try f.openPopups() == ["gtk"])
            try popup.send("close-dialog")
            try f.eventually("the dialog to leave the family") { try f.report().open.first?.members.isEmpty == true }

            try f.shell.moveWindow(titled: "popup", to: 300, 400)
            let moved = try f.frame(of: "popup")
            try f.eventually("the daemon to see the popup at (300, 400)") { try f.report().open.first?.rect == moved }
            try f.click(moved.x + 10, moved.y + moved.height - 10)
            try popup.awaitPresses(1, on: "popup", "the press at the new place to reach the popup")
            #expect(try f.openPopups() == ["gtk"])
            try f.click(rect.x + 10, rect.y + 10)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("gtk")]))
            try popup.awaitLine("popup deleted", "GNOME Shell to ask the popup to close")
        }
    }

    /// A GTK combo box's dropdown (an xdg_popup, which mutter makes a DROPDOWN_MENU window
    /// transient for its toplevel, below the extension's layer) is in the popup's family: its
    /// last item, below the popup, is chosen, and nothing is dismissed.
    @Test func aDropdownBelowThePopupIsInsideIt() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let popup = try WaylandGTKProgram(f, name: "popup", appId: Self.popupAppId, width: 240, height: 40, combo: true)
            defer { popup.stop() }
            #expect(try events.await(.opened)["popup"]?.stringValue == "gtk")
            try f.shell.moveWindow(titled: "popup", to: Self.popupPlace.x, Self.popupPlace.y)
            let rect = try f.frame(of: "popup")
            try f.eventually("the daemon to see the popup where GNOME Shell put it") { try f.report().open.first?.rect == rect }
            try popup.send("dropdown")
            var bounds = rect
            try f.eventually("the dropdown in the popup's family, hanging below it") {
                bounds = try Self.holeBounds(f)
                return try f.report().open.first?.members.count == 1 && bounds.y + bounds.height > rect.y + rect.height + 20
            }
            // The last item, below the popup.
            try f.click(rect.x + rect.width / 2, bounds.y + bounds.height - 12)
            try popup.awaitLine("chosen six", "the last item to be chosen")
            #expect(try f.openPopups() == ["gtk"])
            try f.eventually("the dropdown to close") { try f.report().open.first?.members.isEmpty == true }
        }
    }

    /// While the popup's dropdown is open, Escape is the dropdown's: it closes the dropdown and
    /// dismisses nothing; the next Escape dismisses the popup.
    @Test func escapeIsTheDropdownsWhileItIsOpen() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let popup = try WaylandGTKProgram(f, name: "popup", appId: Self.popupAppId, width: 240, height: 40, combo: true)
            defer { popup.stop() }
            #expect(try events.await(.opened)["popup"]?.stringValue == "gtk")
            try popup.send("dropdown")
            try f.eventually("the dropdown in the popup's family") { try f.report().open.first?.members.count == 1 }
            try f.shell.key(0xff1b)
            try f.eventually("the dropdown to close on Escape") { try f.report().open.first?.members.isEmpty == true }
            #expect(try f.openPopups() == ["gtk"])
            try f.shell.key(0xff1b)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("gtk")]))
        }
    }

    /// The bounds of the layer's holes: where clicks go through, the popup and its family.
    static func holeBounds(_ f: GnomeDaemonFixture) throws -> Rect {
        let holes = try f.status()["overlay"]?["holes"]?.arrayValue?.compactMap { Rect(json: $0) } ?? []
        guard let first = holes.first else { throw HarnessError("the layer has no holes") }
        return holes.dropFirst().reduce(first) { a, b in
            let right = max(a.x + a.width, b.x + b.width), bottom = max(a.y + a.height, b.y + b.height)
            let x = min(a.x, b.x), y = min(a.y, b.y)
            return Rect(x: x, y: y, width: right - x, height: bottom - y)
        }
    }

    /// The daemon stopped or killed with a popup open: the extension sees its name leave the
    /// bus and takes the layer down, so the desktop stays clickable.
    @Test(arguments: [SIGTERM, SIGKILL]) func theDaemonGoneLeavesTheDesktopClickable(signal: Int32) throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, _) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            #expect(try f.shell.hasLayer())
            let daemon = try #require(f.daemon)
            #expect(daemon.signalAndWait(signal) != nil, "the daemon did not exit on signal \(signal)")
            try eventually("the extension to take its layer down", timeout: .seconds(5), every: .milliseconds(20)) { try !f.shell.hasLayer() }
            let otherRect = try f.frame(of: "other")
            try f.shell.click(otherRect.x + 30, otherRect.y + otherRect.height / 2)
            _ = try other.awaitLine(startingWith: "press other", "the click to reach the other window without the daemon")
        }
    }

    /// The daemon stopped (SIGSTOP) with a popup open: the press it does not answer within
    /// 1 s takes the layer down, and the next click reaches the window; once the daemon runs
    /// again it puts the layer back.
    @Test func aStalledDaemonsLayerGoesAfterASecond() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, _) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            let daemon = try #require(f.daemon)
            kill(daemon.pid, SIGSTOP)
            defer { kill(daemon.pid, SIGCONT) }
            let otherRect = try f.frame(of: "other")
            try f.shell.click(otherRect.x + 30, otherRect.y + 30)
            try eventually("the unanswered press to take the layer down", timeout: .seconds(5), every: .milliseconds(20)) { try !f.shell.hasLayer() }
            try f.shell.click(otherRect.x + 40, otherRect.y + 40)
            try other.awaitPresses(1, on: "other", "the click to reach the other window while the daemon is stopped")
            kill(daemon.pid, SIGCONT)
            try f.eventually("the daemon to put the layer back") { try f.shell.hasLayer() }
            #expect(try f.openPopups() == ["gtk"])
        }
    }

    /// GNOME Shell restarted (a crash, a new login): the windows go with it, the daemon waits,
    /// and the new Shell's extension connects by itself; popups work again.
    @Test func theDaemonFollowsGnomeShellRestarting() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, _) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            try f.shell.restartShell()
            try f.eventually("the popup to close with the Shell's windows", timeout: .seconds(10)) { try f.openPopups().isEmpty }
            try f.eventually("the new Shell's extension to connect", timeout: .seconds(10)) {
                f.log.components(separatedBy: "GNOME Shell's extension connected").count == 3
            }
            let again = try WaylandGTKProgram(f, name: "again", appId: Self.popupAppId)
            defer { again.stop() }
            #expect(try events.await(.opened)["popup"]?.stringValue == "gtk")
            try f.click(Self.desktop.x, Self.desktop.y)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("gtk")]))
            try again.awaitLine("again deleted", "GNOME Shell to ask the new popup to close")
        }
    }

    /// Escape, with a popup that wants it open: dismissed, and the focused window never sees it.
    @Test func escapeDismissesAndIsTakenFromTheFocusedWindow() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, rect) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            // Focus the popup with a click inside it.
            try f.click(rect.x + 20, rect.y + rect.height - 20)
            _ = try popup.awaitLine(startingWith: "press popup", "the click to focus the popup")
            try f.shell.key(0xff1b)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("gtk")]))
            try popup.awaitLine("popup deleted", "GNOME Shell to ask the popup to close")
            #expect(!popup.printed.contains("key popup Escape"), "the popup got the Escape key")
        }
    }

    /// Installed but disabled: the daemon says what to run and waits; enabled, it connects
    /// and popups work; disabled again, the layer goes and the daemon waits again.
    @Test func aDisabledExtensionIsWaitedForAndFollowed() throws {
        try withGnomeDaemon(config: Self.config, extensionState: "disabled") { f in
            #expect(f.log.contains("gnome-extensions enable \(HeadlessGnomeShell.uuid)"), "\(f.log)")
            let waiting = try f.ctl(["status"]).stdout
            #expect(waiting.contains("is not connected"), "\(waiting)")
            let enable = try f.shell.extensions(["enable", HeadlessGnomeShell.uuid])
            #expect(enable.status == 0, "\(enable.output)")
            try f.eventually("the extension to connect") { try f.status()["gnome"]?["connected"]?.boolValue == true }
            let events = try f.monitor()
            let (popup, other, _) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            #expect(try f.shell.hasLayer())
            let disable = try f.shell.extensions(["disable", HeadlessGnomeShell.uuid])
            #expect(disable.status == 0, "\(disable.output)")
            try f.eventually("the daemon to see the extension go") { try f.status()["gnome"]?["connected"]?.boolValue == false }
            #expect(try !f.shell.hasLayer())
        }
    }

    /// What the extension says cannot crash the daemon: GNOME Shell's own connection (the
    /// only peer whose hello is taken) says hello and then what no extension would (places far
    /// off any screen, a button past 255, a window that is its own parent, text that is not
    /// JSON, an id told twice), from JavaScript run in the Shell; every call is answered, and
    /// the daemon goes on.
    @Test func nothingTheShellsPeerSaysCrashesTheDaemon() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let big = #"{"id":1,"x":9000000000000000000,"y":-9000000000000000000,"width":9223372036854775807,"height":1e300,"pid":-5,"wmClass":"\#(Self.popupAppId)","parent":1,"visible":true}"#
            let messages = [
                #"{"ev":"hello","protocol":1,"shell":"43.9","windows":["# + big + #"],"stacking":[1,1,99],"monitors":[{"name":"M","x":0,"y":0,"width":99999999999,"height":-3}]}"#,
                #"{"ev":"window","window":"# + big.replacing(#""parent":1"#, with: #""parent":2"#) + "}",
                #"{"ev":"window","window":{"id":2,"x":0,"y":0,"width":10,"height":10,"parent":1}}"#,
                #"{"ev":"press","id":7,"x":1e300,"y":-1e300,"button":1,"time":0}"#,
                #"{"ev":"press","id":7,"x":5,"y":5,"button":1,"time":0}"#,
                #"{"ev":"press","id":8,"x":5,"y":5,"button":99999}"#,
                #"{"ev":"release","id":7,"x":1e300,"y":5,"button":1}"#,
                #"{"ev":"gone","id":-1}"#, #"{"ev":"stacking","ids":"no"}"#, #"{"ev":"nonsense"}"#, "not json", "[]", "",
            ]
            // In single quotes: Eval's argument goes through gdbus, which takes a backslash as its own.
            try f.shell.eval("""
                const { Gio, GLib } = imports.gi, messages = [\(messages.map { "'\($0)'" }.joined(separator: ", "))];
                const peer = globalThis.clickawayPeer = { replies: [], done: false };
                const next = i => {
                    if (i === messages.length) {
                        peer.done = true;
                        return;
                    }
                    Gio.DBus.session.call('io.github.clickaway', '/io/github/clickaway/Gnome', 'io.github.clickaway.Gnome1', 'Event',
                        new GLib.Variant('(s)', [messages[i]]), new GLib.VariantType('(s)'), Gio.DBusCallFlags.NONE, 5000, null, (c, result) => {
                            try {
                                c.call_finish(result);
                                peer.replies.push('answered');
                            } catch (e) {
                                peer.replies.push(e.message);
                            }
                            next(i + 1);
                        });
                };
                next(0);
                true
                """)
            try eventually("every call to be answered", timeout: .seconds(30), every: .milliseconds(50)) {
                try f.shell.eval("globalThis.clickawayPeer.done") == "true"
            }
            let replies = try JSON.parse(try f.shell.eval("globalThis.clickawayPeer.replies"))
            #expect(replies == .array(messages.map { _ in .string("answered") }), "\(replies)")
            // Not a sync: the windows the daemon has now are nonsense.
            #expect(try f.report().backend == "gnome")
            #expect(f.daemon?.isRunning == true, "\(f.log)")
        }
    }

    /// A program of the same session that says hello (here gdbus) is not GNOME Shell: it is
    /// refused with an error and named in the daemon's log, its Wait is refused too, and it
    /// takes nothing over: the extension stays connected, the popup open (a hello with no
    /// windows taken would close it), and an outside click still dismisses it.
    @Test func aHelloFromAPeerThatIsNotGnomeShellIsRefused() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, _) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            func call(_ method: String, _ arguments: [String]) throws -> ProgramRun {
                try ProgramRun.run(["gdbus", "call", "--session", "--dest", "io.github.clickaway", "--object-path", "/io/github/clickaway/Gnome",
                                    "--method", "io.github.clickaway.Gnome1." + method] + arguments,
                                   environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": f.shell.sessionBus], limit: .seconds(10))
            }
            let hello = try call("Event", [#"{"ev":"hello","protocol":1,"shell":"43.9","windows":[],"stacking":[],"monitors":[]}"#])
            #expect(hello.status != 0 && hello.output.contains("io.github.clickaway.Error.NotGnomeShell"), "\(hello.output)")
            let wait = try call("Wait", [])
            #expect(wait.status != 0 && wait.output.contains("io.github.clickaway.Error.NotConnected"), "\(wait.output)")
            #expect(f.log.contains("refused a hello from :1.") && f.log.contains("it is not GNOME Shell"), "\(f.log)")
            try f.sync()
            #expect(try f.status()["gnome"]?["connected"]?.boolValue == true)
            #expect(try f.openPopups() == ["gtk"])
            try Self.outsideClickDismissesAndIsSwallowed(f, events, popup, other)
        }
    }

    /// `clickawayctl show` on GNOME: the extension paints the picture on one actor above every
    /// window (the popup's outline, in its colour, where the Shell shows the popup), which
    /// takes no input and is no window: a click on the outline still reaches the popup and
    /// never the daemon, and a click on another window still dismisses the popup and reaches
    /// nothing.
    @Test func showDrawsAboveTheWindowsAndLeavesClicksAsTheyWere() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, rect) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            let roleWindows = try f.status()["gnome"]?["windows"]
            let shellWindows = try f.shell.eval("global.get_window_actors().length")
            let show = try f.ctl(["show", "--for", "60"])
            #expect(show.status == 0 && show.stdout.contains("drawing gtk on 1 output"), "\(show.output)")
            var drawn: JSON?
            try f.eventually("the extension to draw the picture") {
                drawn = try f.drawing()
                return drawn != nil
            }
            let drawing = try #require(drawn)
            #expect(drawing["reactive"] == .bool(false) && drawing["visible"] == .bool(true) && drawing["aboveWindows"] == .bool(true), "\(drawing)")
            // The popup's left edge: three pixels of its colour (the first popup's) over its whole height.
            let blue: UInt32 = 0x3070D0
            let edge = JSON.array([rect.x, rect.y, 3, rect.height].map { .int(Int64($0)) } + [.int(Int64(blue))])
            #expect(drawing["fills"]?.arrayValue?.contains(edge) == true, "\(drawing)")
            #expect(try f.colour(at: rect.x + 1, rect.y + rect.height / 2) == blue)
            #expect(try f.status()["gnome"]?["windows"] == roleWindows)
            #expect(try f.shell.eval("global.get_window_actors().length") == shellWindows)

            // On the drawn edge, inside the popup; then on the other window.
            try Self.insideClickReachesThePopupAlone(f, popup, rect.x + 1, rect.y + rect.height / 2)
            try Self.outsideClickDismissesAndIsSwallowed(f, events, popup, other)
        }
    }

    /// The drawing goes with `show --off`, with the extension disabled, and with the daemon;
    /// the extension enabled again while `show` draws gets the picture again.
    @Test func showsDrawingGoesWithShowOffTheExtensionAndTheDaemon() throws {
        try withGnomeDaemon(config: Self.config) { f in
            let events = try f.monitor()
            let (popup, other, _) = try Self.popupAndOther(f, events)
            defer { popup.stop(); other.stop() }
            try f.ctlOK(["show", "--for", "60"])
            try f.eventually("the extension to draw the picture") { try f.drawing() != nil }
            try f.ctlOK(["show", "--off"])
            try f.eventually("the drawing to go with show --off") { try f.drawing() == nil }

            try f.ctlOK(["show", "--for", "60"])
            try f.eventually("the extension to draw the picture again") { try f.drawing() != nil }
            #expect(try f.shell.extensions(["disable", HeadlessGnomeShell.uuid]).status == 0)
            try f.eventually("the daemon to see the extension go") { try f.status()["gnome"]?["connected"]?.boolValue == false }
            #expect(try f.drawing() == nil)
            #expect(try f.shell.extensions(["enable", HeadlessGnomeShell.uuid]).status == 0)
            try f.eventually("the extension, enabled again, to draw the picture") { try f.drawing() != nil }

            let daemon = try #require(f.daemon)
            #expect(daemon.signalAndWait(SIGKILL) != nil, "the daemon did not exit")
            try eventually("the drawing to go with the daemon", timeout: .seconds(5), every: .milliseconds(20)) { try f.drawing() == nil }
        }
    }

    /// No extension, one of another clickaway, or one made for another GNOME Shell: the
    /// daemon does not start, and says what to run.
    @Test(arguments: [
        ("missing", ["GNOME Shell has no extension clickaway@clickaway.github.io", "make install", "gnome-extensions enable"]),
        ("other-version", ["is version 999, this clickaway speaks version 1", "make install", "log out and in"]),
        ("out-of-date", ["is OUT OF DATE", "make install", "gnome-shell --version"]),
    ]) func anUnusableExtensionSaysWhatToRun(state: String, said: [String]) throws {
        try withGnomeDaemon(config: Self.config, extensionState: state, start: false) { f in
            #expect(throws: HarnessError.self) { try f.startDaemon() }
            #expect(f.daemon?.waitForExit(within: .seconds(5)) == 69, "\(f.log)")
            for words in said { #expect(f.log.contains(words), "\(f.log)") }
        }
    }
}
