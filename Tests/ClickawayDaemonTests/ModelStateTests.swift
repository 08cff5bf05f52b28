import ClickawayCore
@testable import ClickawayDaemon
import Testing

/// The model in use and how it stands to the runtime popups: a model built for an older
/// change is dropped, the windows to look at anew add up, and an ended popup is out.
@Suite struct ModelStateTests {
    static let model = try! ClickModel(popups: [PopupSpec(name: "note", source: .rect(Rect(x: 0, y: 0, width: 10, height: 10), output: nil))])

    @Test func aModelBuiltBeforeTheLastChangeIsDroppedAndTheNextIsDue() {
        var models = ModelState(Self.model)
        #expect(models.isCurrent && !models.wantsBuild)
        models.runtimeChanged(.window(7))
        #expect(models.wantsBuild)
        let first = models.startBuilding()
        #expect(!models.wantsBuild, "a second build started while one is under way")
        models.runtimeChanged(.window(7))
        #expect(models.takeBuilt(forChange: first) == nil)
        #expect(models.wantsBuild)
        #expect(models.takeBuilt(forChange: models.startBuilding()) == .window(7))
        #expect(models.isCurrent)
    }

    @Test(arguments: [
        ([WindowLookup.none, .window(1)], WindowLookup.window(1)),
        ([.window(1), .none], .window(1)),
        ([.window(1), .window(1)], .window(1)),
        ([.window(1), .window(2)], .all),
        ([.all, .none], .all),
    ])
    func windowsToLookAtAddUp(_ changes: [WindowLookup], _ expected: WindowLookup) {
        var models = ModelState(Self.model)
        for change in changes { models.runtimeChanged(change) }
        #expect(models.takeBuilt(forChange: models.startBuilding()) == expected)
    }

    @Test func anEndedPopupIsOutUntilTheNextModel() {
        var models = ModelState(Self.model)
        models.end("note")
        #expect(models.hasEnded("note") && models.liveIndex("note") == nil && !models.isCurrent)
        _ = models.swap(to: Self.model)
        #expect(!models.hasEnded("note") && models.liveIndex("note") == 0)
        models.runtimeChanged(.none)
        models.configurationReplaced()
        #expect(!models.wantsBuild, "a reload's model leaves no build due for the old configuration")
    }
}
