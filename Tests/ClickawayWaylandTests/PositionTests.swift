import ClickawayCore
@testable import ClickawayWayland
import Testing

/// The arithmetic behind exact positions, without a compositor: where the virtual
/// pointer's absolute motion lands, and how a point rounded into a hole is put back.
@Suite struct PositionTests {
    /// wlroots places absolute motion at `value / extent * span + origin` in doubles, hit-tests
    /// the pixel `floor` of that, and tells clients `wl_fixed_from_double` of it (rounded to
    /// 1/256). Both must be the point asked for, on every 1/256 pixel of common output widths
    /// (whole-pixel fractions went a pixel left on 22 to 47 columns of these widths before).
    @Test(arguments: [800, 1280, 1366, 1920, 2560, 3840] as [Int32])
    func absoluteMotionLandsOnTheWantedStep(_ span: Int32) {
        var wrongPixel = 0, wrongFixed = 0
        for step in stride(from: 0, to: Int(span) * 256, by: 7) {
            let wanted = Double(step) / 256
            let (value, extent) = VirtualPointer.absolute(wanted, span: span)
            let landed = Double(value) / Double(extent) * Double(span)
            if landed.rounded(.down) != wanted.rounded(.down) { wrongPixel += 1 }
            if (landed * 256).rounded() != Double(step) { wrongFixed += 1 }
        }
        #expect(wrongPixel == 0)
        #expect(wrongFixed == 0)
    }

    @Test func spansTooWideForFineStepsStillLand() {
        let wide: Int32 = 5_000_000  // 1024 steps a pixel would not fit in 32 bits
        let (value, extent) = VirtualPointer.absolute(1234.5, span: wide)
        #expect(extent == UInt32(wide) * 256)
        #expect(Double(value) / Double(extent) * Double(wide) == 1234.5)
        #expect(VirtualPointer.absolute(-3, span: 1280).value == 0, "clamped into the layout")
        #expect(VirtualPointer.absolute(5000, span: 1280).value == 1280 * 1024 - 1)
    }

    @Test func pixelOfAPoint() {
        #expect(Position(x: 99.99609375, y: -0.5).pixel == (99, -1))
        #expect(Position(x: 100, y: 0).pixel == (100, 0))
        #expect(Position(x: 700.5, y: 500.25).description == "(700.5, 500.25)")
        #expect(Position(pixelX: 3, y: 4).description == "(3, 4)")
    }

    static let hole = Rect(x: 100, y: 100, width: 300, height: 200)

    /// KWin rounds 99.6 to 100: the point goes back just outside the left edge.
    @Test func aPointRoundedIntoAHoleGoesBackToTheNearestEdge() {
        let step = 1.0 / 256
        #expect(Overlay.outsideHoles(Position(x: 100, y: 150), holes: [Self.hole]) == Position(x: 100 - step, y: 150))
        #expect(Overlay.outsideHoles(Position(x: 250, y: 100.25), holes: [Self.hole]) == Position(x: 250, y: 100 - step))
        #expect(Overlay.outsideHoles(Position(x: 399.75, y: 150), holes: [Self.hole]) == Position(x: 400, y: 150))
        #expect(Overlay.outsideHoles(Position(x: 250, y: 299.5), holes: [Self.hole]) == Position(x: 250, y: 300))
    }

    @Test func pointsOutsideOrDeepInsideStayWhereTheyAre() {
        let outside = Position(x: 99.5, y: 150)
        #expect(Overlay.outsideHoles(outside, holes: [Self.hole]) == outside)
        // More than a pixel in: the holes changed since the compositor tested the point.
        let deep = Position(x: 250, y: 200)
        #expect(Overlay.outsideHoles(deep, holes: [Self.hole]) == deep)
        #expect(Overlay.outsideHoles(deep, holes: []) == deep)
    }

    /// Across an edge shared with another hole is no way out: the next nearest edge is taken.
    @Test func anEdgeSharedWithAnotherHoleIsSkipped() {
        let right = Rect(x: 400, y: 100, width: 100, height: 200)
        let moved = Overlay.outsideHoles(Position(x: 400, y: 100.5), holes: [Self.hole, right])
        #expect(moved == Position(x: 400, y: 100 - 1.0 / 256))
    }
}
