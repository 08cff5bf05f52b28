import ClickawayCore
import ClickawaySystem
import ClickawayWayland
import ProcessSupport

extension WaylandConnection {
    /// Dispatches events until `condition` gives a value, at most `timeout`; then round-trips,
    /// so the compositor has also handled what the listeners answered (a configure's ack and
    /// buffer) before another connection's requests. `check` runs between reads, so a dead
    /// compositor fails the wait early.
    @discardableResult
    public func wait<T>(
        for what: String, timeout: Duration = .seconds(5), check: () throws -> Void = {}, _ condition: () throws -> T?
    ) throws -> T {
        let deadline = Deadline(after: timeout)
        while true {
            if let value = try condition() {
                try roundtrip()
                return value
            }
            try check()
            guard !deadline.hasPassed() else { throw HarnessError("timed out after \(timeout) waiting for \(what)") }
            try dispatch(waitingAtMost: min(deadline.pollTimeout(), 100))
        }
    }
}

/// A test client with a transparent surface covering one output on a layer below the
/// overlay (top, or background to lie under windows too): it records the pointer buttons
/// and touch points it receives, like a window that a click passing through the overlay
/// would reach.
public final class ClickRecorder {
    public let client: WaylandClient
    private let surface: LayerSurface
    public let output: OutputInfo
    private var received: [PressEvent] = []

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
    /// device, such as a `TestInput`, does).
    public func waitForPointer(timeout: Duration = .seconds(5)) throws {
        let seat = client.seat
        try client.connection.wait(for: "the test client to get the seat's pointer", timeout: timeout) {
            seat?.hasPointer == true ? true : nil
        }
    }

    /// Waits until the seat's touch reached this client.
    public func waitForTouch(timeout: Duration = .seconds(5)) throws {
        let seat = client.seat
        try client.connection.wait(for: "the test client to get the seat's touch", timeout: timeout) {
            seat?.hasTouch == true ? true : nil
        }
    }

    /// Forgets every event received so far.
    public func forget() { received.removeAll() }

    /// Every button and touch event received so far, in global coordinates. Round-trips
    /// first, so everything the compositor sent before this call is in.
    public func clicks() throws -> [RecordedClick] {
        try client.connection.roundtrip()
        received += client.takePresses()
        return received.filter { $0.surface == surface.surfaceID }.map { RecordedClick($0, on: output) }
    }
}

/// A press or release a test client received, in global coordinates: compared by pixel,
/// button, state and whether it was a touch; `position` keeps the exact point.
public struct RecordedClick: Hashable, Sendable, CustomStringConvertible {
    public var x: Int32
    public var y: Int32
    public var button: UInt32
    public var isPressed: Bool
    /// A touch point rather than a pointer button (`button` is then BTN_LEFT).
    public var isTouch: Bool
    /// Where exactly, to the 1/256 pixel the client was sent.
    public var position: Position

    public init(x: Int32, y: Int32, button: UInt32, isPressed: Bool, isTouch: Bool = false) {
        self.x = x
        self.y = y
        self.button = button
        self.isPressed = isPressed
        self.isTouch = isTouch
        position = Position(pixelX: x, y: y)
    }

    init(_ event: PressEvent, on output: OutputInfo) {
        position = Position(x: Double(output.rect.x) + event.x, y: Double(output.rect.y) + event.y)
        (x, y) = position.pixel
        button = event.button
        isPressed = event.isPressed
        if case .touch = event.device { isTouch = true } else { isTouch = false }
    }

    public static func == (a: Self, b: Self) -> Bool {
        (a.x, a.y, a.button, a.isPressed, a.isTouch) == (b.x, b.y, b.button, b.isPressed, b.isTouch)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(x)
        hasher.combine(y)
        hasher.combine(button)
        hasher.combine(isPressed)
        hasher.combine(isTouch)
    }

    public var description: String {
        "\(isPressed ? "press" : "release") of \(isTouch ? "a touch" : "0x\(String(button, radix: 16))") at \(position)"
    }
}

/// The test's mouse and finger: the compositor's input injector (a wlroots virtual pointer,
/// KWin's fake input) on a connection of its own. While it exists the seat has a pointer
/// (and on KWin touch). Every click moves first, since compositors pick the surface under
/// the pointer on motion only.
public final class TestInput {
    public let client: WaylandClient
    private let injector: any InputInjector
    private var nextTouch: UInt32 = 0

    public init(display: String) throws {
        client = try WaylandClient(display: display)
        injector = try client.makeInjector()
        try client.connection.roundtrip()
    }

    /// Whether `tap` can inject touch points here.
    public var injectsTouch: Bool { injector.injectsTouch }

    /// Clicks `button` at the global point (x, y); returns once the compositor has handled
    /// it, and so has sent every client the events it causes.
    public func click(x: Int32, y: Int32, button: UInt32 = PointerButton.left) throws {
        try click(at: Position(pixelX: x, y: y), button: button)
    }

    /// Clicks at an exact point (to the 1/256 pixel).
    public func click(at position: Position, button: UInt32 = PointerButton.left) throws {
        try settleLayout()
        try injector.click(at: position, button: button)
        try client.connection.roundtrip()
    }

    /// Presses and releases `button` where the pointer already is, without moving it.
    public func clickWithoutMoving(button: UInt32 = PointerButton.left) throws {
        injector.button(button, pressed: true)
        injector.button(button, pressed: false)
        try client.connection.roundtrip()
    }

    /// A finger down and up at the point; throws where touch cannot be injected.
    public func tap(at position: Position) throws {
        guard injectsTouch else { throw HarnessError("\(injector.protocolName) cannot inject touch points") }
        nextTouch &+= 1
        injector.tap(at: position, id: nextTouch)
        try client.connection.roundtrip()
    }

    /// Absolute motion is relative to the layout as of now: the first round trip brings
    /// any new output, the second its position and size.
    private func settleLayout() throws {
        try client.connection.roundtrip()
        try client.connection.roundtrip()
    }
}
