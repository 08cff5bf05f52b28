import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The recipes in config/recipes, as they ship, with the real programs they name, started as
/// their headers say, under openbox in both X11 modes: a click inside leaves the program
/// alone, a click outside ends it the way the recipe says. (dzen2.toml runs in "Real
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

    @Test(arguments: XBackend.allCases) func yadCalendar(_ backend: XBackend) throws {
        let r = try run("yad.toml", backend)
        let (yad, output) = try r.start("yad", "exec yad --calendar --class=ClickawayCalendar --undecorated --no-buttons --on-top --skip-taskbar --mouse")
        defer { yad.stop() }
        let calendar = try r.awaitWindow("the calendar", of: yad) { $0.properties.windowClass == "ClickawayCalendar" }
        _ = try r.awaitEvent(.opened, popup: "yad-calendar")
        try r.click(calendar.rect.x + calendar.rect.width / 2, calendar.rect.y + 12)
        let quiet = try r.dismissalsSoFar().isEmpty
        #expect(yad.isRunning && quiet, "a click on the calendar ended it")
        try r.click(Self.outside.x, Self.outside.y)
        #expect(try r.awaitExit(yad, "close on WM_DELETE_WINDOW") == "exit status 252")
        #expect(r.read(output).isEmpty, "yad printed \(r.read(output))")
    }

    @Test(arguments: XBackend.allCases) func scratchTerminal(_ backend: XBackend) throws {
        let r = try run("xterm.toml", backend)
        let (xterm, _) = try r.start("xterm", "exec xterm -class Popup -geometry 80x20+200+200")
        defer { xterm.stop() }
        let window = try r.awaitWindow("the xterm", of: xterm) { $0.properties.windowClass == "Popup" }
        _ = try r.awaitEvent(.opened, popup: "scratch-terminal")
        try r.click(window.rect.x + 40, window.rect.y + 40)
        let quiet = try r.dismissalsSoFar().isEmpty
        #expect(xterm.isRunning && quiet, "a click in the xterm ended it")
        try r.click(Self.outside.x, Self.outside.y)
        _ = try r.awaitExit(xterm, "close on WM_DELETE_WINDOW")
        _ = try r.awaitEvent(.closed, popup: "scratch-terminal")
    }

    /// tint2's clock runs gsimplecal; the recipe anchors the clock (here the whole panel, a
    /// clock alone, measured as the recipe asks): a click on it goes to tint2, which runs
    /// gsimplecal again and so closes it, and dismisses nothing; a click elsewhere dismisses
    /// the calendar. gsimplecal finds a running calendar through a System V semaphore, one
    /// for the whole machine: the two modes run one after the other.
    @Test(.serialized, arguments: XBackend.allCases) func tint2AndGsimplecal(_ backend: XBackend) throws {
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
            clock_lclick_command = gsimplecal

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
