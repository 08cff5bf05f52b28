import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The recipes in config/recipes, as they ship, with the real programs they name, started as
/// their headers say (the commands and settings read out of the recipe files), under openbox
/// in the X11 modes: a click inside leaves the program alone, a click outside ends it the way
/// the recipe says. (The bars' recipes and dzen2.toml run in "Bar recipes with their
/// programs"; eww is not in Debian, and its recipes say so.)
@Suite("Recipes with their programs")
struct RecipeProgramTests {
    /// Outside every program's window.
    static let outside = (x: Int32(640), y: Int32(40))

    func run(_ recipe: String, _ backend: XBackend, replacing: [(String, String)] = []) throws -> ProgramsRun {
        var config = "[defaults]\ngrace_ms = 0\n\n" + RecipeFiles.text(recipe)
        for (old, new) in replacing {
            try #require(config.contains(old), "\(recipe) no longer says \(old)")
            config = config.replacingOccurrences(of: old, with: new)
        }
        return try ProgramsRun(RealProgramTests.Case(wm: .openbox, backend: backend), config: config)
    }

    /// Runs `program` as the recipe says; a click at `inside` (relative to its window) leaves
    /// it, a click outside ends it. Returns its exit and what it printed.
    /// `dropsCloseRequests`: the program now and then ignores a WM_DELETE_WINDOW (xterm: seen
    /// about once in 15 runs, the daemon's request sent and no hangup of its shell); once
    /// the daemon counts the window open again, a second click outside must end it.
    func insideKeepsOutsideEnds(_ r: ProgramsRun, _ program: String, windowClass: String, popup: String,
                                inside: (x: Int32, y: Int32), dropsCloseRequests: Bool = false,
                                ready: (ChildProcess) throws -> Void = { _ in }) throws
        -> (exit: String, output: String) {
        let (process, output) = try r.start(windowClass, "exec \(program)")
        defer { process.stop() }
        let window = try r.awaitWindow("the \(windowClass) window", of: process) { $0.properties.windowClass == windowClass }
        _ = try r.awaitEvent(.opened, popup: popup)
        try ready(process)
        try r.click(window.rect.x + inside.x, window.rect.y + inside.y)
        let quiet = try r.dismissalsSoFar().isEmpty
        #expect(process.isRunning && quiet, "a click on \(popup) ended it")
        try r.click(Self.outside.x, Self.outside.y)
        if dropsCloseRequests, (try? r.awaitExit(process, "close on WM_DELETE_WINDOW", timeout: .seconds(4))) == nil {
            try r.step("the window counted open again") { _ = try r.awaitEvent(.opened, popup: popup) }
            try r.click(Self.outside.x, Self.outside.y)
        }
        let exit = try r.step("the click outside") { try r.awaitExit(process, "close on WM_DELETE_WINDOW") }
        return (exit, r.read(output))
    }

    @Test(arguments: BarRecipeTests.modes) func yadCalendar(_ backend: XBackend) throws {
        let r = try run("yad.toml", backend)
        let ended = try insideKeepsOutsideEnds(
            r, try RecipeSetup.block("yad.toml", startingWith: "yad --calendar"),
            windowClass: "ClickawayCalendar", popup: "yad-calendar", inside: (100, 12))
        #expect(ended.exit == "exit status 252")
        #expect(ended.output.isEmpty, "yad printed \(ended.output)")
    }

    @Test(arguments: BarRecipeTests.modes) func scratchTerminal(_ backend: XBackend) throws {
        let r = try run("xterm.toml", backend)
        _ = try insideKeepsOutsideEnds(r, try RecipeSetup.block("xterm.toml", startingWith: "xterm -class"), windowClass: "Popup",
                                       popup: "scratch-terminal", inside: (40, 40), dropsCloseRequests: true) { xterm in
            // xterm answers WM_DELETE_WINDOW by hanging up its shell, and ends when the shell
            // does: a hangup before its child has become the shell can be lost.
            try RecipeSetup.awaitChild(of: xterm, "xterm's shell")
        }
        _ = try r.awaitEvent(.closed, popup: "scratch-terminal")
    }

    /// tint2's clock runs gsimplecal; the recipe anchors the clock (here the whole panel, a
    /// clock alone, measured as the recipe asks): a click on it goes to tint2, which runs
    /// gsimplecal again and so closes it, and dismisses nothing; a click elsewhere dismisses
    /// the calendar. gsimplecal finds a running calendar through a System V semaphore, one
    /// for the whole machine: the modes run one after the other.
    @Test(.serialized, arguments: BarRecipeTests.modes) func tint2AndGsimplecal(_ backend: XBackend) throws {
        let panelRect = Rect(x: 1180, y: 690, width: 100, height: 30)
        let r = try run("tint2.toml", backend, replacing: [(
            "anchors = [ { rect = [1840, 1050, 80, 30] } ]",
            "anchors = [ { rect = [\(panelRect.x), \(panelRect.y), \(panelRect.width), \(panelRect.height)] } ]")])
        let rc = r.work.appendingPathComponent("tint2rc")
        try """
            panel_items = C
            panel_size = \(panelRect.width) \(panelRect.height)
            panel_position = bottom right horizontal
            time1_format = %H:%M
            \(try RecipeSetup.block("tint2.toml", startingWith: "clock_lclick_command"))

            """.write(to: rc, atomically: true, encoding: .utf8)
        let (tint2, _) = try r.start("tint2", "exec tint2 -c \(rc.path)")
        defer { tint2.stop() }
        let panel = try r.awaitWindow("tint2's panel", of: tint2) { $0.properties.windowClass == "Tint2" }
        try #require(panel.rect == panelRect, "tint2's panel is at \(panel.rect), not at \(panelRect)")
        // The clock starts at the panel's left edge (its text is about 40 px wide).
        let clock = (x: panel.rect.x + 15, y: panel.rect.y + panel.rect.height / 2)
        let isCalendar = { (w: ProgramsRun.Found) in w.properties.windowClass == "Gsimplecal" }

        // tint2 takes clicks only once it has laid out its clock, which it does not announce:
        // a click that changed nothing within 5 s is made again (five times at most).
        let viewable = { try r.viewable().contains(where: isCalendar) }
        try clickUntil("tint2 to open gsimplecal", r, at: clock) { try viewable() }
        _ = try r.awaitEvent(.opened, popup: "gsimplecal")
        try clickUntil("tint2 to close gsimplecal", r, at: clock) { try !viewable() }
        _ = try r.awaitEvent(.closed, popup: "gsimplecal")
        #expect(try r.dismissalsSoFar().isEmpty, "a click on the clock dismissed the calendar instead of reaching tint2")

        try clickUntil("tint2 to open gsimplecal again", r, at: clock) { try viewable() }
        _ = try r.awaitEvent(.opened, popup: "gsimplecal")
        try r.click(Self.outside.x, Self.outside.y)
        let dismissed = try r.awaitEvent(.dismissed, popup: nil)
        #expect(dismissed["popups"]?.arrayValue?.first?.stringValue == "gsimplecal")
        try r.awaitGone("gsimplecal", isCalendar)
    }

    func clickUntil(_ what: String, _ r: ProgramsRun, at point: (x: Int32, y: Int32), _ done: () throws -> Bool) throws {
        for _ in 0..<5 {
            try r.click(point.x, point.y)
            if (try? eventually(what, timeout: .seconds(5), every: .milliseconds(20), done)) != nil { return }
        }
        throw HarnessError("timed out after five clicks waiting for \(what)\n\(r.context)")
    }
}
