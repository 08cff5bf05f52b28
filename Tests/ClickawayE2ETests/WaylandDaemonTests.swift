import ClickawayControl
import ClickawayCore
import ClickawayWayland
import Foundation
import Testing
import WaylandHarness
import XTestHarness

/// The daemon under a real headless sway: the overlay, rect popups opened by clickawayctl,
/// sway windows matched by app_id, outputs that appear later. Clicks come from a virtual
/// pointer; a client below the overlay records what reaches it.
@Suite(.serialized) struct WaylandDaemonTests {
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
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return text }
            guard ContinuousClock.now < deadline else { throw HarnessError("the dismiss command did not write \(path) within 5 s\n\(f.log)") }
            Thread.sleep(forTimeInterval: 0.02)  // a child process in its own time
        }
    }

    @Test func outsideClickDismissesARectPopupSwallowsTheClickAndRunsItsCommand() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-wl-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let f = try WaylandDaemonFixture(config: Self.rectConfig(marker: marker))
        try f.startDaemon()
        #expect(try f.status()["backend"]?.stringValue == "wayland")
        let events = try f.monitor()
        try f.ctlOK(["open", "panel"])
        #expect(try events.await("opened")["rect"] == .array([100, 100, 300, 200].map { .int($0) }))
        #expect(try f.status()["overlay"]?["holes"]?.arrayValue?.isEmpty == false)

        try f.click(700, 500)
        #expect(try events.await("dismissed")["click"]?.stringValue == "swallow")
        #expect(try f.openPopups().isEmpty)
        #expect(try f.below.clicks() == [], "the swallowed click reached the client below")
        #expect(try Self.waitForFile(marker, f) == "panel 1 700 500\n")

        // Nothing open: the overlay lets every click through.
        try f.click(700, 500)
        #expect(try f.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[700, 500]])
    }

    @Test func replayedOutsideClickReachesTheClientBelowAfterTheDismissal() throws {
        let f = try WaylandDaemonFixture(config: Self.rectConfig(outsideClick: "replay"))
        try f.startDaemon()
        try f.ctlOK(["open", "panel"])
        try f.click(700, 500, button: PointerButton.right)
        #expect(try f.openPopups().isEmpty)
        #expect(try f.below.clicks() == [
            RecordedClick(x: 700, y: 500, button: PointerButton.right, isPressed: true),
            RecordedClick(x: 700, y: 500, button: PointerButton.right, isPressed: false),
        ])
        // The pinhole for the replay is closed again: with the popup open again, the same
        // point is caught.
        try f.ctlOK(["open", "panel"])
        try f.click(700, 500)
        #expect(try f.below.clicks().count == 4)
        #expect(try f.openPopups().isEmpty)
    }

    @Test func insideClickReachesWhatIsBelowAndDismissesNothing() throws {
        let f = try WaylandDaemonFixture(config: Self.rectConfig())
        try f.startDaemon()
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

    @Test func buttonsThatCannotDismissGoOnToWhatIsBelow() throws {
        let f = try WaylandDaemonFixture(config: Self.rectConfig())
        try f.startDaemon()
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

    @Test func rectPopupOnAnOutputAddedAtRunTime() throws {
        let f = try WaylandDaemonFixture(config: Self.rectConfig(output: "HEADLESS-2", rect: "[20, 20, 100, 100]"))
        try f.startDaemon()
        let refused = try f.ctl(["open", "panel"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\"HEADLESS-2\", which is not connected"), "\(refused.stderr)")

        try f.sway.createOutput()
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

    @Test func swayWindowMatchedByAppIdIsClosedByAnOutsideClick() throws {
        let config = """
            [defaults]
            grace_ms = 0

            [[popup]]
            name = "menu"
            window = { app_id = "clickaway-test-menu" }
            """
        let f = try WaylandDaemonFixture(config: config)
        try f.startDaemon()
        let events = try f.monitor()
        let window = try TestToplevel(display: f.sway.waylandSocket, appId: "clickaway-test-menu", title: "menu",
                                      width: 300, height: 200)
        try f.sway.command(#"[app_id="clickaway-test-menu"] floating enable, move position 100 100"#)
        let expected = JSON.array([100, 100, 300, 200].map { .int($0) })
        try f.eventually("the menu window to be open at (100, 100) 300x200") {
            try f.status()["open"]?.arrayValue?.first?["rect"] == expected
        }
        let opened = try events.await("opened")
        #expect(opened["popup"]?.stringValue == "menu")
        #expect(opened["window"]?.stringValue?.allSatisfy(\.isNumber) == true, "sway's con_id: \(opened.text)")

        // Inside: the window's own click, nothing dismissed.
        try f.click(200, 150)
        #expect(try f.openPopups() == ["menu"])
        try window.dispatch()
        #expect(!window.closeRequested)

        try f.click(800, 600)
        #expect(try events.await("dismissed")["popups"] == .array([.string("menu")]))
        try window.waitForCloseRequest()
        try f.eventually("the closed window to be gone from the daemon's view") {
            try f.status()["sway"]?["windows"]?.intValue == 0
        }
        #expect(try events.await("closed")["popup"]?.stringValue == "menu")
        // The inside click went to the window, the outside one nowhere.
        #expect(try f.below.clicks() == [], "a click reached the background")
    }

    @Test func losingTheCompositorExits1WithOneSentence() throws {
        let f = try WaylandDaemonFixture(config: Self.rectConfig())
        try f.startDaemon()
        try f.ctlOK(["open", "panel"])
        f.sway.stop()
        let status = try #require(f.daemon?.signalAndWait(0, within: .seconds(10)), "clickaway kept running without its compositor")
        #expect(status == 1)
        #expect(f.log.contains("lost the connection to the display \(f.sway.waylandSocket)"), "\(f.log)")
    }

    @Test func startingWithoutLayerShellOrCompositorSaysWhy() throws {
        let f = try WaylandDaemonFixture(config: Self.rectConfig())
        let run = try ProgramRun.run(DaemonRun.buildDirectory.appendingPathComponent("clickaway"),
                                     ["--config", f.configPath, "--backend", "wayland"],
                                     environment: f.environment.merging(["WAYLAND_DISPLAY": "/nonexistent/wayland-9"]) { $1 })
        #expect(run.status == 1)
        #expect(run.stderr == "clickaway: cannot connect to Wayland display \"/nonexistent/wayland-9\": No such file or directory\n")
        var unset = f.environment
        unset["WAYLAND_DISPLAY"] = nil
        let missing = try ProgramRun.run(DaemonRun.buildDirectory.appendingPathComponent("clickaway"),
                                         ["--config", f.configPath, "--backend", "wayland"], environment: unset)
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("clickaway: backend \"wayland\" needs WAYLAND_DISPLAY, which is not set"), "\(missing.stderr)")
    }

    @Test func sourcesThisCompositorCannotProvideAreSaidAtLoad() throws {
        let config = """
            [[popup]]
            name = "menu"
            window = { app_id = "some-menu" }
            escape = true

            [[popup]]
            name = "panel"
            rect = [0, 0, 10, 10]
            """
        let f = try WaylandDaemonFixture(config: config, swayIPC: false)
        try f.startDaemon()
        let unavailable = try f.status()["unavailable"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(unavailable.count == 2, "\(unavailable)")
        #expect(unavailable.contains { $0.hasPrefix("popup \"menu\" matches windows") && $0.contains("$SWAYSOCK is not set") })
        #expect(unavailable.contains { $0.hasPrefix("popup \"menu\" has escape = true") })
        #expect(f.log.contains("popup \"menu\" matches windows"))
        #expect(try f.status()["sway"]?.isNull == true)
        // Rect popups still work.
        try f.ctlOK(["open", "panel"])
        #expect(try f.openPopups() == ["panel"])
    }
}
