import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// Nothing a configuration file contains stops the daemon: at start a broken file means the
/// last configuration that loaded (or none) until it is fixed, and a file saved broken under
/// a running daemon leaves the running configuration in place.
@Suite("Broken configurations: start with the last good one, never exit", .serialized)
struct BrokenConfigTests {
    static let pop = "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\ngrace_ms = 0\n"
    static let typo = "[[popup]]\nname = \"pop\"\nwindow = { clas = \"Pop\" }\n"

    /// The popup works: an outside click closes its window and reaches nothing else.
    func expectPopupDismissedByAnOutsideClick(_ f: DaemonFixture, under: TestWindow) throws {
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try f.openPopups() == ["pop"])
        try f.click(900, 600)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.presses(under).isEmpty)
    }

    @Test func brokenAtStartWithNothingToFallBackOnRunsEmptyAndAppliesTheFix() throws {
        let f = try DaemonFixture(config: Self.typo)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let status = try f.status()
        #expect(status["running"]?.stringValue == "none")
        #expect(status["popups"]?.intValue == 0)
        let rejected = status["rejected"]?.stringValue ?? ""
        #expect(rejected.contains("\(f.configPath):3:12: error:"), "\(rejected)")
        #expect(rejected.contains("did you mean \"class\"?"), "\(rejected)")
        #expect(f.log.contains("running with no popups, as there is no last good configuration"), "\(f.log)")
        let text = try f.ctl(["status"]).stdout
        #expect(text.contains("running:  no configuration (no popups) until the errors below are fixed"), "\(text)")
        #expect(text.contains("rejected: the configuration has errors:"), "\(text)")

        let events = try f.monitor()
        try f.editConfigInPlace(Self.pop)
        _ = try events.await(.reloaded)
        #expect(try f.status()["running"]?.stringValue == "files")
        #expect(try f.status()["rejected"]?.isNull == true)
        try expectPopupDismissedByAnOutsideClick(f, under: under)
    }

    @Test func brokenAtStartRunsTheLastGoodConfigurationUntilFixed() throws {
        let f = try DaemonFixture(config: Self.pop)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let kept = f.environment["XDG_STATE_HOME"]! + "/clickaway/last-good.toml"
        #expect(try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? Int == 0o600)
        #expect(f.daemon?.signalAndWait(SIGTERM) == 0)

        try f.editConfigInPlace(Self.typo)
        try f.startDaemon()
        let status = try f.status()
        #expect(status["running"]?.stringValue == "last-good")
        #expect(status["last_good"]?["file"]?.stringValue == kept)
        #expect(status["popups"]?.intValue == 1)
        #expect(status["rejected"]?.stringValue?.contains("did you mean \"class\"?") == true)
        #expect(f.log.contains("running with the last configuration that loaded, saved "), "\(f.log)")
        #expect(try f.ctl(["status"]).stdout.contains("running:  the last configuration that loaded, saved "))
        try expectPopupDismissedByAnOutsideClick(f, under: under)

        let events = try f.monitor()
        try f.editConfigInPlace(Self.pop.replacingOccurrences(of: "\"pop\"", with: "\"fixed\""))
        #expect(try events.await(.reloaded)["popups"]?.intValue == 1)
        #expect(try f.status()["running"]?.stringValue == "files")
        #expect(try f.status()["rejected"]?.isNull == true)
        #expect(try String(contentsOfFile: kept, encoding: .utf8).contains("name = \\\"fixed\\\""), "the fixed file is kept now")
    }

    @Test func aBrokenDropInAtStartFallsBackToo() throws {
        // The XDG lookup: config.toml and conf.d/*.toml under XDG_CONFIG_HOME.
        let f = try DaemonFixture(config: "")
        let dir = f.directory.appendingPathComponent("clickaway")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("conf.d"), withIntermediateDirectories: true)
        try TestFiles.write(Self.pop, to: dir.appendingPathComponent("config.toml").path)
        let dropIn = dir.appendingPathComponent("conf.d/10-more.toml")
        try TestFiles.write("[[exclude]]\nrect = [0, 0, 10, 10]\n", to: dropIn.path)
        try f.startDaemon(useConfigFile: false)
        #expect(f.daemon?.signalAndWait(SIGTERM) == 0)

        try TestFiles.write("[[exclude]]\nrect = [0, 0, 10, 10\n", to: dropIn.path)
        try f.startDaemon(useConfigFile: false)
        let status = try f.status()
        #expect(status["running"]?.stringValue == "last-good")
        #expect(status["config"]?.arrayValue?.count == 2)
        #expect(status["rejected"]?.stringValue?.contains("10-more.toml:3:1: error: invalid TOML: expected ',' or ']' to close the array opened on line 2, found the end of the file") == true, "\(status.text)")

        let events = try f.monitor()
        try TestFiles.write("[[exclude]]\nrect = [0, 0, 10, 10]\n", to: dropIn.path)
        _ = try events.await(.reloaded)
        #expect(try f.status()["running"]?.stringValue == "files")
    }

    /// Each file that crashed, hung or bloated the toml++-based daemon, saved under a running
    /// one: rejected with its place, and the old configuration goes on working.
    @Test func everyCrashFamilyFileSavedUnderARunningDaemonIsRejected() throws {
        let f = try DaemonFixture(config: Self.pop)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let families = [
            "a = [\u{85}]", "a = [1,\u{2028} 2]\n", "a = [1,\u{2029} 2]\n", "a = 1979-05-27 1", "s=0876-05-27T:",
            "x = " + String(repeating: "{a = ", count: 15_000), "x = " + String(repeating: "[", count: 25_000),
            String(repeating: "[", count: 10_240),
            Array(repeating: "a", count: 22_500).joined(separator: ".") + " = 1\n",
            "[" + Array(repeating: "popup", count: 10_000).joined(separator: ".") + "]\n",
            Self.pop + "slop = 2000000000\n",
        ]
        let events = try f.monitor()
        for text in families {
            try f.editConfigInPlace(text)
            let diagnostics = try events.await(.rejected)["diagnostics"]?.stringValue ?? ""
            #expect(diagnostics.hasPrefix("\(f.configPath):"), "\(diagnostics.prefix(300))")
            #expect(diagnostics.contains("^"), "\(diagnostics.prefix(300))")
            #expect(f.daemon?.isRunning == true)
            #expect(try f.status()["popups"]?.intValue == 1)
        }
        try expectPopupDismissedByAnOutsideClick(f, under: under)
    }

    /// `clickawayctl reload` answers once the outcome is known, also when several come at once.
    @Test func reloadsAskedForTogetherAreEachAnswered() throws {
        let f = try DaemonFixture(config: Self.pop)
        try f.startDaemon()
        final class Runs: @unchecked Sendable {
            let lock = NSLock()
            var all: [ProgramRun?] = []
        }
        let runs = Runs()
        let ctl = DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl"), environment = f.environment
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let run = try? ProgramRun.run(ctl, ["reload"], environment: environment)
            runs.lock.withLock { runs.all.append(run) }
        }
        #expect(runs.all.count == 4)
        for run in runs.all {
            #expect(run?.status == 0, "\(run?.stderr ?? "no run")")
            // The file was written a moment ago: a reload may say it waited for it to settle.
            #expect(run?.stdout.hasPrefix("reloaded: 1 popup from \(f.configPath)") == true, "\(run?.stdout ?? "")")
        }
        let json = try f.ctl(["reload", "--json"])
        #expect(json.status == 0 && json.stdout.hasPrefix("{\"ok\":true,\"popups\":1,\"files\":[\"\(f.configPath)\"]"), "\(json.output)")
        try f.editConfigInPlace(Self.typo)
        let refused = try f.ctl(["reload"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("did you mean \"class\"?"), "\(refused.stderr)")
        // --json: the refusal as one object on stdout, its diagnostics inside.
        let refusedJSON = try f.ctl(["reload", "--json"])
        #expect(refusedJSON.status == 1)
        let object = try JSON.parse(refusedJSON.stdout)
        #expect(object["ok"]?.boolValue == false && object["diagnostics"]?.stringValue?.contains("did you mean \"class\"?") == true,
                "\(refusedJSON.output)")
    }
}
