import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import WaylandHarness

/// `clickawayctl dismiss NAME` on sway, the command docs/wayland.md binds to Escape: a window
/// popup's window is asked to close, and a runtime popup's `wait` (the script that opened it)
/// hears it dismissed, as after a click outside. The binding itself, in the page's sway mode,
/// is run below (`EscapeRecipe`).
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

/// docs/wayland.md's Escape, run as the page gives it: its sway `mode "calendar"` block in
/// sway's config file, its script run by `sh`, and the Escape key typed on a virtual keyboard
/// (wtype). Judged by sway and the programs: the calendar gone from sway's tree and its yad
/// ended, the script's `clickawayctl wait` ending 0, and sway back in its default mode.
extension WaylandDismissTests {
    /// Escape while the calendar is open: sway's binding runs `clickawayctl dismiss calendar`,
    /// which kills yad (`--dismiss kill`); `wait` exits 0 and the script leaves the mode.
    @Test func escapeBoundInTheModeDismissesTheCalendar() throws {
        try EscapeRecipe.run { session, script, calendar in
            let typed = try session.runAsUser(command: ["wtype", "-k", "Escape"])
            #expect(typed.status == 0, "wtype: \(typed.output)")
            try EscapeRecipe.expectEnded(session, script, calendar, reason: "request")
        }
    }

    /// A click outside the calendar ends the script as well, and it too leaves sway's mode.
    @Test func clickOutsideLeavesTheModeToo() throws {
        try EscapeRecipe.run { session, script, calendar in
            let outside = (x: Int32(1200), y: Int32(680))
            try #require(!calendar.rect.contains(x: outside.x, y: outside.y), "the calendar covers \(outside): \(calendar)")
            try session.desk.input.click(x: outside.x, y: outside.y)
            try session.sync()
            try EscapeRecipe.expectEnded(session, script, calendar, reason: "outside")
            #expect(try session.desk.below.clicks().isEmpty, "the click outside reached the desktop below")
        }
    }
}

/// The Escape setup of docs/wayland.md (its fenced blocks: sway's `mode "calendar"`, and the
/// script that opens the calendar), run on a sway session of its own.
enum EscapeRecipe {
    static let output = Rect(x: 0, y: 0, width: 1280, height: 720)
    /// The line after which the script reports `wait`'s exit status: the script's own is that
    /// of its last line, `kill $!`.
    static let waitLine = "clickawayctl wait "

    /// docs/wayland.md's fenced blocks, each without the indentation of the list item it is in.
    static func blocks() throws -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        var indent = 0
        for line in try Repository.text("docs/wayland.md").split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("```") {
                if let block = current {
                    blocks.append(block)
                    current = nil
                } else {
                    current = []
                    indent = line.count - trimmed.count
                }
            } else if current != nil {
                current!.append(String(line.dropFirst(min(indent, line.prefix { $0 == " " }.count))))
            }
        }
        return blocks
    }

    /// The block whose lines satisfy `matches`; exactly one must.
    static func block(_ what: String, _ matches: ([String]) -> Bool) throws -> [String] {
        let found = try blocks().filter(matches)
        guard found.count == 1 else { throw HarnessError("docs/wayland.md has \(found.count) blocks of \(what), not one") }
        return found[0]
    }

    /// The sway config block with `mode "calendar"`, as the page gives it.
    static func swayMode() throws -> [String] {
        try block("sway config with mode \"calendar\"") { $0.contains { $0.hasPrefix(#"mode "calendar" {"#) } }
    }

    /// The script, with one line added after `clickawayctl wait`: `echo "wait exited $?"`.
    static func script() throws -> String {
        var lines = try block("the script opening the calendar") { $0.first?.hasPrefix("yad --calendar") == true }
        guard let wait = lines.firstIndex(where: { $0.hasPrefix(waitLine) }), lines.filter({ $0.hasPrefix(waitLine) }).count == 1 else {
            throw HarnessError("the script has not one line starting with \"\(waitLine)\": \(lines)")
        }
        lines.insert(#"echo "wait exited $?""#, at: wait + 1)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A sway of its own with the page's mode and a rule floating the calendar (sway would
    /// tile it over the whole output, leaving no outside to click), the daemon, and the
    /// script started; `body` runs once the calendar is on screen, sway is in the mode and
    /// the daemon has the calendar open.
    static func run(_ body: (SwaySession, BackgroundCtl, SwayWindow) throws -> Void) throws {
        let rule = #"for_window [app_id="yad" title="^calendar$"] floating enable"#
        let session = try SwaySession(config: "[defaults]\ngrace_ms = 0\n", output: output, swayConfig: try swayMode() + [rule])
        #expect(try session.bindingMode() == "default")
        let script = try session.startAsUser(command: ["sh", "-c", try script()])
        var calendars: [SwayWindow] = []
        defer {
            script.process.stop()
            for calendar in calendars { kill(calendar.pid, SIGKILL) }
        }
        do {
            try session.eventually("the calendar on screen, sway in the mode \"calendar\" and the calendar open", timeout: .seconds(20)) {
                calendars = try session.calendars()
                let open = try session.openEntry("calendar")
                let mode = try session.bindingMode()
                return calendars.count == 1 && open?["runtime"]?.boolValue == true && Rect(json: open?["rect"]) == calendars[0].rect
                    && mode == "calendar"
            }
        } catch {
            throw HarnessError("\(error)\nthe calendars: \(calendars)\nthe script: \(script.stdout)\n\(script.stderr)")
        }
        #expect(calendars[0].type == "floating_con", "\(calendars[0])")
        try body(session, script, calendars[0])
    }

    /// The script has ended, its `wait` with 0 saying the calendar was dismissed for
    /// `reason`; the calendar is gone from sway's tree and its yad has ended; sway is in its
    /// default mode.
    static func expectEnded(_ session: SwaySession, _ script: BackgroundCtl, _ calendar: SwayWindow, reason: String) throws {
        do {
            _ = try script.exitStatus()
        } catch {
            let left = (try? session.calendars()).map { "\($0)" } ?? "unknown"
            throw HarnessError("the script did not end (the calendars in sway's tree: \(left), sway's mode: "
                               + "\((try? session.bindingMode()) ?? "unknown"))\n\(error)\n\(script.stdout)\nthe daemon's log:\n\(session.log)")
        }
        // Between swaymsg's replies: what `wait` printed, then its status.
        let lines = script.stdout.split(separator: "\n")
        let status = lines.firstIndex { $0.hasPrefix("wait exited ") }
        #expect(status.map { lines[$0] } == "wait exited 0", "\(script.stdout)\n\(script.stderr)")
        #expect(status.map { $0 > 0 && lines[$0 - 1].hasPrefix("dismissed popup=calendar reason=\(reason) ") } == true,
                "\(script.stdout)\n\(script.stderr)")
        try eventually("the calendar to be gone from sway's tree and its yad (process \(calendar.pid)) to end", timeout: .seconds(10),
                       every: .milliseconds(20)) {
            try session.calendars().isEmpty && !SwayRecipeRun.isAlive(calendar.pid)
        }
        #expect(try session.bindingMode() == "default")
        #expect(try session.report().open.isEmpty)
    }
}

/// A sway session as a desktop has it: sway, the daemon, the scripts and the keyboard are
/// programs of one user, sway's (`nobody` when the tests run as root: sway refuses root),
/// with one XDG_RUNTIME_DIR, sway's, and the built programs on PATH, sway's too. So a
/// command sway's `exec` runs reaches the daemon, as it does on a desktop. The daemon serves
/// its own user only (SO_PEERCRED), so the test talks to it through `clickawayctl` run as
/// that user. The built programs are copied where every user may run them: a checkout under
/// /root (mode 0700, as on a fresh machine where root runs `make test`) is not, and sway's
/// `exec` of one there was refused.
final class SwaySession: DaemonRun {
    let compositor: HeadlessCompositor
    let desk: TestDesk

    init(config: String, output: Rect, swayConfig: [String]) throws {
        let programs = try Self.programsCopy()
        compositor = try HeadlessCompositor(.sway, outputs: [HeadlessOutput(name: "HEADLESS-1", rect: output)], swayConfig: swayConfig,
                                            path: [programs.path])
        desk = try TestDesk(compositor)
        try super.init(config: config)
        self.programs = programs
        if let user = compositor.user {
            let paths = [directory.path] + ((try? FileManager.default.subpathsOfDirectory(atPath: directory.path)) ?? [])
                .map { directory.path + "/" + $0 }
            for path in paths where chown(path, user.uid, user.gid) != 0 {
                throw HarnessError("cannot give \(path) to uid \(user.uid): \(String(cString: strerror(errno)))")
            }
        }
        try startDaemon(launcher: compositor.asItsUser([]))
    }

    deinit {
        stopDaemon()
        compositor.stop()
    }

    override var environment: [String: String] {
        var env = super.environment
        env["XDG_RUNTIME_DIR"] = compositor.runtimeDirectory
        env["WAYLAND_DISPLAY"] = compositor.waylandSocket
        env["SWAYSOCK"] = compositor.ipcSocket
        env["DISPLAY"] = nil
        env["PATH"] = programs.path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        // yad's: a home of its own, and no session bus, so no accessibility bus to look for.
        env["HOME"] = directory.path
        env["GDK_BACKEND"] = nil
        env["NO_AT_BRIDGE"] = "1"
        env["SHELL"] = "/bin/sh"
        return env
    }

    override var displayArguments: [String] { ["--backend", "wayland"] }

    private static let copyLock = NSLock()
    nonisolated(unsafe) private static var copied: URL?

    /// clickaway and clickawayctl copied once per test process into a directory every user
    /// may read, removed at exit.
    static func programsCopy() throws -> URL {
        copyLock.lock()
        defer { copyLock.unlock() }
        if let copied { return copied }
        var template = Array("/tmp/clickaway-programs-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("cannot create a directory for the programs: \(String(cString: strerror(errno)))")
        }
        let directory = URL(fileURLWithPath: String(cString: made))
        chmod(directory.path, 0o755)
        for program in ["clickaway", "clickawayctl"] {
            let copy = directory.appendingPathComponent(program)
            try FileManager.default.copyItem(at: DaemonRun.buildDirectory.appendingPathComponent(program), to: copy)
            chmod(copy.path, 0o755)
        }
        copied = directory
        atexit { if let copied = SwaySession.copied { try? FileManager.default.removeItem(at: copied) } }
        return directory
    }

    /// `clickawayctl sync`, as sway's user.
    override func sync() throws {
        let run = try runAsUser(command: [programs.appendingPathComponent("clickawayctl").path, "sync"])
        guard run.status == 0 else { throw HarnessError("clickawayctl sync exited \(run.status): \(run.output)\n\(log)") }
    }

    /// `clickawayctl status --json`, as sway's user.
    override func status() throws -> JSON {
        let run = try runAsUser(command: [programs.appendingPathComponent("clickawayctl").path, "status", "--json"])
        guard run.status == 0 else { throw HarnessError("clickawayctl status exited \(run.status): \(run.output)\n\(log)") }
        do {
            return try JSON.parse(run.stdout)
        } catch {
            throw HarnessError("clickawayctl status --json printed no JSON (\(error)): \(run.stdout)")
        }
    }

    /// A program of the session run to its end.
    func runAsUser(command: [String], limit: Duration = .seconds(30)) throws -> ProgramRun {
        try ProgramRun.run(compositor.asItsUser(command), environment: environment, limit: limit)
    }

    /// A program of the session started in the background.
    func startAsUser(command: [String]) throws -> BackgroundCtl {
        try BackgroundCtl(self, command: compositor.asItsUser(command))
    }

    /// sway's binding mode, as `swaymsg -t get_binding_state` tells it.
    func bindingMode() throws -> String? {
        let run = try runAsUser(command: ["swaymsg", "-r", "-t", "get_binding_state"], limit: .seconds(10))
        guard run.status == 0 else { throw HarnessError("swaymsg -t get_binding_state exited \(run.status): \(run.output)") }
        return (try? JSON.parse(run.stdout))?["name"]?.stringValue
    }

    /// The yad calendars in sway's tree.
    func calendars() throws -> [SwayWindow] {
        SwayRecipeRun.windows(in: try compositor.tree()) { $0["app_id"]?.stringValue == "yad" && $0["name"]?.stringValue == "calendar" }
    }
}
