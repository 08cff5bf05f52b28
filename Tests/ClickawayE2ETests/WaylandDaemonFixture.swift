import ClickawayControl
import ClickawayCore
import ClickawayWayland
import Foundation
import WaylandHarness
import XTestHarness

/// A private headless sway, the daemon on it (`--backend wayland`), a test client covering
/// HEADLESS-1 on the background layer (below windows and the overlay) that records the
/// clicks reaching it, and a virtual pointer
/// to click with. `swayIPC: false` hides $SWAYSOCK from the daemon, as on a compositor that
/// is not sway.
final class WaylandDaemonFixture: DaemonRun {
    let sway: HeadlessCompositor
    let below: ClickRecorder
    let pointer: TestInput
    let swayIPC: Bool

    init(config: String, swayIPC: Bool = true) throws {
        sway = try HeadlessCompositor(.sway)
        self.swayIPC = swayIPC
        below = try ClickRecorder(display: sway.waylandSocket, output: "HEADLESS-1", layer: .background)
        pointer = try TestInput(display: sway.waylandSocket)
        try below.waitForPointer()
        try super.init(config: config)
    }

    deinit {
        stopDaemon()
        sway.stop()
    }

    /// sway's sockets by absolute path, and no X display.
    override var environment: [String: String] {
        var env = super.environment
        env["WAYLAND_DISPLAY"] = sway.waylandSocket
        env["SWAYSOCK"] = swayIPC ? sway.ipcSocket : nil
        env["DISPLAY"] = nil
        return env
    }

    override var displayArguments: [String] { ["--backend", "wayland"] }

    /// Clicks through the virtual pointer, then lets the daemon handle it (and replay it).
    func click(_ x: Int32, _ y: Int32, button: UInt32 = PointerButton.left) throws {
        try pointer.click(x: x, y: y, button: button)
        try sync()
    }

    func ctlOK(_ arguments: [String]) throws {
        let run = try ctl(arguments)
        guard run.status == 0 else {
            throw HarnessError("clickawayctl \(arguments.joined(separator: " ")) exited \(run.status): \(run.stderr)\n\(log)")
        }
    }

    /// Syncs until `condition` holds, at most `timeout`: for what sway does in its own time
    /// (a window's new geometry, an output's description).
    func eventually(_ what: String, timeout: Duration = .seconds(5), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            try sync()
            if try condition() { return }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("timed out after \(timeout) waiting for \(what); status: \((try? status().text) ?? "none")\n\(log)")
            }
            Thread.sleep(forTimeInterval: 0.02)  // sway applies some changes in its own transactions
        }
    }
}
