import ClickawayWayland
import Foundation

/// A test's place at a compositor: the compositor, a client covering its first output on
/// the background layer (below windows and any overlay) that records the clicks and
/// touches reaching it, and an injector to click and tap with.
public final class TestDesk {
    public let compositor: HeadlessCompositor
    public let below: ClickRecorder
    public let input: TestInput

    public init(_ compositor: HeadlessCompositor) throws {
        self.compositor = compositor
        below = try ClickRecorder(display: compositor.waylandSocket, output: compositor.outputs[0].name, layer: .background)
        input = try TestInput(display: compositor.waylandSocket)
        try below.waitForPointer()
    }

    public var kind: CompositorKind { compositor.kind }

    /// Forgets what the recorder received so far: the next test starts with nothing. On
    /// sway, waits for the last test's layout changes to apply first.
    public func reset() throws {
        if kind == .sway { try waitForSwayLayout() }
        _ = try below.clicks()
        below.forget()
    }

    /// sway applies layout changes in order, each once the windows it resized have answered
    /// or 200 ms have passed; a window a test closed never answers. Until then sway's tree
    /// (what the daemon reads) already shows the next test's windows where they are going,
    /// while clicks still find them where they were. A new window enters its output when
    /// its own change applies, so after every change before it.
    private func waitForSwayLayout() throws {
        let probe = try TestToplevel(display: compositor.waylandSocket, appId: "clickaway-test-layout-probe", title: "probe",
                                     width: 1, height: 1)
        try probe.waitUntilOnAnOutput()
    }
}

/// Compositors shared by the tests of one process: each kind starts once, on first use,
/// with its `TestDesk`, and is lent to one test at a time, since tests on it share its
/// seat and pointer. The kinds run side by side. Tests that change a compositor for good
/// (add an output, stop it) start one of their own instead. A shared compositor that has
/// died is started again for the next test; all of them stop when the process exits.
///
/// Sharing matters most for KWin 5.27, which hashes a client's executable (the test
/// binary: tens of MB) on every connection, for about half a second.
public enum SharedCompositors {
    private static let turns: [CompositorKind: NSLock] = Dictionary(uniqueKeysWithValues: CompositorKind.allCases.map { ($0, NSLock()) })
    private static let registry = NSLock()
    nonisolated(unsafe) private static var running: [CompositorKind: TestDesk] = [:]

    /// Runs `body` with the shared compositor of `kind` and its desk, which no other test
    /// uses meanwhile.
    public static func with<T>(_ kind: CompositorKind, _ body: (TestDesk) throws -> T) throws -> T {
        let turn = turns[kind]!
        turn.lock()
        defer { turn.unlock() }
        let desk = try desk(kind)
        try desk.reset()
        return try body(desk)
    }

    private static func desk(_ kind: CompositorKind) throws -> TestDesk {
        registry.lock()
        let existing = running[kind]
        registry.unlock()
        if let existing, existing.compositor.isRunning { return existing }
        existing?.compositor.stop()
        let compositor = try HeadlessCompositor(kind)
        let fresh: TestDesk
        do {
            fresh = try TestDesk(compositor)
        } catch {
            compositor.stop()
            throw error
        }
        registry.lock()
        let first = running.isEmpty
        running[kind] = fresh
        registry.unlock()
        if first { atexit { SharedCompositors.stopAll() } }
        return fresh
    }

    private static func stopAll() {
        registry.lock()
        let all = running.values
        running.removeAll()
        registry.unlock()
        for desk in all { desk.compositor.stop() }
    }
}
