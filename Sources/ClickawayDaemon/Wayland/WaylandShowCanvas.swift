internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayWayland

/// `clickawayctl show` on Wayland: a `ShowSurface` per output on the overlay's connection
/// (it takes no input, so the overlay's presses stay the only ones that client reads),
/// created after the overlay's and so above it, repainted in place on every change.
extension WaylandDisplay {
    func makeShowCanvas() throws(Refusal) -> any ShowCanvas { WaylandShowCanvas(client: client) }
}

final class WaylandShowCanvas: ShowCanvas {
    private let client: WaylandClient
    private var surfaces: [OutputID: ShowSurface] = [:]

    init(client: WaylandClient) { self.client = client }

    var outputCount: Int { client.outputs.count }

    func draw(_ picture: ShowPicture) {
        let outputs = client.outputs
        let present = Set(outputs.map(\.id))
        surfaces = surfaces.filter { present.contains($0.key) }
        for output in outputs {
            let fills = picture.fills(on: output.rect).map { f in
                (rect: f.rect.offsetBy(dx: -output.rect.x, dy: -output.rect.y), colour: f.colour)
            }
            if let surface = surfaces[output.id] {
                surface.draw(fills)
            } else if let surface = try? ShowSurface(client: client, output: output.id, fills: fills) {
                surfaces[output.id] = surface
            }
        }
    }

    func clear() { surfaces = [:] }
}
