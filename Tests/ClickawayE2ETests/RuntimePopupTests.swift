import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// Popups registered from scripts with no configuration entry (`clickawayctl open
/// --rect/--window/--pid`, `clickawayctl wait`), on Xvfb under openbox, with a real xterm and
/// yad, as the issue's scripts use them.
@Suite("runtime popups on X11: open --rect/--window/--pid, wait", .serialized)
struct RuntimePopupTests {
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "menu"
        rect = [600, 100, 300, 300]

        [[popup]]
        name = "calendar"
        window = { class = "NeverMapped" }
        anchors = [ { rect = [1200, 0, 80, 30] } ]
          [[popup.region]]
          name = "card"
          rect = [10, 10, 100, 100]

        """

    static func fixture(_ windowManager: WindowManagerKind = .openbox) throws -> DaemonFixture {
        let f = try DaemonFixture(config: config, windowManager: windowManager)
        try f.startDaemon()
        return f
    }

    /// yad with a window of its own at a known place (openbox honours the geometry).
    static func yad(_ f: DaemonFixture, title: String = "runtime", gate: Gate? = nil) throws -> ChildProcess {
        let program = ["yad", "--text", title, "--title", title, "--geometry", "300x200+100+100"]
        return try ChildProcess(gate?.command(then: program) ?? program, environment: f.environment)
    }

    @Test(arguments: XBackend.allCases)
    func rectPopupFromTheCommandLineIsAPopupLikeAConfiguredOne(_ backend: XBackend) throws {
        // No window manager: the window below takes clicks everywhere, undecorated.
        let f = try DaemonFixture(config: Self.config, backend: backend)
        try f.startDaemon()
        let under = try f.client.createWindow(at: Layout.background)
        let events = try f.monitor()

        let open = try f.ctl(["open", "--rect", "100,100,300,200", "--anchor", "1000,0,100,30"])
        #expect(open.status == 0, "\(open.output)")
        #expect(open.stdout == "runtime-1\n")
        let opened = try events.await(.opened)
        #expect(opened["popup"]?.stringValue == "runtime-1")
        #expect(opened["runtime"]?.boolValue == true)
        let entry = try #require(try f.openEntry("runtime-1"))
        #expect(entry["rect"] == Rect(x: 100, y: 100, width: 300, height: 200).json)
        #expect(entry["runtime"]?.boolValue == true)
        #expect(try f.ctl(["status"]).stdout.contains("runtime-1  window -  [100, 100, 300, 200]  (runtime)"))
        #expect(try f.isIntercepting())

        let hit = try JSON.parse(try f.ctl(["hit", "150", "150", "--json"]).stdout)
        #expect(hit["hit"]?["popup"]?.stringValue == "runtime-1")
        #expect(hit["click"]?.stringValue == "pass")

        // Inside and on its anchor: the click goes on, nothing is dismissed.
        try f.click(150, 150)
        try f.click(1050, 10)
        #expect(f.client.presses(under).map(\.x) == [150, 1050])
        #expect(try f.openPopups() == ["runtime-1"])

        // Outside: swallowed, dismissed, and gone for good.
        try f.click(900, 600)
        let dismissed = try events.await(.dismissed)
        #expect(dismissed["popups"] == .array([.string("runtime-1")]))
        #expect(try events.await(.closed)["popup"]?.stringValue == "runtime-1")
        #expect(f.client.presses(under).count == 2)
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
        #expect(try f.ctl(["close", "runtime-1"]).status == 1, "a dismissed runtime popup is no popup at all")
        // Options clickawayctl cannot take never reach the daemon.
        for options in [["--rect", "1,2,3"], ["--rect", "1,2,3,4", "--pid", "1"], ["--window", "0xzz"], ["--pid", "1", "--timeout", "61"]] {
            let refused = try f.ctl(["open"] + options)
            #expect(refused.status == 64, "\(options): \(refused.output)")
            #expect(refused.stderr.contains("Usage: clickawayctl open"))
        }
        #expect(try f.openPopups().isEmpty)
    }

    /// The command after `--` is an argv, run without a shell when a click dismisses the
    /// popup: a `;` in an argument is just a character of a file name.
    @Test func theDismissCommandIsRunAsGivenWithoutAShell() throws {
        let f = try Self.fixture()
        let target = f.directory.appendingPathComponent("a b;touch pwned").path
        let open = try f.ctl(["open", "--rect", "100,100,300,200", "--name", "cmd", "--", "touch", target])
        #expect(open.status == 0, "\(open.output)")
        try f.click(1000, 650)
        try eventually("the dismiss command to create \(target)", timeout: .seconds(10)) {
            FileManager.default.fileExists(atPath: target)
        }
        #expect(!FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("pwned").path))
        #expect(!FileManager.default.fileExists(atPath: "pwned"))
    }

    @Test func nestingTemplatesAndClosingAParent() throws {
        let f = try Self.fixture()
        #expect(try f.ctl(["open", "menu"]).status == 0)
        let sub = try f.ctl(["open", "--rect", "620,120,50,50", "--parent", "menu", "--name", "sub"])
        #expect(sub.stdout == "sub\n", "\(sub.output)")
        #expect(try f.openPopups() == ["menu", "sub"])

        // Inside the child: inside its parent too. Inside the parent only: the child goes.
        try f.click(640, 140)
        #expect(try f.openPopups() == ["menu", "sub"])
        try f.click(800, 300)
        #expect(try f.openPopups() == ["menu"])

        // Closing the parent removes a runtime child with it.
        #expect(try f.ctl(["open", "--rect", "620,120,50,50", "--parent", "menu", "--name", "sub"]).status == 0)
        #expect(try f.ctl(["close", "menu"]).stdout == "menu: closed\n")
        #expect(try f.openPopups().isEmpty)

        // A configured popup as the template: its regions, anchors and options, at a new place.
        let like = try f.ctl(["open", "--like", "calendar", "--rect", "200,200,200,200", "--name", "cal2"])
        #expect(like.status == 0, "\(like.output)")
        let hit = try JSON.parse(try f.ctl(["hit", "220", "220", "--json"]).stdout)
        #expect(hit["hit"]?["region"]?.stringValue == "cal2.card")
        let anchor = try JSON.parse(try f.ctl(["hit", "1210", "10", "--json"]).stdout)
        #expect(anchor["dismiss"] == .array([]), "calendar's anchor is cal2's too")
        #expect(try f.ctl(["close", "cal2"]).stdout == "cal2: closed\n")
    }

    @Test func runtimePopupsSurviveReloadsUnlessTheConfigurationTakesTheirName() throws {
        let f = try Self.fixture()
        #expect(try f.ctl(["open", "--rect", "100,100,50,50", "--name", "keep"]).status == 0)
        let waiting = try BackgroundCtl(f, ["wait", "--rect", "300,300,50,50", "--name", "clash"])
        try f.eventually("the waited popup to open", timeout: .seconds(15)) { try f.openPopups().contains("clash") }

        try f.editConfigInPlace(Self.config + "\n# edited\n")
        #expect(try f.ctl(["reload"]).status == 0)
        #expect(try f.openPopups() == ["keep", "clash"])

        try f.editConfigInPlace(Self.config + """

            [[popup]]
            name = "clash"
            rect = [0, 0, 10, 10]
            """)
        #expect(try f.ctl(["reload"]).status == 0)
        #expect(try f.openPopups() == ["keep"])
        #expect(try waiting.exitStatus() == 3)
        #expect(waiting.stdout == "gone popup=clash reason=reload\n")
        #expect(f.log.contains("runtime popup \"clash\" is removed"))
    }

    /// i3 puts WM_CLASS on its frames: the window given is still the client.
    @Test(arguments: [WindowManagerKind.openbox, .i3])
    func windowByIdIsTheXtermItNames(_ windowManager: WindowManagerKind) throws {
        let f = try Self.fixture(windowManager)
        let xterm = try ChildProcess(["xterm", "-class", "RuntimeTerm", "-geometry", "40x10+200+150"], environment: f.environment)
        defer { xterm.stop() }
        // Mapped (viewable), not only created: i3 maps it a moment after xterm asks.
        let search = try ProgramRun.run(["xdotool", "search", "--sync", "--onlyvisible", "--class", "RuntimeTerm"], environment: f.environment,
                                        limit: .seconds(20))
        let id = try #require(search.stdout.split(separator: "\n").first.map(String.init), "\(search.output)")
        let open = try f.ctl(["open", "--window", id])
        #expect(open.status == 0, "\(open.output)")
        let name = open.stdout.trimmingCharacters(in: .newlines)
        let entry = try #require(try f.openEntry(name))
        #expect(entry["window"]?.stringValue == "0x" + String(UInt32(id)!, radix: 16))
        #expect(try f.ctl(["open", "--window", id]).stderr.contains("is runtime popup \"\(name)\" already"))

        let rect = try #require(Rect(json: entry["rect"]))
        try f.click(rect.x + rect.width / 2, rect.y + rect.height / 2)
        #expect(xterm.isRunning)
        try f.click(1000, 650)
        try eventually("xterm to exit after WM_DELETE_WINDOW", timeout: .seconds(10)) { !xterm.isRunning }
        try f.sync()
        #expect(try f.openPopups().isEmpty)
        #expect(try f.ctl(["open", "--window", "0x7fffff"]).stderr.contains("is not a mapped top-level window"))
    }

    @Test func pidFindsTheWindowOfYadAndCloseRemovesItWithoutTouchingTheWindow() throws {
        let f = try Self.fixture()
        let yad = try Self.yad(f)
        defer { yad.stop() }
        let open = try f.ctl(["open", "--pid", "\(yad.pid)", "--timeout", "20", "--name", "yad"])
        #expect(open.status == 0, "\(open.output)")
        #expect(open.stdout == "yad\n")
        let entry = try #require(try f.openEntry("yad"))
        #expect(entry["window"]?.stringValue?.hasPrefix("0x") == true)
        #expect(try f.ctl(["close", "yad"]).stdout == "yad: closed\n")
        #expect(try f.openPopups().isEmpty)
        #expect(yad.isRunning)
    }

    @Test func pidWhoseWindowAppearsLateIsWaitedFor() throws {
        let f = try Self.fixture()
        let gate = try Gate(in: f.directory)
        let yad = try Self.yad(f, gate: gate)
        defer { yad.stop() }
        let open = try BackgroundCtl(f, ["open", "--pid", "\(yad.pid)", "--timeout", "30", "--name", "late"])
        try f.eventually("the popup to wait for the window of process \(yad.pid)", timeout: .seconds(15)) { try f.waitingPopups() == ["late"] }
        #expect(try f.ctl(["status"]).stdout.contains("waiting:  late (runtime) for a window of process \(yad.pid)"))
        #expect(try f.openPopups().isEmpty)

        try gate.open()
        #expect(try open.exitStatus() == 0, "\(open.stderr)")
        #expect(open.stdout == "late\n")
        #expect(try f.openPopups() == ["late"])
        #expect(try f.waitingPopups().isEmpty)
    }

    /// `open --pid` ended (Ctrl-C, or its connection closed to make room) before the window
    /// came: nobody would hear of the popup, so it goes with the request.
    @Test func pidWaitEndsWithTheRequestsConnection() throws {
        let f = try Self.fixture()
        let sleeper = try ChildProcess(["sleep", "300"], environment: f.environment)
        defer { sleeper.stop() }
        let open = try BackgroundCtl(f, ["open", "--pid", "\(sleeper.pid)", "--timeout", "60", "--name", "asked"])
        try f.eventually("the popup to wait for the window of process \(sleeper.pid)", timeout: .seconds(15)) {
            try f.waitingPopups() == ["asked"]
        }
        open.process.stop()
        try f.eventually("the popup to go with its request's connection", timeout: .seconds(10)) { try f.waitingPopups().isEmpty }
        #expect(try f.openPopups().isEmpty)
    }

    @Test func pidWhoseWindowNeverAppearsFailsInBoundedTimeSayingWhy() throws {
        let f = try Self.fixture()
        let sleeper = try ChildProcess(["sleep", "300"], environment: f.environment)
        defer { sleeper.stop() }
        let open = try f.ctl(["open", "--pid", "\(sleeper.pid)", "--timeout", "0.5"])
        #expect(open.status == 1)
        #expect(open.stderr.contains("no window of process \(sleeper.pid) appeared within 500 ms"), "\(open.stderr)")
        #expect(try f.waitingPopups().isEmpty)
        #expect(try f.openPopups().isEmpty)

        let ended = try f.ctl(["open", "--pid", "\(Int32.max)"])
        #expect(ended.status == 1)
        #expect(ended.stderr.contains("there is no process with pid \(Int32.max)"))
    }

    @Test(arguments: [WindowManagerKind.openbox, .i3])
    func waitReturnsHowThePopupWasDismissed(_ windowManager: WindowManagerKind) throws {
        let f = try Self.fixture(windowManager)
        let yad = try Self.yad(f)
        defer { yad.stop() }
        // The issue's whole script: `yad --calendar & clickawayctl wait --pid $! --dismiss kill`.
        let wait = try BackgroundCtl(f, ["wait", "--pid", "\(yad.pid)", "--timeout", "20", "--dismiss", "kill", "--json", "--name", "cal"])
        try f.eventually("yad's window to be the popup", timeout: .seconds(15)) { try f.openPopups() == ["cal"] }
        try f.click(1000, 650)
        #expect(try wait.exitStatus() == 0, "\(wait.stderr)")
        let outcome = try JSON.parse(wait.stdout.trimmingCharacters(in: .newlines))
        #expect(outcome == WaitOutcome.dismissed(popup: "cal", reason: "outside", button: 1, x: 1000, y: 650, click: "swallow").json)
        #expect(yad.waitForExit(within: .seconds(10)) != nil, "kill: yad's connection closed, so it exits")
        #expect(try f.openPopups().isEmpty)
    }

    @Test func waitSaysWhenTheWindowClosedByItself() throws {
        let f = try Self.fixture()
        let yad = try Self.yad(f)
        defer { yad.stop() }
        let wait = try BackgroundCtl(f, ["wait", "--pid", "\(yad.pid)", "--timeout", "20"])
        try f.eventually("yad's window to be the popup", timeout: .seconds(15)) { try f.openPopups().count == 1 }
        _ = yad.signalAndWait(SIGTERM)
        #expect(try wait.exitStatus() == 3, "\(wait.stderr)")
        #expect(wait.stdout.hasPrefix("gone popup=runtime-"))
        #expect(wait.stdout.hasSuffix(" reason=window-gone\n"))
        #expect(try f.openPopups().isEmpty)
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func interruptedWaitRemovesThePopup(_ signal: Int32) throws {
        let f = try Self.fixture()
        let wait = try BackgroundCtl(f, ["wait", "--rect", "100,100,300,200", "--name", "held"])
        try f.eventually("the waited popup to open", timeout: .seconds(15)) { try f.openPopups() == ["held"] }
        #expect(try wait.interrupt(signal) == 128 + signal)
        // Removed before clickawayctl exited: no sync needed, but the status must say so.
        #expect(try f.report().open.isEmpty)
        #expect(try !f.isIntercepting())
        #expect(wait.stdout.isEmpty)
    }

    /// Ctrl-C while the window of the process is still awaited: the wait ends at once, and the
    /// popup with it.
    @Test func interruptedWaitForAWindowRemovesThePopup() throws {
        let f = try Self.fixture()
        let sleeper = try ChildProcess(["sleep", "300"], environment: f.environment)
        defer { sleeper.stop() }
        let wait = try BackgroundCtl(f, ["wait", "--pid", "\(sleeper.pid)", "--timeout", "60", "--name", "never"])
        try f.eventually("the popup to wait for a window", timeout: .seconds(15)) { try f.waitingPopups() == ["never"] }
        #expect(try wait.interrupt(SIGINT) == 130)
        #expect(try f.waitingPopups().isEmpty)
        #expect(wait.stdout.isEmpty)
    }

    /// `--escape`: the Escape key dismisses it, and `wait` says so (no button, no point).
    @Test func waitWithEscapeIsDismissedByTheKey() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let wait = try BackgroundCtl(f, ["wait", "--rect", "100,100,300,200", "--escape", "--name", "esc"])
        try f.eventually("the waited popup to open with Escape grabbed", timeout: .seconds(15)) {
            try f.openPopups() == ["esc"] && f.status()["escape"]?["active"]?.boolValue == true
        }
        try f.input.key(try EscapeKeyTests.escapeKeycode(f))
        #expect(try wait.exitStatus() == 0, "\(wait.stderr)")
        #expect(wait.stdout == "dismissed popup=esc reason=escape button=0 x=0 y=0 click=swallow\n")
        #expect(try f.status()["escape"]?["active"]?.boolValue == false)
    }

    /// A `wait` killed without a chance to say anything: its connection closes, and with it
    /// goes the popup.
    @Test func aKilledWaitLeavesNoPopupBehind() throws {
        let f = try Self.fixture()
        let wait = try BackgroundCtl(f, ["wait", "--rect", "100,100,300,200", "--name", "orphan"])
        try f.eventually("the waited popup to open", timeout: .seconds(15)) { try f.openPopups() == ["orphan"] }
        #expect(try wait.interrupt(SIGKILL) == 128 + SIGKILL)
        try f.eventually("the popup of the killed wait to go", timeout: .seconds(15)) { try f.openPopups().isEmpty }
        #expect(f.log.contains("its clickawayctl wait ended"))
    }

    @Test func nothingAClientSendsHurtsTheDaemon() throws {
        let f = try Self.fixture()
        let bad: [(String, String)] = [
            (#"{"request":"add"}"#, "needs exactly one of"),
            (#"{"request":"add","rect":[1,2,3,4],"pid":5}"#, "not rect and pid"),
            (#"{"request":"add","rect":[1,2,3]}"#, #""rect" must be [x, y, width, height]"#),
            (#"{"request":"add","rect":[1,2,-3,4]}"#, #""rect" must be"#),
            (#"{"request":"add","rect":[1,2,3,99999999]}"#, #""rect" must be"#),
            (#"{"request":"add","window":0}"#, #""window" must be an integer from 1"#),
            (#"{"request":"add","pid":-1}"#, #""pid" must be an integer from 1"#),
            (#"{"request":"add","pid":1,"timeout_ms":600000}"#, #""timeout_ms" must be an integer from 0 to 60000"#),
            (#"{"request":"add","rect":[1,2,3,4],"timeout_ms":5}"#, #""timeout_ms" goes with "pid" only"#),
            (#"{"request":"add","rect":[1,2,3,4],"popup":"a b"}"#, #""popup" must be a popup name"#),
            (#"{"request":"add","rect":[1,2,3,4],"popup":"menu"}"#, #"there is a configured popup named "menu" already"#),
            (#"{"request":"add","rect":[1,2,3,4],"parent":"nope"}"#, #"no popup named "nope" to nest in"#),
            (#"{"request":"add","rect":[1,2,3,4],"like":"calender"}"#, #"did you mean "calendar"?"#),
            (#"{"request":"add","rect":[1,2,3,4],"output":"NOPE"}"#, #"output "NOPE" is not connected"#),
            (#"{"request":"add","rect":[1,2,3,4],"buttons":[0]}"#, #""buttons" must be an array of buttons 1 to 31"#),
            (#"{"request":"add","rect":[1,2,3,4],"grace_ms":-1}"#, #""grace_ms" must be an integer from 0"#),
            (#"{"request":"add","rect":[1,2,3,4],"dismiss":"explode"}"#, #""dismiss" must be "close""#),
            (#"{"request":"add","rect":[1,2,3,4],"dismiss":{"command":[]}}"#, "with 1 to 256 strings"),
            (#"{"request":"add","rect":[1,2,3,4],"dismiss":{"command":["a\u0000b"]}}"#, "without NUL"),
            (#"{"request":"add","rect":[1,2,3,4],"dismiss":{"command":[""]}}"#, "whose program (the first string) is not empty"),
            (#"{"request":"add","rect":[1,2,3,4],"anchors":[[1,2,3,4,5]]}"#, #""anchors" must be an array of rectangles"#),
            (#"{"request":"add","rect":[1,2,3,4],"colour":"red"}"#, #"unknown key "colour""#),
            (#"{"request":"wait","rect":[1,2,3,4],"escape":"yes"}"#, #""escape" must be true or false"#),
        ]
        for (line, message) in bad {
            let client = try ControlClient(path: f.socketPath)
            try client.send(try JSON.parse(line))
            let reply = try #require(try client.receive())
            let refusal = try #require(Refusal(reply: reply), "\(line) was accepted: \(reply.text)")
            #expect(refusal.message.contains(message), "\(line): \(refusal.message)")
        }
        // The number of runtime popups is bounded.
        for i in 0..<64 { _ = try f.request(.add(RuntimePopupRequest(form: .rect(Rect(x: Int32(i), y: 0, width: 1, height: 1), output: nil)))) }
        let over = try f.call(.add(RuntimePopupRequest(form: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil))))
        #expect(Refusal(reply: over)?.message == "64 runtime popups are registered already; close one first")
        #expect(try f.openPopups().count == 64)
        try f.sync()
        #expect(f.daemon?.isRunning == true)
    }

    static func recipe(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/recipes/\(name)").path
    }

    @Test(arguments: ["eww-calendar.sh", "polybar-calendar.sh", "popup-calendar.sh"])
    func scriptRecipesAreValidShell(_ name: String) throws {
        let check = try ProgramRun.run(["sh", "-n", Self.recipe(name)], environment: ["PATH": "/usr/bin:/bin"])
        #expect(check.status == 0, "\(check.output)")
    }

    /// config/recipes/popup-calendar.sh, the plain script: a click outside ends it.
    @Test func thePlainScriptRecipeEndsWithTheCalendarWhenAClickDismissesIt() throws {
        let f = try Self.fixture()
        let script = try BackgroundCtl(f, command: ["sh", Self.recipe("popup-calendar.sh"), "100", "100"])
        try f.eventually("the script's calendar to be a runtime popup", timeout: .seconds(15)) { try f.report().open.contains { $0.runtime } }
        try f.click(1000, 650)
        #expect(try script.exitStatus() == 1, "\(script.stderr)")
        #expect(script.stdout == "dismissed\n")
        #expect(try f.openPopups().isEmpty)
    }

    /// config/recipes/polybar-calendar.sh: the date module is the anchor; a second click on it
    /// runs the script again, which closes the calendar; a click outside dismisses it.
    @Test func thePolybarRecipeTogglesAndIsDismissed() throws {
        let f = try Self.fixture()
        let environment = ["CALENDAR_X": "100", "CALENDAR_Y": "100", "CALENDAR_ANCHOR": "1000,0,100,30"]
        let first = try BackgroundCtl(f, command: ["sh", Self.recipe("polybar-calendar.sh")], environment: environment)
        try f.eventually("the calendar to be open", timeout: .seconds(15)) { try f.openPopups() == ["polybar-calendar"] }
        try f.click(1050, 10)
        #expect(try f.openPopups() == ["polybar-calendar"], "a click on the date is on the anchor")
        let second = try BackgroundCtl(f, command: ["sh", Self.recipe("polybar-calendar.sh")], environment: environment)
        #expect(try second.exitStatus() == 0, "\(second.stderr)")
        #expect(try first.exitStatus() == 0, "\(first.stderr)")
        #expect(try f.openPopups().isEmpty)

        let third = try BackgroundCtl(f, command: ["sh", Self.recipe("polybar-calendar.sh")], environment: environment)
        try f.eventually("the calendar to be open again", timeout: .seconds(15)) { try f.openPopups() == ["polybar-calendar"] }
        try f.click(1000, 650)
        #expect(try third.exitStatus() == 0, "\(third.stderr)")
        try f.eventually("the dismissed calendar's window to be gone", timeout: .seconds(15)) { try f.openPopups().isEmpty }
    }
}
