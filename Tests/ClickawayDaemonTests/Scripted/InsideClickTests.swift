import ClickawayCore
@testable import ClickawayDaemon
import ClickawayJSON
import Testing

/// `inside_click = "dismiss"` through the daemon: set in `[defaults]` or by a runtime
/// request, a click on the popup reaches it and then dismisses it.
@Suite struct InsideClickTests {
    @Test func aClickOnAPopupFromDefaultsPassesAndClosesItsWindow() throws {
        let d = try DaemonUnderTest("[defaults]\ninside_click = \"dismiss\"\n" + DaemonLogicTests.popup("menu", class: "Menu"))
        d.display.map(1, class: "Menu", at: DaemonLogicTests.menuRect)
        d.step()
        #expect(d.daemon.openNames == ["menu"])
        _ = d.display.takeEffects()
        d.display.press(150, 150)
        d.step()
        let effects = d.display.takeEffects()
        #expect(effects.first == .answered(press: true, button: 1, x: 150, y: 150, click: .pass, reason: .inside))
        #expect(effects.contains(.closed(window: 1, popup: "menu")))
    }

    @Test func aRuntimePopupWithInsideClickDismissIsDismissedByAClickOnIt() throws {
        let d = try DaemonUnderTest("")
        let waiter = try d.connect()
        try waiter.send(#"{"request":"wait","rect":[0,0,100,100],"popup":"note","grace_ms":0,"inside_click":"dismiss"}"#)
        _ = try waiter.reply(from: d, to: "wait")
        try d.step(until: "the popup is open") { d.daemon.openNames == ["note"] }
        d.display.press(50, 50)
        d.step()
        let ended = try JSON.parse(try waiter.reply(from: d, to: "the dismissal"))
        #expect(ended["event"]?.stringValue == "dismissed" && ended["reason"]?.stringValue == "inside", "\(ended)")
        #expect(ended["click"]?.stringValue == "pass", "\(ended)")
    }
}
