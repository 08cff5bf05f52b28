import ClickawayControl
import ClickawayCore
import ClickawaySystem
@testable import ClickawayDaemon
import Testing

@Suite struct RectPopupsTests {
    static let model = try! ClickModel(popups: [
        PopupSpec(name: "menu", source: .rect(Rect(x: 0, y: 0, width: 100, height: 100), output: nil)),
        PopupSpec(name: "submenu", parent: "menu", source: .rect(Rect(x: 100, y: 0, width: 50, height: 50), output: nil)),
        PopupSpec(name: "panel", source: .rect(Rect(x: 5, y: 5, width: 10, height: 10), output: "DP-1")),
        PopupSpec(name: "term", source: .window(WindowMatch(windowClass: "Term"))),
    ])
    static let outputs = ["DP-1": Rect(x: 1920, y: 0, width: 1920, height: 1080)]

    @Test func openCloseAndToggle() throws {
        var rects = RectPopups()
        #expect(try rects.set("menu", open: { _ in true }, model: Self.model, outputs: [:], now: 10).get())
        #expect(try rects.set("submenu", open: { !$0 }, model: Self.model, outputs: [:], now: 20).get())
        #expect(rects.instances(Self.model, outputs: [:]).map(\.popup) == [0, 1])
        #expect(rects.instances(Self.model, outputs: [:]).map(\.openedAt) == [10, 20])
        // Closing a parent closes its children.
        #expect(try !rects.set("menu", open: { _ in false }, model: Self.model, outputs: [:], now: 30).get())
        #expect(rects.instances(Self.model, outputs: [:]).isEmpty)
    }

    @Test func aPopupOnAnOutputIsPlacedOnItAndNeedsIt() throws {
        var rects = RectPopups()
        #expect(throws: Refusal.self) { try rects.set("panel", open: { _ in true }, model: Self.model, outputs: [:], now: 0).get() }
        _ = try rects.set("panel", open: { _ in true }, model: Self.model, outputs: Self.outputs, now: 0).get()
        #expect(rects.instances(Self.model, outputs: Self.outputs).map(\.rect) == [Rect(x: 1925, y: 5, width: 10, height: 10)])
        // The output went away: the popup stays open, but nowhere to be clicked.
        #expect(rects.instances(Self.model, outputs: [:]).isEmpty)
    }

    @Test func windowPopupsAndUnknownNamesAreRefused() {
        var rects = RectPopups()
        let window = rects.set("term", open: { _ in true }, model: Self.model, outputs: [:], now: 0)
        #expect(throws: Refusal("popup \"term\" is a window popup: it is open while its window is mapped, so it cannot be opened or closed by name")) {
            try window.get()
        }
        let unknown = rects.set("men", open: { _ in true }, model: Self.model, outputs: [:], now: 0)
        #expect(throws: Refusal.self) { try unknown.get() }
        if case .failure(let refusal) = unknown { #expect(refusal.message.contains("did you mean \"menu\"")) }
    }

    @Test func instanceIdsStayAcrossReloadsAndRepeatNever() throws {
        var rects = RectPopups()
        _ = try rects.set("menu", open: { _ in true }, model: Self.model, outputs: [:], now: 0).get()
        let first = rects.instances(Self.model, outputs: [:]).map(\.id)
        let reloaded = try ClickModel(popups: [PopupSpec(name: "menu", source: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil))])
        rects.keep(in: reloaded)
        #expect(rects.instances(reloaded, outputs: [:]).map(\.id) == first)
        rects.dismissed(first[0])
        _ = try rects.set("menu", open: { _ in true }, model: reloaded, outputs: [:], now: 0).get()
        #expect(rects.instances(reloaded, outputs: [:]).map(\.id) != first)
        // A popup that is no longer a rect popup closes.
        rects.keep(in: try ClickModel(popups: [PopupSpec(name: "menu", source: .window(WindowMatch(windowClass: "M")))]))
        #expect(rects.instances(reloaded, outputs: [:]).isEmpty)
    }
}

@Suite struct RuntimePopupsTests {
    static func entry(_ name: String, parent: String? = nil, place: RuntimePopups.Place = .rect) -> RuntimePopups.Entry {
        RuntimePopups.Entry(spec: PopupSpec(name: name, parent: parent, source: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil)),
                            place: place, owner: nil, unanswered: nil)
    }

    @Test func removingAPopupRemovesTheRuntimePopupsNestedInIt() {
        var runtime = RuntimePopups()
        for e in [Self.entry("a", parent: "menu"), Self.entry("b", parent: "a"), Self.entry("c", parent: "b"), Self.entry("d")] {
            runtime.append(e)
        }
        let removed = runtime.remove(["a"])
        #expect(removed.map(\.entry.name) == ["a", "b", "c"])
        #expect(removed.map(\.named) == [true, false, false])
        #expect(runtime.specs.map(\.name) == ["d"])
        #expect(runtime.remove(["menu"]).isEmpty, "a configured popup is not runtime's to remove")
    }

    @Test func aNewConfigurationKeepsThePopupsThatStillFit() throws {
        var runtime = RuntimePopups()
        for e in [Self.entry("clash"), Self.entry("child", parent: "menu"), Self.entry("grandchild", parent: "child"), Self.entry("free")] {
            runtime.append(e)
        }
        let configured = try ClickModel(popups: [PopupSpec(name: "clash", source: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil))])
        #expect(runtime.keep(besides: configured).map(\.name) == ["clash", "child", "grandchild"])
        #expect(runtime.specs.map(\.name) == ["free"])
    }

    @Test func waitsForWindowsExpireAtTheirDeadlineAndResolveToTheirWindow() {
        var runtime = RuntimePopups()
        runtime.append(Self.entry("soon", place: .pid(7, deadline: Deadline(milliseconds: 100), timeoutMs: 100)))
        runtime.append(Self.entry("later", place: .pid(8, deadline: Deadline(milliseconds: 900), timeoutMs: 900)))
        #expect(runtime.nextDeadline == Deadline(milliseconds: 100))
        #expect(runtime.expire(now: 99).isEmpty)
        #expect(runtime.expire(now: 100).map(\.name) == ["soon"])
        let resolved = runtime.resolve("later", to: 0x42)
        #expect(resolved?.place == .window(0x42))
        #expect(runtime.entry(named: "later")?.spec.source == .window(WindowMatch(window: 0x42)))
        #expect(runtime.nextDeadline == nil)
        #expect(runtime.name(ofWindow: 0x42) == "later")
    }

    @Test func freshNamesSkipTakenOnes() {
        var runtime = RuntimePopups()
        #expect(runtime.freshName { $0 == "runtime-1" } == "runtime-2")
        #expect(runtime.freshName { _ in false } == "runtime-3")
    }
}
