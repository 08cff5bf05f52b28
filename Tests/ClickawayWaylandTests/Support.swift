import ClickawayCore
import ClickawayWayland
import Testing
import WaylandHarness

/// A headless sway with the overlay's client, a test client covering HEADLESS-1 below the
/// overlay, and a virtual pointer to click with.
struct Scene {
    let sway: HeadlessSway
    let overlay: Overlay
    let below: ClickRecorder
    let pointer: TestPointer

    var connection: WaylandConnection { overlay.client.connection }

    /// Dispatches the overlay's events until it has reported `count` button events.
    func overlayClicks(_ count: Int, timeout: Duration = .seconds(5)) throws -> [OverlayClick] {
        var clicks: [OverlayClick] = []
        try connection.wait(for: "\(count) button events on the overlay (got \(clicks))", timeout: timeout,
                            check: { try sway.checkRunning(while: "waiting for clicks") }) {
            clicks += overlay.takeClicks()
            return clicks.count >= count ? true : nil
        }
        return clicks
    }

    /// The overlay's button events so far, after a round trip: none may be missing.
    func overlayClicksSoFar() throws -> [OverlayClick] {
        try connection.roundtrip()
        return overlay.takeClicks()
    }

    /// Sets the holes and waits until sway has applied them.
    func setHoles(_ holes: [Rect]) throws {
        overlay.setHoles(holes)
        try connection.roundtrip()
    }
}

func withScene(_ body: (Scene) throws -> Void) throws {
    let sway = try HeadlessSway()
    defer { sway.stop() }
    let below = try ClickRecorder(display: sway.waylandSocket, output: "HEADLESS-1")
    let overlay = try Overlay(client: WaylandClient(display: sway.waylandSocket))
    try overlay.client.connection.wait(for: "the overlay to cover HEADLESS-1") {
        try overlay.sync()
        return overlay.coveredOutputs.isEmpty ? nil : true
    }
    // The pointer device last: its arrival is what gives both clients a wl_pointer.
    let pointer = try TestPointer(display: sway.waylandSocket)
    try below.waitForPointer()
    let seat = overlay.client.seat
    try overlay.client.connection.wait(for: "the overlay's client to get the seat's pointer") {
        seat?.hasPointer == true ? true : nil
    }
    try body(Scene(sway: sway, overlay: overlay, below: below, pointer: pointer))
}

/// A press and a release of the left button at (x, y), as the overlay reports them.
func leftClick(_ output: String, _ x: Int32, _ y: Int32) -> [(String, Int32, Int32, UInt32, Bool)] {
    [(output, x, y, PointerButton.left, true), (output, x, y, PointerButton.left, false)]
}

extension Array where Element == OverlayClick {
    /// The fields a test compares; serial and time vary.
    var essentials: [(String, Int32, Int32, UInt32, Bool)] { map { ($0.output, $0.x, $0.y, $0.button, $0.isPressed) } }
}
