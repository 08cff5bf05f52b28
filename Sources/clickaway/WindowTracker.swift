import ClickawayCore
import ClickawayX11
import Logging

/// What the daemon knows about the top-level windows: the root's children in stacking
/// order and, for the mapped ones whose client window matches a popup, anchor or exclusion,
/// the client and the on-screen rectangle. Under a reparenting window manager the top-level
/// window is the frame: its rectangle is the popup's, its client is what gets dismissed.
///
/// Everything here runs on window events, never on a press: round trips are allowed.
final class WindowTracker {
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
    /// Clients dismissed and not yet gone, with the time (monotonic ms) after which a window
    /// still mapped counts as open again: its program ignored the request or the command failed.
    private var closing: [WindowID: Int64] = [:]
    /// The client window of every viewable top-level window looked at, matching or not: a
    /// title or class that changes later is matched again (PropertyNotify on the client).
    private var clients: [WindowID: WindowID] = [:]
    /// How long a dismissed window may stay mapped before it counts as open again.
    static let closeTimeoutMs: Int64 = 2000

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
        for window in stacking { inspect(window, now: now) }
    }

    /// A new config: roles are matched again against the windows already on screen.
    func replaceModel(_ model: ClickModel, now: Int64) {
        self.model = model
        matchedAtoms = Self.matchedAtoms(for: model, atoms: x.atoms)
        for (top, t) in tracked {
            let roles = self.roles(for: t.properties)
            tracked[top]?.popup = roles.popup
            tracked[top]?.anchorOf = roles.anchors
            tracked[top]?.excluded = roles.excluded
            if roles.popup == nil && roles.anchors.isEmpty && !roles.excluded { tracked[top] = nil }
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
            closing[e.window] = nil
            clients[e.window] = nil
            return forget(e.window)
        case .unmapNotify(let e) where e.event == x.root:
            clients[e.window] = nil
            return forget(e.window)
        case .propertyNotify(let e) where matchedAtoms.contains(e.atom):
            guard let top = clients.first(where: { $0.value == e.window })?.key else { return false }
            let before = tracked[top].map { ($0.popup, $0.anchorOf, $0.excluded) }
            inspect(top, now: now)
            let after = tracked[top].map { ($0.popup, $0.anchorOf, $0.excluded) }
            return before?.0 != after?.0 || before?.1 != after?.1 || before?.2 != after?.2
        case .mapNotify(let e) where e.event == x.root:
            return inspect(e.window, now: now)
        case .reparentNotify(let e) where e.event == x.root:
            if e.parent == x.root {
                stacking.removeAll { $0 == e.window }
                stacking.append(e.window)
                return inspect(e.window, now: now)
            }
            stacking.removeAll { $0 == e.window }
            clients[e.window] = nil
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
        var matches: [WindowMatch] = []
        for p in model.popups {
            for case .window(let m) in [p.source] + p.anchors { matches.append(m) }
        }
        for case .window(let m) in model.exclusions.map(\.source) { matches.append(m) }
        let byTitle = matches.contains { $0.title != nil || $0.titleGlob != nil }
        return [StandardAtoms.wmClass, atoms.netWMWindowType] + (byTitle ? [StandardAtoms.wmName, atoms.netWMName] : [])
    }

    /// The client was asked to close: it no longer counts as open, even before it unmaps,
    /// unless it is still mapped `closeTimeoutMs` from now.
    func markClosing(client: WindowID, now: Int64) { closing[client] = now + Self.closeTimeoutMs }

    /// The dismissal failed (its command exited with an error): the window counts as open
    /// again at once. Returns false when it is gone or was not closing.
    func cancelClosing(client: WindowID) -> Bool {
        guard closing.removeValue(forKey: client) != nil else { return false }
        return trackedClient(client) != nil
    }

    /// When the next dismissed window's time to disappear runs out, if any is pending.
    var nextClosingDeadline: Int64? { closing.values.min() }

    /// Dismissed windows still mapped after their time ran out; they count as open again.
    func expireClosing(now: Int64) -> [WindowID] {
        let expired = closing.filter { $0.value <= now }.map(\.key)
        for client in expired { closing[client] = nil }
        return expired.filter { trackedClient($0) != nil }
    }

    /// Open popup instances, bottom to top, keyed by client window.
    func openInstances() -> [PopupInstance] {
        stacking.compactMap { top in
            guard let t = tracked[top], let popup = t.popup, closing[t.client] == nil else { return nil }
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

    func trackedClient(_ client: WindowID) -> Tracked? {
        tracked.values.first { $0.client == client }
    }

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
        closing[t.client] = nil
        if let p = t.popup {
            logger.info("popup closed", metadata: ["popup": "\(model.popups[Int(p)].name)", "window": "\(hex(t.client))"])
        }
        return true
    }

    /// Looks at a top-level window: finds its client (itself, or a child that has WM_CLASS
    /// under a reparenting window manager) and matches it. Windows that vanish while being
    /// looked at are simply not tracked.
    @discardableResult
    private func inspect(_ top: WindowID, now: Int64) -> Bool {
        let before = tracked[top]
        do {
            let attributes = try x.getWindowAttributes(top)
            guard attributes.mapState == .viewable, attributes.windowClass == .inputOutput || attributes.overrideRedirect else {
                return false
            }
            guard let client = try findClient(top, depth: 2) else { return false }
            if clients.updateValue(client, forKey: top) != client { x.watchProperties(client) }
            let properties = try x.windowProperties(client)
            let roles = roles(for: properties)
            guard roles.popup != nil || !roles.anchors.isEmpty || roles.excluded else { return forget(top) }
            let rect = try x.rootRect(top)
            let supportsDelete = try x.supportsDeleteWindow(client)
            // A re-match after a property change keeps the time the popup opened.
            let still = before.flatMap { $0.client == client && $0.popup == roles.popup ? $0 : nil }
            if still == nil { closing[client] = nil }
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

    private func findClient(_ window: WindowID, depth: Int) throws(XError) -> WindowID? {
        if try x.wmClass(window) != nil { return window }
        guard depth > 0 else { return nil }
        for child in try x.queryTree(window).children.reversed() {
            if let found = try findClient(child, depth: depth - 1) { return found }
        }
        return nil
    }

    private func roles(for properties: WindowMatch.Properties) -> (popup: Int32?, anchors: [Int32], excluded: Bool) {
        var popup: Int32?
        var anchors: [Int32] = []
        for (i, p) in model.popups.enumerated() {
            if popup == nil, case .window(let match) = p.source, match.matches(properties) { popup = Int32(i) }
            for case .window(let match) in p.anchors where match.matches(properties) {
                anchors.append(Int32(i))
                break
            }
        }
        let excluded = model.exclusions.contains { e in
            if case .window(let match) = e.source { return match.matches(properties) }
            return false
        }
        return (popup, anchors, excluded)
    }
}

func hex(_ window: WindowID) -> String { "0x" + String(window, radix: 16) }
