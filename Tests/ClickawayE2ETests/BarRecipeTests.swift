import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The bar recipes in config/recipes run with the bars they are for, set up in the recipes'
/// own words: the module or script a recipe's header tells the user to copy is read out of the
/// recipe file and given to the real program (polybar, a dzen2 bar), which runs the shipped
/// script; under openbox in the X11 modes.
@Suite("Bar recipes with their programs")
struct BarRecipeTests {
    static let modes: [XBackend] = [.grab, .shield, .auto]
    /// Outside every bar and calendar.
    static let outside = (x: Int32(640), y: Int32(400))
    /// Where the tests put the calendars.
    static let calendarAt = (x: 100, y: 100)

    static func isInPlace(_ w: ProgramsRun.Found) -> Bool {
        w.rect.x == Int32(calendarAt.x) && w.rect.y == Int32(calendarAt.y)
    }

    /// polybar-calendar.sh: polybar runs its `[module/date]` block as the recipe has it (the
    /// action tag around the label), and the shipped script, installed where the block says.
    /// A click on the date opens the calendar; a click on the calendar leaves it; a click
    /// outside dismisses it. Opened again, a second click on the date (its anchor) reaches
    /// polybar, whose second run of the script closes the calendar: nothing is dismissed, and
    /// no second calendar opens.
    @Test(arguments: modes) func polybarDateModuleTogglesTheCalendar(_ backend: XBackend) throws {
        let r = try ProgramsRun(RealProgramTests.Case(wm: .openbox, backend: backend), config: "[defaults]\ngrace_ms = 0\n")
        try RecipeSetup.installRecipes(r)
        let module = try RecipeSetup.block("polybar-calendar.sh", startingWith: "[module/date]")
        let barRect = Rect(x: 0, y: 0, width: 200, height: 24)
        // The bar holds the date module alone, at its left edge: the module is the bar's left
        // part, and the bar is the anchor the script is told.
        let bar = try Polybar(r, module: module, named: "date", rect: barRect, environment: [
            "CALENDAR_X": "\(Self.calendarAt.x)", "CALENDAR_Y": "\(Self.calendarAt.y)",
            "CALENDAR_ANCHOR": "\(barRect.x),\(barRect.y),\(barRect.width),\(barRect.height)",
        ])
        let date = (x: barRect.x + 10, y: barRect.y + Int32(barRect.height) / 2)
        let isCalendar = { (w: ProgramsRun.Found) in w.properties.windowClass == "Yad" && w.properties.title == "yad-calendar" }
        // yad maps its window where openbox places it, then moves it where it was told.
        let isCalendarInPlace = { (w: ProgramsRun.Found) in isCalendar(w) && Self.isInPlace(w) }

        try r.click(date.x, date.y)
        let calendar = try bar.step(r, "the first click on the date") {
            try r.awaitWindow("the calendar a click on polybar's date opens, at CALENDAR_X, CALENDAR_Y", of: bar.process, isCalendarInPlace)
        }
        _ = try r.awaitEvent(.opened, popup: "polybar-calendar")
        try r.click(calendar.rect.x + 100, calendar.rect.y + 12)
        #expect(try r.dismissalsSoFar().isEmpty, "a click on the calendar dismissed it")
        #expect(try r.openEntry("polybar-calendar") != nil, "a click on the calendar closed it")
        try r.click(Self.outside.x, Self.outside.y)
        let dismissed = try r.awaitEvent(.dismissed, popup: nil)
        #expect(dismissed["popups"]?.arrayValue?.first?.stringValue == "polybar-calendar", "\(dismissed.text)")
        try r.awaitGone("the dismissed calendar", isCalendar)
        try RecipeSetup.awaitScriptsEnded(r, "polybar-calendar.sh", "the script whose calendar was dismissed")

        try r.click(date.x, date.y)
        try r.awaitWindow("the calendar a click on the date opens again", of: bar.process, isCalendarInPlace)
        _ = try r.awaitEvent(.opened, popup: "polybar-calendar")
        try r.click(date.x, date.y)
        let events = try RecipeSetup.events(r, until: .closed, popup: "polybar-calendar")
        #expect(!events.contains { $0["event"]?.stringValue == MonitorEvent.Name.dismissed.rawValue },
                "the second click on the date dismissed the calendar instead of reaching polybar: \(events.map(\.text))")
        try r.awaitGone("the calendar the second click on the date closed", isCalendar)
        // Both runs of the script end: the second closed the first's calendar and opened none.
        try RecipeSetup.awaitScriptsEnded(r, "polybar-calendar.sh", "both runs of the script")
        #expect(try !r.viewable().contains(where: isCalendar), "a calendar is open after the toggle")
        let report = try r.f.report()
        #expect(report.open.isEmpty && report.waiting.isEmpty, "open: \(report.open.map(\.popup)), waiting: \(report.waiting.count)")
    }

    /// polybar.toml: polybar runs the `[module/popup-calendar]` block the recipe shows, whose
    /// script (polybar-scripts' popup-calendar.sh, not packaged: here the two things the
    /// recipe shows of it, its date and its yad line, less --close-on-unfocus as the recipe
    /// says) opens the calendar. A click elsewhere on the bar (the anchor) leaves it, so does
    /// a click on it; a click outside closes it.
    @Test(arguments: modes) func polybarScriptModuleCalendarStaysWhileTheBarIsUsed(_ backend: XBackend) throws {
        let r = try ProgramsRun(RealProgramTests.Case(wm: .openbox, backend: backend),
                                config: "[defaults]\ngrace_ms = 0\n\n" + RecipeFiles.text("polybar.toml"))
        let module = try RecipeSetup.block("polybar.toml", startingWith: "[module/popup-calendar]")
        var yad = try RecipeSetup.block("polybar.toml", startingWith: "yad --calendar")
        for (old, new) in [(" --close-on-unfocus", ""), ("--posx=X --posy=Y", "--posx=\(Self.calendarAt.x) --posy=\(Self.calendarAt.y)")] {
            try #require(yad.contains(old), "polybar.toml's yad line no longer says \(old)")
            yad = yad.replacingOccurrences(of: old, with: new)
        }
        let scripts = r.f.directory.appendingPathComponent("polybar-scripts")
        try FileManager.default.createDirectory(at: scripts, withIntermediateDirectories: true)
        let script = scripts.appendingPathComponent("popup-calendar.sh")
        try """
            #!/bin/sh
            case "$1" in
            --popup)
                \(yad) >/dev/null &
                ;;
            *)
                date +"%a %d %H:%M"
                ;;
            esac

            """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let barRect = Rect(x: 0, y: 0, width: 300, height: 24)
        let bar = try Polybar(r, module: module, named: "popup-calendar", rect: barRect)
        let isCalendar = { (w: ProgramsRun.Found) in w.properties.windowClass == "Yad" && w.properties.title == "yad-calendar" }
        // yad maps its window where openbox places it, then moves it where it was told.
        let isCalendarInPlace = { (w: ProgramsRun.Found) in isCalendar(w) && Self.isInPlace(w) }

        try r.click(barRect.x + 10, barRect.y + 12)
        let calendar = try bar.step(r, "the click on the module") {
            try r.awaitWindow("the calendar a click on the module opens, at its --posx, --posy", of: bar.process, isCalendarInPlace)
        }
        _ = try r.awaitEvent(.opened, popup: "polybar-calendar")
        // The bar's right end: no module there, but the bar is the anchor.
        try r.click(barRect.x + Int32(barRect.width) - 20, barRect.y + 12)
        try r.click(calendar.rect.x + 100, calendar.rect.y + 12)
        let dismissals = try r.dismissalsSoFar()
        #expect(dismissals.isEmpty, "a click on the bar or the calendar dismissed the calendar: \(dismissals.map(\.text))\n\(r.context)")
        #expect(try r.viewable().contains(where: isCalendar), "a click on the bar or the calendar closed it")
        try r.click(Self.outside.x, Self.outside.y)
        let dismissed = try r.awaitEvent(.dismissed, popup: nil)
        #expect(dismissed["popups"]?.arrayValue?.first?.stringValue == "polybar-calendar", "\(dismissed.text)")
        try r.awaitGone("the calendar closed by WM_DELETE_WINDOW", isCalendar)
        _ = try r.awaitEvent(.closed, popup: "polybar-calendar")
    }

    /// dzen2.toml: a dzen2 bar's clickable area runs the recipe's ~/bin/dzen-calendar, as
    /// the recipe shows it (placed on this 1280 px screen). A click on the calendar's body
    /// leaves it; a click outside kills dzen2.
    @Test(arguments: modes) func dzen2BarButtonCalendar(_ backend: XBackend) throws {
        let button = Rect(x: 700, y: 0, width: 100, height: 20)
        var config = "[defaults]\ngrace_ms = 0\n\n" + RecipeFiles.text("dzen2.toml")
        var script = try RecipeSetup.block("dzen2.toml", startingWith: "#!/bin/sh")
        for (old, new) in [("anchors = [ { rect = [1700, 0, 100, 20] } ]",
                            "anchors = [ { rect = [\(button.x), \(button.y), \(button.width), \(button.height)] } ]")] {
            try #require(config.contains(old), "dzen2.toml no longer says \(old)")
            config = config.replacingOccurrences(of: old, with: new)
        }
        try #require(script.contains("-x 1700"), "dzen2.toml's script no longer says -x 1700")
        script = script.replacingOccurrences(of: "-x 1700", with: "-x \(button.x)")
        let r = try ProgramsRun(RealProgramTests.Case(wm: .openbox, backend: backend), config: config)
        let cal = try ProgramRun.run(["sh", "-c", "command -v cal"], environment: r.environment)
        try #require(cal.status == 0, "the recipe's script runs cal, which is not installed (Debian: ncal)")
        let bin = r.f.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let calendarScript = bin.appendingPathComponent("dzen-calendar")
        try (script + "\n").write(to: calendarScript, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: calendarScript.path)

        // The bar: one clickable area, the recipe's ^ca(1, dzen-calendar), filling the button.
        let barProcess = try BackgroundCtl(r.f, command: [
            "sh", "-c", "echo '^ca(1, ~/bin/dzen-calendar)Calendar^ca()' | exec dzen2 -p -ta l -title-name clickaway-bar "
                + "-x \(button.x) -y \(button.y) -w \(button.width) -h \(button.height)",
        ], environment: RecipeSetup.programEnvironment(r))
        try r.awaitWindow("the dzen2 bar", of: barProcess.process) { $0.properties.title == "clickaway-bar" }
        let isTitle = { (w: ProgramsRun.Found) in w.properties.windowClass == "dzen" && w.properties.title == "clickaway-calendar" }

        // dzen2 draws its line once it has read it, which it does not announce: a click that
        // opened nothing within 5 s is made again (five times at most).
        try RecipeSetup.clickUntil("the dzen2 bar to run dzen-calendar", r, at: (button.x + 20, button.y + 10)) {
            try r.viewable().contains(where: isTitle)
        }
        let title = try r.awaitWindow("dzen2's calendar", isTitle)
        _ = try r.awaitEvent(.opened, popup: "dzen2-calendar")
        let x = r.f.client.connection
        let body = try r.awaitWindow("the calendar's body") {
            $0.overrideRedirect && $0.properties.windowClass == nil && x.sameClient($0.client, title.client)
        }
        try r.f.eventually("the body to join the calendar's family") {
            try r.openEntry("dzen2-calendar")?["members"]?.arrayValue?.count == 1
        }
        try r.click(body.rect.x + 50, body.rect.y + Int32(body.rect.height) / 2)
        #expect(try r.dismissalsSoFar().isEmpty, "a click on the calendar's body dismissed it")
        #expect(try r.viewable().contains(where: isTitle), "a click on the calendar's body closed it")
        try r.click(Self.outside.x, Self.outside.y)
        let dismissed = try r.awaitEvent(.dismissed, popup: nil)
        #expect(dismissed["popups"]?.arrayValue?.first?.stringValue == "dzen2-calendar", "\(dismissed.text)")
        try r.awaitGone("the killed calendar", isTitle)
        _ = try r.awaitEvent(.closed, popup: "dzen2-calendar")
        #expect(barProcess.process.isRunning, "the bar ended: \(barProcess.process.exit ?? "")")
    }

    /// popup-calendar.sh, run as its usage line says (`popup-calendar.sh X Y`): clicks on the
    /// calendar leave it; a click outside ends it, and the script prints "dismissed" and exits
    /// 1. (Its other end, a double click on a date, is GTK's: a loaded machine's double click
    /// is not always one.)
    @Test(arguments: modes) func popupCalendarScript(_ backend: XBackend) throws {
        let r = try ProgramsRun(RealProgramTests.Case(wm: .openbox, backend: backend), config: "[defaults]\ngrace_ms = 0\n")
        let usage = try RecipeSetup.block("popup-calendar.sh", startingWith: "popup-calendar.sh")
        try #require(usage == "popup-calendar.sh [X Y]", "popup-calendar.sh's usage line is now \(usage)")
        let isCalendar = { (w: ProgramsRun.Found) in w.properties.windowClass == "Yad" && w.properties.title == "clickaway-calendar" }
        let script = try BackgroundCtl(r.f, command: ["sh", RecipeFiles.directory.appendingPathComponent("popup-calendar.sh").path,
                                                      "\(Self.calendarAt.x)", "\(Self.calendarAt.y)"],
                                       environment: RecipeSetup.programEnvironment(r))
        let calendar = try r.awaitWindow("the script's calendar at the X Y given", of: script.process) {
            isCalendar($0) && Self.isInPlace($0)
        }
        _ = try r.awaitEvent(.opened, popup: nil)
        try r.click(calendar.rect.x + calendar.rect.width / 2, calendar.rect.y + 12)
        try r.click(calendar.rect.x + calendar.rect.width / 2, calendar.rect.y + calendar.rect.height / 2)
        #expect(try r.dismissalsSoFar().isEmpty, "a click on the calendar dismissed it")
        #expect(script.process.isRunning, "a click on the calendar ended the script: \(script.stdout)")
        try r.click(Self.outside.x, Self.outside.y)
        let status = try r.step("the click outside") { try script.exitStatus() }
        #expect(status == 1, "\(script.stdout)\n\(script.process.logTail)")
        #expect(script.stdout == "dismissed\n")
        try r.awaitGone("the dismissed calendar", isCalendar)
    }
}

/// polybar, started with a bar of one module, the one a recipe shows.
struct Polybar {
    let process: ChildProcess
    let background: BackgroundCtl

    /// Starts polybar with a bar at `rect` holding `module` (a recipe's `[module/NAME]`
    /// block) alone, at its left; returns once polybar has drawn the module (its log says so:
    /// polybar takes clicks on a module from then on).
    init(_ r: ProgramsRun, module: String, named name: String, rect: Rect, environment: [String: String] = [:]) throws {
        let config = r.work.appendingPathComponent("polybar.ini")
        try """
            [bar/clickaway]
            width = \(rect.width)
            height = \(rect.height)
            offset-x = \(rect.x)
            offset-y = \(rect.y)
            modules-left = \(name)

            \(module)

            """.write(to: config, atomically: true, encoding: .utf8)
        background = try BackgroundCtl(r.f, command: ["polybar", "-l", "trace", "-c", config.path, "clickaway"],
                                       environment: RecipeSetup.programEnvironment(r).merging(environment) { $1 })
        process = background.process
        let bar = try r.awaitWindow("polybar's bar", of: process) { $0.properties.windowClass == "Polybar" }
        try #require(bar.rect == rect, "polybar's bar is at \(bar.rect), not at \(rect)")
        // Its trace log has each drawing of the bar's left part ("renderer: flush(1
        // geom=84x24+0+0, ..."): once it is wider than the 20 px the tests click into, the
        // module is drawn, and polybar takes clicks on it (a script module's first drawing
        // may come before the script's output, and be empty).
        let log = process.logPath
        try eventually("polybar to draw its module", timeout: .seconds(15), every: .milliseconds(20)) {
            try process.checkRunning(while: "drawing its bar")
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").contains { line in
                guard let flush = line.range(of: "renderer: flush(1 geom="),
                      let width = Int(line[flush.upperBound...].prefix { $0.isNumber }) else { return false }
                return width > 20
            }
        }
    }

    /// `body`'s result; its error with polybar's log beside the daemon's.
    func step<T>(_ r: ProgramsRun, _ name: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw HarnessError("\(name): \(error)\n\(process.logTail)\n\(r.context)")
        }
    }
}

extension ProgramsRun {
    /// `body`'s result; its error with what was being done and the daemon's log.
    func step<T>(_ name: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw HarnessError("\(name): \(error)\n\(context)")
        }
    }
}

/// What a recipe's header comment tells the user to copy, and what its programs run with.
enum RecipeSetup {
    /// The recipe's header comment, up to its first line that is not a comment, without the
    /// "# " (a `#!` line skipped).
    static func comment(_ name: String) -> [String] {
        var lines: [String] = []
        for line in RecipeFiles.text(name).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#!") { continue }
            guard line.hasPrefix("#") else { break }
            lines.append(String(line.dropFirst(line.hasPrefix("# ") ? 2 : 1)))
        }
        return lines
    }

    /// The block indented in the header comment whose first line starts with `first`, as the
    /// user copies it: without the comment's indentation (4 spaces), up to the block's end.
    static func block(_ name: String, startingWith first: String) throws -> String {
        let lines = comment(name)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("    " + first) }) else {
            throw HarnessError("\(name)'s header has no indented block starting with \"\(first)\"")
        }
        return lines[start...].prefix { $0.hasPrefix("    ") }.map { String($0.dropFirst(4)) }.joined(separator: "\n")
    }

    /// The shipped recipes where an install puts them for the test's user:
    /// ~/.local/share/clickaway/recipes is config/recipes.
    static func installRecipes(_ r: ProgramsRun) throws {
        let share = r.f.directory.appendingPathComponent(".local/share/clickaway")
        try FileManager.default.createDirectory(at: share, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: share.appendingPathComponent("recipes"), withDestinationURL: RecipeFiles.directory)
    }

    /// The programs' environment (ProgramsRun's: the display, HOME, GTK on X) beside the
    /// daemon's runtime directory; BackgroundCtl puts the built clickawayctl first on PATH.
    static func programEnvironment(_ r: ProgramsRun) -> [String: String] {
        var environment = r.environment
        for (key, value) in r.f.environment where key.hasPrefix("XDG_") { environment[key] = value }
        environment["SHELL"] = "/bin/sh"
        return environment
    }

    /// The processes running `script` on this test's display (the scripts a bar started).
    static func scripts(_ r: ProgramsRun, _ script: String) -> [String] {
        let display = "DISPLAY=\(r.f.xvfb.display)"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.filter { pid in
            guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                  String(decoding: cmdline, as: UTF8.self).contains(script),
                  let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == display }
        }
    }

    static func awaitScriptsEnded(_ r: ProgramsRun, _ script: String, _ what: String) throws {
        try eventually("\(what) to end", timeout: .seconds(10), every: .milliseconds(20)) { scripts(r, script).isEmpty }
    }

    /// Waits (bounded) until `program` has a child process that runs another program than
    /// it does (forked and then exec'd).
    static func awaitChild(of program: ChildProcess, _ what: String) throws {
        func stat(_ pid: String) -> (command: String, parent: String)? {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
            let text = String(decoding: data, as: UTF8.self)
            guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            return fields.count > 1 ? (String(text[text.index(after: open)..<close]), String(fields[1])) : nil
        }
        let parent = String(program.pid)
        try eventually("\(what) to start", timeout: .seconds(10), every: .milliseconds(20)) {
            try program.checkRunning(while: "starting \(what)")
            guard let own = stat(parent)?.command else { return false }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.contains { pid in
                guard pid.allSatisfy(\.isNumber), let s = stat(pid) else { return false }
                return s.parent == parent && s.command != own
            }
        }
    }

    /// The monitor's events up to the first `name` event for `popup`, that one included.
    static func events(_ r: ProgramsRun, until name: MonitorEvent.Name, popup: String) throws -> [JSON] {
        var events: [JSON] = []
        while true {
            let event = try r.events.next("a \"\(name.rawValue)\" event for \(popup)")
            events.append(event)
            if event["event"]?.stringValue == name.rawValue, event["popup"]?.stringValue == popup { return events }
        }
    }

    static func clickUntil(_ what: String, _ r: ProgramsRun, at point: (x: Int32, y: Int32), _ done: () throws -> Bool) throws {
        for _ in 0..<5 {
            try r.click(point.x, point.y)
            if (try? eventually(what, timeout: .seconds(5), every: .milliseconds(20), done)) != nil { return }
        }
        throw HarnessError("timed out after five clicks waiting for \(what)\n\(r.context)")
    }
}
