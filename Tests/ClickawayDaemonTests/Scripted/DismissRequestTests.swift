import ClickawayControl
import ClickawayCore
@testable import ClickawayDaemon
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing

/// `dismiss` (clickawayctl dismiss NAME, what a key binding runs on Wayland): the popup and
/// those nested in it dismissed as a click outside them would, their dismiss actions run,
/// for window and `rect` popups alike; `close` keeps only telling a rect popup's state.
@Suite struct DismissRequestTests {
    @Test func aWindowPopupAndThoseNestedInItAreClosedAndMonitorsHearIt() throws {
        let d = try DaemonUnderTest(DaemonLogicTests.popup("menu", class: "Menu")
            + DaemonLogicTests.popup("sub", class: "Sub", #"parent = "menu""#) + DaemonLogicTests.popup("other", class: "Other"))
        d.display.map(3, class: "Other", at: Rect(x: 700, y: 0, width: 50, height: 50))
        d.display.map(1, class: "Menu", at: DaemonLogicTests.menuRect)
        d.display.map(2, class: "Sub", at: DaemonLogicTests.subRect)
        d.step()
        _ = d.display.takeEffects()
        let monitor = try MonitorRectTests.subscribe(d)

        let reply = try JSON.parse(try d.request(#"{"request":"dismiss","popup":"menu"}"#))
        #expect(try DismissReply(reply: reply) == DismissReply(popup: "menu", dismissed: ["menu", "sub"]), "\(reply.text)")
        #expect(d.display.takeEffects().filter { if case .closed = $0 { true } else { false } }
                == [.closed(window: 1, popup: "menu"), .closed(window: 2, popup: "sub")])
        d.step()
        #expect(d.daemon.openNames == ["other"])
        let events = try MonitorRectTests.events(monitor, d)
        let dismissed = events.first { $0["event"]?.stringValue == "dismissed" }
        #expect(dismissed?["popups"] == .array([.string("menu"), .string("sub")]), "\(events.map(\.text))")
        #expect(dismissed?["reason"]?.stringValue == "request" && dismissed?["click"]?.stringValue == "none", "\(events.map(\.text))")

        // Not open any more: nothing to do, and no error (a key pressed twice).
        let again = try JSON.parse(try d.request(#"{"request":"dismiss","popup":"menu"}"#))
        #expect(try DismissReply(reply: again).dismissed == [], "\(again.text)")
        #expect(d.display.takeEffects().filter { if case .closed = $0 { true } else { false } }.isEmpty)
        let unknown = try d.request(#"{"request":"dismiss","popup":"menuu"}"#)
        #expect(unknown.contains(#""ok":false"#) && unknown.contains("no popup named"), "\(unknown)")
    }

    /// A rect popup's dismiss command runs, with the popup's name and no button, position or
    /// key; the popup is closed. `close` would have marked it closed without running it.
    @Test func aRectPopupsDismissCommandRuns() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-dismiss-\(UUID().uuidString)").path
        defer { unlink(marker) }
        let config = """
            [[popup]]
            name = "calendar"
            rect = [100, 100, 300, 200]
            dismiss = { command = ["sh", "-c", "echo \\"$CLICKAWAY_POPUP b=$CLICKAWAY_BUTTON k=$CLICKAWAY_KEY\\" > \(marker)"] }

            """
        let d = try DaemonUnderTest(config)
        #expect(try d.request(#"{"request":"open","popup":"calendar"}"#).contains(#""open":true"#))
        d.step()
        #expect(d.daemon.openNames == ["calendar"])

        let reply = try JSON.parse(try d.request(#"{"request":"dismiss","popup":"calendar"}"#))
        #expect(try DismissReply(reply: reply).dismissed == ["calendar"], "\(reply.text)")
        try d.step(until: "the calendar's dismiss command wrote \(marker)") {
            (try? String(contentsOfFile: marker, encoding: .utf8))?.hasSuffix("\n") == true
        }
        #expect(try String(contentsOfFile: marker, encoding: .utf8) == "calendar b= k=\n")
        #expect(d.daemon.openNames.isEmpty)
        #expect(try d.request(#"{"request":"status"}"#).contains(#""open":[]"#))

        // close: the state only, no command.
        unlink(marker)
        #expect(try d.request(#"{"request":"open","popup":"calendar"}"#).contains(#""open":true"#))
        #expect(try d.request(#"{"request":"close","popup":"calendar"}"#).contains(#""open":false"#))
        _ = try d.request(#"{"request":"sync"}"#)
        #expect(!FileManager.default.fileExists(atPath: marker), "close ran the dismiss command")
    }
}
