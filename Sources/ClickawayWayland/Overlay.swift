public import ClickawayCore

/// A press or release that landed on the overlay: a pointer button, a touch point or a pen
/// tip, in global coordinates.
public struct OverlayClick: Hashable, Sendable, CustomStringConvertible {
    public var output: String
    public var device: InputDevice
    /// Where it landed, as exact as the compositor said, and outside every hole (see
    /// `Overlay.outsideHoles`).
    public var position: Position
    /// A Linux button code; `PointerButton.left` for touch points and pen tips.
    public var button: UInt32
    public var isPressed: Bool
    /// A touch sequence the compositor took back: it ended without a lift.
    public var isCancelled: Bool
    public var serial: UInt32
    public var time: UInt32

    /// The pixel it landed in.
    public var x: Int32 { position.pixel.x }
    public var y: Int32 { position.pixel.y }

    public var description: String {
        let what = device == .pointer ? "button 0x\(String(button, radix: 16))" : "\(device)"
        return "\(isCancelled ? "cancel" : isPressed ? "press" : "release") of \(what) at \(position) on \(output)"
    }
}

/// One transparent layer surface per output on the overlay layer, whose input region is
/// the output minus the holes: clicks in a hole reach the surfaces below untouched, all
/// others land here. Call `sync()` after dispatching to follow outputs as they come and go.
/// The overlay reads every press its client receives (buttons, touch points, pen tips), so
/// give it a client of its own.
public final class Overlay {
    public let client: WaylandClient
    private var surfaces: [OutputID: LayerSurface] = [:]
    public private(set) var holes: [Rect] = []
    /// The layer-shell namespace, which compositors show in their layer listings.
    public static let namespace = "clickaway"

    public init(client: WaylandClient) throws {
        guard client.layerShell != nil else {
            throw WaylandError.missingGlobal(interface: "zwlr_layer_shell_v1", purpose: "for the click-catching overlay")
        }
        self.client = client
        try sync()
    }

    /// Creates a surface for every output that has none and drops those whose output has
    /// gone or which the compositor closed.
    public func sync() throws {
        let outputs = client.outputs
        let present = Set(outputs.map(\.id))
        surfaces = surfaces.filter { present.contains($0.key) && !$0.value.isClosed }
        for output in outputs where surfaces[output.id] == nil {
            let surface = try LayerSurface(client: client, output: output.id, layer: .overlay, namespace: Self.namespace)
            surface.setInputRegion(excluding: localHoles(on: output))
            surfaces[output.id] = surface
        }
        for surface in surfaces.values { try surface.checkFailure() }
    }

    /// The outputs the overlay currently covers with a configured surface.
    public var coveredOutputs: [OutputInfo] {
        client.outputs.filter { surfaces[$0.id]?.isMapped == true }
    }

    /// Sets the points where clicks pass through (global coordinates) on every output.
    public func setHoles(_ holes: [Rect]) {
        self.holes = holes
        for output in client.outputs {
            surfaces[output.id]?.setInputRegion(excluding: localHoles(on: output))
        }
    }

    /// The presses and releases that landed on the overlay since the last call, in global
    /// coordinates.
    public func takeClicks() -> [OverlayClick] {
        let outputs = Dictionary(client.outputs.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return client.takePresses().compactMap { event in
            guard let id = event.surface,
                  let surface = surfaces.values.first(where: { $0.surfaceID == id }),
                  let output = outputs[surface.output] else { return nil }
            let position = Position(x: Double(output.rect.x) + event.x, y: Double(output.rect.y) + event.y)
            return OverlayClick(
                output: output.name, device: event.device, position: Self.outsideHoles(position, holes: holes),
                button: event.button, isPressed: event.isPressed, isCancelled: event.isCancelled,
                serial: event.serial, time: event.time)
        }
    }

    /// Input reaches the overlay only outside its holes: the compositor tested the exact
    /// point against the input region. A position reported inside a hole was rounded into
    /// it (KWin 5.27 reports whole pixels while it hit-tests the exact point, so 99.6 left
    /// of a hole at 100 comes as 100): it is moved to the nearest point just outside that
    /// hole, at most a pixel away, so the click is decided where it was made. Further in,
    /// the holes changed since the compositor's test, and the point stays as it is.
    public static func outsideHoles(_ position: Position, holes: [Rect]) -> Position {
        let pixel = position.pixel
        guard let hole = holes.first(where: { $0.contains(x: pixel.x, y: pixel.y) }) else { return position }
        let step = 1.0 / 256  // one wl_fixed step: the last point before an edge
        let (left, top) = (Double(hole.x), Double(hole.y))
        let (right, bottom) = (left + Double(hole.width), top + Double(hole.height))
        let candidates = [
            Position(x: left - step, y: position.y), Position(x: right, y: position.y),
            Position(x: position.x, y: top - step), Position(x: position.x, y: bottom),
        ]
        var best: (position: Position, distance: Double)?
        for candidate in candidates {
            let distance = abs(candidate.x - position.x) + abs(candidate.y - position.y)
            let p = candidate.pixel
            guard distance <= 1, !holes.contains(where: { $0.contains(x: p.x, y: p.y) }) else { continue }
            if best.map({ distance < $0.distance }) ?? true { best = (candidate, distance) }
        }
        return best?.position ?? position
    }

    private func localHoles(on output: OutputInfo) -> [Rect] {
        holes.map { Rect(x: $0.x &- output.rect.x, y: $0.y &- output.rect.y, width: $0.width, height: $0.height) }
    }
}
