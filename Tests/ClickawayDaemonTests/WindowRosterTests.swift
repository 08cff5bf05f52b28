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

    /// The records a logger was given, message and metadata.
    final class Records: @unchecked Sendable {
        var lines: [(message: String, metadata: Logger.Metadata)] = []
    }

    struct RecordingHandler: LogHandler {
        let records: Records
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { records.lines.append(("\(event.message)", event.metadata ?? [:])) }
    }

    /// A burst of popup windows is logged at most 50 records a second; the next record says
    /// how many were left out.
    @Test func aBurstOfPopupsIsLoggedAtAPaceAndSaysWhatItLeftOut() {
        let records = Records()
        let r = WindowRoster<Bool>(model: Self.model, naming: .hex, logger: Logger(label: "test") { _ in RecordingHandler(records: records) })
        var now: Int64 = 0
        r.openingsPace = LogPace(perSecond: 50) { now }
        for w in UInt32(1)...200 { r.update(w, window: w, rect: Self.rect, properties: Self.menu, details: true, now: 0) }
        for w in UInt32(1)...100 { r.forget(w) }
        #expect(records.lines.count == 50)
        #expect(records.lines.allSatisfy { $0.message == "popup opened" && $0.metadata["unlogged"] == nil })
        now = 1000
        r.forget(150)
        #expect(records.lines.count == 51)
        #expect(records.lines.last?.message == "popup closed")
        #expect(records.lines.last?.metadata["unlogged"] == "250 popups opened or closed before this one, in a burst")
        r.forget(151)
        #expect(records.lines.last?.metadata["unlogged"] == nil, "counted once")
    }

    @Test func windowsWithoutARoleAreNotKept() {
        let r = roster()
        #expect(!r.update(1, window: 11, rect: Self.rect, properties: WindowMatch.Properties(windowClass: "XTerm"), details: false, now: 0))
        #expect(r.count == 0)
        r.update(1, window: 11, rect: Self.rect, properties: Self.menu, details: false, now: 0)
        #expect(r.update(1, window: 11, rect: Self.rect, properties: WindowMatch.Properties(windowClass: "XTerm"), details: false, now: 0))
        #expect(r.count == 0)
    }

    @Test func openInstancesFollowTheStacking() {
        let r = roster()
        r.update(1, window: 11, rect: Self.rect, properties: Self.menu, details: true, now: 0)
        r.update(2, window: 22, rect: Self.rect, properties: Self.term, details: true, now: 0)
        r.update(3, window: 33, rect: Self.rect, properties: WindowMatch.Properties(windowClass: "Bar"), details: true, now: 0)
        r.stacking = [9, 2, 3, 1]
        #expect(r.openInstances().map(\.id) == [.window(22), .window(11)])
        #expect(r.isPresent(22) && !r.isPresent(2))
        #expect(r.forget(2))
        #expect(r.openInstances().map(\.id) == [.window(11)])
        #expect(!r.forget(2))
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

    /// What `openInstances` and `windowAreas` answer, worked out from the entries as they
    /// are: the roster keeps both as windows come, move and go, and must answer the same.
    static func expectedOpen(_ r: WindowRoster<Bool>) -> [PopupInstance] {
        r.stacking.compactMap { key in
            guard let e = r[key], let popup = e.roles.popup else { return nil }
            return PopupInstance(popup: popup, rect: e.rect, openedAt: e.openedAt, id: .window(e.window))
        }
    }

    static func expectedAreas(_ r: WindowRoster<Bool>) -> [String] {
        var areas: [Area] = []
        for e in r.entries.values {
            if let family = e.family, let popup = r.popupOf(window: family) {
                areas.append(Area(kind: .member(of: .window(family), popup: popup, window: e.window), rect: e.rect))
            }
            for popup in e.roles.anchors { areas.append(Area(kind: .anchor(popup: popup), rect: e.rect)) }
            if e.roles.excluded { areas.append(Area(kind: .exclusion, rect: e.rect)) }
        }
        return areas.map { "\($0)" }.sorted()
    }

    /// Windows mapped, changed, moved, restacked and gone in random order (seeded:
    /// a failure names its seed and step), the answers asked after each change.
    @Test(arguments: 0..<40) func answersFollowEveryChangeAsIfWorkedOutAfresh(seed: UInt64) {
        var g = SplitMix64(seed: seed)
        let r = roster()
        let classes = ["Menu", "Term", "Bar", "Keyboard", "Other"]
        func rect() -> Rect { Rect(x: Int32(g.next() % 50), y: Int32(g.next() % 50), width: 10, height: 10) }
        for step in 0..<300 {
            let key = UInt32(g.next() % 12) + 1
            switch g.next() % 8 {
            case 0, 1, 2:
                let window = key * 10 + UInt32(g.next() % 2)
                let owner = g.next() % 3 == 0 ? Optional(UInt32(g.next() % 12 + 1) * 10) : nil
                r.update(key, window: window, rect: rect(), properties: WindowMatch.Properties(windowClass: classes[Int(g.next() % 5)]),
                         details: true, family: owner == window ? nil : owner, now: Int64(step))
            case 3: _ = r.move(key, to: rect())
            case 4: r.forget(key)
            case 5: r.stackOnTop(key)
            case 6: r.unstack(key)
            default:
                if g.next() % 8 == 0 {
                    r.stacking.shuffle(using: &g)
                } else {
                    r.restack(key, above: UInt32(g.next() % 13))
                }
            }
            guard r.openInstances() == Self.expectedOpen(r), r.windowAreas().map({ "\($0)" }).sorted() == Self.expectedAreas(r) else {
                Issue.record(Comment(rawValue: "seed \(seed), step \(step): open \(r.openInstances()) (expected \(Self.expectedOpen(r))), "
                                         + "areas \(r.windowAreas()) (expected \(Self.expectedAreas(r)))"))
                return
            }
        }
    }

    /// Windows restacked again and again into the same gap: the numbers that keep the open
    /// popups in order run out of halves, and are drawn afresh.
    @Test func popupsStayInOrderThroughManyRestacksInOnePlace() {
        let r = roster()
        for key: UInt32 in 1...3 { r.update(key, window: key * 10, rect: Self.rect, properties: Self.term, details: true, now: 0) }
        // Above window 9 (no popup), so that the gap is between 1 and 2, not near 0.
        r.stacking = [9, 1, 2, 3]
        for i in 0..<200 {
            r.restack(i % 2 == 0 ? 3 : 2, above: 1)
            guard r.openInstances() == Self.expectedOpen(r) else {
                Issue.record("restack \(i): \(r.openInstances().map(\.id)), the stacking \(r.stacking)")
                return
            }
        }
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
        closing.mark(1, openedAt: 0, now: 1000)
        closing.mark(2, openedAt: 0, now: 1500)
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

    /// A window being closed is no open popup, nor are its family's windows inside it; one
    /// that went, or opened anew under its id, is closing no more.
    @Test func windowsClosingAreLeftOutUntilTheyGoOrOpenAnew() {
        let rect = Rect(x: 0, y: 0, width: 10, height: 10)
        func instance(_ window: UInt32, openedAt: Int64) -> PopupInstance {
            PopupInstance(popup: 0, rect: rect, openedAt: openedAt, id: .window(window))
        }
        let member = Area(kind: .member(of: .window(1), popup: 0, window: 5), rect: rect)
        let anchor = Area(kind: .anchor(popup: 0), rect: rect)
        var closing = ClosingWindows()
        closing.mark(1, openedAt: 100, now: 0)
        closing.mark(2, openedAt: 100, now: 0)
        closing.mark(3, openedAt: 100, now: 0)
        var open = [instance(1, openedAt: 100), instance(2, openedAt: 200), instance(4, openedAt: 100)]
        var areas = [member, anchor]
        // 2 opened anew, 3 went: both forgotten; 1 is still being closed.
        #expect(closing.leaveOut(of: &open, &areas))
        #expect(open == [instance(2, openedAt: 200), instance(4, openedAt: 100)])
        #expect(areas == [anchor])
        #expect(closing.contains(1) && !closing.contains(2) && !closing.contains(3))
        var unchanged = [instance(1, openedAt: 100)], none: [Area] = []
        #expect(!closing.leaveOut(of: &unchanged, &none))
        #expect(unchanged.isEmpty)
    }
}

/// A seeded generator: the same seed, the same windows.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
