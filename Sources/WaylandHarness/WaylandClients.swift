import ClickawayCore
import ClickawayWayland
import XTestHarness

extension WaylandConnection {
    /// Dispatches events until `condition` gives a value, at most `timeout`; then round-trips,
    /// so the compositor has also handled what the listeners answered (a configure's ack and
    /// buffer) before another connection's requests. `check` runs between reads, so a dead
    /// compositor fails the wait early.
    @discardableResult
    public func wait<T>(
        for what: String, timeout: Duration = .seconds(5), check: () throws -> Void = {}, _ condition: () throws -> T?
    ) throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = try condition() {
                try roundtrip()
                return value
            }
            try check()
            let left = waitMilliseconds(until: deadline)
            guard left > 0 else { throw HarnessError("timed out after \(timeout) waiting for \(what)") }
            try dispatch(waitingAtMost: min(left, 100))
        }
    }
}

/// A test client with a transparent surface covering one output on a layer below the
/// overlay (top, or background to lie under windows too): it records the pointer buttons
/// it receives, like a window that a click passing through the overlay would reach.
public final class ClickRecorder {
    public let client: WaylandClient
    private let surface: LayerSurface
    public let output: OutputInfo
    private var received: [PointerButtonEvent] = []

    public init(display: String, output name: String, layer: Layer = .top, timeout: Duration = .seconds(5)) throws {
        client = try WaylandClient(display: display)
        guard let output = client.outputs.first(where: { $0.name == name }) else {
            throw HarnessError("the test client sees no output \(name); it sees \(client.outputs)")
        }
        self.output = output
        surface = try LayerSurface(client: client, output: output.id, layer: layer, namespace: "clickaway-test-below")
        try client.connection.wait(for: "the test client's surface on \(name) to be configured", timeout: timeout) {
            try surface.checkFailure()
            return surface.isMapped ? true : nil
        }
    }

    /// Waits until the seat's pointer reached this client (it exists only while a pointer
    /// device, such as a `TestPointer`, does).
    public func waitForPointer(timeout: Duration = .seconds(5)) throws {
        let seat = client.seat
        try client.connection.wait(for: "the test client to get the seat's pointer", timeout: timeout) {
            seat?.hasPointer == true ? true : nil
        }
    }

    /// Every button event received so far, in global coordinates. Round-trips first, so
    /// everything the compositor sent before this call is in.
    public func clicks() throws -> [RecordedClick] {
        try client.connection.roundtrip()
        received += client.takePointerButtons()
        return received.filter { $0.surface == surface.surfaceID }.map {
            RecordedClick(
                x: output.rect.x + Int32($0.x.rounded(.down)), y: output.rect.y + Int32($0.y.rounded(.down)),
                button: $0.button, isPressed: $0.isPressed)
        }
    }
}

/// A button event a test client received, in global coordinates.
public struct RecordedClick: Hashable, Sendable, CustomStringConvertible {
    public var x: Int32
    public var y: Int32
    public var button: UInt32
    public var isPressed: Bool

    public init(x: Int32, y: Int32, button: UInt32, isPressed: Bool) {
        self.x = x
        self.y = y
        self.button = button
        self.isPressed = isPressed
    }

    public var description: String { "\(isPressed ? "press" : "release") of 0x\(String(button, radix: 16)) at (\(x), \(y))" }
}

/// The test's mouse: a virtual pointer on a connection of its own. While it exists the
/// seat has a pointer. Every click moves first, since sway picks the surface under the
/// pointer on motion only.
public final class TestPointer {
    public let client: WaylandClient
    private let pointer: VirtualPointer

    public init(display: String) throws {
        client = try WaylandClient(display: display)
        pointer = try VirtualPointer(client: client)
        try client.connection.roundtrip()
    }

    /// Clicks `button` at the global point (x, y); returns once sway has handled it, and so
    /// has sent every client the events it causes.
    public func click(x: Int32, y: Int32, button: UInt32 = PointerButton.left) throws {
        // Absolute motion is relative to the layout as of now: the first round trip brings
        // any new output, the second its position and size.
        try client.connection.roundtrip()
        try client.connection.roundtrip()
        try pointer.click(x: x, y: y, button: button)
        try client.connection.roundtrip()
    }
}

/// Milliseconds left until `deadline`, for poll(2); 0 once it has passed.
func waitMilliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
    let left = deadline - .now
    guard left > .zero else { return 0 }
    let (seconds, attoseconds) = left.components
    return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
}
