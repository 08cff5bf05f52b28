import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The README's picture of `clickawayctl show`: yad's calendar (the yad recipe's popup, with
/// regions, slop and the bar button as its anchor) under openbox, drawn by the daemon and
/// taken with xwd. With CLICKAWAY_WRITE_DOCS=1 the test writes it to docs/show-yad-calendar.png.
@Suite("The README's picture of show")
struct ShowPictureTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let bar = Rect(x: 0, y: 0, width: 1280, height: 24)
    static let button = Rect(x: 150, y: 0, width: 110, height: 24)

    static func config(regions: String = "") -> String {
        """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "calendar"
        window = { class = "ClickawayCalendar", instance = "yad" }
        slop = 8
        anchors = [ { rect = [\(button.x), \(button.y), \(button.width), \(button.height)] } ]
        \(regions)
        """
    }

    @Test func yadCalendarDrawnByShow() throws {
        let r = try ProgramsRun(RealProgramTests.Case(wm: .openbox, backend: .grab), config: Self.config())
        let f = r.f
        try f.client.createWindow(at: Self.bar, overrideRedirect: true)
        try f.input.motion(x: Self.button.x + 45, y: 160)
        let (yad, _) = try r.start("yad", "exec yad --calendar --class=ClickawayCalendar --undecorated --no-buttons --on-top --skip-taskbar --mouse")
        defer { yad.stop() }
        _ = try r.awaitEvent(.opened, popup: "calendar")
        let open = try #require(try f.report().open.first)
        let (w, h) = (open.rect.width, open.rect.height)
        // The month and year selectors on top, the days below: regions as a user would draw them.
        try f.editConfigInPlace(Self.config(regions: """

            [[popup.region]]
            name = "month"
            rect = [4, 4, \(w - 8), 30]

            [[popup.region]]
            name = "days"
            rect = [4, 38, \(w - 8), \(h - 42)]

            """))
        #expect(try f.ctl(["reload"]).status == 0)
        try f.eventually("the calendar open again") { try f.openPopups() == ["calendar"] }
        let popup = try #require(try f.report().open.first?.rect)

        let before = try Screenshot.take(f.xvfb.display)
        let run = try f.ctl(["show", "--for", "60"])
        #expect(run.status == 0, "\(run.output)")
        try f.sync()
        let during = try Screenshot.take(f.xvfb.display)
        let slopped = popup.expanded(by: Insets(all: 8))
        let stray = before.changes(to: during).filter { p in
            ![slopped, Self.button].contains { $0.contains(x: Int32(p.x), y: Int32(p.y)) }
        }
        #expect(stray.isEmpty, "\(stray.count) pixels changed outside the calendar and its anchor")
        #expect(before.changes(to: during).count > 1000)

        // The calendar and the bar button, with a margin.
        let left = max(0, Int(min(slopped.x, Self.button.x)) - 16)
        let top = 0
        let right = min(during.width, Int(max(slopped.x + slopped.width, Self.button.x + Self.button.width)) + 16)
        let bottom = min(during.height, Int(slopped.y + slopped.height) + 16)
        let png = PNG.encode(during, crop: (left, top, right - left, bottom - top))
        if ProcessInfo.processInfo.environment["CLICKAWAY_WRITE_DOCS"] == "1" {
            let docs = Self.repository.appendingPathComponent("docs")
            try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
            try Data(png).write(to: docs.appendingPathComponent("show-yad-calendar.png"))
        }
        _ = try f.ctl(["show", "--off"])
        try f.sync()
        #expect(try Screenshot.take(f.xvfb.display) == before)
    }
}
