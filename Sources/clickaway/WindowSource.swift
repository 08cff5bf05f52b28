import ClickawayCore

/// Where a display server's windows come from: the X tree, or sway's IPC. Window ids fit in
/// 32 bits (X windows, sway container ids), which keeps them apart from `rect` instances.
protocol WindowSource: AnyObject {
    /// Open popup instances, bottom to top, keyed by window id; not those being dismissed.
    func openInstances() -> [PopupInstance]
    /// Anchor and exclusion rectangles of the windows that match them.
    func windowAreas() -> [Area]
    /// Whether the window is still there (whatever its role).
    func isPresent(_ window: UInt32) -> Bool
    /// A new config: roles are matched again against the windows already known.
    func replaceModel(_ model: ClickModel, now: Int64)
    /// The window as users and scripts see it (`0x1a00003`, or sway's container id).
    func describe(_ window: UInt32) -> String
    /// Dismissed windows not gone yet: see `ClosingWindows`.
    var closing: ClosingWindows { get set }
}

/// Windows asked to close and not gone yet: they no longer count as open, unless still
/// there `timeoutMs` later (the program ignored the request, or the command failed).
struct ClosingWindows {
    private var deadlines: [UInt32: Int64] = [:]
    static let timeoutMs: Int64 = 2000

    func contains(_ window: UInt32) -> Bool { deadlines[window] != nil }

    mutating func mark(_ window: UInt32, now: Int64) { deadlines[window] = now + Self.timeoutMs }

    /// Returns whether the window was closing.
    @discardableResult
    mutating func cancel(_ window: UInt32) -> Bool { deadlines.removeValue(forKey: window) != nil }

    /// When the next dismissed window's time to disappear runs out, if any is pending.
    var nextDeadline: Int64? { deadlines.values.min() }

    /// The windows whose time ran out, no longer closing.
    mutating func expire(now: Int64) -> [UInt32] {
        let expired = deadlines.filter { $0.value <= now }.map(\.key)
        for window in expired { deadlines[window] = nil }
        return expired
    }
}

/// A display server without a window source (a Wayland compositor other than sway): only
/// `rect` popups open.
final class NoWindows: WindowSource {
    var closing = ClosingWindows()
    func openInstances() -> [PopupInstance] { [] }
    func windowAreas() -> [Area] { [] }
    func isPresent(_ window: UInt32) -> Bool { false }
    func replaceModel(_ model: ClickModel, now: Int64) {}
    func describe(_ window: UInt32) -> String { "\(window)" }
}
