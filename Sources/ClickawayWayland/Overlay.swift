import ClickawayCore

/// A click that landed on the overlay, in global coordinates.
public struct OverlayClick: Hashable, Sendable, CustomStringConvertible {
    public var output: String
    public var x: Int32
    public var y: Int32
    public var button: UInt32
    public var isPressed: Bool
    public var serial: UInt32
    public var time: UInt32

    public var description: String {
        "\(isPressed ? "press" : "release") of button 0x\(String(button, radix: 16)) at (\(x), \(y)) on \(output)"
    }
}

/// One transparent layer surface per output on the overlay layer, whose input region is
/// the output minus the holes: clicks in a hole reach the surfaces below untouched, all
/// others land here. Call `sync()` after dispatching to follow outputs as they come and go.
/// The overlay reads every pointer button its client receives, so give it a client of its own.
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

    /// The clicks that landed on the overlay since the last call, in global coordinates.
    public func takeClicks() -> [OverlayClick] {
        let outputs = Dictionary(client.outputs.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return client.takePointerButtons().compactMap { event in
            guard let id = event.surface,
                  let surface = surfaces.values.first(where: { $0.surfaceID == id }),
                  let output = outputs[surface.output] else { return nil }
            return OverlayClick(
                output: output.name,
                x: output.rect.x + Int32(event.x.rounded(.down)), y: output.rect.y + Int32(event.y.rounded(.down)),
                button: event.button, isPressed: event.isPressed, serial: event.serial, time: event.time)
        }
    }

    private func localHoles(on output: OutputInfo) -> [Rect] {
        holes.map { Rect(x: $0.x &- output.rect.x, y: $0.y &- output.rect.y, width: $0.width, height: $0.height) }
    }
}
