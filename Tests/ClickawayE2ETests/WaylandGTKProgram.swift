import ClickawayCore
import Foundation
import ProcessSupport
import Testing

/// A GTK 3 program on a Wayland compositor (python3-gi, Wayland backend), for the KWin and
/// GNOME Shell tests: one window with the app_id, title (its name) and size asked for. It
/// prints each press on its windows (`press NAME X Y B`, `press NAME-dialog X Y B`), each key
/// (`key NAME KEYNAME`), `NAME deleted` when asked to close, and `mapped NAME`; commands on a
/// fifo: `dialog` (a Gtk.Dialog transient for the window, 420x260), `close-dialog`, `ping N`
/// (`pong N` once the compositor has answered a round trip); with `combo: true` a combo box of
/// six items at its top (`chosen ITEM`), and `dropdown` opens its list.
final class WaylandGTKProgram {
    static let script = #"""
        import os, sys
        import gi
        gi.require_version("Gtk", "3.0")
        gi.require_version("Gdk", "3.0")
        from gi.repository import Gdk, Gtk, GLib

        name, app_id, width, height = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        with_combo = len(sys.argv) > 6 and sys.argv[6] == "combo"
        GLib.set_prgname(app_id)
        commands = os.open(sys.argv[1], os.O_RDWR | os.O_NONBLOCK)
        pending = b""
        dialog = None
        last = None

        def say(text):
            print(text, file=sys.stderr, flush=True)

        def pressed(who):
            def handler(widget, event):
                # GTK emits a toplevel's press twice on Wayland: told once.
                global last
                seen = (who, event.time, event.button, int(event.x), int(event.y))
                if event.type == Gdk.EventType.BUTTON_PRESS and seen != last:
                    last = seen
                    say("press %s %d %d %d" % (who, int(event.x), int(event.y), event.button))
                return False
            return handler

        window = Gtk.Window(title=name)
        window.set_default_size(width, height)
        window.set_resizable(False)
        window.add_events(Gdk.EventMask.BUTTON_PRESS_MASK | Gdk.EventMask.KEY_PRESS_MASK)
        window.connect("button-press-event", pressed(name))
        window.connect("key-press-event", lambda w, e: (say("key %s %s" % (name, Gdk.keyval_name(e.keyval))), False)[1])
        window.connect("delete-event", lambda *a: (say(name + " deleted"), False)[1])
        window.connect("destroy", lambda *a: Gtk.main_quit())
        window.connect("map-event", lambda *a: say("mapped " + name))
        combo = None
        if with_combo:
            combo = Gtk.ComboBoxText()
            for item in ["one", "two", "three", "four", "five", "six"]:
                combo.append_text(item)
            combo.set_active(0)
            combo.connect("changed", lambda c: say("chosen " + c.get_active_text()))
            box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
            box.pack_start(combo, False, False, 0)
            window.add(box)
        window.show_all()

        def command(fd, condition):
            global pending, dialog
            try:
                pending += os.read(fd, 4096)
            except BlockingIOError:
                return True
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                words = line.decode().split()
                if words[0] == "dialog":
                    dialog = Gtk.Dialog(title=name + "-dialog", transient_for=window)
                    dialog.set_default_size(420, 260)
                    dialog.add_events(Gdk.EventMask.BUTTON_PRESS_MASK)
                    dialog.connect("button-press-event", pressed(name + "-dialog"))
                    dialog.show_all()
                elif words[0] == "close-dialog" and dialog is not None:
                    dialog.destroy()
                    dialog = None
                elif words[0] == "dropdown" and combo is not None:
                    combo.popup()
                elif words[0] == "ping":
                    Gdk.Display.get_default().sync()
                    say("pong " + words[1])
            return True

        GLib.io_add_watch(commands, GLib.IO_IN, command)
        Gtk.main()

        """#

    let name: String
    let process: ChildProcess
    let commands: CommandFifo
    /// The daemon's log, for what a failed wait says.
    private let daemonLog: () -> String
    private var pings = 0

    /// GTK on the Wayland socket `waylandSocket`, without the accessibility bus or dconf.
    static func environment(directory: URL, waylandSocket: String) -> [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_RUNTIME_DIR": directory.path,
         "WAYLAND_DISPLAY": waylandSocket, "GDK_BACKEND": "wayland", "NO_AT_BRIDGE": "1", "GSETTINGS_BACKEND": "memory"]
    }

    /// Starts it in `directory` and returns once its window is mapped.
    init(directory: URL, waylandSocket: String, daemonLog: @escaping () -> String, name: String, appId: String,
         width: Int = 300, height: Int = 200, combo: Bool = false) throws {
        self.name = name
        self.daemonLog = daemonLog
        let script = directory.appendingPathComponent("wayland-gtk.py").path
        if !FileManager.default.fileExists(atPath: script) { try TestFiles.write(Self.script, to: script) }
        commands = try CommandFifo(directory.appendingPathComponent("\(name).commands").path)
        // Debian's python3, where python3-gi is (not a python3 first on PATH).
        process = try ChildProcess(["/usr/bin/python3", script, commands.path, name, appId, "\(width)", "\(height)"] + (combo ? ["combo"] : []),
                                   environment: Self.environment(directory: directory, waylandSocket: waylandSocket))
        try awaitLine("mapped \(name)", "\(name) to map")
    }

    func stop() {
        process.stop()
        commands.close()
    }

    var printed: [String] {
        ((try? String(contentsOfFile: process.logPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// What it printed of presses.
    var presses: [String] { printed.filter { $0.hasPrefix("press ") } }

    func send(_ command: String) throws { try commands.send(command) }

    /// Returns once GNOME Shell has handled everything the program sent before, and the
    /// program everything the Shell sent before its answer (a Wayland round trip).
    func ping() throws {
        pings += 1
        try send("ping \(pings)")
        try awaitLine("pong \(pings)", "\(name) to answer ping \(pings)")
    }

    func awaitLine(_ line: String, _ what: String) throws {
        do {
            try eventually(what, timeout: .seconds(10), every: .milliseconds(10)) { printed.contains(line) }
        } catch {
            throw HarnessError("\(error); it printed \(printed)\nthe daemon's log:\n\(daemonLog())")
        }
    }

    /// Waits until it has printed `count` presses on `window` (its name, or NAME-dialog).
    func awaitPresses(_ count: Int, on window: String, _ what: String) throws {
        do {
            try eventually(what, timeout: .seconds(10), every: .milliseconds(10)) {
                presses.filter { $0.hasPrefix("press \(window) ") }.count >= count
            }
        } catch {
            throw HarnessError("\(error); it printed \(printed)\nthe daemon's log:\n\(daemonLog())")
        }
    }

    /// Waits for a line that starts with `prefix`; returns it.
    func awaitLine(startingWith prefix: String, _ what: String) throws -> String {
        var found: String?
        do {
            try eventually(what, timeout: .seconds(10), every: .milliseconds(10)) {
                found = printed.first { $0.hasPrefix(prefix) }
                return found != nil
            }
        } catch {
            throw HarnessError("\(error); it printed \(printed)\nthe daemon's log:\n\(daemonLog())")
        }
        return found!
    }
}
