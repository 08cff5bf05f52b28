internal import CWaylandClient
internal import CWaylandProtocols
public import ClickawayCore
internal import Glibc

/// A wlr-layer-shell layer.
public enum Layer: UInt32, Sendable {
    case background = 0, bottom = 1, top = 2, overlay = 3
}

/// A layer surface that covers one output whole (anchored to every edge, exclusive zone
/// -1, no keyboard focus) and shows a transparent buffer. Its input region is the output
/// minus the rectangles given to `setInputRegion(excluding:)`: clicks there go to whatever
/// lies below.
///
/// Life cycle (layer-shell): the first commit carries no buffer; the compositor answers
/// with configure(size); the surface acks it and attaches a buffer of that size.
public final class LayerSurface {
    public let output: OutputID
    /// The wl_surface's id, to recognise this surface in `PointerButtonEvent.surface`.
    public let surfaceID: ObjectID
    private let client: WaylandClient
    private let surface: OpaquePointer
    private let layerSurface: OpaquePointer
    private let listener: Listener<zwlr_layer_surface_v1_listener>
    private var buffer: OpaquePointer?
    /// The size of the attached buffer, the compositor's last configure.
    public private(set) var size: (width: Int32, height: Int32)?
    /// True once the compositor has said the surface will not be shown again (its output went).
    public private(set) var isClosed = false
    /// Rectangles in surface coordinates where input passes through.
    private var excluded: [Rect] = []
    private var failure: WaylandError?

    public init(client: WaylandClient, output: OutputID, layer: Layer, namespace: String) throws {
        guard let compositor = client.compositor else {
            throw WaylandError.missingGlobal(interface: "wl_compositor", purpose: "for any surface")
        }
        guard let shell = client.layerShell else {
            throw WaylandError.missingGlobal(interface: "zwlr_layer_shell_v1", purpose: "for surfaces over the whole output")
        }
        guard client.shm != nil else {
            throw WaylandError.missingGlobal(interface: "wl_shm", purpose: "for the overlay's buffer")
        }
        guard let outputProxy = client.outputProxy(output) else {
            throw WaylandError.unknownOutput("with registry name \(output.rawValue)")
        }
        self.client = client
        self.output = output
        surface = wl_compositor_create_surface(compositor)!
        surfaceID = ObjectID(surface)
        layerSurface = zwlr_layer_shell_v1_get_layer_surface(shell, surface, outputProxy, layer.rawValue, namespace)!
        var functions = zwlr_layer_surface_v1_listener()
        functions.configure = { data, _, serial, width, height in
            owner(data, as: LayerSurface.self).configure(serial: serial, width: Int32(width), height: Int32(height))
        }
        functions.closed = { data, _ in owner(data, as: LayerSurface.self).isClosed = true }
        listener = Listener(functions)
        zwlr_layer_surface_v1_add_listener(layerSurface, listener.pointer, Unmanaged.passUnretained(self).toOpaque())

        Self.coverOutput(layerSurface)
        wl_surface_commit(surface)
    }

    /// The whole output, over exclusive zones (bars), taking no keyboard.
    static func coverOutput(_ layerSurface: OpaquePointer) {
        let allEdges = ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP.rawValue | ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM.rawValue
            | ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT.rawValue | ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT.rawValue
        zwlr_layer_surface_v1_set_anchor(layerSurface, allEdges)
        zwlr_layer_surface_v1_set_exclusive_zone(layerSurface, -1)
        zwlr_layer_surface_v1_set_keyboard_interactivity(layerSurface, ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_NONE.rawValue)
    }

    deinit {
        zwlr_layer_surface_v1_destroy(layerSurface)
        wl_surface_destroy(surface)
        if let buffer { wl_buffer_destroy(buffer) }
    }

    /// Whether the surface has been configured and shows its buffer.
    public var isMapped: Bool { size != nil && !isClosed }

    /// Makes input pass through `rectangles` (surface coordinates) and land on the surface
    /// everywhere else. Takes effect with the next commit, which this sends unless the
    /// surface still waits for its first configure (which applies it).
    public func setInputRegion(excluding rectangles: [Rect]) {
        excluded = rectangles
        guard size != nil, !isClosed else { return }
        applyInputRegion()
        wl_surface_commit(surface)
    }

    /// Throws what went wrong while handling a configure event (no memory for the buffer).
    public func checkFailure() throws {
        if let failure { throw failure }
    }

    private func applyInputRegion() {
        guard let compositor = client.compositor else { return }
        let region = wl_compositor_create_region(compositor)!
        // Larger than any output: the compositor clips the region to the surface.
        wl_region_add(region, 0, 0, Int32.max, Int32.max)
        for r in excluded { wl_region_subtract(region, r.x, r.y, r.width, r.height) }
        wl_surface_set_input_region(surface, region)
        wl_region_destroy(region)
    }

    private func configure(serial: UInt32, width: Int32, height: Int32) {
        zwlr_layer_surface_v1_ack_configure(layerSurface, serial)
        guard width > 0, height > 0 else {
            failure = .emptySurface(width: width, height: height)
            return
        }
        if size.map({ $0 != (width, height) }) ?? true {
            do {
                let newBuffer = try client.makeTransparentBuffer(width: width, height: height)
                wl_surface_attach(surface, newBuffer, 0, 0)
                wl_surface_damage_buffer(surface, 0, 0, width, height)
                if let buffer { wl_buffer_destroy(buffer) }
                buffer = newBuffer
                size = (width, height)
            } catch {
                failure = error as? WaylandError
            }
        }
        applyInputRegion()
        wl_surface_commit(surface)
    }
}
