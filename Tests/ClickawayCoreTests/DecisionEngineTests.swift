import ClickawayCore
import Testing

@Suite("Decision engine")
struct DecisionEngineTests {
    let menu = popup("menu", rect(0, 0, 200, 300))
    let submenu = popup("submenu", rect(200, 50, 150, 100), parent: "menu")
    let subsub = popup("subsub", rect(350, 60, 100, 50), parent: "submenu")

    /// A runtime popup registered between the press and the release of a `trigger =
    /// "click"` dismissal: the new engine takes the click over and the release decides it.
    @Test func anEngineContinuingAnotherTakesTheClickInProgress() throws {
        var clicky = menu
        clicky.trigger = .click
        let before = try engine([clicky], open: ["menu"])
        let press = before.press(button: 1, x: 900, y: 600, time: 10_000)
        #expect(press.awaitsRelease)
        let grown = try ClickModel(popups: [clicky, popup("late", rect(500, 500, 10, 10))])
        let after = DecisionEngine(model: grown, continuing: before)
        after.setOpen(before.open)
        #expect(after.pending == before.pending)
        #expect(after.press(button: 1, x: 900, y: 600, time: 10_000).reason == .duplicate)
        let release = try #require(after.release(button: 1, x: 900, y: 600, time: 10_050))
        #expect(release.dismissCount == 1)
        #expect(after.open.isEmpty)
    }

    @Test func clickInParentClosesOnlyTheChild() throws {
        let e = try engine([menu, submenu])
        let d = e.click(50, 50)
        #expect(d.click == .pass)
        #expect(d.reason == .inside)
        #expect(e.dismissedNames == ["submenu"])
        #expect(e.openNames == ["menu"])
    }

    @Test func clickInChildIsInsideItsAncestorsToo() throws {
        let e = try engine([menu, submenu, subsub])
        #expect(e.click(360, 70).click == .pass)
        #expect(e.dismissed.isEmpty)
    }

    @Test func closingParentCascadesToChildrenAtAnyDepth() throws {
        let e = try engine([menu, submenu, subsub])
        let d = e.click(900, 600)
        #expect(d.click == .swallow)
        #expect(e.dismissedNames == ["menu", "submenu", "subsub"])
        #expect(e.open.isEmpty)
    }

    @Test func cascadeClosesChildrenEvenInsideTheirGracePeriod() throws {
        let e = try engine([menu, submenu], open: ["menu"])
        e.open(PopupInstance(popup: e.model.popupIndex(named: "submenu")!, rect: rect(200, 50, 150, 100), openedAt: 9_990, id: .rect(9)))
        _ = e.click(900, 600, at: 10_000)
        #expect(e.dismissedNames == ["menu", "submenu"])
    }

    @Test func childOpenWithoutItsParentIsIndependent() throws {
        let e = try engine([menu, submenu], open: ["submenu"])
        #expect(e.click(900, 600).click == .swallow)
        #expect(e.dismissedNames == ["submenu"])
    }

    @Test func clickInOnePopupDismissesAnUnrelatedOneAndPasses() throws {
        let other = popup("other", rect(600, 0, 100, 100))
        let e = try engine([menu, other])
        let d = e.click(50, 50)
        #expect(d.click == .pass)
        #expect(e.dismissedNames == ["other"])
    }

    @Test func anchorCountsAsInsideAndItsClickPasses() throws {
        let p = popup("calendar", rect(1000, 40, 300, 300)) { $0.anchors = [.rect(rect(1100, 0, 120, 32), output: nil)] }
        let e = try engine([p])
        let d = e.click(1150, 10)
        #expect(d.click == .pass)
        #expect(d.reason == .anchor)
        #expect(e.dismissed.isEmpty)
    }

    @Test func anchorOfAClosedPopupIsNothing() throws {
        let cal = popup("calendar", rect(1000, 40, 300, 300)) { $0.anchors = [.rect(rect(1100, 0, 120, 32), output: nil)] }
        let other = popup("other", rect(0, 0, 100, 100))
        let e = try engine([cal, other], open: ["other"])
        #expect(e.click(1150, 10).click == .swallow)
        #expect(e.dismissedNames == ["other"])
    }

    /// The engine counts open instances by popup only for those open before and after a
    /// change: a popup that closed must count as closed.
    @Test func anchorOfAPopupClosedSinceIsNothing() throws {
        let cal = popup("calendar", rect(1000, 40, 300, 300)) { $0.anchors = [.rect(rect(1100, 0, 120, 32), output: nil)] }
        let other = popup("other", rect(0, 0, 100, 100))
        let e = try engine([cal, other])
        e.setOpen(e.open.filter { $0.popup == 1 })
        #expect(e.click(1150, 10).reason == .outside)
        #expect(e.dismissedNames == ["other"])
        e.setOpen([PopupInstance(popup: 0, rect: cal.fixedRect!, openedAt: 0, id: .rect(9))])
        #expect(e.click(1160, 20).reason == .anchor)
    }

    @Test func anchorOfChildIsInsideTheParentChain() throws {
        let sub = popup("submenu", rect(200, 50, 150, 100), parent: "menu") { $0.anchors = [.rect(rect(500, 500, 10, 10), output: nil)] }
        let e = try engine([menu, sub])
        #expect(e.click(505, 505).click == .pass)
        #expect(e.dismissed.isEmpty)
    }

    @Test func windowAnchorsFromTheBackendCount() throws {
        let e = try engine([menu])
        e.setWindowAreas([Area(kind: .anchor(popup: 0), rect: rect(500, 0, 40, 20))])
        #expect(e.click(510, 10).reason == .anchor)
        #expect(e.dismissed.isEmpty)
    }

    @Test func exclusionDismissesNothing() throws {
        let e = try engine([menu, submenu], exclusions: [ExclusionSpec(source: .rect(rect(0, 600, 1280, 120), output: nil))])
        let d = e.click(640, 650)
        #expect(d.click == .pass)
        #expect(d.reason == .exclusion)
        #expect(e.dismissed.isEmpty)
        #expect(e.openNames == ["menu", "submenu"])
    }

    @Test func windowExclusionFromTheBackend() throws {
        let e = try engine([menu])
        e.setWindowAreas([Area(kind: .exclusion, rect: rect(800, 400, 400, 200))])
        #expect(e.click(900, 500).reason == .exclusion)
        #expect(e.dismissed.isEmpty)
    }

    @Test func exclusionOnAnOutputIsRelativeToIt() throws {
        let model = try ClickModel(popups: [menu], exclusions: [ExclusionSpec(source: .rect(rect(0, 0, 100, 100), output: "DP-1"))])
        let e = DecisionEngine(model: model, outputs: ["DP-1": rect(1280, 0, 1920, 1080)])
        e.open(PopupInstance(popup: 0, rect: rect(0, 0, 200, 300), openedAt: 0, id: .rect(1)))
        #expect(e.click(1300, 50).reason == .exclusion)
        #expect(e.click(50, 400).reason == .outside)
    }

    @Test func replayPolicyLetsTheDismissingClickGoOn() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.outsideClick = .replay }])
        let d = e.click(500, 500)
        #expect(d.click == .replay)
        #expect(e.dismissedNames == ["p"])
    }

    @Test func swallowWinsWhenDismissedPopupsDisagree() throws {
        let a = popup("a", rect(0, 0, 100, 100)) { $0.outsideClick = .replay }
        let b = popup("b", rect(200, 0, 100, 100)) { $0.outsideClick = .swallow }
        let e = try engine([a, b])
        #expect(e.click(500, 500).click == .swallow)
        #expect(e.dismissedNames == ["a", "b"])
    }

    @Test func replayWhenEveryDismissedPopupReplays() throws {
        let a = popup("a", rect(0, 0, 100, 100)) { $0.outsideClick = .replay }
        let b = popup("b", rect(200, 0, 100, 100)) { $0.outsideClick = .replay }
        let e = try engine([a, b])
        #expect(e.click(500, 500).click == .replay)
    }

    @Test func popupInsideGracePeriodIsNotDismissedAndTheClickPasses() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.graceMs = 150 }])
        let early = e.press(button: 1, x: 500, y: 500, time: 149)
        #expect(early.click == .pass)
        #expect(e.dismissed.isEmpty)
        _ = e.release(button: 1, x: 500, y: 500, time: 149)
        let late = e.press(button: 1, x: 500, y: 500, time: 150)
        #expect(late.click == .swallow)
        #expect(e.dismissedNames == ["p"])
    }

    /// `inside_click = "dismiss"`: a click on the popup reaches it (passes), then dismisses it
    /// and the popups nested in it; its anchors and its nested popups are not the popup itself.
    @Test func insideClickDismissPassesTheClickAndDismissesThePopup() throws {
        let menu = popup("menu", rect(0, 0, 100, 100)) {
            $0.insideClick = .dismiss
            $0.anchors = [.rect(rect(0, 200, 20, 20), output: nil)]
        }
        let e = try engine([menu])
        #expect(e.click(10, 210).reason == .anchor && e.dismissed.isEmpty)
        let sub = popup("sub", rect(100, 0, 50, 50), parent: "menu")
        let nested = try engine([menu, sub])
        #expect(nested.click(120, 20).click == .pass && nested.dismissed.isEmpty)
        let onIt = nested.click(50, 50)
        #expect(onIt.click == .pass && onIt.reason == .inside)
        #expect(nested.dismissedNames == ["menu", "sub"])
        // The default leaves it open.
        let plain = try engine([popup("p", rect(0, 0, 100, 100))])
        #expect(plain.click(50, 50).dismissCount == 0)
    }

    @Test func insideClickDismissKeepsTheGraceButtonsAndTrigger() throws {
        let young = try engine([popup("p", rect(0, 0, 100, 100)) { $0.insideClick = .dismiss }])
        #expect(young.press(button: 1, x: 50, y: 50, time: 149).dismissCount == 0)
        #expect(young.click(50, 50, button: 4).dismissCount == 0)
        let clicked = try engine([popup("p", rect(0, 0, 100, 100)) { $0.insideClick = .dismiss; $0.trigger = .click }])
        let press = clicked.click(50, 50)
        #expect(press.awaitsRelease && press.dismissCount == 0)
        let release = try #require(clicked.release(button: 1, x: 60, y: 60, time: 10_050))
        #expect(release.click == .pass && clicked.dismissedNames == ["p"])
    }

    /// Clicks on such a popup must reach the daemon: it is no hole in the shield or the overlay.
    @Test func aPopupDismissedFromInsideIsNoHole() throws {
        let screen = rect(0, 0, 1000, 1000)
        let plain = try engine([popup("p", rect(0, 0, 100, 100))])
        #expect(plain.holes(in: screen).contains { $0.contains(x: 50, y: 50) })
        let dismissing = try engine([popup("p", rect(0, 0, 100, 100)) { $0.insideClick = .dismiss }])
        #expect(!dismissing.holes(in: screen).contains { $0.contains(x: 50, y: 50) })
    }

    @Test func unlistedButtonsDismissNothing() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100))])
        #expect(e.click(500, 500, button: 4).click == .pass)
        #expect(e.click(500, 500, button: 5, at: 10_001).click == .pass)
        #expect(e.dismissed.isEmpty)
        #expect(e.openNames == ["p"])
    }

    @Test func wheelDismissesOnlyWhenListed() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.buttons = ButtonSet([1, 4]) }])
        #expect(e.click(500, 500, button: 3).click == .pass)
        #expect(e.click(500, 500, button: 4, at: 10_001).click == .swallow)
    }

    @Test func buttonsArePerPopup() throws {
        let a = popup("a", rect(0, 0, 100, 100)) { $0.buttons = ButtonSet([1]) }
        let b = popup("b", rect(200, 0, 100, 100)) { $0.buttons = ButtonSet([3]) }
        let e = try engine([a, b])
        #expect(e.click(500, 500, button: 3).click == .swallow)
        #expect(e.dismissedNames == ["b"])
    }

    @Test func clickTriggerWaitsForAReleaseOutside() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.trigger = .click }])
        let press = e.press(button: 1, x: 500, y: 500, time: 1000)
        #expect(press.awaitsRelease)
        #expect(press.click == .swallow)
        #expect(press.dismissCount == 0)
        #expect(e.openNames == ["p"])
        let release = try #require(e.release(button: 1, x: 510, y: 500, time: 1100))
        #expect(release.dismissCount == 1)
        #expect(e.dismissedNames == ["p"])
    }

    @Test func clickTriggerPressOutsideReleasedInsideDismissesNothing() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.trigger = .click }])
        _ = e.press(button: 1, x: 500, y: 500, time: 1000)
        let release = try #require(e.release(button: 1, x: 50, y: 50, time: 1100))
        #expect(release.dismissCount == 0)
        #expect(e.openNames == ["p"])
    }

    @Test func pressInsideReleasedOutsideNeverDismisses() throws {
        for trigger in Trigger.allCases {
            let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.trigger = trigger }])
            let press = e.press(button: 1, x: 50, y: 50, time: 1000)
            #expect(press.click == .pass)
            #expect(!press.awaitsRelease)
            #expect(e.release(button: 1, x: 500, y: 500, time: 1100) == nil)
            #expect(e.openNames == ["p"])
        }
    }

    @Test func secondButtonDuringAHeldClickDecidesNothing() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.trigger = .click }])
        _ = e.press(button: 1, x: 500, y: 500, time: 1000)
        #expect(e.press(button: 3, x: 500, y: 500, time: 1001).reason == .clickInProgress)
        #expect(e.release(button: 3, x: 500, y: 500, time: 1002) == nil)
        #expect(e.release(button: 1, x: 500, y: 500, time: 1003)?.dismissCount == 1)
    }

    @Test func clickTriggerPendingPopupClosedBeforeReleaseIsNotDismissedTwice() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100)) { $0.trigger = .click }])
        _ = e.press(button: 1, x: 500, y: 500, time: 1000)
        e.setOpen([])
        #expect(e.release(button: 1, x: 500, y: 500, time: 1100)?.dismissCount == 0)
    }

    @Test func everyMatchingWindowCountsOnItsOwn() throws {
        let model = try ClickModel(popups: [PopupSpec(name: "term", source: .window(WindowMatch(windowClass: "Popup")))])
        let e = DecisionEngine(model: model)
        e.open(PopupInstance(popup: 0, rect: rect(0, 0, 100, 100), openedAt: 0, id: .window(0x400001)))
        e.open(PopupInstance(popup: 0, rect: rect(300, 0, 100, 100), openedAt: 0, id: .window(0x400002)))
        let d = e.click(50, 50)
        #expect(d.click == .pass)
        #expect(d.hit?.instance == .window(0x400001))
        #expect(e.dismissed.map(\.id) == [.window(0x400002)])
    }

    @Test func topmostPopupWinsWhereTheyOverlap() throws {
        let low = popup("low", rect(0, 0, 200, 200))
        let high = popup("high", rect(100, 100, 200, 200))
        let e = try engine([low, high])
        #expect(e.hitTest(x: 150, y: 150)?.popup == e.model.popupIndex(named: "high"))
        let flipped = try engine([low, high], open: ["high", "low"])
        #expect(flipped.hitTest(x: 150, y: 150)?.popup == flipped.model.popupIndex(named: "low"))
    }

    @Test func dismissedPopupsLeaveAtOnceSoASecondClickCannotDismissThemAgain() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100))])
        #expect(e.click(500, 500, at: 1000).dismissCount == 1)
        let second = e.click(500, 500, at: 1200)
        #expect(second.dismissCount == 0)
        #expect(second.click == .pass)
    }

    @Test func movedWindowIsHitAtItsNewPlace() throws {
        let e = try engine([popup("p", rect(0, 0, 100, 100))])
        e.setOpen(e.open.map { var moved = $0; moved.rect = rect(400, 400, 100, 100); return moved })
        #expect(e.hitTest(x: 50, y: 50) == nil)
        #expect(e.hitTest(x: 450, y: 450) != nil)
    }

    @Test func noPopupOpenPassesEverything() throws {
        let e = try engine([menu], open: [])
        let d = e.click(10, 10)
        #expect(d.click == .pass)
        #expect(d.dismissCount == 0)
    }
}

@Suite("Model validation")
struct ModelValidationTests {
    @Test func duplicateNamesUnknownParentCyclesAndRedirects() {
        let popups = [
            popup("a", rect(0, 0, 1, 1), parent: "b"),
            popup("b", rect(0, 0, 1, 1), parent: "a"),
            popup("c", rect(0, 0, 1, 1), parent: "menuu"),
            popup("menu", rect(0, 0, 1, 1), regions: [RegionSpec(name: "x", rect: rect(0, 0, 1, 1), redirect: "y")]),
            popup("menu", rect(0, 0, 1, 1)),
        ]
        let problems = ModelValidator.problems(popups: popups).map(\.description)
        #expect(problems.contains("popup \"menu\" → name: duplicate popup name \"menu\" (first used by popup #4)"))
        #expect(problems.contains("popup \"c\" → parent: unknown parent \"menuu\"; did you mean \"menu\"?"))
        #expect(problems.contains { $0.contains("parent cycle: \"a\" → \"b\" → \"a\"") })
        #expect(problems.contains { $0.hasPrefix("popup \"menu\" → region \"x\" → redirect: unknown redirect target \"y\"") })
        #expect(throws: ClickModel.Invalid.self) { try ClickModel(popups: popups) }
    }

    /// A did-you-mean looks at every name: among more than `suggestionCandidatesLimit` popups
    /// an unknown parent gets none, so a file of them is checked in time.
    @Test func unknownParentsAmongManyPopupsGetNoSuggestion() {
        let few = [popup("menu", rect(0, 0, 1, 1)), popup("c", rect(0, 0, 1, 1), parent: "menuu")]
        #expect(ModelValidator.problems(popups: few).map(\.description)
            == ["popup \"c\" → parent: unknown parent \"menuu\"; did you mean \"menu\"?"])
        let many = few + (0..<suggestionCandidatesLimit).map { popup("p\($0)", rect(0, 0, 1, 1)) }
        #expect(ModelValidator.problems(popups: many).map(\.description) == ["popup \"c\" → parent: unknown parent \"menuu\""])
    }

    @Test func selfParentIsReported() {
        let problems = ModelValidator.problems(popups: [popup("a", rect(0, 0, 1, 1), parent: "a")])
        #expect(problems.map(\.description) == ["popup \"a\" → parent: a popup cannot be its own parent"])
    }

    @Test func globMatching() {
        #expect(Glob.matches("*Calendar*", "My Calendar – May"))
        #expect(Glob.matches("vol?me", "volume"))
        #expect(Glob.matches("[a-c]x", "bx"))
        #expect(!Glob.matches("[!a-c]x", "bx"))
        #expect(!Glob.matches("*.png", "a.jpg"))
        #expect(Glob.matches("a\\*", "a*"))
        #expect(!Glob.matches("a\\*", "ab"))
    }

    @Test func windowMatchNeedsEveryKeyItSets() {
        let m = WindowMatch(windowClass: "Eww", titleGlob: "cal*", type: "dock")
        #expect(m.matches(.init(windowClass: "Eww", title: "calendar", types: ["dock"])))
        #expect(!m.matches(.init(windowClass: "Eww", title: "calendar", types: ["normal"])))
        #expect(!m.matches(.init(windowClass: "eww", title: "calendar", types: ["dock"])))
        #expect(!WindowMatch().matches(.init(windowClass: "x")))
    }
}

@Suite struct GeometryLimitTests {
    @Test func expandingByAHugeSlopSaturatesInsteadOfWrapping() {
        let r = Rect(x: 10, y: 10, width: 100, height: 100).expanded(by: Insets(all: .max))
        #expect(r.contains(x: 10, y: 10) && r.contains(x: 60, y: 60) && r.contains(x: 109, y: 109))
        #expect(r.contains(x: .max - 1, y: .max - 1))
        #expect(r.width == .max)
        #expect(Rect(x: .max, y: 0, width: 1, height: 1).offsetBy(dx: 5, dy: 0).x == .max)
    }

    /// `slop = 2000000000` wrapped Rect.expanded, so a click in the popup's centre dismissed
    /// it. The loader refuses it now, and the engine stays right even if built with it.
    @Test func aClickInThePopupWithAnEnormousSlopIsInside() throws {
        let popup = PopupSpec(name: "p", source: .rect(Rect(x: 100, y: 100, width: 200, height: 200), output: nil),
                              slop: Insets(all: 2_000_000_000), regions: [
                                  RegionSpec(name: "r", rect: Rect(x: 10, y: 10, width: 20, height: 20), slop: Insets(all: .max)),
                              ])
        let engine = DecisionEngine(model: try ClickModel(popups: [popup]))
        engine.open(PopupInstance(popup: 0, rect: popup.fixedRect!, openedAt: 0, id: .rect(1)))
        #expect(engine.press(button: 1, x: 200, y: 200, time: 1_000).dismissCount == 0)
        #expect(engine.hitTest(x: 200, y: 200)?.region != nil)
        #expect(engine.hitTest(x: -1_000_000_000, y: 1_000_000_000) != nil, "the slop reaches that far")
        #expect(engine.hitTest(x: .min, y: 200) == nil, "and no farther")
    }

    /// A point far from a popup at the edge of 32 bits stays far: no wrap-around into it.
    @Test func pointsAtTheEdgesOfThirtyTwoBitsDoNotWrapIntoAPopup() throws {
        let popup = PopupSpec(name: "p", source: .rect(Rect(x: -2_000_000_000, y: 0, width: 10, height: 10), output: nil))
        let engine = DecisionEngine(model: try ClickModel(popups: [popup]))
        engine.open(PopupInstance(popup: 0, rect: popup.fixedRect!, openedAt: 0, id: .rect(1)))
        #expect(engine.hitTest(x: 2_000_000_000, y: 5) == nil)
        #expect(engine.hitTest(x: -1_999_999_995, y: 5) != nil)
    }
}
