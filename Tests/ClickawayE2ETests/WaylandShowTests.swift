import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayWayland
import Foundation
import ProcessSupport
import Testing
import WaylandHarness
import XTestHarness

extension Screenshot {
    /// Takes one with `grim` (wlr-screencopy: sway and phoc), as a binary PPM.
    static func grim(_ compositor: HeadlessCompositor) throws -> Screenshot {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-shot-\(UUID().uuidString).ppm").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var env = ProcessInfo.processInfo.environment
        env["WAYLAND_DISPLAY"] = compositor.waylandSocket
        let run = try ProgramRun.run(["grim", "-t", "ppm", path], environment: env)
        guard run.status == 0 else { throw HarnessError("grim failed: \(run.output)") }
        return try ppm([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// P6: "P6", width, height, maxval as text separated by white space, then RGB bytes.
    static func ppm(_ bytes: [UInt8]) throws -> Screenshot {
        var fields: [Int] = []
        var i = 2
        while fields.count < 3 {
            while i < bytes.count && (bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09) { i += 1 }
            var n = 0
            while i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 {
                n = n * 10 + Int(bytes[i] - 0x30)
                i += 1
            }
            fields.append(n)
        }
        i += 1
        let (width, height) = (fields[0], fields[1])
        guard bytes.starts(with: [0x50, 0x36]), fields[2] == 255, bytes.count >= i + 3 * width * height else {
            throw HarnessError("grim wrote no 8-bit P6 picture")
        }
        var pixels = [UInt32](repeating: 0, count: width * height)
        for p in 0..<(width * height) {
            let o = i + 3 * p
            pixels[p] = UInt32(bytes[o]) << 16 | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2])
        }
        return Screenshot(width: width, height: height, pixels: pixels)
    }
}

/// `clickawayctl show` on Wayland: a layer surface per output with no input region, drawn
/// on the screen (grim's screenshots where the compositor offers screencopy) and
/// transparent to clicks on every compositor.
@Suite struct WaylandShowTests {
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "panel"
        rect = [100, 100, 300, 200]
        slop = 8

        [[popup.region]]
        name = "top"
        rect = [0, 0, 300, 30]

        [[exclude]]
        rect = [600, 400, 100, 60]

        """

    static let panel = Rect(x: 100, y: 100, width: 300, height: 200)
    static let exclusion = Rect(x: 600, y: 400, width: 100, height: 60)

    /// The compositors with screencopy, for grim.
    static let screenshots = CompositorKind.tested.filter { $0 != .kwin }

    @Test(arguments: screenshots)
    func theDrawingChangesOnlyTheHitAreasAndGoesAway(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.config) { f in
            try f.ctlOK(["open", "panel"])
            try f.sync()
            let before = try Screenshot.grim(f.compositor)
            let run = try f.ctl(["show", "--for", "60"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.stdout.contains("drawing panel on 1 output for 60 s"), "\(run.output)")
            let slopped = Self.panel.expanded(by: Insets(all: 8))
            var corners: [(x: Int, y: Int)] = []
            for r in [slopped, Self.panel, Self.exclusion] {
                let left = Int(r.x), top = Int(r.y)
                corners += [(left, top), (left + Int(r.width) - 1, top + Int(r.height) - 1)]
            }
            // A screenshot may catch the compositor between two parts of one frame (seen on
            // phoc): wait for every outline's corners, not for the first changed pixel.
            var during = before
            try eventually("every outline's corners drawn on the screen", timeout: .seconds(5), every: .milliseconds(50)) {
                during = try Screenshot.grim(f.compositor)
                return corners.allSatisfy { before[$0.x, $0.y] != during[$0.x, $0.y] }
            }
            let changed = before.changes(to: during)
            let stray = changed.filter { p in ![slopped, Self.exclusion].contains { $0.contains(x: Int32(p.x), y: Int32(p.y)) } }
            #expect(stray.isEmpty, "\(stray.count) pixels changed outside the hit areas, e.g. \(stray.prefix(5))")
            #expect(try f.ctl(["show", "--off"]).stdout.contains("stopped drawing"))
            try eventually("the drawing to go", timeout: .seconds(5), every: .milliseconds(50)) {
                try Screenshot.grim(f.compositor) == before
            }
        }
    }

    @Test(arguments: CompositorKind.tested)
    func clicksInsideAndOutsideAreDecidedAsWithoutTheDrawing(_ kind: CompositorKind) throws {
        try withWaylandDaemon(kind, config: Self.config) { f in
            try f.ctlOK(["open", "panel"])
            try f.ctlOK(["show", "--for", "60"])
            try f.sync()
            // On a label, on an outline, inside: the click reaches what is below.
            try f.click(110, 110)
            try f.click(100, 299)
            #expect(try f.openPopups() == ["panel"])
            #expect(try f.below.clicks().filter(\.isPressed).map { [$0.x, $0.y] } == [[110, 110], [100, 299]])
            // On the exclusion's outline: passes, dismisses nothing.
            try f.click(600, 400)
            #expect(try f.openPopups() == ["panel"])
            // Outside: dismissed and swallowed, drawing or not.
            try f.click(800, 500)
            #expect(try f.openPopups().isEmpty)
            #expect(try f.below.clicks().filter(\.isPressed).count == 3)
            #expect(f.log.contains("no longer showing") == false)
            try f.ctlOK(["show", "--off"])
        }
    }

    /// sway says nothing when a window moves; the daemon reads its tree while a window plays
    /// a role, and the drawing follows.
    @Test func theDrawingFollowsASwayWindowThatMoves() throws {
        guard CompositorKind.tested.contains(.sway) else { return }
        try withWaylandDaemon(.sway, config: WaylandDaemonTests.menuConfig) { f in
            let window = try WaylandDaemonTests.openMenu(f, try f.monitor())
            try f.ctlOK(["show", "menu", "--for", "60"])
            try f.compositor.command(#"[app_id="clickaway-test-menu"] move absolute position 600 300"#)
            let moved = Rect(x: 600, y: 300, width: 300, height: 200)
            try f.eventually("the daemon to see the window at (600, 300)") {
                try window.dispatch()
                return try f.status()["open"]?.arrayValue?.first?["rect"] == .array([600, 300, 300, 200].map { .int($0) })
            }
            var drawn = try Screenshot.grim(f.compositor)
            try eventually("the outline at the new place", timeout: .seconds(5), every: .milliseconds(50)) {
                drawn = try Screenshot.grim(f.compositor)
                return drawn[600, 300] == 0x3070D0 && drawn[899, 499] == 0x3070D0
            }
            try f.ctlOK(["show", "--off"])
            var plain = drawn
            try eventually("the drawing to go", timeout: .seconds(5), every: .milliseconds(50)) {
                plain = try Screenshot.grim(f.compositor)
                return plain[600, 300] != 0x3070D0
            }
            let stray = plain.changes(to: drawn).filter { !moved.contains(x: Int32($0.x), y: Int32($0.y)) }
            #expect(stray.isEmpty, "\(stray.count) pixels drawn outside the moved window, e.g. \(stray.prefix(5))")
        }
    }

    @Test func showEndsOnTimeAndOnAReloadWithoutItsPopupOnSway() throws {
        try withWaylandDaemon(.sway, config: Self.config) { f in
            try f.ctlOK(["open", "panel"])
            try f.ctlOK(["show", "--for", "1"])
            try eventually("the drawing to end", timeout: .seconds(4), every: .milliseconds(50)) {
                f.log.contains("no longer showing the popups on screen: its time ran out")
            }
            #expect(try f.ctl(["show", "--off"]).stdout.contains("nothing was being drawn"))

            try f.ctlOK(["show", "panel", "--for", "60"])
            try f.editConfigInPlace("[[popup]]\nname = \"other\"\nrect = [0, 0, 10, 10]\n")
            try f.ctlOK(["reload"])
            #expect(f.log.contains("no longer showing the popups on screen: the configuration has none of the popups it showed"))
        }
    }
}
