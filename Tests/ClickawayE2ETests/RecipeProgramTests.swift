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
/// programs"; eww is not in Debian, and its recipes say so; tint2.toml is not run yet:
/// tint2 17 under Xvfb ran no clock command on an XTest click.)
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
}
