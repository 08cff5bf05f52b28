import ClickawayConfig
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

/// `clickawayctl pick` as a user runs it: a real Xvfb (and openbox), real windows, an XTest
/// click once pick says on stderr that it holds the pointer, and the printed block loaded
/// through the real configuration loader.
@Suite("clickawayctl pick")
struct PickTests {
    static let instruction = "click the window to describe"

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `clickawayctl pick` on `display`, clicks `button` at `point` once pick holds the
    /// pointer (or never, when `point` is nil), and waits for it to exit.
    func pick(on display: String, _ arguments: [String] = [], button: UInt8 = 1, at point: (x: Int32, y: Int32)?,
              environment: [String: String]? = nil) throws -> Result {
        let input = try XTestInput(display: display)
        let run = try PickProcess(["pick", "--display", display, "--timeout", "10"] + arguments, environment: environment)
        try run.readUntil("pick to say it holds the pointer", timeout: .seconds(10)) { run.stderr.contains(Self.instruction) }
        if let point { try input.click(button, at: point.x, point.y) }
        return try run.finish(timeout: .seconds(15))
    }

    func loadPopup(_ toml: String) throws -> PopupSpec {
        let loaded: LoadedConfig
        do {
            loaded = try ConfigLoader.load([ConfigFile(path: "picked.toml", text: toml)])
        } catch {
            throw HarnessError("the printed block does not load as a configuration:\n\(error)\nthe block:\n\(toml)")
        }
        try #require(loaded.model.popups.count == 1, "expected one popup in:\n\(toml)")
        return loaded.model.popups[0]
    }

    func windowMatch(_ popup: PopupSpec) throws -> WindowMatch {
        guard case .window(let match) = popup.source else { throw HarnessError("popup \(popup.name) is not a window popup") }
        return match
    }

    @Test func picksTheClickedWindowAndTheBlockMatchesIt() throws {
        let xvfb = try XvfbServer()
        let client = try TestClient(display: xvfb.display)
        let main = try client.createWindow(at: Rect(x: 100, y: 100, width: 300, height: 200),
                                           wmClass: WMClass(instance: "main", windowClass: "Calendar-App"))
        let popup = try client.createWindow(at: Rect(x: 500, y: 150, width: 240, height: 180),
                                            wmClass: WMClass(instance: "cal.popup", windowClass: "Org.Example.Calendar"),
                                            title: "March 2024", closesOnDelete: true)

        let r = try pick(on: xvfb.display, at: (600, 200))
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "# picked window \(hex(popup.id)) at 500,150 240x180, title \"March 2024\"")

        let spec = try loadPopup(r.stdout)
        #expect(spec.name == "org-example-calendar")
        #expect(spec.dismiss == .close, "the window accepts WM_DELETE_WINDOW")
        let match = try windowMatch(spec)
        #expect(match == WindowMatch(windowClass: "Org.Example.Calendar", instance: "cal.popup"))
        #expect(match.matches(try client.connection.windowProperties(popup.id)))
        #expect(!match.matches(try client.connection.windowProperties(main.id)))
    }

    /// dzen2's body: override-redirect, a name and no WM_CLASS. pick takes it, suggests a title
    /// match that finds it and "kill", which ends dzen2 (unmapping would leave it running);
    /// `open --window` takes it too.
    @Test func picksAnOverrideRedirectWindowWithoutAClassAndOpenTakesIt() throws {
        let f = try DaemonFixture(config: "")
        try f.startDaemon()
        var environment = f.environment
        environment["HOME"] = f.directory.path
        let dzen = try ChildProcess(["sh", "-c", "printf 'title\\nline1\\nline2\\n' | exec dzen2 -p -l 2 -x 100 -y 100 -w 300 -e 'onstart=uncollapse'"],
                                   environment: environment)
        defer { dzen.stop() }
        let x = f.client.connection
        var body: WindowID = 0
        try eventually("dzen2's body to be viewable", timeout: .seconds(20), every: .milliseconds(20)) {
            for top in try x.queryTree(x.root).children {
                let a = try? x.getWindowAttributes(top)
                if a?.mapState == .viewable, a?.overrideRedirect == true, (try? x.wmClass(top)) ?? nil == nil,
                   (try? x.title(top)) == "dzen slave" { body = top }
            }
            return body != 0
        }

        let r = try pick(on: f.xvfb.display, at: (150, 130))
        #expect(r.status == 0, "\(r.stderr)")
        let spec = try loadPopup(r.stdout)
        #expect(spec.dismiss == .kill, "\(r.stdout)")
        let match = try windowMatch(spec)
        #expect(match == WindowMatch(title: "dzen slave"), "\(r.stdout)")
        #expect(match.matches(try x.windowProperties(body)))

        let open = try f.ctl(["open", "--window", hex(body), "--name", "body"])
        #expect(open.status == 0, "\(open.stderr)")
        let entry = try #require(try f.status()["open"]?.arrayValue?.first { $0["popup"]?.stringValue == "body" })
        #expect(entry["window"]?.stringValue == hex(body))
    }

    @Test func escapesATitleThatTriesToBreakOutOfItsStringAndComment() throws {
        let xvfb = try XvfbServer()
        let client = try TestClient(display: xvfb.display)
        let title = "say \"hi\" \\ C:\\tmp\n[[popup]]\nname = \"evil\"\r\t\u{1}\u{7f}\u{202e}end"
        let window = try client.createWindow(at: Rect(x: 50, y: 60, width: 200, height: 100),
                                             wmClass: WMClass(instance: "menu", windowClass: "Menu"), title: title, type: "dialog")

        let r = try pick(on: xvfb.display, at: (100, 100))
        #expect(r.status == 0, "\(r.stderr)")
        // The title stays inside its comments: every line that is not a comment is pick's own.
        // Split on the scalar, since Character splitting would keep "\r\n" together.
        let lines = r.stdout.unicodeScalars.split(separator: "\n").map { String($0) }
        let keys = lines.filter { !$0.hasPrefix("#") }.map { $0.prefix { $0 != " " } }
        #expect(keys == ["[[popup]]", "name", "window", "dismiss"], "\(r.stdout)")

        let properties = try client.connection.windowProperties(window.id)
        let spec = try loadPopup(r.stdout)
        #expect(spec.name == "menu")
        #expect(spec.dismiss == .unmap, "the window does not accept WM_DELETE_WINDOW")
        let match = try windowMatch(spec)
        #expect(match == WindowMatch(windowClass: "Menu", instance: "menu", type: "dialog"))
        #expect(match.matches(properties))

        // The offered title match, uncommented, reads back as exactly the window's title.
        let withTitle = lines.compactMap { line -> String? in
            if line.hasPrefix("window = ") { return nil }
            return line.hasPrefix("# window = ") ? String(line.dropFirst(2)) : line
        }.joined(separator: "\n")
        let titleMatch = try windowMatch(try loadPopup(withTitle))
        #expect(titleMatch.title == title)
        #expect(titleMatch.matches(properties))
    }

    /// i3 and herbstluftwm put a WM_CLASS of their own on their frames: the client is still
    /// the window with WM_STATE. fvwm frames a client two windows deep, jwm one.
    @Test(arguments: [WindowManagerKind.openbox, .i3, .herbstluftwm, .fvwm, .jwm])
    func underAReparentingWindowManagerFindsTheClientAndReportsTheFramesRectangle(_ kind: WindowManagerKind) throws {
        let xvfb = try XvfbServer()
        let windowManager = try WindowManager(kind, display: xvfb.display)
        defer { windowManager.stop() }
        let client = try TestClient(display: xvfb.display)
        let x = client.connection
        let window = try client.createWindow(at: Rect(x: 200, y: 150, width: 300, height: 200),
                                             wmClass: WMClass(instance: "volume", windowClass: "Volume"), closesOnDelete: true)
        var frame = window.id
        while try x.queryTree(frame).parent != x.root { frame = try x.queryTree(frame).parent }
        try #require(frame != window.id, "\(kind) did not frame the window")
        let frameRect = try x.rootRect(frame)
        let clientRect = try x.rootRect(window.id)
        let center = (x: clientRect.x + clientRect.width / 2, y: clientRect.y + clientRect.height / 2)

        let r = try pick(on: xvfb.display, at: center)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").first == """
            # picked window \(hex(window.id)) at \(frameRect.x),\(frameRect.y) \(frameRect.width)x\(frameRect.height) \
            (its frame, \(hex(frame))), title "recorder"
            """)
        let match = try windowMatch(try loadPopup(r.stdout))
        #expect(match == WindowMatch(windowClass: "Volume", instance: "volume"))
        #expect(match.matches(try x.windowProperties(window.id)))

        let j = try pick(on: xvfb.display, ["--json"], at: center)
        #expect(j.status == 0, "\(j.stderr)")
        let object = try JSON.parse(j.stdout.trimmingCharacters(in: .newlines))
        #expect(object == .object([
            ("name", .string("volume")),
            ("window", .string(hex(window.id))),
            ("frame", .string(hex(frame))),
            ("rect", .array([frameRect.x, frameRect.y, frameRect.width, frameRect.height].map { .int(Int64($0)) })),
            ("class", .string("Volume")),
            ("instance", .string("volume")),
            ("title", .string("recorder")),
            ("types", .array([])),
            ("match", .object([("class", .string("Volume")), ("instance", .string("volume"))])),
            ("override_redirect", .bool(false)),
            ("dismiss", .string("close")),
        ]), "\(j.stdout)")
    }

    @Test func clickingTheDesktopPicksNothing() throws {
        let xvfb = try XvfbServer()
        let r = try pick(on: xvfb.display, at: (10, 10))
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("the click landed on the desktop (the root window), not on a window; nothing picked"),
                "\(r.stderr)")
    }

    @Test func anotherButtonCancels() throws {
        let xvfb = try XvfbServer()
        let client = try TestClient(display: xvfb.display)
        let window = try client.createWindow(at: Rect(x: 100, y: 100, width: 200, height: 100))
        let r = try pick(on: xvfb.display, button: 3, at: (150, 150))
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("cancelled with button 3; nothing picked"), "\(r.stderr)")
        // The grab kept the press and its release from the window under the pointer.
        try client.drain()
        #expect(client.presses(window).isEmpty && client.releases(window).isEmpty)
    }

    @Test func givesUpWhenNobodyClicks() throws {
        let xvfb = try XvfbServer()
        let r = try pick(on: xvfb.display, ["--timeout", "1"], at: nil)
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("nobody clicked within 1 s; nothing picked"), "\(r.stderr)")
    }

    @Test func saysSoWhenAnotherProgramHoldsThePointer() throws {
        let xvfb = try XvfbServer()
        let menu = try TestClient(display: xvfb.display)
        let x = menu.connection
        #expect(try x.grabPointer(x.root, events: [.buttonPress], cursor: nil) == nil)

        let run = try PickProcess(["pick", "--display", xvfb.display, "--timeout", "10"])
        let r = try run.finish(timeout: .seconds(15))
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot grab the pointer: another program has grabbed the pointer"), "\(r.stderr)")
        #expect(!r.stderr.contains(Self.instruction))
    }

    @Test func withoutAnXServerExits2() throws {
        let unset = try PickProcess(["pick"], environment: ["PATH": "/usr/bin:/bin"]).finish(timeout: .seconds(10))
        #expect(unset.status == 2)
        #expect(unset.stderr.contains("DISPLAY is not set"), "\(unset.stderr)")

        let unreachable = try PickProcess(["pick", "--display", ":65000"]).finish(timeout: .seconds(10))
        #expect(unreachable.status == 2)
        #expect(unreachable.stderr.contains("cannot connect to X server \":65000\""), "\(unreachable.stderr)")
    }

    /// With the daemon running and a popup open, pick's grab takes the click: the daemon's
    /// passive grab does not fire, so picking another window dismisses nothing.
    @Test func worksBesideTheDaemonWithoutDismissingItsPopups() throws {
        let fixture = try DaemonFixture(config: """
            [[popup]]
            name = "popup"
            window = { class = "Popup" }
            grace_ms = 0
            """)
        try fixture.startDaemon()
        try fixture.window(Layout.popup, class: "Popup")
        let target = try fixture.window(Rect(x: 700, y: 400, width: 200, height: 100), class: "Target")
        #expect(try fixture.isIntercepting())

        let r = try pick(on: fixture.xvfb.display, at: (750, 450), environment: fixture.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let match = try windowMatch(try loadPopup(r.stdout))
        #expect(match.matches(try fixture.client.connection.windowProperties(target.id)))
        try fixture.settle()
        #expect(try fixture.openPopups() == ["popup"], "the pick's click dismissed a popup; daemon log:\n\(fixture.log)")
    }
}

/// A running `clickawayctl` whose stdout and stderr are read through pipes, every wait bounded.
final class PickProcess {
    private let pid: pid_t
    private var exit: ProcessExit?
    private var output: [FileDescriptor: [UInt8]] = [:]
    private var open: [FileDescriptor] = []
    private let stdoutFD: FileDescriptor
    private let stderrFD: FileDescriptor

    init(_ arguments: [String], environment: [String: String]? = nil) throws {
        let binary = DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw HarnessError("\(binary.path) is not built: run `swift build` before `swift test` (`make test` does both)")
        }
        let out = try FileDescriptor.pipe(options: .closeOnExec)
        let err = try FileDescriptor.pipe(options: .closeOnExec)
        defer {
            try? out.writeEnd.close()
            try? err.writeEnd.close()
        }
        stdoutFD = out.readEnd
        stderrFD = err.readEnd
        open = [stdoutFD, stderrFD]
        pid = try Spawn.start([binary.path] + arguments, Spawn.Options(
            environment: environment ?? ["PATH": "/usr/bin:/bin"], stdout: .descriptor(out.writeEnd), stderr: .descriptor(err.writeEnd)))
    }

    deinit {
        if exit == nil {
            kill(pid, SIGKILL)
            _ = ProcessExit.reap(pid, blocking: true)
        }
        try? stdoutFD.close()
        try? stderrFD.close()
    }

    var stdout: String { String(decoding: output[stdoutFD] ?? [], as: UTF8.self) }
    var stderr: String { String(decoding: output[stderrFD] ?? [], as: UTF8.self) }

    /// Reads stdout and stderr until `condition` holds; fails after `timeout`, or when the
    /// program closed both first, naming `what` did not happen.
    func readUntil(_ what: String, timeout: Duration, _ condition: () -> Bool) throws {
        let deadline = Deadline(after: timeout)
        while !condition() {
            guard !open.isEmpty else { throw HarnessError("clickawayctl exited before \(what); stderr:\n\(stderr)") }
            guard !deadline.hasPassed() else { throw HarnessError("timed out after \(timeout) waiting for \(what); stderr so far:\n\(stderr)") }
            var fds = open.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), deadline.pollTimeout()) > 0 else { continue }
            for (fd, p) in zip(open, fds) where p.revents != 0 {
                var bytes = output[fd] ?? []
                let n = try? fd.readAvailable(appendingTo: &bytes)
                output[fd] = bytes
                if n == nil || n == 0 { open.removeAll { $0 == fd } }
            }
        }
    }

    /// Interrupts it (Ctrl-C) and waits for it to exit.
    func interrupt(timeout: Duration) throws {
        kill(pid, SIGINT)
        _ = try finish(timeout: timeout)
    }

    /// Reads until the program closed stdout and stderr, then returns how it exited.
    func finish(timeout: Duration) throws -> PickTests.Result {
        try readUntil("clickawayctl to exit", timeout: timeout) { open.isEmpty }
        exit = ProcessExit.reap(pid, blocking: true)
        return PickTests.Result(status: exit?.shellStatus ?? -1, stdout: stdout, stderr: stderr)
    }
}
