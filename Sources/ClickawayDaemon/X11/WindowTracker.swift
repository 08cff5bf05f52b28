internal import ClickawayCore
internal import ClickawayX11
internal import Logging

/// What the daemon knows about the X server's top-level windows: the root's children in
/// stacking order and, in its `roster`, the mapped ones whose client window matches a popup,
/// anchor or exclusion, with the on-screen rectangle. Under a reparenting window manager the
/// top-level window is the frame: its rectangle is the popup's, its client is what gets
/// dismissed. An entry's details say whether the client takes WM_DELETE_WINDOW.
///
/// Everything here runs on window events, never on a press: round trips are allowed.

final class WindowTracker {
    private let x: XConnection
    private let logger: Logger
    /// The windows with a role, keyed by top-level; its stacking is every child of the root,
    /// bottom to top.
    let roster: WindowRoster<Bool>
    /// The client window of every viewable top-level window looked at, matching or not: a
    /// title or class that changes later is matched again (PropertyNotify on the client).
    private var clients: [WindowID: WindowID] = [:]
    /// The windows whose PropertyNotify leads to a top-level (the value): its client, and
    /// while no window manager has claimed one with WM_STATE, every window the search looked
    /// at, since WM_STATE can appear on any of them after the frame is mapped.
    private var watched: [WindowID: WindowID] = [:]
    /// The properties whose change can change a match: titles only when some rule uses
    /// one, so that windows retitling themselves (terminals, progress) cost nothing.
    private var matchedAtoms: [Atom] = []

    init(x: XConnection, model: ClickModel, logger: Logger) {
        self.x = x
        self.logger = logger
        roster = WindowRoster(model: model, naming: .hex, logger: logger)
        matchedAtoms = Self.matchedAtoms(for: model, atoms: x.atoms)
    }

    /// The root's children, bottom to top.
    var stacking: [WindowID] { roster.stacking }

    /// Reads the whole tree once: popups already open when the daemon starts count.
    func scan(now: Int64) throws(XError) {
        roster.stacking = try x.queryTree(x.root).children
        for key in roster.entries.keys { roster.forget(key) }
        clients = [:]
        watched = [:]
        for window in roster.stacking { inspect(window, now: now) }
    }

    /// A new config: roles are matched again against the windows already on screen; those
    /// with no role so far are looked at again as `lookup` says (a reload: all of them).
    func replaceModel(_ model: ClickModel, now: Int64, inspecting lookup: WindowLookup = .all) {
        matchedAtoms = Self.matchedAtoms(for: model, atoms: x.atoms)
        roster.rematch(model)
        switch lookup {
        case .none:
            break
        case .window(let client):
            for (top, c) in clients where c == client && roster[top] == nil { inspect(top, now: now) }
        case .all:
            for window in roster.stacking where roster[window] == nil { inspect(window, now: now) }
        }
    }

    /// Applies one event; returns true when the open popups, their geometry, their stacking
    /// or the anchor and exclusion areas may have changed.
    func apply(_ event: XEvent, now: Int64) -> Bool {
        switch event {
        case .createNotify(let e) where e.parent == x.root:
            roster.stacking.removeAll { $0 == e.window }
            roster.stacking.append(e.window)
            return false
        case .destroyNotify(let e):
            roster.stacking.removeAll { $0 == e.window }
            roster.closing.cancel(e.window)
            unwatch(e.window)
            return roster.forget(e.window)
        case .unmapNotify(let e) where e.event == x.root:
            unwatch(e.window)
            return roster.forget(e.window)
        case .propertyNotify(let e) where e.atom == x.atoms.wmState || matchedAtoms.contains(e.atom):
            // WM_STATE set on a window below a frame (the window manager has claimed its
            // client), or the client's class, title or type changed.
            guard let top = watched[e.window], e.atom != x.atoms.wmState || clients[top] != e.window || e.deleted else {
                return false
            }
            return inspect(top, now: now)
        case .mapNotify(let e) where e.event == x.root:
            return inspect(e.window, now: now)
        case .reparentNotify(let e) where e.event == x.root:
            roster.stacking.removeAll { $0 == e.window }
            if e.parent == x.root {
                roster.stacking.append(e.window)
                return inspect(e.window, now: now)
            }
            unwatch(e.window)
            return roster.forget(e.window)
        case .configureNotify(let e) where e.event == x.root:
            restack(e.window, above: e.aboveSibling)
            let border = Int32(e.borderWidth)
            return roster.move(e.window, to: Rect(x: e.rect.x, y: e.rect.y,
                                                  width: e.rect.width + 2 * border, height: e.rect.height + 2 * border))
        default:
            return false
        }
    }

    private static func matchedAtoms(for model: ClickModel, atoms: StandardAtoms) -> [Atom] {
        let byTitle = model.windowMatches.contains { $0.title != nil || $0.titleGlob != nil }
        return [StandardAtoms.wmClass, atoms.netWMWindowType, atoms.netWMPid] + (byTitle ? [StandardAtoms.wmName, atoms.netWMName] : [])
    }

    /// The client window a runtime popup given `window` is: the client of the viewable
    /// top-level `window` (a frame under a reparenting window manager), or `window` itself
    /// when it is such a client. nil for any other window.
    func popupWindow(for window: WindowID) -> WindowID? {
        if let client = clients[window] { return client }
        return clients.values.contains(window) ? window : nil
    }

    /// The client window of a top-level: known when it was looked at, else searched now.
    func client(of top: WindowID) throws(XError) -> WindowID? {
        if let client = clients[top] { return client }
        return try x.findClient(of: top).client
    }

    /// Whether the client takes WM_DELETE_WINDOW, as read when it was matched.
    func supportsDelete(_ client: WindowID) -> Bool { roster.entry(forWindow: client)?.details == true }

    // MARK: -

    private func restack(_ window: WindowID, above sibling: WindowID) {
        guard let from = roster.stacking.firstIndex(of: window) else { return }
        roster.stacking.remove(at: from)
        if sibling == 0 {
            roster.stacking.insert(window, at: 0)
        } else if let below = roster.stacking.firstIndex(of: sibling) {
            roster.stacking.insert(window, at: below + 1)
        } else {
            roster.stacking.append(window)
        }
    }

    /// Stops following the properties of a top-level that is gone, unmapped or reparented.
    private func unwatch(_ top: WindowID) {
        clients[top] = nil
        watched = watched.filter { $0.value != top }
    }

    /// Follows the properties of `windows` for `top` (PropertyNotify already selected on
    /// them), and lets go of the others followed for it.
    private func watch(_ windows: [WindowID], for top: WindowID) {
        watched = watched.filter { $0.value != top || windows.contains($0.key) }
        for w in windows { watched[w] = top }
    }

    /// Looks at a top-level window: finds its client (`findClient`: the window with WM_STATE
    /// at any depth below it, else itself) and matches it. Windows that vanish while being
    /// looked at are simply not tracked. Returns whether what the engine sees changed.
    @discardableResult
    private func inspect(_ top: WindowID, now: Int64) -> Bool {
        do {
            let attributes = try x.getWindowAttributes(top)
            guard attributes.mapState == .viewable, attributes.windowClass == .inputOutput || attributes.overrideRedirect else {
                return false
            }
            // PropertyNotify is selected on each window before its WM_STATE is read, so a
            // window manager setting it just after is still heard. An override-redirect window
            // is never managed: no WM_STATE will come, and the shield's own events stay as
            // they are.
            let search = try x.findClient(of: top) { w in
                if !attributes.overrideRedirect && watched[w] == nil { x.watchProperties(w) }
            }
            if let client = search.client, attributes.overrideRedirect, watched[client] == nil { x.watchProperties(client) }
            watch(search.managed || attributes.overrideRedirect ? search.client.map { [$0] } ?? [] : search.searched, for: top)
            guard let client = search.client else {
                clients[top] = nil
                return roster.forget(top)
            }
            clients[top] = client
            let properties = try x.windowProperties(client)
            guard !roster.model.roles(for: properties).isNone else { return roster.forget(top) }
            return roster.update(top, window: client, rect: try x.rootRect(top), properties: properties,
                                 details: try x.supportsDeleteWindow(client), now: now)
        } catch {
            logger.debug("window vanished while being inspected", metadata: ["window": "\(roster.describe(top))", "error": "\(error)"])
            return false
        }
    }
}
