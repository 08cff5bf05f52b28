/// Every popup's region tree flattened into one array, so that hit-testing walks plain
/// values with no allocation and no reference counting.
struct RegionNode: Sendable {
    /// Relative to the popup's origin (not the parent's): the offsets are summed once here.
    /// The root's size is the open popup's size, so its frame is not stored.
    var frame: Rect
    var slop: Insets
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

struct RegionTable: Sendable {
    private(set) var nodes: [RegionNode] = []
    /// Dotted path of each node from its popup's name: "calendar", "calendar.card".
    private(set) var paths: [String] = []
    private(set) var roots: [Int32] = []

    init(popups: [PopupSpec]) {
        for (i, p) in popups.enumerated() {
            let root = append(RegionNode(
                frame: Rect(x: 0, y: 0, width: 0, height: 0), slop: p.slop,
                flags: flags(hidden: false, enabled: true, passthrough: p.passthrough, clip: p.clip).union(.root),
                popup: Int32(i), parent: -1), path: p.name)
            roots.append(root)
            appendChildren(p.regions, parent: root, origin: (0, 0), popup: Int32(i), prefix: p.name)
        }
        // Redirects are resolved once every path exists.
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
        if let t = byPath[popup + "." + target] ?? byPath[target] { nodes[Int(node)].redirect = t }
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

    /// UIKit's `hitTest:withEvent:` on node `n`, for a point relative to the popup's origin.
    /// Returns the node hit (after redirect), or -1.
    @inline(__always)
    func hitTest(_ n: Int32, x: Int32, y: Int32, rootSize: (Int32, Int32), followRedirects: Bool = true) -> Int32 {
        nodes.withUnsafeBufferPointer { hitTest($0, n, x: x, y: y, rootSize: rootSize, followRedirects: followRedirects) }
    }

    private func hitTest(_ nodes: UnsafeBufferPointer<RegionNode>, _ n: Int32, x: Int32, y: Int32,
                         rootSize: (Int32, Int32), followRedirects: Bool) -> Int32 {
        let node = nodes[Int(n)]
        if node.flags.contains(.inactive) { return -1 }
        var frame = node.frame
        if node.flags.contains(.root) {
            frame.width = rootSize.0
            frame.height = rootSize.1
        }
        let inside = frame.expanded(by: node.slop).contains(x: x, y: y)
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
