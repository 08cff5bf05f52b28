/// Which open popup: the window a window popup is (an X window, sway's container id), or
/// a `rect` popup opened by command (numbered by the daemon, kept across reloads).
public enum InstanceID: Hashable, Sendable {
    case window(UInt32)
    case rect(UInt64)

    /// The window, for a window popup.
    public var window: UInt32? {
        if case .window(let window) = self { return window }
        return nil
    }
}

/// One open popup: a window that matches a popup's `window`, or a `rect` popup opened by command.
public struct PopupInstance: Sendable, Equatable {
    /// Index of the popup in `ClickModel.popups`.
    public var popup: Int32
    /// On screen, absolute.
    public var rect: Rect
    /// Milliseconds on the same clock as the pointer events' times.
    public var openedAt: Int64
    public var id: InstanceID

    public init(popup: Int32, rect: Rect, openedAt: Int64, id: InstanceID) {
        self.popup = popup
        self.rect = rect
        self.openedAt = openedAt
        self.id = id
    }
}

/// A screen area that counts as inside: an anchor of a popup, an exclusion, or a window of
/// an open popup's family.
public struct Area: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case anchor(popup: Int32)
        case exclusion
        /// A window that belongs to the open instance `of` (its dialog, menu, dropdown): a
        /// click on it is a click inside that instance, through `window`.
        case member(of: InstanceID, popup: Int32, window: UInt32)
    }
    public var kind: Kind
    public var rect: Rect
    public init(kind: Kind, rect: Rect) {
        self.kind = kind
        self.rect = rect
    }
}

public struct Hit: Sendable, Equatable {
    /// `PopupInstance.id` of the popup that was hit.
    public var instance: InstanceID
    public var popup: Int32
    /// Region node hit (after redirect).
    public var region: Int32
    /// The instance physically under the pointer: differs from `instance` when a redirect
    /// sends the hit to another popup. Both count as inside.
    public var touched: InstanceID
}

public struct Decision: Sendable, Equatable {
    public enum Reason: String, Sendable {
        /// Inside an open popup's region tree.
        case inside
        /// On an anchor of an open popup.
        case anchor
        /// On an exclusion: nothing is dismissed.
        case exclusion
        /// Outside everything.
        case outside
        /// Another button of this physical click is already down.
        case clickInProgress = "click-in-progress"
        /// The same event was decided before.
        case duplicate
    }

    public var click: ClickOutcome
    public var reason: Reason
    public var hit: Hit?
    /// How many instances this decision dismissed; they are in `DecisionEngine.dismissed`.
    public var dismissCount: Int
    /// Some `trigger = "click"` popups wait for the release to decide.
    public var awaitsRelease: Bool

    static func passing(_ reason: Reason) -> Decision {
        Decision(click: .pass, reason: reason, hit: nil, dismissCount: 0, awaitsRelease: false)
    }
}

/// What the press path needs of a popup (`ClickModel.traits`), as plain values: no strings
/// or arrays to retain. Made here, beside the code that reads it.
struct PopupTraits: Sendable {
    var buttons: ButtonSet
    var graceMs: Int64
    var clickTrigger: Bool
    var swallow: Bool
    /// `inside_click = "dismiss"`.
    var dismissedFromInside: Bool

    init(_ spec: PopupSpec) {
        buttons = spec.buttons
        graceMs = spec.graceMs
        clickTrigger = spec.trigger == .click
        swallow = spec.outsideClick == .swallow
        dismissedFromInside = spec.insideClick == .dismiss
    }
}

/// Turns each pointer event into one decision, from state already in memory.
///
/// `press` and `release` never allocate: every buffer they touch is sized when the set of
/// open popups changes. Dismissed instances leave `open` at once, so a second click cannot
/// dismiss them again while their windows are still closing.
public final class DecisionEngine {
    public let model: ClickModel
    // All mutable state in one struct: a decision is one exclusive access to it rather
    // than one for every field it touches, and that access has no runtime check either (a
    // press would pay for it): EngineState's methods compute and call out to nothing, so
    // no access to it can overlap another. bench/callgrind, inside click: 112 instructions a
    // click without it (BENCHMARKS.md, the daemon's part of an inside click).
    @exclusivity(unchecked) private(set) var state: EngineState

    public init(model: ClickModel, outputs: [String: Rect] = [:]) {
        self.model = model
        state = EngineState(model: model)
        setOutputs(outputs)
    }

    /// An engine for a model that gained or lost popups between a press and its release
    /// (a runtime popup registered): the click in progress goes on as if nothing changed.
    public convenience init(model: ClickModel, continuing previous: DecisionEngine) {
        self.init(model: model, outputs: previous.outputs)
        state.continueClick(of: previous.state)
    }

    /// Back to front: the last one is on top.
    public var open: [PopupInstance] { state.open }
    /// The instances dismissed by the last decision, in stacking order (bottom first).
    public var dismissed: [PopupInstance] { state.dismissed }
    /// Ids of the `trigger = "click"` instances the held press was outside of: they close
    /// if the release lands outside them too.
    public var pending: [InstanceID] { state.pending }
    /// Rect anchors and exclusions from the config, resolved against the outputs.
    public var configAreas: [Area] { state.configAreas }
    /// Anchors and exclusions that are windows, kept current by the backend.
    public var windowAreas: [Area] { state.windowAreas }
    /// Output names → rectangles, for config rectangles that name an output.
    public private(set) var outputs: [String: Rect] = [:]

    // MARK: - State changes (may allocate)

    public func setOutputs(_ outputs: [String: Rect]) {
        self.outputs = outputs
        state.configAreas = model.rectAreas.compactMap { area in
            ClickModel.screenRect(area.rect, output: area.output, outputs: outputs).map { Area(kind: area.kind, rect: $0) }
        }
    }

    public func setWindowAreas(_ areas: [Area]) { state.windowAreas = areas }

    /// Replaces the open popups (back to front).
    public func setOpen(_ instances: [PopupInstance]) {
        state.replaceOpen(instances)
    }

    /// Opens an instance on top of the others.
    public func open(_ instance: PopupInstance) {
        state.openOnTop(instance)
    }

    // MARK: - Decisions (no allocation)

    /// A button press. Exactly one decision per physical click: a repeat of the same event
    /// is recognised and decides nothing.
    public func press(button: UInt8, x: Int32, y: Int32, time: Int64) -> Decision {
        state.press(button: button, x: x, y: y, time: time)
    }

    /// The release of a press. Dismisses the `trigger = "click"` popups that the press was
    /// outside of, if the release is outside them too. nil when no press waits on it.
    public func release(button: UInt8, x: Int32, y: Int32, time: Int64) -> Decision? {
        state.release(button: button, x: x, y: y, time: time)
    }

    /// The topmost region hit among the open popups, front to back, as UIKit's window would.
    /// A redirect to another popup's region counts as a hit on that popup when it is open.
    public func hitTest(x: Int32, y: Int32) -> Hit? { state.hitTest(x: x, y: y) }
}

struct EngineState {
    let regions: RegionTable
    let traits: [PopupTraits]
    let parentOf: [Int32]

    var open: [PopupInstance] = []
    var dismissed: [PopupInstance] = []
    var configAreas: [Area] = []
    var windowAreas: [Area] = []
    var pending: [InstanceID] = []

    // Per-decision scratch, sized with `open`.
    private var inside: [Bool] = []
    private var marked: [UInt8] = []
    private var openCount: [Int32]
    private var dismissedCount: [Int32]
    private var buttonDown: UInt8 = 0
    private var lastPress: (button: UInt8, x: Int32, y: Int32, time: Int64)?

    private static let markDismiss: UInt8 = 1
    private static let markPending: UInt8 = 2

    init(model: ClickModel) {
        regions = model.regions
        traits = model.traits
        parentOf = model.parentOf
        openCount = [Int32](repeating: 0, count: model.popups.count)
        dismissedCount = openCount
    }

    /// Takes over the press in progress: which button is down, the last press, and the
    /// instances that wait for its release.
    mutating func continueClick(of other: EngineState) {
        buttonDown = other.buttonDown
        lastPress = other.lastPress
        pending = other.pending
    }

    mutating func replaceOpen(_ instances: [PopupInstance]) {
        uncountOpen()
        open = instances
        resized()
    }

    mutating func openOnTop(_ instance: PopupInstance) {
        uncountOpen()
        open.removeAll { $0.id == instance.id }
        open.append(instance)
        resized()
    }

    /// The counts by popup are kept for the popups open before and after a change only: a
    /// model may have 74,000 popups, a settle changes a few.
    private mutating func uncountOpen() {
        for o in open { openCount[Int(o.popup)] = 0 }
    }

    private mutating func resized() {
        for o in open { openCount[Int(o.popup)] += 1 }
        let n = open.count
        if inside.count != n {
            inside = [Bool](repeating: false, count: n)
            marked = [UInt8](repeating: 0, count: n)
        }
        dismissed.reserveCapacity(n)
        pending.reserveCapacity(n)
    }

    mutating func press(button: UInt8, x: Int32, y: Int32, time: Int64) -> Decision {
        if !dismissed.isEmpty { dismissed.removeAll(keepingCapacity: true) }
        if let last = lastPress, last.button == button, last.x == x, last.y == y, last.time == time {
            return .passing(.duplicate)
        }
        if buttonDown != 0 { return .passing(.clickInProgress) }
        lastPress = (button, x, y, time)
        if !pending.isEmpty { pending.removeAll(keepingCapacity: true) }

        var decision = classify(x: x, y: y)
        if decision.reason == .exclusion { return decision }

        var count = 0
        for i in open.indices {
            marked[i] = 0
            let o = open[i]
            let spec = traits[Int(o.popup)]
            guard !inside[i] || dismissedByItsOwnClick(i, decision.hit), spec.buttons.contains(button),
                  time - o.openedAt >= spec.graceMs else { continue }
            if !spec.clickTrigger {
                marked[i] = Self.markDismiss
                count += 1
            } else {
                marked[i] = Self.markPending
                pending.append(o.id)
            }
        }
        if count > 0 { cascade() }
        let outcome = outcome(waiting: !pending.isEmpty)
        if !pending.isEmpty { buttonDown = button }
        collectDismissed()
        decision.dismissCount = dismissed.count
        decision.awaitsRelease = !pending.isEmpty
        decision.click = decision.reason == .outside ? outcome : .pass
        return decision
    }

    mutating func release(button: UInt8, x: Int32, y: Int32, time: Int64) -> Decision? {
        if !dismissed.isEmpty { dismissed.removeAll(keepingCapacity: true) }
        guard buttonDown != 0, button == buttonDown else { return nil }
        buttonDown = 0
        var decision = classify(x: x, y: y)
        if decision.reason == .exclusion {
            pending.removeAll(keepingCapacity: true)
            return decision
        }
        var count = 0
        for i in open.indices {
            marked[i] = 0
            if (!inside[i] || dismissedByItsOwnClick(i, decision.hit)) && pending.contains(open[i].id) {
                marked[i] = Self.markDismiss
                count += 1
            }
        }
        pending.removeAll(keepingCapacity: true)
        if count > 0 { cascade() }
        let outcome = outcome(waiting: false)
        collectDismissed()
        decision.dismissCount = dismissed.count
        decision.click = decision.reason == .outside && count > 0 ? outcome : .pass
        return decision
    }

    /// Whether a press here decides `pass` with nothing dismissed and nothing pending,
    /// whatever the button and however young the popups: an exclusion, or a point that
    /// counts as inside every open popup and is on none that a click on it dismisses.
    mutating func decidesNothing(x: Int32, y: Int32) -> Bool {
        let decision = classify(x: x, y: y)
        return decision.reason == .exclusion
            || (!inside.contains(false) && !open.indices.contains { dismissedByItsOwnClick($0, decision.hit) })
    }

    /// Whether the click hit open instance `i` itself (not its anchor or a popup nested in it)
    /// and that dismisses it: `inside_click = "dismiss"`.
    private func dismissedByItsOwnClick(_ i: Int, _ hit: Hit?) -> Bool {
        guard let hit, traits[Int(open[i].popup)].dismissedFromInside else { return false }
        return hit.instance == open[i].id || hit.touched == open[i].id
    }

    /// Hit-tests the point and marks in `inside` every open instance it counts as inside of.
    private mutating func classify(x: Int32, y: Int32) -> Decision {
        for i in inside.indices { inside[i] = false }
        var decision = Decision.passing(.outside)
        for a in windowAreas where a.kind == .exclusion && a.rect.contains(x: x, y: y) {
            return .passing(.exclusion)
        }
        for a in configAreas where a.kind == .exclusion && a.rect.contains(x: x, y: y) {
            return .passing(.exclusion)
        }
        if let hit = hitTest(x: x, y: y) {
            decision.hit = hit
            decision.reason = .inside
            for i in open.indices where open[i].id == hit.instance || open[i].id == hit.touched { inside[i] = true }
            markAncestorsInside(of: hit.popup)
            if hit.touched != hit.instance, let t = open.firstIndex(where: { $0.id == hit.touched }) {
                markAncestorsInside(of: open[t].popup)
            }
        }
        for a in windowAreas { markMember(a, x: x, y: y, decision: &decision) }
        for a in configAreas { markAnchor(a, x: x, y: y, decision: &decision) }
        for a in windowAreas { markAnchor(a, x: x, y: y, decision: &decision) }
        return decision
    }

    @inline(__always)
    private mutating func markAnchor(_ a: Area, x: Int32, y: Int32, decision: inout Decision) {
        guard case .anchor(let popup) = a.kind, openCount[Int(popup)] > 0, a.rect.contains(x: x, y: y) else { return }
        for i in open.indices where open[i].popup == popup { inside[i] = true }
        markAncestorsInside(of: popup)
        if decision.reason == .outside { decision.reason = .anchor }
    }

    /// A click on a window of an open instance's family is inside that instance (and its
    /// ancestors); the hit names the instance, touched through the member window.
    @inline(__always)
    private mutating func markMember(_ a: Area, x: Int32, y: Int32, decision: inout Decision) {
        guard case .member(let owner, let popup, let window) = a.kind, a.rect.contains(x: x, y: y) else { return }
        var found = false
        for i in open.indices where open[i].id == owner {
            inside[i] = true
            found = true
        }
        guard found else { return }
        markAncestorsInside(of: popup)
        if decision.hit == nil {
            decision.hit = Hit(instance: owner, popup: popup, region: regions.roots[Int(popup)], touched: .window(window))
            decision.reason = .inside
        }
    }

    /// A click inside a child popup is inside its parent, grandparent, ... too.
    private mutating func markAncestorsInside(of popup: Int32) {
        var p = parentOf[Int(popup)]
        var guardDepth = parentOf.count
        while p >= 0, guardDepth > 0 {
            for i in open.indices where open[i].popup == p { inside[i] = true }
            p = parentOf[Int(p)]
            guardDepth -= 1
        }
    }

    /// Closing a parent closes its children: an open child whose parent popup has every
    /// open instance dismissed goes too, at any depth.
    private mutating func cascade() {
        var changed = true
        while changed {
            changed = false
            for o in open { dismissedCount[Int(o.popup)] = 0 }
            for i in open.indices where marked[i] == Self.markDismiss { dismissedCount[Int(open[i].popup)] += 1 }
            for i in open.indices where marked[i] != Self.markDismiss {
                let parent = parentOf[Int(open[i].popup)]
                if parent >= 0, openCount[Int(parent)] > 0, dismissedCount[Int(parent)] == openCount[Int(parent)] {
                    marked[i] = Self.markDismiss
                    changed = true
                }
            }
        }
    }

    /// `swallow` wins when the dismissed (or pending) popups disagree.
    private func outcome(waiting: Bool) -> ClickOutcome {
        var any = false
        for i in open.indices where marked[i] == Self.markDismiss || (waiting && marked[i] == Self.markPending) {
            any = true
            if traits[Int(open[i].popup)].swallow { return .swallow }
        }
        return any ? .replay : .pass
    }

    /// Moves the marked instances from `open` to `dismissed`, in place.
    private mutating func collectDismissed() {
        var write = 0
        for read in open.indices {
            if marked[read] == Self.markDismiss {
                dismissed.append(open[read])
                openCount[Int(open[read].popup)] -= 1
            } else {
                open[write] = open[read]
                marked[write] = marked[read]
                write += 1
            }
        }
        if write != open.count {
            open.removeLast(open.count - write)
            inside.removeLast(inside.count - write)
            marked.removeLast(marked.count - write)
        }
    }

    func hitTest(x: Int32, y: Int32) -> Hit? {
        var i = open.count - 1
        while i >= 0 {
            let o = open[i]
            let root = regions.roots[Int(o.popup)]
            let (rx, ry) = (Int64(x) - Int64(o.rect.x), Int64(y) - Int64(o.rect.y))
            let size = (o.rect.width, o.rect.height)
            let node = regions.hitTest(root, x: rx, y: ry, rootSize: size)
            if node >= 0 {
                let target = regions.nodes[Int(node)].popup
                if target == o.popup { return Hit(instance: o.id, popup: o.popup, region: node, touched: o.id) }
                if let t = open.lastIndex(where: { $0.popup == target }) {
                    return Hit(instance: open[t].id, popup: target, region: node, touched: o.id)
                }
                // The redirect's popup is closed: the hit stays on the region that was touched.
                let own = regions.hitTest(root, x: rx, y: ry, rootSize: size, followRedirects: false)
                return Hit(instance: o.id, popup: o.popup, region: own, touched: o.id)
            }
            i -= 1
        }
        return nil
    }
}
