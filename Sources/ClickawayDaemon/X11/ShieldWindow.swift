internal import ClickawayCore
internal import ClickawayX11
internal import Logging

/// Shield mode: an invisible InputOnly window over the screen, mapped while a popup is open,
/// whose input shape leaves holes where a click cannot dismiss anything. Clicks in the holes
/// never reach the daemon; the rest land on the shield. While the pointer is over the shield
/// (its crossing events say so), the daemon holds SYNC grabs on the root, so that a press it
/// lets through goes through the window manager's grabs; a SYNC passive grab of the shield
/// itself freezes every other press (combinations another client holds on the root, a press
/// just after the pointer came out of a hole) until the daemon decides.
final class ShieldWindow {
    let window: WindowID
    private let x: XConnection
    private let logger: Logger
    private let shape: InputShape
    private var screen: Rect
    private(set) var mapped = false
    private(set) var holes: [Rect] = []
    /// Override-redirect windows mapped since the shield was: other programs' menus,
    /// launchers and dropdowns (rofi, jgmenu, dmenu, Xt and GTK menus), which hold the
    /// pointer themselves and must stay above it.
    private var menusAbove: Set<WindowID> = []
    /// How many times it was mapped: each time `menusAbove` starts again.
    private(set) var maps = 0
    /// Recent raises (monotonic ms): a client that keeps raising itself above the shield is
    /// let be after `maxRaises` in a second, rather than fought in a loop.
    private var raises: [Int64] = []
    private var gaveUpRaisingAt: Int64?
    static let maxRaises = 10
    /// The windows above the shield that are mapped and do not stay above it (`keepAbove`'s
    /// windows to cover), as of its last look, when `coverersKnown`: kept from the windows
    /// changed since, so that a burst of menus above the shield is not looked through at
    /// each change. Not known: every window above is looked at.
    private var coverers: Set<WindowID> = []
    private var coverersKnown = false

    /// What the shield needs of the X server, asked at start (round trips): XFixes 2.0 for
    /// the regions, SHAPE for input shapes. Then making it only sends requests.
    static func checkSupport(_ x: XConnection) throws(XError) {
        try x.requireXFixes(Version(2, 0))
        guard try x.queryExtension("SHAPE") != nil else { throw .missingExtension("SHAPE") }
    }

    /// After `checkSupport`: requests only, the loop never waits for them.
    init(x: XConnection, screen: Rect, logger: Logger) {
        self.x = x
        self.screen = screen
        self.logger = logger
        window = x.createShieldWindow(screen)
        shape = InputShape(x: x, window: window)
        logger.debug("shield window created", metadata: ["window": "\(hex(window))"])
    }

    deinit {
        x.destroyWindow(window)
        x.flush()
    }

    /// Shows the shield with these holes while `active`, hides it otherwise. Mapped, it goes
    /// above `stacking` but below `menusMapped()`: the override-redirect windows mapped since
    /// the popup that maps it, which stay above it as those mapped later do.
    func update(active: Bool, holes: [Rect], stacking: [WindowID] = [], menusMapped: () -> Set<WindowID> = { [] }) {
        guard active else {
            if mapped {
                x.unmapWindow(window)
                mapped = false
                self.holes = []
                shape.dropPinhole()
            }
            return
        }
        if holes != self.holes || !mapped {
            shape.cover(screen, except: holes)
            self.holes = holes
        }
        if !mapped {
            maps += 1
            menusAbove = menusMapped()
            coverersKnown = false
            x.mapWindow(window)
            if let lowestMenu = stacking.first(where: menusAbove.contains) {
                x.restackWindow(window, .below, lowestMenu)
            } else {
                x.raiseWindow(window)
            }
            mapped = true
        }
    }

    /// An override-redirect window was mapped: one mapped while the shield is up stays above it.
    func overrideRedirectMapped(_ other: WindowID) {
        if mapped && other != window { menusAbove.insert(other) }
    }

    /// Whether `window` stays above the mapped shield (mapped since it was, or since the popup
    /// that mapped it).
    func keepsAbove(_ window: WindowID) -> Bool { mapped && menusAbove.contains(window) }

    /// Someone else unmapped the shield; the next `update` maps it again.
    func noteUnmapped() { mapped = false }

    func resize(to screen: Rect) {
        guard screen != self.screen else { return }
        self.screen = screen
        x.moveResizeWindow(window, to: screen)
        if mapped { shape.cover(screen, except: holes) }
    }

    /// Keeps the shield above every window it must cover (the managed windows, and what was
    /// mapped before it) and below the override-redirect windows mapped since: it goes just
    /// below the lowest of those above the window to cover, or on top when there is none.
    /// Its own restacking comes back as a ConfigureNotify that leaves nothing to do, so this
    /// does not loop with itself. `mappedWindows`: the root's mapped children; `isFrame`: whether
    /// an override-redirect window is a window manager's frame (i3's are), which is covered.
    ///
    /// `changed`: the windows whose mapping, place in the stacking or kind changed since the
    /// last call (nil: any may have); `position`: where a window is in `stacking` (higher is
    /// above), nil for one not in it. Only those windows are looked at again, unless the
    /// shield itself moved: a burst of menus above it costs each menu a look, not a look at
    /// every menu above at each change.
    func keepAbove(stacking: [WindowID], mappedWindows: [WindowID: Bool], isFrame: (WindowID) -> Bool,
                   changed: Set<WindowID>?, position: (WindowID) -> Double?, now: Int64) {
        guard mapped, let ownPosition = position(window) else {
            coverersKnown = false
            return
        }
        if let changed, coverersKnown, !changed.contains(window) {
            // Every window that left `mappedWindows` since the last call is among `changed`.
            for w in changed where mappedWindows[w] == nil { menusAbove.remove(w) }
        } else {
            menusAbove = menusAbove.filter { mappedWindows[$0] != nil }
            coverersKnown = false
        }
        func staysAbove(_ w: WindowID) -> Bool { menusAbove.contains(w) && !isFrame(w) }
        func covers(_ w: WindowID) -> Bool { mappedWindows[w] != nil && !staysAbove(w) }
        if coverersKnown, let changed {
            for w in changed {
                if let p = position(w), p > ownPosition, covers(w) { coverers.insert(w) } else { coverers.remove(w) }
            }
        } else {
            // From the top: the shield is near it, and thousands of windows may be below.
            let own = stacking.lastIndex(of: window) ?? stacking.endIndex
            coverers = Set(stacking[(min(own + 1, stacking.endIndex))...].filter(covers))
            coverersKnown = true
        }
        guard !coverers.isEmpty, let own = stacking.lastIndex(of: window) else { return }
        // Only the windows above it: every window event asks, and thousands may be below.
        guard let cover = (own + 1 ..< stacking.endIndex).last(where: { covers(stacking[$0]) }) else { return }
        let top = stacking[cover]
        if let since = gaveUpRaisingAt {
            guard now - since >= 1000 else { return }
            gaveUpRaisingAt = nil
        }
        raises.removeAll { now - $0 >= 1000 }
        guard raises.count < Self.maxRaises else {
            gaveUpRaisingAt = now
            logger.warning("window \(hex(top)) keeps putting itself above the shield; not raising over it for a second")
            return
        }
        raises.append(now)
        if let menu = stacking[(cover + 1)...].first(where: staysAbove) {
            x.restackWindow(window, .below, menu)
        } else {
            x.raiseWindow(window)
        }
    }

    /// Lets a frozen press at (x, y) through: uncovers the point and replays the press to the
    /// window now under it. Requests only, no round trip.
    ///
    /// The server replays a press only through the passive grabs below the grab window
    /// (dix/events.c, ComputeFreezes → CheckDeviceGrabs with the grab window as ancestor).
    /// Frozen by a grab on the root, the press goes through the window manager's grabs on
    /// frames and clients, as without clickaway; frozen by the shield's own grab, whose
    /// window is no ancestor of anything, it goes straight to the window. For that case
    /// `findWindowUnder` asks, while the point is uncovered, which top-level is there.
    ///
    /// The point stays uncovered (`closePinhole`): a window manager's own SYNC grab replays
    /// the press in its own time, to the window under the press's position then. The
    /// pointer's next EnterNotify on the shield closes it: that comes only once nobody grabs
    /// the pointer any more, so after every replay of this press and its release.
    func replay(x rootX: Int32, y rootY: Int32, time: Timestamp, findWindowUnder: Bool) -> PendingReply<WindowID?>? {
        shape.punch(x: rootX, y: rootY)
        x.allowEvents(.replayPointer, time: time)
        return findWindowUnder ? x.sendChildOfRoot(x: rootX, y: rootY) : nil
    }

    /// Whether the pointer at (x, y) is in the pinhole of the last press let through, which
    /// leaves it over the shield as far as grabs go: the click there was decided.
    func isInPinhole(x px: Int32, y py: Int32) -> Bool {
        guard let pinhole = shape.pinhole else { return false }
        return pinhole.x == px && pinhole.y == py
    }

    /// Whether the pinhole is inside one of the holes now (the popups changed since the press
    /// that made it): a pointer still there is in a hole.
    var pinholeIsInAHole: Bool {
        guard let pinhole = shape.pinhole else { return false }
        return holes.contains { $0.contains(x: pinhole.x, y: pinhole.y) }
    }

    /// The pointer is over the shield again: the pinhole of the last press let through has
    /// served.
    func closePinhole() {
        shape.closePinhole()
    }
}
