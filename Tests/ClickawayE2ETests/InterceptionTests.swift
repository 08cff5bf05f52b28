import ClickawayCore
import ClickawayX11
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The daemon against a real X server: real windows, XTest clicks, `sync` to settle.
@Suite("X11 clicks, grab and shield mode, end to end", .serialized)
struct InterceptionTests {
    static func config(_ popupExtra: String = "", _ rest: String = "") -> String {
        """
        [[popup]]
        name = "pop"
        window = { class = "Pop" }
        grace_ms = 0
        \(popupExtra)
        \(rest)
        """
    }

    @Test(arguments: XBackend.allCases) func outsideClickSwallowedDismissesWithCloseAndReachesNothing(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config(), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try f.openPopups() == ["pop"])
        #expect(try f.isIntercepting())

        try f.click(600, 500)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.isDestroyed(popup))
        #expect(f.client.presses(under).isEmpty)
        #expect(f.client.releases(under).isEmpty)
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
    }

    @Test(arguments: XBackend.allCases, ["unmap", "kill"])
    func outsideClickDismissesWithAction(_ backend: XBackend, _ action: String) throws {
        let f = try DaemonFixture(config: Self.config("dismiss = \"\(action)\""), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let owner = try TestClient(display: f.xvfb.display)
        let popup = try f.window(Layout.popup, class: "Pop", on: owner, closesOnDelete: false)
        try f.click(600, 500)
        try f.sync()
        #expect(try f.openPopups().isEmpty)
        if action == "unmap" {
            #expect(try f.client.connection.getWindowAttributes(popup.id).mapState == .unmapped)
        } else {
            // KillClient closes the owner's connection and destroys its windows.
            #expect(throws: (any Error).self) { try f.client.connection.getWindowAttributes(popup.id) }
        }
        #expect(f.client.presses(under).isEmpty)
    }

    @Test(arguments: XBackend.allCases) func outsideClickRunsCommandWithEnvironment(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: "", backend: backend)
        let out = f.directory.appendingPathComponent("env.txt").path
        try TestFiles.write(Self.config("dismiss = { command = [\"sh\", \"-c\", \"env | grep ^CLICKAWAY_ | sort > \(out)\"] }"), to: f.configPath)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop", closesOnDelete: false)
        try f.click(600, 500)
        #expect(try f.openPopups().isEmpty)
        try waitUntil("the dismiss command wrote \(out)") { FileManager.default.fileExists(atPath: out) && (try? String(contentsOfFile: out, encoding: .utf8))?.contains("CLICKAWAY_Y") == true }
        let env = try String(contentsOfFile: out, encoding: .utf8)
        #expect(env.contains("CLICKAWAY_POPUP=pop"))
        #expect(env.contains("CLICKAWAY_WINDOW=0x\(String(popup.id, radix: 16))"))
        #expect(env.contains("CLICKAWAY_BUTTON=1"))
        #expect(env.contains("CLICKAWAY_X=600"))
        #expect(env.contains("CLICKAWAY_Y=500"))
    }

    @Test(arguments: XBackend.allCases) func outsideClickReplayedReachesTheWindowUnderIt(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config("outside_click = \"replay\""), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        try f.click(600, 500)
        #expect(f.client.isDestroyed(popup))
        #expect(f.client.presses(under) == [Click(button: 1, x: 600, y: 500)])
        #expect(f.client.releases(under) == [Click(button: 1, x: 600, y: 500)])
    }

    @Test(arguments: XBackend.allCases) func insideClickReachesThePopupAndDismissesNothing(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config(), backend: backend)
        try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        try f.click(150, 130)
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 30)])
        #expect(f.client.releases(popup) == [Click(button: 1, x: 50, y: 30)])
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(try f.openPopups() == ["pop"])
    }

    @Test(arguments: XBackend.allCases) func noPopupOpenMeansNoGrabAndClicksArriveAsUsual(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config(), backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        #expect(try !f.isIntercepting())
        try f.click(600, 500)
        #expect(f.client.presses(under) == [Click(button: 1, x: 600, y: 500)])
    }
}

/// Polls a condition that no sync can observe (a child process's output), bounded.
func waitUntil(_ what: String, timeout: Duration = .seconds(5), _ condition: () -> Bool) throws {
    try eventually(what, timeout: timeout, every: .milliseconds(10), condition)
}
