internal import ClickawayX11
internal import Logging

/// Shield mode: SYNC grabs of the open popups' buttons on the windows stacked above the
/// shield that belong to no popup (other programs' notifications, a menu that holds no grab
/// of its own), as the root has them in the grab mode. A press there freezes the pointer and
/// is decided as the grab mode decides it: it dismisses the popups it is outside of, and goes
/// on to its window (ReplayPointer) or is eaten (AsyncPointer). Programs that grab the pointer
/// themselves (rofi, jgmenu, GTK and Xt menus) are untouched, as in the grab mode: a passive
/// grab never fires while another client holds an active one. The popups' own windows are
/// left out: a click there is inside, and a burst of them costs no grabs.
final class AboveShieldGrabs {
    private let x: XConnection
    private let locks: LockModifiers
    private let logger: Logger
    private var grabs: [WindowID: PassiveGrabSet] = [:]

    init(x: XConnection, locks: LockModifiers, logger: Logger) {
        self.x = x
        self.locks = locks
        self.logger = logger
    }

    /// Whether a press came through one of these grabs.
    func isGrabWindow(_ window: WindowID) -> Bool { grabs[window] != nil }

    /// Grabs `buttons` on exactly `windows`, without waiting for the server; lets go of the
    /// others (a window gone has taken its grabs with it, and the error of the ungrab is only
    /// logged).
    func update(windows: Set<WindowID>, buttons: [PassiveGrabSet.Input]) {
        for (window, set) in grabs where !windows.contains(window) {
            set.release()
            grabs[window] = nil
        }
        for window in windows {
            let set = grabs[window] ?? PassiveGrabSet(x: x, locks: locks, window: window)
            set.request(buttons)
            grabs[window] = set
        }
        isChecking = grabs.values.contains { $0.isChecking }
    }

    /// Whether refusals wait to be collected. Stored: the loop asks at every pass.
    @exclusivity(unchecked) private(set) var isChecking = false

    /// Logs what the server refused (another client grabs the same buttons there, or the
    /// window went first): such a window's clicks reach it undecided, as before.
    func collectRefusals() {
        for (window, set) in grabs where set.isChecking {
            for (combo, error) in set.collectRefusals() {
                logger.debug("a grab on a window above the shield was refused: clicks there are not decided",
                             metadata: ["window": "\(hex(window))", "grab": "\(combo)", "error": "\(error)"])
            }
        }
        isChecking = grabs.values.contains { $0.isChecking }
    }
}
