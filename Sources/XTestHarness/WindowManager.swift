import ClickawayX11
import Foundation

/// openbox on a test display: a real reparenting window manager for the framing cases.
public final class WindowManager {
    private let process: ChildProcess
    private let configHome: URL

    /// Starts openbox and returns once it manages the screen, i.e. once the root window has
    /// `_NET_SUPPORTING_WM_CHECK` (set after it selected SubstructureRedirect on the root).
    public init(display: String, timeout: Duration = .seconds(10)) throws {
        // An empty XDG home: openbox falls back to /etc/xdg/openbox/rc.xml, whoever runs the tests.
        configHome = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-openbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: configHome, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        environment["XDG_CONFIG_HOME"] = configHome.path
        environment["XDG_CACHE_HOME"] = configHome.path
        environment["XDG_DATA_HOME"] = configHome.path
        process = try ChildProcess(["openbox", "--sm-disable"], environment: environment)

        let x = try XConnection(display: display)
        let atom = x.atoms.netSupportingWMCheck
        // Select first, then look: the PropertyNotify cannot slip between the two.
        if let error = x.check(x.selectInput(x.root, .propertyChange)) {
            throw HarnessError("cannot watch the root window's properties: \(error)")
        }
        guard try x.property32(x.root, atom) == nil else { return }
        try x.waitForEvent("openbox to set _NET_SUPPORTING_WM_CHECK on the root window", timeout: timeout,
                           check: { try process.checkRunning(while: "starting") }) { event -> Bool? in
            if case let .propertyNotify(p) = event, p.window == x.root, p.atom == atom, !p.deleted { return true }
            return nil
        }
    }

    deinit { stop() }

    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: configHome)
    }
}
