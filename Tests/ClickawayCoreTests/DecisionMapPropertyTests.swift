import ClickawayCore
import PropertyBased
import Testing

/// The decision map (`clickawayctl show`) against the engine's own decisions (`hit`): every
/// pixel of the screen lies in exactly one cell, and that cell says what a press there does.
@Suite("Decision map: what show draws is what hit decides")
struct DecisionMapPropertyTests {
    static let screen = rect(0, 0, 120, 90)

    static func check(_ e: DecisionEngine) {
        let cells = e.decisionMap(in: screen, time: 10_000)
        for y in 0..<screen.height {
            for x in 0..<screen.width {
                let covering = cells.filter { $0.rect.contains(x: x, y: y) }
                guard covering.count == 1, let cell = covering.first else {
                    Issue.record("pixel (\(x), \(y)) is in \(covering.count) cells")
                    return
                }
                let d = e.explain(x: x, y: y, time: 10_000)
                let expected = DecisionCell(rect: cell.rect, reason: d.reason, popup: d.hitPopup, region: d.hitRegion,
                                            dismisses: !d.dismiss.isEmpty)
                guard cell.decidesAlike(expected) else {
                    Issue.record("pixel (\(x), \(y)): the map says \(cell), hit says \(d)")
                    return
                }
            }
        }
    }

    @Test func everyPixelIsDecidedAsHitDecidesIt() async throws {
        await propertyCheck(count: 30, input: nodeSeed.array(of: 0...12)) { seeds in
            let regions = tree(seeds)
            let flags = seeds.first?.flags ?? 0
            let p = popup("p", rect(15, 12, 70, 60), regions: regions) {
                $0.passthrough = flags & 1 != 0
                $0.slop = Insets(all: Int32(flags & 3))
                $0.anchors = [.rect(rect(100, 0, 15, 10), output: nil)]
            }
            let q = popup("q", rect(60, 40, 50, 40), parent: flags & 2 != 0 ? "p" : nil)
            guard let e = try? engine([p, q], exclusions: [ExclusionSpec(source: .rect(rect(0, 80, 30, 10), output: nil))]) else {
                Issue.record("model rejected a generated tree")
                return
            }
            Self.check(e)
        }
    }
}
