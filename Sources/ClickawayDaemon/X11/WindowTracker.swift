internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayX11
internal import Logging

/// What the daemon knows about the X server's top-level windows: the root's children in
/// stacking order and, in its `roster`, the mapped ones whose client window matches a popup,
/// anchor or exclusion, with the on-screen rectangle. Under a reparenting window manager the
/// top-level window is the frame: its rectangle is the popup's, its client is what gets
/// dismissed. An entry's details say whether the client takes WM_DELETE_WINDOW.
///
/// Everything here runs on window events, never on a press, and never waits for the X
/// server: a window mapped (or changed) is queued by `apply`; `work` sends its requests and
/// collects their replies as they come (`xcb_poll_for_reply`), a few windows at a time, so
/// that a press that arrives during a burst of windows is read and answered at once. Only
/// start-up waits for the replies (`finishReads`); `sync` waits for the reads in flight
/// between events (`X11Syncs`).
///
/// The reads go on a connection of their own (`reader`), which also brings the
/// PropertyNotify they follow: on the daemon's connection an AllowEvents sent during a burst
/// waited behind the reads' requests, and the replies woke the loop as often as the events
/// (BENCHMARKS.md, other clients' windows).

final class WindowTracker: RosterWindowSource {
    private let x: XConnection
    /// The daemon's input connection (`X11Display.input`), whose windows (the shield) are
    /// the daemon's own, as `x`'s are (show's).
    private let input: XConnection
    /// The reads' own connection to the same server: their requests never stand in line
    /// before an answer to a click (AllowEvents goes on the input's), and the PropertyNotify they
    /// follow comes on it, in order with their replies.
    let reader: XConnection
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
    /// What was read of top-levels since unmapped, with whether they were override-redirect,
    /// their properties still followed: one mapped again as it was is placed from here, not
    /// read again (a program that maps and unmaps its menus over and over costs no round
    /// trips). A property followed that changes meanwhile drops it, and so does a new model
    /// that follows titles it did not.
    private var unmappedSeen: [WindowID: (seen: Seen, overrideRedirect: Bool)] = [:]
    /// When each mapped child of the root was mapped, counted in MapNotify events (those
    /// mapped before the daemon started: 0): what the shield asks to keep the menus mapped
    /// after a popup above it.
    private var mapOrder: [WindowID: UInt64] = [:]
    private var mapsSeen: UInt64 = 0
    /// Top-levels to look at (mapped, reparented to the root, a property changed: `toRead`)
    /// or to place again from what was read (a new model: `toPlace`); one that went
    /// meanwhile is skipped.
    private var toRead = WindowQueue()
    private var toPlace: [WindowID] = []
    private var reading: Set<WindowID> = []
    private var placing: Set<WindowID> = []
    /// The windows being read: requests sent, replies not all collected.
    private var reads: [WindowID: WindowRead] = [:]
    /// Those windows, the one whose requests were sent first first: the X server answers in
    /// order, so when its replies have not come, no other's have.
    private var readOrder: [WindowID] = []
    /// The client of each top-level seen (`seen`, by client).
    private var topOfClient: [WindowID: WindowID] = [:]
    /// The top-levels seen by their client's `_NET_WM_PID` (`seen`, by process).
    private var topsOfPid: [Int32: Set<WindowID>] = [:]
    /// Seen windows that may belong to a family: override-redirect and nobody's frame, or
    /// transient for another window. `placeFamilyCandidates` places only these.
    private var familyCandidates: Set<WindowID> = []
    /// The seen top-levels transient for each window (WM_TRANSIENT_FOR names a client).
    private var transientsFor: [WindowID: Set<WindowID>] = [:]
    /// The seen unmanaged override-redirect top-levels of each X client (`x.clientBase`).
    private var overrideRedirectOfClient: [WindowID: Set<WindowID>] = [:]
    /// The seen unmanaged override-redirect top-levels that are no popup and in no popup's
    /// family (a notification, another program's menu): what the shield follows the pointer
    /// over. Kept as they are placed, so that a burst of popups costs the shield nothing.
    private(set) var overrideRedirectBystanders: Set<WindowID> = []
    /// The other seen unmanaged override-redirect top-levels: popups' own windows and their
    /// families' (menus, dropdowns). Followed too while two popups are open.
    private(set) var overrideRedirectOfPopups: Set<WindowID> = []
    /// The top-levels whose mapping, place in the stacking or kind (frame or not) changed
    /// since the shield last looked (`takeChangedForShield`): only these can have come to
    /// need covering, or stopped. nil: any may have (the tree read again, or too many to keep).
    private var changedForShield: Set<WindowID>? = []
    /// `_NET_WM_WINDOW_TYPE` atoms' names, asked once each.
    private var atomNames: [Atom: String] = [:]

    /// How many windows are read at once. Enough to keep the X server busy; few enough that
    /// the replies a press may come behind are read in microseconds.
    static let readsInFlight = 16

    private struct Seen {
        var client: WindowID
        /// Override-redirect and nobody's frame: a menu, a dropdown, a bar popup (i3's frames
        /// are override-redirect too, with a managed client below).
        var unmanagedOverrideRedirect: Bool
        var inputOnly: Bool
        var properties: WindowMatch.Properties
        /// The top-level's outer rectangle on the root, kept current by ConfigureNotify.
        var rect: Rect
        /// Whether the client lists WM_DELETE_WINDOW in WM_PROTOCOLS.
        var supportsDelete: Bool
    }

    /// What changed for the shield since the last call (`changedForShield`): a window's
    /// mapping, place in the stacking or kind, or whether it is a bystander or a popup's.
    func takeChangedForShield() -> Set<WindowID>? {
        defer { changedForShield = [] }
        return changedForShield
    }

    private func changedForShield(_ top: WindowID) {
        guard changedForShield != nil else { return }
        if changedForShield!.count >= Self.changedForShieldLimit {
            changedForShield = nil
        } else {
            changedForShield!.insert(top)
        }
    }

    static let changedForShieldLimit = 8192

    private func setSeen(_ top: WindowID, _ s: Seen?) {
        changedForShield(top)
        if let old = seen[top] {
            if topOfClient[old.client] == top { topOfClient[old.client] = nil }
            if old.properties.pid != 0 { Self.remove(top, from: &topsOfPid, at: old.properties.pid) }
            if old.properties.transientFor != 0 { Self.remove(top, from: &transientsFor, at: old.properties.transientFor) }
            if old.unmanagedOverrideRedirect { Self.remove(top, from: &overrideRedirectOfClient, at: x.clientBase(of: old.client)) }
        }
        seen[top] = s
        if let s {
            topOfClient[s.client] = top
            if s.properties.pid != 0 { topsOfPid[s.properties.pid, default: []].insert(top) }
            if s.properties.transientFor != 0 { transientsFor[s.properties.transientFor, default: []].insert(top) }
            if s.unmanagedOverrideRedirect { overrideRedirectOfClient[x.clientBase(of: s.client), default: []].insert(top) }
            if s.unmanagedOverrideRedirect || s.properties.transientFor != 0 {
                familyCandidates.insert(top)
            } else {
                familyCandidates.remove(top)
            }
        } else {
            familyCandidates.remove(top)
            overrideRedirectBystanders.remove(top)
            overrideRedirectOfPopups.remove(top)
        }
    }

    /// Puts `top` in `windows` or takes it out, as `member` says; returns whether that changed them.
    private static func set(_ top: WindowID, in windows: inout Set<WindowID>, to member: Bool) -> Bool {
        member ? windows.insert(top).inserted : windows.remove(top) != nil
    }

    private static func remove<Key: Hashable>(_ top: WindowID, from index: inout [Key: Set<WindowID>], at key: Key) {
        index[key]?.remove(top)
        if index[key]?.isEmpty == true { index[key] = nil }
    }

    /// How many WM_TRANSIENT_FOR links a family is followed through (a dialog of a dialog ...).
    static let transientDepth = 8

    /// Connects the reads' own connection: one round trip.
    init(x: XConnection, input: XConnection, model: ClickModel, logger: Logger) throws(XError) {
        reader = try XConnection(display: x.display)
        events = EventFeed(reader, socketReadable: false)
        self.x = x
        self.input = input
        self.logger = logger
        roster = WindowRoster(model: model, naming: .hex, logger: logger)
        matchedAtoms = Self.matchedAtoms(for: model, atoms: x.atoms)
    }

    /// Whether the daemon made `window` (the shield, show's windows): never read.
    private func isOwn(_ window: WindowID) -> Bool { x.isOwn(window) || input.isOwn(window) }

    /// The root's children, bottom to top.
    var stacking: [WindowID] { roster.stacking }

    /// Reads the whole tree once: popups already open when the daemon starts count.
    func scan(now: Int64) throws(XError) {
        roster.stacking = try x.queryTree(x.root).children
        changedForShield = nil
        for key in roster.entries.keys { roster.forget(key) }
        for top in Array(seen.keys) { setSeen(top, nil) }
        unmappedSeen = [:]
        watched = [:]
        watchedFor = [:]
        mapped = [:]
        mapOrder = [:]
        for window in roster.stacking {
            // Mapped before the daemon started: in the order they are stacked, the nearest
            // there is to the order they were mapped in.
            mapsSeen += 1
            mapOrder[window] = mapsSeen
            enqueue(window)
        }
        _ = finishReads(now: now)
        placeFamilyCandidates(now: now)
    }

    /// A new config: roles are matched again against the windows already on screen, by the
    /// properties read when they were looked at (no round trip); those with no role so far
    /// are placed again as `lookup` says, and only those a match new in this model can take:
    /// a reload that changes no window match places none, a runtime popup for a process
    /// (`pid`) or a window places that process's or that window's. Titles are read again
    /// only where they were not followed before and now are.
    func replaceModel(_ model: ClickModel, now: Int64, inspecting lookup: WindowLookup = .all) {
        let atoms = Self.matchedAtoms(for: model, atoms: x.atoms)
        let titlesNewlyFollowed = atoms.count > matchedAtoms.count
        matchedAtoms = atoms
        if titlesNewlyFollowed {
            for top in unmappedSeen.keys { unwatch(top) }
            unmappedSeen = [:]
        }
        let added = lookup == .none ? [] : Self.addedMatches(from: roster.model, to: model)
        roster.rematch(model)
        switch lookup {
        case .none:
            break
        case .window(let client):
            if let top = topOfClient[client], roster[top] == nil { place(top, now: now) }
        case .all where titlesNewlyFollowed:
            for window in roster.stacking where roster[window] == nil && mapped[window] != nil { enqueue(window) }
        case .all where added.allSatisfy({ model.windowMatches[$0].isByIdentity }):
            // Matches by identity only (runtime popups): the windows they name.
            for index in added {
                let match = model.windowMatches[index]
                var tops = match.pid.map { topsOfPid[$0] ?? [] } ?? []
                if let window = match.window, let top = topOfClient[window] ?? (seen[window] != nil ? window : nil) { tops.insert(top) }
                for top in tops where roster[top] == nil { enqueue(top, reading: false) }
            }
        case .all:
            for window in roster.stacking where roster[window] == nil && seen[window] != nil { enqueue(window, reading: false) }
        }
        placeFamilyCandidates(now: now)
    }

    /// The window matches in `new` and not in `old`, as indices into `new.windowMatches`: a
    /// big configuration's 70,000 are not copied. Most models differ from the one before
    /// in a few popups (a runtime popup appended, one edited): the common beginning and end
    /// are found by the hashes the models were built with (64 bits: a collision would only
    /// leave a window unplaced until it next changes), and only what lies between is compared,
    /// by those hashes too: replacing 70,000 matches by a few hashed each of them on the loop.
    static func addedMatches(from old: ClickModel, to new: ClickModel) -> [Int] {
        let (oldHashes, newHashes) = (old.windowMatchHashes, new.windowMatchHashes)
        var head = 0
        while head < oldHashes.count, head < newHashes.count, oldHashes[head] == newHashes[head] { head += 1 }
        var tail = 0
        while tail < oldHashes.count - head, tail < newHashes.count - head,
              oldHashes[oldHashes.count - 1 - tail] == newHashes[newHashes.count - 1 - tail] { tail += 1 }
        let (oldRange, newRange) = (head..<(oldHashes.count - tail), head..<(newHashes.count - tail))
        guard !newRange.isEmpty else { return [] }
        // A set of the shorter side's hashes: few when a big configuration comes or goes.
        let kept: Set<Int>
        if newRange.count <= oldRange.count {
            let candidates = Set(newHashes[newRange])
            kept = Set(oldHashes[oldRange].lazy.filter { candidates.contains($0) })
        } else {
            kept = Set(oldHashes[oldRange])
        }
        return newRange.filter { !kept.contains(newHashes[$0]) }
    }

    /// Whether `work` has something to do now: a window to place, one to start reading, or
    /// replies that have come. Reads what the connection holds, never waits.
    var hasWork: Bool {
        guard isBusy else { return false }
        if events.mayHaveEvent { return true }
        if !toPlace.isEmpty || (!toRead.isEmpty && readOrder.count < Self.readsInFlight) { return true }
        if let top = readOrder.first, let read = reads[top], collect(read) { return true }
        // Looking for replies may have pulled events into libxcb's queue.
        return events.hasQueuedEvent()
    }

    /// `reader.reads` when the replies of the read longest ago were last not all there.
    private var readsAtMiss: UInt64?

    /// Collects what has come of `read`'s replies; whether all have. Asks libxcb only if the
    /// connection was read since they were last missing: the X server answers in order, so
    /// until then nothing more can have come (in a burst of windows that was a recvmsg(2) per
    /// pass of the loop that found nothing).
    private func collect(_ read: WindowRead) -> Bool {
        guard readsAtMiss != reader.reads else { return false }
        guard read.collect(reader, wait: false) else {
            readsAtMiss = reader.reads
            return false
        }
        return true
    }

    /// Whether windows are being read or wait to be read or placed, or the reads' connection
    /// may hold events: set when one is queued or the connection is readable, cleared by
    /// `work` when it finds nothing left. Stored, because the loop asks after every click, and
    /// a look at the collections costs a runtime exclusivity check on each.
    private(set) var isBusy = false

    /// The reads' connection's events: PropertyNotify of the windows followed, and errors.
    private var events: EventFeed

    /// The reads' socket is readable: the next `work` reads it.
    func readerBecameReadable() {
        events.socketReadable = true
        isBusy = true
    }

    /// Writes the reads' requests; they are only sent while busy.
    func flush() {
        if isBusy { reader.flush() }
    }

    /// Whether windows are being read, or events of the reads' connection wait to be handled
    /// (a round trip's reply on it can pull them into libxcb's queue unseen): what a sync
    /// waits for.
    var readsPending: Bool {
        if !isBusy, events.hasQueuedEvent() { isBusy = true }
        return isBusy
    }

    /// An event of the reads' connection: a property followed changed, or an error for a
    /// window gone before its PropertyNotify was selected. Returns what `apply` does.
    private func handleReaderEvent(_ event: XEvent, now: Int64) -> Bool {
        if case .error(let error) = event {
            logger.debug("X error on the window reads' connection", metadata: ["error": "\(error)"])
            return false
        }
        return apply(event, now: now)
    }

    private var hasWindowsQueued: Bool { !reads.isEmpty || !toRead.isEmpty || !toPlace.isEmpty }

    private func enqueue(_ top: WindowID, reading read: Bool = true) {
        isBusy = true
        if let inFlight = reads[top] {
            // Read again once this read is done: what it sent may predate the change.
            if read { inFlight.again = true }
            return
        }
        if read {
            if reading.insert(top).inserted { toRead.append(top) }
        } else if !reading.contains(top), placing.insert(top).inserted {
            toPlace.append(top)
        }
    }

    private func dequeue(_ top: WindowID) {
        reading.remove(top)
        placing.remove(top)
        if let read = reads.removeValue(forKey: top) {
            read.discard(reader)
            readOrder.removeAll { $0 == top }
        }
    }

    /// One step, never waiting for the X server: an event of the reads' connection handled;
    /// else the replies of the window read longest ago, if they have come, taken on to its
    /// next requests or to its place; else the next window placed, or its read begun. Returns
    /// whether it did anything, and whether what the engine sees changed.
    func work(now: Int64) -> (progressed: Bool, changed: Bool) {
        if let event = events.next() { return (true, handleReaderEvent(event, now: now)) }
        if let top = readOrder.first, let read = reads[top] {
            switch advance(read, wait: false, now: now) {
            case .waiting:
                break
            case .sent:
                readOrder.removeFirst()
                readOrder.append(top)
                return (true, false)
            case .finished(let changed):
                return (true, finish(read, changed: changed, now: now))
            }
        }
        while let top = toPlace.popLast() {
            guard placing.remove(top) != nil else { continue }
            return (true, placeSettling(top, now: now))
        }
        if readOrder.count < Self.readsInFlight {
            while let top = toRead.pop() {
                guard reading.remove(top) != nil else { continue }
                // The shield, and anything else of the daemon's own.
                guard !isOwn(top) else { continue }
                start(top)
                return (true, false)
            }
        }
        isBusy = hasWindowsQueued
        return (false, false)
    }

    /// Completes every read begun and queued, waiting for the replies: for start-up only.
    /// Returns whether what the engine sees changed.
    @discardableResult
    func finishReads(now: Int64) -> Bool {
        var changed = false
        while true {
            if let top = readOrder.first, let read = reads[top] {
                switch advance(read, wait: true, now: now) {
                case .waiting:
                    // Only when the connection broke: nothing more will come.
                    dequeue(top)
                case .sent:
                    readOrder.removeFirst()
                    readOrder.append(top)
                case .finished(let c):
                    if finish(read, changed: c, now: now) { changed = true }
                }
                // Keep the pipeline full: start the queued reads before waiting on one.
                while readOrder.count < Self.readsInFlight * 8, let next = toRead.pop() {
                    if reading.remove(next) != nil, !isOwn(next) { start(next) }
                }
                continue
            }
            let step = work(now: now)
            if step.changed { changed = true }
            if !step.progressed && readOrder.isEmpty { return changed }
        }
    }

    /// Asks at once what a top-level that is its own client needs (a window with no window
    /// manager, a menu, a window manager that does not reparent): one round trip, not five.
    /// Under a reparenting window manager the client's part is asked again of the client found.
    /// The top-level is followed for PropertyNotify first, override-redirect ones too: i3's
    /// frames are, and i3 may set WM_STATE on the client below after mapping one.
    private func start(_ top: WindowID) {
        follow(top, for: top)
        let read = WindowRead(top: top, stage: .first(First(
            attributes: Batch([reader.sendGetWindowAttributes(top)]), wmState: Batch([reader.sendHasWMState(top)]),
            tree: Batch([reader.sendQueryTree(top)]), details: Details(client: top, managed: false, top: top, x: reader))))
        reads[top] = read
        readOrder.append(top)
    }

    /// A read is done: places the window (done in `advance`), brings the windows tied to it
    /// along when it opened or closed a popup, reads it again when a property changed meanwhile.
    private func finish(_ read: WindowRead, changed: Bool, now: Int64) -> Bool {
        reads[read.top] = nil
        readOrder.removeAll { $0 == read.top }
        if read.again { enqueue(read.top) }
        instanceChanged(read.top, from: read.wasInstance, now: now)
        return changed
    }

    private func placeSettling(_ top: WindowID, now: Int64) -> Bool {
        let was = instanceWindow(top)
        let changed = place(top, now: now)
        instanceChanged(top, from: was, now: now)
        return changed
    }

    /// Applies one event; returns true when the open popups, their families, geometry or
    /// stacking, or the anchor and exclusion areas may have changed.
    func apply(_ event: XEvent, now: Int64) -> Bool {
        // Only a window that goes (unmapped, destroyed, reparented) changes the open
        // instances here: the others are queued for `work`.
        let window: WindowID? = switch event {
        case .destroyNotify(let e): e.window
        case .unmapNotify(let e): e.window
        case .reparentNotify(let e): e.window
        default: nil
        }
        let was = window.flatMap(instanceWindow)
        let changed = applyToRoster(event, now: now)
        if let window, was != nil { instanceChanged(window, from: was, now: now) }
        return changed
    }

    /// The window of the open popup instance at `top` (not a window of a family), or nil.
    private func instanceWindow(_ top: WindowID) -> WindowID? {
        guard let entry = roster[top], entry.roles.popup != nil, entry.family == nil else { return nil }
        return entry.window
    }

    private func applyToRoster(_ event: XEvent, now: Int64) -> Bool {
        switch event {
        case .createNotify(let e) where e.parent == x.root: changedForShield(e.window)
        case .destroyNotify(let e): changedForShield(e.window)
        case .unmapNotify(let e) where e.event == x.root: changedForShield(e.window)
        case .mapNotify(let e) where e.event == x.root: changedForShield(e.window)
        case .reparentNotify(let e) where e.event == x.root: changedForShield(e.window)
        case .configureNotify(let e) where e.event == x.root: changedForShield(e.window)
        default: break
        }
        switch event {
        case .createNotify(let e) where e.parent == x.root:
            roster.stackOnTop(e.window)
            return false
        case .destroyNotify(let e):
            roster.unstack(e.window)
            mapped[e.window] = nil
            mapOrder[e.window] = nil
            dequeue(e.window)
            unmappedSeen[e.window] = nil
            unwatch(e.window)
            return roster.forget(e.window)
        case .unmapNotify(let e) where e.event == x.root:
            // Kept when read and not being read again: what was read is still true.
            let current = reads[e.window] == nil && !reading.contains(e.window) && !placing.contains(e.window)
            let overrideRedirect = mapped.removeValue(forKey: e.window)
            mapOrder[e.window] = nil
            dequeue(e.window)
            if current, let overrideRedirect, let s = seen[e.window] {
                setSeen(e.window, nil)
                unmappedSeen[e.window] = (s, overrideRedirect)
            } else {
                unwatch(e.window)
            }
            return roster.forget(e.window)
        case .propertyNotify(let e) where e.atom == x.atoms.wmState || matchedAtoms.contains(e.atom):
            // WM_STATE set on a window below a frame (the window manager has claimed its
            // client), or the client's class, title, type or transient-for changed.
            guard let top = watched[e.window], e.atom != x.atoms.wmState || seen[top]?.client != e.window || e.deleted else {
                return false
            }
            if unmappedSeen.removeValue(forKey: top) != nil {
                // Unmapped: read again if it is mapped again.
                unwatch(top)
                return false
            }
            enqueue(top)
            return false
        case .mapNotify(let e) where e.event == x.root:
            mapped[e.window] = e.overrideRedirect
            mapsSeen += 1
            mapOrder[e.window] = mapsSeen
            if let kept = unmappedSeen.removeValue(forKey: e.window), kept.overrideRedirect == e.overrideRedirect {
                setSeen(e.window, kept.seen)
                enqueue(e.window, reading: false)
            } else {
                enqueue(e.window)
            }
            return false
        case .reparentNotify(let e) where e.event == x.root:
            mapped[e.window] = nil
            mapOrder[e.window] = nil
            unmappedSeen[e.window] = nil
            if e.parent == x.root {
                roster.stackOnTop(e.window)
                enqueue(e.window)
                return false
            }
            roster.unstack(e.window)
            dequeue(e.window)
            unwatch(e.window)
            return roster.forget(e.window)
        case .configureNotify(let e) where e.event == x.root:
            roster.restack(e.window, above: e.aboveSibling)
            let border = Int32(e.borderWidth)
            let rect = Rect(x: e.rect.x, y: e.rect.y, width: e.rect.width + 2 * border, height: e.rect.height + 2 * border)
            seen[e.window]?.rect = rect
            unmappedSeen[e.window]?.seen.rect = rect
            // A read under way asked for the geometry before this: read it again once it is
            // done (yad, mapped where the window manager put it, then moving to --posx).
            reads[e.window]?.again = true
            return roster.move(e.window, to: rect)
        default:
            return false
        }
    }

    private static func matchedAtoms(for model: ClickModel, atoms: StandardAtoms) -> [Atom] {
        [StandardAtoms.wmClass, atoms.netWMWindowType, atoms.netWMPid, StandardAtoms.wmTransientFor, atoms.wmProtocols]
            + (model.matchesTitles ? [StandardAtoms.wmName, atoms.netWMName] : [])
    }

    /// The client window a runtime popup given `window` is: the client of the viewable
    /// top-level `window` (a frame under a reparenting window manager, or an
    /// override-redirect window), or `window` itself when it is such a client. nil for any
    /// other window.
    func popupWindow(for window: WindowID) -> Result<UInt32, Refusal> {
        if let s = seen[window] { return .success(s.client) }
        if topOfClient[window] != nil { return .success(window) }
        return .failure(Refusal("window \(hex(window)) is not a mapped top-level window on \(x.display), nor the client "
                                + "window of one (a managed window with WM_STATE, or an override-redirect window); "
                                + "`xwininfo -root -children` or `xdotool search` shows the ids"))
    }

    /// The client window of a top-level, as read when it was mapped; nil for one not read yet.
    func client(of top: WindowID) -> WindowID? { seen[top]?.client }

    /// Whether the client takes WM_DELETE_WINDOW, as read when it was matched.
    func supportsDelete(_ client: WindowID) -> Bool { roster.entry(forWindow: client)?.details == true }

    // MARK: - Families

    /// Whether `top` was seen to be a window manager's frame (i3's frames are override-redirect)
    /// rather than a menu, a launcher or a dropdown; false for a window not looked at yet.
    func isFrame(_ top: WindowID) -> Bool { seen[top].map { !$0.unmanagedOverrideRedirect } ?? false }

    /// The override-redirect windows mapped after the first of the open popup instances: the
    /// menus, launchers and dropdowns of other programs opened since a popup was. Read when
    /// the shield maps, which may come a while after the popup's window (its read, a paced
    /// settle) and must not cover what opened meanwhile.
    func overrideRedirectMappedSinceOpenInstances() -> Set<WindowID> {
        guard let since = roster.instanceKeys.map({ mapOrder[$0] ?? 0 }).min() else { return [] }
        // Not the shield: its unmaps are the display's, and its own map is counted here.
        return Set(mapOrder.compactMap { window, order in
            order > since && mapped[window] == true && !isFrame(window) && !isOwn(window) ? window : nil
        })
    }

    /// Places every window that may belong to a family (one that is transient for another, or
    /// override-redirect), in the order they were mapped, so that a popup is placed before the
    /// menus it opened: at start and for a new model, where any tie may have changed. Again
    /// while that changes which windows are open instances (a transient link to a window
    /// mapped after it), at most three times.
    private func placeFamilyCandidates(now: Int64) {
        guard !familyCandidates.isEmpty else { return }
        let ordered = inMapOrder(familyCandidates)
        var before = roster.instanceKeys
        for _ in 0..<3 {
            for top in ordered { place(top, now: now) }
            let after = roster.instanceKeys
            if after == before { return }
            before = after
        }
    }

    /// `top` opened a popup instance or stopped being one (`was`: its window then): only the
    /// windows tied to it are placed again, never every window. One that opened takes in the
    /// windows transient for it (at any depth) and its client's override-redirect windows
    /// mapped after it that were placed before it was (their reads may finish first). One that
    /// closed lets its family go: each member is placed again by its own ties (a transient
    /// link to another open popup) or on its own, never by client alone: a burst of one
    /// program's popups closing in turn costs each window one placing, not one per close.
    private func instanceChanged(_ top: WindowID, from was: WindowID?, now: Int64) {
        let window = instanceWindow(top)
        guard window != was else { return }
        if let was {
            for member in inMapOrder(roster.memberKeys(of: was)) { place(member, now: now, byClient: false) }
        }
        guard let window, let opened = seen[top] else { return }
        var tied: Set<WindowID> = []
        var links = [window]
        for _ in 0..<Self.transientDepth where !links.isEmpty {
            let next = links.flatMap { transientsFor[$0] ?? [] }.filter { tied.insert($0).inserted }
            links = next.compactMap { seen[$0]?.client }
        }
        let since = mapOrder[top] ?? 0
        for other in overrideRedirectOfClient[x.clientBase(of: opened.client)] ?? [] where other != top {
            if (mapOrder[other] ?? 0) > since, roster[other]?.family != window { tied.insert(other) }
        }
        for other in inMapOrder(tied) { place(other, now: now) }
    }

    /// `windows` in the order they were mapped, so that a popup is placed before the windows
    /// it opened. Each looked up once: a family of 2,000 sorted by lookups took 1–2 ms.
    private func inMapOrder(_ windows: Set<WindowID>) -> [WindowID] {
        windows.map { (order: mapOrder[$0] ?? 0, window: $0) }.sorted { $0.order < $1.order }.map(\.window)
    }

    /// The open instance (its window and popup) that the window seen at `top` belongs to, and
    /// why: the one it is transient for, at any depth (a dialog's dialog); else, for an
    /// override-redirect window and `byClient`, the open instance of the same X client mapped
    /// last before it (GTK's and Qt's menus, dropdowns and tooltips, Xt menus, dzen2's body).
    /// A window already on screen when the popup opened (an eww bar beside its popup) is not
    /// tied to it by client. Popups with `family = false` have none.
    private func familyOwner(of top: WindowID, _ s: Seen, byClient: Bool) -> (window: WindowID, popup: Int32, tie: FamilyTie)? {
        // GTK's grab-transfer window and the like: nothing to click on.
        guard !s.inputOnly else { return nil }
        var link = s.properties.transientFor
        for _ in 0..<Self.transientDepth where link != 0 && link != s.client {
            if let entry = roster.entry(forWindow: link) {
                if let owner = entry.family { return ownerWithFamily(owner, tie: .transient) }
                if let popup = roster.popupOf(window: link) { return ownerWithFamily(link, popup, tie: .transient) }
            }
            guard let next = topOfClient[link].flatMap({ seen[$0] }) else { break }
            link = next.properties.transientFor
        }
        guard byClient, s.unmanagedOverrideRedirect else { return nil }
        let mappedAt = mapOrder[top] ?? 0
        var best: (window: WindowID, popup: Int32, order: UInt64)?
        for key in roster.instanceKeys where key != top {
            let order = mapOrder[key] ?? 0
            guard order < mappedAt, order > best?.order ?? 0, let entry = roster[key], x.sameClient(entry.window, s.client),
                  let popup = roster.popupOf(window: entry.window) else { continue }
            best = (entry.window, popup, order)
        }
        guard let best else { return nil }
        return ownerWithFamily(best.window, best.popup, tie: .sameClient)
    }

    private func ownerWithFamily(_ window: WindowID, _ popup: Int32? = nil, tie: FamilyTie) -> (window: WindowID, popup: Int32, tie: FamilyTie)? {
        guard let popup = popup ?? roster.popupOf(window: window), roster.model.popups[Int(popup)].family else { return nil }
        return (window, popup, tie)
    }

    /// Gives the window seen at `top` its place: a popup of its own, an anchor or exclusion,
    /// a member of an open popup's family, or nothing. A window that would be another
    /// instance of the very popup it belongs to (yad's file dialog has yad's class) is a
    /// member; one that opens another popup (a nested popup by configuration) keeps that.
    /// From what was read: no round trip.
    @discardableResult
    private func place(_ top: WindowID, now: Int64, byClient: Bool = true) -> Bool {
        guard let s = seen[top] else { return roster.forget(top) }
        var roles = roster.model.roles(for: s.properties)
        let owner = familyOwner(of: top, s, byClient: byClient)
        if let owner, roles.popup == nil || roles.popup == owner.popup { roles.popup = nil }
        let family = owner.flatMap { roles.popup == nil ? $0.window : nil }
        let bystander = s.unmanagedOverrideRedirect && roles.popup == nil && family == nil
        let movedBystanders = Self.set(top, in: &overrideRedirectBystanders, to: bystander)
        let movedOfPopups = Self.set(top, in: &overrideRedirectOfPopups, to: s.unmanagedOverrideRedirect && !bystander)
        if movedBystanders || movedOfPopups { changedForShield(top) }
        guard !roles.isNone || family != nil else { return roster.forget(top) }
        return roster.update(top, window: s.client, rect: s.rect, properties: s.properties, details: s.supportsDelete,
                             roles: roles, family: family, tie: owner?.tie ?? .transient, now: now)
    }

    // MARK: -

    /// Stops following the properties of a top-level that is gone, unmapped or reparented.
    private func unwatch(_ top: WindowID) {
        setSeen(top, nil)
        for w in watchedFor.removeValue(forKey: top) ?? [] where watched[w] == top { watched[w] = nil }
    }

    /// Follows the properties of `windows` for `top` (PropertyNotify already selected on
    /// them), and lets go of the others followed for it.
    private func watch(_ windows: [WindowID], for top: WindowID) {
        for w in watchedFor[top] ?? [] where watched[w] == top && !windows.contains(w) { watched[w] = nil }
        for w in windows { watched[w] = top }
        watchedFor[top] = windows
    }

    // MARK: - Reading a window

    /// Where a read stands: what it asked, and what it learned so far. Looking at a top-level
    /// window: its attributes, its WM_STATE, its children and its own details at once
    /// (`First`), then, when it has children and no WM_STATE, its client (`ClientSearch`:
    /// WM_STATE level by level, the children of each level, down to
    /// `XConnection.clientSearchDepth`; else WM_CLASS on the top-level) and the client's
    /// properties, the top-level's rectangle and the client's WM_PROTOCOLS together, then the
    /// names of window type atoms not met before.
    fileprivate enum Stage {
        case first(First)
        case wmState(depth: Int, level: [WindowID], searched: [WindowID], Batch<Bool>)
        case tree(depth: Int, searched: [WindowID], Batch<[WindowID]>)
        case ownClass(searched: [WindowID], Batch<WMClass?>)
        case details(Details)
        case typeNames(Details, atoms: [Atom], Batch<String>)
    }

    /// The first requests about a top-level: its attributes, whether it carries WM_STATE, its
    /// children, and what its client's details would be if it were its own client.
    fileprivate struct First {
        let attributes: Batch<WindowAttributes>
        let wmState: Batch<Bool>
        let tree: Batch<[WindowID]>
        let details: Details

        func collect(_ x: XConnection, wait: Bool) -> Bool {
            attributes.collect(x, wait: wait) && wmState.collect(x, wait: wait) && tree.collect(x, wait: wait)
                && details.collect(x, wait: wait)
        }

        func discard(_ x: XConnection) {
            attributes.discard(x)
            wmState.discard(x)
            tree.discard(x)
            details.discard(x)
        }
    }

    fileprivate final class Details {
        let client: WindowID
        var managed: Bool
        let properties: Batch<PropertyValue?>
        let geometry: Batch<WindowGeometry>
        let origin: Batch<(x: Int32, y: Int32)>
        let supportsDelete: Batch<Bool>

        init(client: WindowID, managed: Bool, top: WindowID, x: XConnection) {
            self.client = client
            self.managed = managed
            properties = Batch(x.sendWindowProperties(client))
            geometry = Batch([x.sendGeometry(top)])
            origin = Batch([x.sendRootOrigin(top)])
            supportsDelete = Batch([x.sendSupportsDeleteWindow(client)])
        }

        func collect(_ x: XConnection, wait: Bool) -> Bool {
            properties.collect(x, wait: wait) && geometry.collect(x, wait: wait) && origin.collect(x, wait: wait)
                && supportsDelete.collect(x, wait: wait)
        }

        func values() throws(XError) -> [PropertyValue?] {
            var values: [PropertyValue?] = []
            for result in properties.results { values.append(try result.get()) }
            return values
        }

        func discard(_ x: XConnection) {
            properties.discard(x)
            geometry.discard(x)
            origin.discard(x)
            supportsDelete.discard(x)
        }
    }

    private enum Advance {
        /// Its replies have not all come.
        case waiting
        /// The next requests went out.
        case sent
        /// Done, the window placed (or let go); whether what the engine sees changed.
        case finished(changed: Bool)
    }

    /// Takes a read as far as the replies that have come allow (`wait`: waits for them).
    private func advance(_ read: WindowRead, wait: Bool, now: Int64) -> Advance {
        guard wait ? read.collect(reader, wait: true) : collect(read) else { return .waiting }
        let top = read.top
        do throws(XError) {
            switch read.stage {
            case .first(let first):
                let attributes = try first.attributes.results[0].get()
                // Properties are followed only for windows that can be seen: a hidden one is
                // read again when it is mapped.
                guard attributes.mapState == .viewable else {
                    unwatch(top)
                    return .finished(changed: false)
                }
                mapped[top] = attributes.overrideRedirect
                changedForShield(top)
                guard attributes.windowClass == .inputOutput || attributes.overrideRedirect else {
                    unwatch(top)
                    return .finished(changed: false)
                }
                read.attributes = attributes
                read.wasInstance = instanceWindow(top)
                // The search's first level, answered: WM_STATE on the top-level, else its
                // children are the next level, else it is its own client (`ownClient`).
                let managed = try first.wmState.results[0].get()
                let children = managed ? [] : try first.tree.results[0].get()
                if !children.isEmpty {
                    searchLevel(children.reversed(), depth: 1, searched: [top], read)
                    return .sent
                }
                let values = try first.details.values()
                let ownClient = managed || attributes.overrideRedirect || x.wmClass(in: values) != nil
                first.details.managed = managed
                let search = found(ownClient ? top : nil, managed: managed, searched: [top], read, details: first.details)
                guard case .sent = search else { return search }
                // Its replies are in: on to the details at once.
                return advance(read, wait: wait, now: now)
            case .wmState(let depth, let level, var searched, let batch):
                var hasState: [Bool] = []
                for result in batch.results { hasState.append(try unlessGone(result) ?? false) }
                searched += level
                if let i = hasState.firstIndex(of: true) {
                    return found(level[i], managed: true, searched: searched, read)
                }
                guard depth < XConnection.clientSearchDepth else { return ownClient(searched: searched, read) }
                read.stage = .tree(depth: depth, searched: searched, Batch(level.map(reader.sendQueryTree)))
            case .tree(let depth, let searched, let batch):
                var next: [WindowID] = []
                for result in batch.results { next += (try unlessGone(result) ?? []).reversed() }
                guard !next.isEmpty else { return ownClient(searched: searched, read) }
                searchLevel(next, depth: depth + 1, searched: searched, read)
            case .ownClass(let searched, let batch):
                return found(try batch.results[0].get() != nil ? top : nil, managed: false, searched: searched, read)
            case .details(let details):
                let values = try details.values()
                let unnamed = Array(Set(x.windowTypeAtoms(values).filter { atomNames[$0] == nil }))
                guard unnamed.isEmpty else {
                    read.stage = .typeNames(details, atoms: unnamed, Batch(unnamed.map(reader.sendAtomName)))
                    return .sent
                }
                return .finished(changed: try seenNow(read, details, values, now: now))
            case .typeNames(let details, let atoms, let batch):
                for (atom, name) in zip(atoms, batch.results) { atomNames[atom] = try name.get() }
                let values = try details.values()
                return .finished(changed: try seenNow(read, details, values, now: now))
            }
            return .sent
        } catch {
            logger.debug("window vanished while being inspected", metadata: ["window": "\(roster.describe(top))", "error": "\(error)"])
            read.discard(reader)
            return .finished(changed: false)
        }
    }

    /// Asks for WM_STATE on `level` (windows below a top-level), each window followed for
    /// PropertyNotify before (a window manager setting it just after the read is still heard).
    /// Each is followed for `read.top` at once: a WM_STATE set while the search goes on
    /// (events are handled between its steps) reads the window again (`again`).
    private func searchLevel(_ level: [WindowID], depth: Int, searched: [WindowID], _ read: WindowRead) {
        for w in level { follow(w, for: read.top) }
        read.stage = .wmState(depth: depth, level: level, searched: searched, Batch(level.map(reader.sendHasWMState)))
    }

    /// Selects PropertyNotify on `w`, not followed yet, and follows it for `top`.
    private func follow(_ w: WindowID, for top: WindowID) {
        guard watched[w] == nil else { return }
        reader.watch(w, for: .propertyChange)
        watched[w] = top
        watchedFor[top, default: []].append(w)
    }

    /// No WM_STATE below: an override-redirect top-level is its own client, another one is
    /// when it has WM_CLASS.
    private func ownClient(searched: [WindowID], _ read: WindowRead) -> Advance {
        if read.attributes?.overrideRedirect == true { return found(read.top, managed: false, searched: searched, read) }
        read.stage = .ownClass(searched: searched, Batch([reader.sendWMClass(read.top)]))
        return .sent
    }

    /// The client search is over: follow what may change the answer, and read the client
    /// (`details`: already asked).
    private func found(_ client: WindowID?, managed: Bool, searched: [WindowID], _ read: WindowRead,
                       details: Details? = nil) -> Advance {
        let top = read.top
        watch(managed ? client.map { [$0] } ?? [] : searched, for: top)
        guard let client else {
            setSeen(top, nil)
            return .finished(changed: roster.forget(top))
        }
        read.stage = .details(details ?? Details(client: client, managed: managed, top: top, x: reader))
        return .sent
    }

    /// Everything is read: the window is seen, and placed.
    private func seenNow(_ read: WindowRead, _ details: Details, _ values: [PropertyValue?], now: Int64) throws(XError) -> Bool {
        let geometry = try details.geometry.results[0].get()
        let origin = try details.origin.results[0].get()
        // (0, 0) is inside the border; the outer edge is one border width further out.
        let border = Int32(geometry.borderWidth)
        let rect = Rect(x: origin.x - border, y: origin.y - border,
                        width: geometry.rect.width + 2 * border, height: geometry.rect.height + 2 * border)
        let attributes = read.attributes!
        setSeen(read.top, Seen(client: details.client, unmanagedOverrideRedirect: attributes.overrideRedirect && !details.managed,
                               inputOnly: attributes.windowClass != .inputOutput,
                               properties: x.properties(of: details.client, from: values, names: atomNames),
                               rect: rect, supportsDelete: try details.supportsDelete.results[0].get()))
        return place(read.top, now: now)
    }

    /// `result`'s value, or nil when the window below the top-level it asked about no longer
    /// exists (BadWindow): window managers create and destroy decoration windows inside their
    /// frames while managing a client, and one of those vanishing is no reason to give up.
    /// (The top-level's own replies, in `First`, give up.)
    private func unlessGone<T>(_ result: Result<T, XError>) throws(XError) -> T? {
        switch result {
        case .success(let value):
            return value
        case .failure(let error):
            if case .request(_, let info) = error, info.name == "BadWindow" { return nil }
            throw error
        }
    }
}

/// A window being read (`WindowTracker`'s requests in flight for it).
private final class WindowRead {
    let top: WindowID
    fileprivate var stage: WindowTracker.Stage
    var attributes: WindowAttributes?
    /// The instance's window, if it was an open instance when the read began: if that
    /// changes, the windows tied to it follow.
    var wasInstance: WindowID?
    /// A property changed while it was read: read it again after.
    var again = false

    fileprivate init(top: WindowID, stage: WindowTracker.Stage) {
        self.top = top
        self.stage = stage
    }

    /// Collects the replies of the current stage that have come; whether all have.
    func collect(_ x: XConnection, wait: Bool) -> Bool {
        switch stage {
        case .first(let f): f.collect(x, wait: wait)
        case .wmState(_, _, _, let b): b.collect(x, wait: wait)
        case .tree(_, _, let b): b.collect(x, wait: wait)
        case .ownClass(_, let b): b.collect(x, wait: wait)
        case .details(let d): d.collect(x, wait: wait)
        case .typeNames(_, _, let b): b.collect(x, wait: wait)
        }
    }

    /// Drops the replies not collected yet.
    func discard(_ x: XConnection) {
        switch stage {
        case .first(let f): f.discard(x)
        case .wmState(_, _, _, let b): b.discard(x)
        case .tree(_, _, let b): b.discard(x)
        case .ownClass(_, let b): b.discard(x)
        case .details(let d): d.discard(x)
        case .typeNames(_, _, let b): b.discard(x)
        }
    }
}

/// Windows in the order they came, taken from the front.
private struct WindowQueue {
    private var windows: [WindowID] = []
    private var head = 0

    var isEmpty: Bool { head == windows.count }

    mutating func append(_ window: WindowID) { windows.append(window) }

    mutating func pop() -> WindowID? {
        guard head < windows.count else { return nil }
        let window = windows[head]
        head += 1
        if head == windows.count {
            windows.removeAll(keepingCapacity: true)
            head = 0
        }
        return window
    }
}
