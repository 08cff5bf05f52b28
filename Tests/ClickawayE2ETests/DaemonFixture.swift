import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayX11
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// A real `clickaway` process with its own config and runtime directory, and its control
/// socket. Tests wait on `sync()` (the daemon's I3_SYNC), never on sleeps. `DaemonFixture`
/// runs it on Xvfb, `WaylandDaemonFixture` under headless sway.
class DaemonRun {
    let directory: URL
    let runtimeDirectory: URL
    let configPath: String
    private(set) var daemon: ChildProcess?
    /// Where `clickaway` and `clickawayctl` are run from: the debug build beside the tests,
    /// unless a test sets another (the release build).
    var programs: URL = DaemonRun.buildDirectory

    static var buildDirectory: URL {
        URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
            .deletingLastPathComponent()
    }

    init(config: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-e2e-\(UUID().uuidString)")
        runtimeDirectory = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        configPath = directory.appendingPathComponent("config.toml").path
        try TestFiles.write(config, to: configPath)
    }

    deinit {
        stopDaemon()
        try? FileManager.default.removeItem(at: directory)
    }

    /// What the daemon and clickawayctl run with: this run's directories, and the display.
    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = runtimeDirectory.path
        env["XDG_CONFIG_HOME"] = directory.path
        env["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        // No session bus: a rejected configuration must not reach the desktop of whoever runs
        // the tests (DesktopNotificationTests gives the daemon a bus of its own).
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        return env
    }

    /// The daemon's `--backend` and other display arguments.
    var displayArguments: [String] { [] }

    var log: String { daemon.flatMap { try? String(contentsOfFile: $0.logPath, encoding: .utf8) } ?? "" }

    /// Starts the daemon and waits (bounded) until it answers on its control socket.
    /// `useConfigFile: false` leaves out `--config`: the daemon then uses the XDG lookup
    /// under this fixture's directory (XDG_CONFIG_HOME).
    /// `launcher`, when given, runs the daemon: its arguments, then the daemon's command line.
    func startDaemon(extraArguments: [String] = [], extraEnvironment: [String: String] = [:],
                     useConfigFile: Bool = true, launcher: [String] = []) throws {
        let binary = programs.appendingPathComponent("clickaway").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw HarnessError("\(binary) is not built: run `swift build` before `swift test` (`make test` does both)")
        }
        let p = try ChildProcess(launcher + [binary] + (useConfigFile ? ["--config", configPath] : [])
                                 + ["--log-level", "debug"] + displayArguments + extraArguments,
                                 environment: environment.merging(extraEnvironment) { $1 })
        daemon = p
        let deadline = Deadline(after: .seconds(10))
        while true {
            if !p.isRunning {
                throw HarnessError("clickaway exited before answering; its log:\n\(log)")
            }
            if (try? sync()) != nil { return }
            guard !deadline.hasPassed() else {
                throw HarnessError("clickaway did not answer on its control socket within 10 s; its log:\n\(log)")
            }
            Thread.sleep(forTimeInterval: 0.02)  // polling for a socket to appear, not for synchronisation
        }
    }

    func stopDaemon() {
        daemon?.stop()
    }

    var socketPath: String { runtimeDirectory.path + "/clickaway/ctl.sock" }

    /// Sends one request and returns the reply, whatever it says.
    func call(_ request: ControlRequest) throws -> JSON {
        do {
            return try ControlClient(path: socketPath).call(request.json, timeoutMs: 10_000)
        } catch {
            throw HarnessError("\(request.json.text): \(error)\nthe daemon's log:\n\(log)")
        }
    }

    func request(_ request: ControlRequest) throws -> JSON {
        let reply = try call(request)
        if let refusal = Refusal(reply: reply) { throw HarnessError("\(request.json.text) refused: \(refusal)") }
        return reply
    }

    /// Returns once the daemon has handled everything the display sent before now.
    func sync() throws { _ = try request(.sync) }

    /// The status as it comes, for what a test checks of the wire format.
    func status() throws -> JSON { try request(.status) }

    /// The status as clickawayctl reads it.
    func report() throws -> StatusReport { try StatusReport(reply: try status()) }

    func openPopups() throws -> [String] {
        try report().open.map(\.popup)
    }

    /// Syncs until `condition` holds, at most `timeout`: for what another program does in its
    /// own time (a compositor's transaction, a window mapped, a window's new geometry).
    func eventually(_ what: String, timeout: Duration = .seconds(5), _ condition: () throws -> Bool) throws {
        let deadline = Deadline(after: timeout)
        while true {
            try sync()
            if try condition() { return }
            guard !deadline.hasPassed() else {
                throw HarnessError("timed out after \(timeout) waiting for \(what); status: \((try? status().text) ?? "none")\n\(log)")
            }
            Thread.sleep(forTimeInterval: 0.02)  // the other program acts in its own time
        }
    }
}

/// A real Xvfb (and openbox when asked), the daemon on it, a test client for windows and
/// XTest for input.
final class DaemonFixture: DaemonRun {
    let xvfb: XvfbServer
    let windowManager: WindowManager?
    let client: TestClient
    let input: XTestInput

    /// How the daemon takes clicks; every shared end-to-end case runs with both.
    let backend: XBackend

    /// `serverArguments`: more of Xvfb's options.
    init(config: String, openbox: Bool = false, windowManager kind: WindowManagerKind? = nil, backend: XBackend = .grab,
         serverArguments: [String] = []) throws {
        self.backend = backend
        let xvfb = try XvfbServer(arguments: serverArguments)
        self.xvfb = xvfb
        windowManager = try (kind ?? (openbox ? .openbox : nil)).map { try WindowManager($0, display: xvfb.display) }
        client = try TestClient(display: xvfb.display)
        input = try XTestInput(display: xvfb.display)
        try super.init(config: config)
    }

    deinit {
        stopDaemon()
        windowManager?.stop()
        xvfb.stop()
    }

    /// Xvfb's display, and no Wayland display: `auto` would choose it over X.
    override var environment: [String: String] {
        var env = super.environment
        env["DISPLAY"] = xvfb.display
        env["WAYLAND_DISPLAY"] = nil
        return env
    }

    override var displayArguments: [String] { backend == .configured ? [] : ["--backend", backend.rawValue] }

    /// Whether clicks go through the daemon now: grabs held, or the shield mapped.
    func isIntercepting() throws -> Bool { try report().isIntercepting }

    /// Creates a window, then waits until the daemon has seen it.
    @discardableResult
    func window(_ rect: Rect, class windowClass: String, on client: TestClient? = nil, closesOnDelete: Bool = true,
                title: String = "recorder", type: String? = nil) throws -> TestWindow {
        let w = try (client ?? self.client).createWindow(
            at: rect, wmClass: WMClass(instance: windowClass.lowercased(), windowClass: windowClass),
            title: title, type: type, closesOnDelete: closesOnDelete)
        try sync()
        return w
    }

    /// Clicks through XTest, lets the daemon decide, then lets the test client read what arrived
    /// (including WM_DELETE_WINDOW, which it answers by destroying the window), then syncs again
    /// so the daemon has seen the result. The daemon sees the pointer arrive before the press,
    /// as it does when a person moves and then clicks: in shield mode it grabs the root only
    /// while the pointer is over the shield.
    func click(_ x: Int32, _ y: Int32, button: UInt8 = 1) throws {
        try input.motion(x: x, y: y)
        try sync()
        try input.press(button)
        try input.release(button)
        try settle()
    }

    func settle() throws {
        try sync()
        try client.drain()
        try sync()
        // The client destroyed a window on WM_DELETE_WINDOW: read its own DestroyNotify.
        try client.drain()
    }
}

extension ProgramRun {
    /// Runs `program` to its end with exactly `environment`.
    static func run(_ program: URL, _ arguments: [String], environment: [String: String]) throws -> ProgramRun {
        try run([program.path] + arguments, environment: environment)
    }
}

extension DaemonRun {
    /// Runs the built `clickawayctl` against this fixture's daemon and display; fails when it
    /// has not finished within `limit`.
    func ctl(_ arguments: [String], limit: Duration = .seconds(300)) throws -> ProgramRun {
        try ProgramRun.run([programs.appendingPathComponent("clickawayctl").path] + arguments, environment: environment,
                           limit: limit)
    }

    /// A `monitor` subscription: the events the daemon sends from now on.
    func monitor() throws -> EventStream {
        let client = try ControlClient(path: socketPath)
        let reply = try client.call(ControlRequest.monitor.json)
        if let refusal = Refusal(reply: reply) { throw HarnessError("monitor refused: \(refusal)") }
        return EventStream(client: client)
    }

    /// Overwrites the config file in place (open, truncate, write, close), as `echo >` does.
    func editConfigInPlace(_ text: String) throws { try TestFiles.write(text, to: configPath) }

    /// Writes a new file beside the config and renames it over it, as many editors save.
    func replaceConfigByRename(_ text: String) throws { try TestFiles.replace(configPath, with: text) }
}

/// Events from `monitor`, read with a bounded wait.
final class EventStream {
    let client: ControlClient
    init(client: ControlClient) { self.client = client }

    /// The next event; fails saying what was awaited when none comes within `timeoutMs`.
    func next(_ what: String, timeoutMs: Int32 = 10_000) throws -> JSON {
        do {
            guard let event = try client.receive(timeoutMs: timeoutMs) else {
                throw HarnessError("the daemon closed the monitor stream while waiting for \(what)")
            }
            return event
        } catch let error as ControlClient.Failure {
            throw HarnessError("waiting for \(what): \(error)")
        }
    }

    /// Skips events until one named `name` arrives: what else comes meanwhile (a reload, a
    /// window opening elsewhere) does not matter to a test waiting for this one.
    func await(_ name: MonitorEvent.Name, timeoutMs: Int32 = 10_000) throws -> JSON {
        while true {
            let event = try next("a \"\(name.rawValue)\" event", timeoutMs: timeoutMs)
            if event["event"]?.stringValue == name.rawValue { return event }
        }
    }
}

/// The two X11 modes: passive grabs on the root, or the input-shaped shield window.
enum XBackend: String, CaseIterable, CustomTestStringConvertible {
    case grab = "x11-grab"
    case shield = "x11-shield"
    /// Not in allCases: `auto` is grab mode until a grab is refused, tested on its own.
    case auto
    /// No `--backend`: the configuration's, which a reload may change.
    case configured
    static var allCases: [XBackend] { [.grab, .shield] }
    var testDescription: String { rawValue }
}

/// The config's popup windows and where they sit, shared by many cases.
enum Layout {
    static let popup = Rect(x: 100, y: 100, width: 300, height: 200)
    static let background = Rect(x: 0, y: 0, width: 1280, height: 720)
}
