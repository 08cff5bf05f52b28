/// Every popup's region tree flattened into one array, so that hit-testing walks plain
/// values with no allocation and no reference counting.
struct RegionNode: Sendable {
    /// Relative to the popup's origin (not the parent's): the offsets are summed once here.
    /// The root's size is the open popup's size, so its frame is not stored.
    var frame: Rect
    var slop: Insets
    /// The hit area (frame grown by slop) as half-open bounds, precomputed for the hot loop.
    var area = Bounds.empty
    /// The union of the hit areas in this subtree. Every hit lies in some area of the
    /// subtree, so a point outside it cannot hit anything here: an exact prune.
    var subtree = Bounds.empty
    var flags: Flags
    var popup: Int32
    var parent: Int32
    /// Children are visited topmost (last declared) first: start at `lastChild`, follow `previousSibling`.
    var lastChild: Int32 = -1
    var previousSibling: Int32 = -1
    /// Node that a hit on this region's own area stands for, or -1.
    var redirect: Int32 = -1

    struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        /// Hidden or disabled: neither it nor its children are ever hit.
        static let inactive = Flags(rawValue: 1)
        static let passthrough = Flags(rawValue: 2)
        static let clip = Flags(rawValue: 4)
        static let root = Flags(rawValue: 8)
    }
}

/// Half-open integer bounds: minX ≤ x < maxX, minY ≤ y < maxY. Int64 so sums cannot overflow.
struct Bounds: Sendable {
    var minX: Int64, minY: Int64, maxX: Int64, maxY: Int64

    static let empty = Bounds(minX: 0, minY: 0, maxX: 0, maxY: 0)
    static let everything = Bounds(minX: .min, minY: .min, maxX: .max, maxY: .max)

    init(minX: Int64, minY: Int64, maxX: Int64, maxY: Int64) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    init(_ r: Rect) {
        self.init(minX: Int64(r.x), minY: Int64(r.y),
                  maxX: Int64(r.x) + Int64(max(0, r.width)), maxY: Int64(r.y) + Int64(max(0, r.height)))
    }

    @inline(__always)
    func contains(_ x: Int64, _ y: Int64) -> Bool { x >= minX && x < maxX && y >= minY && y < maxY }

    /// Grown by `insets` on each side; 64 bits hold any 32-bit rectangle grown by any 32-bit insets.
    func expanded(by insets: Insets) -> Bounds {
        Bounds(minX: minX - Int64(insets.left), minY: minY - Int64(insets.top),
               maxX: maxX + Int64(insets.right), maxY: maxY + Int64(insets.bottom))
    }

    var isEmpty: Bool { minX >= maxX || minY >= maxY }

    func offsetBy(_ dx: Int64, _ dy: Int64) -> Bounds {
        Bounds(minX: minX + dx, minY: minY + dy, maxX: maxX + dx, maxY: maxY + dy)
    }

    /// The points in both; empty (`isEmpty`) when they do not meet.
    func intersection(_ o: Bounds) -> Bounds {
        Bounds(minX: max(minX, o.minX), minY: max(minY, o.minY), maxX: min(maxX, o.maxX), maxY: min(maxY, o.maxY))
    }

    func union(_ o: Bounds) -> Bounds {
        if isEmpty { return o }
        if o.isEmpty { return self }
        return Bounds(minX: min(minX, o.minX), minY: min(minY, o.minY), maxX: max(maxX, o.maxX), maxY: max(maxY, o.maxY))
    }
}

struct RegionTable: Sendable {
    private(set) var nodes: [RegionNode] = []
    /// Dotted path of each node from its popup's name: "calendar", "calendar.card".
    private(set) var paths: [String] = []
    private(set) var roots: [Int32] = []
    /// The popups that a region of another popup redirects to: a click there counts as a
    /// hit on them, wherever that region is.
    private(set) var redirectTargets: Set<Int32> = []

    init(popups: [PopupSpec]) {
        for (i, p) in popups.enumerated() {
            let root = append(RegionNode(
                frame: Rect(x: 0, y: 0, width: 0, height: 0), slop: p.slop,
                flags: flags(hidden: false, enabled: true, passthrough: p.passthrough, clip: p.clip).union(.root),
                popup: Int32(i), parent: -1), path: p.name)
            roots.append(root)
            appendChildren(p.regions, parent: root, origin: (0, 0), popup: Int32(i), prefix: p.name)
        }
        for i in nodes.indices.reversed() { computeBounds(Int32(i)) }
        // Redirects are resolved once every path exists (and only if there are any).
        guard popups.contains(where: { $0.redirect != nil || RegionSpec.anyRedirect($0.regions) }) else { return }
        var byPath: [String: Int32] = [:]
        for (i, path) in paths.enumerated() { byPath[path] = Int32(i) }
        for (i, p) in popups.enumerated() {
            resolveRedirect(p.redirect, node: roots[i], popup: p.name, byPath: byPath)
            resolveRedirects(p.regions, parent: roots[i], popup: p.name, byPath: byPath)
        }
    }

    private func flags(hidden: Bool, enabled: Bool, passthrough: Bool, clip: Bool) -> RegionNode.Flags {
        var f: RegionNode.Flags = []
        if hidden || !enabled { f.insert(.inactive) }
        if passthrough { f.insert(.passthrough) }
        if clip { f.insert(.clip) }
        return f
    }

    /// Children come after their parent, so walking backwards sees every child first.
    private mutating func computeBounds(_ n: Int32) {
        var node = nodes[Int(n)]
        node.area = Bounds(node.frame).expanded(by: node.slop)
        // The root's size is only known when it opens: it never prunes.
        var subtree = node.flags.contains(.root) ? Bounds.everything : node.area
        var child = node.lastChild
        while child >= 0 {
            subtree = subtree.union(nodes[Int(child)].subtree)
            child = nodes[Int(child)].previousSibling
        }
        node.subtree = node.flags.contains(.inactive) ? .empty : subtree
        nodes[Int(n)] = node
    }

    private mutating func append(_ node: RegionNode, path: String) -> Int32 {
        nodes.append(node)
        paths.append(path)
        return Int32(nodes.count - 1)
    }

    private mutating func appendChildren(_ regions: [RegionSpec], parent: Int32, origin: (Int32, Int32),
                                         popup: Int32, prefix: String) {
        var previous: Int32 = -1
        for (i, r) in regions.enumerated() {
            let frame = r.rect.offsetBy(dx: origin.0, dy: origin.1)
            let path = prefix + "." + (r.name ?? "#\(i + 1)")
            var node = RegionNode(
                frame: frame, slop: r.slop,
                flags: flags(hidden: r.hidden, enabled: r.enabled, passthrough: r.passthrough, clip: r.clip),
                popup: popup, parent: parent)
            node.previousSibling = previous
            let index = append(node, path: path)
            nodes[Int(parent)].lastChild = index
            previous = index
            appendChildren(r.children, parent: index, origin: (frame.x, frame.y), popup: popup, prefix: path)
        }
    }

    private mutating func resolveRedirect(_ target: String?, node: Int32, popup: String, byPath: [String: Int32]) {
        guard let target else { return }
        guard let t = byPath[popup + "." + target] ?? byPath[target] else { return }
        nodes[Int(node)].redirect = t
        if nodes[Int(t)].popup != nodes[Int(node)].popup { redirectTargets.insert(nodes[Int(t)].popup) }
    }

    private mutating func resolveRedirects(_ regions: [RegionSpec], parent: Int32, popup: String,
                                           byPath: [String: Int32]) {
        // Children were appended in declaration order, so walk them back from lastChild.
        var children: [Int32] = []
        var c = nodes[Int(parent)].lastChild
        while c >= 0 {
            children.append(c)
            c = nodes[Int(c)].previousSibling
        }
        for (r, node) in zip(regions, children.reversed()) {
            resolveRedirect(r.redirect, node: node, popup: popup, byPath: byPath)
            resolveRedirects(r.children, parent: node, popup: popup, byPath: byPath)
        }
    }

    /// UIKit's `hitTest:withEvent:` on node `n`, for a point relative to the popup's origin
    /// (64 bits: a point far from the popup stays far, it never wraps around into it).
    /// Returns the node hit (after redirect), or -1.
    @inline(__always)
    func hitTest(_ n: Int32, x: Int64, y: Int64, rootSize: (Int32, Int32), followRedirects: Bool = true) -> Int32 {
        nodes.withUnsafeBufferPointer { hitTest($0, n, x: x, y: y, rootSize: rootSize, followRedirects: followRedirects) }
    }

    private func hitTest(_ nodes: UnsafeBufferPointer<RegionNode>, _ n: Int32, x: Int64, y: Int64,
                         rootSize: (Int32, Int32), followRedirects: Bool) -> Int32 {
        let (px, py) = (x, y)
        // Read fields in place: copying the whole node for every sibling costs more than the test.
        let slot = nodes.baseAddress.unsafelyUnwrapped + Int(n)
        guard slot.pointee.subtree.contains(px, py) else { return -1 }
        let node = slot.pointee
        if node.flags.contains(.inactive) { return -1 }
        let inside: Bool
        if node.flags.contains(.root) {
            let size = Rect(x: 0, y: 0, width: rootSize.0, height: rootSize.1)
            inside = Bounds(size).expanded(by: node.slop).contains(px, py)
        } else {
            inside = node.area.contains(px, py)
        }
        if !inside && node.flags.contains(.clip) { return -1 }
        var child = node.lastChild
        while child >= 0 {
            let hit = hitTest(nodes, child, x: x, y: y, rootSize: rootSize, followRedirects: followRedirects)
            if hit >= 0 { return hit }
            child = nodes[Int(child)].previousSibling
        }
        guard inside, !node.flags.contains(.passthrough) else { return -1 }
        return followRedirects && node.redirect >= 0 ? node.redirect : n
    }

    /// Every vertical and horizontal line where a hit test of popup `popup`, opened at
    /// `rect`, can change its answer: the edges of each region's hit area, on screen.
    func edges(popup: Int32, at rect: Rect, xs: inout [Int64], ys: inout [Int64]) {
        forEachHitArea(popup: popup, at: rect) { area in
            xs += [area.minX, area.maxX]
            ys += [area.minY, area.maxY]
        }
    }

    /// Where popup `popup`, opened at `rect`, can be hit at all: its regions' hit areas together.
    func bounds(popup: Int32, at rect: Rect) -> Bounds {
        var all = Bounds.empty
        forEachHitArea(popup: popup, at: rect) { all = all.union($0) }
        return all
    }

    /// The hit area of each region of popup `popup` opened at `rect`, on screen, the root's first.
    private func forEachHitArea(popup: Int32, at rect: Rect, _ body: (Bounds) -> Void) {
        let root = Int(roots[Int(popup)])
        let end = Int(popup) + 1 < roots.count ? Int(roots[Int(popup) + 1]) : nodes.count
        let ox = Int64(rect.x), oy = Int64(rect.y)
        let whole = Bounds(Rect(x: 0, y: 0, width: rect.width, height: rect.height)).expanded(by: nodes[root].slop)
        body(whole.offsetBy(ox, oy))
        for n in (root + 1)..<end { body(nodes[n].area.offsetBy(ox, oy)) }
    }

    /// The nodes from the root down to `n`.
    func ancestry(of n: Int32) -> [Int32] {
        var chain: [Int32] = []
        var c = n
        while c >= 0 {
            chain.append(c)
            c = nodes[Int(c)].parent
        }
        return chain.reversed()
    }
}
