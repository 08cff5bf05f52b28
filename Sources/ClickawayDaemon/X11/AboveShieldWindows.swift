internal import ClickawayX11

/// Shield mode: the windows stacked above the shield that belong to no popup (other programs'
/// notifications, a menu that holds no grab of its own). The daemon follows the pointer's
/// crossings of them, and while the pointer is over one it holds the root's grabs, as over the
/// shield: a press there freezes and is decided as the grab mode decides it, dismisses the
/// popups it is outside of, and goes on to the window (ReplayPointer) or is eaten. A grab of
/// the window itself would not do: its program often grabs its own buttons (dunst does), and
/// the root's grab comes before any grab on a window below it. Programs that grab the pointer
/// themselves (rofi, jgmenu, GTK and Xt menus) are untouched, as in the grab mode: a passive
/// grab never fires while another client holds an active one. The popups' own windows (and
/// their families') are left out while one popup is open: a click there is inside it, and a
/// burst of them costs nothing here. With two open, a click on one's window dismisses the
/// other, and they are followed too.
final class AboveShieldWindows {
    private let x: XConnection
    private var watched: Set<WindowID> = []
    /// The watched window the pointer is over, from its crossing events.
    private(set) var pointerOver: WindowID?
    /// Where the pointer was when windows were first watched: one mapped under the pointer
    /// gets no crossing event until the pointer leaves it. Dropped once a crossing says more.
    private var pointerAsked: PendingReply<WindowID?>? { didSet { isAsking = pointerAsked != nil } }

    init(x: XConnection) { self.x = x }

    /// Follows the crossings of exactly `windows`; not flushed.
    func update(_ windows: Set<WindowID>) {
        guard windows != watched else { return }
        update(watched.union(windows), follows: windows.contains)
    }

    /// Follows the crossings of each of `windows` or stops, as `follows` says: the windows
    /// that changed, rather than a pass over thousands of popups' windows at each change.
    func update(_ windows: Set<WindowID>, follows: (WindowID) -> Bool) {
        var added = false
        for window in windows {
            if follows(window) {
                guard watched.insert(window).inserted else { continue }
                x.watch(window, for: [.enterWindow, .leaveWindow])
                added = true
            } else if watched.remove(window) != nil {
                x.watch(window, for: [])
                if pointerOver == window { pointerOver = nil }
            }
        }
        if added { askPointer() }
    }

    /// One mapped under the pointer gets no crossing event until the pointer leaves it.
    private func askPointer() {
        if let asked = pointerAsked { x.discard(asked) }
        pointerAsked = x.sendPointerChildOfRoot()
    }

    /// A crossing event: returns whether it is of a watched window, and so changed where the
    /// pointer is. Those of a grab taking or leaving the pointer (mode Grab, Ungrab) move
    /// nothing, nor do those into or out of the window's own children.
    func crossed(_ e: CrossingEvent, entered: Bool) -> Bool {
        guard watched.contains(e.window) else { return false }
        guard e.mode == .normal, e.detail != CrossingEvent.inferior else { return true }
        if let asked = pointerAsked {
            x.discard(asked)
            pointerAsked = nil
        }
        if entered {
            pointerOver = e.window
        } else if pointerOver == e.window {
            pointerOver = nil
        }
        return true
    }

    /// Whether the pointer query is still out. Stored: the display asks at every pass, a
    /// click's too.
    private(set) var isAsking = false

    /// Takes the pointer query's answer if it has come: returns whether it put the pointer
    /// over a watched window.
    func collectPointer() -> Bool {
        guard let asked = pointerAsked else { return false }
        switch x.poll(asked) {
        case .notYet: return false
        case .value(let child):
            pointerAsked = nil
            guard let child, watched.contains(child), pointerOver != child else { return false }
            pointerOver = child
            return true
        case .failed:
            pointerAsked = nil
            return false
        }
    }
}
