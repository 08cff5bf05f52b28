import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayWayland
import Foundation
import ProcessSupport
import WaylandHarness
import XTestHarness

/// The daemon (`--backend wayland`) on a headless compositor, with the compositor's
/// `TestDesk`: a test client covering the first output on the background layer (below
/// windows and the overlay) that records the clicks and touches reaching it, and an
/// injector to click and tap with.
/// `swayIPC: false` hides $SWAYSOCK from the daemon, as on a compositor that is not sway.
/// `kwinScripting: true` gives it KWin's session bus, where it finds KWin's scripting.
final class WaylandDaemonFixture: DaemonRun {
    let compositor: HeadlessCompositor
    let below: ClickRecorder
    let input: TestInput
    let swayIPC: Bool
    let kwinScripting: Bool

    init(config: String, on desk: TestDesk, swayIPC: Bool = true, kwinScripting: Bool = false) throws {
        compositor = desk.compositor
        below = desk.below
        input = desk.input
        self.swayIPC = swayIPC
        self.kwinScripting = kwinScripting
        try super.init(config: config)
        if kwinScripting {
            // KWin runs as another user (nobody) under root: it reads the script the daemon
            // writes into $XDG_RUNTIME_DIR by its path (the daemon's own directory stays 0700).
            for path in [directory.path, runtimeDirectory.path] { chmod(path, 0o711) }
        }
    }

    deinit { stopDaemon() }

    var kind: CompositorKind { compositor.kind }
    /// The first output's name, as the compositor calls it.
    var output: String { compositor.outputs[0].name }

    /// The compositor's sockets by absolute path (sway's IPC only when asked), and no X display.
    override var environment: [String: String] {
        var env = super.environment
        env["WAYLAND_DISPLAY"] = compositor.waylandSocket
        env["SWAYSOCK"] = swayIPC ? compositor.ipcSocket : nil
        env["DBUS_SESSION_BUS_ADDRESS"] = kwinScripting ? compositor.sessionBus : nil
        env["DISPLAY"] = nil
        return env
    }

    override var displayArguments: [String] { ["--backend", "wayland"] }

    /// Clicks through the injector, then lets the daemon handle it (and replay it).
    func click(_ x: Int32, _ y: Int32, button: UInt32 = PointerButton.left) throws {
        try input.click(x: x, y: y, button: button)
        try sync()
    }

    /// Clicks at an exact point (to the 1/256 pixel).
    func click(at position: Position, button: UInt32 = PointerButton.left) throws {
        try input.click(at: position, button: button)
        try sync()
    }

    /// A finger down and up (KWin only).
    func tap(at position: Position) throws {
        try input.tap(at: position)
        try sync()
    }

    func ctlOK(_ arguments: [String]) throws {
        let run = try ctl(arguments)
        guard run.status == 0 else {
            throw HarnessError("clickawayctl \(arguments.joined(separator: " ")) exited \(run.status): \(run.stderr)\n\(log)")
        }
    }

}

/// Runs `body` with the daemon started on the shared compositor of `kind` (or on one of
/// its own, for tests that change or stop it); the daemon stops before the next test gets
/// the compositor.
func withWaylandDaemon(_ kind: CompositorKind, config: String, privateCompositor: Bool = false, swayIPC: Bool = true,
                       kwinScripting: Bool = false, start: Bool = true, _ body: (WaylandDaemonFixture) throws -> Void) throws {
    func run(_ desk: TestDesk) throws {
        let f = try WaylandDaemonFixture(config: config, on: desk, swayIPC: swayIPC, kwinScripting: kwinScripting)
        defer { f.stopDaemon() }
        if start { try f.startDaemon() }
        try body(f)
    }
    if privateCompositor {
        let compositor = try HeadlessCompositor(kind)
        defer { compositor.stop() }
        try run(TestDesk(compositor))
    } else {
        try SharedCompositors.with(kind, run)
    }
}

/// The daemon alone on a compositor where no test client may inject input (KWin keeping
/// its permission check): for what the daemon says about it.
final class UntrustedKWinRun: DaemonRun {
    let compositor: HeadlessCompositor

    init(config: String, compositor: HeadlessCompositor) throws {
        self.compositor = compositor
        try super.init(config: config)
    }

    deinit { stopDaemon() }

    override var environment: [String: String] {
        var env = super.environment
        env["WAYLAND_DISPLAY"] = compositor.waylandSocket
        env["DISPLAY"] = nil
        return env
    }

    override var displayArguments: [String] { ["--backend", "wayland"] }
}
