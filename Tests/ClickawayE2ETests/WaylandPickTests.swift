import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// `clickawayctl pick` in a Wayland session where it cannot pick (SwayPickTests picks on
/// sway): it says what to do instead of pointing at --display, and, with Xwayland, that
/// native Wayland windows cannot be picked.
@Suite("clickawayctl pick on Wayland")
struct WaylandPickTests {
    @Test func onSwayWithoutTheDaemonItSaysWhatToRunInstead() throws {
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-nodaemon-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let r = try PickProcess(["pick"], environment: ["PATH": "/usr/bin:/bin", "WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": runtime,
                                                        "SWAYSOCK": "/run/user/1000/sway-ipc.sock"]).finish(timeout: .seconds(10))
        #expect(r.status == 2)
        #expect(r.stderr.contains("pick asks the daemon, which is not reachable"), "\(r.stderr)")
        #expect(r.stderr.contains("swaymsg -t get_tree") && r.stderr.contains(#"window = { app_id = "APP_ID" }"#), "\(r.stderr)")
        #expect(!r.stderr.contains("--display"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func onAnotherCompositorItPointsToRectPopups() throws {
        let r = try PickProcess(["pick"], environment: ["PATH": "/usr/bin:/bin", "WAYLAND_DISPLAY": "wayland-0"])
            .finish(timeout: .seconds(10))
        #expect(r.status == 2)
        #expect(r.stderr.contains("window popups need sway") && r.stderr.contains("clickawayctl open --rect"), "\(r.stderr)")
        #expect(!r.stderr.contains("--display"), "\(r.stderr)")
    }

    /// With Xwayland's DISPLAY it picks X windows, saying first that native ones are out of
    /// its reach, and again when nobody clicked one it could see.
    @Test func withXwaylandItSaysNativeWindowsCannotBePicked() throws {
        let xvfb = try XvfbServer()
        let r = try PickProcess(["pick", "--timeout", "1"], environment: [
            "PATH": "/usr/bin:/bin", "DISPLAY": xvfb.display, "WAYLAND_DISPLAY": "wayland-0",
        ]).finish(timeout: .seconds(15))
        #expect(r.status == 1)
        #expect(r.stderr.contains("pick sees only X11 (Xwayland) windows") && r.stderr.contains("rect popup"), "\(r.stderr)")
        #expect(r.stderr.contains("nobody clicked within 1 s; nothing picked (a native Wayland window cannot be picked"), "\(r.stderr)")
    }
}
