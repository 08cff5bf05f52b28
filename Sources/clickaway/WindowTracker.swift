import ClickawayCore
import ClickawayX11
import Logging

/// What the daemon knows about the top-level windows: the root's children in stacking
/// order and, for the mapped ones whose client window matches a popup, anchor or exclusion,
/// the client and the on-screen rectangle. Under a reparenting window manager the top-level
/// window is the frame: its rectangle is the popup's, its client is what gets dismissed.
///
/// Everything here runs on window events, never on a press: round trips are allowed.
final class WindowTracker: WindowSource {
    struct Tracked {
        var client: WindowID
        var rect: Rect
        var properties: WindowMatch.Properties
        var supportsDelete: Bool
        /// Index of the popup this window opens, if any (the first that matches in config order).
        var popup: Int32?
        var anchorOf: [Int32]
        var excluded: Bool
        var openedAt: Int64
    }

    private let x: XConnection
    private let logger: Logger
    private(set) var model: ClickModel
    /// The root's children, bottom to top.
    private(set) var stacking: [WindowID] = []
    /// Mapped top-level windows that play a role, by top-level id.
    private(set) var tracked: [WindowID: Tracked] = [:]
    /// Clients dismissed and not yet gone.
    var closing = ClosingWindows()
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
        self.model = model
        self.logger = logger
        matchedAtoms = Self.matchedAtoms(for: model, atoms: x.atoms)
    }

    /// Reads the whole tree once: popups already open when the daemon starts count.
    func scan(now: Int64) throws(XError) {
        stacking = try x.queryTree(x.root).children
        tracked = [:]
        clients = [:]
        watched = [:]
        for window in stacking { inspect(window, now: now) }
    }

    /// A new config: roles are matched again against the windows already on screen.
    func replaceModel(_ model: ClickModel, now: Int64) {
        self.model = model
        matchedAtoms = Self.matchedAtoms(for: model, atoms: x.atoms)
        for (top, t) in tracked {
            let roles = model.roles(for: t.properties)
            tracked[top]?.popup = roles.popup
            tracked[top]?.anchorOf = roles.anchors
            tracked[top]?.excluded = roles.excluded
            if roles.isNone { tracked[top] = nil }
        }
        for window in stacking where tracked[window] == nil { inspect(window, now: now) }
    }

    /// Applies one event; returns true when the open popups, their geometry, their stacking
    /// or the anchor and exclusion areas may have changed.
    func apply(_ event: XEvent, now: Int64) -> Bool {
        switch event {
        case .createNotify(let e) where e.parent == x.root:
            stacking.removeAll { $0 == e.window }
            stacking.append(e.window)
            return false
        case .destroyNotify(let e):
            stacking.removeAll { $0 == e.window }
            closing.cancel(e.window)
            unwatch(e.window)
            return forget(e.window)
        case .unmapNotify(let e) where e.event == x.root:
            unwatch(e.window)
            return forget(e.window)
        case .propertyNotify(let e) where e.atom == x.atoms.wmState || matchedAtoms.contains(e.atom):
            // WM_STATE set on a window below a frame (the window manager has claimed its
            // client), or the client's class, title or type changed.
            guard let top = watched[e.window], e.atom != x.atoms.wmState || clients[top] != e.window || e.deleted else {
                return false
            }
            let before = tracked[top].map { ($0.client, $0.popup, $0.anchorOf, $0.excluded) }
            inspect(top, now: now)
            let after = tracked[top].map { ($0.client, $0.popup, $0.anchorOf, $0.excluded) }
            return before?.0 != after?.0 || before?.1 != after?.1 || before?.2 != after?.2 || before?.3 != after?.3
        case .mapNotify(let e) where e.event == x.root:
            return inspect(e.window, now: now)
        case .reparentNotify(let e) where e.event == x.root:
            if e.parent == x.root {
                stacking.removeAll { $0 == e.window }
                stacking.append(e.window)
                return inspect(e.window, now: now)
            }
            stacking.removeAll { $0 == e.window }
            unwatch(e.window)
            return forget(e.window)
        case .configureNotify(let e) where e.event == x.root:
            restack(e.window, above: e.aboveSibling)
            guard tracked[e.window] != nil else { return false }
            let border = Int32(e.borderWidth)
            tracked[e.window]?.rect = Rect(x: e.rect.x, y: e.rect.y,
                                           width: e.rect.width + 2 * border, height: e.rect.height + 2 * border)
            return true
        default:
            return false
        }
    }

    private static func matchedAtoms(for model: ClickModel, atoms: StandardAtoms) -> [Atom] {
        let byTitle = model.windowMatches.contains { $0.title != nil || $0.titleGlob != nil }
        return [StandardAtoms.wmClass, atoms.netWMWindowType] + (byTitle ? [StandardAtoms.wmName, atoms.netWMName] : [])
    }

    /// Open popup instances, bottom to top, keyed by client window.
    func openInstances() -> [PopupInstance] {
        stacking.compactMap { top in
            guard let t = tracked[top], let popup = t.popup, !closing.contains(t.client) else { return nil }
            return PopupInstance(popup: popup, rect: t.rect, openedAt: t.openedAt, id: UInt64(t.client))
        }
    }

    func windowAreas() -> [Area] {
        var areas: [Area] = []
        for t in tracked.values {
            for p in t.anchorOf { areas.append(Area(kind: .anchor(popup: p), rect: t.rect)) }
            if t.excluded { areas.append(Area(kind: .exclusion, rect: t.rect)) }
        }
        return areas
    }

    /// The client window of a top-level: known when it was looked at, else searched now.
    func client(of top: WindowID) throws(XError) -> WindowID? {
        if let client = clients[top] { return client }
        return try x.findClient(of: top).client
    }

    func trackedClient(_ client: WindowID) -> Tracked? {
        tracked.values.first { $0.client == client }
    }

    func isPresent(_ window: UInt32) -> Bool { trackedClient(window) != nil }

    func describe(_ window: UInt32) -> String { hex(window) }

    // MARK: -

    private func restack(_ window: WindowID, above sibling: WindowID) {
        guard let from = stacking.firstIndex(of: window) else { return }
        stacking.remove(at: from)
        if sibling == 0 {
            stacking.insert(window, at: 0)
        } else if let below = stacking.firstIndex(of: sibling) {
            stacking.insert(window, at: below + 1)
        } else {
            stacking.append(window)
        }
    }

    private func forget(_ top: WindowID) -> Bool {
        guard let t = tracked.removeValue(forKey: top) else { return false }
        closing.cancel(t.client)
        if let p = t.popup {
            logger.info("popup closed", metadata: ["popup": "\(model.popups[Int(p)].name)", "window": "\(hex(t.client))"])
        }
        return true
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
    /// looked at are simply not tracked.
    @discardableResult
    private func inspect(_ top: WindowID, now: Int64) -> Bool {
        let before = tracked[top]
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
                return forget(top)
            }
            clients[top] = client
            let properties = try x.windowProperties(client)
            let roles = model.roles(for: properties)
            guard !roles.isNone else { return forget(top) }
            let rect = try x.rootRect(top)
            let supportsDelete = try x.supportsDeleteWindow(client)
            // A re-match after a property change keeps the time the popup opened.
            let still = before.flatMap { $0.client == client && $0.popup == roles.popup ? $0 : nil }
            if still == nil { closing.cancel(client) }
            tracked[top] = Tracked(client: client, rect: rect, properties: properties, supportsDelete: supportsDelete,
                                   popup: roles.popup, anchorOf: roles.anchors, excluded: roles.excluded,
                                   openedAt: still?.openedAt ?? now)
            if let p = roles.popup, still == nil {
                logger.info("popup opened", metadata: [
                    "popup": "\(model.popups[Int(p)].name)", "window": "\(hex(client))", "rect": "\(rect)",
                ])
            }
            return true
        } catch {
            logger.debug("window vanished while being inspected", metadata: ["window": "\(hex(top))", "error": "\(error)"])
            return false
        }
    }
}

func hex(_ window: WindowID) -> String { "0x" + String(window, radix: 16) }
