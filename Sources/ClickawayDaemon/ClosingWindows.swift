internal import ClickawayCore

/// Windows the daemon asked to close (a dismissal) and not gone yet: they no longer count
/// as open, unless still there `timeoutMs` later (the program ignored the request, or the
/// command failed). The daemon's own: the display's windows know nothing of it. A window
/// that goes, or opens anew (its popup instance opened at another time), is closing no more.
struct ClosingWindows: Equatable {
    private struct Pending: Equatable {
        var deadline: Int64
        var openedAt: Int64
    }

    private var pending: [UInt32: Pending] = [:]

    static let timeoutMs: Int64 = 2000

    var isEmpty: Bool { pending.isEmpty }

    func contains(_ window: UInt32) -> Bool { pending[window] != nil }

    /// `window`, the open instance that opened at `openedAt`, was asked to close at `now`.
    mutating func mark(_ window: UInt32, openedAt: Int64, now: Int64) {
        pending[window] = Pending(deadline: now + Self.timeoutMs, openedAt: openedAt)
    }

    /// Returns whether the window was closing.
    @discardableResult
    mutating func cancel(_ window: UInt32) -> Bool { pending.removeValue(forKey: window) != nil }

    /// When the next dismissed window's time to disappear runs out, if any is pending.
    var nextDeadline: Int64? { pending.values.lazy.map(\.deadline).min() }

    /// The windows whose time ran out, no longer closing.
    mutating func expire(now: Int64) -> [UInt32] {
        let expired = pending.filter { $0.value.deadline <= now }.map(\.key)
        for window in expired { pending[window] = nil }
        return expired
    }

    /// Leaves out of `open` the instances being closed, and out of `areas` their families'
    /// windows; forgets the windows no longer open as they were when marked (gone, or opened
    /// anew). Returns whether any was forgotten.
    mutating func leaveOut(of open: inout [PopupInstance], _ areas: inout [Area]) -> Bool {
        guard !pending.isEmpty else { return false }
        var stillOpen = Set<UInt32>(minimumCapacity: pending.count)
        open.removeAll { instance in
            guard let window = instance.id.window, let closing = pending[window] else { return false }
            guard closing.openedAt == instance.openedAt else { return false }
            stillOpen.insert(window)
            return true
        }
        let count = pending.count
        pending = pending.filter { stillOpen.contains($0.key) }
        if !pending.isEmpty {
            areas.removeAll { area in
                guard case .member(of: .window(let owner), _, _) = area.kind else { return false }
                return pending[owner] != nil
            }
        }
        return pending.count != count
    }
}
