import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import WaylandHarness

/// The daemon on a private headless GNOME Shell 43 with clickaway's extension: it finds
/// the Shell on the session bus (no layer-shell there) and talks to the extension, which
/// takes the clicks. Input comes from the test's own Clutter virtual pointer and keyboard in
/// the Shell; the windows are real programs, which say what reached them.
final class GnomeDaemonFixture: DaemonRun {
    let shell: HeadlessGnomeShell

    init(config: String, shell: HeadlessGnomeShell) throws {
        self.shell = shell
        try super.init(config: config)
    }

    deinit { stopDaemon() }

    /// The Shell's Wayland socket and session bus, and no X display.
    override var environment: [String: String] {
        var env = super.environment
        env["WAYLAND_DISPLAY"] = shell.waylandSocket
        env["DBUS_SESSION_BUS_ADDRESS"] = shell.sessionBus
        env["DISPLAY"] = nil
        return env
    }

    override var displayArguments: [String] { ["--backend", "wayland"] }

    /// Clicks with the test's pointer, then lets the daemon handle what came of it.
    func click(_ x: Int32, _ y: Int32, button: Int = 1) throws {
        try shell.click(x, y, button: button)
        try sync()
    }

    func ctlOK(_ arguments: [String]) throws {
        let run = try ctl(arguments)
        guard run.status == 0 else {
            throw HarnessError("clickawayctl \(arguments.joined(separator: " ")) exited \(run.status): \(run.stderr)\n\(log)")
        }
    }

    /// The frame of the window titled `title`, as GNOME Shell has it.
    func frame(of title: String) throws -> Rect {
        let text = try shell.eval("""
            const w = global.get_window_actors().map(a => a.meta_window).find(w => w.get_title() === '\(title)');
            const r = w ? w.get_frame_rect() : null;
            r ? [r.x, r.y, r.width, r.height] : null
            """)
        guard let rect = Rect(json: try JSON.parse(text)) else { throw HarnessError("GNOME Shell has no window titled \(title)") }
        return rect
    }

    /// `clickawayctl show`'s drawing as the Shell has it, nil when there is none: `reactive`,
    /// `visible`, `aboveWindows` (above every window group in the Shell's stage) and `fills`,
    /// the rectangles `[x, y, width, height, 0xRRGGBB]` it paints.
    func drawing() throws -> JSON? {
        let found = try JSON.parse(try shell.eval("""
            const ui = Main.layoutManager.uiGroup, all = ui.get_children(), d = all.find(a => a.name === 'clickaway-show');
            d ? { reactive: d.reactive, visible: d.visible, fills: d.clickawayFills,
                  aboveWindows: all.indexOf(d) > all.indexOf(global.window_group) && all.indexOf(d) > all.indexOf(global.top_window_group) } : null
            """))
        return found == .null ? nil : found
    }

    /// The colour (0xRRGGBB) GNOME Shell paints at a point of the screen, as its colour picker reads it.
    func colour(at x: Int32, _ y: Int32) throws -> UInt32 {
        try shell.eval("""
            globalThis.clickawayPicked = null;
            new imports.gi.Shell.Screenshot().pick_color(\(x), \(y), (s, result) => {
                try {
                    const [, c] = s.pick_color_finish(result);
                    globalThis.clickawayPicked = (c.red << 16) | (c.green << 8) | c.blue;
                } catch (e) {
                    globalThis.clickawayPicked = String(e);
                }
            });
            true
            """)
        var picked = JSON.null
        try ProcessSupport.eventually("GNOME Shell to read the colour at (\(x), \(y))", timeout: .seconds(5), every: .milliseconds(20)) {
            picked = try JSON.parse(try shell.eval("globalThis.clickawayPicked"))
            return picked != .null
        }
        guard let colour = picked.intValue.flatMap(UInt32.init(exactly:)) else { throw HarnessError("GNOME Shell cannot read a colour: \(picked)") }
        return colour
    }
}

/// Runs `body` with the daemon started on a GNOME Shell of its own, stopped after it.
func withGnomeDaemon(config: String, extensionState: String = "enabled", start: Bool = true,
                     _ body: (GnomeDaemonFixture) throws -> Void) throws {
    let shell = try HeadlessGnomeShell(extensionState: extensionState)
    defer { shell.stop() }
    let f = try GnomeDaemonFixture(config: config, shell: shell)
    defer { f.stopDaemon() }
    if start { try f.startDaemon() }
    do {
        try body(f)
    } catch {
        let under = (try? shell.eval("""
            const [x, y] = global.get_pointer(), a = global.stage.get_actor_at_pos(imports.gi.Clutter.PickMode.REACTIVE, x, y);
            `${x},${y}: ${a?.name ?? ''} ${a?.constructor?.name ?? a}`
            """)) ?? "?"
        throw HarnessError("\(error)\nunder the pointer: \(under)\nstatus: \((try? f.status().text) ?? "none")\nthe daemon's log:\n\(f.log)\nGNOME Shell's log:\n\(shell.logTail)")
    }
}

extension WaylandGTKProgram {
    /// On the fixture's GNOME Shell.
    convenience init(_ f: GnomeDaemonFixture, name: String, appId: String, width: Int = 300, height: Int = 200, combo: Bool = false) throws {
        try self.init(directory: f.directory, waylandSocket: f.shell.waylandSocket, daemonLog: { f.log }, name: name, appId: appId,
                      width: width, height: height, combo: combo)
    }
}
