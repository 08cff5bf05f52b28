import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import WaylandHarness

/// `clickawayctl dismiss NAME` on sway, the command docs/wayland.md binds to Escape: a window
/// popup's window is asked to close, and a runtime popup's `wait` (the script that opened it)
/// hears it dismissed, as after a click outside.
@Suite("clickawayctl dismiss on sway", .enabled(if: CompositorKind.tested.contains(.sway)))
struct WaylandDismissTests {
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "escapable"
        window = { app_id = "clickaway-test-escapable" }
        """

    /// `escape = true` cannot work on Wayland: what the daemon says to do instead is the
    /// binding that runs the dismiss action.
    @Test func anEscapePopupIsToldToBindDismiss() throws {
        let config = Self.config + "\nescape = true\n"
        try withWaylandDaemon(.sway, config: config) { f in
            let unavailable = try f.status()["unavailable"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(unavailable.contains { $0.contains("escape = true") && $0.contains("`clickawayctl dismiss escapable`") },
                    "\(unavailable)")
        }
    }

    @Test func dismissClosesAWindowPopupAndEndsAWait() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            let events = try f.monitor()
            let window = try TestToplevel(display: f.compositor.waylandSocket, appId: "clickaway-test-escapable", title: "escapable",
                                          width: 200, height: 150)
            try f.compositor.command(#"[app_id="clickaway-test-escapable"] move position 700 400"#)
            try f.eventually("the escapable window to be open at (700, 400)") {
                try window.dispatch()
                return try Rect(json: f.openEntry("escapable")?["rect"]) == Rect(x: 700, y: 400, width: 200, height: 150)
            }
            #expect(try events.await(.opened)["popup"]?.stringValue == "escapable")

            let run = try f.ctl(["dismiss", "escapable"])
            #expect(run.status == 0 && run.stdout == "dismissed: escapable\n", "\(run.stdout)\(run.stderr)")
            let dismissed = try events.await(.dismissed)
            #expect(dismissed["popups"] == .array([.string("escapable")]) && dismissed["reason"]?.stringValue == "request", "\(dismissed.text)")
            try window.waitForCloseRequest()
            #expect(try events.await(.closed)["popup"]?.stringValue == "escapable")

            // What the documented script waits on: `wait` exits 0, saying it was dismissed.
            let wait = try BackgroundCtl(f, ["wait", "--rect", "900,50,100,100", "--name", "escapable-rect"])
            try f.eventually("the waited popup to open") { try f.openPopups().contains("escapable-rect") }
            #expect(try f.ctl(["dismiss", "escapable-rect"]).stdout == "dismissed: escapable-rect\n")
            #expect(try wait.exitStatus() == 0, "\(wait.stdout)")
            #expect(wait.stdout.hasPrefix("dismissed popup=escapable-rect reason=request"), "\(wait.stdout)")
            #expect(try f.openPopups().isEmpty)
            let again = try f.ctl(["dismiss", "escapable-rect"])
            #expect(again.status == 1, "a removed runtime popup: \(again.stdout)\(again.stderr)")
            #expect(try f.ctl(["dismiss", "escapable"]).stdout == "escapable: not open\n")
        }
    }
}
