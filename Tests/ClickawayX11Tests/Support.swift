import ClickawayX11
import ProcessSupport
import XTestHarness

/// Runs `body` against a fresh Xvfb of its own, so tests can run in parallel; the server
/// is stopped however `body` ends.
func withXvfb(_ body: (String) throws -> Void) throws {
    let server = try XvfbServer()
    defer { server.stop() }
    try body(server.display)
}

/// The same, with openbox managing the screen.
func withOpenbox(_ body: (String) throws -> Void) throws {
    try withXvfb { display in
        let wm = try WindowManager(display: display)
        defer { wm.stop() }
        try body(display)
    }
}

extension XEvent {
    /// Button presses and releases only, for comparing what a grabbing client saw.
    var buttonEvent: (press: Bool, ButtonEvent)? {
        switch self {
        case let .buttonPress(b): (true, b)
        case let .buttonRelease(b): (false, b)
        default: nil
        }
    }
}

extension ReplyPoll {
    /// A waited-for reply's value, or its error (`XConnection.wait` never gives `.notYet`).
    func unwrapped() throws(XError) -> Value {
        switch self {
        case .value(let value): return value
        case .failed(let error): throw error
        case .notYet: throw XError.connectionLost(reason: "no reply")
        }
    }
}
