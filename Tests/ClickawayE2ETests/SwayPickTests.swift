import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import ClickawayWayland
import WaylandHarness

/// `clickawayctl pick` on sway: the daemon's overlay takes the click, sway's tree names the
/// window, and the printed block loads and matches it by app_id. The click reaches neither
/// the window nor what is below, and dismisses nothing. A sway of its own: the pick takes
/// every click on it.
@Suite("clickawayctl pick on sway", .enabled(if: CompositorKind.tested.contains(.sway)))
struct SwayPickTests {
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "panel"
        rect = [20, 20, 50, 50]
        """

    /// Runs pick as a user on the sway session does, and waits until the overlay takes
    /// every click (no hole at all) at the compositor.
    static func startPick(_ f: WaylandDaemonFixture, _ arguments: [String] = []) throws -> PickProcess {
        var environment = f.environment
        environment["PATH"] = "/usr/bin:/bin"
        let run = try PickProcess(["pick", "--timeout", "20"] + arguments, environment: environment)
        try run.readUntil("pick to ask for a click", timeout: .seconds(10)) { run.stderr.contains("click the window to describe") }
        try f.eventually("the overlay to take every click for the pick") {
            try f.status()["overlay"]?["holes"] == .array([])
        }
        // The compositor has the region once the daemon's sync, sent after it, comes back.
        try f.sync()
        return run
    }

    @Test func picksANativeWindowByItsAppId() throws {
        try withWaylandDaemon(.sway, config: Self.config, privateCompositor: true) { f in
            let window = try TestToplevel(display: f.compositor.waylandSocket, appId: "clickaway-test-pickme", title: "pick me",
                                          width: 240, height: 160)
            try f.compositor.command(#"[app_id="clickaway-test-pickme"] move position 520 300"#)
            try f.eventually("sway to place the window at (520, 300)") {
                try window.dispatch()
                return try Self.rect(in: f.compositor.tree(), appId: "clickaway-test-pickme") == Rect(x: 520, y: 300, width: 240, height: 160)
            }
            try f.ctlOK(["open", "panel"])

            let run = try Self.startPick(f)
            try f.click(600, 380)
            let r = try run.finish(timeout: .seconds(15))
            #expect(r.status == 0, "\(r.stderr)")
            let loaded = try ConfigLoader.load([ConfigFile(path: "picked.toml", text: r.stdout)])
            let popup = try #require(loaded.model.popups.first, "\(r.stdout)")
            guard case .window(let match) = popup.source else { throw HarnessError("not a window popup: \(r.stdout)") }
            #expect(match == WindowMatch(appId: "clickaway-test-pickme"), "\(r.stdout)")
            #expect(popup.name == "clickaway-test-pickme" && popup.dismiss == .close, "\(r.stdout)")
            #expect(r.stdout.contains("at 520,300 240x160, title \"pick me\""), "\(r.stdout)")

            try window.dispatch()
            #expect(try window.presses().isEmpty, "the pick's click reached the window")
            #expect(try f.below.clicks().isEmpty, "the pick's click reached the desktop below")
            #expect(try f.openPopups() == ["panel"], "the pick's click dismissed a popup")
            // The overlay has the popup's holes again: a click outside dismisses.
            #expect(try f.status()["overlay"]?["holes"] != .array([]))
            try f.click(900, 600)
            #expect(try f.openPopups().isEmpty)
        }
    }

    @Test func anotherButtonCancelsAndTheDesktopIsNoWindow() throws {
        try withWaylandDaemon(.sway, config: Self.config, privateCompositor: true) { f in
            let cancelled = try Self.startPick(f)
            try f.click(700, 500, button: PointerButton.right)
            let c = try cancelled.finish(timeout: .seconds(15))
            #expect(c.status == 1 && c.stdout.isEmpty)
            #expect(c.stderr.contains("cancelled with another button than the left one; nothing picked"), "\(c.stderr)")

            let desktop = try Self.startPick(f, ["--json"])
            try f.click(1200, 700)
            let d = try desktop.finish(timeout: .seconds(15))
            #expect(d.status == 1 && d.stdout.isEmpty)
            #expect(d.stderr.contains("was on no window sway shows; nothing picked"), "\(d.stderr)")
            #expect(try f.below.clicks().isEmpty, "a pick's click reached the desktop below")
        }
    }

    /// A pick interrupted before its click (Ctrl-C on clickawayctl) ends with its connection:
    /// the overlay has the popup's holes again, and the next click is decided as usual, not
    /// taken for the pick until its timeout.
    @Test func anInterruptedPickGivesTheClicksBack() throws {
        try withWaylandDaemon(.sway, config: Self.config, privateCompositor: true) { f in
            try f.ctlOK(["open", "panel"])
            let run = try Self.startPick(f)
            try run.interrupt(timeout: .seconds(10))
            try f.eventually("the overlay to have the popup's holes again") {
                try f.status()["overlay"]?["holes"] != .array([])
            }
            try f.click(900, 600)
            #expect(try f.openPopups().isEmpty, "the click after an interrupted pick did not dismiss the popup")
        }
    }

    static func rect(in node: JSON, appId: String) -> Rect? {
        if node["app_id"]?.stringValue == appId, let r = node["rect"] {
            return Rect(json: .array(["x", "y", "width", "height"].map { r[$0] ?? .null }))
        }
        for child in (node["nodes"]?.arrayValue ?? []) + (node["floating_nodes"]?.arrayValue ?? []) {
            if let found = rect(in: child, appId: appId) { return found }
        }
        return nil
    }
}
