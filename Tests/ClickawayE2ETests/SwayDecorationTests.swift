import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import WaylandHarness

/// A sway window popup with sway's default decorations (`default_border normal`, and the
/// harness's `none` undone for floating windows too: a title
/// bar and borders), on a sway of its own: the title bar and the borders are the popup's,
/// as a window's frame is on X11.
@Suite("sway window decorations", .enabled(if: CompositorKind.tested.contains(.sway)))
struct SwayDecorationTests {
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "titled"
        window = { app_id = "clickaway-test-titled" }
        """

    @Test func aClickOnThePopupsTitleBarKeepsIt() throws {
        let compositor = try HeadlessCompositor(.sway, swayConfig: ["default_border normal", "default_floating_border normal", #"for_window [app_id="^clickaway-test-titled$"] border normal"#])
        defer { compositor.stop() }
        let f = try WaylandDaemonFixture(config: Self.config, on: TestDesk(compositor))
        defer { f.stopDaemon() }
        try f.startDaemon()
        let events = try f.monitor()
        let window = try TestToplevel(display: compositor.waylandSocket, appId: "clickaway-test-titled", title: "titled",
                                      width: 300, height: 200)
        try compositor.command(#"[app_id="clickaway-test-titled"] move position 100 100"#)
        // sway's view of it: `rect` below the title bar, `deco_rect` the title bar.
        var view: JSON = .null
        do {
            try f.eventually("sway to show the titled window at (100, 100) with a title bar") {
                try window.dispatch()
                view = try Self.view(in: compositor.tree(), appId: "clickaway-test-titled") ?? .null
                return view["deco_rect"]?["height"]?.intValue ?? 0 > 0 && view["rect"]?["x"]?.intValue == 100
            }
        } catch {
            throw HarnessError("\(error)\nsway's view: \(view.text)")
        }
        let rect = try #require(Rect(json: .array(["x", "y", "width", "height"].map { view["rect"]?[$0] ?? .null })), "\(view.text)")
        let title = Int32(try #require(view["deco_rect"]?["height"]?.intValue))
        let border = Int32(view["current_border_width"]?.intValue ?? 0)
        #expect(rect.y == 100 + title, "sway's rect is not right below the title bar: \(view.text)")
        #expect(border > 0 && rect.width == 300 + 2 * border, "the window has no side borders: \(view.text)")
        let whole = Rect(x: 100, y: 100, width: rect.width, height: rect.height + title)
        try f.eventually("the daemon to take the whole decorated window \(whole) as the popup") {
            try window.dispatch()
            return try Rect(json: f.openEntry("titled")?["rect"]) == whole
        }
        #expect(try events.await(.opened)["popup"]?.stringValue == "titled")
        let hit = try JSON.parse(try f.ctl(["hit", "--json", "250", "\(100 + title / 2)"]).stdout)
        #expect(hit["hit"]?["popup"]?.stringValue == "titled" && hit["dismiss"] == .array([]), "hit on the title bar: \(hit.text)")

        // The title bar and the left border: sway's, not the overlay's; nothing dismissed.
        try f.click(250, 100 + title / 2)
        try f.click(100, 100 + title + 50)
        #expect(try f.openPopups() == ["titled"], "a click on the popup's title bar or border dismissed it")
        #expect(!window.closeRequested)
        #expect(try f.below.clicks() == [], "a click on the title bar reached the background")

        // Just above the title bar: outside.
        try f.click(250, 98)
        #expect(try events.await(.dismissed)["popups"] == .array([.string("titled")]))
        try window.waitForCloseRequest()
    }

    /// The first view with `appId` in sway's tree.
    static func view(in node: JSON, appId: String) -> JSON? {
        if node["app_id"]?.stringValue == appId { return node }
        for child in (node["nodes"]?.arrayValue ?? []) + (node["floating_nodes"]?.arrayValue ?? []) {
            if let found = view(in: child, appId: appId) { return found }
        }
        return nil
    }
}
