/// Where clicks need not reach the daemon: the holes in the X11 shield and in the Wayland overlay.
extension DecisionEngine {
    /// The parts of `screen` where a press of any button, at any time, decides `pass` with
    /// nothing dismissed (an exclusion, or inside every open popup at once), as disjoint
    /// rectangles. Everywhere else a click may dismiss something and must reach the daemon.
    ///
    /// Exact, and in proportion to what can be a hole rather than to the screen: exclusions
    /// are holes whole; any other hole is inside every open instance at once, which bounds
    /// where to look (`EngineState.whereEveryInstanceCanBeInside`). There every test the
    /// engine makes is a rectangle containment, so its answer is the same over each cell of
    /// the grid drawn through the edges within: one point per cell is decided. A row is cut
    /// across by the popups' and the configuration's edges and by those of the window areas
    /// in that row alone (a family's windows there are a span or two), so that a thousand
    /// staggered menus of one program cost a few cells a row, not a thousand. Row by row,
    /// the exclusions and those cells are merged into spans, and the spans into rectangles.
    public func holes(in screen: Rect) -> [Rect] {
        guard !open.isEmpty else { return [screen] }
        let whole = Bounds(screen)
        var exclusions: [Bounds] = []
        for areas in [configAreas, windowAreas] {
            for a in areas where a.kind == .exclusion {
                let e = Bounds(a.rect).intersection(whole)
                if !e.isEmpty { exclusions.append(e) }
            }
        }
        exclusions.sort { $0.minY < $1.minY }
        var ys = [whole.minY, whole.maxY]
        for e in exclusions {
            ys.append(e.minY)
            ys.append(e.maxY)
        }
        // Where a hole may be inside every instance: the rows it cuts, and the columns that
        // cut every row there (window areas add their own, row by row).
        var columns: [Int64] = []
        let inside = state.whereEveryInstanceCanBeInside().intersection(whole)
        if !inside.isEmpty {
            let (xs, gridYs) = grid(in: screen, windowColumns: false)
            columns = Self.cuts(xs, from: inside.minX, to: inside.maxX)
            ys += Self.cuts(gridYs, from: inside.minY, to: inside.maxY)
        }
        ys = Self.cuts(ys, from: whole.minY, to: whole.maxY)

        var scratch = state
        // A cell is decided against the window areas across its row only (`RowAreas`);
        // with no open popup dismissed by a click inside it, which member window a click
        // touches decides nothing here, and a family's windows across a row are their spans.
        var rowAreas = inside.isEmpty ? nil
            : RowAreas(windowAreas, spansOfFamilies: !open.contains { state.traits[Int($0.popup)].dismissedFromInside })
        var cellXs: [Int64] = []
        var holes: [Rect] = []
        // Rectangles still growing downwards, by their x span.
        var growing: [Span: Rect] = [:]
        var active: [Bounds] = []
        var nextExclusion = 0
        for j in 0..<(ys.count - 1) {
            let (top, bottom) = (ys[j], ys[j + 1])
            // Every exclusion edge is a row edge: an exclusion covers a row whole or not at all.
            active.removeAll { $0.maxY <= top }
            while nextExclusion < exclusions.count, exclusions[nextExclusion].minY <= top {
                active.append(exclusions[nextExclusion])
                nextExclusion += 1
            }
            var pieces = active.map { Span(from: $0.minX, to: $0.maxX) }
            if inside.minY <= top, bottom <= inside.maxY, let areas = rowAreas?.at(top) {
                scratch.windowAreas = areas
                // The row's columns: `columns` and its areas' edges, in one buffer kept
                // from row to row.
                cellXs.removeAll(keepingCapacity: true)
                cellXs += columns
                for a in scratch.windowAreas {
                    let b = Bounds(a.rect)
                    cellXs.append(min(max(b.minX, inside.minX), inside.maxX))
                    cellXs.append(min(max(b.maxX, inside.minX), inside.maxX))
                }
                Self.sortDistinct(&cellXs)
                for i in 0..<(cellXs.count - 1) where scratch.decidesNothing(x: Int32(cellXs[i]), y: Int32(top)) {
                    pieces.append(Span(from: cellXs[i], to: cellXs[i + 1]))
                }
            }
            let height = Int32(bottom - top)
            var next: [Span: Rect] = [:]
            for span in Self.merged(pieces) {
                if var r = growing.removeValue(forKey: span) {
                    r.height += height
                    next[span] = r
                } else {
                    next[span] = Rect(x: Int32(span.from), y: Int32(top), width: Int32(span.to - span.from), height: height)
                }
            }
            holes += growing.values
            growing = next
        }
        holes += growing.values
        return holes.sorted { ($0.y, $0.x) < ($1.y, $1.x) }
    }

    /// `screen` cut along every edge a decision depends on (the open popups' regions with
    /// their slop, anchors, exclusions): every point of one cell is decided alike. Without
    /// `windowColumns`, the window areas cut rows only.
    func grid(in screen: Rect, windowColumns: Bool = true) -> (xs: [Int64], ys: [Int64]) {
        var xs: [Int64] = [Int64(screen.x), Int64(screen.x) + Int64(screen.width)]
        var ys: [Int64] = [Int64(screen.y), Int64(screen.y) + Int64(screen.height)]
        for o in open { model.regions.edges(popup: o.popup, at: o.rect, xs: &xs, ys: &ys) }
        for a in configAreas {
            let b = Bounds(a.rect)
            xs.append(b.minX)
            xs.append(b.maxX)
            ys.append(b.minY)
            ys.append(b.maxY)
        }
        for a in windowAreas {
            let b = Bounds(a.rect)
            if windowColumns {
                xs.append(b.minX)
                xs.append(b.maxX)
            }
            ys.append(b.minY)
            ys.append(b.maxY)
        }
        return (Self.cuts(xs, from: xs[0], to: xs[1]), Self.cuts(ys, from: ys[0], to: ys[1]))
    }

    /// The window areas as the rows of the grid see them, row after row downwards (`at(_:)`):
    /// the areas that hold points of a row (every area edge is a row edge, so an area holds
    /// all of a row's height or none of it), in their order. With `spansOfFamilies`, the
    /// windows of one family (the same instance and popup) are their merged spans along the
    /// row instead, each named by the family's first window: a thousand overlapping menus of
    /// one program are a span or two, and each cell of the row is decided against those
    /// rather than against every menu. Exact when which member is touched cannot matter (no
    /// open popup is dismissed by a click inside it): a point is in a span exactly when it is
    /// in one of the family's windows. A family is swept down the rows: how many of its
    /// windows cover each column between its windows' x edges changes only where a window
    /// starts or ends, so a row costs the family's columns, not its windows.
    struct RowAreas {
        private let all: [Area]
        private var others: [(area: Area, bounds: Bounds)] = []
        private var families: [FamilySweep] = []

        init(_ all: [Area], spansOfFamilies: Bool) {
            self.all = all
            var index: [InstanceID: [Int]] = [:]
            var last: (owner: InstanceID, popup: Int32, family: Int)?
            var windows: [[Bounds]] = []
            for a in all {
                let b = Bounds(a.rect)
                guard !b.isEmpty else { continue }
                guard spansOfFamilies, case .member(let owner, let popup, let window) = a.kind else {
                    others.append((a, b))
                    continue
                }
                let family: Int
                if let last, last.owner == owner, last.popup == popup {
                    family = last.family
                } else if let known = index[owner]?.first(where: { families[$0].popup == popup }) {
                    family = known
                } else {
                    family = families.count
                    index[owner, default: []].append(family)
                    families.append(FamilySweep(owner: owner, popup: popup, window: window))
                    windows.append([])
                }
                last = (owner, popup, family)
                windows[family].append(b)
            }
            for i in families.indices { families[i].start(windows[i]) }
        }

        /// The areas across the row at `y`; each call's `y` below the last one's.
        mutating func at(_ y: Int64) -> [Area] {
            var kept: [Area] = []
            for (a, b) in others where b.minY <= y && y < b.maxY { kept.append(a) }
            var exactOnly = false
            for i in families.indices {
                families[i].advance(to: y)
                guard !exactOnly else { continue }
                exactOnly = !families[i].appendSpans(at: y, to: &kept)
            }
            return exactOnly ? exact(y) : kept
        }

        /// The areas across the row as they are: spans past the ends of 32 bits are left as
        /// the windows they came from.
        private func exact(_ y: Int64) -> [Area] {
            all.filter { a in
                let b = Bounds(a.rect)
                return !b.isEmpty && b.minY <= y && y < b.maxY
            }
        }
    }

    /// One family's windows down the rows: the windows holding the column from `xs[i]` to
    /// `xs[i + 1]` of the row reached are the sum of `steps[0...i]`; a window counts from the
    /// row of its top edge to the row of its bottom edge.
    private struct FamilySweep {
        let owner: InstanceID
        let popup: Int32
        let window: UInt32
        private var xs: [Int64] = []
        /// The rows where the count changes (the windows' top and bottom edges), and at each,
        /// `changes[firstChange[i]..<firstChange[i + 1]]`: +1 over the columns `from..<to` at a
        /// window's top, -1 at its bottom.
        private var ys: [Int64] = []
        private var firstChange: [Int] = []
        private var changes: [(from: Int, to: Int, by: Int32)] = []
        /// The rows counted so far.
        private var reached = 0
        private var steps: [Int32] = []

        init(owner: InstanceID, popup: Int32, window: UInt32) {
            (self.owner, self.popup, self.window) = (owner, popup, window)
        }

        /// The changes put in order of their rows by counting, not sorting: a burst's
        /// thousands of windows share a few dozen edges.
        mutating func start(_ windows: [Bounds]) {
            var edges: (xs: [Int64], ys: [Int64]) = ([], [])
            edges.xs.reserveCapacity(2 * windows.count)
            edges.ys.reserveCapacity(2 * windows.count)
            for b in windows {
                edges.xs.append(b.minX)
                edges.xs.append(b.maxX)
                edges.ys.append(b.minY)
                edges.ys.append(b.maxY)
            }
            // The windows' edges as indices into `xs` and `ys`, each window's two in turn.
            let columns, rows: [Int]
            (xs, columns) = DecisionEngine.distinctSorted(edges.xs)
            (ys, rows) = DecisionEngine.distinctSorted(edges.ys)
            firstChange = [Int](repeating: 0, count: ys.count + 1)
            for row in rows { firstChange[row + 1] += 1 }
            for i in ys.indices { firstChange[i + 1] += firstChange[i] }
            var next = firstChange
            changes = Array(repeating: (0, 0, 0), count: rows.count)
            for k in stride(from: 0, to: rows.count, by: 2) {
                let (from, to) = (columns[k], columns[k + 1])
                changes[next[rows[k]]] = (from, to, 1)
                next[rows[k]] += 1
                changes[next[rows[k + 1]]] = (from, to, -1)
                next[rows[k + 1]] += 1
            }
            steps = [Int32](repeating: 0, count: xs.count)
        }

        /// Counts every window whose top or bottom edge is at or above `y`.
        mutating func advance(to y: Int64) {
            while reached < ys.count, ys[reached] <= y {
                for c in changes[firstChange[reached]..<firstChange[reached + 1]] {
                    steps[c.from] += c.by
                    steps[c.to] -= c.by
                }
                reached += 1
            }
        }

        /// The family's spans along the row at `y` (top edge) as areas one pixel high; false
        /// when one is past the ends of 32 bits.
        func appendSpans(at y: Int64, to areas: inout [Area]) -> Bool {
            guard let top = Int32(exactly: y) else { return false }
            var windows: Int32 = 0
            var from: Int64?
            for i in steps.indices {
                windows += steps[i]
                if windows > 0, from == nil { from = xs[i] }
                guard windows == 0, let x = from else { continue }
                guard let left = Int32(exactly: x), let width = Int32(exactly: xs[i] - x) else { return false }
                areas.append(Area(kind: .member(of: owner, popup: popup, window: window),
                                  rect: Rect(x: left, y: top, width: width, height: 1)))
                from = nil
            }
            return true
        }
    }

    private struct Span: Hashable {
        var from: Int64
        var to: Int64
    }

    /// The distinct cut lines within [low, high], sorted, ends included.
    private static func cuts(_ values: [Int64], from low: Int64, to high: Int64) -> [Int64] {
        distinctSorted(values.map { min(max($0, low), high) } + [low, high]).values
    }

    /// `values` in order, each once, in place: for a row's few columns.
    private static func sortDistinct(_ values: inout [Int64]) {
        values.sort()
        var kept = 0
        for i in values.indices where kept == 0 || values[kept - 1] != values[i] {
            values[kept] = values[i]
            kept += 1
        }
        values.removeLast(values.count - kept)
    }

    /// The values in order, each once, and where each of `values` is among them. Edges
    /// repeat (a burst's thousands of windows share a few dozen): they are made distinct in a
    /// table of their own first (a Set's hashing cost more than the sort), and only those sorted.
    fileprivate static func distinctSorted(_ values: [Int64]) -> (values: [Int64], ranks: [Int]) {
        var capacity = 16
        while capacity < 2 * values.count { capacity <<= 1 }
        let shift = UInt64(64 - capacity.trailingZeroBitCount)
        var slots = [Int64](repeating: 0, count: capacity)
        var slotIndex = [Int](repeating: -1, count: capacity)
        var distinct: [Int64] = []
        var which = [Int](repeating: 0, count: values.count)
        for (k, v) in values.enumerated() {
            var i = Int(truncatingIfNeeded: (UInt64(bitPattern: v) &* 0x9E37_79B9_7F4A_7C15) >> shift)
            while slotIndex[i] >= 0, slots[i] != v { i = (i + 1) & (capacity - 1) }
            if slotIndex[i] < 0 {
                (slots[i], slotIndex[i]) = (v, distinct.count)
                distinct.append(v)
            }
            which[k] = slotIndex[i]
        }
        let order = distinct.indices.sorted { distinct[$0] < distinct[$1] }
        var rankOf = [Int](repeating: 0, count: distinct.count)
        for (rank, i) in order.enumerated() { rankOf[i] = rank }
        return (order.map { distinct[$0] }, which.map { rankOf[$0] })
    }

    /// The spans' points as the fewest spans, left to right (touching spans join).
    private static func merged(_ spans: [Span]) -> [Span] {
        var result: [Span] = []
        for s in spans.sorted(by: { $0.from < $1.from }) {
            if let last = result.last, s.from <= last.to {
                result[result.count - 1].to = max(last.to, s.to)
            } else {
                result.append(s)
            }
        }
        return result
    }
}

extension EngineState {
    /// A box outside which no point counts as inside every open instance (empty: none does).
    ///
    /// Only a hit, an anchor or a family member's window counts an instance inside, with the
    /// instances of its ancestors. An instance whose popup has no open descendant is thus
    /// counted only where a hit is on it (its regions' hit areas; anywhere, when a region of
    /// another popup redirects to its popup), on its popup's anchors and on its family's
    /// windows. A hit counts one such instance (the one hit, or the one touched when the hit
    /// redirects), so two of them counted by hits alone are never both inside.
    func whereEveryInstanceCanBeInside() -> Bounds {
        var hasOpenDescendant = Set<Int32>()
        func markAncestors(of popup: Int32) {
            var p = parentOf[Int(popup)]
            while p >= 0, hasOpenDescendant.insert(p).inserted { p = parentOf[Int(p)] }
        }
        for o in open { markAncestors(of: o.popup) }
        var anchors: [Int32: Bounds] = [:]
        var members: [InstanceID: Bounds] = [:]
        // A family's windows come one after another: their bounds are gathered before the
        // table is looked at, once a family rather than once a window.
        var family: (owner: InstanceID, popup: Int32, bounds: Bounds)?
        func endFamily() {
            guard let (owner, popup, bounds) = family else { return }
            members[owner] = (members[owner] ?? .empty).union(bounds)
            // A member counts its area's popup's ancestors inside (the owner's, as a rule).
            markAncestors(of: popup)
            family = nil
        }
        for areas in [configAreas, windowAreas] {
            for a in areas {
                switch a.kind {
                case .anchor(let popup): anchors[popup] = (anchors[popup] ?? .empty).union(Bounds(a.rect))
                case .member(let owner, let popup, _):
                    if let f = family, f.owner == owner, f.popup == popup {
                        family!.bounds = f.bounds.union(Bounds(a.rect))
                    } else {
                        endFamily()
                        family = (owner, popup, Bounds(a.rect))
                    }
                case .exclusion: break
                }
            }
        }
        endFamily()
        var box = Bounds.everything
        var countedByHitsAlone = 0
        for o in open where !hasOpenDescendant.contains(o.popup) && !regions.redirectTargets.contains(o.popup) {
            var reach = regions.bounds(popup: o.popup, at: o.rect)
            if anchors[o.popup] == nil && members[o.id] == nil {
                countedByHitsAlone += 1
                if countedByHitsAlone > 1 { return .empty }
            }
            if let a = anchors[o.popup] { reach = reach.union(a) }
            if let m = members[o.id] { reach = reach.union(m) }
            box = box.intersection(reach)
            if box.isEmpty { return .empty }
        }
        return box
    }
}
