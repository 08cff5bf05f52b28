import ClickawayControl
import ClickawayCore
@testable import ClickawayDaemon
import ClickawayJSON
import ClickawaySystem
import Foundation
import ProcessSupport
import Testing

/// The daemon's own logic on a scripted display: what it decides, in which order it acts,
/// what it tells the display and its clients. Milliseconds each; what X and compositors do
/// with the answers is the end-to-end suites' part.
@Suite struct DaemonLogicTests {
    static func popup(_ name: String, class windowClass: String, _ extra: String = "") -> String {
        """
        [[popup]]
        name = "\(name)"
        window = { class = "\(windowClass)" }
        grace_ms = 0
        \(extra)

        """
    }

    static let menuRect = Rect(x: 100, y: 100, width: 200, height: 200)
    static let subRect = Rect(x: 300, y: 100, width: 100, height: 100)

    /// The popups open, as the display was last told to intercept for them.
    func intercepting(_ effects: [ScriptedDisplay.Effect]) -> [String]? {
        for effect in effects.reversed() { if case .intercepting(let open) = effect { return open } }
        return nil
    }

    // MARK: - Windows changing in a burst

    /// Settles for windows wait while they keep changing (here: every settle is paced for
    /// seconds), but a click, and a request, see the windows as they are.
    @Test func whileWindowsChangesWaitAClickAndARequestSeeThemAsTheyAre() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.daemon.pacing = SettlePacing(immediateMicroseconds: 0, spacing: 1_000_000)
        d.display.map(1, class: "Menu", at: Self.subRect)
        d.step()
        #expect(d.daemon.openNames == ["menu"])
        _ = d.display.takeEffects()
        // The last settle was paced: the next windows' change waits for it.
        d.display.unmap(1)
        d.display.map(2, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(d.daemon.openNames == ["menu"])
        #expect(intercepting(d.display.takeEffects()) == nil)
        let status = try d.request(#"{"request":"status"}"#)
        #expect(status.contains("0x2"), "status answered before the windows were settled: \(status)")

        d.display.unmap(2)
        d.display.map(3, class: "Menu", at: Self.menuRect)
        d.step()
        // Inside window 3; outside the window 2 it replaced, which is gone.
        d.display.press(150, 150)
        d.step()
        let effects = d.display.takeEffects()
        #expect(effects.first == .answered(press: true, button: 1, x: 150, y: 150, click: .pass, reason: .inside))
        #expect(!effects.contains { if case .closed = $0 { true } else { false } })
        d.display.press(600, 500)
        d.step()
        #expect(d.display.takeEffects().contains(.closed(window: 3, popup: "menu")))
    }

    /// A family of a thousand windows (one program's menus) is a count in `status` past its
    /// first windows: the reply stays small, and a monitor still hears of every member.
    @Test func statusNamesAFamilysFirstWindowsAndCountsTheRest() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        let monitor = try MonitorRectTests.subscribe(d)
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        let family = 1000
        for window in 2...UInt32(family + 1) {
            d.display.map(window, class: "Item", at: Rect(x: 100 + Int32(window % 50), y: 100, width: 20, height: 20), family: 1)
        }
        d.step()
        let status = try JSON.parse(try d.request(#"{"request":"status"}"#))
        let open = try #require(status["open"]?.arrayValue?.first)
        let limit = OpenPopup.statusMemberLimit
        #expect(open["members"]?.arrayValue?.map(\.stringValue) == (2...UInt32(limit + 1)).map { "0x\(String($0, radix: 16))" })
        let ties: [(String, JSON)]? = if case .object(let ties) = open["ties"] { ties } else { nil }
        #expect(ties?.count == limit, "\(open.text)")
        #expect(open["members_left_out"]?.intValue == Int64(family - limit))
        let report = try StatusReport(reply: status)
        #expect(report.open.first?.membersText.hasSuffix(", and \(family - limit) more") == true)
        let heard = try MonitorRectTests.events(monitor, d).last { $0["event"]?.stringValue == "family" }
        #expect(heard?["members"]?.arrayValue?.count == family)
        #expect(heard?["members_left_out"] == nil)
    }

    /// A burst of a program's popups open at once is a count in `status` past its first ones;
    /// every popup open is listed, however many windows another has open.
    @Test func statusListsEachPopupsFirstWindowsAndCountsTheRest() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu") + Self.popup("other", class: "Other"))
        let count = 300
        for window in 1...UInt32(count) {
            d.display.map(window, class: "Menu", at: Rect(x: 100 + Int32(window % 50), y: 100, width: 20, height: 20))
        }
        d.display.map(1000, class: "Other", at: Self.subRect)
        d.step()
        #expect(d.daemon.openNames.count == count + 1)
        let report = try StatusReport(reply: JSON.parse(try d.request(#"{"request":"status"}"#)))
        #expect(report.open.filter { $0.popup == "menu" }.count == StatusReport.instanceLimit)
        #expect(report.open.filter { $0.popup == "other" }.map(\.window) == ["0x3e8"])
        #expect(report.openLeftOut == count - StatusReport.instanceLimit)
    }

    // MARK: - Monitors

    /// With nobody listening the daemon keeps no record of what it announced; a monitor that
    /// subscribes hears of what changes from then on: what closes of what was open before,
    /// what opens after, and nothing twice.
    @Test func aMonitorHearsWhatChangesAfterItSubscribedAndNothingBefore() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu") + Self.popup("sub", class: "Sub"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(d.daemon.openNames == ["menu"])
        let monitor = try d.connect()
        try monitor.send(#"{"request":"monitor"}"#)
        #expect(try monitor.reply(from: d, to: "monitor").contains(#""ok":true"#))
        d.display.map(2, class: "Sub", at: Self.subRect)
        d.step()
        d.display.unmap(1)
        d.step()
        _ = try d.request(#"{"request":"sync"}"#)
        var events: [String] = []
        while let line = monitor.line() { events.append(line) }
        let names = events.compactMap { try? JSON.parse($0) }.map { "\($0["event"]?.stringValue ?? "?") \($0["popup"]?.stringValue ?? "?")" }
        #expect(names == ["opened sub", "closed menu"], "\(events)")
    }

    /// Where the interception takes clicks only once the display has synced (Wayland's
    /// overlay), monitors hear "opened" after that sync, and nothing waits on the loop.
    @Test func aPopupIsAnnouncedOnceTheDisplayHasItsInterception() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.interceptionWaitsForSync = true
        d.display.syncsWait = true
        let monitor = try d.connect()
        try monitor.send(#"{"request":"monitor"}"#)
        #expect(try monitor.reply(from: d, to: "monitor").contains(#""ok":true"#))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        try d.step(until: "the daemon to sync after taking clicks for the menu") { d.display.syncsStarted.count == 1 }
        #expect(d.daemon.openNames == ["menu"])
        #expect(monitor.line() == nil, "a monitor heard of the menu before the display had its interception")
        d.display.finishSyncs()
        d.step()
        let opened = try #require(monitor.line())
        #expect(try JSON.parse(opened)["event"]?.stringValue == "opened", "\(opened)")
    }

    // MARK: - Clicks

    @Test func anOutsideClickIsAnsweredFirstThenThePopupClosedThenTheInterceptionEnds() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(intercepting(d.display.takeEffects()) == ["menu"])

        d.display.press(600, 500)
        d.step()
        #expect(d.display.takeEffects() == [
            .answered(press: true, button: 1, x: 600, y: 500, click: .swallow, reason: .outside),
            .closed(window: 1, popup: "menu"),
            .intercepting([]),
            .acted(press: true),
        ])
    }

    /// A popup opened just before a click (its settle paced) counts for the click, but the
    /// click is answered before the interception follows it.
    @Test func aClickRightAfterWindowsChangedIsAnsweredBeforeTheInterceptionFollows() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu") + Self.popup("sub", class: "Sub"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(intercepting(d.display.takeEffects()) == ["menu"])
        // Settles for windows wait for hours, whatever the machine's pauses.
        d.daemon.pacing = SettlePacing(immediateMicroseconds: 0, spacing: 1_000_000)
        d.daemon.pacing.settled(tookMicroseconds: 10_000, now: MonotonicClock.microseconds())
        let monitor = try d.connect()
        try monitor.send(#"{"request":"monitor"}"#)
        #expect(try monitor.reply(from: d, to: "monitor").contains(#""ok":true"#))

        d.display.map(2, class: "Sub", at: Self.subRect)
        d.display.press(600, 500)
        d.step()
        let effects = d.display.takeEffects()
        #expect(effects.first == .answered(press: true, button: 1, x: 600, y: 500, click: .swallow, reason: .outside), "\(effects)")
        #expect(effects.contains(.closed(window: 1, popup: "menu")) && effects.contains(.closed(window: 2, popup: "sub")), "\(effects)")
        #expect(!effects.contains(.intercepting(["menu", "sub"])), "the interception followed the new popup before the answer: \(effects)")
        #expect(effects.last == .acted(press: true))
        // A monitor hears the popup open before it hears it dismissed, then both closed.
        _ = try d.request(#"{"request":"sync"}"#)
        var events: [String] = []
        while let line = monitor.line() { events.append(line) }
        let names = events.compactMap { try? JSON.parse($0) }.map { event in
            "\(event["event"]?.stringValue ?? "?") \(event["popup"]?.stringValue ?? (event["popups"]?.arrayValue?.compactMap(\.stringValue).sorted().joined(separator: ",") ?? "?"))"
        }
        #expect(names == ["opened sub", "dismissed menu,sub", "closed menu", "closed sub"] || names == ["opened sub", "dismissed menu,sub", "closed sub", "closed menu"],
                "\(events)")
    }

    @Test func anInsideClickPassesAndDismissesNothing() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        _ = d.display.takeEffects()

        d.display.click(150, 150)
        d.step()
        let effects = d.display.takeEffects()
        #expect(effects.first == .answered(press: true, button: 1, x: 150, y: 150, click: .pass, reason: .inside))
        #expect(!effects.contains { if case .closed = $0 { true } else { false } })
        #expect(d.daemon.openNames == ["menu"])
    }

    @Test func anOutsideClickWithinGraceDismissesNothingAndAfterItDoes() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu", "grace_ms = 300").replacingOccurrences(of: "grace_ms = 0\n", with: ""))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        d.display.clock += 100
        d.display.press(600, 500)
        d.step()
        #expect(!d.display.takeEffects().contains(.closed(window: 1, popup: "menu")))
        d.display.clock += 300
        d.display.press(600, 500)
        d.step()
        #expect(d.display.takeEffects().contains(.closed(window: 1, popup: "menu")))
    }

    /// Dismissed popups close bottom first, as they stack: a parent before the popups nested in it.
    @Test func nestedPopupsCloseParentFirstAndAClickInTheParentClosesOnlyTheChild() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu") + Self.popup("sub", class: "Sub", #"parent = "menu""#))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.display.map(2, class: "Sub", at: Self.subRect)
        d.step()
        #expect(d.daemon.openNames == ["menu", "sub"])

        d.display.press(150, 150)
        d.step()
        let inParent = d.display.takeEffects().filter { if case .closed = $0 { true } else { false } }
        #expect(inParent == [.closed(window: 2, popup: "sub")])
        #expect(d.daemon.openNames == ["menu"])

        d.display.map(2, class: "Sub", at: Self.subRect)
        d.display.press(900, 700)
        d.step()
        let outside = d.display.takeEffects().filter { if case .closed = $0 { true } else { false } }
        #expect(outside == [.closed(window: 1, popup: "menu"), .closed(window: 2, popup: "sub")])
        #expect(d.daemon.openNames.isEmpty)
    }

    @Test func aClickOnAnAnchorOrAnExclusionDismissesNothing() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu", "anchors = [ { rect = [0, 0, 50, 20] } ]") + """
            [[exclude]]
            window = { class = "Keyboard" }
            """)
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.display.map(9, class: "Keyboard", at: Rect(x: 500, y: 500, width: 200, height: 100))
        d.step()
        _ = d.display.takeEffects()

        d.display.press(10, 10)
        d.display.press(550, 550)
        d.step()
        let effects = d.display.takeEffects()
        #expect(effects.contains(.answered(press: true, button: 1, x: 10, y: 10, click: .pass, reason: .anchor)))
        #expect(effects.contains(.answered(press: true, button: 1, x: 550, y: 550, click: .pass, reason: .exclusion)))
        #expect(!effects.contains { if case .closed = $0 { true } else { false } })
        #expect(d.daemon.openNames == ["menu"])
    }

    @Test func escapeClosesTheTopmostEscapePopupAndThoseNestedInIt() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu", "escape = true")
            + Self.popup("sub", class: "Sub", #"parent = "menu""#) + Self.popup("other", class: "Other"))
        d.display.map(3, class: "Other", at: Rect(x: 700, y: 0, width: 50, height: 50))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.display.map(2, class: "Sub", at: Self.subRect)
        d.step()
        _ = d.display.takeEffects()

        d.display.escape()
        d.step()
        let effects = d.display.takeEffects()
        #expect(effects.first == .escape(.swallow))
        #expect(effects.filter { if case .closed = $0 { true } else { false } }
                == [.closed(window: 1, popup: "menu"), .closed(window: 2, popup: "sub")])
        #expect(d.daemon.openNames == ["other"])

        // No popup wants Escape now: it goes on.
        d.display.escape()
        d.step()
        #expect(d.display.takeEffects() == [.escape(.replay)])
    }

    /// A dismissed window that is still there is no open popup while it is being closed; it
    /// counts as open again when the server refuses to close it, or when it opens anew.
    @Test func aWindowThatDoesNotCloseCountsAsClosingAndNotOpen() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.windowsCloseWhenAsked = false
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        d.display.press(600, 500)
        d.step()
        #expect(d.daemon.openNames.isEmpty)
        // A second outside click closes nothing more: the window is being closed.
        _ = d.display.takeEffects()
        d.display.press(600, 500)
        d.step()
        #expect(!d.display.takeEffects().contains { if case .closed = $0 { true } else { false } })

        d.display.refuseClose(1)
        d.step()
        #expect(d.daemon.openNames == ["menu"])
        d.display.clock += 1000
        d.display.click(600, 500)
        d.step()
        #expect(d.daemon.openNames.isEmpty, "\(d.display.takeEffects())")
        // Unmapped and mapped again before it went: a new opening, open at once.
        d.display.unmap(1)
        d.display.clock += 5
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(d.daemon.openNames == ["menu"])
    }

    // MARK: - Reloads

    @Test func aReloadSwapsTheModelBetweenPressAndReleaseAndTheClickGoesOn() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu", #"trigger = "click""#))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        d.display.press(600, 500)
        d.step()
        #expect(!d.display.takeEffects().contains { if case .closed = $0 { true } else { false } })

        try TestFiles.write(Self.popup("menu", class: "Menu", #"trigger = "click""#) + Self.popup("bar", class: "Bar"),
                            to: d.configFile)
        let reply = try d.request(#"{"request":"reload"}"#)
        #expect(reply.contains(#""popups":2"#), "\(reply)")
        #expect(d.daemon.openNames == ["menu"])

        // The click pressed before the reload is decided on its release, by the new model.
        d.display.release(600, 500)
        d.step()
        #expect(d.display.takeEffects().contains(.closed(window: 1, popup: "menu")))
    }

    /// A press and a finished reload in one wakeup: handlers run only from `step()`, the
    /// display's input first, so the press is answered against the model it was made on (the
    /// menu open: dismissed and swallowed), and only then is the new model (no popups) swapped in.
    @Test func aPressIsAnsweredBeforeAReloadThatCameWithIt() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(d.daemon.openNames == ["menu"])
        _ = d.display.takeEffects()

        try TestFiles.write("[settings]\nnotify = false\n", to: d.configFile)
        let client = try d.connect()
        try client.send(#"{"request":"reload"}"#)
        try d.waitForReloadOutcome()
        d.display.press(600, 500)
        d.step()
        let effects = d.display.takeEffects()
        #expect(effects.first == .answered(press: true, button: 1, x: 600, y: 500, click: .swallow, reason: .outside), "\(effects)")
        #expect(effects.contains(.closed(window: 1, popup: "menu")), "\(effects)")
        #expect(d.daemon.model.popups.isEmpty, "the reload was not swapped in after the press")
    }

    @Test func aRejectedReloadKeepsThePopupsOpenAndSaysWhere() throws {
        // No notification to the desktop of whoever runs the tests.
        let d = try DaemonUnderTest("[settings]\nnotify = false\n\n" + Self.popup("menu", class: "Menu"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        try TestFiles.write("[[popup]]\nname = 1\n", to: d.configFile)
        let reply = try d.request(#"{"request":"reload"}"#)
        #expect(reply.contains("rejected") && reply.contains("config.toml:2"), "\(reply)")
        #expect(d.daemon.openNames == ["menu"])
    }

    /// What the display cannot apply of a new configuration (a backend it cannot switch to)
    /// is the last error, for `status` to say.
    @Test func aBackendTheDisplayCannotTakeIsTheLastError() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        let unapplied = "cannot switch to backend x11-shield: the X server has no XFIXES extension; keeping x11-grab"
        d.display.unapplied = unapplied
        try TestFiles.write("[settings]\nbackend = \"x11-shield\"\n\n" + Self.popup("menu", class: "Menu"), to: d.configFile)
        let reply = try d.request(#"{"request":"reload"}"#)
        #expect(reply.contains(#""ok":true"#), "\(reply)")
        let status = try JSON.parse(try d.request(#"{"request":"status"}"#))
        #expect(status["last_error"]?.stringValue == unapplied, "\(status.text)")
    }

    /// The display server is chosen at start: a reload to another one's backend is kept for
    /// the next start, said as the last error, and the display keeps its mode.
    @Test(arguments: [(DisplayKind.x11, "wayland"), (.wayland, "x11-shield")])
    func aBackendOfAnotherDisplayServerWaitsForTheNextStart(running: DisplayKind, backend: String) throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.kind = running
        try TestFiles.write("[settings]\nbackend = \"\(backend)\"\n\n" + Self.popup("menu", class: "Menu"), to: d.configFile)
        let reply = try d.request(#"{"request":"reload"}"#)
        #expect(reply.contains(#""ok":true"#), "\(reply)")
        let status = try JSON.parse(try d.request(#"{"request":"status"}"#))
        #expect(status["last_error"]?.stringValue == "backend = \"\(backend)\" takes effect when clickaway starts again; keeping scripted on scripted",
                "\(status.text)")
        #expect(d.display.lastChange == .reloaded(nil))
    }

    // MARK: - Runtime popups

    @Test func aRuntimeRectPopupOpensAtOnceAndItsWaitHearsTheDismissal() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        let waiter = try d.connect()
        try waiter.send(#"{"request":"wait","rect":[10,10,50,50],"popup":"note"}"#)
        let registered = try waiter.reply(from: d, to: "wait")
        #expect(registered.contains(#""popup":"note""#), "\(registered)")
        #expect(d.daemon.openNames == ["note"])

        // Past the built-in grace: the click is no longer part of the one that opened it.
        d.display.clock += 1000
        d.display.press(500, 500)
        d.step()
        let ended = try waiter.reply(from: d, to: "the dismissal")
        let json = try JSON.parse(ended)
        #expect(json["reason"]?.stringValue == "outside" && json["popup"]?.stringValue == "note", "\(ended)")
        #expect(d.daemon.openNames.isEmpty)
        #expect(try d.request(#"{"request":"status"}"#).contains(#""open":[]"#))
    }

    /// A runtime popup that ended is no popup, though the model in use has it until the next
    /// is built: `open` and `close` of it in the pass it ended are refused.
    @Test func aRuntimePopupThatEndedCannotBeOpenedByName() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        let adder = try d.connect()
        try adder.send(#"{"request":"add","rect":[10,10,50,50],"popup":"note"}"#)
        #expect(try adder.reply(from: d, to: "add").contains(#""popup":"note""#))
        d.display.clock += 1000
        d.display.press(500, 500)
        let opener = try d.connect()
        try opener.send(#"{"request":"open","popup":"note"}"#)
        let reply = try opener.reply(from: d, to: "open")
        #expect(reply.contains(#""ok":false"#) && reply.contains("no popup named"), "\(reply)")
        #expect(d.daemon.openNames.isEmpty)
    }

    @Test func aRuntimePopupOnAWindowEndsWhenTheWindowGoes() throws {
        let d = try DaemonUnderTest("")
        d.display.map(7, class: "Note", at: Self.menuRect)
        d.step()
        let waiter = try d.connect()
        try waiter.send(#"{"request":"wait","window":7,"popup":"note"}"#)
        #expect(try waiter.reply(from: d, to: "wait").contains(#""window":"0x7""#))
        #expect(d.daemon.openNames == ["note"])

        d.display.unmap(7)
        let ended = try waiter.reply(from: d, to: "the window going")
        #expect(ended.contains(#""reason":"window-gone""#), "\(ended)")
        #expect(d.daemon.openNames.isEmpty)
    }

    /// `sync` and `add --window` wait for the display to sync, the loop does not: clicks are
    /// answered meanwhile, and each request is answered once its sync is done.
    @Test func requestsWaitingForTheDisplayToSyncHoldNothingElseUp() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.syncsWait = true
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.display.map(7, class: "Note", at: Self.subRect)
        let syncer = try d.connect(), adder = try d.connect()
        try syncer.send(#"{"request":"sync"}"#)
        try adder.send(#"{"request":"add","window":7,"popup":"note"}"#)
        try d.step(until: "both requests wait for a sync") { d.display.syncsStarted.count == 2 }
        d.display.click(150, 150)
        d.step()
        #expect(d.display.takeEffects().contains(.answered(press: true, button: 1, x: 150, y: 150, click: .pass, reason: .inside)))
        #expect(syncer.line() == nil && adder.line() == nil)

        d.display.finishSyncs()
        #expect(try syncer.reply(from: d, to: "sync") == #"{"ok":true}"#)
        #expect(try adder.reply(from: d, to: "add").contains(#""window":"0x7""#))
        #expect(d.daemon.openNames == ["menu", "note"])
    }

    /// What the display hears of its grabs after `intercept` comes as inputs: a refusal is
    /// the last error and a monitor event; `auto`'s switch to the shield is told to monitors
    /// and settled, so that the shield gets the open popups.
    @Test func aGrabRefusedLaterIsTheLastErrorAndASwitchToTheShieldIsSettled() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        let monitor = try d.connect()
        try monitor.send(#"{"request":"monitor"}"#)
        #expect(try monitor.reply(from: d, to: "monitor").contains(#""ok":true"#))
        let message = "cannot grab button 1 with no modifiers: another client already grabs it"
        var intercepts = d.display.intercepts
        d.display.heard(.refused(.button(1, modifiers: "no modifiers", error: "BadAccess", message: message)))
        d.step()
        #expect(d.display.intercepts == intercepts, "a refusal alone changes nothing to intercept")
        let status = try d.request(#"{"request":"status"}"#)
        #expect(status.contains(message), "\(status)")

        intercepts = d.display.intercepts
        d.display.heard(.switchedBackend(to: "x11-shield", because: message))
        d.step()
        #expect(d.display.intercepts == intercepts + 1, "the switch to the shield was not settled")
        #expect(d.daemon.openNames == ["menu"])
        _ = try d.request(#"{"request":"sync"}"#)
        var events: [String] = []
        while let line = monitor.line() { events.append(line) }
        let names = events.compactMap { try? JSON.parse($0) }.map { $0["event"]?.stringValue ?? "?" }
        #expect(names == ["grab_refused", "backend"], "\(events)")
    }

    @Test func hitSaysWhenAnotherProgramHoldsThePointer() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        let free = try d.request(#"{"request":"hit","x":600,"y":500}"#)
        #expect(free.contains(#""dismiss":["menu"]"#) && free.contains(#""grab":null"#), "\(free)")
        d.display.pointerHeldBy = "another client holds an active pointer grab"
        let held = try d.request(#"{"request":"hit","x":600,"y":500}"#)
        #expect(held.contains(#""grab":"another client holds an active pointer grab""#), "\(held)")
    }

    @Test func aSyncThatFailsIsRefusedAndAWindowWaitWhoseConnectionClosedIsNotRegistered() throws {
        let d = try DaemonUnderTest("")
        d.display.syncsWait = true
        d.display.map(7, class: "Note", at: Self.subRect)
        let syncer = try d.connect(), waiter = try d.connect()
        try syncer.send(#"{"request":"sync"}"#)
        try waiter.send(#"{"request":"wait","window":7,"popup":"note"}"#)
        try d.step(until: "both requests wait for a sync") { d.display.syncsStarted.count == 2 }
        waiter.close()
        d.step()
        d.display.finishSyncs(failure: "X server round trip failed: the connection broke")
        let refused = try syncer.reply(from: d, to: "sync")
        #expect(refused.contains(#""ok":false"#) && refused.contains("round trip failed"), "\(refused)")
        d.step()
        #expect(d.daemon.openNames.isEmpty)
        #expect(!(try d.request(#"{"request":"status"}"#)).contains("note"))
    }

    @Test func aProcessPopupIsAnsweredWhenItsWindowComesAndRefusedWhenNoneDoesInTime() throws {
        let d = try DaemonUnderTest("")
        let own = getpid()
        let waiter = try d.connect()
        try waiter.send(#"{"request":"add","pid":\#(own),"popup":"late","timeout_ms":10000}"#)
        d.step()
        #expect(waiter.line() == nil)
        d.display.map(5, class: "Anything", at: Self.menuRect, pid: own)
        #expect(try waiter.reply(from: d, to: "the process's window").contains(#""window":"0x5""#))
        #expect(d.daemon.openNames == ["late"])

        let second = try d.connect()
        try second.send(#"{"request":"add","pid":\#(own),"popup":"never","timeout_ms":0}"#)
        let refused = try second.reply(from: d, to: "the timeout")
        #expect(refused.contains("no window of process \(own) appeared within 0 ms (a scripted window must be mapped with its pid)"),
                "\(refused)")
    }

    @Test func closingAWaitsConnectionRemovesItsPopupAndTheNestedOnes() throws {
        let d = try DaemonUnderTest("")
        let parent = try d.connect()
        try parent.send(#"{"request":"wait","rect":[0,0,100,100],"popup":"outer"}"#)
        _ = try parent.reply(from: d, to: "wait outer")
        let child = try d.connect()
        try child.send(#"{"request":"wait","rect":[10,10,20,20],"popup":"inner","parent":"outer"}"#)
        _ = try child.reply(from: d, to: "wait inner")
        #expect(d.daemon.openNames == ["outer", "inner"])

        parent.close()
        let ended = try child.reply(from: d, to: "the parent's end")
        #expect(ended.contains(#""reason":"parent-gone""#), "\(ended)")
        #expect(d.daemon.openNames.isEmpty)
    }

    /// The model without it is built off the loop; until it is swapped in, the popup is out of
    /// the engine already: nothing dismisses its window.
    @Test func aRuntimePopupWhoseWaitEndedIsNoPopupAtOnce() throws {
        let d = try DaemonUnderTest("")
        d.display.map(7, class: "Note", at: Self.menuRect)
        let waiter = try d.connect()
        try waiter.send(#"{"request":"wait","window":7,"popup":"note","grace_ms":0}"#)
        _ = try waiter.reply(from: d, to: "wait")
        #expect(d.daemon.openNames == ["note"])

        waiter.close()
        try d.step(until: "the popup's end") { d.daemon.openNames.isEmpty }
        d.display.press(900, 700)
        d.step()
        #expect(!d.display.takeEffects().contains { if case .closed = $0 { true } else { false } })
        #expect(try d.request(#"{"request":"status"}"#).contains(#""open":[]"#))
    }

    @Test func runtimePopupsAddedInARowAreEachAnsweredAndOpen() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        let clients = try (1...5).map { i in
            let client = try d.connect()
            try client.send(#"{"request":"add","rect":[\#(i * 10),0,5,5],"popup":"r\#(i)"}"#)
            return client
        }
        for (i, client) in clients.enumerated() {
            #expect(try client.reply(from: d, to: "add r\(i + 1)").contains(#""popup":"r\#(i + 1)""#))
        }
        #expect(d.daemon.openNames == ["r1", "r2", "r3", "r4", "r5"])

        // Unnamed ones are numbered past the names taken.
        #expect(try d.request(#"{"request":"add","rect":[0,0,5,5],"popup":"runtime-1"}"#).contains(#""popup":"runtime-1""#))
        #expect(try d.request(#"{"request":"add","rect":[0,0,5,5]}"#).contains(#""popup":"runtime-2""#))
        let again = try d.request(#"{"request":"add","rect":[0,0,5,5],"popup":"r3"}"#)
        #expect(try JSON.parse(again)["error"]?.stringValue == #"there is a runtime popup named "r3" already"#, "\(again)")
    }

    /// A script's `close x` then `open --name x`: the second comes before the model without
    /// the first x is swapped in, and is taken all the same; the new x decides clicks.
    @Test func aRuntimePopupClosedCanBeAddedAgainUnderItsNameAtOnce() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        #expect(try d.request(#"{"request":"add","rect":[0,0,50,50],"popup":"x","grace_ms":0}"#).contains(#""popup":"x""#))
        let clients = try d.sendInOnePass([#"{"request":"close","popup":"x"}"#,
                                           #"{"request":"add","rect":[600,0,50,50],"popup":"x","grace_ms":0}"#])
        #expect(try clients[0].reply(from: d, to: "close x").contains(#""open":false"#))
        let added = try clients[1].reply(from: d, to: "add x again")
        #expect(try JSON.parse(added)["popup"]?.stringValue == "x", "\(added)")
        try d.step(until: "the model with the new x") { d.daemon.modelHasRuntimePopups }
        #expect(d.daemon.openNames == ["x"])

        // A press inside the old x is outside the new one: it dismisses it.
        d.display.clock += 1000
        d.display.press(10, 10)
        d.step()
        #expect(d.daemon.openNames.isEmpty)
    }

    @Test func aConfiguredRectPopupOpensAndClosesByRequestWithoutDismissing() throws {
        let d = try DaemonUnderTest("""
            [[popup]]
            name = "panel"
            rect = [0, 0, 100, 100]
            grace_ms = 0
            """)
        #expect(try d.request(#"{"request":"open","popup":"panel"}"#).contains(#""open":true"#))
        #expect(d.daemon.openNames == ["panel"])
        #expect(intercepting(d.display.takeEffects()) == ["panel"])
        d.display.press(500, 500)
        d.step()
        #expect(d.daemon.openNames.isEmpty)
        #expect(try d.request(#"{"request":"toggle","popup":"panel"}"#).contains(#""open":true"#))
        #expect(try d.request(#"{"request":"close","popup":"panel"}"#).contains(#""open":false"#))
        #expect(d.daemon.openNames.isEmpty)
    }

    // MARK: - Deadlines

    // The loop reads the deadlines their owners keep before each wait, and asks nobody: each
    // must be there as soon as what it waits for starts, and gone once that ended.

    @Test func theLoopWakesForADismissedWindowThatStaysAndNoLongerOnceItIsGone() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.windowsCloseWhenAsked = false
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(d.nextDeadline == nil)
        let dismissed = MonotonicClock.milliseconds()
        d.display.press(600, 500)
        d.step()
        let due = try #require(d.nextDeadline, "no wakeup for the window asked to close").milliseconds
        #expect(due >= dismissed + ClosingWindows.timeoutMs && due <= MonotonicClock.milliseconds() + ClosingWindows.timeoutMs)
        d.display.unmap(1)
        d.step()
        #expect(d.nextDeadline == nil)
    }

    @Test func theLoopWakesWhenAWaitForAProcessWindowRunsOutAndNoLongerOnceItCame() throws {
        let d = try DaemonUnderTest("")
        let waiter = try d.connect()
        let sent = MonotonicClock.milliseconds()
        try waiter.send(#"{"request":"add","pid":\#(getpid()),"popup":"late","timeout_ms":10000}"#)
        try d.step(until: "the wait for the window registered") { d.nextDeadline != nil }
        let due = try #require(d.nextDeadline).milliseconds
        #expect(due >= sent + 10000 && due <= MonotonicClock.milliseconds() + 10000)
        d.display.map(5, class: "Anything", at: Self.menuRect, pid: getpid())
        _ = try waiter.reply(from: d, to: "the process's window")
        #expect(d.nextDeadline == nil)
    }

    @Test func theLoopWakesToSettleWindowsThatWaitedForThePaceAndNoLongerOnceSettled() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.daemon.pacing = SettlePacing(immediateMicroseconds: 0, spacing: 1_000_000)
        d.display.map(1, class: "Menu", at: Self.menuRect)
        d.step()
        #expect(d.nextDeadline == nil)
        d.display.map(2, class: "Other", at: Self.subRect)
        d.step()
        #expect(d.daemon.windowsChanged)
        #expect(d.nextDeadline == d.daemon.pacing.deadline)
        // A click settles at once.
        d.display.press(150, 150)
        d.step()
        #expect(d.nextDeadline == nil)
    }
}
