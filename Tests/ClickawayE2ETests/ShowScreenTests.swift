import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawayX11
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The root window's pixels, as `xwd -root` writes them (0xRRGGBB each).
struct Screenshot: Equatable {
    var width: Int
    var height: Int
    var pixels: [UInt32]

    subscript(x: Int, y: Int) -> UInt32 { pixels[y * width + x] }

    /// Takes one with `xwd`, the X utility, on `display`.
    static func take(_ display: String) throws -> Screenshot {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-shot-\(UUID().uuidString).xwd").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try ProgramRun.run(["xwd", "-root", "-silent", "-display", display, "-out", path],
                                     environment: ProcessInfo.processInfo.environment)
        guard run.status == 0 else { throw HarnessError("xwd failed: \(run.output)") }
        return try parse([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// XWD version 7: a header of big-endian words, the colour map, then the image.
    static func parse(_ bytes: [UInt8]) throws -> Screenshot {
        func word(_ i: Int) -> Int {
            Int(bytes[4 * i]) << 24 | Int(bytes[4 * i + 1]) << 16 | Int(bytes[4 * i + 2]) << 8 | Int(bytes[4 * i + 3])
        }
        guard bytes.count >= 100 else { throw HarnessError("xwd wrote \(bytes.count) bytes") }
        let headerSize = word(0), width = word(4), height = word(5), byteOrder = word(7)
        let bitsPerPixel = word(11), bytesPerLine = word(12), colours = word(19)
        let (red, green, blue) = (UInt32(word(14)), UInt32(word(15)), UInt32(word(16)))
        guard bitsPerPixel == 32 || bitsPerPixel == 24 else { throw HarnessError("xwd: \(bitsPerPixel) bits per pixel") }
        // 24 bits a pixel are packed in 3 bytes (xwd writes that for a DirectColor visual).
        let step = bitsPerPixel / 8
        let start = headerSize + 12 * colours
        guard bytes.count >= start + bytesPerLine * height else { throw HarnessError("xwd: the image is cut short") }
        func channel(_ p: UInt32, _ mask: UInt32) -> UInt32 { (p & mask) >> UInt32(mask.trailingZeroBitCount) & 0xFF }
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let o = start + y * bytesPerLine + step * x
                var p: UInt32 = 0
                for k in 0..<step {
                    // LSBFirst (0): the first byte is the lowest.
                    p |= UInt32(bytes[o + k]) << UInt32(8 * (byteOrder == 0 ? k : step - 1 - k))
                }
                pixels[y * width + x] = channel(p, red) << 16 | channel(p, green) << 8 | channel(p, blue)
            }
        }
        return Screenshot(width: width, height: height, pixels: pixels)
    }

    /// Where the two differ.
    func changes(to other: Screenshot) -> [(x: Int, y: Int)] {
        var out: [(x: Int, y: Int)] = []
        for y in 0..<height {
            for x in 0..<width where self[x, y] != other[x, y] { out.append((x, y)) }
        }
        return out
    }
}

/// `clickawayctl show` on X: the drawing changes the screen exactly where the open popups'
/// regions, slop, anchors and exclusions are, takes no click, and goes away without a trace.
@Suite("clickawayctl show on X", .serialized)
struct ShowScreenTests {
    /// A rect popup with regions (one passthrough), slop and an anchor; a window popup; an exclusion.
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "menu"
        rect = [300, 150, 400, 300]
        slop = 12
        anchors = [ { rect = [40, 10, 80, 24] } ]

        [[popup.region]]
        name = "header"
        rect = [0, 0, 400, 40]

        [[popup.region]]
        name = "shadow"
        rect = [0, 280, 400, 20]
        passthrough = true

        [[popup]]
        name = "pop"
        window = { class = "Pop" }

        [[exclude]]
        rect = [900, 500, 120, 80]

        """

    static let menu = Rect(x: 300, y: 150, width: 400, height: 300)
    static let anchor = Rect(x: 40, y: 10, width: 80, height: 24)
    static let exclusion = Rect(x: 900, y: 500, width: 120, height: 80)

    func show(_ f: DaemonRun, _ arguments: [String]) throws -> ProgramRun {
        let run = try f.ctl(["show"] + arguments)
        try f.sync()
        return run
    }

    /// The open popups' rectangles as the daemon has them.
    func openRects(_ f: DaemonFixture) throws -> [String: Rect] {
        Dictionary(try f.report().open.map { ($0.popup, $0.rect) }, uniquingKeysWith: { a, _ in a })
    }

    /// Every changed pixel lies in one of `allowed`, and each rectangle of `outlined` has
    /// changed pixels at its four corners.
    func expectChanges(_ before: Screenshot, _ during: Screenshot, allowed: [Rect], outlined: [Rect],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let changed = before.changes(to: during)
        let stray = changed.filter { p in !allowed.contains { $0.contains(x: Int32(p.x), y: Int32(p.y)) } }
        #expect(stray.isEmpty, "\(stray.count) pixels changed outside the hit areas, e.g. \(stray.prefix(5))", sourceLocation: sourceLocation)
        for r in outlined {
            let corners = [(r.x, r.y), (r.x + r.width - 1, r.y), (r.x, r.y + r.height - 1), (r.x + r.width - 1, r.y + r.height - 1)]
            for (x, y) in corners where x >= 0 && y >= 0 && Int(x) < before.width && Int(y) < before.height {
                #expect(before[Int(x), Int(y)] != during[Int(x), Int(y)], "no line at (\(x), \(y)) of \(r)", sourceLocation: sourceLocation)
            }
        }
    }

    /// The drawing windows: viewable InputOutput override-redirect top-levels of other clients
    /// (the shield is InputOnly; a window manager may have some too, which tests compare with).
    func drawingWindows(_ f: DaemonFixture) throws -> [WindowID] {
        let x = f.client.connection
        return try x.queryTree(x.root).children.filter { w in
            guard !x.isOwn(w) else { return false }
            let a = try x.getWindowAttributes(w)
            return a.mapState == .viewable && a.overrideRedirect && a.windowClass == .inputOutput
        }
    }

    @Test(arguments: [WindowManagerKind.openbox, .i3], XBackend.allCases)
    func theDrawingChangesOnlyTheHitAreasAndLeavesNoTrace(_ wm: WindowManagerKind, _ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config, windowManager: wm, backend: backend)
        try f.startDaemon()
        try f.window(Rect(x: 100, y: 480, width: 300, height: 200), class: "Pop")
        _ = try f.ctl(["open", "menu"])
        try f.eventually("both popups open") { try Set(f.openPopups()) == ["menu", "pop"] }
        let pop = try #require(try openRects(f)["pop"])
        let before = try Screenshot.take(f.xvfb.display)
        let others = try drawingWindows(f)

        let run = try show(f, ["--for", "60"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.stdout.contains("drawing pop, menu on 1 output for 60 s"), "\(run.output)")
        let during = try Screenshot.take(f.xvfb.display)
        let slopped = Self.menu.expanded(by: Insets(top: 12, right: 12, bottom: 12, left: 12))
        expectChanges(before, during, allowed: [slopped, pop, Self.anchor, Self.exclusion],
                      outlined: [slopped, Self.menu, pop, Self.anchor, Self.exclusion])
        // Nothing of it counts as a window: the same popups, the same rectangles.
        #expect(try openRects(f) == ["menu": Self.menu, "pop": pop])
        #expect(try f.report().open.allSatisfy { $0.members.isEmpty })
        #expect(try drawingWindows(f).count == others.count + 1)

        let off = try show(f, ["--off"])
        #expect(off.stdout.contains("stopped drawing"), "\(off.output)")
        #expect(try drawingWindows(f) == others)
        #expect(try Screenshot.take(f.xvfb.display) == before)
    }

    @Test(arguments: XBackend.allCases)
    func clicksInsideAndOutsideAreDecidedAsWithoutTheDrawing(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config, backend: backend)
        let under = try f.client.createWindow(at: Layout.background)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try show(f, ["pop", "--for", "60"]).status == 0)
        #expect(try drawingWindows(f).count == 1)

        try f.click(150, 130)  // on the drawn outline's label, inside the popup
        #expect(f.client.presses(popup) == [Click(button: 1, x: 50, y: 30)])
        try f.click(101, 101)  // on the outline itself
        #expect(f.client.presses(popup).count == 2)
        #expect(f.client.deleteRequests(popup) == 0)
        #expect(try f.openPopups() == ["pop"])

        try f.click(700, 500)
        #expect(f.client.deleteRequests(popup) == 1)
        #expect(f.client.presses(under).isEmpty)
        #expect(try f.openPopups().isEmpty)
    }

    /// Under a compositing manager (xcompmgr, which paints the screen from the windows'
    /// contents): the same picture, the same decisions, gone afterwards.
    @Test(arguments: XBackend.allCases)
    func underACompositingManager(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config, openbox: true, backend: backend)
        let compositor = try ChildProcess(["xcompmgr"], environment: f.environment)
        defer { compositor.stop() }
        try f.startDaemon()
        let under = try f.client.createWindow(at: Layout.background)
        _ = try f.ctl(["open", "menu"])
        try f.sync()
        var before = try Screenshot.take(f.xvfb.display)
        // The compositor paints in its own time: the screen is settled when two shots agree.
        try eventually("the compositor to settle", timeout: .seconds(5), every: .milliseconds(100)) {
            let again = try Screenshot.take(f.xvfb.display)
            defer { before = again }
            return again == before && compositor.isRunning
        }
        #expect(try show(f, ["--for", "60"]).status == 0)
        let slopped = Self.menu.expanded(by: Insets(all: 12))
        var during = before
        try eventually("the drawing on the screen", timeout: .seconds(5), every: .milliseconds(100)) {
            during = try Screenshot.take(f.xvfb.display)
            return Self.corners(slopped).allSatisfy { before[$0.x, $0.y] != during[$0.x, $0.y] }
        }
        expectChanges(before, during, allowed: [slopped, Self.anchor, Self.exclusion],
                      outlined: [slopped, Self.menu, Self.anchor, Self.exclusion])
        try f.click(310, 160)  // on the popup's outline and label: inside
        try f.client.waitForPresses(1, on: under, "the inside click to reach the window under the popup (openbox replays it)")
        #expect(try f.openPopups() == ["menu"])
        #expect(f.client.presses(under).count == 1)
        _ = try show(f, ["--off"])
        try eventually("the drawing to go", timeout: .seconds(5), every: .milliseconds(100)) {
            try Screenshot.take(f.xvfb.display) == before
        }
        try f.click(1000, 650)  // outside: dismissed and swallowed
        #expect(try f.openPopups().isEmpty)
        #expect(f.client.presses(under).count == 1)
        #expect(compositor.isRunning)
    }

    static func corners(_ r: Rect) -> [(x: Int, y: Int)] {
        [(Int(r.x), Int(r.y)), (Int(r.x + r.width - 1), Int(r.y + r.height - 1))]
    }

    @Test func theDrawingFollowsAWindowThatMoves() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let popup = try f.window(Layout.popup, class: "Pop")
        #expect(try show(f, ["pop", "--for", "60"]).status == 0)
        let moved = Rect(x: 700, y: 400, width: 300, height: 200)
        try f.client.move(popup, to: moved)
        try f.eventually("the popup's new place") { try openRects(f)["pop"] == moved }
        let drawn = try Screenshot.take(f.xvfb.display)
        _ = try show(f, ["--off"])
        let plain = try Screenshot.take(f.xvfb.display)
        expectChanges(plain, drawn, allowed: [moved, Self.exclusion], outlined: [moved, Self.exclusion])
    }

    @Test func showEndsOnTime() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        _ = try f.ctl(["open", "menu"])
        let before = try Screenshot.take(f.xvfb.display)
        let started = ContinuousClock.now
        #expect(try show(f, ["--for", "1"]).status == 0)
        #expect(try drawingWindows(f).count == 1)
        try f.eventually("the drawing to end", timeout: .seconds(5)) { try drawingWindows(f).isEmpty }
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(ContinuousClock.now - started < .seconds(4))
        #expect(try Screenshot.take(f.xvfb.display) == before)
        #expect(f.log.contains("no longer showing the popups on screen: its time ran out"))
    }

    @Test(arguments: XBackend.allCases)
    func escapeEndsTheDrawingAndNothingElse(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config.replacingOccurrences(of: "grace_ms = 0", with: "grace_ms = 0\nescape = true"),
                                  backend: backend)
        try f.startDaemon()
        let focused = try f.window(Layout.popup, class: "Pop")
        try f.client.focus(focused)
        #expect(try f.status()["escape"]?["active"]?.boolValue == true)
        _ = try f.ctl(["open", "menu"])
        #expect(try show(f, ["--for", "60"]).status == 0)
        let escape = try #require(f.client.connection.keycodes(forKeysym: Keysym.escape).min())
        try f.input.key(escape)
        try f.settle()
        #expect(try drawingWindows(f).isEmpty)
        #expect(f.log.contains("no longer showing the popups on screen: the Escape key"))
        // The popups that take Escape stay: it ended the drawing only.
        #expect(try Set(f.openPopups()) == ["menu", "pop"])
        #expect(f.client.keys(focused).isEmpty)
        // Without popups that want it, Escape is grabbed only while drawing, and only in grab
        // mode: in shield mode a grab on the root would cost every click in a hole.
        let plain = try DaemonFixture(config: Self.config, backend: backend)
        try plain.startDaemon()
        _ = try plain.ctl(["open", "menu"])
        #expect(try plain.status()["escape"]?["active"]?.boolValue == false)
        #expect(try show(plain, ["--for", "60"]).status == 0)
        #expect(try plain.status()["escape"]?["active"]?.boolValue == (backend == .grab))
        _ = try show(plain, ["--off"])
        #expect(try plain.status()["escape"]?["active"]?.boolValue == false)
    }

    @Test func showEndsWhenAReloadTakesThePopupAway() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        _ = try f.ctl(["open", "menu"])
        let before = try Screenshot.take(f.xvfb.display)
        #expect(try show(f, ["menu", "--for", "60"]).status == 0)
        #expect(try drawingWindows(f).count == 1)
        try f.editConfigInPlace("[[popup]]\nname = \"other\"\nrect = [0, 0, 10, 10]\n")
        #expect(try f.ctl(["reload"]).status == 0)
        try f.sync()
        #expect(try drawingWindows(f).isEmpty)
        #expect(try Screenshot.take(f.xvfb.display) == before)
        #expect(f.log.contains("no longer showing the popups on screen: the configuration has none of the popups it showed"))
    }

    @Test func showSaysWhenNoPopupIsOpenAndAllDrawsTheClosedRectPopups() throws {
        let f = try DaemonFixture(config: Self.config)
        try f.startDaemon()
        let unknown = try show(f, ["mneu"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no popup named \"mneu\""), "\(unknown.output)")
        #expect(try drawingWindows(f).isEmpty)

        // Nothing open: it says so, draws the exclusion, and the popups once they open.
        let empty = try Screenshot.take(f.xvfb.display)
        let none = try show(f, ["--for", "60"])
        #expect(none.status == 0)
        #expect(none.stdout.contains("no popup is open: drawing the popups as they open on 1 output for 60 s"), "\(none.output)")
        expectChanges(empty, try Screenshot.take(f.xvfb.display), allowed: [Self.exclusion], outlined: [Self.exclusion])
        _ = try f.ctl(["open", "menu"])
        try f.sync()
        let slop = Self.menu.expanded(by: Insets(all: 12))
        expectChanges(empty, try Screenshot.take(f.xvfb.display), allowed: [slop, Self.anchor, Self.exclusion],
                      outlined: [slop, Self.menu, Self.anchor, Self.exclusion])
        _ = try f.ctl(["close", "menu"])
        _ = try show(f, ["--off"])
        #expect(try Screenshot.take(f.xvfb.display) == empty)

        let before = try Screenshot.take(f.xvfb.display)
        let all = try show(f, ["--all", "--for", "60"])
        #expect(all.status == 0, "\(all.output)")
        #expect(all.stdout.contains("drawing menu on"), "\(all.output)")
        let slopped = Self.menu.expanded(by: Insets(top: 12, right: 12, bottom: 12, left: 12))
        expectChanges(before, try Screenshot.take(f.xvfb.display), allowed: [slopped, Self.anchor, Self.exclusion],
                      outlined: [slopped, Self.menu, Self.anchor, Self.exclusion])
        // Still nothing open: drawing a closed popup does not open it.
        #expect(try f.openPopups().isEmpty)
        #expect(try !f.isIntercepting())
    }
}
