/// Why one press would be decided the way it is: what `clickawayctl hit` prints.
public struct Explanation: Sendable, Equatable {
    public var x: Int32
    public var y: Int32
    public var button: UInt8
    /// Name of the popup hit, and the dotted path of the region hit ("calendar.card").
    public var hitPopup: String?
    public var hitRegion: String?
    /// When a redirect moved the hit: the region that was under the pointer.
    public var redirectedFrom: String?
    /// When the point is on a window of the hit popup's family (its dialog, menu, dropdown)
    /// rather than on the popup's own window: that window.
    public var member: UInt32?
    /// Dotted paths from the popup's root down to the region hit.
    public var path: [String]
    /// Names of the popups this press dismisses, sorted.
    public var dismiss: [String]
    public var click: ClickOutcome
    public var reason: Decision.Reason
    /// Names of `trigger = "click"` popups that would close if the release lands outside too.
    public var awaitingRelease: [String]
}

extension DecisionEngine {
    /// Decides a press on a copy of the current state: the engine itself is not changed.
    public func explain(button: UInt8 = 1, x: Int32, y: Int32, time: Int64) -> Explanation {
        let scratch = DecisionEngine(model: model, outputs: outputs)
        scratch.setOpen(open)
        scratch.setWindowAreas(windowAreas)
        let d = scratch.press(button: button, x: x, y: y, time: time)
        let name = { (p: Int32) in self.model.popups[Int(p)].name }
        var redirectedFrom: String?
        if let hit = d.hit, let touched = open.first(where: { $0.id == hit.touched }) {
            let root = model.regions.roots[Int(touched.popup)]
            let under = model.regions.hitTest(root, x: Int64(x) - Int64(touched.rect.x), y: Int64(y) - Int64(touched.rect.y),
                                              rootSize: (touched.rect.width, touched.rect.height), followRedirects: false)
            if under >= 0, under != hit.region { redirectedFrom = model.regionPath(under) }
        }
        var member: UInt32?
        if let hit = d.hit, case .window(let window) = hit.touched, !open.contains(where: { $0.id == hit.touched }) {
            member = window
        }
        let waiting = scratch.open.filter { scratch.pending.contains($0.id) }.map { name($0.popup) }.sorted()
        return Explanation(
            x: x, y: y, button: button,
            hitPopup: d.hit.map { name($0.popup) },
            hitRegion: d.hit.map { model.regionPath($0.region) },
            redirectedFrom: redirectedFrom, member: member,
            path: d.hit.map { model.regionAncestry($0.region) } ?? [],
            dismiss: scratch.dismissed.map { name($0.popup) }.sorted(),
            click: d.click, reason: d.reason, awaitingRelease: waiting)
    }
}
