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

    /// Several instances of a popup (its windows), nested popups, a region of one popup
    /// redirecting into another, and window areas: anchors, members of an instance's family,
    /// exclusions. What bounds the search for holes must never leave one out.
    @Test func holesMatchDecisionsWithWindowInstancesAndAreas() async throws {
        let popupSeed = zip(Gen.int(in: 0...100), Gen.uint8(in: 0...255))
        let instanceSeed = zip(Gen.int(in: 0...3), Gen.int32(in: -50...450), Gen.int32(in: -50...350),
                               Gen.int32(in: 1...250), Gen.int32(in: 1...250))
        let areaSeed = zip(Gen.int(in: 0...8), Gen.int32(in: -50...450), Gen.int32(in: -50...350),
                           Gen.int32(in: 1...200), Gen.int32(in: 1...200))
        await propertyCheck(count: 500, input: popupSeed.array(of: 1...3), instanceSeed.array(of: 1...5), areaSeed.array(of: 0...6),
                            Gen.int32(in: -20...520).array(of: 200)) { popupSeeds, instanceSeeds, areaSeeds, points in
            let specs = popupSeeds.enumerated().map { i, s -> PopupSpec in
                let parent = s.0 % (i + 1) == i ? nil : "p\(s.0 % (i + 1))"
                return popup("p\(i)", rect(0, 0, 1, 1), parent: parent) {
                    $0.slop = Insets(all: Int32(s.1 >> 6))
                    $0.passthrough = s.1 & 1 != 0
                    // A click inside dismisses it: which family window a click touches counts.
                    if s.0 % 5 == 0 { $0.insideClick = .dismiss }
                    if s.1 & 2 != 0 { $0.regions = [RegionSpec(name: "r", rect: rect(10, 10, 40, 30))] }
                    // A tab that stands for another popup's region or root.
                    if s.1 & 4 != 0, i > 0 {
                        $0.regions.append(RegionSpec(name: "tab", rect: rect(-60, 0, 60, 60), redirect: "p\(Int(s.1 >> 3) % i)"))
                    }
                }
            }
            guard let e = try? engine(specs, open: []) else {
                Issue.record("model rejected generated popups")
                return
            }
            let instances = instanceSeeds.enumerated().map { i, s in
                PopupInstance(popup: Int32(s.0 % specs.count), rect: rect(s.1, s.2, s.3, s.4), openedAt: 0, id: .window(UInt32(i + 1)))
            }
            e.setOpen(instances)
            e.setWindowAreas(areaSeeds.enumerated().map { i, s in
                let r = rect(s.1, s.2, s.3, s.4)
                switch s.0 % 3 {
                case 0: return Area(kind: .anchor(popup: Int32(s.0 % specs.count)), rect: r)
                case 1: return Area(kind: .member(of: instances[s.0 % instances.count].id, popup: instances[s.0 % instances.count].popup,
                                                  window: UInt32(100 + i)), rect: r)
                default: return Area(kind: .exclusion, rect: r)
                }
            })
            Self.check(e, points: points)
        }
    }

    /// Thousands of windows of one popup open at once (a burst): no point is inside all of
    /// them, so the holes are the exclusions, found without deciding the screen cell by cell.
    @Test func manyInstancesOfOnePopupLeaveOnlyTheExclusions() throws {
        let e = try engine([popup("menu", rect(0, 0, 1, 1))], exclusions: [ExclusionSpec(source: .rect(rect(0, 0, 100, 50), output: nil))], open: [])
        e.setOpen((0..<2000).map { i in
            PopupInstance(popup: 0, rect: rect(90 + Int32(i % 50), 70 + Int32(i % 40), 100, 100), openedAt: 0, id: .window(UInt32(i + 1)))
        })
        #expect(e.holes(in: Self.screen) == [rect(0, 0, 100, 50)])
        // With one of them alone open, its window is a hole again.
        e.setOpen([PopupInstance(popup: 0, rect: rect(90, 70, 100, 100), openedAt: 0, id: .window(1))])
        #expect(e.holes(in: Self.screen) == [rect(0, 0, 100, 50), rect(90, 70, 100, 100)])
    }

    /// One popup open with a thousand windows of its family over and beside it (a program's
    /// menus): the holes are where its window and theirs are, each row decided against the
    /// family's spans along it.
    @Test func aThousandWindowsOfOneFamilyAreHolesWhereTheyAre() throws {
        let e = try engine([popup("menu", rect(0, 0, 1, 1)), popup("other", rect(0, 0, 1, 1))], open: [])
        let owner = PopupInstance(popup: 0, rect: rect(100, 80, 60, 60), openedAt: 0, id: .window(1))
        e.setOpen([owner])
        var areas: [Area] = []
        for i in 0..<1000 {
            let (dx, dy, dw) = (Int32(i % 50) * 3, Int32(i % 40) * 4, Int32(i % 7))
            areas.append(Area(kind: .member(of: owner.id, popup: 0, window: UInt32(10 + i)), rect: rect(150 + dx, 60 + dy, 20 + dw, 15)))
        }
        areas.append(Area(kind: .anchor(popup: 1), rect: rect(0, 0, 30, 30)))
        e.setWindowAreas(areas)
        var points: [Int32] = []
        for i in 0..<400 {
            points.append(Int32(90 + (i * 37) % 330))
            points.append(Int32(40 + (i * 53) % 250))
        }
        Self.check(e, points: points)
    }

    /// A tab that stands for the menu it opened (`redirect`): a click on it is inside both,
    /// so the tab is a hole even though it is outside the menu.
    @Test func aRegionStandingForAnotherPopupIsAHoleWhenBothAreOpen() throws {
        let e = try engine([popup("menu", rect(300, 0, 100, 100)), popup("tab", rect(200, 0, 50, 20)) { $0.redirect = "menu" }])
        #expect(e.holes(in: Self.screen) == [rect(200, 0, 50, 20)])
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
