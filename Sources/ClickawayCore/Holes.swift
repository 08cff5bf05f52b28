/// Where clicks need not reach the daemon: the holes in the X11 shield and in the Wayland overlay.
extension DecisionEngine {
    /// The parts of `screen` where a press of any button, at any time, decides `pass` with
    /// nothing dismissed (an exclusion, or inside every open popup at once), as disjoint
    /// rectangles. Everywhere else a click may dismiss something and must reach the daemon.
    ///
    /// Exact: every test the engine makes is a rectangle containment, so its answer is the
    /// same over each cell of the grid drawn through every rectangle's edges. One point per
    /// cell is decided, and the cells merged back into rectangles.
    public func holes(in screen: Rect) -> [Rect] {
        guard !open.isEmpty else { return [screen] }
        let (gridX, gridY) = grid(in: screen)

        var scratch = state
        var holes: [Rect] = []
        // Rectangles still growing downwards, by their x span.
        var growing: [Span: Rect] = [:]
        for j in 0..<(gridY.count - 1) {
            var spans: [Span] = []
            var runStart: Int64?
            for i in 0..<(gridX.count - 1) {
                let isHole = scratch.decidesNothing(x: Int32(gridX[i]), y: Int32(gridY[j]))
                if isHole, runStart == nil { runStart = gridX[i] }
                if !isHole, let start = runStart {
                    spans.append(Span(from: start, to: gridX[i]))
                    runStart = nil
                }
            }
            if let start = runStart { spans.append(Span(from: start, to: gridX[gridX.count - 1])) }
            let height = Int32(gridY[j + 1] - gridY[j])
            var next: [Span: Rect] = [:]
            for span in spans {
                if var r = growing.removeValue(forKey: span) {
                    r.height += height
                    next[span] = r
                } else {
                    next[span] = Rect(x: Int32(span.from), y: Int32(gridY[j]), width: Int32(span.to - span.from), height: height)
                }
            }
            holes += growing.values
            growing = next
        }
        holes += growing.values
        return holes.sorted { ($0.y, $0.x) < ($1.y, $1.x) }
    }

    /// `screen` cut along every edge a decision depends on (the open popups' regions with
    /// their slop, anchors, exclusions): every point of one cell is decided alike.
    func grid(in screen: Rect) -> (xs: [Int64], ys: [Int64]) {
        var xs: [Int64] = [Int64(screen.x), Int64(screen.x) + Int64(screen.width)]
        var ys: [Int64] = [Int64(screen.y), Int64(screen.y) + Int64(screen.height)]
        for o in open { model.regions.edges(popup: o.popup, at: o.rect, xs: &xs, ys: &ys) }
        for a in configAreas + windowAreas {
            let b = Bounds(a.rect)
            xs += [b.minX, b.maxX]
            ys += [b.minY, b.maxY]
        }
        return (Self.cuts(xs, from: xs[0], to: xs[1]), Self.cuts(ys, from: ys[0], to: ys[1]))
    }

    private struct Span: Hashable {
        var from: Int64
        var to: Int64
    }

    /// The distinct cut lines within [low, high], sorted, ends included.
    private static func cuts(_ values: [Int64], from low: Int64, to high: Int64) -> [Int64] {
        Array(Set(values.map { min(max($0, low), high) })).sorted()
    }
}
