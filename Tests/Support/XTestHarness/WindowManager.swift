import CXCB
import ClickawaySystem
import ClickawayX11
import Foundation
import ProcessSupport

/// The X11 window managers the end-to-end tests run under, each as Debian packages it.
public enum WindowManagerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case openbox, i3, herbstluftwm, bspwm, xmonad, awesome, fluxbox, icewm, xfwm4, spectrwm, fvwm, jwm, dwm

    public var description: String { rawValue }

    /// The program to look for on PATH.
    public var program: String { self == .i3 ? "i3" : rawValue }

    /// Whether pressing a button on a window it does not focus yet both focuses the window
    /// and passes the press on to it. xmonad's default (`clickJustFocuses = True`) only
    /// focuses: its grab on unfocused windows takes the press.
    public var passesFocusingClick: Bool { self != .xmonad }

    /// Buttons the window manager grabs on the root window with no modifier, so that grab
    /// mode cannot have them: spectrwm binds button 1 with any modifier to focus.
    public var rootButtons: [UInt8] { self == .spectrwm ? [1] : [] }

    /// Whether it tiles windows that can be resized, such as yad's. The other tiling managers
    /// are told by their configuration to float every window. xmonad and dwm take no rule
    /// without a compiled configuration; they float only windows whose minimum and maximum
    /// sizes are equal (dwm: `updatesizehints` sets `isfixed`, and `manage` floats a fixed
    /// client), which `TestClient` windows are and yad's are not.
    public var tilesResizableWindows: Bool { [.xmonad, .dwm].contains(self) }
}

/// A real window manager on a test display, started with a minimal configuration written
/// for it in a private HOME (and XDG_CONFIG_HOME): tiling ones float every window, so that
/// windows stay where the tests put them, and none draws a bar, so no panel covers a window.
/// dwm is the exception: its configuration is compiled in (Debian's `dwm.default`), so it
/// keeps its bar, 1 pixel borders and tiling; it floats fixed-size windows, and moves a
/// floating window whose middle is under its bar (at the top) down below it.
public final class WindowManager {
    public let kind: WindowManagerKind
    private let process: ChildProcess
    /// xfwm4's session bus (it reads its settings through xfconf over D-Bus), stopped with it.
    private let bus: ChildProcess?
    private let home: URL
    /// Kept open with its probe window for the manager's lifetime: closing it would let the
    /// server hand its window IDs to the next client, and requests the manager still has
    /// queued for the probe would then hit that client's window.
    private let connection: XConnection

    /// A root property the scripted configurations (herbstluftwm's autostart, bspwm's bspwmrc)
    /// set as their last step: only then do their rules apply to new windows.
    static let readyProperty = "_CLICKAWAY_TEST_WM_READY"

    /// Starts `kind` and returns once it manages windows with its configuration in force:
    /// it holds SubstructureRedirect on the root, a scripted configuration has run to its end,
    /// and a probe window mapped after that has been managed (WM_STATE set on it).
    public init(_ kind: WindowManagerKind = .openbox, display: String, timeout: Duration = .seconds(40)) throws {
        self.kind = kind
        home = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-\(kind)-\(UUID().uuidString)")
        let configHome = home.appendingPathComponent(".config")
        try FileManager.default.createDirectory(at: configHome, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        for name in ["WAYLAND_DISPLAY", "SWAYSOCK", "I3SOCK", "DBUS_SESSION_BUS_ADDRESS", "SESSION_MANAGER"] {
            environment[name] = nil
        }
        environment["DISPLAY"] = display
        // GTK programs (xfwm4) would start the accessibility bus, which outlives them.
        environment["NO_AT_BRIDGE"] = "1"
        environment["GTK_A11Y"] = "none"
        environment["HOME"] = home.path
        environment["XDG_CONFIG_HOME"] = configHome.path
        environment["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
        environment["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
        let arguments = try Self.configure(kind, home: home, configHome: configHome)
        if kind == .fluxbox {
            // fluxbox sets its style's wallpaper through fbsetbg, which finds no wallpaper
            // setter here and says so in an xmessage window that takes the focus.
            environment["PATH"] = home.appendingPathComponent("bin").path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        }
        let deadline = Deadline(after: timeout)
        connection = try XConnection(display: display)
        // Select first, then start: no PropertyNotify on the root can slip by.
        if let error = connection.check(connection.selectInput(connection.root, [.propertyChange, .substructureNotify])) {
            throw HarnessError("cannot watch the root window: \(error)")
        }
        if kind == .xfwm4 {
            // Not dbus-run-session: stopping it would leave its dbus-daemon running.
            let socket = home.appendingPathComponent("bus").path
            let bus = try ChildProcess(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path=\(socket)"],
                                       environment: environment)
            self.bus = bus
            do {
                try eventually("dbus-daemon to listen on \(socket)", timeout: .milliseconds(deadline.remaining())) {
                    try bus.checkRunning(while: "starting")
                    return FileManager.default.fileExists(atPath: socket)
                }
            } catch {
                bus.stop()
                throw error
            }
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(socket)"
        } else {
            bus = nil
        }
        do {
            process = try ChildProcess(arguments, environment: environment)
        } catch {
            bus?.stop()
            throw error
        }
        do {
            try waitForRedirect(until: deadline)
            if [.herbstluftwm, .bspwm].contains(kind) { try waitForReadyProperty(until: deadline) }
            try waitForProbeManaged(until: deadline)
        } catch {
            process.stop()
            bus?.stop()
            try? FileManager.default.removeItem(at: home)
            throw error
        }
    }

    deinit { stop() }

    public func stop() {
        process.stop()
        bus?.stop()
        try? FileManager.default.removeItem(at: home)
    }

    /// The end of the manager's stderr, for failure messages.
    public var logTail: String { process.logTail }

    /// Whether the manager says (`_NET_SUPPORTED`) that it keeps `_NET_ACTIVE_WINDOW`.
    public func setsActiveWindow() throws -> Bool {
        let x = connection
        let supported = try x.property32(x.root, try x.internAtom("_NET_SUPPORTED")) ?? []
        return supported.contains(try x.internAtom("_NET_ACTIVE_WINDOW"))
    }

    // MARK: Readiness

    /// Some client holds SubstructureRedirect on the root once `all_event_masks` has it.
    /// Taking it to find out would make the manager fail to start; reading it does not. It
    /// is read again on every event on the root and at least every 20 ms, since not every
    /// manager changes anything on the root after taking it (xmonad does not).
    private func waitForRedirect(until deadline: Deadline) throws {
        let x = connection
        while try !x.getWindowAttributes(x.root).allEventMasks.contains(.substructureRedirect) {
            try process.checkRunning(while: "starting")
            guard !deadline.hasPassed() else {
                throw HarnessError("\(kind) did not take SubstructureRedirect on the root window in time\n\(process.logTail)")
            }
            _ = try? x.waitForEvent("an event on the root window", timeout: .milliseconds(20)) { _ in true }
        }
    }

    private func waitForReadyProperty(until deadline: Deadline) throws {
        let x = connection
        let atom = try x.internAtom(Self.readyProperty)
        guard try x.property32(x.root, atom) == nil else { return }
        do {
            try x.waitForEvent("\(kind)'s configuration script to set \(Self.readyProperty) on the root window",
                               timeout: .milliseconds(deadline.remaining()), check: { try process.checkRunning(while: "running its configuration") }) { event -> Bool? in
                if case let .propertyNotify(p) = event, p.window == x.root, p.atom == atom, !p.deleted { return true }
                return nil
            }
        } catch {
            throw HarnessError("\(error)\n\(process.logTail)")
        }
    }

    /// Maps a small probe window and waits for the manager to set WM_STATE on it, then
    /// destroys it. A manager whose main loop is not running yet cannot manage it; openbox
    /// 3.6 can read the MapRequest into Xlib's queue during start-up and then sleep in poll(2)
    /// on the socket, so a ClientMessage is sent to the root every 100 ms to wake it up. jwm
    /// 2.4 takes SubstructureRedirect, reads its configuration, and only then grabs the
    /// server, manages the windows already mapped and calls XSync(display, True), which
    /// throws away a MapRequest that came in between (main.c, Startup): the probe is mapped
    /// again with each wake-up, which asks anew while it is not mapped and does nothing once it is.
    private func waitForProbeManaged(until deadline: Deadline) throws {
        let x = connection
        let probe = x.generateID()
        let wake = try x.internAtom("_NET_REQUEST_FRAME_EXTENTS")
        x.withUnsafeConnection { c in
            let values: [UInt32] = [0x808080, EventMask.propertyChange.rawValue]
            xcb_create_window(c, UInt8(XCB_COPY_FROM_PARENT), probe, x.root, 10, 10, 40, 40, 0,
                              UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue), UInt32(XCB_COPY_FROM_PARENT),
                              XCB_CW_BACK_PIXEL.rawValue | XCB_CW_EVENT_MASK.rawValue, values)
            let wmClass = Array("clickaway-probe\0ClickawayProbe\0".utf8)
            xcb_change_property(c, UInt8(XCB_PROP_MODE_REPLACE.rawValue), probe, UInt32(XCB_ATOM_WM_CLASS.rawValue),
                                UInt32(XCB_ATOM_STRING.rawValue), 8, UInt32(wmClass.count), wmClass)
            xcb_map_window(c, probe)
        }
        defer {
            x.withUnsafeConnection { c in _ = xcb_destroy_window(c, probe) }
            try? x.sync()
        }
        while true {
            let managed = try? x.waitForEvent("\(kind) to manage a probe window", timeout: .milliseconds(100),
                                              check: { try process.checkRunning(while: "starting") }) { event -> Bool? in
                if case let .propertyNotify(p) = event, p.window == probe, p.atom == x.atoms.wmState, !p.deleted { return true }
                return nil
            }
            if managed == true { return }
            try process.checkRunning(while: "starting")
            guard !deadline.hasPassed() else {
                throw HarnessError("\(kind) took SubstructureRedirect but did not manage a new window (no WM_STATE on it) in time\n\(process.logTail)")
            }
            x.sendClientMessage(wake, about: probe, data: [], to: x.root, mask: [.substructureRedirect, .substructureNotify])
            x.withUnsafeConnection { c in _ = xcb_map_window(c, probe) }
        }
    }

    // MARK: Configurations

    /// Writes `kind`'s configuration under `home` and returns the command that starts it.
    private static func configure(_ kind: WindowManagerKind, home: URL, configHome: URL) throws -> [String] {
        // Written with a close-on-exec descriptor: a program spawned meanwhile by a test running
        // in parallel would otherwise hold the file open for writing, and the manager's exec of
        // its script (herbstluftwm's autostart, bspwm's bspwmrc) would fail with ETXTBSY.
        func write(_ text: String, to path: String, executable: Bool = false) throws -> String {
            let url = home.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, executable ? 0o755 : 0o644)
            guard fd >= 0 else { throw HarnessError("cannot write \(url.path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            let bytes = Array(text.utf8)
            guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
                throw HarnessError("cannot write \(url.path): \(String(cString: strerror(errno)))")
            }
            return url.path
        }
        let ready = "xprop -root -f \(readyProperty) 32c -set \(readyProperty) 1\n"
        switch kind {
        case .openbox:
            // No rc.xml of its own: openbox falls back to /etc/xdg/openbox/rc.xml.
            return ["openbox", "--sm-disable"]
        case .i3:
            let config = try write("""
                # i3 config file (v4)
                font pango:monospace 8
                default_border none
                default_floating_border none
                for_window [class=".*"] floating enable

                """, to: "i3.conf")
            return ["i3", "-c", config]
        case .herbstluftwm:
            let autostart = try write("""
                #!/bin/sh
                herbstclient rule floating=on
                \(ready)
                """, to: "herbstluftwm-autostart", executable: true)
            return ["herbstluftwm", "--autostart", autostart]
        case .bspwm:
            _ = try write("""
                #!/bin/sh
                bspc monitor -d I II
                bspc config border_width 0
                bspc rule -a '*' state=floating
                \(ready)
                """, to: ".config/bspwm/bspwmrc", executable: true)
            return ["bspwm"]
        case .xmonad:
            // No xmonad.hs: the built-in default configuration, which needs no compiler.
            return ["xmonad"]
        case .awesome:
            // The default rc.lua's focus handling (click and sloppy focus), without its bar,
            // menus and the placement that moves overlapping windows apart.
            let rc = try write("""
                local awful = require("awful")
                local gears = require("gears")
                require("awful.autofocus")
                awful.layout.layouts = { awful.layout.suit.floating }
                awful.screen.connect_for_each_screen(function(s) awful.tag({ "1" }, s, awful.layout.layouts[1]) end)
                local function activate(c) c:emit_signal("request::activate", "mouse_click", { raise = true }) end
                local clientbuttons = gears.table.join(
                    awful.button({ }, 1, activate), awful.button({ }, 2, activate), awful.button({ }, 3, activate))
                awful.rules.rules = {
                    { rule = { }, properties = { border_width = 0, focus = awful.client.focus.filter, raise = true,
                                                 buttons = clientbuttons } },
                }
                client.connect_signal("mouse::enter", function(c)
                    c:emit_signal("request::activate", "mouse_enter", { raise = false })
                end)

                """, to: "rc.lua")
            return ["awesome", "-c", rc]
        case .fluxbox:
            _ = try write("#!/bin/sh\nexit 0\n", to: "bin/fbsetbg", executable: true)
            return ["fluxbox"]
        case .icewm:
            return ["icewm"]
        case .xfwm4:
            // With the session bus `init` starts for it.
            return ["xfwm4", "--compositor=off"]
        case .spectrwm:
            _ = try write("""
                bar_enabled = 0
                border_width = 0
                quirk[.*] = FLOAT + ANYWHERE

                """, to: ".config/spectrwm/spectrwm.conf")
            return ["spectrwm"]
        case .fvwm:
            // Without a file fvwm reads its default-config, with a panel of buttons on the
            // right. Here: that file's focus policy (sloppy, a click raises); one page, so no
            // pan frames (InputOnly windows along the edges) and no paging when the pointer
            // gets there; no modules.
            let config = try write("""
                DesktopSize 1x1
                EdgeScroll 0 0
                EdgeThickness 0
                Style * SloppyFocus, MouseFocusClickRaises

                """, to: "fvwm-config")
            return ["fvwm", "-f", config]
        case .jwm:
            // Debian's system.jwmrc places windows tiled and has a tray along the bottom;
            // with no Tray there is none. Its default focus model (sloppy, a click raises).
            let config = try write("""
                <?xml version="1.0"?>
                <JWM>
                    <FocusModel>sloppy</FocusModel>
                </JWM>

                """, to: "jwmrc")
            return ["jwm", "-f", config]
        case .dwm:
            // No configuration to write: see the type's comment.
            return ["dwm"]
        }
    }
}
