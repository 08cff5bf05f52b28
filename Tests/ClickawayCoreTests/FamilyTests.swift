import ClickawayCore
import Testing

/// Windows of an open popup's family (its dialogs, menus, dropdowns) are member areas: a
/// click on one is a click inside that popup instance.
@Suite("Families")
struct FamilyTests {
    let form = popup("form", rect(100, 100, 300, 200))
    let other = popup("other", rect(600, 100, 200, 200))
    let nested = popup("nested", rect(800, 400, 100, 100), parent: "form")

    /// `form`'s instance id in `engine(...)`: its place in the list of names, from 1.
    func member(of id: UInt64, _ e: DecisionEngine, _ name: String, window: UInt32, _ r: Rect) -> Area {
        Area(kind: .member(of: .rect(id), popup: e.model.popupIndex(named: name)!, window: window), rect: r)
    }

    @Test func aClickOnAMemberIsInsideItsPopupAndDismissesTheOthers() throws {
        let e = try engine([form, other])
        // The file chooser, far outside the form.
        e.setWindowAreas([member(of: 1, e, "form", window: 0x600b5, rect(0, 400, 500, 300))])
        let d = e.click(50, 500)
        #expect(d.reason == .inside)
        #expect(d.click == .pass)
        #expect(d.hit?.popup == e.model.popupIndex(named: "form"))
        #expect(d.hit?.touched == .window(0x600b5))
        #expect(e.dismissedNames == ["other"])
        #expect(e.openNames == ["form"])
    }

    @Test func aMemberOfAPopupThatIsNotOpenCountsForNothing() throws {
        let e = try engine([form, other], open: ["other"])
        e.setWindowAreas([member(of: 7, e, "form", window: 0x600b5, rect(0, 400, 500, 300))])
        let d = e.click(50, 500)
        #expect(d.reason == .outside)
        #expect(e.dismissedNames == ["other"])
    }

    @Test func aMemberOfANestedPopupIsInsideItsParentToo() throws {
        let e = try engine([form, nested])
        e.setWindowAreas([member(of: 2, e, "nested", window: 0x700001, rect(0, 600, 100, 100))])
        #expect(e.click(50, 650).click == .pass)
        #expect(e.dismissed.isEmpty)
    }

    /// A dropdown over the popup's passthrough margin: the popup alone would not be hit.
    @Test func aMemberOverAPassthroughMarginIsInside() throws {
        var margins = form
        margins.passthrough = true
        margins.regions = [RegionSpec(name: "card", rect: rect(20, 20, 100, 100))]
        let e = try engine([margins])
        #expect(e.explain(x: 380, y: 280, time: 10_000).reason == .outside)
        e.setWindowAreas([member(of: 1, e, "form", window: 0x600c0, rect(300, 250, 200, 120))])
        let explained = e.explain(x: 380, y: 280, time: 10_000)
        #expect(explained.reason == .inside)
        #expect(explained.member == 0x600c0)
        #expect(explained.hitPopup == "form")
        #expect(e.click(380, 280).click == .pass)
        #expect(e.open.count == 1)
    }

    /// The shield's holes take in the members: clicks there never reach the daemon.
    @Test func membersAreHolesWhenTheirPopupIsTheOnlyOneOpen() throws {
        let e = try engine([form])
        e.setWindowAreas([member(of: 1, e, "form", window: 0x600b5, rect(500, 100, 100, 100))])
        let holes = e.holes(in: rect(0, 0, 1280, 720))
        #expect(holes.contains(rect(500, 100, 100, 100)) || holes.contains { $0.contains(x: 550, y: 150) })
    }
}
