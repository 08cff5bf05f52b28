import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// Config edits while the daemon runs: applied at once when valid, rejected without losing
/// the working setup when not. Waits on the daemon's `monitor` events, never on sleeps.
@Suite("Reload: file changes, SIGHUP and clickawayctl reload", .serialized)
struct ReloadTests {
    static func popup(_ name: String, class windowClass: String) -> String {
        "[[popup]]\nname = \"\(name)\"\nwindow = { class = \"\(windowClass)\" }\ngrace_ms = 0\n\n"
    }

    @Test func editInPlaceIsAppliedAndMatchesWindowsAlreadyOnScreen() throws {
        let f = try DaemonFixture(config: Self.popup("a", class: "A"))
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let b = try f.window(Layout.popup, class: "B")
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())

        let events = try f.monitor()
        try f.editConfigInPlace(Self.popup("b", class: "B"))
        let reloaded = try events.await(.reloaded)
        #expect(reloaded["cause"]?.stringValue == "a configuration file changed")
        try f.sync()
        #expect(try f.openPopups() == ["b"])
        #expect(try f.isIntercepting())

        try f.click(900, 600)
        #expect(f.client.deleteRequests(b) == 1)
        #expect(f.client.presses(under).isEmpty)
    }

    @Test func invalidEditIsRejectedAndTheOldConfigKeepsWorking() throws {
        let f = try DaemonFixture(config: Self.popup("pop", class: "Pop"))
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")

        let events = try f.monitor()
        try f.editConfigInPlace("[[popup]]\nname = \"pop\"\nwindow = { clas = \"Pop\" }\n")
        let rejected = try events.await(.rejected)
        let diagnostics = rejected["diagnostics"]?.stringValue ?? ""
        #expect(diagnostics.contains("config.toml:3:"), "\(diagnostics)")
        #expect(diagnostics.contains("did you mean \"class\"?"), "\(diagnostics)")

        let status = try f.status()
        #expect(status["rejected"]?.stringValue == diagnostics)
        #expect(try f.openPopups() == ["pop"])
        let text = try f.ctl(["status"])
        #expect(text.stdout.contains("rejected:"), "\(text.stdout)")
        #expect(text.stdout.contains("did you mean \"class\"?"), "\(text.stdout)")

        // The old configuration still dismisses on an outside click.
        try f.click(900, 600)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.isDestroyed(popup))
        #expect(f.client.presses(under).isEmpty)

        // `clickawayctl reload` of the same bad file: exit 1 and the diagnostics.
        let reload = try f.ctl(["reload"])
        #expect(reload.status == 1)
        #expect(reload.stderr.contains("did you mean \"class\"?"), "\(reload.stderr)")

        #expect(try f.status()["last_error"]?.stringValue?.hasPrefix("configuration rejected") == true)

        // Fixing the file clears the rejection, and the error it was: status does not go on
        // saying "last error: configuration rejected" about a file that now loads.
        try f.editConfigInPlace(Self.popup("pop", class: "Pop"))
        _ = try events.await(.reloaded)
        let fixed = try f.status()
        #expect(fixed["rejected"]?.isNull == true)
        #expect(fixed["last_error"]?.isNull == true, "\(fixed)")
        let fixedText = try f.ctl(["status"])
        #expect(!fixedText.stdout.contains("last error") && !fixedText.stdout.contains("rejected"), "\(fixedText.stdout)")
    }

    @Test func fileReplacedByRenameIsPickedUp() throws {
        let f = try DaemonFixture(config: Self.popup("a", class: "A"))
        try f.startDaemon()
        let events = try f.monitor()
        try f.replaceConfigByRename(Self.popup("a", class: "A") + Self.popup("b", class: "B"))
        let reloaded = try events.await(.reloaded)
        #expect(reloaded["popups"]?.intValue == 2)
        #expect(try f.status()["popups"]?.intValue == 2)
    }

    @Test func editingTheTargetOfASymlinkedConfigIsPickedUp() throws {
        let f = try DaemonFixture(config: "")
        let dotfiles = f.directory.appendingPathComponent("dotfiles")
        try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
        let target = dotfiles.appendingPathComponent("clickaway.toml").path
        try TestFiles.write(Self.popup("a", class: "A"), to: target)
        try FileManager.default.removeItem(atPath: f.configPath)
        try FileManager.default.createSymbolicLink(atPath: f.configPath, withDestinationPath: target)
        try f.startDaemon()
        let events = try f.monitor()
        try TestFiles.write(Self.popup("a", class: "A") + Self.popup("b", class: "B"), to: target)
        #expect(try events.await(.reloaded)["popups"]?.intValue == 2)
    }

    @Test func dropInCreatedLaterIsPickedUp() throws {
        // The XDG lookup (no --config): config.toml and conf.d/*.toml under XDG_CONFIG_HOME.
        let f = try DaemonFixture(config: "")
        let dir = f.directory.appendingPathComponent("clickaway")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try TestFiles.write(Self.popup("a", class: "A"), to: dir.appendingPathComponent("config.toml").path)
        try f.startDaemon(useConfigFile: false)
        #expect(try f.status()["popups"]?.intValue == 1)

        let events = try f.monitor()
        let dropIns = dir.appendingPathComponent("conf.d")
        try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
        try TestFiles.write(Self.popup("b", class: "B"), to: dropIns.appendingPathComponent("10-b.toml").path)
        // The directory's creation and the file's may be seen as two changes: wait for the
        // reload that has both popups.
        while try events.await(.reloaded)["popups"]?.intValue != 2 {}
        #expect(try f.status()["config"]?.arrayValue?.count == 2)
    }

    @Test func sighupAndCtlReloadDoTheSame() throws {
        let f = try DaemonFixture(config: Self.popup("a", class: "A"))
        try f.startDaemon()
        try f.window(Layout.popup, class: "B")
        let events = try f.monitor()

        // Written through a file the daemon does not watch, then moved in: one reload each way.
        let bothPopups = Self.popup("a", class: "A") + Self.popup("b", class: "B")
        try f.replaceConfigByRename(bothPopups)
        _ = try events.await(.reloaded)

        let pid = try #require(f.daemon?.pid)
        kill(pid, SIGHUP)
        let bySignal = try events.await(.reloaded)
        #expect(bySignal["cause"]?.stringValue == "SIGHUP")
        let afterSignal = try f.status()

        let run = try f.ctl(["reload"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "reloaded: 2 popups from \(f.configPath)\n")
        let byCtl = try events.await(.reloaded)
        #expect(byCtl["cause"]?.stringValue == "clickawayctl reload")
        #expect(bySignal["popups"] == byCtl["popups"])
        #expect(bySignal["files"] == byCtl["files"])
        #expect(try f.status() == afterSignal)
        #expect(try f.openPopups() == ["b"])
    }
}
