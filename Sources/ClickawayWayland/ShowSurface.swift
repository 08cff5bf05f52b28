internal import CWaylandClient
internal import CWaylandProtocols
public import ClickawayCore
internal import Glibc

/// A layer surface over one output that only shows a picture, for `clickawayctl show`: on
/// the overlay layer (above the click-catching overlay, made earlier), anchored to every
/// edge, no exclusive zone, no keyboard, and an empty input region, so every click and
/// every motion goes to what is below as if it were not there. Its shared-memory buffer
/// is transparent but for the rectangles drawn. Destroyed when the object goes.
public final class ShowSurface {
    public let output: OutputID
    private let client: WaylandClient
    private let surface: OpaquePointer
    private let layerSurface: OpaquePointer
    private let listener: Listener<zwlr_layer_surface_v1_listener>
    private var buffer: OpaquePointer?
    private var size: (width: Int32, height: Int32)?
    /// What to draw, in surface coordinates, 0xRRGGBB, later ones on top.
    private var fills: [(rect: Rect, colour: UInt32)]
    public private(set) var failure: WaylandError?

    public static let namespace = "clickaway-show"

    public init(client: WaylandClient, output: OutputID, fills: [(rect: Rect, colour: UInt32)]) throws {
        guard let compositor = client.compositor, let shell = client.layerShell, client.shm != nil else {
            throw WaylandError.missingGlobal(interface: "zwlr_layer_shell_v1, wl_compositor and wl_shm", purpose: "for clickawayctl show")
        }
        guard let outputProxy = client.outputProxy(output) else {
            throw WaylandError.unknownOutput("with registry name \(output.rawValue)")
        }
        self.client = client
        self.output = output
        self.fills = fills
        surface = wl_compositor_create_surface(compositor)!
        layerSurface = zwlr_layer_shell_v1_get_layer_surface(shell, surface, outputProxy, Layer.overlay.rawValue, Self.namespace)!
        var functions = zwlr_layer_surface_v1_listener()
        functions.configure = { data, _, serial, width, height in
            owner(data, as: ShowSurface.self).configure(serial: serial, width: Int32(width), height: Int32(height))
        }
        functions.closed = { _, _ in }
        listener = Listener(functions)
        zwlr_layer_surface_v1_add_listener(layerSurface, listener.pointer, Unmanaged.passUnretained(self).toOpaque())
        LayerSurface.coverOutput(layerSurface)
        // No input anywhere, from the first commit on.
        let nothing = wl_compositor_create_region(compositor)!
        wl_surface_set_input_region(surface, nothing)
        wl_region_destroy(nothing)
        wl_surface_commit(surface)
    }

    deinit {
        zwlr_layer_surface_v1_destroy(layerSurface)
        wl_surface_destroy(surface)
        if let buffer { wl_buffer_destroy(buffer) }
    }

    /// Draws `fills` (surface coordinates) instead, at once when the surface is configured.
    public func draw(_ fills: [(rect: Rect, colour: UInt32)]) {
        self.fills = fills
        guard let size else { return }
        paint(width: size.width, height: size.height)
    }

    private func configure(serial: UInt32, width: Int32, height: Int32) {
        zwlr_layer_surface_v1_ack_configure(layerSurface, serial)
        guard width > 0, height > 0 else {
            failure = .emptySurface(width: width, height: height)
            return
        }
        size = (width, height)
        paint(width: width, height: height)
    }

    /// A new buffer with the picture, attached and committed.
    private func paint(width: Int32, height: Int32) {
        do {
            let fresh = try client.makeBuffer(width: width, height: height) { pixels in
                for f in fills {
                    let x0 = max(0, f.rect.x), y0 = max(0, f.rect.y)
                    let x1 = min(width, f.rect.x &+ f.rect.width), y1 = min(height, f.rect.y &+ f.rect.height)
                    guard x0 < x1, y0 < y1 else { continue }
                    let argb = 0xFF00_0000 | f.colour
                    for y in y0..<y1 {
                        let row = Int(y) * Int(width)
                        for x in x0..<x1 { pixels[row + Int(x)] = argb }
                    }
                }
            }
            wl_surface_attach(surface, fresh, 0, 0)
            wl_surface_damage_buffer(surface, 0, 0, width, height)
            wl_surface_commit(surface)
            if let buffer { wl_buffer_destroy(buffer) }
            buffer = fresh
        } catch {
            failure = error as? WaylandError
        }
    }
}
