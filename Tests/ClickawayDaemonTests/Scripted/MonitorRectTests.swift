import ClickawayControl
import ClickawayCore
@testable import ClickawayDaemon
import ClickawayJSON
import Foundation
import Testing

/// What `monitor` events say of a window popup that moves or resizes while open: the
/// rectangle the daemon decides with at the moment of the event, not the one it opened at.
@Suite struct MonitorRectTests {
    static let opened = Rect(x: 100, y: 100, width: 200, height: 200)
    static let moved = Rect(x: 400, y: 300, width: 250, height: 150)
    static let resized = Rect(x: 400, y: 300, width: 300, height: 220)

    /// The monitor's events so far, parsed.
    static func events(_ monitor: ControlClient, _ d: DaemonUnderTest) throws -> [JSON] {
        _ = try d.request(#"{"request":"sync"}"#)
        var events: [JSON] = []
        while let line = monitor.line() { events.append(try JSON.parse(line)) }
        return events
    }

    static func subscribe(_ d: DaemonUnderTest) throws -> ControlClient {
        let monitor = try d.connect()
        try monitor.send(#"{"request":"monitor"}"#)
        #expect(try monitor.reply(from: d, to: "monitor").contains(#""ok":true"#))
        return monitor
    }

    @Test func aClosedEventCarriesTheRectangleAfterAMove() throws {
        let d = try DaemonUnderTest(DaemonLogicTests.popup("menu", class: "Menu"))
        let monitor = try Self.subscribe(d)
        d.display.map(1, class: "Menu", at: Self.opened)
        d.step()
        d.display.map(1, class: "Menu", at: Self.moved)
        d.step()
        let status = try d.request(#"{"request":"status"}"#)
        #expect(status.contains(#""rect":[400,300,250,150]"#), "status: \(status)")
        d.display.unmap(1)
        d.step()
        let events = try Self.events(monitor, d)
        #expect(events.map { $0["event"]?.stringValue ?? "?" } == ["opened", "closed"], "\(events.map(\.text))")
        #expect(Rect(json: events.first?["rect"]) == Self.opened, "\(events.map(\.text))")
        #expect(Rect(json: events.last?["rect"]) == Self.moved, "the closed event's rectangle: \(events.map(\.text))")
    }

    /// Opened while a monitor listens, then moved: a `family` event (a dialog opens) and the
    /// `closed` event of an outside click carry where the window is now.
    @Test func familyAndDismissedThenClosedEventsCarryTheCurrentRectangle() throws {
        let d = try DaemonUnderTest(DaemonLogicTests.popup("menu", class: "Menu"))
        let monitor = try Self.subscribe(d)
        d.display.map(1, class: "Menu", at: Self.opened)
        d.step()
        d.display.map(1, class: "Menu", at: Self.moved)
        d.step()
        d.display.map(2, class: "Dialog", at: Rect(x: 700, y: 700, width: 50, height: 50), family: 1)
        d.step()
        d.display.map(1, class: "Menu", at: Self.resized)
        d.step()
        d.display.press(10, 10)
        d.display.release(10, 10)
        d.step()
        let events = try Self.events(monitor, d)
        let named = events.map { ($0["event"]?.stringValue ?? "?", Rect(json: $0["rect"])) }
        #expect(named.map(\.0) == ["opened", "family", "dismissed", "closed"], "\(events.map(\.text))")
        #expect(named.first { $0.0 == "family" }?.1 == Self.moved, "\(events.map(\.text))")
        #expect(named.first { $0.0 == "closed" }?.1 == Self.resized, "\(events.map(\.text))")
    }
}
