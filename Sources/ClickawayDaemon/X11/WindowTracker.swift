internal import ClickawayCore
internal import ClickawayX11
internal import Logging

/// What the daemon knows about the X server's top-level windows: the root's children in
/// stacking order and, in its `roster`, the mapped ones whose client window matches a popup,
/// anchor or exclusion, with the on-screen rectangle. Under a reparenting window manager the
/// top-level window is the frame: its rectangle is the popup's, its client is what gets
/// dismissed. An entry's details say whether the client takes WM_DELETE_WINDOW.
///
/// Everything here runs on window events, never on a press: round trips are allowed, but a
/// window mapped (or changed) is only queued by `apply`; `inspectNext` reads it later, one
/// window at a time, so that a press that arrives during a burst of windows is answered first.

final class WindowTracker {
    private let x: XConnection
    private let logger: Logger
    /// The windows with a role, keyed by top-level; its stacking is every child of the root,
    /// bottom to top.
    let roster: WindowRoster<Bool>
    /// What was read of every viewable top-level window looked at, matching or not: its
    /// client, and the client's properties. A title or class that changes later is matched
    /// again (PropertyNotify on the client); a window that matches nothing may still belong
    /// to a popup's family.
    private var seen: [WindowID: Seen] = [:]
    /// The windows whose PropertyNotify leads to a top-level (the value): its client, and
    /// while no window manager has claimed one with WM_STATE, every window the search looked
    /// at, since WM_STATE can appear on any of them after the frame is mapped.
    private var watched: [WindowID: WindowID] = [:]
    /// The same, by top-level: what `watched` holds for each.
    private var watchedFor: [WindowID: [WindowID]] = [:]
    /// The properties whose change can change a match or a family: titles only when some
    /// rule uses one, so that windows retitling themselves (terminals, progress) cost nothing.
    private var matchedAtoms: [Atom] = []
    /// The mapped children of the root, each with whether it is override-redirect.
    private(set) var mapped: [WindowID: Bool] = [:]
    /// Top-levels to look at (mapped, reparented to the root, a property changed: `reading`)
    /// or to place again from what was read (a new model: `placing`), in no particular
    /// order; one that went meanwhile is skipped.
    private var pending: [WindowID] = []
    private var reading: Set<WindowID> = []
    private var placing: Set<WindowID> = []

    private struct Seen {
        var client: WindowID
        /// Override-redirect and nobody's frame: a menu, a dropdown, a bar popup (i3's frames
        /// are override-redirect too, with a managed client below).
        var unmanagedOverrideRedirect: Bool
        var inputOnly: Bool
        var properties: WindowMatch.Properties
    }

    /// How many WM_TRANSIENT_FOR links a family is followed through (a dialog of a dialog ...).
    static let transientDepth = 8

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
        seen = [:]
        watched = [:]
        watchedFor = [:]
        mapped = [:]
        for window in roster.stacking { inspect(window, now: now) }
        settleFamilies(now: now)
    }

    /// A new config: roles are matched again against the windows already on screen, by the
    /// properties read when they were looked at (no round trip but for a window that gains a
    /// role: its rectangle and protocols); those with no role so far are placed again as
    /// `lookup` says (a reload: all of them). Titles are read again only where they were not
    /// followed before and now are.
    func replaceModel(_ model: ClickModel, now: Int64, inspecting lookup: WindowLookup = .all) {
        let atoms = Self.matchedAtoms(for: model, atoms: x.atoms)
        let titlesNewlyFollowed = atoms.count > matchedAtoms.count
        matchedAtoms = atoms
        roster.rematch(model)
        switch lookup {
        case .none:
            break
        case .window(let client):
            for (top, s) in seen where s.client == client && roster[top] == nil { place(top, now: now) }
        case .all where titlesNewlyFollowed:
            for window in roster.stacking where roster[window] == nil && mapped[window] != nil { enqueue(window) }
        case .all:
            for window in roster.stacking where roster[window] == nil && seen[window] != nil { enqueue(window, reading: false) }
        }
        settleFamilies(now: now, force: true)
    }

    /// Whether windows wait to be looked at or placed (`inspectNext`).
    var hasPending: Bool { !pending.isEmpty }

    private func enqueue(_ top: WindowID, reading read: Bool = true) {
        let added = read ? reading.insert(top).inserted : placing.insert(top).inserted
        if added && !(read ? placing : reading).contains(top) { pending.append(top) }
    }

    private func dequeue(_ top: WindowID) {
        reading.remove(top)
        placing.remove(top)
    }

    /// Looks at (or places) one window waiting to be; returns whether what the engine sees
    /// changed. `interrupted` is asked between the round trips of a read: when it says a
    /// press (or anything to answer) has come, the window goes back in the queue.
    func inspectNext(now: Int64, interrupted: () -> Bool) -> Bool {
        while let top = pending.popLast() {
            let read = reading.remove(top) != nil
            guard placing.remove(top) != nil || read else { continue }
            let wasInstance = isInstance(top)
            guard read ? inspect(top, now: now, interrupted: interrupted) : place(top, now: now) else { return false }
            if isInstance(top) != wasInstance { settleFamilies(now: now) }
            return true
        }
        return false
    }

    /// Applies one event; returns true when the open popups, their families, geometry or
    /// stacking, or the anchor and exclusion areas may have changed.
    func apply(_ event: XEvent, now: Int64) -> Bool {
        // Only a window that goes (unmapped, destroyed, reparented) changes the open
        // instances here: the others are queued for `inspectNext`.
        let window: WindowID? = switch event {
        case .destroyNotify(let e): e.window
        case .unmapNotify(let e): e.window
        case .reparentNotify(let e): e.window
        default: nil
        }
        let wasInstance = window.map(isInstance) ?? false
        let changed = applyToRoster(event, now: now)
        if wasInstance, let window, !isInstance(window) { settleFamilies(now: now) }
        return changed
    }

    /// Whether `top` is an open popup instance (not a window of a family).
    private func isInstance(_ top: WindowID) -> Bool {
        guard let entry = roster[top] else { return false }
        return entry.roles.popup != nil && entry.family == nil
    }

    private func applyToRoster(_ event: XEvent, now: Int64) -> Bool {
        switch event {
        case .createNotify(let e) where e.parent == x.root:
            roster.stacking.removeAll { $0 == e.window }
            roster.stacking.append(e.window)
            return false
        case .destroyNotify(let e):
            roster.stacking.removeAll { $0 == e.window }
            roster.closing.cancel(e.window)
            mapped[e.window] = nil
            dequeue(e.window)
            unwatch(e.window)
            return roster.forget(e.window)
        case .unmapNotify(let e) where e.event == x.root:
            mapped[e.window] = nil
            dequeue(e.window)
            unwatch(e.window)
            return roster.forget(e.window)
        case .propertyNotify(let e) where e.atom == x.atoms.wmState || matchedAtoms.contains(e.atom):
            // WM_STATE set on a window below a frame (the window manager has claimed its
            // client), or the client's class, title, type or transient-for changed.
            guard let top = watched[e.window], e.atom != x.atoms.wmState || seen[top]?.client != e.window || e.deleted else {
                return false
            }
            enqueue(top)
            return false
        case .mapNotify(let e) where e.event == x.root:
            mapped[e.window] = e.overrideRedirect
            enqueue(e.window)
            return false
        case .reparentNotify(let e) where e.event == x.root:
            roster.stacking.removeAll { $0 == e.window }
            mapped[e.window] = nil
            if e.parent == x.root {
                roster.stacking.append(e.window)
                enqueue(e.window)
                return false
            }
            dequeue(e.window)
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
        [StandardAtoms.wmClass, atoms.netWMWindowType, atoms.netWMPid, StandardAtoms.wmTransientFor]
            + (model.matchesTitles ? [StandardAtoms.wmName, atoms.netWMName] : [])
    }

    /// The client window a runtime popup given `window` is: the client of the viewable
    /// top-level `window` (a frame under a reparenting window manager, or an
    /// override-redirect window), or `window` itself when it is such a client. nil for any
    /// other window.
    func popupWindow(for window: WindowID) -> WindowID? {
        if let s = seen[window] { return s.client }
        return seen.values.contains { $0.client == window } ? window : nil
    }

    /// The client window of a top-level: known when it was looked at, else searched now.
    func client(of top: WindowID) throws(XError) -> WindowID? {
        if let s = seen[top] { return s.client }
        return try x.findClient(of: top).client
    }

    /// Whether the client takes WM_DELETE_WINDOW, as read when it was matched.
    func supportsDelete(_ client: WindowID) -> Bool { roster.entry(forWindow: client)?.details == true }

    // MARK: - Families

    /// Whether `top` was seen to be a window manager's frame (i3's frames are override-redirect)
    /// rather than a menu, a launcher or a dropdown; false for a window not looked at yet.
    func isFrame(_ top: WindowID) -> Bool { seen[top].map { !$0.unmanagedOverrideRedirect } ?? false }

    /// The keys of the open popup instances (not their family's windows).
    private func openInstanceKeys() -> Set<WindowID> {
        Set(roster.entries.compactMap { key, entry in entry.roles.popup != nil && entry.family == nil ? key : nil })
    }

    /// Places again every window that may belong to a family (one that is transient for
    /// another, or override-redirect), bottom to top, until the open instances stop changing:
    /// a popup opening takes in its dialogs and menus, one closing lets them go (they may
    /// become popups of their own). Called when the open instances changed, not per event.
    private func settleFamilies(now: Int64, force: Bool = false) {
        var before = force ? nil : Optional(openInstanceKeys())
        for _ in 0..<3 {
            for top in roster.stacking {
                guard let s = seen[top], s.unmanagedOverrideRedirect || s.properties.transientFor != 0 else { continue }
                place(top, now: now)
            }
            let after = openInstanceKeys()
            if after == before { return }
            before = after
        }
    }

    /// The open instance (its window and popup) that the window seen at `top` belongs to:
    /// the one it is transient for, at any depth (a dialog's dialog), else, for an
    /// override-redirect window, the topmost open instance of the same X client (GTK's and
    /// Qt's menus, dropdowns and tooltips, Xt menus, dzen2's body). Popups with
    /// `family = false` have none.
    private func familyOwner(of top: WindowID, _ s: Seen) -> (window: WindowID, popup: Int32)? {
        // GTK's grab-transfer window and the like: nothing to click on.
        guard !s.inputOnly else { return nil }
        var link = s.properties.transientFor
        for _ in 0..<Self.transientDepth where link != 0 && link != s.client {
            if let entry = roster.entry(forWindow: link) {
                if let owner = entry.family { return ownerWithFamily(owner) }
                if let popup = roster.popupOf(window: link) { return ownerWithFamily(link, popup) }
            }
            guard let next = seen.values.first(where: { $0.client == link }) else { break }
            link = next.properties.transientFor
        }
        guard s.unmanagedOverrideRedirect else { return nil }
        for key in roster.stacking.reversed() where key != top {
            guard let entry = roster[key], entry.family == nil, let popup = roster.popupOf(window: entry.window),
                  x.sameClient(entry.window, s.client) else { continue }
            return ownerWithFamily(entry.window, popup)
        }
        return nil
    }

    private func ownerWithFamily(_ window: WindowID, _ popup: Int32? = nil) -> (window: WindowID, popup: Int32)? {
        guard let popup = popup ?? roster.popupOf(window: window), roster.model.popups[Int(popup)].family else { return nil }
        return (window, popup)
    }

    /// Gives the window seen at `top` its place: a popup of its own, an anchor or exclusion,
    /// a member of an open popup's family, or nothing. A window that would be another
    /// instance of the very popup it belongs to (yad's file dialog has yad's class) is a
    /// member; one that opens another popup (a nested popup by configuration) keeps that.
    /// `reading`: the rectangle and protocols are read anew, not taken from the roster.
    @discardableResult
    private func place(_ top: WindowID, reading: Bool = false, now: Int64) -> Bool {
        guard let s = seen[top] else { return roster.forget(top) }
        var roles = roster.model.roles(for: s.properties)
        let owner = familyOwner(of: top, s)
        if let owner, roles.popup == nil || roles.popup == owner.popup { roles.popup = nil }
        let family = owner.flatMap { roles.popup == nil ? $0.window : nil }
        guard !roles.isNone || family != nil else { return roster.forget(top) }
        do {
            let current = reading ? nil : roster[top].flatMap { $0.window == s.client ? $0 : nil }
            let rect = try current?.rect ?? x.rootRect(top)
            let supportsDelete = try current?.details ?? x.supportsDeleteWindow(s.client)
            return roster.update(top, window: s.client, rect: rect, properties: s.properties, details: supportsDelete,
                                 roles: roles, family: family, now: now)
        } catch {
            logger.debug("window vanished while being placed", metadata: ["window": "\(roster.describe(top))", "error": "\(error)"])
            return roster.forget(top)
        }
    }

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
        seen[top] = nil
        for w in watchedFor.removeValue(forKey: top) ?? [] where watched[w] == top { watched[w] = nil }
    }

    /// Follows the properties of `windows` for `top` (PropertyNotify already selected on
    /// them), and lets go of the others followed for it.
    private func watch(_ windows: [WindowID], for top: WindowID) {
        for w in watchedFor[top] ?? [] where watched[w] == top && !windows.contains(w) { watched[w] = nil }
        for w in windows { watched[w] = top }
        watchedFor[top] = windows
    }

    /// Looks at a top-level window: finds its client (`findClient`: the window with WM_STATE
    /// at any depth below it, else itself), reads it and places it. Windows that vanish
    /// while being looked at are simply not tracked. Returns whether what the engine sees
    /// changed.
    @discardableResult
    private func inspect(_ top: WindowID, now: Int64, interrupted: () -> Bool = { false }) -> Bool {
        // The shield, and anything else of the daemon's own.
        guard !x.isOwn(top) else { return false }
        do {
            let attributes = try x.getWindowAttributes(top)
            guard attributes.mapState == .viewable else { return false }
            if interrupted() {
                enqueue(top)
                return false
            }
            mapped[top] = attributes.overrideRedirect
            guard attributes.windowClass == .inputOutput || attributes.overrideRedirect else { return false }
            // PropertyNotify is selected on each window before its WM_STATE is read, so a
            // window manager setting it just after is still heard. An override-redirect window
            // is never managed: no WM_STATE will come.
            let search = try x.findClient(of: top, overrideRedirect: attributes.overrideRedirect) { w in
                if !attributes.overrideRedirect && watched[w] == nil { x.watchProperties(w) }
            }
            if let client = search.client, attributes.overrideRedirect, watched[client] == nil { x.watchProperties(client) }
            watch(search.managed || attributes.overrideRedirect ? search.client.map { [$0] } ?? [] : search.searched, for: top)
            if interrupted() {
                enqueue(top)
                return false
            }
            guard let client = search.client else {
                seen[top] = nil
                return roster.forget(top)
            }
            seen[top] = Seen(client: client, unmanagedOverrideRedirect: attributes.overrideRedirect && !search.managed,
                             inputOnly: attributes.windowClass != .inputOutput, properties: try x.windowProperties(client))
            return place(top, reading: true, now: now)
        } catch {
            logger.debug("window vanished while being inspected", metadata: ["window": "\(roster.describe(top))", "error": "\(error)"])
            return false
        }
    }
}
