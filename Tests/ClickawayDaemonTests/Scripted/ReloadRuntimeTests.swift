import ClickawayControl
import ClickawayCore
@testable import ClickawayDaemon
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing

/// Reloads while runtime popups exist: the loader builds the new model with the runtime popups
/// registered when the load began; those that came, went or changed while it loaded are
/// followed on the loop. A request meant to happen while a reload loads goes out with the
/// reload (`sendInOnePass`): one pass answers the reload, then it, and the load's outcome is
/// taken at a later wait of the loop; a window's change is stepped between the two. Those
/// tests reload the file as it is: a file written reloads by itself too (the watcher), at a
/// time of its own.
extension DaemonLogicTests {
    static let menuAndBar = popup("menu", class: "Menu") + popup("bar", class: "Bar")

    @Test func aReloadKeepsRuntimePopupsOnWindowsAndRectsAndTheyDecideClicks() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.map(7, class: "Note", at: Self.menuRect)
        let onWindow = try d.connect()
        try onWindow.send(#"{"request":"wait","window":7,"popup":"note","grace_ms":0}"#)
        #expect(try onWindow.reply(from: d, to: "wait note").contains(#""window":"0x7""#))
        let onRect = try d.connect()
        try onRect.send(#"{"request":"wait","rect":[600,0,100,100],"popup":"corner","grace_ms":0}"#)
        #expect(try onRect.reply(from: d, to: "wait corner").contains(#""popup":"corner""#))
        try d.step(until: "the model with both runtime popups") { d.daemon.modelHasRuntimePopups }

        try TestFiles.write(Self.menuAndBar, to: d.configFile)
        let reloader = try d.connect()
        try reloader.send(#"{"request":"reload"}"#)
        try d.stepUntilReloaded()
        // The reload's model has them: no model is left to build after it.
        #expect(d.daemon.modelHasRuntimePopups)
        #expect(d.daemon.runtimeNames == ["note", "corner"])
        #expect(Set(d.daemon.openNames) == ["note", "corner"])
        let reply = try reloader.reply(from: d, to: "reload")
        #expect(reply.contains(#""popups":2"#), "\(reply)")

        d.display.clock += 1000
        d.display.press(150, 150)
        d.step()
        let cornerEnded = try JSON.parse(try onRect.reply(from: d, to: "corner's dismissal"))
        #expect(cornerEnded["event"]?.stringValue == "dismissed" && cornerEnded["popup"]?.stringValue == "corner", "\(cornerEnded)")
        #expect(d.daemon.openNames == ["note"])

        _ = d.display.takeEffects()
        d.display.press(900, 700)
        d.step()
        #expect(d.display.takeEffects().contains(.closed(window: 7, popup: "note")))
        let noteEnded = try JSON.parse(try onWindow.reply(from: d, to: "note's dismissal"))
        #expect(noteEnded["popup"]?.stringValue == "note" && noteEnded["reason"]?.stringValue == "outside", "\(noteEnded)")
    }

    @Test func aRuntimePopupAddedWhileAReloadLoadsIsAnsweredOnceTheModelHasIt() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        #expect(try d.request(#"{"request":"add","rect":[0,0,50,50],"popup":"early","grace_ms":0}"#).contains(#""popup":"early""#))
        let clients = try d.sendInOnePass([#"{"request":"reload"}"#,
                                           #"{"request":"add","rect":[600,0,50,50],"popup":"late","grace_ms":0}"#])
        let (reloader, adder) = (clients[0], clients[1])
        try d.step(until: "late registered") { d.daemon.runtimeNames == ["early", "late"] }
        #expect(d.daemon.isReloading, "late was registered while the reload loaded")
        try d.stepUntilReloaded()
        // Not in the reload's model, which had the runtime popups as the load began: built after it.
        #expect(d.daemon.openNames == ["early"])
        #expect(!d.daemon.modelHasRuntimePopups)
        #expect(adder.line() == nil, "not answered before the model has it")

        let added = try adder.reply(from: d, to: "add late")
        #expect(added.contains(#""popup":"late""#), "\(added)")
        #expect(Set(d.daemon.openNames) == ["early", "late"], "answered once the model has it")
        let reloaded = try reloader.reply(from: d, to: "reload")
        #expect(reloaded.contains(#""popups":1"#), "\(reloaded)")
        try d.step(until: "the model with every runtime popup") { d.daemon.modelHasRuntimePopups }
        #expect(Set(d.daemon.openNames) == ["early", "late"])

        // late decides clicks: a press inside early is outside it.
        d.display.clock += 1000
        d.display.press(10, 10)
        d.step()
        #expect(d.daemon.openNames == ["early"])
        #expect(d.daemon.runtimeNames == ["early"])
    }

    @Test func aRuntimePopupRemovedWhileAReloadLoadsIsNotInTheEngineAfterIt() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        d.display.map(7, class: "Note", at: Self.menuRect)
        let waiter = try d.connect()
        try waiter.send(#"{"request":"wait","window":7,"popup":"note","grace_ms":0}"#)
        #expect(try waiter.reply(from: d, to: "wait note").contains(#""window":"0x7""#))
        #expect(try d.request(#"{"request":"add","rect":[600,0,50,50],"popup":"stay","grace_ms":0}"#).contains(#""popup":"stay""#))
        try d.step(until: "the model with both runtime popups") { d.daemon.modelHasRuntimePopups }

        let clients = try d.sendInOnePass([#"{"request":"reload"}"#, #"{"request":"close","popup":"note"}"#])
        let (reloader, closer) = (clients[0], clients[1])
        try d.step(until: "note removed") { d.daemon.runtimeNames == ["stay"] }
        #expect(d.daemon.isReloading, "note was removed while the reload loaded")
        try d.stepUntilReloaded()
        // The reload's model was built with note; its window is still mapped, yet it is no popup.
        #expect(d.daemon.openNames == ["stay"])
        #expect(!d.daemon.modelHasRuntimePopups, "a model without note follows")
        d.display.clock += 1000
        _ = d.display.takeEffects()
        d.display.press(610, 10)
        d.step()
        #expect(!d.display.takeEffects().contains { if case .closed = $0 { true } else { false } })
        #expect(d.daemon.openNames == ["stay"])
        #expect(try closer.reply(from: d, to: "close note").contains(#""open":false"#))
        #expect(try waiter.reply(from: d, to: "note's end").contains(#""reason":"closed""#))

        let reloaded = try reloader.reply(from: d, to: "reload")
        #expect(reloaded.contains(#""popups":1"#), "\(reloaded)")

        // The model without it follows, and its name is free again.
        try d.step(until: "the model without note") { d.daemon.modelHasRuntimePopups }
        #expect(try d.request(#"{"request":"add","window":7,"popup":"note"}"#).contains(#""window":"0x7""#))
    }

    /// A process's popup that finds its window while the reload loads is built into the reload's
    /// model as it was; the model with it on its window follows.
    @Test func aProcessPopupThatFindsItsWindowWhileAReloadLoadsStaysThatWindows() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        let own = getpid()
        let adder = try d.connect()
        try adder.send(#"{"request":"add","pid":\#(own),"popup":"late","timeout_ms":10000,"grace_ms":0}"#)
        try d.step(until: "the model with the process's popup") { d.daemon.runtimeNames == ["late"] && d.daemon.modelHasRuntimePopups }

        let reloader = try d.connect()
        try reloader.send(#"{"request":"reload"}"#)
        try d.step(until: "the reload loading") { d.daemon.isReloading }
        d.display.map(5, class: "Anything", at: Self.menuRect, pid: own)
        d.step()
        #expect(d.daemon.isReloading, "the window came while the reload loaded")
        try d.stepUntilReloaded()
        // The reload's model has it as it was when the load began: out of the engine until
        // the model with it on its window is built.
        #expect(d.daemon.openNames.isEmpty)
        #expect(!d.daemon.modelHasRuntimePopups)
        #expect(try adder.reply(from: d, to: "the process's window").contains(#""window":"0x5""#))

        let reloaded = try reloader.reply(from: d, to: "reload")
        #expect(reloaded.contains(#""popups":1"#), "\(reloaded)")
        try d.step(until: "the model with the popup on its window") { d.daemon.modelHasRuntimePopups }
        #expect(d.daemon.openNames == ["late"])
        d.display.clock += 1000
        _ = d.display.takeEffects()
        d.display.press(900, 700)
        d.step()
        #expect(d.display.takeEffects().contains(.closed(window: 5, popup: "late")))
    }

    @Test func aRuntimePopupWhoseNameTheReloadTakesIsRemovedAndItsWaitTold() throws {
        let d = try DaemonUnderTest(Self.popup("menu", class: "Menu"))
        let waiter = try d.connect()
        try waiter.send(#"{"request":"wait","rect":[600,0,50,50],"popup":"clash"}"#)
        #expect(try waiter.reply(from: d, to: "wait clash").contains(#""popup":"clash""#))
        #expect(try d.request(#"{"request":"add","rect":[0,0,50,50],"popup":"kept"}"#).contains(#""popup":"kept""#))
        try d.step(until: "the model with both runtime popups") { d.daemon.modelHasRuntimePopups }

        try TestFiles.write(Self.popup("menu", class: "Menu") + Self.popup("clash", class: "Clash"), to: d.configFile)
        let reloader = try d.connect()
        try reloader.send(#"{"request":"reload"}"#)
        try d.stepUntilReloaded()
        // The loader left it out of the model, as the loop did of the runtime popups.
        #expect(d.daemon.modelHasRuntimePopups)
        #expect(d.daemon.runtimeNames == ["kept"])
        #expect(d.daemon.openNames == ["kept"])
        let reloaded = try reloader.reply(from: d, to: "reload")
        #expect(reloaded.contains(#""popups":2"#), "\(reloaded)")
        let ended = try waiter.reply(from: d, to: "clash's end")
        #expect(ended.contains(#""reason":"reload""#) && ended.contains(#""popup":"clash""#), "\(ended)")
    }

    /// A reload gives freed memory back to the system only when it leaves at most half of a
    /// big configuration's popups: not between big ones, nor for small ones.
    @Test func memoryGoesBackOnlyWhenABigConfigurationShrinks() {
        #expect(Daemon.shrinks(from: 73_973, to: 3))
        #expect(Daemon.shrinks(from: 10_000, to: 5_000))
        #expect(!Daemon.shrinks(from: 10_000, to: 5_001))
        #expect(!Daemon.shrinks(from: 73_973, to: 73_974))
        #expect(!Daemon.shrinks(from: 9_999, to: 0))
    }
}
