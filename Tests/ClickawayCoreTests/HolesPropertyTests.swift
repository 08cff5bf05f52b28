import ClickawayCore
import PropertyBased
import Testing

/// The shield's holes against the engine's own decisions: a point is in a hole exactly when
/// a press there dismisses nothing and passes.
@Suite("Holes: where clicks need not reach the daemon")
struct HolesPropertyTests {
    static let screen = rect(0, 0, 500, 400)

    /// Nothing happens to a press here, by the engine's own decision (on a scratch copy).
    static func decidesNothing(_ e: DecisionEngine, _ x: Int32, _ y: Int32) -> Bool {
        let d = e.explain(button: 1, x: x, y: y, time: 10_000)
        return d.dismiss.isEmpty && d.click == .pass && d.awaitingRelease.isEmpty
    }

    static func check(_ e: DecisionEngine, points: [Int32]) {
        let holes = e.holes(in: screen)
        for (i, a) in holes.enumerated() {
            #expect(a.width > 0 && a.height > 0, "empty hole \(a)")
            #expect(a.x >= 0 && a.y >= 0 && a.x + a.width <= 500 && a.y + a.height <= 400, "hole \(a) leaves the screen")
            for b in holes[(i + 1)...] {
                let overlaps = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
                #expect(!overlaps, "holes \(a) and \(b) overlap")
            }
        }
        for pair in stride(from: 0, to: points.count - 1, by: 2) {
            let (x, y) = (points[pair], points[pair + 1])
            guard screen.contains(x: x, y: y) else { continue }
            let inHole = holes.contains { $0.contains(x: x, y: y) }
            #expect(inHole == decidesNothing(e, x, y), "point (\(x), \(y)), holes \(holes)")
        }
        // Every hole's corners decide nothing: its edges are where the decision changes.
        for h in holes {
            for (x, y) in [(h.x, h.y), (h.x + h.width - 1, h.y), (h.x, h.y + h.height - 1), (h.x + h.width - 1, h.y + h.height - 1)] {
                #expect(decidesNothing(e, x, y), "corner (\(x), \(y)) of hole \(h)")
            }
        }
    }

    @Test func holesMatchDecisionsOnRandomRegionTrees() async throws {
        await propertyCheck(count: 200, input: nodeSeed.array(of: 0...20), Gen.int32(in: -20...520).array(of: 200)) { seeds, points in
            let regions = tree(seeds)
            let flags = seeds.first?.flags ?? 0
            let p = popup("p", rect(60, 50, 240, 220), regions: regions) {
                $0.passthrough = flags & 1 != 0
                $0.slop = Insets(all: Int32(flags & 7))
                $0.anchors = [.rect(rect(400, 0, 60, 30), output: nil)]
            }
            guard let e = try? engine([p], exclusions: [ExclusionSpec(source: .rect(rect(0, 350, 120, 50), output: nil))]) else {
                Issue.record("model rejected a generated tree")
                return
            }
            Self.check(e, points: points)
        }
    }

    @Test func holesMatchDecisionsOnRandomNestedPopupSets() async throws {
        let popupSeed = zip(Gen.int(in: 0...100), Gen.int32(in: -50...450), Gen.int32(in: -50...350),
                            Gen.int32(in: 1...300), Gen.int32(in: 1...300), Gen.uint8(in: 0...255))
        await propertyCheck(count: 200, input: popupSeed.array(of: 1...6), Gen.int32(in: -20...520).array(of: 200)) { seeds, points in
            let specs = seeds.enumerated().map { i, s -> PopupSpec in
                let parent = s.0 % (i + 1) == i ? nil : "p\(s.0 % (i + 1))"
                return popup("p\(i)", rect(s.1, s.2, s.3, s.4), parent: parent) {
                    $0.trigger = s.5 & 1 != 0 ? .click : .press
                    $0.slop = Insets(all: Int32(s.5 >> 5))
                    if s.5 & 2 != 0 { $0.anchors = [.rect(rect(s.2, s.1, 40, 25), output: nil)] }
                    if s.5 & 4 != 0 { $0.regions = [RegionSpec(name: "r", rect: rect(5, 5, 30, 30))] }
                    $0.passthrough = s.5 & 8 != 0
                }
            }
            guard let e = try? engine(specs, exclusions: [ExclusionSpec(source: .rect(rect(200, 0, 50, 50), output: nil))]) else {
                Issue.record("model rejected generated popups")
                return
            }
            Self.check(e, points: points)
        }
    }

    @Test func noPopupOpenMeansNoShieldAtAll() throws {
        let e = try engine([popup("p", rect(10, 10, 50, 50))], open: [])
        #expect(e.holes(in: Self.screen) == [Self.screen])
    }

    @Test func onePlainPopupIsOneHole() throws {
        let e = try engine([popup("p", rect(10, 20, 50, 60))])
        #expect(e.holes(in: Self.screen) == [rect(10, 20, 50, 60)])
    }
}
