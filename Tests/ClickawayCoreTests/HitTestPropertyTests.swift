import ClickawayCore
import PropertyBased
import Testing

/// One random region: where it hangs in the tree, its rectangle and its switches.
struct NodeSeed: Sendable, CustomStringConvertible {
    var parentPick: Int
    var rect: Rect
    var slop: Int32
    var flags: UInt8

    var description: String { "(\(parentPick), \(rect), slop \(slop), flags \(flags))" }
}

let nodeSeed = zip(
    Gen.int(in: 0...1000), Gen.int32(in: -40...220), Gen.int32(in: -40...220),
    Gen.int32(in: 0...160), Gen.int32(in: 0...160), Gen.int32(in: 0...6), Gen.uint8(in: 0...255)
).map { p, x, y, w, h, s, f in NodeSeed(parentPick: p, rect: rect(x, y, w, h), slop: s, flags: f) }

/// Builds a tree: node i hangs under the root or under an earlier node.
func tree(_ seeds: [NodeSeed]) -> [RegionSpec] {
    // Children lists by index; 0 is the root.
    var children: [[Int]] = [[]]
    for (i, s) in seeds.enumerated() {
        children[s.parentPick % (i + 1)].append(i + 1)
        children.append([])
    }
    func build(_ i: Int) -> RegionSpec {
        let s = seeds[i - 1]
        return RegionSpec(
            name: "r\(i)", rect: s.rect, slop: Insets(all: s.slop & 3 == 0 ? s.slop : 0),
            passthrough: s.flags & 1 != 0 && s.flags & 6 == 0, clip: s.flags & 8 == 0,
            hidden: s.flags & 16 != 0 && s.flags & 32 != 0, enabled: s.flags & 64 == 0 || s.flags & 128 == 0,
            children: children[i].map(build))
    }
    return children[0].map(build)
}

/// The reference: UIKit's hitTest:withEvent: written as the UIKit articles spell it out,
/// on the nested specs with absolute coordinates computed on the way down.
func referenceHit(_ r: RegionSpec, path: String, origin: (Int32, Int32), x: Int32, y: Int32) -> String? {
    if r.hidden || !r.enabled { return nil }
    let frame = r.rect.offsetBy(dx: origin.0, dy: origin.1)
    let inside = frame.expanded(by: r.slop).contains(x: x, y: y)
    if !inside && r.clip { return nil }
    for child in r.children.reversed() {
        if let hit = referenceHit(child, path: path + "." + child.name!, origin: (frame.x, frame.y), x: x, y: y) {
            return hit
        }
    }
    return inside && !r.passthrough ? path : nil
}

@Suite("Hit-testing properties")
struct HitTestPropertyTests {
    @Test func flattenedTreeMatchesRecursiveReference() async throws {
        await propertyCheck(count: 400, input: nodeSeed.array(of: 0...30), Gen.int32(in: -60...300).array(of: 40)) { seeds, coords in
            let regions = tree(seeds)
            let root = RegionSpec(name: nil, rect: rect(10, 20, 200, 200), children: regions)
            guard let e = try? engine([popup("p", root.rect, regions: regions)]) else {
                Issue.record("model rejected a generated tree")
                return
            }
            for pair in stride(from: 0, to: coords.count - 1, by: 2) {
                let (x, y) = (coords[pair], coords[pair + 1])
                let expected = referenceHit(root, path: "p", origin: (0, 0), x: x, y: y)
                let actual = e.hitTest(x: x, y: y).map { e.model.regionPath($0.region) }
                #expect(actual == expected, "point (\(x), \(y))")
            }
        }
    }

    /// Dismissal decided by a plain reference over random popup sets with parents:
    /// inside = the popup hit and its ancestors; dismissed = everything else that is open,
    /// then cascaded down to children; swallow when any dismissed popup swallows.
    @Test func decisionsMatchReferenceOnRandomPopupSets() async throws {
        let popupSeed = zip(Gen.int(in: 0...100), Gen.int32(in: 0...400), Gen.int32(in: 0...400),
                            Gen.int32(in: 1...300), Gen.int32(in: 1...300), Gen.bool)
        await propertyCheck(count: 300, input: popupSeed.array(of: 1...8), Gen.int32(in: 0...800).array(of: 20)) { seeds, coords in
            let specs = seeds.enumerated().map { i, s -> PopupSpec in
                let parent = s.0 % (i + 1) == i ? nil : "p\(s.0 % (i + 1))"
                return popup("p\(i)", rect(s.1, s.2, s.3, s.4), parent: parent) { $0.outsideClick = s.5 ? .swallow : .replay }
            }
            for pair in stride(from: 0, to: coords.count - 1, by: 2) {
                guard let e = try? engine(specs) else {
                    Issue.record("model rejected generated popups")
                    return
                }
                let (x, y) = (coords[pair], coords[pair + 1])
                let hit = specs.indices.reversed().first { specs[$0].fixedRect!.contains(x: x, y: y) }
                var inside = Set<String>()
                var p = hit.map { specs[$0].name }
                while let name = p {
                    inside.insert(name)
                    p = specs.first { $0.name == name }?.parent
                }
                var dismissed = Set(specs.map(\.name)).subtracting(inside)
                // Children of dismissed popups go too (a parent is always declared earlier).
                for s in specs where s.parent.map(dismissed.contains) == true { dismissed.insert(s.name) }
                let expectedClick: ClickOutcome = hit != nil || dismissed.isEmpty ? .pass
                    : specs.contains { dismissed.contains($0.name) && $0.outsideClick == .swallow } ? .swallow : .replay

                let d = e.click(x, y)
                #expect(e.dismissedNames == dismissed.sorted(), "point (\(x), \(y))")
                #expect(d.click == expectedClick, "point (\(x), \(y))")
            }
        }
    }
}
