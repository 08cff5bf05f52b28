import ClickawayCore
import Testing

/// Every scenario of the UIKit articles clickaway follows (DejalView, DTTableView, pdenya's
/// modal, Liam Kim's hit-testing posts, "what happens when I touch"), as the region tree
/// reproduces it.
@Suite("UIKit hit-testing scenarios")
struct UIKitScenarioTests {
    /// DejalView: a revealed Delete button; a tap anywhere else hides it "without doing anything else".
    @Test func dejalViewTapOutsideSpecialControlHidesItAndDoesNothingElse() throws {
        let e = try engine([popup("delete-button", rect(240, 10, 70, 30))])
        let outside = e.click(100, 20)
        #expect(outside.click == .swallow)
        #expect(outside.reason == .outside)
        #expect(e.dismissedNames == ["delete-button"])
        #expect(e.open.isEmpty)
    }

    @Test func dejalViewTapOnTheControlItselfReachesIt() throws {
        let e = try engine([popup("delete-button", rect(240, 10, 70, 30))])
        let inside = e.click(250, 20)
        #expect(inside.click == .pass)
        #expect(inside.reason == .inside)
        #expect(e.dismissed.isEmpty)
        #expect(e.openNames == ["delete-button"])
    }

    /// DTTableView: taps in headers and empty areas between cells count as outside the cells,
    /// while taps on a cell behave normally. The table's own area is `passthrough`.
    @Test func dtTableViewHitOutsideCellsDismisses() throws {
        let cells = (0..<3).map { i in RegionSpec(name: "cell\(i)", rect: rect(0, 40 + Int32(i) * 50, 320, 44)) }
        let table = popup("table", rect(0, 0, 320, 200), regions: cells) { $0.passthrough = true }
        let header = try engine([table])
        #expect(header.click(160, 10).click == .swallow)
        #expect(header.dismissedNames == ["table"])

        let gap = try engine([table])
        #expect(gap.click(160, 86).reason == .outside) // between cell0 (40..<84) and cell1 (90..<134)
        #expect(gap.dismissedNames == ["table"])

        let cell = try engine([table])
        let d = cell.click(160, 100)
        #expect(d.click == .pass)
        #expect(cell.hitPath(160, 100) == ["table", "table.cell1"])
        #expect(cell.dismissed.isEmpty)
    }

    /// pdenya: a modal whose inside is any view with the revealed view in its parent chain.
    @Test func pdenyaModalInsideTouchAnywhereInParentChainBehavesNormally() throws {
        let deep = RegionSpec(name: "controls", rect: rect(10, 10, 200, 40), children: [
            RegionSpec(name: "row", rect: rect(0, 0, 200, 20), children: [
                RegionSpec(name: "button", rect: rect(150, 0, 50, 20)),
            ]),
        ])
        let e = try engine([popup("revealed", rect(0, 100, 320, 60), regions: [deep])])
        let d = e.click(170, 115)
        #expect(d.click == .pass)
        #expect(e.hitPath(170, 115) == ["revealed", "revealed.controls", "revealed.controls.row", "revealed.controls.row.button"])
        #expect(e.dismissed.isEmpty)
    }

    @Test func pdenyaModalOutsideTouchClosesItAndDoesNotReachTappableElements() throws {
        let e = try engine([popup("revealed", rect(0, 100, 320, 60))])
        let d = e.click(100, 300)
        #expect(d.click == .swallow)
        #expect(e.dismissedNames == ["revealed"])
    }

    /// pdenya's gotcha: hitTest ran 3 times per tap, so the handler fired once and the later
    /// runs saw the modal closed and let the tap through. Here one physical click is one decision.
    @Test func pdenyaThreeHitTestsGotchaCannotHappen() throws {
        let e = try engine([popup("revealed", rect(0, 100, 320, 60))])
        let first = e.press(button: 1, x: 100, y: 300, time: 5000)
        #expect(first.click == .swallow && first.dismissCount == 1)
        // The same press delivered again decides nothing and is not let through as a new click.
        let again = e.press(button: 1, x: 100, y: 300, time: 5000)
        #expect(again.reason == .duplicate && again.dismissCount == 0)
        // Hit-testing is a pure query: asking again changes nothing.
        for _ in 0..<3 { _ = e.hitTest(x: 100, y: 300) }
        #expect(e.open.isEmpty)
        #expect(e.release(button: 1, x: 100, y: 300, time: 5010) == nil)
    }

    /// Liam Kim: `bounds.insetBy(dx: -10, dy: -10)` gives a small button a wider touch area.
    @Test func liamKimWiderTouchArea() throws {
        let button = RegionSpec(name: "button", rect: rect(50, 50, 20, 20), slop: Insets(all: 10))
        let e = try engine([popup("panel", rect(0, 0, 200, 200), regions: [button])])
        #expect(e.hitPath(45, 45) == ["panel", "panel.button"])
        #expect(e.hitPath(79, 79) == ["panel", "panel.button"])
        #expect(e.hitPath(80, 80) == ["panel"])
        #expect(e.hitPath(39, 60) == ["panel"])
    }

    @Test func liamKimWiderTouchAreaPerSide() throws {
        let button = RegionSpec(name: "button", rect: rect(50, 50, 20, 20), slop: Insets(top: 0, right: 30, bottom: 0, left: 0))
        let e = try engine([popup("panel", rect(0, 0, 200, 200), regions: [button])])
        #expect(e.hitPath(99, 60) == ["panel", "panel.button"])
        #expect(e.hitPath(60, 49) == ["panel"])
    }

    /// Liam Kim: "pass touch event": the view returns nil for its own area, so the touch goes to
    /// what is below it, while its subviews still receive touches.
    @Test func liamKimPassThroughToViewBelow() throws {
        let overlay = popup("overlay", rect(0, 0, 300, 300), regions: [RegionSpec(name: "knob", rect: rect(10, 10, 30, 30))]) {
            $0.passthrough = true
        }
        let below = popup("below", rect(0, 0, 300, 300))
        let e = try engine([below, overlay])
        #expect(e.hitPath(150, 150) == ["below"])
        #expect(e.hitPath(20, 20) == ["overlay", "overlay.knob"])
        // The margin of a lone passthrough popup is outside: it dismisses.
        let alone = try engine([overlay])
        #expect(alone.click(150, 150).click == .swallow)
        #expect(alone.dismissedNames == ["overlay"])
    }

    /// Liam Kim: "send touch event to subview": a hit on the parent counts as a hit on a subview.
    @Test func liamKimRedirectToSubview() throws {
        let field = RegionSpec(name: "field", rect: rect(20, 20, 100, 20))
        let e = try engine([popup("form", rect(0, 0, 200, 100), regions: [field]) { $0.redirect = "field" }])
        #expect(e.hitPath(150, 80) == ["form", "form.field"])
        let d = e.click(150, 80)
        #expect(d.hit.map { e.model.regionPath($0.region) } == "form.field")
        #expect(d.click == .pass)
    }

    @Test func redirectToAnotherPopupsRegion() throws {
        let menu = popup("menu", rect(0, 0, 100, 100), regions: [RegionSpec(name: "items", rect: rect(0, 0, 100, 80))])
        let tab = popup("tab", rect(200, 0, 50, 20)) { $0.redirect = "menu.items" }
        let e = try engine([menu, tab])
        let d = e.click(210, 10)
        #expect(d.hit?.popup == e.model.popupIndex(named: "menu"))
        #expect(e.hitPath(210, 10) == ["menu", "menu.items"])
        #expect(e.dismissed.isEmpty)
    }

    /// "What happens when I touch": a button that sticks out of its red superview does not
    /// respond on the part outside the superview, unless the superview stops clipping hit-tests.
    @Test func buttonStickingOutOfSuperviewIsNotHitOutsideIt() throws {
        let red = RegionSpec(name: "red", rect: rect(0, 0, 100, 100), children: [
            RegionSpec(name: "button", rect: rect(80, 40, 60, 20)),
        ])
        let e = try engine([popup("window", rect(0, 0, 300, 300), regions: [red])])
        #expect(e.hitPath(90, 50) == ["window", "window.red", "window.red.button"])
        #expect(e.hitPath(120, 50) == ["window"])
    }

    @Test func buttonStickingOutIsHitWhenSuperviewDoesNotClip() throws {
        let red = RegionSpec(name: "red", rect: rect(0, 0, 100, 100), clip: false, children: [
            RegionSpec(name: "button", rect: rect(80, 40, 60, 20)),
        ])
        let e = try engine([popup("window", rect(0, 0, 300, 300), regions: [red])])
        #expect(e.hitPath(120, 50) == ["window", "window.red", "window.red.button"])
        // Outside both the button and the red view: the red view itself is not hit.
        #expect(e.hitPath(150, 90) == ["window"])
    }

    /// "What happens when I touch": the last subview added is tested first and the first hit wins.
    @Test func siblingsAreTestedTopmostFirst() throws {
        let a = RegionSpec(name: "a", rect: rect(0, 0, 100, 100))
        let b = RegionSpec(name: "b", rect: rect(50, 50, 100, 100))
        let c = RegionSpec(name: "c", rect: rect(200, 0, 50, 50))
        let e = try engine([popup("main", rect(0, 0, 300, 300), regions: [a, b, c])])
        #expect(e.hitPath(75, 75) == ["main", "main.b"])
        #expect(e.hitPath(25, 25) == ["main", "main.a"])
        #expect(e.hitPath(210, 10) == ["main", "main.c"])
    }

    /// Liam Kim's walk: viewC misses, viewB hits, viewB.2 misses, viewB.1 is chosen.
    @Test func liamKimHitTestingWalkFindsViewB1() throws {
        let viewA = RegionSpec(name: "viewA", rect: rect(0, 0, 100, 100))
        let viewB = RegionSpec(name: "viewB", rect: rect(50, 50, 150, 150), children: [
            RegionSpec(name: "viewB1", rect: rect(10, 10, 40, 40)),
            RegionSpec(name: "viewB2", rect: rect(80, 80, 40, 40)),
        ])
        let viewC = RegionSpec(name: "viewC", rect: rect(220, 0, 60, 60))
        let e = try engine([popup("mainView", rect(0, 0, 320, 320), regions: [viewA, viewB, viewC])])
        #expect(e.hitPath(70, 70) == ["mainView", "mainView.viewB", "mainView.viewB.viewB1"])
    }

    /// userInteractionEnabled = NO and hidden views: neither they nor their subviews are hit.
    @Test func hiddenAndDisabledRegionsAndTheirChildrenAreNeverHit() throws {
        let child = RegionSpec(name: "child", rect: rect(0, 0, 10, 10))
        let hidden = RegionSpec(name: "hidden", rect: rect(0, 0, 50, 50), hidden: true, children: [child])
        let disabled = RegionSpec(name: "disabled", rect: rect(100, 0, 50, 50), enabled: false, children: [child])
        let e = try engine([popup("p", rect(0, 0, 200, 200), regions: [hidden, disabled])])
        #expect(e.hitPath(5, 5) == ["p"])
        #expect(e.hitPath(105, 5) == ["p"])
    }
}
