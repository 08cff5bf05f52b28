import CWaylandClient
import CWaylandProtocols
import ClickawayWayland
import ProcessSupport

/// A test window: an xdg-shell toplevel with an app_id and a title, on a connection of its
/// own, that records the presses it receives and whether the compositor asked it to close
/// (what `[con_id=N] kill` does), takes the size the compositor gives it, and goes away
/// when asked, as a well-behaved program would. It answers the compositor only when the
/// test dispatches its connection (`dispatch()`): call that after a command that moves or
/// resizes it, or the compositor may wait for its answer before applying the change.
public final class TestToplevel {
    public let client: WaylandClient
    private let wmBase: OpaquePointer
    private let surface: OpaquePointer
    private let xdgSurface: OpaquePointer
    private var toplevel: OpaquePointer?
    private let wmBaseListener: Listener<xdg_wm_base_listener>
    private let surfaceListener: Listener<xdg_surface_listener>
    private let toplevelListener: Listener<xdg_toplevel_listener>
    private let surfaceOutputListener: Listener<wl_surface_listener>
    private var buffer: OpaquePointer?
    /// The size of the attached buffer, and the one the compositor asked for last.
    private var size: (width: Int32, height: Int32)
    private var requestedSize: (width: Int32, height: Int32)
    private var isConfigured = false
    private var failure: Error?
    public private(set) var closeRequested = false
    /// Whether the compositor has said the window is on an output (wl_surface.enter).
    public private(set) var isOnAnOutput = false
    private var received: [PressEvent] = []

    public init(display: String, appId: String, title: String, width: Int32, height: Int32) throws {
        client = try WaylandClient(display: display)
        guard let compositor = client.compositor,
              let wmBase = client.bindGlobal("xdg_wm_base", cwp_xdg_wm_base_interface(), maxVersion: 1) else {
            throw HarnessError("the compositor offers no wl_compositor or xdg_wm_base for a test window")
        }
        self.wmBase = wmBase
        size = (width, height)
        requestedSize = size
        surface = wl_compositor_create_surface(compositor)!
        xdgSurface = xdg_wm_base_get_xdg_surface(wmBase, surface)!
        toplevel = xdg_surface_get_toplevel(xdgSurface)!

        var wm = xdg_wm_base_listener()
        wm.ping = { _, base, serial in xdg_wm_base_pong(base, serial) }
        wmBaseListener = Listener(wm)
        var surfaceFunctions = xdg_surface_listener()
        surfaceFunctions.configure = { data, _, serial in owner(data, as: TestToplevel.self).configure(serial: serial) }
        surfaceListener = Listener(surfaceFunctions)
        var toplevelFunctions = xdg_toplevel_listener()
        // 0 means "choose yourself": the window keeps the size it was made with.
        toplevelFunctions.configure = { data, _, width, height, _ in
            let window = owner(data, as: TestToplevel.self)
            if width > 0, height > 0 { window.requestedSize = (width, height) }
        }
        toplevelFunctions.close = { data, _ in owner(data, as: TestToplevel.self).close() }
        toplevelFunctions.configure_bounds = { _, _, _, _ in }
        toplevelFunctions.wm_capabilities = { _, _, _ in }
        toplevelListener = Listener(toplevelFunctions)

        var surfaceOutput = wl_surface_listener()
        surfaceOutput.enter = { data, _, _ in owner(data, as: TestToplevel.self).isOnAnOutput = true }
        surfaceOutput.leave = { _, _, _ in }
        surfaceOutputListener = Listener(surfaceOutput)

        let me = Unmanaged.passUnretained(self).toOpaque()
        wl_surface_add_listener(surface, surfaceOutputListener.pointer, me)
        xdg_wm_base_add_listener(wmBase, wmBaseListener.pointer, me)
        xdg_surface_add_listener(xdgSurface, surfaceListener.pointer, me)
        xdg_toplevel_add_listener(toplevel, toplevelListener.pointer, me)
        xdg_toplevel_set_app_id(toplevel, appId)
        xdg_toplevel_set_title(toplevel, title)
        wl_surface_commit(surface)
        try client.connection.wait(for: "the test window \(appId) to be configured") {
            if let failure { throw failure }
            return isConfigured ? true : nil
        }
    }

    deinit {
        if let toplevel { xdg_toplevel_destroy(toplevel) }
        xdg_surface_destroy(xdgSurface)
        wl_surface_destroy(surface)
        if let buffer { wl_buffer_destroy(buffer) }
        xdg_wm_base_destroy(wmBase)
    }

    /// Whether the window is still mapped (it unmaps itself when asked to close).
    public var isMapped: Bool { toplevel != nil }

    /// Dispatches until the compositor asks the window to close; fails after `timeout`.
    public func waitForCloseRequest(timeout: Duration = .seconds(5)) throws {
        try client.connection.wait(for: "the compositor to ask the test window to close", timeout: timeout) {
            closeRequested ? true : nil
        }
    }

    /// Dispatches until the compositor says the window is on an output; fails after `timeout`.
    public func waitUntilOnAnOutput(timeout: Duration = .seconds(5)) throws {
        try client.connection.wait(for: "the compositor to put the test window on an output", timeout: timeout) {
            isOnAnOutput ? true : nil
        }
    }

    /// Reads what the compositor sent so far and answers it (acks a configure with a
    /// buffer of the new size); returns once the compositor has handled the answers too.
    public func dispatch() throws {
        try client.connection.roundtrip()
        try client.connection.roundtrip()
        received += client.takePresses()
    }

    /// The presses and releases the window received so far, in its own coordinates.
    public func presses() throws -> [PressEvent] {
        try dispatch()
        let id = ObjectID(surface)
        return received.filter { $0.surface == id }
    }

    private func configure(serial: UInt32) {
        // Sent before the compositor read that the window went (a focus change as it closed):
        // an xdg_surface without its toplevel may not answer (xdg_surface error not_constructed).
        guard toplevel != nil else { return }
        xdg_surface_ack_configure(xdgSurface, serial)
        if buffer == nil || requestedSize != size {
            let newBuffer: OpaquePointer
            do {
                newBuffer = try client.makeTransparentBuffer(width: requestedSize.width, height: requestedSize.height)
            } catch {
                failure = error
                return
            }
            wl_surface_attach(surface, newBuffer, 0, 0)
            wl_surface_damage_buffer(surface, 0, 0, requestedSize.width, requestedSize.height)
            if let buffer { wl_buffer_destroy(buffer) }
            buffer = newBuffer
            size = requestedSize
        }
        wl_surface_commit(surface)
        isConfigured = true
    }

    /// What a program does on xdg_toplevel.close: its window goes.
    private func close() {
        closeRequested = true
        if let toplevel { xdg_toplevel_destroy(toplevel) }
        toplevel = nil
        wl_surface_attach(surface, nil, 0, 0)
        wl_surface_commit(surface)
    }
}
