import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import WaylandHarness

/// The sway recipes run with the programs they are written for, set up in the recipes' own
/// words: the waybar clock module, the sway `for_window` rules and the key binding's command
/// are read out of config/recipes (sway.toml, popup-calendar.sh) and given to the real waybar,
/// a private headless sway (in its config file, as a user's are read) and foot; the shipped
/// scripts run the real yad. Judged by what the programs do: windows in sway's tree, processes
/// alive or gone.
@Suite("sway recipes with their programs", .enabled(if: CompositorKind.tested.contains(.sway)))
struct SwayRecipeTests {
    /// The output the recipes are written for (sway.toml: "a 1920x1080 output").
    static let output = Rect(x: 0, y: 0, width: 1920, height: 1080)
    static let config = "[defaults]\ngrace_ms = 0\n\n" + RecipeFiles.text("sway.toml")

    /// sway.toml part 2: waybar runs the recipe's clock module, sway has the recipe's
    /// for_window rule. A click on the clock opens the calendar under it; a click on the
    /// calendar leaves it; a click outside kills it and ends the script. Opened again, a
    /// second click on the clock (the anchor) reaches waybar, whose second run of the script
    /// closes the calendar: nothing is dismissed, and no second calendar opens.
    @Test func waybarClockTogglesTheCalendarUnderIt() throws {
        let rule = try SwayRecipe.line("sway.toml", startingWith: #"for_window [app_id="yad" title="^waybar-calendar$"]"#)
        let clock = try SwayRecipe.block("sway.toml", startingWith: #""clock": {"#)
        let anchor = try #require(Self.anchor(in: clock), "the clock's on-click sets no CALENDAR_ANCHOR=X,Y,W,H: \(clock)")
        let place = try #require(Self.movePosition(in: rule), "the rule has no `move position X Y`: \(rule)")
        try Self.withSway(swayConfig: [rule]) { f in
            let run = try SwayRecipeRun(f)
            defer { run.cleanUp() }
            let bar = try run.startWaybar(clock: clock, height: 30)
            let events = try f.monitor()
            // The clock is the bar's only module, at its right end.
            let onClock = (x: Self.output.width - 40, y: Int32(15))
            try #require(anchor.contains(x: onClock.x, y: onClock.y), "the recipe's anchor \(anchor) is not the right end of the bar")

            try f.click(onClock.x, onClock.y)
            let calendar = try run.awaitCalendar("the calendar a click on waybar's clock opens", title: "waybar-calendar")
            #expect(try events.await(.opened)["popup"]?.stringValue == "waybar-calendar")
            // Where the rule puts it: floating, at X, right under the bar (the workspace's top).
            let workspace = try run.workspaceRect()
            #expect(workspace.y == 30, "waybar's bar does not take the top 30 pixels: the workspace is \(workspace)")
            #expect(calendar.type == "floating_con", "the calendar is not floating: \(calendar)")
            #expect(calendar.rect.x == place.x && calendar.rect.y == workspace.y + place.y, "the calendar is at \(calendar.rect)")
            #expect(calendar.rect.y == anchor.y + anchor.height, "the calendar is not right under the clock: \(calendar.rect)")
            #expect(calendar.rect.x < anchor.x + anchor.width && anchor.x < calendar.rect.x + calendar.rect.width
                    && calendar.rect.x + calendar.rect.width <= Self.output.width, "the calendar is not under the clock: \(calendar.rect)")
            try f.eventually("the daemon to see the calendar where sway has it") {
                Rect(json: try f.openEntry("waybar-calendar")?["rect"]) == calendar.rect
            }

            try f.click(calendar.rect.x + calendar.rect.width / 2, calendar.rect.y + calendar.rect.height / 2)
            #expect(try f.openPopups() == ["waybar-calendar"], "a click on the calendar closed it")
            #expect(run.calendarProcesses("waybar-calendar") == [calendar.pid], "a click on the calendar ended it")

            try f.click(960, 700)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("waybar-calendar")]))
            try run.awaitNoCalendar("the dismissed calendar", title: "waybar-calendar")
            try run.awaitScriptsEnded("waybar-calendar.sh", "the script whose calendar was dismissed")
            #expect(try f.below.clicks().isEmpty, "the click outside reached the desktop below")

            try f.click(onClock.x, onClock.y)
            let again = try run.awaitCalendar("the calendar a click on the clock opens again", title: "waybar-calendar")
            #expect(try events.await(.opened)["popup"]?.stringValue == "waybar-calendar")
            #expect(again.pid != calendar.pid)
            try f.click(onClock.x, onClock.y)
            let seen = try Self.events(events, until: .closed, popup: "waybar-calendar")
            #expect(!seen.contains { $0["event"]?.stringValue == MonitorEvent.Name.dismissed.rawValue },
                    "the second click on the clock dismissed the calendar instead of reaching waybar: \(seen.map(\.text))")
            try run.awaitNoCalendar("the calendar the second click on the clock closed", title: "waybar-calendar")
            // Both runs of the script end: the second closed the first's calendar and opened none.
            try run.awaitScriptsEnded("waybar-calendar.sh", "both runs of the script")
            #expect(run.calendarProcesses("waybar-calendar").isEmpty, "a yad calendar still runs after the toggle")
            #expect(try run.calendars("waybar-calendar").isEmpty, "a calendar is open after the toggle")
            let status = try f.status()
            #expect(try StatusReport(reply: status).open.isEmpty && status["waiting"]?.arrayValue?.isEmpty != false, "\(status.text)")
            try bar.checkRunning(while: "the calendar came and went")
        }
    }

    /// sway.toml part 1: the key binding's command opens foot with its app_id; the recipe's
    /// rule floats it; the recipe's [[popup]] takes it. A click in it leaves it; a click
    /// outside closes it, and foot exits. The command runs as the test's user through
    /// `sh -c`, as sway's `exec` runs it (sway runs as `nobody` under root, whose login shell,
    /// which foot would start, exits at once).
    @Test func dropDownTerminalIsClosedByAClickOutside() throws {
        let rule = try SwayRecipe.line("sway.toml", startingWith: #"for_window [app_id="dropdown"]"#)
        let binding = try SwayRecipe.line("sway.toml", startingWith: "bindsym $mod+grave ")
        let command = String(binding.dropFirst("bindsym $mod+grave ".count))
        try #require(command.hasPrefix("exec foot "), "the binding runs \(command)")
        try Self.withSway(swayConfig: [rule]) { f in
            let events = try f.monitor()
            let run = try SwayRecipeRun(f)
            let foot = try BackgroundCtl(f, command: ["sh", "-c", String(command.dropFirst("exec ".count))], environment: run.programEnvironment)
            defer { foot.process.stop() }
            #expect(try events.await(.opened, timeoutMs: 20_000)["popup"]?.stringValue == "dropdown", "\(foot.stderr)")
            // resize set 900 500, move position center: foot maps at its own size (700x500)
            // and takes sway's a moment later.
            var found: [SwayWindow] = []
            do {
                try f.eventually("foot's window to float at 900x500 in the middle of the output") {
                    found = try run.windows { $0["app_id"]?.stringValue == "dropdown" }
                    return found.count == 1 && found[0].rect == Rect(x: 510, y: 290, width: 900, height: 500)
                }
            } catch {
                throw HarnessError("\(error)\nfoot's windows: \(found)")
            }
            let terminal = found[0]
            #expect(terminal.type == "floating_con", "the terminal is not floating: \(terminal)")
            try f.eventually("the daemon to see the terminal where sway has it") {
                Rect(json: try f.openEntry("dropdown")?["rect"]) == terminal.rect
            }

            try f.click(960, 540)
            #expect(try f.openPopups() == ["dropdown"], "a click in the terminal closed it")
            #expect(SwayRecipeRun.isAlive(terminal.pid), "a click in the terminal ended foot")
            try f.click(100, 1000)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("dropdown")]))
            try eventually("foot (process \(terminal.pid)) to exit once sway asked its window to close", timeout: .seconds(10),
                           every: .milliseconds(20)) { !SwayRecipeRun.isAlive(terminal.pid) }
            _ = try events.await(.closed)
            #expect(try run.windows { $0["app_id"]?.stringValue == "dropdown" }.isEmpty, "foot's window is still in sway's tree")
            #expect(try f.below.clicks().isEmpty, "the click outside reached the desktop below")
        }
    }

    /// popup-calendar.sh on sway, with the rule its header gives: yad's --mouse does nothing
    /// there; the rule floats the calendar and centres it on the pointer. A click on it leaves
    /// it; a click outside ends the script, which prints "dismissed".
    @Test func popupCalendarScriptWithItsRule() throws {
        let rule = try SwayRecipe.line("popup-calendar.sh", startingWith: #"for_window [app_id="yad" title="^clickaway-calendar$"]"#)
        try Self.withSway(swayConfig: [rule]) { f in
            let run = try SwayRecipeRun(f)
            defer { run.cleanUp() }
            // The pointer rests at (600, 400), where the calendar should open.
            try f.click(600, 400)
            let script = try BackgroundCtl(f, command: ["sh", RecipeFiles.directory.appendingPathComponent("popup-calendar.sh").path],
                                           environment: run.programEnvironment)
            let calendar = try run.awaitCalendar("the script's calendar", title: "clickaway-calendar")
            #expect(calendar.type == "floating_con", "the calendar is not floating: \(calendar)")
            #expect(abs(calendar.rect.x + calendar.rect.width / 2 - 600) <= 1 && abs(calendar.rect.y + calendar.rect.height / 2 - 400) <= 1,
                    "the calendar is not centred on the pointer: \(calendar.rect)")
            try f.eventually("the calendar to be a runtime popup") { try f.report().open.contains { $0.runtime } }
            try f.click(calendar.rect.x + calendar.rect.width / 2, calendar.rect.y + 12)
            #expect(script.process.isRunning, "a click on the calendar ended the script: \(script.stdout)")
            #expect(try f.report().open.count == 1, "a click on the calendar closed it")
            try f.click(1500, 900)
            #expect(try script.exitStatus() == 1, "\(script.stdout)\n\(script.stderr)")
            #expect(script.stdout == "dismissed\n")
            try run.awaitNoCalendar("the dismissed calendar", title: "clickaway-calendar")
        }
    }

    // MARK: - Helpers

    /// The daemon with `config` on a sway of its own with one 1920x1080 output and
    /// `swayConfig` at the end of its config file.
    static func withSway(swayConfig: [String], _ body: (WaylandDaemonFixture) throws -> Void) throws {
        let compositor = try HeadlessCompositor(.sway, outputs: [HeadlessOutput(name: "HEADLESS-1", rect: output)], swayConfig: swayConfig)
        defer { compositor.stop() }
        let f = try WaylandDaemonFixture(config: config, on: TestDesk(compositor))
        defer { f.stopDaemon() }
        try f.startDaemon()
        try body(f)
    }

    /// CALENDAR_ANCHOR=X,Y,W,H in the on-click.
    static func anchor(in clock: String) -> Rect? {
        guard let start = clock.range(of: "CALENDAR_ANCHOR=") else { return nil }
        let numbers = clock[start.upperBound...].prefix { $0.isNumber || $0 == "," }.split(separator: ",").compactMap { Int32($0) }
        return numbers.count == 4 ? Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]) : nil
    }

    /// `move position X Y` in a rule.
    static func movePosition(in rule: String) -> (x: Int32, y: Int32)? {
        guard let start = rule.range(of: "move position ") else { return nil }
        let numbers = rule[start.upperBound...].split(separator: " ").prefix(2).compactMap { Int32($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }

    /// The monitor's events up to the first `name` event for `popup`, that one included.
    static func events(_ events: EventStream, until name: MonitorEvent.Name, popup: String) throws -> [JSON] {
        var seen: [JSON] = []
        while true {
            let event = try events.next("a \"\(name.rawValue)\" event for \(popup) (after \(seen.map(\.text)))")
            seen.append(event)
            if event["event"]?.stringValue == name.rawValue, event["popup"]?.stringValue == popup { return seen }
        }
    }
}

/// What a recipe's comments tell the user to copy.
enum SwayRecipe {
    /// Every comment line of the recipe, without the "# " (a `#!` line skipped).
    static func comments(_ name: String) -> [String] {
        RecipeFiles.text(name).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0.hasPrefix("#") && !$0.hasPrefix("#!") }
            .map { String($0.dropFirst($0.hasPrefix("# ") ? 2 : 1)) }
    }

    /// The block indented by 4 spaces in the comments whose first line starts with `first`,
    /// as the user copies it: without the indentation, up to the block's end.
    static func block(_ name: String, startingWith first: String) throws -> String {
        let lines = comments(name)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("    " + first) }) else {
            throw HarnessError("\(name) shows no indented block starting with \"\(first)\"")
        }
        return lines[start...].prefix { $0.hasPrefix("    ") }.map { String($0.dropFirst(4)) }.joined(separator: "\n")
    }

    /// The one indented line that starts with `first`.
    static func line(_ name: String, startingWith first: String) throws -> String {
        let matches = comments(name).filter { $0.hasPrefix("    " + first) }
        guard matches.count == 1 else {
            throw HarnessError("\(name) shows \(matches.count) indented lines starting with \"\(first)\", not one")
        }
        return String(matches[0].dropFirst(4))
    }
}

/// A window in sway's tree.
struct SwayWindow: CustomStringConvertible {
    var id: Int64
    var pid: pid_t
    var type: String
    var rect: Rect
    var description: String { "\(type) \(id) of process \(pid) at \(rect)" }
}

/// The programs of one sway recipe test: waybar and what it runs, as the test's user, on the
/// test's sway and daemon.
final class SwayRecipeRun {
    let f: WaylandDaemonFixture
    private var waybar: BackgroundCtl?

    init(_ f: WaylandDaemonFixture) throws {
        self.f = f
        // ~/.local/share/clickaway/recipes, where an install puts config/recipes.
        let share = f.directory.appendingPathComponent(".local/share/clickaway")
        if !FileManager.default.fileExists(atPath: share.appendingPathComponent("recipes").path) {
            try FileManager.default.createDirectory(at: share, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: share.appendingPathComponent("recipes"), withDestinationURL: RecipeFiles.directory)
        }
    }

    /// The session's environment: the compositor's sockets, the daemon's runtime directory,
    /// HOME and XDG_CONFIG_HOME in the test's directory. No session bus, so no
    /// accessibility bus for GTK to look for.
    var programEnvironment: [String: String] {
        var environment = f.environment
        environment["HOME"] = f.directory.path
        environment["GDK_BACKEND"] = nil
        environment["NO_AT_BRIDGE"] = "1"
        environment["SHELL"] = "/bin/sh"
        return environment
    }

    /// Starts waybar with a bar of `height` at the top holding `clock` (the recipe's module)
    /// alone, at its right, in ~/.config/waybar/config, with Debian's default style; returns
    /// once sway has given the bar its place (the workspace starts below it) and the bar takes
    /// clicks: one on its empty left end no longer reaches the desktop below. (sway makes room
    /// for the bar before waybar has drawn it, and a click then goes to what is below.)
    func startWaybar(clock: String, height: Int32) throws -> ChildProcess {
        let directory = f.directory.appendingPathComponent("waybar")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = """
            {
                "position": "top",
                "height": \(height),
                "modules-right": ["clock"],
            \(clock.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
            }

            """
        try #require((try? JSONSerialization.jsonObject(with: Data(config.utf8))) != nil, "the bar's config is not JSON:\n\(config)")
        try config.write(to: directory.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let bar = try BackgroundCtl(f, command: ["waybar"], environment: programEnvironment)
        waybar = bar
        do {
            try eventually("waybar's bar to take the top \(height) pixels of the workspace", timeout: .seconds(20), every: .milliseconds(20)) {
                try bar.process.checkRunning(while: "starting")
                return try workspaceRect().y == height
            }
            try eventually("waybar's bar to take a click on its empty left end", timeout: .seconds(20), every: .milliseconds(50)) {
                try bar.process.checkRunning(while: "starting")
                let before = try f.below.clicks().count
                try f.click(10, height / 2)
                return try f.below.clicks().count == before
            }
            _ = try f.below.clicks()
            f.below.forget()
        } catch {
            throw HarnessError("\(error)\nwaybar's log:\n\(bar.process.logTail)")
        }
        return bar.process
    }

    /// The first output's current workspace.
    func workspaceRect() throws -> Rect {
        let tree = try f.compositor.tree()
        let output = tree["nodes"]?.arrayValue?.first { $0["name"]?.stringValue == f.output }
        guard let workspace = output?["nodes"]?.arrayValue?.first(where: { $0["type"]?.stringValue == "workspace" }),
              let rect = Self.rect(workspace["rect"]) else { throw HarnessError("no workspace on \(f.output): \(tree.text)") }
        return rect
    }

    /// The windows of sway's tree for which `matches` holds.
    func windows(_ matches: (JSON) -> Bool) throws -> [SwayWindow] {
        Self.windows(in: try f.compositor.tree(), matches)
    }

    /// The windows of `tree` (sway's `get_tree`) for which `matches` holds.
    static func windows(in tree: JSON, _ matches: (JSON) -> Bool) -> [SwayWindow] {
        var found: [SwayWindow] = []
        func walk(_ node: JSON) {
            if node["shell"] != nil, matches(node), let id = node["id"]?.intValue, let pid = node["pid"]?.intValue,
               let rect = Self.rect(node["rect"]) {
                found.append(SwayWindow(id: id, pid: pid_t(pid), type: node["type"]?.stringValue ?? "", rect: rect))
            }
            for child in (node["nodes"]?.arrayValue ?? []) + (node["floating_nodes"]?.arrayValue ?? []) { walk(child) }
        }
        walk(tree)
        return found
    }

    func calendars(_ title: String) throws -> [SwayWindow] {
        try windows { $0["app_id"]?.stringValue == "yad" && $0["name"]?.stringValue == title }
    }

    /// Waits for exactly one calendar window titled `title`, of a yad of this test's.
    func awaitCalendar(_ what: String, title: String) throws -> SwayWindow {
        var found: [SwayWindow] = []
        do {
            try eventually(what, timeout: .seconds(20), every: .milliseconds(20)) {
                try waybar?.process.checkRunning(while: "the calendar opened")
                found = try calendars(title)
                return !found.isEmpty
            }
        } catch {
            throw HarnessError("\(error)\nwaybar's log:\n\(waybar?.process.logTail ?? "no waybar")\nthe daemon's log:\n\(f.log)")
        }
        try #require(found.count == 1, "\(found.count) calendars are open: \(found)")
        try #require(calendarProcesses(title) == [found[0].pid], "the calendar is not the only yad of this test's: \(calendarProcesses(title))")
        return found[0]
    }

    func awaitNoCalendar(_ what: String, title: String) throws {
        try eventually("\(what) to be gone from sway's tree and its yad to end", timeout: .seconds(10), every: .milliseconds(20)) {
            try calendars(title).isEmpty && calendarProcesses(title).isEmpty
        }
    }

    /// The yad processes showing a calendar titled `title` on this test's sway.
    func calendarProcesses(_ title: String) -> [pid_t] { processes { $0.contains("--title=\(title)") && $0.hasPrefix("yad\0") } }

    func awaitScriptsEnded(_ script: String, _ what: String) throws {
        try eventually("\(what) to end", timeout: .seconds(10), every: .milliseconds(20)) { processes { $0.contains(script) }.isEmpty }
    }

    /// The processes on this test's sway (WAYLAND_DISPLAY is its socket) whose command line
    /// (arguments joined by NULs) satisfies `matches`.
    func processes(_ matches: (String) -> Bool) -> [pid_t] {
        let display = "WAYLAND_DISPLAY=\(f.compositor.waylandSocket)"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                  matches(String(decoding: cmdline, as: UTF8.self)),
                  let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == display }
        }.sorted()
    }

    /// Ends waybar, and whatever it started that still runs (a script, a yad).
    func cleanUp() {
        waybar?.process.stop()
        for pid in processes({ $0.contains("calendar") }) { kill(pid, SIGKILL) }
    }

    /// Whether the process runs (sway's `exec` makes it a child of init, which may leave it a
    /// zombie here).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.range(of: ") ", options: .backwards) else { return false }
        return !["Z", "X"].contains(stat[end.upperBound...].prefix(1))
    }

    private static func rect(_ json: JSON?) -> Rect? {
        guard let json, let x = json["x"]?.intValue, let y = json["y"]?.intValue,
              let width = json["width"]?.intValue, let height = json["height"]?.intValue else { return nil }
        return Rect(x: Int32(x), y: Int32(y), width: Int32(width), height: Int32(height))
    }
}
