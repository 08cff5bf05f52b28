import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import WaylandHarness

/// Popups registered from scripts (`clickawayctl open --rect/--window/--pid`, `wait`) on
/// headless compositors: `rect` ones everywhere, window ones on sway, with a real foot
/// terminal as the popup whose window or process is named.
@Suite struct WaylandRuntimePopupTests {
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "unused"
        rect = [0, 0, 1, 1]
        """

    /// A real foot on sway, floating (the harness floats app_ids clickaway-test-*), gone from
    /// sway's tree again before the next test uses the compositor.
    static func withFoot(_ f: WaylandDaemonFixture, gate: Gate? = nil, _ body: (ChildProcess) throws -> Void) throws {
        let appId = "clickaway-test-foot-\(UUID().uuidString.prefix(8))"
        let program = ["foot", "--app-id", appId, "--title", "runtime", "--window-size-pixels", "400x300", "sleep", "300"]
        var environment = f.environment
        environment["XDG_RUNTIME_DIR"] = f.runtimeDirectory.path
        let foot = try ChildProcess(gate?.command(then: program) ?? program, environment: environment)
        defer {
            foot.stop()
            try? f.eventually("foot's window to leave sway's tree") { !(try f.compositor.tree().text.contains(appId)) }
        }
        try body(foot)
    }

    /// The popup's rectangle, and a point well outside it on the 1280x720 output.
    static func outside(_ f: WaylandDaemonFixture, _ name: String) throws -> (rect: Rect, x: Int32, y: Int32) {
        let rect = try #require(Rect(json: try f.openEntry(name)?["rect"]), "\(name) is not open")
        return rect.x > 20 ? (rect, 5, 5) : (rect, 1270, 710)
    }

    @Test(arguments: CompositorKind.tested)
    func rectPopupFromTheCommandLine(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.config) { f in
            let events = try f.monitor()
            let open = try f.ctl(["open", "--rect", "100,100,300,200", "--name", "panel2"])
            #expect(open.stdout == "panel2\n", "\(open.output)")
            #expect(try events.await(.opened)["runtime"]?.boolValue == true)

            try f.click(150, 150)
            #expect(try f.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[150, 150]], "inside: it goes on")
            #expect(try f.openPopups() == ["panel2"])
            try f.click(700, 500)
            #expect(try events.await(.dismissed)["popups"] == .array([.string("panel2")]))
            #expect(try f.openPopups().isEmpty)
            #expect(try f.below.clicks().filter(\.isPressed).count == 1, "outside: swallowed")

            let sway = kind == .sway
            let window = try f.ctl(["open", "--window", "1"])
            #expect(window.status == 1)
            #expect(window.stderr.contains(sway ? "no visible window with con_id 1" : "only --rect popups work here"), "\(window.stderr)")
        }
    }

    @Test func windowByConIdIsTheFootItNames() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            try Self.withFoot(f) { foot in
                var id: Int64?
                try f.eventually("foot's window in sway's tree", timeout: .seconds(15)) {
                    id = Self.conId(in: try f.compositor.tree(), pid: foot.pid)
                    return id != nil
                }
                let open = try f.ctl(["open", "--window", "\(id!)"])
                #expect(open.status == 0, "\(open.output)")
                let name = open.stdout.trimmingCharacters(in: .newlines)
                #expect(try f.openEntry(name)?["window"]?.stringValue == "\(id!)")
                let (rect, x, y) = try Self.outside(f, name)
                try f.click(rect.x + rect.width / 2, rect.y + rect.height / 2)
                #expect(try f.openPopups() == [name], "inside: nothing dismissed")
                try f.click(x, y)
                #expect(foot.waitForExit(within: .seconds(10)) != nil, "close: sway asks foot to close, and it does")
                try f.eventually("the popup to be gone with its window") { try f.openPopups().isEmpty }
            }
        }
    }

    @Test func pidFindsTheWindowOfFoot() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            try Self.withFoot(f) { foot in
                let open = try f.ctl(["open", "--pid", "\(foot.pid)", "--timeout", "20", "--name", "term"])
                #expect(open.stdout == "term\n", "\(open.output)")
                #expect(try f.openEntry("term")?["window"]?.stringValue?.allSatisfy(\.isNumber) == true)
                #expect(try f.ctl(["close", "term"]).stdout == "term: closed\n")
                #expect(try f.openPopups().isEmpty)
                #expect(foot.isRunning, "closing a popup runs no dismiss action")
            }
        }
    }

    @Test func pidWhoseWindowAppearsLateIsWaitedFor() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            let gate = try Gate(in: f.directory)
            try Self.withFoot(f, gate: gate) { foot in
                let open = try BackgroundCtl(f, ["open", "--pid", "\(foot.pid)", "--timeout", "30", "--name", "late"])
                try f.eventually("the popup to wait for process \(foot.pid)", timeout: .seconds(15)) { try f.waitingPopups() == ["late"] }
                #expect(try f.openPopups().isEmpty)
                try gate.open()
                #expect(try open.exitStatus() == 0, "\(open.stderr)")
                #expect(open.stdout == "late\n")
                #expect(try f.openPopups() == ["late"])
            }
        }
    }

    @Test func pidWhoseWindowNeverAppearsFailsInBoundedTime() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            let sleeper = try ChildProcess(["sleep", "300"], environment: f.environment)
            defer { sleeper.stop() }
            let open = try f.ctl(["open", "--pid", "\(sleeper.pid)", "--timeout", "0.5"])
            #expect(open.status == 1)
            #expect(open.stderr.contains("no window of process \(sleeper.pid) appeared within 500 ms"), "\(open.stderr)")
            #expect(try f.waitingPopups().isEmpty)
        }
    }

    @Test func waitReturnsHowThePopupWasDismissed() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            try Self.withFoot(f) { foot in
                let wait = try BackgroundCtl(f, ["wait", "--pid", "\(foot.pid)", "--timeout", "20", "--dismiss", "kill", "--name", "term"])
                try f.eventually("foot's window to be the popup", timeout: .seconds(20)) { try f.openPopups() == ["term"] }
                let (_, x, y) = try Self.outside(f, "term")
                try f.click(x, y)
                #expect(try wait.exitStatus() == 0, "\(wait.stderr)")
                #expect(wait.stdout == "dismissed popup=term reason=outside button=1 x=\(x) y=\(y) click=swallow\n")
                #expect(foot.waitForExit(within: .seconds(10)) == 128 + SIGKILL, "kill: its process is killed")
            }
        }
    }

    @Test func waitSaysWhenTheWindowClosedByItself() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            try Self.withFoot(f) { foot in
                let wait = try BackgroundCtl(f, ["wait", "--pid", "\(foot.pid)", "--timeout", "20", "--json"])
                try f.eventually("foot's window to be the popup", timeout: .seconds(20)) { try f.openPopups().count == 1 }
                let name = try f.openPopups()[0]
                _ = foot.signalAndWait(SIGTERM)
                #expect(try wait.exitStatus() == 3, "\(wait.stderr)")
                #expect(try JSON.parse(wait.stdout.trimmingCharacters(in: .newlines)) == WaitOutcome.gone(popup: name, reason: .windowGone).json)
            }
        }
    }

    @Test func interruptedWaitRemovesThePopup() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            let wait = try BackgroundCtl(f, ["wait", "--rect", "100,100,300,200"])
            try f.eventually("the waited popup to open") { try f.openPopups().count == 1 }
            #expect(try wait.interrupt(SIGINT) == 130)
            #expect(try f.report().open.isEmpty)
            #expect(try !f.report().isIntercepting)
        }
    }

    /// The container id of the view whose client is `pid`.
    static func conId(in node: JSON, pid: Int32) -> Int64? {
        if node["pid"]?.intValue == Int64(pid), node["shell"] != nil { return node["id"]?.intValue }
        for child in (node["nodes"]?.arrayValue ?? []) + (node["floating_nodes"]?.arrayValue ?? []) {
            if let id = conId(in: child, pid: pid) { return id }
        }
        return nil
    }
}
