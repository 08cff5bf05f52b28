import ClickawayCore
import ClickawayJSON
import ClickawayWayland
import Foundation
import ProcessSupport

/// The compositors the tests run: two wlroots ones and KWin.
public enum CompositorKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sway, phoc, kwin

    public var description: String { rawValue }

    /// The kinds the tests run on: all, or those named in $CLICKAWAY_TEST_COMPOSITORS
    /// ("sway,kwin"), to look at one while developing.
    public static var tested: [CompositorKind] {
        guard let names = ProcessInfo.processInfo.environment["CLICKAWAY_TEST_COMPOSITORS"], !names.isEmpty else { return allCases }
        return names.split(separator: ",").compactMap { CompositorKind(rawValue: String($0)) }
    }

    /// The pixel a client is told for an exact point: wlroots sends the point, KWin 5.27
    /// rounds it to whole pixels.
    public func sent(_ p: Position) -> [Int32] {
        self == .kwin ? [Int32(p.x.rounded()), Int32(p.y.rounded())] : [p.pixel.x, p.pixel.y]
    }
}

/// An output a test's compositor has: its name as the compositor names it, where it goes
/// and its size. sway adds the others of its list with `createOutput()`.
public struct HeadlessOutput: Sendable {
    public var name: String
    public var rect: Rect

    public init(name: String, rect: Rect) {
        self.name = name
        self.rect = rect
    }
}

/// A private compositor for tests: sway or phoc on wlroots' headless backend with the
/// pixman renderer, or KWin's virtual backend on a session bus of its own; no Xwayland, no
/// input devices, in a runtime directory of its own, gone after `stop()` or deinit.
///
/// None of them runs as root (sway refuses it; users do not run compositors as root), so
/// under root each runs as `nobody` (setpriv), in a directory owned by nobody, mode 0700.
/// The test process, still root, connects to the sockets in it by absolute path: root
/// passes the directory's and the sockets' permission checks. Under any other user the
/// compositor runs as that user.
public final class HeadlessCompositor {
    public let kind: CompositorKind
    public let runtimeDirectory: String
    /// The Wayland socket's absolute path, for `WaylandClient(display:)`.
    public let waylandSocket: String
    /// sway's IPC socket (what `SWAYSOCK` would name); nil for the others.
    public let ipcSocket: String?
    /// KWin's session bus (what `DBUS_SESSION_BUS_ADDRESS` would name); nil for the others.
    public var sessionBus: String? { kind == .kwin ? "unix:path=\(runtimeDirectory)/bus" : nil }
    /// The outputs as configured; all but sway's first wait for `createOutput()`.
    public let outputs: [HeadlessOutput]
    /// The user the compositor runs as when it is not the test process's (`nobody` under
    /// root); nil when it is.
    public let user: (uid: uid_t, gid: gid_t)?
    private let processes: [ChildProcess]
    private var stopped = false

    /// sway's outputs; phoc and KWin get the first only.
    public static let defaultOutputs = [
        HeadlessOutput(name: "HEADLESS-1", rect: Rect(x: 0, y: 0, width: 1280, height: 720)),
        HeadlessOutput(name: "HEADLESS-2", rect: Rect(x: 1280, y: 0, width: 800, height: 600)),
    ]

    /// `scale` is the first output's scale (sway only). `swayConfig` (sway only): lines added
    /// to the end of sway's config file, read at start as a user's are (run over IPC,
    /// `for_window [...] a, b` would split at the comma). `fakeInputFor` (KWin only): nil
    /// lifts KWin's permission check for every client (KWIN_WAYLAND_NO_PERMISSION_CHECKS=1);
    /// a list of executables keeps the check and installs a .desktop file for each that
    /// names org_kde_kwin_fake_input in X-KDE-Wayland-Interfaces, as a desktop would.
    /// `path` (sway only): directories put before /usr/bin:/bin on sway's PATH, where its
    /// `exec` finds programs (the built clickawayctl, as an install puts it on a user's PATH).
    public init(_ kind: CompositorKind, outputs: [HeadlessOutput] = defaultOutputs, scale: Int = 1, swayConfig: [String] = [],
                path: [String] = [], fakeInputFor trusted: [String]? = nil, timeout: Duration = .seconds(15)) throws {
        self.kind = kind
        var template = Array("/tmp/clickaway-\(kind)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("cannot create a runtime directory for \(kind): \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        runtimeDirectory = directory
        // KWin as another user than the tests needs CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH
        // (see `kwin`); a container without them runs KWin as root, the tests' own user.
        let user = kind == .kwin && !Self.mayGrantKWinCapabilities ? nil : try Self.unprivilegedUser()
        self.user = user.map { ($0.uid, $0.gid) }
        let launch: Launch
        var started: [ChildProcess] = []
        var socket: String?
        do {
            switch kind {
            case .sway: launch = try Self.sway(directory, outputs, scale: scale, extra: swayConfig, path: path)
            case .phoc: launch = try Self.phoc(directory, outputs[0])
            case .kwin: launch = try Self.kwin(directory, outputs[0], asRoot: user != nil, trusted: trusted)
            }
            if let user { try Self.give(directory, to: user) }
            for step in launch.steps {
                let command = user.map { ["setpriv", "--reuid=\($0.uid)", "--regid=\($0.gid)", "--init-groups"] + step.extraPrivileges }
                let argv = (command ?? []) + ["env", "-i"] + launch.environment.map { "\($0.key)=\($0.value)" }.sorted() + step.command
                let process = try ChildProcess(argv, environment: ["PATH": "/usr/bin:/bin"])
                started.append(process)
                try eventually("\(step.command[0]) to create \(step.readyPath)", timeout: timeout, every: .milliseconds(20)) {
                    try process.checkRunning(while: "starting")
                    return FileManager.default.fileExists(atPath: step.readyPath)
                }
            }
            // wlroots takes the first free wayland-N.
            socket = launch.waylandSocket
            try eventually("\(kind) to create its Wayland socket in \(directory)", timeout: timeout, every: .milliseconds(20)) {
                try started.last?.checkRunning(while: "starting")
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                socket = socket ?? names.sorted().first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }.map { directory + "/" + $0 }
                return socket.map(FileManager.default.fileExists) ?? false
            }
        } catch {
            for process in started.reversed() { process.stop() }
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        processes = started
        waylandSocket = socket!
        ipcSocket = launch.ipcSocket
        self.outputs = kind == .sway ? outputs : [launch.firstOutput]
        do {
            try waitUntilReady(timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    private var scriptsRun = 0

    /// Runs `script` in KWin, as a user's KWin script: written beside KWin's socket, loaded
    /// under a name of its own and started (`Scripting.start`, which starts the loaded
    /// scripts not running yet); it unloads itself at its end. KWin evaluates it after
    /// answering: the caller waits for what it does.
    public func runKWinScript(_ script: String) throws {
        scriptsRun += 1
        let path = "\(runtimeDirectory)/test-script-\(scriptsRun).js"
        try TestFiles.write(script + """

            callDBus("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting", "unloadScript", "clickaway-test-\(scriptsRun)");

            """, to: path)
        chmod(path, 0o644)
        _ = try kwinScripting("loadScript", [path, "clickaway-test-\(scriptsRun)"])
        _ = try kwinScripting("start")
    }

    /// Calls `org.kde.kwin.Scripting.<member>` on KWin's bus (dbus-send), with string
    /// arguments; returns what dbus-send printed of the reply.
    public func kwinScripting(_ member: String, _ arguments: [String] = []) throws -> String {
        guard let bus = sessionBus else { throw HarnessError("\(kind) has no KWin scripting") }
        let call = ["/Scripting", "org.kde.kwin.Scripting.\(member)"] + arguments.map { "string:\($0)" }
        let run = try ProgramRun.run(["dbus-send", "--session", "--print-reply", "--dest=org.kde.KWin"] + call,
                                     environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": bus], limit: .seconds(10))
        guard run.status == 0 else { throw HarnessError("dbus-send \(call.joined(separator: " ")) exited \(run.status): \(run.output)") }
        return run.stdout
    }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        for process in processes.reversed() { process.stop() }
        try? FileManager.default.removeItem(atPath: runtimeDirectory)
    }

    /// `command` as the compositor's user runs it: a program of the same session as the
    /// compositor's `exec` (under root, through setpriv as `nobody`).
    public func asItsUser(_ command: [String]) -> [String] {
        guard let user else { return command }
        return ["setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups"] + command
    }

    /// Whether the compositor still runs (and was not stopped).
    public var isRunning: Bool { !stopped && processes.allSatisfy(\.isRunning) }

    /// The end of the compositor's stderr, for failure messages.
    public var logTail: String { processes.last?.logTail ?? "" }

    /// Throws with the compositor's stderr if it has exited.
    public func checkRunning(while doing: String) throws {
        for process in processes { try process.checkRunning(while: doing) }
    }

    // MARK: - sway only

    /// Runs a sway command (what `swaymsg COMMAND` does) and throws sway's error if it failed.
    public func command(_ text: String) throws {
        let ipc = try swayIPC(for: "\"\(text)\"")
        try checkRunning(while: "running \"\(text)\"")
        let reply = try Self.call(.runCommand, text, at: ipc)
        guard let results = reply.arrayValue, !results.isEmpty else {
            throw HarnessError("sway answered \"\(text)\" with \(reply.text)")
        }
        for result in results where result["success"]?.boolValue != true {
            throw HarnessError("sway refused \"\(text)\": \(result["error"]?.stringValue ?? "no reason given")")
        }
    }

    /// sway's tree (`get_tree`).
    public func tree() throws -> JSON {
        try Self.call(.getTree, "", at: try swayIPC(for: "get_tree"))
    }

    /// The names of the outputs sway has now, from its IPC.
    public func outputNames() throws -> [String] {
        let reply = try Self.call(.getOutputs, "", at: try swayIPC(for: "get_outputs"))
        guard let outputs = reply.arrayValue else { throw HarnessError("sway answered get_outputs with \(reply.text)") }
        return outputs.compactMap { $0["name"]?.stringValue }
    }

    /// Adds a headless output; it takes the next configured name and place.
    public func createOutput() throws {
        try command("create_output")
    }

    private func swayIPC(for request: String) throws -> String {
        guard let ipcSocket else { throw HarnessError("\(kind) has no IPC for \(request): that is sway's") }
        return ipcSocket
    }

    /// One request on a connection of its own, and its reply.
    private static func call(_ type: SwayIPC.MessageType, _ payload: String, at path: String) throws -> JSON {
        do {
            return try SwayIPC(path: path).call(type, payload, timeoutMs: 5000)
        } catch {
            throw HarnessError("\(error)")
        }
    }

    // MARK: - Starting

    /// The programs to run in order, each ready once its file exists, with one environment.
    private struct Launch {
        struct Step {
            var command: [String]
            var readyPath: String
            /// setpriv options beyond the user switch.
            var extraPrivileges: [String] = []
        }
        var steps: [Step]
        var environment: [String: String]
        /// nil: the first wayland-N the compositor created.
        var waylandSocket: String?
        var ipcSocket: String?
        var firstOutput: HeadlessOutput
    }

    private static func wlrootsEnvironment(_ directory: String) -> [String: String] {
        ["HOME": directory, "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": directory,
         "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1"]
    }

    private static func sway(_ directory: String, _ outputs: [HeadlessOutput], scale: Int, extra: [String], path: [String]) throws -> Launch {
        let config = directory + "/config"
        var lines = outputs.enumerated().map { i, o in
            "output \(o.name) resolution \(o.rect.width * Int32(i == 0 ? scale : 1))x\(o.rect.height * Int32(i == 0 ? scale : 1))"
                + " position \(o.rect.x) \(o.rect.y)" + (i == 0 && scale != 1 ? " scale \(scale)" : "")
        }
        // Test windows named clickaway-test-* float from the start, at the size they ask for,
        // as popups do.
        lines += ["default_border none", "xwayland disable", #"for_window [app_id="^clickaway-test"] floating enable"#] + extra
        try TestFiles.write(lines.joined(separator: "\n") + "\n", to: config)
        let ipc = directory + "/ipc.sock"
        var environment = wlrootsEnvironment(directory)
        environment["SWAYSOCK"] = ipc
        environment["PATH"] = (path + [environment["PATH"] ?? "/usr/bin:/bin"]).joined(separator: ":")
        return Launch(steps: [.init(command: ["sway", "-c", config], readyPath: ipc)], environment: environment,
                      waylandSocket: nil, ipcSocket: ipc, firstOutput: outputs[0])
    }

    /// phoc reads its outputs from an ini file; with none it would take the defaults of a phone.
    private static func phoc(_ directory: String, _ output: HeadlessOutput) throws -> Launch {
        let config = directory + "/phoc.ini"
        let text = "[output:\(output.name)]\nmode = \(output.rect.width)x\(output.rect.height)\nscale = 1\n"
        try TestFiles.write(text, to: config)
        var environment = wlrootsEnvironment(directory)
        // No dconf daemon to talk to: GSettings keeps phoc's settings in memory.
        environment["GSETTINGS_BACKEND"] = "memory"
        return Launch(steps: [.init(command: ["phoc", "-C", config], readyPath: config)],
                      environment: environment, waylandSocket: nil, ipcSocket: nil, firstOutput: output)
    }

    /// KWin on a session bus of its own, compositing with QPainter (software OpenGL would
    /// spend the test machine's CPU on frames nobody sees). The packaged kwin_wayland
    /// carries the file capability cap_sys_resource, which a container without that
    /// capability refuses to exec (EPERM); a copy has none. Under root the test process and
    /// KWin differ in user, and KWin gives fake input only to clients whose executable it
    /// can read twice, through /proc/PID/exe and by its path, and finds the same (KWin 5.27
    /// does so even with KWIN_WAYLAND_NO_PERMISSION_CHECKS), which it can for its own user's
    /// on a desktop. CAP_SYS_PTRACE lets it read the test process's /proc/PID/exe, and
    /// CAP_DAC_READ_SEARCH its path where `nobody` may not look: a checkout under /root,
    /// mode 0700 on Debian, as on a fresh machine where root clones and runs `make test`.
    private static func kwin(_ directory: String, _ output: HeadlessOutput, asRoot: Bool, trusted: [String]?) throws -> Launch {
        let binary = try kwinCopy()
        let bus = directory + "/bus"
        let socket = "wayland-kwin"
        var environment = [
            "HOME": directory, "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": directory,
            "XDG_CONFIG_HOME": directory + "/config", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(bus)",
            "KWIN_COMPOSE": "Q",
        ]
        if let trusted {
            // $XDG_DATA_HOME/applications, where KWin's application lookup finds them.
            let applications = directory + "/.local/share/applications"
            try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
            for (i, program) in trusted.enumerated() {
                let entry = "[Desktop Entry]\nType=Application\nName=trusted \(i)\nExec=\(program)\nNoDisplay=true\n"
                    + "X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input\n"
                try TestFiles.write(entry, to: "\(applications)/clickaway-test-\(i).desktop")
            }
        } else {
            environment["KWIN_WAYLAND_NO_PERMISSION_CHECKS"] = "1"
        }
        // A session bus that also lets root in: the tests (and the daemon under test) run
        // as root while KWin and its bus run as nobody, and a bus admits its own user only.
        let busConfig = directory + "/session-bus.conf"
        try TestFiles.write("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <include>/usr/share/dbus-1/session.conf</include>
              <policy context="default"><allow user="root"/></policy>
            </busconfig>
            """, to: busConfig)
        let kwin = [binary, "--virtual", "--width", "\(output.rect.width)", "--height", "\(output.rect.height)",
                    "--socket", socket, "--no-lockscreen", "--no-global-shortcuts", "--no-kactivities"]
        return Launch(
            steps: [
                .init(command: ["dbus-daemon", "--config-file=\(busConfig)", "--nofork", "--nopidfile", "--address=unix:path=\(bus)"],
                      readyPath: bus),
                .init(command: kwin, readyPath: directory + "/" + socket,
                      extraPrivileges: asRoot ? ["--inh-caps=+sys_ptrace,+dac_read_search", "--ambient-caps=+sys_ptrace,+dac_read_search"] : []),
            ],
            environment: environment, waylandSocket: directory + "/" + socket, ipcSocket: nil,
            firstOutput: HeadlessOutput(name: "Virtual-0", rect: Rect(x: 0, y: 0, width: output.rect.width, height: output.rect.height)))
    }

    private static let kwinCopyLock = NSLock()
    nonisolated(unsafe) private static var kwinCopyPath: String?

    /// A copy of kwin_wayland without file capabilities, made once per test process in a
    /// directory every user can read, removed at exit.
    private static func kwinCopy() throws -> String {
        kwinCopyLock.lock()
        defer { kwinCopyLock.unlock() }
        if let kwinCopyPath { return kwinCopyPath }
        guard let source = ["/usr/bin/kwin_wayland", "/usr/local/bin/kwin_wayland"].first(where: FileManager.default.isExecutableFile) else {
            throw HarnessError("kwin_wayland is not installed (Debian: apt-get install kwin-wayland)")
        }
        var template = Array("/tmp/clickaway-kwin-binary-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("cannot create a directory for a copy of kwin_wayland: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        chmod(directory, 0o755)
        let copy = directory + "/kwin_wayland"
        // Written through a close-on-exec descriptor: a child spawned meanwhile by another
        // test must not inherit it, or exec of the copy fails with ETXTBSY.
        guard let bytes = FileManager.default.contents(atPath: source) else {
            throw HarnessError("cannot read \(source)")
        }
        let fd = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw HarnessError("cannot create \(copy): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw HarnessError("cannot write \(copy): \(String(cString: strerror(errno)))") }
        kwinCopyPath = copy
        atexit { if let path = HeadlessCompositor.kwinCopyPath { unlink(path); rmdir((path as NSString).deletingLastPathComponent) } }
        return copy
    }

    private static func give(_ directory: String, to user: (name: String, uid: uid_t, gid: gid_t)) throws {
        for path in [directory] + ((try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? []).map({ directory + "/" + $0 }) {
            guard chown(path, user.uid, user.gid) == 0 else {
                throw HarnessError("cannot give \(path) to \(user.name): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Whether this process may hand CAP_SYS_PTRACE (19) and CAP_DAC_READ_SEARCH (2) to a
    /// child: both are in the bounding set.
    private static let mayGrantKWinCapabilities: Bool = {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapBnd:") }),
              let mask = UInt64(line.dropFirst("CapBnd:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        let wanted: UInt64 = 1 << 19 | 1 << 2
        return mask & wanted == wanted
    }()

    private static func unprivilegedUser() throws -> (name: String, uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0 else { return nil }
        guard let entry = getpwnam("nobody") else {
            throw HarnessError("running as root, and there is no user \"nobody\" to run the compositor as (sway refuses root)")
        }
        return ("nobody", entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Waits until a client sees the first output described and layer-shell offered (and
    /// sway's IPC answers): the compositor writes no file or event that says "ready".
    private func waitUntilReady(timeout: Duration) throws {
        var lastError = "no connection yet"
        do {
            try eventually("\(kind) to describe its output to a client", timeout: timeout, every: .milliseconds(20)) {
                try checkRunning(while: "starting")
                do {
                    let client = try WaylandClient(display: waylandSocket)
                    guard client.outputs.contains(where: { $0.name == outputs[0].name }) else {
                        lastError = "a client sees the outputs \(client.outputs), not \(outputs[0].name)"
                        return false
                    }
                    if let ipcSocket { _ = try Self.call(.getOutputs, "", at: ipcSocket) }
                    return true
                } catch {
                    lastError = "\(error)"
                    return false
                }
            }
        } catch {
            guard isRunning else { throw error }
            throw HarnessError("\(error) (last: \(lastError))\n\(logTail)")
        }
    }
}
