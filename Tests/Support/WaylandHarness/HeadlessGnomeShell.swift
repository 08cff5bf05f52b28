import ClickawayCore
import Foundation
import ProcessSupport

/// A private GNOME Shell 43 for tests: `gnome-shell --headless --wayland --no-x11
/// --virtual-monitor 1280x800 --unsafe-mode` on a session bus of its own (that also lets
/// root in: the tests and the daemon run as root), with a stand-in system bus (the Shell dies
/// at start when /run/systemd/seats exists but no system bus does), clickaway's extension
/// installed from data/gnome-shell/ into its HOME before it starts and enabled through
/// gsettings, the overview hidden, and a Clutter virtual pointer and keyboard of the test's
/// own in the Shell (org.gnome.Shell.Eval, which answers only with --unsafe-mode).
///
/// Under root everything runs as `nobody` (users do not run their desktop as root), in a
/// directory owned by nobody, mode 0700; root reaches its sockets by absolute path. The
/// Shell hangs at start about once in ten here (a forked child stuck before exec), so a
/// start is bounded and tried again. docs/design/gnome-extension.md, section 1.
public final class HeadlessGnomeShell {
    public static let uuid = "clickaway@clickaway.github.io"
    /// The virtual monitor.
    public static let screen = Rect(x: 0, y: 0, width: 1280, height: 800)

    public let runtimeDirectory: String
    public let home: String
    /// The Wayland socket's absolute path.
    public var waylandSocket: String { runtimeDirectory + "/wayland-0" }
    /// The session bus (what `DBUS_SESSION_BUS_ADDRESS` would name).
    public var sessionBus: String { "unix:path=\(runtimeDirectory)/bus" }
    private let user: (uid: uid_t, gid: gid_t)?
    private var buses: [ChildProcess] = []
    private var shell: ChildProcess?
    private var stopped = false

    /// `extensionState`: "enabled" (in enabled-extensions at start), "disabled" (installed,
    /// not enabled), "missing" (not installed), "other-version" (enabled, its metadata's
    /// version not this clickaway's), "out-of-date" (enabled, made for GNOME Shell 99 only).
    public init(extensionState: String = "enabled", timeout: Duration = .seconds(20), attempts: Int = 3) throws {
        var template = Array("/tmp/clickaway-gnome-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("cannot create a runtime directory for GNOME Shell: \(String(cString: strerror(errno)))")
        }
        runtimeDirectory = String(cString: made)
        home = runtimeDirectory + "/home"
        if geteuid() == 0 {
            guard let entry = getpwnam("nobody") else { throw HarnessError("running as root, and there is no user \"nobody\" to run GNOME Shell as") }
            user = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        } else {
            user = nil
        }
        do {
            try prepare(extensionState: extensionState)
            try startShell(timeout: timeout, attempts: attempts, failing: "GNOME Shell did not start in \(attempts) tries")
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// GNOME Shell stopped and started again on the same buses, as after a crash or a new
    /// login: its Wayland clients die with it, and it enables the extension again as it starts.
    public func restartShell(timeout: Duration = .seconds(20)) throws {
        stopShell()
        try startShell(timeout: timeout, attempts: 3, failing: "GNOME Shell did not start again")
    }

    /// `startShell(timeout:)` tried up to `attempts` times; then `failing`, with each try's error.
    private func startShell(timeout: Duration, attempts: Int, failing: String) throws {
        var failures: [String] = []
        while shell == nil {
            do {
                try startShell(timeout: timeout)
            } catch {
                failures.append("\(error)")
                stopShell()
                guard failures.count < attempts else { throw HarnessError(failing + ":\n" + failures.joined(separator: "\n")) }
            }
        }
    }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        stopShell()
        for bus in buses.reversed() { bus.stop() }
        try? FileManager.default.removeItem(atPath: runtimeDirectory)
    }

    public var isRunning: Bool { !stopped && shell?.isRunning == true }

    /// Stops the Shell and what it forked. A Shell that hung at start (a forked child stuck
    /// before exec, above) made every later try fail with "org.gnome.Shell already exists on
    /// bus": the stuck child shares the Shell's bus connection, and so kept its name after the
    /// Shell was gone. The children are found before the Shell stops, while still its own.
    private func stopShell() {
        guard let shell else { return }
        let forked = Self.descendants(of: shell.pid)
        shell.stop()
        for pid in forked { kill(pid, SIGKILL) }
        self.shell = nil
    }

    /// The processes below `pid`, at any depth, from /proc (the parent is the fourth field
    /// of /proc/PID/stat, after the name in parentheses, which may hold any character).
    private static func descendants(of pid: pid_t) -> [pid_t] {
        var parents: [pid_t: pid_t] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let nameEnd = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[child] = parent }
        }
        var found: [pid_t] = []
        var next = [pid]
        while let parent = next.popLast() {
            let children = parents.filter { $0.value == parent }.map(\.key)
            found += children
            next += children
        }
        return found
    }

    /// The end of the Shell's stderr (the extension's log lines among it).
    public var logTail: String { shell?.logTail ?? "" }

    /// The Shell's whole stderr so far.
    public var log: String { shell.flatMap { try? String(contentsOfFile: $0.logPath, encoding: .utf8) } ?? "" }

    /// The environment of a program of this session (GTK clients, gsettings, gnome-extensions).
    /// XDG_DATA_DIRS leaves out /usr/local/share, where `make install` as root puts the
    /// extension for every user (.ci/run installs before the tests): the Shell finds only the
    /// one this session installed, or none.
    public var environment: [String: String] {
        ["HOME": home, "XDG_RUNTIME_DIR": runtimeDirectory, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "NO_AT_BRIDGE": "1",
         "XDG_DATA_DIRS": "/usr/share",
         "DBUS_SESSION_BUS_ADDRESS": sessionBus, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(runtimeDirectory)/system_bus",
         "WAYLAND_DISPLAY": "wayland-0", "GDK_BACKEND": "wayland"]
    }

    /// `command` as the session's user, in the session's environment.
    public func asItsUser(_ command: [String]) -> [String] {
        let switchUser = user.map { ["setpriv", "--reuid=\($0.uid)", "--regid=\($0.gid)", "--clear-groups"] } ?? []
        return switchUser + ["env", "-i"] + environment.map { "\($0.key)=\($0.value)" }.sorted() + command
    }

    private func prepare(extensionState: String) throws {
        let extensions = home + "/.local/share/gnome-shell/extensions"
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        if extensionState != "missing" {
            // The extension as `make install` builds it, for GNOME Shell 43 (imports).
            let built = runtimeDirectory + "/built"
            let build = try ProgramRun.run([Self.repository + "/data/gnome-shell/build", built], environment: ["PATH": "/usr/bin:/bin"])
            guard build.status == 0 else { throw HarnessError("data/gnome-shell/build failed: \(build.output)") }
            try FileManager.default.moveItem(atPath: built + "/imports/" + Self.uuid, toPath: extensions + "/" + Self.uuid)
            // An extension of another clickaway, or made for another GNOME Shell.
            let metadata = extensions + "/" + Self.uuid + "/metadata.json"
            let text = try String(contentsOfFile: metadata, encoding: .utf8)
            switch extensionState {
            case "other-version": try TestFiles.write(text.replacing(/"version": \d+/, with: "\"version\": 999"), to: metadata)
            case "out-of-date": try TestFiles.write(text.replacing(/"shell-version": \[[^\]]*\]/, with: "\"shell-version\": [\"99\"]"), to: metadata)
            default: break
            }
        }
        // A session bus that also lets root in: the tests (and the daemon under test) run as
        // root while the Shell and its bus run as nobody, and a bus admits its own user only.
        let busConfig = runtimeDirectory + "/session-bus.conf"
        try TestFiles.write("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <include>/usr/share/dbus-1/session.conf</include>
              <policy context="default"><allow user="root"/></policy>
            </busconfig>
            """, to: busConfig)
        chmod(runtimeDirectory, 0o700)
        if let user {
            for path in [runtimeDirectory] + ((try? FileManager.default.subpathsOfDirectory(atPath: runtimeDirectory)) ?? []).map({ runtimeDirectory + "/" + $0 }) {
                guard chown(path, user.uid, user.gid) == 0 else { throw HarnessError("cannot give \(path) to nobody: \(String(cString: strerror(errno)))") }
            }
        }
        for (name, config) in [("system_bus", "--session"), ("bus", "--config-file=\(busConfig)")] {
            let path = runtimeDirectory + "/" + name
            let bus = try ChildProcess(asItsUser(["dbus-daemon", config, "--nofork", "--nopidfile", "--address=unix:path=\(path)"]))
            buses.append(bus)
            try eventually("dbus-daemon to create \(path)", timeout: .seconds(10), every: .milliseconds(10)) {
                try bus.checkRunning(while: "starting")
                return FileManager.default.fileExists(atPath: path)
            }
        }
        let enabled = ["missing", "disabled"].contains(extensionState) ? "[]" : "['\(Self.uuid)']"
        let set = try ProgramRun.run(asItsUser(["gsettings", "set", "org.gnome.shell", "enabled-extensions", enabled]), environment: [:])
        guard set.status == 0 else { throw HarnessError("gsettings set enabled-extensions failed: \(set.output)") }
    }

    /// The Shell, until `/org/gnome/Shell` answers (its name comes ~0.5 s before its object),
    /// then the overview hidden and the test's devices made (the first key of a new virtual
    /// keyboard was seen lost).
    private func startShell(timeout: Duration) throws {
        try? FileManager.default.removeItem(atPath: waylandSocket)
        let process = try ChildProcess(asItsUser(["gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor",
                                                  "\(Self.screen.width)x\(Self.screen.height)", "--unsafe-mode"]))
        shell = process
        try eventually("GNOME Shell to answer on /org/gnome/Shell", timeout: timeout, every: .milliseconds(50)) {
            try process.checkRunning(while: "starting")
            return (try? shellCall(["org.freedesktop.DBus.Properties.Get", "org.gnome.Shell", "ShellVersion"], limit: .seconds(2)))?.status == 0
        }
        _ = try eval("""
            const C = imports.gi.Clutter, seat = C.get_default_backend().get_default_seat();
            globalThis.clickawayTest = {
                pointer: seat.create_virtual_device(C.InputDeviceType.POINTER_DEVICE),
                keyboard: seat.create_virtual_device(C.InputDeviceType.KEYBOARD_DEVICE),
            };
            true
            """)
        try eventually("the Shell to finish starting and hide the overview", timeout: timeout, every: .milliseconds(20)) {
            // The Shell shows the overview once its start-up is done: hidden after that.
            try eval("""
                const o = Main.overview;
                if (!Main.layoutManager._startingUp && o.visible && !o.animationInProgress) o.hide();
                !Main.layoutManager._startingUp && !o.visible && !o.animationInProgress
                """) == "true"
        }
    }

    private func shellCall(_ method: [String], limit: Duration) throws -> ProgramRun {
        try ProgramRun.run(["gdbus", "call", "--session", "--dest", "org.gnome.Shell", "--object-path", "/org/gnome/Shell", "--method"] + method,
                           environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": sessionBus], limit: limit)
    }

    /// Runs `script` in the Shell (org.gnome.Shell.Eval) and returns its value as JSON text.
    @discardableResult
    public func eval(_ script: String) throws -> String {
        try shell?.checkRunning(while: "evaluating \(script)")
        let run = try shellCall(["org.gnome.Shell.Eval", script], limit: .seconds(10))
        guard run.status == 0, let match = run.stdout.firstMatch(of: /^\((true|false), '(.*)'\)\s*$/.dotMatchesNewlines()) else {
            throw HarnessError("Eval failed (\(run.output)): \(script)\nGNOME Shell's log:\n\(logTail)")
        }
        guard match.output.1 == "true" else { throw HarnessError("Eval threw \(match.output.2): \(script)\nGNOME Shell's log:\n\(logTail)") }
        return String(match.output.2).replacingOccurrences(of: "\\'", with: "'").replacingOccurrences(of: "\\\\", with: "\\")
    }

    /// A click with the test's virtual pointer (button 1 left, 2 middle, 3 right); returns
    /// once the Shell has handled its motion (the press and release follow it in order).
    public func click(_ x: Int32, _ y: Int32, button: Int = 1) throws {
        try eval("""
            const C = imports.gi.Clutter, p = globalThis.clickawayTest.pointer, t = imports.gi.GLib.get_monotonic_time();
            p.notify_absolute_motion(t, \(x), \(y));
            p.notify_button(t, \(button), C.ButtonState.PRESSED);
            p.notify_button(t, \(button), C.ButtonState.RELEASED);
            true
            """)
        try eventually("the Shell to move the pointer to (\(x), \(y))", timeout: .seconds(5), every: .milliseconds(5)) {
            try eval("const [x, y, mods] = global.get_pointer(); x === \(x) && y === \(y) && (mods & 0x1f00) === 0") == "true"
        }
    }

    /// A key press and release with the test's virtual keyboard (a keyval: Escape is 0xff1b).
    public func key(_ keyval: UInt32) throws {
        try eval("""
            const C = imports.gi.Clutter, k = globalThis.clickawayTest.keyboard, t = imports.gi.GLib.get_monotonic_time();
            k.notify_keyval(t, \(keyval), C.KeyState.PRESSED);
            k.notify_keyval(t, \(keyval), C.KeyState.RELEASED);
            true
            """)
    }

    /// Whether clickaway's layer is in the Shell's stage now.
    public func hasLayer() throws -> Bool {
        try eval("Main.layoutManager.uiGroup.get_children().some(a => a.name === 'clickaway-layer')") == "true"
    }

    /// Moves the window titled `title` as a user's drag would.
    /// Moved again until it is there: mutter places a new window as it is first shown, over
    /// a move made before.
    public func moveWindow(titled title: String, to x: Int32, _ y: Int32) throws {
        try eventually("GNOME Shell to show the window titled \(title) at (\(x), \(y))", timeout: .seconds(10), every: .milliseconds(20)) {
            try eval("""
                const a = global.get_window_actors().find(a => a.meta_window.get_title() === \(Self.jsString(title)));
                const w = a?.meta_window, r = w?.get_frame_rect();
                if (a && a.visible && (r.x !== \(x) || r.y !== \(y))) w.move_frame(true, \(x), \(y));
                !!a && a.visible && r.x === \(x) && r.y === \(y)
                """) == "true"
        }
    }

    /// gnome-extensions as the session's user (enable, disable, info).
    public func extensions(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(asItsUser(["gnome-extensions"] + arguments), environment: [:], limit: .seconds(10))
    }

    private static func jsString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// The repository: data/gnome-shell/ is built from it.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
}
