package import CWaylandClient
internal import CWaylandProtocols
public import ClickawayCore
internal import Glibc

/// A connection with the globals clickaway uses bound: compositor, shm, the first seat
/// (with its tablets when the compositor has a tablet manager), every output (with its
/// xdg-output name and position), layer-shell and the virtual pointer manager when offered.
/// KWin's fake input is bound on demand (`FakeInput`). Outputs come and go as the registry
/// announces them.
public final class WaylandClient {
    public let connection: WaylandConnection
    private let registry: OpaquePointer
    private let registryListener: Listener<wl_registry_listener>

    package private(set) var compositor: OpaquePointer?
    package private(set) var shm: OpaquePointer?
    private(set) var layerShell: OpaquePointer?
    private(set) var virtualPointerManager: OpaquePointer?
    private var outputManager: OpaquePointer?
    private var tabletManager: OpaquePointer?
    /// The first wl_seat the registry announced; wlroots compositors have one.
    public private(set) var seat: Seat?
    private var outputsByGlobal: [UInt32: Output] = [:]
    /// Every global announced, by interface name: for binding what this class does not.
    private var globals: [String: (name: UInt32, version: UInt32)] = [:]

    /// Connects (see `WaylandConnection.init`) and waits until the globals and the outputs'
    /// names, positions and sizes are known.
    public convenience init(display: String? = nil) throws {
        try self.init(connection: WaylandConnection(display: display))
    }

    public init(connection: WaylandConnection) throws {
        self.connection = connection
        registry = wl_display_get_registry(connection.pointer)
        var functions = wl_registry_listener()
        functions.global = { data, _, name, interface, version in
            owner(data, as: WaylandClient.self).announce(name: name, interface: String(cString: interface!), version: version)
        }
        functions.global_remove = { data, _, name in
            owner(data, as: WaylandClient.self).outputsByGlobal.removeValue(forKey: name)
        }
        registryListener = Listener(functions)
        wl_registry_add_listener(registry, registryListener.pointer, Unmanaged.passUnretained(self).toOpaque())
        // The first round trip brings the globals, the second what the bound ones send.
        try connection.roundtrip()
        try connection.roundtrip()
    }

    deinit {
        // Children before their factories; the connection closes last, with the properties.
        seat = nil
        if let tabletManager { zwp_tablet_manager_v2_destroy(tabletManager) }
        outputsByGlobal.removeAll()
        if let outputManager { zxdg_output_manager_v1_destroy(outputManager) }
        if let virtualPointerManager { zwlr_virtual_pointer_manager_v1_destroy(virtualPointerManager) }
        if let layerShell {
            if zwlr_layer_shell_v1_get_version(layerShell) >= 3 { zwlr_layer_shell_v1_destroy(layerShell) } else { wl_proxy_destroy(layerShell) }
        }
        // Bound at version 1, which has no release request.
        if let shm { wl_shm_destroy(shm) }
        if let compositor { wl_compositor_destroy(compositor) }
        wl_registry_destroy(registry)
    }

    /// The outputs whose name, position and size are known, sorted by name.
    public var outputs: [OutputInfo] {
        outputsByGlobal.values.compactMap(\.info).sorted { $0.name < $1.name }
    }

    /// The smallest rectangle holding every output: the space the pointer moves in.
    public var layoutBounds: Rect? {
        let rects = outputs.map(\.rect)
        guard let first = rects.first else { return nil }
        var minX = Int64(first.x), minY = Int64(first.y)
        var maxX = minX + Int64(first.width), maxY = minY + Int64(first.height)
        for r in rects.dropFirst() {
            minX = min(minX, Int64(r.x))
            minY = min(minY, Int64(r.y))
            maxX = max(maxX, Int64(r.x) + Int64(r.width))
            maxY = max(maxY, Int64(r.y) + Int64(r.height))
        }
        return Rect(x: Int32(minX), y: Int32(minY), width: Int32(maxX - minX), height: Int32(maxY - minY))
    }

    /// The presses and releases (buttons, touch points, pen tips) the seat reported since
    /// the last call, oldest first.
    public func takePresses() -> [PressEvent] { seat?.takePresses() ?? [] }

    /// Whether the compositor offers KWin's fake input to this client (see `FakeInput`).
    public var offersFakeInput: Bool { (globals["org_kde_kwin_fake_input"]?.version ?? 0) >= 3 }

    /// Binds KWin's fake input at version 3 (absolute motion) or later; nil when not offered.
    func bindFakeInput() -> OpaquePointer? {
        guard let global = globals["org_kde_kwin_fake_input"], global.version >= 3 else { return nil }
        return bind(global.name, cwp_org_kde_kwin_fake_input_interface(), min(global.version, 4))
    }

    /// The bound wl_output of an output, for requests that name one.
    func outputProxy(_ id: OutputID) -> OpaquePointer? { outputsByGlobal[id.rawValue]?.proxy }

    /// Binds a global this class does not bind itself (a test's xdg_wm_base); nil when the
    /// compositor does not offer it. The caller owns the proxy.
    package func bindGlobal(_ interfaceName: String, _ interface: UnsafePointer<wl_interface>, maxVersion: UInt32) -> OpaquePointer? {
        guard let global = globals[interfaceName] else { return nil }
        return bind(global.name, interface, min(global.version, maxVersion))
    }

    /// An ARGB8888 buffer of zeros (fully transparent): a new memfd is all zeros, so
    /// nothing needs to be written or mapped.
    package func makeTransparentBuffer(width: Int32, height: Int32) throws -> OpaquePointer {
        try makeBuffer(width: width, height: height, name: "clickaway-overlay", painted: false) { _ in }
    }

    /// An ARGB8888 buffer whose pixels (transparent at first, one UInt32 each, rows of
    /// `width`) `paint` fills in.
    package func makeBuffer(width: Int32, height: Int32, _ paint: (UnsafeMutableBufferPointer<UInt32>) -> Void) throws -> OpaquePointer {
        try makeBuffer(width: width, height: height, name: "clickaway-show", painted: true, paint)
    }

    private func makeBuffer(width: Int32, height: Int32, name: String, painted: Bool,
                            _ paint: (UnsafeMutableBufferPointer<UInt32>) -> Void) throws -> OpaquePointer {
        guard let shm else { throw WaylandError.missingGlobal(interface: "wl_shm", purpose: "for a surface's buffer") }
        let stride = width * 4
        let byteCount = Int(stride) * Int(height)
        let fd = cwl_memfd_create(name)
        guard fd >= 0 else { throw WaylandError.systemCall("memfd_create for a \(width)x\(height) buffer", errno: errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(byteCount)) == 0 else {
            throw WaylandError.systemCall("ftruncate of a \(byteCount)-byte buffer", errno: errno)
        }
        if painted {
            guard let memory = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), memory != MAP_FAILED else {
                throw WaylandError.systemCall("mmap of a \(byteCount)-byte buffer", errno: errno)
            }
            paint(UnsafeMutableBufferPointer(start: memory.bindMemory(to: UInt32.self, capacity: byteCount / 4), count: byteCount / 4))
            munmap(memory, byteCount)
        }
        // The pool may go at once: the buffer keeps the memory alive in the compositor.
        let pool = wl_shm_create_pool(shm, fd, Int32(byteCount))!
        defer { wl_shm_pool_destroy(pool) }
        return wl_shm_pool_create_buffer(pool, 0, width, height, stride, WL_SHM_FORMAT_ARGB8888.rawValue)!
    }

    private func announce(name: UInt32, interface: String, version: UInt32) {
        globals[interface] = (name, version)
        switch interface {
        case "wl_compositor" where compositor == nil:
            compositor = bind(name, cwl_compositor_interface(), min(version, 4))
        case "wl_shm" where shm == nil:
            shm = bind(name, cwl_shm_interface(), min(version, 1))
        case "wl_seat" where seat == nil:
            let seat = Seat(proxy: bind(name, cwl_seat_interface(), min(version, 7)))
            if let tabletManager { seat.attachTablets(tabletManager) }
            self.seat = seat
        case "zwp_tablet_manager_v2" where tabletManager == nil:
            let manager = bind(name, cwp_zwp_tablet_manager_v2_interface(), min(version, 1))
            tabletManager = manager
            seat?.attachTablets(manager)
        case "wl_output":
            let output = Output(id: OutputID(rawValue: name), proxy: bind(name, cwl_output_interface(), min(version, 4)))
            if let outputManager { output.describe(with: outputManager) }
            outputsByGlobal[name] = output
        case "zxdg_output_manager_v1" where outputManager == nil:
            let manager = bind(name, cwp_zxdg_output_manager_v1_interface(), min(version, 3))
            outputManager = manager
            for output in outputsByGlobal.values { output.describe(with: manager) }
        case "zwlr_layer_shell_v1" where layerShell == nil:
            layerShell = bind(name, cwp_zwlr_layer_shell_v1_interface(), min(version, 4))
        case "zwlr_virtual_pointer_manager_v1" where virtualPointerManager == nil:
            virtualPointerManager = bind(name, cwp_zwlr_virtual_pointer_manager_v1_interface(), min(version, 2))
        default:
            break
        }
    }

    private func bind(_ name: UInt32, _ interface: UnsafePointer<wl_interface>, _ version: UInt32) -> OpaquePointer {
        OpaquePointer(wl_registry_bind(registry, name, interface, version))
    }
}
