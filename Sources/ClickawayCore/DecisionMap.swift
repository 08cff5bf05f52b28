/// What a press would do anywhere on the screen, as rectangles: what `clickawayctl show`
/// draws, from the same engine `hit` asks.
public struct DecisionCell: Sendable, Equatable {
    public var rect: Rect
    public var reason: Decision.Reason
    /// The popup hit and the dotted path of its region, when a popup is hit.
    public var popup: String?
    public var region: String?
    /// Whether a press here dismisses something.
    public var dismisses: Bool

    public init(rect: Rect, reason: Decision.Reason, popup: String?, region: String?, dismisses: Bool) {
        self.rect = rect
        self.reason = reason
        self.popup = popup
        self.region = region
        self.dismisses = dismisses
    }

    /// Everything but the place.
    public func decidesAlike(_ other: DecisionCell) -> Bool {
        reason == other.reason && popup == other.popup && region == other.region && dismisses == other.dismisses
    }
}

/// A region of an open popup on screen, for its outline and label.
public struct RegionOutline: Sendable, Equatable {
    public var path: String
    public var rect: Rect
    /// The rectangle grown by its slop: where it can be hit.
    public var hitArea: Rect
    public var passthrough: Bool
    public var redirects: Bool
    public var isPopup: Bool
    /// The popup's index in the model.
    public var popup: Int32 = 0
}

extension DecisionEngine {
    /// `screen` in cells decided once each (a press of `button` at `time`), exactly as `hit`
    /// decides every point in them; runs of cells decided alike in a row are merged.
    public func decisionMap(in screen: Rect, button: UInt8 = 1, time: Int64) -> [DecisionCell] {
        let (xs, ys) = grid(in: screen)
        var cells: [DecisionCell] = []
        for j in 0..<(ys.count - 1) {
            var run: DecisionCell?
            for i in 0..<(xs.count - 1) {
                let e = explain(button: button, x: Int32(xs[i]), y: Int32(ys[j]), time: time)
                let cell = DecisionCell(
                    rect: Rect(x: Int32(xs[i]), y: Int32(ys[j]), width: Int32(xs[i + 1] - xs[i]), height: Int32(ys[j + 1] - ys[j])),
                    reason: e.reason, popup: e.hitPopup, region: e.hitRegion, dismisses: !e.dismiss.isEmpty)
                if var r = run, r.decidesAlike(cell) {
                    r.rect.width += cell.rect.width
                    run = r
                } else {
                    if let r = run { cells.append(r) }
                    run = cell
                }
            }
            if let r = run { cells.append(r) }
        }
        return cells
    }

    /// Every region of the open popups, bottom popup first, each popup's root first.
    public func regionOutlines() -> [RegionOutline] {
        var outlines: [RegionOutline] = []
        let table = model.regions
        for o in open {
            let root = Int(table.roots[Int(o.popup)])
            let end = Int(o.popup) + 1 < table.roots.count ? Int(table.roots[Int(o.popup) + 1]) : table.nodes.count
            for n in root..<end {
                let node = table.nodes[n]
                let frame = n == root ? Rect(x: 0, y: 0, width: o.rect.width, height: o.rect.height) : node.frame
                let rect = frame.offsetBy(dx: o.rect.x, dy: o.rect.y)
                let grown = Bounds(rect).expanded(by: node.slop)
                outlines.append(RegionOutline(
                    path: table.paths[n], rect: rect,
                    hitArea: Rect(x: Int32(clamping: grown.minX), y: Int32(clamping: grown.minY),
                                  width: Int32(clamping: grown.maxX - grown.minX), height: Int32(clamping: grown.maxY - grown.minY)),
                    passthrough: node.flags.contains(.passthrough), redirects: node.redirect >= 0, isPopup: n == root,
                    popup: o.popup))
            }
        }
        return outlines
    }
}
