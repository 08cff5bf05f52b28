import Foundation

/// Compositors shared by the tests of one process: each kind starts once, on first use,
/// and is lent to one test at a time, since tests on it share its seat and pointer. The
/// kinds run side by side. Tests that change a compositor for good (add an output, stop
/// it) start one of their own instead. A shared compositor that has died is started again
/// for the next test; all of them stop when the process exits.
public enum SharedCompositors {
    private static let turns: [CompositorKind: NSLock] = Dictionary(uniqueKeysWithValues: CompositorKind.allCases.map { ($0, NSLock()) })
    private static let registry = NSLock()
    nonisolated(unsafe) private static var running: [CompositorKind: HeadlessCompositor] = [:]

    /// Runs `body` with the shared compositor of `kind`, which no other test uses meanwhile.
    public static func with<T>(_ kind: CompositorKind, _ body: (HeadlessCompositor) throws -> T) throws -> T {
        let turn = turns[kind]!
        turn.lock()
        defer { turn.unlock() }
        return try body(try compositor(kind))
    }

    private static func compositor(_ kind: CompositorKind) throws -> HeadlessCompositor {
        registry.lock()
        let existing = running[kind]
        registry.unlock()
        if let existing, existing.isRunning { return existing }
        existing?.stop()
        let fresh = try HeadlessCompositor(kind)
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
        for compositor in all { compositor.stop() }
    }
}
