import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// `rect` popups, opened and closed by name through clickawayctl, dismissed by clicks on a
/// real X server like window popups.
@Suite("rect popups: open, close, toggle", .serialized)
struct RectPopupTests {
    static func config(marker: String) -> String {
        """
        [[popup]]
        name = "panel"
        rect = [100, 100, 300, 200]
        grace_ms = 0
        dismiss = { command = ["touch", "\(marker)"] }

        [[popup]]
        name = "win"
        window = { class = "Win" }

        """
    }

    @Test func openedPanelIsDismissedByAnOutsideClickAndPassesInsideClicks() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-dismissed-\(UUID().uuidString)").path
        defer { unlink(marker) }
        let f = try DaemonFixture(config: Self.config(marker: marker))
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        #expect(try !f.isIntercepting())

        let open = try f.ctl(["open", "panel"])
        #expect(open.status == 0, "\(open.stderr)")
        #expect(open.stdout == "panel: open\n")
        let status = try f.status()
        let listed = try #require(status["open"]?.arrayValue?.first)
        #expect(listed["popup"]?.stringValue == "panel")
        #expect(listed["window"]?.isNull == true)
        #expect(listed["rect"]?.arrayValue?.compactMap(\.intValue) == [100, 100, 300, 200])
        #expect(try f.isIntercepting())

        // Inside: the click reaches the window under the panel's rectangle, nothing closes.
        try f.click(150, 150)
        #expect(f.client.presses(under) == [Click(button: 1, x: 150, y: 150)])
        #expect(try f.openPopups() == ["panel"])

        // Outside: swallowed, the panel is closed and its command runs.
        try f.click(900, 600)
        #expect(f.client.presses(under).count == 1)
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
        try eventually("the dismiss command to create \(marker)", timeout: .seconds(5)) {
            FileManager.default.fileExists(atPath: marker)
        }
    }

    @Test func toggleAndCloseChangeTheStateAndRunNoCommand() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-dismissed-\(UUID().uuidString)").path
        defer { unlink(marker) }
        let f = try DaemonFixture(config: Self.config(marker: marker))
        try f.startDaemon()

        #expect(try f.ctl(["toggle", "panel"]).stdout == "panel: open\n")
        #expect(try f.openPopups() == ["panel"])
        #expect(try f.ctl(["toggle", "panel"]).stdout == "panel: closed\n")
        #expect(try f.openPopups().isEmpty)
        #expect(try f.ctl(["open", "panel"]).status == 0)
        #expect(try f.ctl(["open", "panel"]).status == 0, "opening an open popup is not an error")
        #expect(try f.openPopups() == ["panel"])
        #expect(try f.ctl(["close", "panel"]).stdout == "panel: closed\n")
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
        try f.sync()
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func unknownNamesAndWindowPopupsAreRefused() throws {
        let f = try DaemonFixture(config: Self.config(marker: "/nonexistent"))
        try f.startDaemon()
        let unknown = try f.ctl(["open", "pannel"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no popup named \"pannel\""), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("did you mean \"panel\"?"), "\(unknown.stderr)")
        let window = try f.ctl(["toggle", "win"])
        #expect(window.status == 1)
        #expect(window.stderr.contains("popup \"win\" is a window popup"), "\(window.stderr)")
        #expect(try f.openPopups().isEmpty)
    }

    @Test func unreachableDaemonExits2WithHowToStartIt() throws {
        let f = try DaemonFixture(config: Self.config(marker: "/nonexistent"))
        let run = try f.ctl(["open", "panel"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("systemctl --user start clickaway"), "\(run.stderr)")
    }

    @Test func liveHitExplainsAgainstTheOpenPopupsLikeTheOfflineForm() throws {
        let f = try DaemonFixture(config: Self.config(marker: "/nonexistent"))
        try f.startDaemon()
        #expect(try f.ctl(["open", "panel"]).status == 0)
        let live = try f.ctl(["hit", "900", "600", "--json"])
        #expect(live.status == 0, "\(live.stderr)")
        let offline = try f.ctl(["hit", "--config", f.configPath, "--open", "panel", "900", "600", "--json"])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(live.stdout == offline.stdout)
        let explained = try JSON.parse(live.stdout.trimmingCharacters(in: .newlines))
        #expect(explained["dismiss"]?.arrayValue?.compactMap(\.stringValue) == ["panel"])
        #expect(explained["click"]?.stringValue == "swallow")
        let text = try f.ctl(["hit", "150", "150"])
        #expect(text.stdout == (try f.ctl(["hit", "--config", f.configPath, "--open", "panel", "150", "150"])).stdout)
        // hit changes nothing: the panel is still open.
        #expect(try f.openPopups() == ["panel"])
    }

    @Test func reloadThatRemovesAnOpenPopupClosesIt() throws {
        let f = try DaemonFixture(config: Self.config(marker: "/nonexistent") + "[[popup]]\nname = \"other\"\nrect = [0, 0, 10, 10]\n")
        try f.startDaemon()
        #expect(try f.ctl(["open", "other"]).status == 0)
        #expect(try f.ctl(["open", "panel"]).status == 0)
        let events = try f.monitor()
        // "other" goes, and "panel" moves to another index.
        try f.editConfigInPlace("[[popup]]\nname = \"first\"\nrect = [0, 0, 5, 5]\n\n" + Self.config(marker: "/nonexistent"))
        let closed = try events.await(.closed)
        #expect(closed["popup"]?.stringValue == "other")
        _ = try events.await(.reloaded)
        #expect(f.daemon?.isRunning == true, "\(f.log)")
        #expect(try f.openPopups() == ["panel"])
    }
}
