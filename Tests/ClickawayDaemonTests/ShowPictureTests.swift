import ClickawayCore
@testable import ClickawayDaemon
import Testing

/// What `clickawayctl show` draws, without a display: every pixel lies where a click is
/// inside something (a hit area, an anchor of an open popup, an exclusion), each outline is
/// there, and the labels fit their regions.
@Suite struct ShowPictureTests {
    static func rect(_ x: Int32, _ y: Int32, _ w: Int32, _ h: Int32) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    static let model = try! ClickModel(
        popups: [
            PopupSpec(name: "menu", source: .rect(rect(100, 100, 200, 150), output: nil),
                      anchors: [.rect(rect(10, 10, 40, 20), output: nil)], slop: Insets(all: 6),
                      regions: [RegionSpec(name: "head", rect: rect(0, 0, 200, 30)),
                                RegionSpec(name: "shadow", rect: rect(0, 140, 200, 10), passthrough: true)]),
            PopupSpec(name: "closed", source: .rect(rect(350, 50, 80, 80), output: nil),
                      anchors: [.rect(rect(350, 10, 30, 20), output: nil)]),
        ],
        exclusions: [ExclusionSpec(source: .rect(rect(400, 250, 60, 40), output: nil))])

    static func engine(open: [Int32]) -> DecisionEngine {
        let e = DecisionEngine(model: model)
        e.setOpen(open.map { i in
            guard case .rect(let r, _) = model.popups[Int(i)].source else { fatalError() }
            return PopupInstance(popup: i, rect: r, openedAt: 0, id: .rect(UInt64(i)))
        })
        return e
    }

    /// Every pixel of every fill is in one of `allowed`.
    func expectInside(_ picture: ShowPicture, _ allowed: [Rect], sourceLocation: SourceLocation = #_sourceLocation) {
        for f in picture.fills {
            for y in f.rect.y..<(f.rect.y + f.rect.height) {
                for x in f.rect.x..<(f.rect.x + f.rect.width) where !allowed.contains(where: { $0.contains(x: x, y: y) }) {
                    Issue.record("(\(x), \(y)) of \(f.rect) is outside \(allowed)", sourceLocation: sourceLocation)
                    return
                }
            }
        }
    }

    func drawn(_ picture: ShowPicture, x: Int32, y: Int32) -> Bool { picture.fills.contains { $0.rect.contains(x: x, y: y) } }

    @Test func theDrawingStaysInsideTheHitAreasAnchorsAndExclusions() {
        let e = Self.engine(open: [0])
        let picture = ShowPicture(e, popups: [], holes: e.holes(in: Self.rect(0, 0, 640, 480)))
        let slopped = Self.rect(94, 94, 212, 162)
        expectInside(picture, [slopped, Self.rect(10, 10, 40, 20), Self.rect(400, 250, 60, 40)])
        // The corners of the hit area, the popup, its anchor and the exclusion are drawn; the
        // closed popup's anchor is not.
        for r in [slopped, Self.rect(100, 100, 200, 150), Self.rect(10, 10, 40, 20), Self.rect(400, 250, 60, 40)] {
            for (x, y) in [(r.x, r.y), (r.x + r.width - 1, r.y + r.height - 1)] { #expect(drawn(picture, x: x, y: y), "\(r)") }
        }
        #expect(!drawn(picture, x: 350, y: 10))
        #expect(!drawn(picture, x: 360, y: 60))
    }

    @Test func namedPopupsOnlyAndTheClosedOnesNotAtAll() {
        let e = Self.engine(open: [0, 1])
        let closedOnly = ShowPicture(e, popups: ["closed"], holes: [])
        expectInside(closedOnly, [Self.rect(350, 50, 80, 80), Self.rect(350, 10, 30, 20), Self.rect(400, 250, 60, 40)])
        #expect(drawn(closedOnly, x: 350, y: 50))
        #expect(!drawn(closedOnly, x: 100, y: 100))
    }

    @Test func theHolesAreOutlinedAsOneShape() {
        // Two holes side by side: their shared edge is not drawn.
        let edges = ShowPicture.unionEdges([Self.rect(0, 0, 10, 10), Self.rect(10, 0, 10, 10)])
        let covered = { (x: Int32, y: Int32) in edges.contains { $0.contains(x: x, y: y) } }
        #expect(covered(0, 5) && covered(19, 5) && covered(5, 0) && covered(15, 9))
        #expect(!covered(9, 5) && !covered(10, 5))
    }

    @Test func labelsFitTheirRegionAndUseTheFont() {
        let runs = BitmapFont.runs("AB", x: 0, y: 0, maxWidth: 100)
        #expect(runs.allSatisfy { $0.y >= 0 && $0.y < BitmapFont.glyphHeight && $0.x >= 0 && $0.x + $0.width <= BitmapFont.width(of: "AB") })
        #expect(BitmapFont.runs("ABCDEFG", x: 0, y: 0, maxWidth: 12).allSatisfy { $0.x < 12 })
        #expect(BitmapFont.rows(of: "a") == BitmapFont.rows(of: "A"))
        #expect(BitmapFont.rows(of: "é") == [0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F])
        for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:/()[],=+*#?!'@ " {
            #expect(BitmapFont.rows(of: c).count == 7 && BitmapFont.rows(of: c).allSatisfy { $0 < 32 }, "\(c)")
        }
    }
}
