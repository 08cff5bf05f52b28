import CXCB
import ClickawayX11
import Foundation

/// openbox on a test display: a real reparenting window manager for the framing cases.
public final class WindowManager {
    private let process: ChildProcess
    private let configHome: URL
    /// Kept open with its probe window for openbox's lifetime: closing it would let the
    /// server hand its window IDs to the next client, and requests openbox still has queued
    /// for the probe would then hit that client's window.
    private let connection: XConnection

    /// Starts openbox and returns once it manages the screen: the root window has
    /// `_NET_SUPPORTING_WM_CHECK` and openbox answers requests from its main loop.
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

        let deadline = ContinuousClock.now + timeout
        connection = try XConnection(display: display)
        try waitForSupportingWMCheck(connection, timeout: deadline - .now)
        try waitForMainLoop(connection, timeout: deadline - .now)
    }

    private func waitForSupportingWMCheck(_ x: XConnection, timeout: Duration) throws {
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

    /// openbox sets `_NET_SUPPORTING_WM_CHECK` early in its start-up. A MapRequest sent after
    /// that but before its main loop runs can be read into Xlib's queue during start-up and
    /// then sit there, because the loop sleeps in poll(2) on the socket (seen with openbox
    /// 3.6: the window is never framed). So wait until openbox answers a request from its
    /// loop: `_NET_REQUEST_FRAME_EXTENTS` for an unmapped probe window, which it answers by
    /// setting `_NET_FRAME_EXTENTS`. The request is resent until then, since a new event is
    /// what wakes a loop asleep on a queued one.
    private func waitForMainLoop(_ x: XConnection, timeout: Duration) throws {
        let request = try x.internAtom("_NET_REQUEST_FRAME_EXTENTS")
        let extents = try x.internAtom("_NET_FRAME_EXTENTS")
        let probe = x.generateID()
        x.withUnsafeConnection { c in
            var mask = EventMask.propertyChange.rawValue
            xcb_create_window(c, 0, probe, x.root, -10, -10, 1, 1, 0, UInt16(XCB_WINDOW_CLASS_INPUT_ONLY.rawValue),
                              UInt32(XCB_COPY_FROM_PARENT), XCB_CW_EVENT_MASK.rawValue, &mask)
        }

        let deadline = ContinuousClock.now + timeout
        while true {
            x.withUnsafeConnection { c in
                var message = xcb_client_message_event_t()
                message.response_type = UInt8(XCB_CLIENT_MESSAGE)
                message.format = 32
                message.window = probe
                message.type = request
                let mask = EventMask([.substructureRedirect, .substructureNotify]).rawValue
                withUnsafeBytes(of: message) { bytes in
                    _ = xcb_send_event(c, 0, x.root, mask, bytes.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
            }
            let answered = try? x.waitForEvent("openbox to answer _NET_REQUEST_FRAME_EXTENTS", timeout: .milliseconds(50),
                                               check: { try process.checkRunning(while: "starting") }) { event -> Bool? in
                if case let .propertyNotify(p) = event, p.window == probe, p.atom == extents { return true }
                return nil
            }
            if answered == true { return }
            try process.checkRunning(while: "starting")
            guard ContinuousClock.now < deadline else {
                throw HarnessError("openbox set _NET_SUPPORTING_WM_CHECK but did not answer _NET_REQUEST_FRAME_EXTENTS within \(timeout)\n\(process.logTail)")
            }
        }
    }

    deinit { stop() }

    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: configHome)
    }
}
