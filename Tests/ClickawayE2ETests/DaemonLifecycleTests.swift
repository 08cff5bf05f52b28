import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// Starting, stopping and failing: the daemon leaves the desktop as it found it and says
/// plainly why it could not run.
@Suite("Daemon start and stop", .serialized)
struct DaemonLifecycleTests {
    static let pop = "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\ngrace_ms = 0\n"

    /// Runs the daemon until it exits by itself (bounded); returns its status and stderr.
    func runToExit(_ f: DaemonFixture, arguments: [String], environment: [String: String]) throws -> (Int32, String) {
        let binary = DaemonFixture.buildDirectory.appendingPathComponent("clickaway").path
        let p = try ChildProcess([binary] + arguments, environment: environment)
        defer { p.stop() }
        let status = try #require(p.signalAndWait(0, within: .seconds(10)), "clickaway did not exit by itself: \(p.logTail)")
        return (status, (try? String(contentsOfFile: p.logPath, encoding: .utf8)) ?? "")
    }

    @Test(arguments: XBackend.allCases) func sigtermReleasesEverythingAndExits0(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.pop, backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try f.isIntercepting())
        let shield = try f.status()["shield"]?["window"]?.stringValue

        #expect(f.daemon?.signalAndWait(SIGTERM) == 0, "\(f.log)")
        #expect(!FileManager.default.fileExists(atPath: f.socketPath), "the control socket is removed")
        if let shield {
            let children = try f.client.connection.queryTree(f.client.connection.root).children
            #expect(!children.map { "0x" + String($0, radix: 16) }.contains(shield), "the shield window is destroyed")
        }
        // Nothing is grabbed or covered any more: a click outside the popup arrives as usual.
        try f.input.click(1, at: 600, 500)
        try f.client.drain()
        #expect(f.client.presses(under) == [Click(button: 1, x: 600, y: 500)])
        #expect(f.client.deleteRequests(popup) == 0)
    }

    @Test func losingTheXServerExits1WithOneSentence() throws {
        let f = try DaemonFixture(config: Self.pop)
        try f.startDaemon()
        f.xvfb.stop()
        let status = try #require(f.daemon?.signalAndWait(0, within: .seconds(10)), "clickaway kept running without its X server")
        #expect(status == 1)
        #expect(f.log.contains("lost the connection to the X server"), "\(f.log)")
    }

    @Test func appIdOnX11IsSaidToNeverMatch() throws {
        let f = try DaemonFixture(config: """
            [[popup]]
            name = "menu"
            window = { app_id = "menu" }
            [[exclude]]
            window = { class = "Onboard", app_id = "onboard" }
            """)
        try f.startDaemon()
        let unavailable = try f.status()["unavailable"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(unavailable.map { $0.prefix(while: { $0 != ":" }) } == [
            "popup \"menu\" matches by app_id, which only Wayland windows have",
            "exclude #1 matches by app_id, which only Wayland windows have",
        ])
        #expect(f.log.contains("never matches on the X server \(f.xvfb.display)"), "\(f.log)")
    }

    @Test func noConfigurationFileRunsWithNoPopupsAndSaysWhereItGoes() throws {
        let f = try DaemonFixture(config: "")
        try f.startDaemon(useConfigFile: false)
        #expect(try f.status()["popups"]?.intValue == 0)
        #expect(try f.status()["config"]?.arrayValue?.isEmpty == true)
        let expected = f.directory.appendingPathComponent("clickaway/config.toml").path
        #expect(f.log.contains("no configuration file; running with no popups (create \(expected) to add some)"), "\(f.log)")
    }

    /// No display is exit status 69, which the unit does not restart on (RestartPreventExitStatus).
    @Test func missingDisplayExits69WithOneSentence() throws {
        let f = try DaemonFixture(config: Self.pop)
        var environment = f.environment
        environment["DISPLAY"] = nil
        let (status, log) = try runToExit(f, arguments: ["--config", f.configPath], environment: environment)
        #expect(status == 69)
        #expect(log == "clickaway: no X display: DISPLAY is not set and no display was given\n")

        let (status2, log2) = try runToExit(f, arguments: ["--config", f.configPath, "--display", ":4321"], environment: environment)
        #expect(status2 == 69)
        #expect(log2.hasPrefix("clickaway: cannot connect to X server \":4321\""), "\(log2)")
        #expect(log2.split(separator: "\n").count == 1, "\(log2)")
    }

    /// `--config FILE` naming no file is a mistake on the command line: one sentence and exit
    /// 64 at start, before the display is looked for, instead of running with no popups.
    /// (Without --config, no file at all still runs: noConfigurationFileRunsWithNoPopupsAndSaysWhereItGoes.)
    @Test func anExplicitConfigThatDoesNotExistExits64WithOneSentence() throws {
        let f = try DaemonFixture(config: Self.pop)
        let missing = f.directory.appendingPathComponent("missing.toml").path
        let expected = f.directory.appendingPathComponent("clickaway/config.toml").path
        for environment in [f.environment, f.environment.merging(["DISPLAY": ""]) { $1 }] {
            let (status, log) = try runToExit(f, arguments: ["--config", missing] + f.displayArguments, environment: environment)
            #expect(status == 64, "\(log)")
            #expect(log == "clickaway: --config \(missing): cannot read it (no such file); name a file that exists, "
                    + "or leave --config out to read \(expected)\n", "\(log)")
        }
        #expect(!FileManager.default.fileExists(atPath: f.socketPath), "the daemon that refused to start left a control socket")
    }

    /// A second daemon for the same user says so and exits 73 (no restart), leaving the first
    /// one's socket alone.
    @Test func aSecondInstanceExits73() throws {
        let f = try DaemonFixture(config: Self.pop)
        try f.startDaemon()
        let (status, log) = try runToExit(f, arguments: ["--config", f.configPath] + f.displayArguments, environment: f.environment)
        #expect(status == 73, "\(log)")
        #expect(log.hasPrefix("clickaway: another clickaway is already running (its control socket \(f.socketPath) answers)"), "\(log)")
        #expect(try f.status()["popups"]?.intValue == 1, "the first daemon stopped answering")
    }

    /// SO_PEERCRED: even with the directory and socket opened up by mistake, another user's
    /// connection gets nothing. Needs root to act as another user.
    @Test(.enabled(if: getuid() == 0, "needs root to connect as another user"))
    func peerOfAnotherUserIsRefused() throws {
        let f = try DaemonFixture(config: Self.pop)
        try f.startDaemon()
        for path in [f.directory.path, f.runtimeDirectory.path, f.runtimeDirectory.path + "/clickaway"] { chmod(path, 0o755) }
        chmod(f.socketPath, 0o666)
        let run = try ProgramRun.run(URL(fileURLWithPath: "/usr/bin/setpriv"), [
            "--reuid=65534", "--regid=65534", "--clear-groups",
            DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl").path, "status",
        ], environment: f.environment)
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("closed the connection"), "\(run.stderr)")
        #expect(try f.status()["ok"]?.boolValue == true, "its owner is still served")
    }
}
