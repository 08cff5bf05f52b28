import ClickawayCore
@testable import ClickawayDaemon
import Logging
import Testing

@Suite struct WindowRosterTests {
    static let model = try! ClickModel(
        popups: [
            PopupSpec(name: "menu", source: .window(WindowMatch(windowClass: "Menu")),
                      anchors: [.window(WindowMatch(windowClass: "Bar"))]),
            PopupSpec(name: "term", source: .window(WindowMatch(windowClass: "Term"))),
        ],
        exclusions: [ExclusionSpec(source: .window(WindowMatch(windowClass: "Keyboard")))])

    func roster() -> WindowRoster<Bool> {
        WindowRoster(model: Self.model, naming: .hex, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
    }

    static let menu = WindowMatch.Properties(windowClass: "Menu")
    static let term = WindowMatch.Properties(windowClass: "Term")
    static let rect = Rect(x: 10, y: 10, width: 100, height: 100)

    @Test func aWindowThatStaysTheSamePopupKeepsTheTimeItOpened() {
        let r = roster()
        #expect(r.update(1, window: 11, rect: Self.rect, properties: Self.menu, details: true, now: 1000))
        // A new title, the same class: the same popup, opened at 1000 still.
        #expect(!r.update(1, window: 11, rect: Self.rect, properties: WindowMatch.Properties(windowClass: "Menu", title: "x"),
                          details: true, now: 5000))
        #expect(r[1]?.openedAt == 1000)
        // Another popup now: it opened just now.
        #expect(r.update(1, window: 11, rect: Self.rect, properties: Self.term, details: true, now: 6000))
        #expect(r[1]?.openedAt == 6000)
        // Another client window under the same frame opens anew too.
        #expect(r.update(1, window: 12, rect: Self.rect, properties: Self.term, details: true, now: 7000))
        #expect(r[1]?.openedAt == 7000)
    }

    @Test func windowsWithoutARoleAreNotKept() {
        let r = roster()
        #expect(!r.update(1, window: 11, rect: Self.rect, properties: WindowMatch.Properties(windowClass: "XTerm"), details: false, now: 0))
        #expect(r.count == 0)
        r.update(1, window: 11, rect: Self.rect, properties: Self.menu, details: false, now: 0)
        #expect(r.update(1, window: 11, rect: Self.rect, properties: WindowMatch.Properties(windowClass: "XTerm"), details: false, now: 0))
        #expect(r.count == 0)
    }

    @Test func openInstancesFollowTheStackingAndLeaveOutWindowsClosing() {
        let r = roster()
        r.update(1, window: 11, rect: Self.rect, properties: Self.menu, details: true, now: 0)
        r.update(2, window: 22, rect: Self.rect, properties: Self.term, details: true, now: 0)
        r.update(3, window: 33, rect: Self.rect, properties: WindowMatch.Properties(windowClass: "Bar"), details: true, now: 0)
        r.stacking = [9, 2, 3, 1]
        #expect(r.openInstances().map(\.id) == [.window(22), .window(11)])
        r.closing.mark(22, now: 0)
        #expect(r.openInstances().map(\.id) == [.window(11)])
        #expect(r.windowAreas() == [Area(kind: .anchor(popup: 0), rect: Self.rect)])
        #expect(r.isPresent(22) && !r.isPresent(2))
        // Gone: no longer closing either.
        #expect(r.forget(2))
        #expect(!r.closing.contains(22))
        #expect(!r.forget(2))
    }

    @Test func aNewWindowIsNotClosingEvenIfItsIdWas() {
        let r = roster()
        r.closing.mark(11, now: 0)
        r.update(1, window: 11, rect: Self.rect, properties: Self.menu, details: true, now: 0)
        #expect(!r.closing.contains(11))
    }

    @Test func aNewConfigurationMatchesTheKnownWindowsAgain() throws {
        let r = roster()
        r.update(1, window: 11, rect: Self.rect, properties: Self.menu, details: true, now: 100)
        r.update(2, window: 22, rect: Self.rect, properties: Self.term, details: true, now: 100)
        r.stacking = [1, 2]
        let onlyTerm = try ClickModel(popups: [PopupSpec(name: "term", source: .window(WindowMatch(windowClass: "Term")))])
        r.rematch(onlyTerm)
        #expect(r.openInstances().map(\.popup) == [0])
        #expect(r[2]?.openedAt == 100)
        #expect(r[1] == nil)
    }

    @Test func windowsAreWrittenAsTheirDisplayWritesThem() {
        #expect(roster().describe(0x1a00003) == "0x1a00003")
        #expect(WindowRoster<Int32>(model: Self.model, naming: .decimal, logger: Logger(label: "t")).describe(42) == "42")
    }
}

@Suite struct ClosingWindowsTests {
    @Test func windowsCloseWithinTheirTimeOrCountAsOpenAgain() {
        var closing = ClosingWindows()
        #expect(closing.nextDeadline == nil)
        closing.mark(1, now: 1000)
        closing.mark(2, now: 1500)
        #expect(closing.contains(1) && closing.contains(2))
        #expect(closing.nextDeadline == 1000 + ClosingWindows.timeoutMs)
        let early = closing.expire(now: 2999)
        #expect(early.isEmpty)
        let due = closing.expire(now: 3000)
        #expect(due == [1])
        #expect(!closing.contains(1))
        let cancelled = closing.cancel(2)
        let again = closing.cancel(2)
        #expect(cancelled && !again)
        #expect(closing.nextDeadline == nil)
        let late = closing.expire(now: 10_000)
        #expect(late.isEmpty)
    }
}
