public import ClickawayControl
public import ClickawayCore
public import Logging

/// A window of an open popup's family, and what tied it there.
public struct FamilyMember: Sendable, Equatable {
    public var window: UInt32
    public var tie: FamilyTie
    public init(window: UInt32, tie: FamilyTie) {
        self.window = window
        self.tie = tie
    }
}

/// Where a display's windows come from, as the daemon sees them: the X tree's
/// (`WindowTracker`), sway's IPC (`SwayWindows`), or none. Read-only for the daemon: the
/// display keeps it up to date. Window ids fit in 32 bits (X windows, sway container ids).
/// A new source (a compositor's script) keeps its windows in a `WindowRoster`, as these do,
/// and answers `popupWindow(for:)`.
public protocol WindowSource: AnyObject {
    /// Open popup instances, bottom to top.
    func openInstances() -> [PopupInstance]
    /// Anchor and exclusion rectangles of the windows that match them.
    func windowAreas() -> [Area]
    /// Whether the window is still there (whatever its role).
    func isPresent(_ window: UInt32) -> Bool
    /// The windows of the open instance `window`'s family (its dialogs, menus, dropdowns),
    /// each with what tied it to the popup.
    func familyMembers(of window: UInt32) -> [FamilyMember]
    /// What tied `window` to an open popup's family, nil for a window of none.
    func tie(of window: UInt32) -> FamilyTie?
    /// The window as users and scripts see it (`0x1a00003`, or sway's container id).
    func describe(_ window: UInt32) -> String
    /// The window a runtime popup given `window` is (X11: the client of that top-level, or
    /// that client; sway: that container), among the windows mapped now; or why there is none.
    func popupWindow(for window: UInt32) -> Result<UInt32, Refusal>
}

/// A window source that keeps its windows in a `WindowRoster`: it answers from there.
protocol RosterWindowSource: WindowSource {
    associatedtype RosterDetails
    var roster: WindowRoster<RosterDetails> { get }
}

extension RosterWindowSource {
    public func openInstances() -> [PopupInstance] { roster.openInstances() }
    public func windowAreas() -> [Area] { roster.windowAreas() }
    public func isPresent(_ window: UInt32) -> Bool { roster.isPresent(window) }
    public func familyMembers(of window: UInt32) -> [FamilyMember] { roster.familyMembers(of: window) }
    public func tie(of window: UInt32) -> FamilyTie? { roster.tie(of: window) }
    public func describe(_ window: UInt32) -> String { roster.describe(window) }
}

/// The windows that play a role in the configuration, kept by the X window tracker and by
/// sway's: each window's rectangle, properties and roles, stacking, and when each popup
/// opened, which a re-match (a new title, a reload) keeps. Logs popups opening and closing.
///
/// Keyed by the window the display stacks (an X top-level: the frame under a reparenting
/// window manager; a sway container); each entry names the window a dismissal closes and
/// the popup instance is (the X client; the same container).
public final class WindowRoster<Details> {
    public struct Entry {
        /// The window that is the popup: the one closed on a dismissal.
        public var window: UInt32
        public var rect: Rect
        public var properties: WindowMatch.Properties
        public var roles: WindowRoles
        public var openedAt: Int64
        /// What the display keeps beside (X: whether it takes WM_DELETE_WINDOW; sway: its pid).
        public var details: Details
        /// The window of the open popup this one belongs to (its dialog, menu, dropdown), or nil.
        public var family: UInt32?
        /// Why it belongs there (set with `family`).
        public var tie: FamilyTie?
    }

    /// How windows are written for people.
    public enum Naming: Sendable {
        /// X window ids: `0x1a00003`.
        case hex
        /// sway's container ids: `42`.
        case decimal
    }

    private(set) var model: ClickModel
    private let logger: Logger
    private let naming: Naming
    /// Popups opening and closing are logged at most this often (`LogPace`).
    var openingsPace = LogPace(perSecond: 50)
    /// The windows that play a role, by the key the display stacks them by.
    public private(set) var entries: [UInt32: Entry] = [:]
    /// Keys bottom to top; may hold windows with no entry (all the X root's children).
    /// Replaced whole here; a window created, gone or restacked goes through `stackOnTop`,
    /// `unstack` and `restack`, which cost the open instances nothing unless it is one.
    public var stacking: [UInt32] {
        get { order }
        set {
            order = newValue
            stacked.renumber(order, instances: popupInstances)
            openCache = nil
        }
    }
    private var order: [UInt32] = []
    /// The popup instances in the order of `order`, kept as windows are stacked and popups
    /// open and close (`openInstances`).
    private var stacked = StackedInstances()
    /// The key of each entry by its window (`entry(forWindow:)`).
    private var keyOfWindow: [UInt32: UInt32] = [:]
    /// The keys of the entries of each open instance's family, by the instance's window.
    private var familyKeys: [UInt32: Set<UInt32>] = [:]
    /// The same families' windows, rectangles and ties, kept as members come, move and go:
    /// `windowAreas` and `familyMembers` read them here rather than copying every member's
    /// entry (its properties' strings too) at every change of any.
    private var familyWindows: [UInt32: FamilyWindows] = [:]
    /// The keys of the entries that are popup instances of their own (not of a family).
    public private(set) var instanceKeys: Set<UInt32> = []
    /// The entries that are popups (their own instance or a family's window), as
    /// `openInstances` gives them: what it looks for in `stacking`.
    private var popupInstances: [UInt32: PopupInstance] = [:]
    /// What `openInstances` and `windowAreas` last answered, until something they depend on
    /// changes: a refresh after a batch of windows that play no role costs nothing here, and
    /// one after windows that are only anchors or exclusions does not look at the popups.
    private var openCache: [PopupInstance]?
    private var areasCache: [Area]?
    /// The anchor and exclusion areas of every entry, kept as entries come, move and go (a
    /// burst of excluded windows costs each one its own areas, not a pass over all), with
    /// the entry each belongs to and, by entry, where its areas are.
    private var ownAreas: [Area] = []
    private var ownAreaKeys: [UInt32] = []
    private var ownAreaSlots: [UInt32: [Int]] = [:]

    public init(model: ClickModel, naming: Naming, logger: Logger) {
        self.model = model
        self.naming = naming
        self.logger = logger
    }

    public var count: Int { entries.count }

    public subscript(key: UInt32) -> Entry? { entries[key] }

    /// Records what the window at `key` is now; a window with no role is forgotten. A window
    /// that stays the same popup keeps the time it opened. `roles` default to what the model
    /// makes of `properties`; a window of a popup's `family` counts as inside it, by `tie`.
    /// Returns whether anything the engine sees changed (roles, family, window or rectangle).
    @discardableResult
    public func update(_ key: UInt32, window: UInt32, rect: Rect, properties: WindowMatch.Properties, details: Details,
                       roles given: WindowRoles? = nil, family: UInt32? = nil, tie: FamilyTie = .transient,
                       now: Int64) -> Bool {
        let roles = given ?? model.roles(for: properties)
        guard !roles.isNone || family != nil else { return forget(key) }
        let before = entries[key]
        let still = before.flatMap { $0.window == window && $0.roles.popup == roles.popup ? $0 : nil }
        if let before { unindex(key, before) }
        let entry = Entry(window: window, rect: rect, properties: properties, roles: roles,
                          openedAt: still?.openedAt ?? now, details: details, family: family,
                          tie: family == nil ? nil : tie)
        entries[key] = entry
        index(key, entry)
        if let popup = roles.popup, still == nil {
            logOpening("popup opened", [
                "popup": "\(model.popups[Int(popup)].name)", "window": "\(describe(window))", "rect": "\(rect)",
            ])
        }
        // Once, when it begins: a burst of a program's menus must not write a line per window
        // at every change.
        if let family, before?.family != family, logger.logLevel <= .debug, let owner = popupOf(window: family) {
            logger.debug("window belongs to a popup", metadata: [
                "popup": "\(model.popups[Int(owner)].name)", "window": "\(describe(window))", "of": "\(describe(family))",
                "tie": "\(tie.rawValue)",
            ])
        }
        return before.map { $0.window != window || $0.roles != roles || $0.rect != rect || $0.family != family } ?? true
    }

    /// The popup whose open instance is `window`, nil when no such instance is open.
    public func popupOf(window: UInt32) -> Int32? {
        guard let entry = entry(forWindow: window), entry.family == nil else { return nil }
        return entry.roles.popup
    }

    /// The keys of the entries of the open instance `window`'s family.
    public func memberKeys(of window: UInt32) -> Set<UInt32> { familyKeys[window] ?? [] }

    /// The window at `key` moved or was resized.
    public func move(_ key: UInt32, to rect: Rect) -> Bool {
        guard let entry = entries[key] else { return false }
        entries[key]?.rect = rect
        if popupInstances[key] != nil {
            popupInstances[key]?.rect = rect
            stacked.set(key, popupInstances[key])
            openCache = nil
        }
        if let slots = ownAreaSlots[key] {
            for slot in slots { ownAreas[slot].rect = rect }
            areasCache = nil
        }
        if let family = entry.family {
            familyWindows[family]?.move(key, to: rect)
            areasCache = nil
        }
        return true
    }

    // MARK: - Stacking

    /// A window created on top of the others.
    public func stackOnTop(_ key: UInt32) {
        order.removeAll { $0 == key }
        order.append(key)
        stacked.stackOnTop(key, popupInstances[key])
        stackingMoved(key)
    }

    /// A window gone (destroyed, reparented away).
    public func unstack(_ key: UInt32) {
        order.removeAll { $0 == key }
        stacked.unstack(key)
        stackingMoved(key)
    }

    /// A window restacked just above `sibling` (0: at the bottom; one not known: on top).
    public func restack(_ key: UInt32, above sibling: UInt32) {
        guard let from = order.firstIndex(of: key) else { return }
        order.remove(at: from)
        let to = sibling == 0 ? 0 : order.firstIndex(of: sibling).map { $0 + 1 } ?? order.count
        order.insert(key, at: to)
        stacked.restacked(key, at: to, in: order, popupInstances)
        stackingMoved(key)
    }

    /// Where `key` is in the stacking, as a number that sorts as the stacking does (higher:
    /// above); nil for a window not in it. Looked up, not searched for.
    public func stackingPosition(of key: UInt32) -> Double? { stacked.stamp(of: key) }

    private func stackingMoved(_ key: UInt32) {
        if popupInstances[key] != nil { openCache = nil }
    }

    /// Forgets the window at `key` (gone, unmapped, no role any more); returns whether it had one.
    @discardableResult
    public func forget(_ key: UInt32) -> Bool {
        guard let entry = entries.removeValue(forKey: key) else { return false }
        unindex(key, entry)
        if let popup = entry.roles.popup {
            logOpening("popup closed", ["popup": "\(model.popups[Int(popup)].name)", "window": "\(describe(entry.window))"])
        }
        return true
    }

    /// A popup opened or closed, at the pace `openingsPace` allows; with how many such
    /// records were left out before it (`unlogged`).
    private func logOpening(_ message: Logger.Message, _ metadata: @autoclosure () -> Logger.Metadata) {
        guard logger.logLevel <= .info, let skipped = openingsPace.next() else { return }
        var metadata = metadata()
        if skipped > 0 { metadata["unlogged"] = "\(skipped) popups opened or closed before this one, in a burst" }
        logger.info(message, metadata: metadata)
    }

    /// A new configuration: the windows known are matched again by the properties last read.
    /// A window keeps the time it opened: the popup is the same window as before the reload.
    /// Families are the display's to place again.
    public func rematch(_ model: ClickModel) {
        // Forgotten under the old model, which their popup indices are of.
        for (key, entry) in entries {
            let roles = model.roles(for: entry.properties)
            if roles.isNone {
                forget(key)
            } else {
                unindex(key, entry)
                entries[key]?.roles = roles
                entries[key]?.family = nil
                entries[key]?.tie = nil
                index(key, entries[key]!)
            }
        }
        self.model = model
    }

    /// The entry whose window is `window`.
    public func entry(forWindow window: UInt32) -> Entry? { keyOfWindow[window].flatMap { entries[$0] } }

    /// Files an entry set at `key` where the questions about it look (and what their answers
    /// were built from goes stale); `unindex` takes it out again.
    private func index(_ key: UInt32, _ entry: Entry) {
        keyOfWindow[entry.window] = key
        if let family = entry.family {
            familyKeys[family, default: []].insert(key)
            familyWindows[family, default: FamilyWindows()].add(key, window: entry.window, rect: entry.rect, tie: entry.tie ?? .transient)
            areasCache = nil
        }
        if let popup = entry.roles.popup {
            popupInstances[key] = PopupInstance(popup: popup, rect: entry.rect, openedAt: entry.openedAt, id: .window(entry.window))
            stacked.set(key, popupInstances[key])
            if entry.family == nil { instanceKeys.insert(key) }
            // A popup's window is also what its family's areas and `popupOf` answer by.
            openCache = nil
            areasCache = nil
        }
        var slots: [Int] = []
        func add(_ kind: Area.Kind) {
            slots.append(ownAreas.count)
            ownAreas.append(Area(kind: kind, rect: entry.rect))
            ownAreaKeys.append(key)
        }
        for popup in entry.roles.anchors { add(.anchor(popup: popup)) }
        if entry.roles.excluded { add(.exclusion) }
        if !slots.isEmpty {
            ownAreaSlots[key] = slots
            areasCache = nil
        }
    }

    private func unindex(_ key: UInt32, _ entry: Entry) {
        if keyOfWindow[entry.window] == key { keyOfWindow[entry.window] = nil }
        if let family = entry.family {
            familyKeys[family]?.remove(key)
            if familyKeys[family]?.isEmpty == true { familyKeys[family] = nil }
            familyWindows[family]?.remove(key)
            if familyWindows[family]?.isEmpty == true { familyWindows[family] = nil }
            areasCache = nil
        }
        if popupInstances.removeValue(forKey: key) != nil {
            stacked.set(key, nil)
            openCache = nil
            areasCache = nil
        }
        instanceKeys.remove(key)
        if let slots = ownAreaSlots.removeValue(forKey: key) {
            // The last area fills each hole, from the highest down so the lower ones stay put.
            for slot in slots.sorted(by: >) {
                let last = ownAreas.count - 1
                if slot != last {
                    let moved = ownAreaKeys[last]
                    ownAreas[slot] = ownAreas[last]
                    ownAreaKeys[slot] = moved
                    if let i = ownAreaSlots[moved]?.firstIndex(of: last) { ownAreaSlots[moved]?[i] = slot }
                }
                ownAreas.removeLast()
                ownAreaKeys.removeLast()
            }
            areasCache = nil
        }
    }

    // MARK: - What a window source answers

    public func openInstances() -> [PopupInstance] {
        if let openCache { return openCache }
        var open: [PopupInstance] = []
        open.reserveCapacity(stacked.sorted.count)
        for (_, instance) in stacked.sorted { open.append(instance) }
        openCache = open
        return open
    }

    public func windowAreas() -> [Area] {
        if let areasCache { return areasCache }
        var areas = ownAreas
        for (family, members) in familyWindows {
            guard let popup = popupOf(window: family) else { continue }
            areas.reserveCapacity(areas.count + members.windows.count)
            for i in members.windows.indices {
                areas.append(Area(kind: .member(of: .window(family), popup: popup, window: members.windows[i]), rect: members.rects[i]))
            }
        }
        areasCache = areas
        return areas
    }

    public func isPresent(_ window: UInt32) -> Bool { entry(forWindow: window) != nil }

    public func familyMembers(of window: UInt32) -> [FamilyMember] {
        guard let members = familyWindows[window] else { return [] }
        return members.windows.indices.map { FamilyMember(window: members.windows[$0], tie: members.ties[$0]) }
            .sorted { $0.window < $1.window }
    }

    public func tie(of window: UInt32) -> FamilyTie? { entry(forWindow: window)?.tie }

    public func describe(_ window: UInt32) -> String {
        switch naming {
        case .hex: "0x" + String(window, radix: 16)
        case .decimal: "\(window)"
        }
    }
}

/// The windows of one open instance's family, their rectangles and ties, by the key of
/// their entries: in arrays, so that the areas of all of them are made without a lookup
/// each; a member that goes leaves its slot to the last one.
struct FamilyWindows {
    private(set) var windows: [UInt32] = []
    private(set) var rects: [Rect] = []
    private(set) var ties: [FamilyTie] = []
    private var keys: [UInt32] = []
    private var slots: [UInt32: Int] = [:]

    var isEmpty: Bool { keys.isEmpty }

    mutating func add(_ key: UInt32, window: UInt32, rect: Rect, tie: FamilyTie) {
        if let slot = slots[key] {
            (windows[slot], rects[slot], ties[slot]) = (window, rect, tie)
            return
        }
        slots[key] = keys.count
        keys.append(key)
        windows.append(window)
        rects.append(rect)
        ties.append(tie)
    }

    mutating func move(_ key: UInt32, to rect: Rect) {
        if let slot = slots[key] { rects[slot] = rect }
    }

    mutating func remove(_ key: UInt32) {
        guard let slot = slots.removeValue(forKey: key) else { return }
        let last = keys.count - 1
        if slot != last {
            (keys[slot], windows[slot], rects[slot], ties[slot]) = (keys[last], windows[last], rects[last], ties[last])
            slots[keys[slot]] = slot
        }
        keys.removeLast()
        windows.removeLast()
        rects.removeLast()
        ties.removeLast()
    }
}

/// The popup instances of the windows in a stacking order, kept in that order as windows are
/// stacked and instances come and go. Each key in the order has a stamp that sorts as the
/// order does: a window put on top takes the next whole number, one restacked between two the
/// number halfway (all are numbered again when halves run out), and the instances stay sorted
/// by their key's stamp. A burst of popup windows costs each one a binary search, not a pass
/// over every window on screen, and the answer is the instances as they lie.
struct StackedInstances {
    private var stamps: [UInt32: Double] = [:]
    private var top: Double = 0
    private(set) var sorted: [(stamp: Double, instance: PopupInstance)] = []

    func stamp(of key: UInt32) -> Double? { stamps[key] }

    /// A new order, numbered afresh.
    mutating func renumber(_ order: [UInt32], instances: [UInt32: PopupInstance]) {
        stamps = Dictionary(order.enumerated().map { ($1, Double($0)) }) { $1 }
        top = Double(order.count)
        sorted = instances.compactMap { key, instance in stamps[key].map { ($0, instance) } }.sorted { $0.stamp < $1.stamp }
    }

    mutating func stackOnTop(_ key: UInt32, _ instance: PopupInstance?) {
        unstack(key)
        top += 1
        stamps[key] = top
        if let instance { sorted.append((top, instance)) }
    }

    mutating func unstack(_ key: UInt32) {
        guard let stamp = stamps.removeValue(forKey: key) else { return }
        if let i = index(of: stamp) { sorted.remove(at: i) }
    }

    /// `key` was moved to `index` in `order`.
    mutating func restacked(_ key: UInt32, at index: Int, in order: [UInt32], _ instances: [UInt32: PopupInstance]) {
        unstack(key)
        let below = index > 0 ? stamps[order[index - 1]] : nil
        let above = index + 1 < order.count ? stamps[order[index + 1]] : nil
        let stamp = switch (below, above) {
        case let (below?, above?): (below + above) / 2
        case let (below?, nil): below + 1
        case let (nil, above?): above - 1
        case (nil, nil): top + 1
        }
        if let below, stamp <= below { return renumber(order, instances: instances) }
        if let above, stamp >= above { return renumber(order, instances: instances) }
        top = max(top, stamp)
        stamps[key] = stamp
        if let instance = instances[key] { sorted.insert((stamp, instance), at: lowerBound(stamp)) }
    }

    /// The instance at `key` is now `instance` (nil: none).
    mutating func set(_ key: UInt32, _ instance: PopupInstance?) {
        guard let stamp = stamps[key] else { return }
        switch (index(of: stamp), instance) {
        case let (i?, instance?): sorted[i].instance = instance
        case let (i?, nil): sorted.remove(at: i)
        case let (nil, instance?): sorted.insert((stamp, instance), at: lowerBound(stamp))
        case (nil, nil): break
        }
    }

    private func lowerBound(_ stamp: Double) -> Int {
        var (low, high) = (0, sorted.count)
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid].stamp < stamp { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func index(of stamp: Double) -> Int? {
        let i = lowerBound(stamp)
        return i < sorted.count && sorted[i].stamp == stamp ? i : nil
    }
}

/// A display without windows to match (a Wayland compositor other than sway): only `rect`
/// popups open.
public final class NoWindows: WindowSource {
    /// Why: what `DisplayAbilities.windowsUnavailable` says.
    let unavailable: String
    public init(unavailable: String) { self.unavailable = unavailable }
    public func openInstances() -> [PopupInstance] { [] }
    public func windowAreas() -> [Area] { [] }
    public func isPresent(_ window: UInt32) -> Bool { false }
    public func familyMembers(of window: UInt32) -> [FamilyMember] { [] }
    public func tie(of window: UInt32) -> FamilyTie? { nil }
    public func describe(_ window: UInt32) -> String { "\(window)" }
    public func popupWindow(for window: UInt32) -> Result<UInt32, Refusal> { .failure(Refusal(unavailable)) }
}
