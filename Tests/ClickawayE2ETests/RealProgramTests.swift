import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayX11
import Foundation
import ProcessSupport
import SystemPackage
import Testing
import XTestHarness

/// Popups that are real programs with windows of their own, and other programs' menus and
/// launchers beside them, under openbox and i3 in the three X11 modes: yad's form with its
/// combo dropdown (hanging below the form) and its file chooser, rofi, jgmenu, dmenu, xterm's
/// Ctrl-click menu, dzen2's title and body as one popup. Each is judged by what the program
/// does (what it prints, runs or whether it is still there), not by the daemon's events alone.
@Suite("Real programs")
struct RealProgramTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let wm: WindowManagerKind
        let backend: XBackend
        var testDescription: String { "\(wm) \(backend.rawValue)" }
    }

    static let cases = [WindowManagerKind.openbox, .i3].flatMap { wm in
        [XBackend.grab, .shield, .auto].map { Case(wm: wm, backend: $0) }
    }

    /// The dzen2 recipe as it ships, after popups of the tests' own.
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "form"
        window = { class = "Yad" }

        [[popup]]
        name = "pop"
        window = { class = "Pop" }

        [[popup]]
        name = "scratch-terminal"
        window = { class = "Popup", instance = "xterm" }

        """ + RecipeFiles.text("dzen2.toml")

    /// Clear of every program's window (rofi's middle of the screen, jgmenu's and dzen2's
    /// corners): a popup that stays open while other programs run their menus.
    static let popRect = Rect(x: 1000, y: 580, width: 250, height: 120)
    /// Outside every window: a click here is outside every popup.
    static let nowhere = (x: Int32(640), y: Int32(700))

    @Test(arguments: cases) func programsWorkAsWithoutClickaway(_ c: Case) throws {
        let run = try ProgramsRun(c)
        try run.step("yad form", run.yadFormKeepsItsDropdownAndFileChooser)
        try run.step("rofi", run.rofiTakesItsClicks)
        try run.step("jgmenu", run.jgmenuRunsTheItemClicked)
        try run.step("dmenu", run.dmenuPrintsWhatIsTyped)
        try run.step("xterm menu", run.xtermMenuChoosesItsItem)
        try run.step("dzen2", run.dzen2TitleAndBodyAreOnePopup)
    }
}

/// The config/recipes files, as they ship.
enum RecipeFiles {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/recipes")

    static func text(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? "# \(name) is missing\n"
    }
}

/// One case: the daemon on Xvfb under a window manager, its monitor, and real programs run
/// one after another.
final class ProgramsRun {
    let f: DaemonFixture
    let c: RealProgramTests.Case
    let events: EventStream
    let work: URL

    init(_ c: RealProgramTests.Case, config: String = RealProgramTests.config) throws {
        self.c = c
        f = try DaemonFixture(config: config, windowManager: c.wm, backend: c.backend)
        work = f.directory.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try f.startDaemon()
        events = try f.monitor()
    }

    func step(_ name: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            throw HarnessError("\(name): \(error)\n\(context)")
        }
    }

    var context: String {
        "\(c.testDescription); \(f.windowManager?.logTail ?? "")\nthe daemon's status:\n\(statusText)\n"
            + "the windows mapped, top first:\n\(stackingText)\n\(lastClickText)the daemon's log:\n\(f.log)"
    }

    /// Where `click` last clicked, for `lastClickText`.
    private var lastClick: (x: Int32, y: Int32)?

    /// What `clickawayctl hit` says of the last click's point now: whether another program
    /// holds the pointer, and what the daemon would decide there.
    private var lastClickText: String {
        guard let (x, y) = lastClick else { return "" }
        guard let hit = try? f.ctl(["hit", "\(x)", "\(y)"], limit: .seconds(10)) else { return "clickawayctl hit \(x) \(y) did not run\n" }
        return "clickawayctl hit \(x) \(y) (the last click's point), now:\n\(hit.stdout)\(hit.stderr)"
    }

    /// The shield and its holes, the grabs held, the open popups and their families: where a
    /// click that did not do what it should went, with `stackingText`.
    private var statusText: String {
        do { return try f.status().text } catch { return "(no answer: \(error))" }
    }

    /// Every viewable top-level, top first: its rectangle, whether it is override-redirect or
    /// input-only, and its client's class and title.
    private var stackingText: String {
        let x = f.client.connection
        guard let tree = try? x.queryTree(x.root) else { return "(the tree could not be read)" }
        return tree.children.reversed().compactMap { top -> String? in
            guard let attributes = try? x.getWindowAttributes(top), attributes.mapState == .viewable else { return nil }
            let rect = (try? x.rootRect(top)).map { "\($0)" } ?? "?"
            let client = (try? x.findClient(of: top, overrideRedirect: attributes.overrideRedirect))?.client ?? top
            let properties = try? x.windowProperties(client)
            return "0x\(String(top, radix: 16)) \(rect)\(attributes.overrideRedirect ? " override-redirect" : "")"
                + "\(attributes.windowClass == .inputOutput ? "" : " input-only")"
                + " class=\(properties?.windowClass ?? "-") title=\(properties?.title ?? "-")"
        }.joined(separator: "\n")
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = f.xvfb.display
        env["WAYLAND_DISPLAY"] = nil
        env["GDK_BACKEND"] = "x11"
        env["HOME"] = f.directory.path
        env["NO_AT_BRIDGE"] = "1"
        return env
    }

    /// A program run in `work`, its standard output kept in a file of its own.
    func start(_ name: String, _ shell: String) throws -> (program: ChildProcess, output: String) {
        let output = work.appendingPathComponent("\(name).out").path
        let file = try FileDescriptor.open(output, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: .ownerReadWrite)
        defer { try? file.close() }
        let program = try ChildProcess(["sh", "-c", "cd \"$1\" && \(shell)", name, work.path], environment: environment, stdout: file)
        return (program, output)
    }

    func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    // MARK: - Windows as the X server has them

    struct Found {
        var top: WindowID
        var client: WindowID
        var rect: Rect
        var properties: WindowMatch.Properties
        var overrideRedirect: Bool
    }

    /// The viewable top-level windows, bottom to top, with their clients and properties.
    func viewable() throws -> [Found] {
        let x = f.client.connection
        return try x.queryTree(x.root).children.compactMap { top in
            guard let attributes = try? x.getWindowAttributes(top), attributes.mapState == .viewable,
                  attributes.windowClass == .inputOutput,
                  let client = (try? x.findClient(of: top, overrideRedirect: attributes.overrideRedirect))?.client,
                  let properties = try? x.windowProperties(client), let rect = try? x.rootRect(client) else { return nil }
            return Found(top: top, client: client, rect: rect, properties: properties, overrideRedirect: attributes.overrideRedirect)
        }
    }

    /// Waits (bounded) for a viewable window that `matches`; `program` must still run.
    @discardableResult
    func awaitWindow(_ what: String, of program: ChildProcess? = nil, timeout: Duration = .seconds(30),
                     _ matches: (Found) -> Bool) throws -> Found {
        var found: Found?
        try eventually(what, timeout: timeout, every: .milliseconds(20)) {
            if let program, !program.isRunning { throw HarnessError("\(program.name) ended before showing \(what)\n\(program.logTail)") }
            found = try viewable().last(where: matches)
            return found != nil
        }
        return found!
    }

    func awaitGone(_ what: String, timeout: Duration = .seconds(10), _ matches: @escaping (Found) -> Bool) throws {
        try eventually("\(what) to go", timeout: timeout, every: .milliseconds(20)) { try !viewable().contains(where: matches) }
    }

    func awaitExit(_ program: ChildProcess, _ what: String, timeout: Duration = .seconds(10)) throws -> String {
        try eventually("\(program.name) to \(what)", timeout: timeout, every: .milliseconds(20)) { !program.isRunning }
        return program.exit ?? "?"
    }

    func awaitOutput(_ path: String, _ what: String, timeout: Duration = .seconds(10)) throws -> String {
        try eventually(what, timeout: timeout, every: .milliseconds(20)) { !read(path).isEmpty }
        return read(path)
    }

    func awaitEvent(_ name: MonitorEvent.Name, popup: String) throws -> JSON {
        while true {
            let event = try events.await(name)
            if event["popup"]?.stringValue == popup { return event }
        }
    }

    func openEntry(_ popup: String) throws -> JSON? {
        try f.status()["open"]?.arrayValue?.first { $0["popup"]?.stringValue == popup }
    }

    /// The dismissals the monitor has sent so far, without waiting for more.
    func dismissalsSoFar() throws -> [JSON] {
        try f.sync()
        var dismissed: [JSON] = []
        while let event = try? events.next("more events", timeoutMs: 0) {
            if event["event"]?.stringValue == MonitorEvent.Name.dismissed.rawValue { dismissed.append(event) }
        }
        return dismissed
    }

    /// In shield mode, the shield is below `window` (another program's menu, mapped after it)
    /// once the daemon has handled its mapping: it never covers it.
    func expectNotCoveredByTheShield(_ window: Found, _ what: String) throws {
        guard c.backend == .shield else { return }
        try f.sync()
        guard let shield = try f.status()["shield"]?["window"]?.stringValue.flatMap({ UInt32($0.dropFirst(2), radix: 16) }),
              try f.status()["shield"]?["mapped"]?.boolValue == true else {
            Issue.record("the shield is not mapped while a popup is open: \(try f.status().text)")
            return
        }
        let x = f.client.connection
        let stacking = try x.queryTree(x.root).children
        let shieldIndex = try #require(stacking.firstIndex(of: shield))
        let index = try #require(stacking.firstIndex(of: window.top))
        #expect(index > shieldIndex, "the shield covers \(what) (\(hex(window.top)))")
    }

    /// Clicks through XTest, with the daemon settled before the press as a person's click is.
    func click(_ x: Int32, _ y: Int32, button: UInt8 = 1) throws {
        lastClick = (x, y)
        try f.input.motion(x: x, y: y)
        try f.sync()
        try f.input.press(button)
        try f.input.release(button)
        try f.sync()
    }

    /// Keys through XTest (xdotool's names), to the window that has the keyboard.
    func keys(_ arguments: [String]) throws {
        let run = try ProgramRun.run(["xdotool"] + arguments, environment: environment)
        try #require(run.status == 0, "xdotool \(arguments): \(run.stderr)")
    }

    // MARK: - The cases

    /// yad's form is the popup. Its combo dropdown (override-redirect, transient for the form,
    /// hanging below it) takes the item clicked below the form; its "Select file" dialog (same
    /// WM_CLASS as the form) takes a click on a file without the form being dismissed; OK then
    /// prints both values. `hit` at the dropdown item says the click goes to yad's grab and
    /// that the dropdown belongs to the form.
    func yadFormKeepsItsDropdownAndFileChooser() throws {
        try "picked\n".write(to: work.appendingPathComponent("pick.txt"), atomically: true, encoding: .utf8)
        let (yad, output) = try start("yad", "exec yad --form --field=File:FL --field=Choice:CB '' 'one!two!three'")
        defer { yad.stop() }
        let form = try awaitWindow("yad's form", of: yad) { $0.properties.windowClass == "Yad" && $0.properties.title == "YAD" }
        _ = try awaitEvent(.opened, popup: "form")
        let r = form.rect
        let fieldX = r.x + (60 + r.width) / 2

        // The dropdown: "one" is selected, so GTK puts it over the combo and the list hangs below.
        try click(fieldX, r.y + 57)
        let dropdown = try awaitWindow("yad's combo dropdown", of: yad) { $0.overrideRedirect && $0.properties.types.contains("combo") }
        #expect(dropdown.properties.transientFor == form.client, "\(dropdown.properties)")
        try expectNotCoveredByTheShield(dropdown, "yad's dropdown")
        let item = (x: dropdown.rect.x + dropdown.rect.width / 2, y: dropdown.rect.y + dropdown.rect.height - 12)
        try #require(item.y >= r.y + r.height, "the dropdown's last item \(item) is not below the form \(r): \(dropdown.rect)")
        let hit = try f.ctl(["hit", "\(item.x)", "\(item.y)"])
        #expect(hit.stdout.contains("grab:     another program has grabbed the pointer"), "\(hit.stdout)")
        try f.eventually("the dropdown to join the form's family") {
            try openEntry("form")?["members"]?.arrayValue?.contains { $0.stringValue == hex(dropdown.client) } == true
        }
        let family = try awaitEvent(.family, popup: "form")
        #expect(family["members"]?.arrayValue?.isEmpty == false)
        let hitJSON = try JSON.parse(try f.ctl(["hit", "--json", "\(item.x)", "\(item.y)"]).stdout)
        #expect(hitJSON["hit"]?["member"]?.stringValue == hex(dropdown.client), "\(hitJSON.text)")
        // GTK's dropdown is transient for the form: that is what took it in, and every report says so.
        #expect(hitJSON["hit"]?["tie"]?.stringValue == "transient-for", "\(hitJSON.text)")
        #expect(family["ties"]?[hex(dropdown.client)]?.stringValue == "transient-for", "\(family.text)")
        #expect(hitJSON["grab"]?.stringValue != nil, "\(hitJSON.text)")
        try click(item.x, item.y)
        try awaitGone("the dropdown") { $0.client == dropdown.client }

        // The file chooser: a managed dialog with yad's class, transient for the form.
        try click(fieldX, r.y + 18)
        let chooser = try awaitWindow("yad's file chooser", of: yad) { $0.properties.title == "Select file" }
        #expect(chooser.properties.windowClass == "Yad" && chooser.properties.transientFor == form.client, "\(chooser.properties)")
        try f.eventually("the file chooser to join the form's family") {
            try openEntry("form")?["members"]?.arrayValue?.contains { $0.stringValue == hex(chooser.client) } == true
        }
        let popups = try f.openPopups()
        #expect(popups.filter { $0 == "form" }.count == 1, "the file chooser counts as a second form: \(popups)")
        // A click on the first file of the list (the working directory's pick.txt).
        try click(chooser.rect.x + 225, chooser.rect.y + 83)
        #expect(yad.isRunning, "a click in the file chooser ended yad: \(yad.exit ?? "")")
        #expect(try openEntry("form") != nil, "a click in the file chooser dismissed the form")
        // The click chose the file; Return opens it. Not the path typed into the location bar:
        // on a loaded machine part of it went missing while GTK's completion popup came and
        // went (seen in a screenshot of a failed run), and the chooser stayed.
        try keys(["key", "Return"])
        try awaitGone("the file chooser") { $0.client == chooser.client }

        try click(r.x + r.width - 30, r.y + r.height - 22)
        let exit = try awaitExit(yad, "exit after OK")
        #expect(exit == "exit status 0", "yad: \(exit)")
        #expect(read(output) == work.appendingPathComponent("pick.txt").path + "|three|\n", "yad printed \(read(output))")
        #expect(try dismissalsSoFar().isEmpty, "something was dismissed")
    }

    /// Runs `body` with a popup of the tests' own open beside it, as another program's menu
    /// runs; the popup must still be open afterwards, and is closed then.
    func withPopOpen(_ program: String, _ body: () throws -> Void) throws {
        let pop = try f.window(RealProgramTests.popRect, class: "Pop")
        _ = try awaitEvent(.opened, popup: "pop")
        defer { try? f.client.destroy(pop) }
        try body()
        try expectPopStillOpen(pop, after: program)
        try f.client.destroy(pop)
        _ = try awaitEvent(.closed, popup: "pop")
    }

    private func expectPopStillOpen(_ pop: TestWindow, after what: String) throws {
        try f.client.drain()
        #expect(f.client.deleteRequests(pop) == 0, "\(what) dismissed the popup")
        #expect(try openEntry("pop") != nil, "\(what) closed the popup")
    }

    /// rofi grabs the pointer: a click on an entry chooses it (set so here: rofi's default is a
    /// double click, whose interval a loaded machine can miss), and a click outside it ends
    /// rofi, in every mode, without dismissing the popup open beside it.
    func rofiTakesItsClicks() throws {
        try withPopOpen("clicks rofi took") {
            for (entry, expected) in [("b", "b\n"), (nil, "")] {
                let (rofi, output) = try start("rofi", "printf 'a\\nb\\nc\\n' | exec rofi -dmenu -me-select-entry '' -me-accept-entry MousePrimary")
                defer { rofi.stop() }
                let window = try awaitWindow("rofi's window", of: rofi) { $0.properties.windowClass == "Rofi" }
                try expectNotCoveredByTheShield(window, "rofi")
                if entry != nil {
                    let point = (x: window.rect.x + 80, y: window.rect.y + 66)
                    let hit = try f.ctl(["hit", "\(point.x)", "\(point.y)"])
                    #expect(hit.stdout.contains("grab:"), "hit does not say rofi holds the pointer: \(hit.stdout)")
                    try click(point.x, point.y)
                } else {
                    try click(RealProgramTests.nowhere.x, RealProgramTests.nowhere.y)
                }
                let exit = try awaitExit(rofi, "exit after the click")
                #expect(exit == (entry == nil ? "exit status 1" : "exit status 0"), "rofi: \(exit)")
                #expect(read(output) == expected, "rofi printed \(read(output))")
            }
        }
    }

    /// jgmenu grabs the pointer and runs the item clicked.
    func jgmenuRunsTheItemClicked() throws {
        let rc = work.appendingPathComponent("jgmenurc")
        try """
            stay_alive = 0
            position_mode = fixed
            menu_margin_x = 100
            menu_margin_y = 100
            menu_halign = left
            menu_valign = top

            """.write(to: rc, atomically: true, encoding: .utf8)
        let ran = work.appendingPathComponent("jgmenu-ran").path
        // Started once the popup is open, as rofi and dmenu are: the shield stays below the
        // menus mapped after it, and covers what was there before.
        try withPopOpen("a click jgmenu took") {
            let (jgmenu, _) = try start("jgmenu",
                                        "printf 'Item A,echo A > \(ran)\\nItem B,echo B > \(ran)\\n' | exec jgmenu --simple --config-file=\(rc.path)")
            defer { jgmenu.stop() }
            let menu = try awaitWindow("jgmenu's menu", of: jgmenu) { $0.properties.windowClass == "jgmenu" }
            try expectNotCoveredByTheShield(menu, "jgmenu")
            try click(menu.rect.x + 50, menu.rect.y + 48)
            #expect(try awaitOutput(ran, "jgmenu to run Item B") == "B\n")
            _ = try awaitExit(jgmenu, "exit after running the item")
        }
    }

    /// dmenu grabs the keyboard only and takes no clicks: what is typed is printed.
    func dmenuPrintsWhatIsTyped() throws {
        try withPopOpen("dmenu") {
            let (dmenu, output) = try start("dmenu", "printf 'a\\nb\\n' | exec dmenu")
            defer { dmenu.stop() }
            let bar = try awaitWindow("dmenu's bar", of: dmenu) { $0.properties.windowClass == "dmenu" }
            try expectNotCoveredByTheShield(bar, "dmenu")
            try keys(["key", "b", "Return"])
            #expect(try awaitExit(dmenu, "exit after Return") == "exit status 0")
            #expect(read(output) == "b\n", "dmenu printed \(read(output))")
        }
    }

    /// xterm as the popup (the xterm recipe's class): its Ctrl-click menu, an Xt override-
    /// redirect window with no properties at all, belongs to it; choosing Quit ends xterm.
    func xtermMenuChoosesItsItem() throws {
        let (xterm, _) = try start("xterm", "exec xterm -class Popup -geometry 60x15+100+100")
        defer { xterm.stop() }
        let window = try awaitWindow("the xterm", of: xterm) { $0.properties.windowClass == "Popup" }
        _ = try awaitEvent(.opened, popup: "scratch-terminal")
        let middle = (x: window.rect.x + window.rect.width / 2, y: window.rect.y + window.rect.height / 2)
        try f.input.motion(x: middle.x, y: middle.y)
        try f.sync()
        try keys(["keydown", "ctrl"])
        try f.input.press(1)
        let x = f.client.connection
        let menu = try awaitWindow("xterm's Ctrl-click menu", of: xterm) {
            $0.overrideRedirect && $0.properties.windowClass == nil && x.sameClient($0.client, window.client)
        }
        try expectNotCoveredByTheShield(menu, "xterm's menu")
        try f.input.motion(x: menu.rect.x + menu.rect.width / 2, y: menu.rect.y + menu.rect.height - 10)
        try f.input.release(1)
        try keys(["keyup", "ctrl"])
        _ = try awaitExit(xterm, "quit from its menu")
        _ = try awaitEvent(.closed, popup: "scratch-terminal")
        #expect(try dismissalsSoFar().isEmpty, "something was dismissed")
    }

    /// dzen2 as config/recipes/dzen2.toml has it: the title window is the popup, the body
    /// (override-redirect, no WM_CLASS) belongs to it. A click on a body line reaches dzen2,
    /// which prints the line; a click outside kills it.
    func dzen2TitleAndBodyAreOnePopup() throws {
        let (dzen, output) = try start("dzen2", """
            printf 'Calendar\\nline1\\nline2\\n' | exec dzen2 -p -m -l 2 -x 400 -y 300 -w 300 \
            -title-name clickaway-calendar -e 'onstart=uncollapse;button1=menuprint'
            """)
        defer { dzen.stop() }
        try awaitWindow("dzen2's body", of: dzen) { $0.overrideRedirect && $0.rect.y == 322 && $0.properties.windowClass == nil }
        _ = try awaitEvent(.opened, popup: "dzen2-calendar")
        try f.eventually("dzen2's body to join its popup's family") {
            try openEntry("dzen2-calendar")?["members"]?.arrayValue?.count == 1
        }
        // No WM_CLASS and no transient link: dzen2's body is its override-redirect window, mapped after the title.
        let body = try openEntry("dzen2-calendar")
        let member = body?["members"]?.arrayValue?.first?.stringValue ?? ""
        #expect(body?["ties"]?[member]?.stringValue == "same-client", "\(body?.text ?? "")")
        #expect(try f.ctl(["status"]).stdout.contains("\(member) (its program's override-redirect window, mapped after it)"))
        try click(550, 355)
        #expect(try awaitOutput(output, "dzen2 to print the line clicked") == "line2\n")
        #expect(dzen.isRunning, "a click on dzen2's body ended it: \(dzen.exit ?? "")")
        #expect(try dismissalsSoFar().isEmpty, "a click on dzen2's body dismissed something")
        try click(RealProgramTests.nowhere.x, RealProgramTests.nowhere.y)
        _ = try awaitEvent(.dismissed, popup: nil)
        _ = try awaitExit(dzen, "be killed by the outside click")
        _ = try awaitEvent(.closed, popup: "dzen2-calendar")
    }
}

extension ProgramsRun {
    /// The next `name` event; with `popup: nil`, whatever popups it names.
    func awaitEvent(_ name: MonitorEvent.Name, popup: String?) throws -> JSON {
        guard let popup else { return try events.await(name) }
        return try awaitEvent(name, popup: popup)
    }
}
