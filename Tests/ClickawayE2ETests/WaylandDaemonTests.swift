import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayWayland
import Foundation
import ProcessSupport
import Testing
import WaylandHarness
import XTestHarness

/// The daemon under real headless compositors (sway and phoc on wlroots, KWin): the
/// overlay, rect popups opened by clickawayctl, sway windows matched by app_id (also when
/// they move or resize without an event), exact sub-pixel edges, touch (where it can be
/// injected: KWin), outputs that appear later. Clicks come from the compositor's injector
/// (a virtual pointer, KWin's fake input); a client below the overlay records what reaches it.
@Suite struct WaylandDaemonTests {
    static func rectConfig(outsideClick: String = "swallow", marker: String? = nil, output: String? = nil,
                           rect: String = "[100, 100, 300, 200]") -> String {
        let dismiss = marker.map { #"dismiss = { command = ["sh", "-c", "echo $CLICKAWAY_POPUP $CLICKAWAY_BUTTON $CLICKAWAY_X $CLICKAWAY_Y > \#($0)"] }"# }
        return """
            [defaults]
            grace_ms = 0
            outside_click = "\(outsideClick)"

            [[popup]]
            name = "panel"
            rect = \(rect)
            \(output.map { "output = \"\($0)\"" } ?? "")
            \(dismiss ?? "")
            """
    }

    static func waitForFile(_ path: String, _ f: WaylandDaemonFixture) throws -> String {
        var text = ""
        do {
            // A child process writes in its own time.
            try eventually("the dismiss command to write \(path)", timeout: .seconds(5), every: .milliseconds(20)) {
                text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                return text.hasSuffix("\n")
            }
        } catch {
            throw HarnessError("\(error)\n\(f.log)")
        }
        return text
    }

    static let all = CompositorKind.tested

    @Test(arguments: all)
    func outsideClickDismissesARectPopupSwallowsTheClickAndRunsItsCommand(_ kind: CompositorKind) throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-wl-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        try withWaylandDaemon(kind, config: Self.rectConfig(marker: marker)) { f in
            let status = try f.status()
            #expect(status["backend"]?.stringValue == "wayland")
            #expect(try f.ctl(["status"]).stdout.contains("replay:   through \(kind == .kwin ? "org_kde_kwin_fake_input" : "zwlr_virtual_pointer_v1")"))
            #expect(status["overlay"]?["replay"]?.stringValue == (kind == .kwin ? "org_kde_kwin_fake_input" : "zwlr_virtual_pointer_v1"))
            // Every compositor here offers tablets (pens); the overlay listens to them.
            #expect(status["overlay"]?["tablets"]?.boolValue == true)
            let events = try f.monitor()
            try f.ctlOK(["open", "panel"])
            #expect(try events.await(.opened)["rect"] == .array([100, 100, 300, 200].map { .int($0) }))
            #expect(try f.status()["overlay"]?["holes"]?.arrayValue?.isEmpty == false)

            try f.click(700, 500)
            #expect(try events.await(.dismissed)["click"]?.stringValue == "swallow")
            #expect(try f.openPopups().isEmpty)
            #expect(try f.below.clicks() == [], "the swallowed click reached the client below")
            #expect(try Self.waitForFile(marker, f) == "panel 1 700 500\n")

            // Nothing open: the overlay lets every click through.
            try f.click(700, 500)
            #expect(try f.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[700, 500]])
        }
    }

    /// The replayed click reaches the client below at the exact point it was made, to the
    /// 1/256 pixel where the compositor tells clients exact positions (KWin 5.27 rounds).
    @Test(arguments: all)
    func replayedOutsideClickReachesTheClientBelowAfterTheDismissal(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.rectConfig(outsideClick: "replay")) { f in
            try f.ctlOK(["open", "panel"])
            let point = Position(x: 700.5, y: 500.25)
            try f.click(at: point, button: PointerButton.right)
            #expect(try f.openPopups().isEmpty)
            let pixel = kind.sent(point)
            let received = try f.below.clicks()
            #expect(received == [
                RecordedClick(x: pixel[0], y: pixel[1], button: PointerButton.right, isPressed: true),
                RecordedClick(x: pixel[0], y: pixel[1], button: PointerButton.right, isPressed: false),
            ])
            if kind != .kwin { #expect(received.map(\.position) == [point, point]) }
            // The pinhole for the replay is closed again: with the popup open again, the same
            // point is caught.
            try f.ctlOK(["open", "panel"])
            try f.click(700, 500)
            #expect(try f.below.clicks().count == 4)
            #expect(try f.openPopups().isEmpty)
        }
    }

    @Test(arguments: all)
    func insideClickReachesWhatIsBelowAndDismissesNothing(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.rectConfig()) { f in
            try f.ctlOK(["open", "panel"])
            try f.click(150, 120)
            try f.click(399, 299)
            #expect(try f.openPopups() == ["panel"])
            #expect(try f.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 120], [399, 299]])
            // One pixel outside is outside.
            try f.click(400, 299)
            #expect(try f.openPopups().isEmpty)
            #expect(try f.below.clicks().count == 4)
        }
    }

    /// A fraction of a pixel outside a popup's edge is outside, on every side; a fraction
    /// inside is inside. On KWin, which sends whole pixels, this is the click 0.25 px left
    /// of the popup that came as x = 100 and was lost.
    @Test(arguments: all)
    func subPixelEdgesAreExact(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.rectConfig()) { f in
            let events = try f.monitor()
            try f.ctlOK(["open", "panel"])
            let inside = [Position(x: 100.25, y: 100.25), Position(x: 399.75, y: 299.75)]
            for p in inside { try f.click(at: p) }
            #expect(try f.openPopups() == ["panel"])
            #expect(try f.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == inside.map { kind.sent($0) })

            let outside = [Position(x: 99.75, y: 150.25), Position(x: 150.25, y: 99.75),
                           Position(x: 400.25, y: 150.25), Position(x: 150.25, y: 300.25)]
            for p in outside {
                try f.ctlOK(["open", "panel"])
                _ = try events.await(.opened)
                try f.click(at: p)
                let dismissed = try events.await(.dismissed)
                #expect([dismissed["x"]?.intValue, dismissed["y"]?.intValue] == [Int64(p.pixel.x), Int64(p.pixel.y)], "\(p)")
                #expect(dismissed["click"]?.stringValue == "swallow")
            }
            #expect(try f.below.clicks().count == 2 * inside.count, "a swallowed click reached the client below")
        }
    }

    /// A popup opens under a pointer that does not move (a keyboard shortcut opened it),
    /// and the next click comes without motion: it is outside, not the window's below.
    /// wlroots picks the surface under the pointer on motion only, so the daemon makes it
    /// pick again whenever the holes change, and after a replay, where the pinhole was.
    @Test(arguments: all)
    func aClickWithoutMotionAfterTheHolesChangedIsCaught(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.rectConfig()) { f in
            try f.click(700, 500)
            try f.ctlOK(["open", "panel"])
            try f.input.clickWithoutMoving()
            try f.sync()
            #expect(try f.openPopups().isEmpty, "the click without motion went past the overlay")
            #expect(try f.below.clicks().count == 2, "the swallowed click reached the client below")

            // Button 8 is not in `buttons`: it goes on through a pinhole, the popup stays, the
            // holes do not change. The pointer rests where the pinhole was, and the next
            // click there without motion is the overlay's again.
            try f.ctlOK(["open", "panel"])
            try f.click(700, 500, button: 0x113)
            try f.input.clickWithoutMoving()
            try f.sync()
            #expect(try f.openPopups().isEmpty, "the click without motion after a replay went past the overlay")
            #expect(try f.below.clicks().map(\.button) == [PointerButton.left, PointerButton.left, 0x113, 0x113])
        }
    }

    @Test(arguments: all)
    func buttonsThatCannotDismissGoOnToWhatIsBelow(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.rectConfig()) { f in
            try f.ctlOK(["open", "panel"])
            // Button 8 (BTN_SIDE) is not in the default buttons; 0x116 (BTN_BACK) has no X11 number.
            for code: UInt32 in [0x113, 0x116] {
                try f.click(700, 500, button: code)
            }
            #expect(try f.openPopups() == ["panel"])
            #expect(try f.below.clicks() == [0x113, 0x116].flatMap { code in
                [RecordedClick(x: 700, y: 500, button: code, isPressed: true), RecordedClick(x: 700, y: 500, button: code, isPressed: false)]
            })
        }
    }

    /// A tap outside the popup dismisses it as button 1 would: swallowed, or replayed as a
    /// tap; a tap inside reaches what is below. Only KWin can inject touch here.
    @Test(arguments: ["swallow", "replay"])
    func touchOutsideDismissesAndTouchInsidePasses(_ outsideClick: String) throws {
        try withWaylandDaemon(.kwin, config: Self.rectConfig(outsideClick: outsideClick)) { f in
            try f.below.waitForTouch()
            #expect(try f.status()["overlay"]?["touch"]?.boolValue == true)
            let events = try f.monitor()
            try f.ctlOK(["open", "panel"])
            try f.tap(at: Position(x: 150, y: 120))
            #expect(try f.openPopups() == ["panel"])
            #expect(try f.below.clicks() == [true, false].map {
                RecordedClick(x: 150, y: 120, button: PointerButton.left, isPressed: $0, isTouch: true)
            })

            try f.tap(at: Position(x: 700, y: 500))
            let dismissed = try events.await(.dismissed)
            #expect(dismissed["button"]?.intValue == 1)
            #expect(dismissed["click"]?.stringValue == outsideClick)
            #expect(try f.openPopups().isEmpty)
            let replayed = outsideClick == "replay"
                ? [true, false].map { RecordedClick(x: 700, y: 500, button: PointerButton.left, isPressed: $0, isTouch: true) } : []
            #expect(try f.below.clicks().dropFirst(2) == replayed[...])
        }
    }

    /// On a scaled output the replay lands on the exact point, not on a whole logical pixel
    /// (up to 2 physical pixels off at scale 2).
    @Test func replayOnAScaledOutputIsExact() throws {
        let compositor = try HeadlessCompositor(.sway, scale: 2)
        defer { compositor.stop() }
        let f = try WaylandDaemonFixture(config: Self.rectConfig(outsideClick: "replay"), on: TestDesk(compositor))
        defer { f.stopDaemon() }
        try f.startDaemon()
        try f.ctlOK(["open", "panel"])
        let point = Position(x: 640.5, y: 360.5)
        try f.click(at: point)
        #expect(try f.openPopups().isEmpty)
        #expect(try f.below.clicks().map(\.position) == [point, point])
    }

    @Test func rectPopupOnAnOutputAddedAtRunTime() throws {
        let config = Self.rectConfig(output: "HEADLESS-2", rect: "[20, 20, 100, 100]")
        try withWaylandDaemon(.sway, config: config, privateCompositor: true) { f in
            let refused = try f.ctl(["open", "panel"])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("\"HEADLESS-2\", which is not connected"), "\(refused.stderr)")

            try f.compositor.createOutput()
            try f.eventually("the overlay to cover HEADLESS-2") {
                try f.status()["overlay"]?["outputs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["HEADLESS-1", "HEADLESS-2"]
            }
            try f.ctlOK(["open", "panel"])
            // HEADLESS-2 starts at x = 1280: the popup is at (1300, 20) on the layout.
            #expect(try f.status()["open"]?.arrayValue?.first?["rect"] == .array([1300, 20, 100, 100].map { .int($0) }))
            try f.click(1350, 50)
            #expect(try f.openPopups() == ["panel"])
            try f.click(1700, 400)
            #expect(try f.openPopups().isEmpty)
            #expect(try f.below.clicks() == [], "clicks on HEADLESS-2 reached the client on HEADLESS-1")
        }
    }

    static let menuConfig = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "menu"
        window = { app_id = "clickaway-test-menu" }
        """

    /// A floating test window matched by app_id, at (100, 100) 300x200, seen by the daemon.
    static func openMenu(_ f: WaylandDaemonFixture, _ events: EventStream) throws -> TestToplevel {
        let window = try TestToplevel(display: f.compositor.waylandSocket, appId: "clickaway-test-menu", title: "menu",
                                      width: 300, height: 200)
        // It floats from the start (the harness's sway config), at the size it asks for.
        try f.compositor.command(#"[app_id="clickaway-test-menu"] move position 100 100"#)
        try f.eventually("the menu window to be open at (100, 100) 300x200") {
            try window.dispatch()
            return try f.status()["open"]?.arrayValue?.first?["rect"] == .array([100, 100, 300, 200].map { .int($0) })
        }
        let opened = try events.await(.opened)
        #expect(opened["popup"]?.stringValue == "menu")
        return window
    }

    @Test func swayWindowMatchedByAppIdIsClosedByAnOutsideClick() throws {
        try withWaylandDaemon(.sway, config: Self.menuConfig) { f in
            let events = try f.monitor()
            let window = try Self.openMenu(f, events)
            #expect(try f.status()["open"]?.arrayValue?.first?["window"]?.stringValue?.allSatisfy(\.isNumber) == true)

            // Inside: the window's own click, nothing dismissed.
            try f.click(200, 150)
            #expect(try f.openPopups() == ["menu"])
            #expect(try window.presses().filter(\.isPressed).count == 1)
            #expect(!window.closeRequested)

            try f.click(800, 600)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("menu")]))
            try window.waitForCloseRequest()
            try f.eventually("the closed window to be gone from the daemon's view") {
                try f.status()["sway"]?["windows"]?.intValue == 0
            }
            #expect(try events.await(.closed)["popup"]?.stringValue == "menu")
            // The inside click went to the window, the outside one nowhere.
            #expect(try f.below.clicks() == [], "a click reached the background")
        }
    }

    /// A window of the popup's process with its app_id that was there before the popup opened
    /// (footclient's other windows, a program's bar) is a bystander: a click on it dismisses
    /// the popup. One opened after the popup is in its family.
    @Test func aWindowOfThePopupsProcessOpenedBeforeItIsOutside() throws {
        let config = """
            [defaults]
            grace_ms = 0

            [[popup]]
            name = "menu"
            window = { app_id = "clickaway-test-bystander", title = "menu" }
            """
        try withWaylandDaemon(.sway, config: config) { f in
            let events = try f.monitor()
            let bar = try TestToplevel(display: f.compositor.waylandSocket, appId: "clickaway-test-bystander", title: "bar-before",
                                       width: 200, height: 150)
            try f.compositor.command(#"[title="bar-before"] move position 1000 450"#)
            // An app_id of its own: other tests' popups on the shared sway match "clickaway-test-menu".
            let window = try TestToplevel(display: f.compositor.waylandSocket, appId: "clickaway-test-bystander", title: "menu",
                                          width: 300, height: 200)
            try f.compositor.command(#"[app_id="clickaway-test-bystander" title="^menu$"] move position 100 100"#)
            #expect(try events.await(.opened)["popup"]?.stringValue == "menu")
            let dialog = try TestToplevel(display: f.compositor.waylandSocket, appId: "clickaway-test-bystander", title: "dialog-after",
                                          width: 200, height: 150)
            try f.compositor.command(#"[title="dialog-after"] move position 1000 250"#)
            try f.eventually("the dialog, and not the bar, to join the menu's family") {
                try window.dispatch()
                try dialog.dispatch()
                try bar.dispatch()
                let open = try f.status()["open"]?.arrayValue ?? []
                guard open.count == 1, let members = open.first?["members"]?.arrayValue, members.count == 1,
                      let member = members.first?.stringValue else { return false }
                return open.first?["ties"]?[member]?.stringValue == "same-process"
            }
            // Away from where the other tests on the shared sway click: these windows go when the test ends.
            try f.click(1100, 525)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("menu")]), "a click on the bar did not dismiss")
            try window.waitForCloseRequest()
        }
    }

    /// A second window of the popup's process with its app_id (a GTK program's file dialog:
    /// sway's tree shows no parent link) belongs to the popup: no second popup, a click on it
    /// is inside.
    @Test func aSecondWindowOfThePopupsProcessIsInsideIt() throws {
        try withWaylandDaemon(.sway, config: Self.menuConfig) { f in
            let events = try f.monitor()
            let window = try Self.openMenu(f, events)
            let dialog = try TestToplevel(display: f.compositor.waylandSocket, appId: "clickaway-test-menu", title: "dialog",
                                          width: 200, height: 150)
            try f.compositor.command(#"[title="dialog"] move position 600 100"#)
            try f.eventually("the dialog to join the menu's family") {
                try window.dispatch()
                try dialog.dispatch()
                let open = try f.status()["open"]?.arrayValue ?? []
                return open.count == 1 && open.first?["members"]?.arrayValue?.count == 1
            }
            try f.click(700, 175)
            try dialog.dispatch()
            #expect(try dialog.presses().filter(\.isPressed).count == 1, "the click on the dialog did not reach it")
            #expect(try f.openPopups() == ["menu"], "a click on the popup's dialog dismissed it")
            #expect(!window.closeRequested)
            try f.click(800, 600)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("menu")]))
            try window.waitForCloseRequest()
        }
    }

    /// sway 1.7 sends no event for `move absolute position`: a click in the window's new
    /// place is still the window's (sway's tree is read before deciding), and once the
    /// daemon's poll has seen the move, its old place is outside.
    @Test func swayWindowMovedWithoutAnEventStaysTrue() throws {
        try withWaylandDaemon(.sway, config: Self.menuConfig) { f in
            let events = try f.monitor()
            let window = try Self.openMenu(f, events)
            try f.compositor.command(#"[app_id="clickaway-test-menu"] move absolute position 600 300"#)
            try window.dispatch()
            try f.click(650, 350)
            #expect(try f.openPopups() == ["menu"], "a click inside the moved window dismissed it\n\(f.log)")
            #expect(try window.presses().map(\.isPressed) == [true, false], "the moved window did not get its click\n\(f.log)")
            try f.eventually("the daemon to see the window at (600, 300) without an event") {
                try f.status()["open"]?.arrayValue?.first?["rect"] == .array([600, 300, 300, 200].map { .int($0) })
            }
            try f.click(150, 150)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("menu")]))
            try window.waitForCloseRequest()
            #expect(try f.below.clicks() == [], "the click on the old place reached the background")
        }
    }

    /// Likewise for `resize set`, which keeps a floating window's centre: growing, then
    /// shrinking.
    @Test func swayWindowResizedWithoutAnEventStaysTrue() throws {
        try withWaylandDaemon(.sway, config: Self.menuConfig) { f in
            let events = try f.monitor()
            let window = try Self.openMenu(f, events)
            // Centred on (250, 200): [0, 0, 500, 400].
            try f.compositor.command(#"[app_id="clickaway-test-menu"] resize set 500 400"#)
            try window.dispatch()
            try f.click(450, 350)
            #expect(try f.openPopups() == ["menu"], "a click inside the grown window dismissed it\n\(f.log)")
            #expect(try window.presses().map(\.isPressed) == [true, false], "the grown window did not get its click\n\(f.log)")

            // [150, 150, 200, 100].
            try f.compositor.command(#"[app_id="clickaway-test-menu"] resize set 200 100"#)
            try f.eventually("the daemon to see the window shrink to 200x100 without an event") {
                try window.dispatch()
                return try f.status()["open"]?.arrayValue?.first?["rect"] == .array([150, 150, 200, 100].map { .int($0) })
            }
            try f.click(120, 120)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("menu")]))
            try window.waitForCloseRequest()
            #expect(try f.below.clicks() == [], "the click where the window was reached the background")
        }
    }

    /// What a desktop does to let clickaway replay on KWin: a .desktop file naming its
    /// executable with X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input, KWin's permission
    /// check kept. Without one, `replay` is said to swallow.
    @Test(arguments: [true, false])
    func kwinOffersFakeInputToProgramsNamedInADesktopFile(_ named: Bool) throws {
        let daemon = DaemonRun.buildDirectory.appendingPathComponent("clickaway").resolvingSymlinksInPath().path
        let tests = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let compositor = try HeadlessCompositor(.kwin, fakeInputFor: named ? [daemon, tests] : [])
        defer { compositor.stop() }
        if named {
            let f = try WaylandDaemonFixture(config: Self.rectConfig(outsideClick: "replay"), on: TestDesk(compositor))
            defer { f.stopDaemon() }
            try f.startDaemon()
            #expect(try f.status()["overlay"]?["replay"]?.stringValue == "org_kde_kwin_fake_input")
            try f.ctlOK(["open", "panel"])
            try f.click(700, 500)
            #expect(try f.openPopups().isEmpty)
            #expect(try f.below.clicks().map(\.isPressed) == [true, false], "the replayed click did not reach the client below")
        } else {
            // Nothing may inject here, the tests included: the daemon alone, and its status.
            let f = try UntrustedKWinRun(config: Self.rectConfig(outsideClick: "replay"), compositor: compositor)
            defer { f.stopDaemon() }
            try f.startDaemon()
            let status = try f.status()
            #expect(status["overlay"]?["replay"]?.isNull == true)
            let unavailable = status["unavailable"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(unavailable.contains { $0.hasPrefix("popup \"panel\" has outside_click = \"replay\", but the compositor offers neither") },
                    "\(unavailable)")
            #expect(try f.ctl(["status"]).stdout.contains("replay:   not possible here"))
        }
    }

    @Test(arguments: all)
    func losingTheCompositorExits1WithOneSentence(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.rectConfig(), privateCompositor: true) { f in
            try f.ctlOK(["open", "panel"])
            f.compositor.stop()
            let status = try #require(f.daemon?.signalAndWait(0, within: .seconds(10)), "clickaway kept running without its compositor")
            #expect(status == 1)
            #expect(f.log.contains("lost the connection to the display \(f.compositor.waylandSocket)"), "\(f.log)")
        }
    }

    @Test func startingWithoutLayerShellOrCompositorSaysWhy() throws {
        try withWaylandDaemon(.sway, config: Self.rectConfig(), start: false) { f in
            let run = try ProgramRun.run(DaemonRun.buildDirectory.appendingPathComponent("clickaway"),
                                         ["--config", f.configPath, "--backend", "wayland"],
                                         environment: f.environment.merging(["WAYLAND_DISPLAY": "/nonexistent/wayland-9"]) { $1 })
            #expect(run.status == 69)
            #expect(run.stderr == "clickaway: cannot connect to Wayland display \"/nonexistent/wayland-9\": No such file or directory\n")
            var unset = f.environment
            unset["WAYLAND_DISPLAY"] = nil
            let missing = try ProgramRun.run(DaemonRun.buildDirectory.appendingPathComponent("clickaway"),
                                             ["--config", f.configPath, "--backend", "wayland"], environment: unset)
            #expect(missing.status == 69)
            #expect(missing.stderr.hasPrefix("clickaway: backend \"wayland\" needs WAYLAND_DISPLAY, which is not set"), "\(missing.stderr)")
        }
    }

    /// Without sway's IPC (sway without $SWAYSOCK, phoc, KWin) window popups never open:
    /// said at load; rect popups work.
    @Test(arguments: all)
    func sourcesThisCompositorCannotProvideAreSaidAtLoad(_ kind: CompositorKind) throws {
        let config = """
            [[popup]]
            name = "menu"
            window = { app_id = "some-menu" }
            escape = true

            [[popup]]
            name = "panel"
            rect = [0, 0, 10, 10]
            """
        try withWaylandDaemon(kind, config: config, swayIPC: false) { f in
            let unavailable = try f.status()["unavailable"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(unavailable.count == 2, "\(unavailable)")
            #expect(unavailable.contains { $0.hasPrefix("popup \"menu\" matches windows") && $0.contains("neither of which is here") })
            #expect(unavailable.contains { $0.hasPrefix("popup \"menu\" has escape = true") })
            #expect(f.log.contains("popup \"menu\" matches windows"))
            #expect(try f.status()["sway"]?.isNull == true)
            // Rect popups still work.
            try f.ctlOK(["open", "panel"])
            #expect(try f.openPopups() == ["panel"])
        }
    }
}
