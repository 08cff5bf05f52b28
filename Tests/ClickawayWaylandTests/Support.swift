import ClickawayCore
import ClickawayWayland
import ProcessSupport
import Testing
import WaylandHarness

/// A headless compositor with the overlay's client, a test client covering its first
/// output below the overlay, and an injector to click with (the compositor's `TestDesk`).
struct Scene {
    let compositor: HeadlessCompositor
    let overlay: Overlay
    let below: ClickRecorder
    let input: TestInput

    var connection: WaylandConnection { overlay.client.connection }
    /// The first output's name ("HEADLESS-1", KWin's "Virtual-0").
    var output: String { compositor.outputs[0].name }

    /// Dispatches the overlay's events until it has reported `count` button events.
    func overlayClicks(_ count: Int, timeout: Duration = .seconds(5)) throws -> [OverlayClick] {
        var clicks: [OverlayClick] = []
        do {
            try connection.wait(for: "\(count) button events on the overlay (got \(clicks))", timeout: timeout,
                                check: { try compositor.checkRunning(while: "waiting for clicks") }) {
                clicks += overlay.takeClicks()
                return clicks.count >= count ? true : nil
            }
        } catch {
            throw HarnessError("\(error); meanwhile the client below got \((try? below.clicks()) ?? [])")
        }
        return clicks
    }

    /// The overlay's button events so far, after a round trip: none may be missing.
    func overlayClicksSoFar() throws -> [OverlayClick] {
        try connection.roundtrip()
        return overlay.takeClicks()
    }

    /// Sets the holes and waits until the compositor has applied them.
    func setHoles(_ holes: [Rect]) throws {
        overlay.setHoles(holes)
        try connection.roundtrip()
    }

    /// A press and a release of the left button at (x, y) on the first output, as the
    /// overlay reports them.
    func leftClick(_ x: Int32, _ y: Int32) -> [(String, Int32, Int32, UInt32, Bool)] {
        [(output, x, y, PointerButton.left, true), (output, x, y, PointerButton.left, false)]
    }
}

/// A scene on the shared compositor of `kind`, or on a private one (for tests that change
/// it for good, such as adding an output).
func withScene(_ kind: CompositorKind, privateCompositor: Bool = false, _ body: (Scene) throws -> Void) throws {
    if privateCompositor {
        let compositor = try HeadlessCompositor(kind)
        defer { compositor.stop() }
        try withScene(on: TestDesk(compositor), body)
    } else {
        try SharedCompositors.with(kind) { try withScene(on: $0, body) }
    }
}

private func withScene(on desk: TestDesk, _ body: (Scene) throws -> Void) throws {
    let output = desk.compositor.outputs[0].name
    let overlay = try Overlay(client: WaylandClient(display: desk.compositor.waylandSocket))
    try overlay.client.connection.wait(for: "the overlay to cover \(output)") {
        try overlay.sync()
        return overlay.coveredOutputs.isEmpty ? nil : true
    }
    let seat = overlay.client.seat
    try overlay.client.connection.wait(for: "the overlay's client to get the seat's pointer") {
        seat?.hasPointer == true ? true : nil
    }
    try body(Scene(compositor: desk.compositor, overlay: overlay, below: desk.below, input: desk.input))
}

extension Array where Element == OverlayClick {
    /// The fields a test compares; serial and time vary.
    var essentials: [(String, Int32, Int32, UInt32, Bool)] { map { ($0.output, $0.x, $0.y, $0.button, $0.isPressed) } }
}
