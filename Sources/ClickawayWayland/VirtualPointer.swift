import CWaylandClient
import CWaylandProtocols
import ClickawayCore

/// A zwlr_virtual_pointer_v1: a pointer device the client drives. While it exists the seat
/// has the pointer capability even with no mouse. The compositor picks the surface under
/// the pointer on motion only, so move before every button, also after an input region
/// changed.
public final class VirtualPointer {
    private let client: WaylandClient
    private let proxy: OpaquePointer

    public init(client: WaylandClient) throws {
        guard let manager = client.virtualPointerManager else {
            throw WaylandError.missingGlobal(interface: "zwlr_virtual_pointer_manager_v1", purpose: "to replay clicks")
        }
        self.client = client
        // No seat: the compositor's default seat.
        proxy = zwlr_virtual_pointer_manager_v1_create_virtual_pointer(manager, nil)!
    }

    deinit { zwlr_virtual_pointer_v1_destroy(proxy) }

    /// Moves to the global point (x, y). Absolute motion is relative to the bounds of all
    /// outputs, so those are needed to place the pointer exactly.
    public func move(toX x: Int32, y: Int32) throws {
        guard let bounds = client.layoutBounds else { throw WaylandError.noOutputs }
        zwlr_virtual_pointer_v1_motion_absolute(
            proxy, monotonicMilliseconds(),
            UInt32(clamping: Int64(x) - Int64(bounds.x)), UInt32(clamping: Int64(y) - Int64(bounds.y)),
            UInt32(bounds.width), UInt32(bounds.height))
        zwlr_virtual_pointer_v1_frame(proxy)
    }

    /// Presses or releases a button (a Linux code, see `PointerButton`) where the pointer is.
    public func button(_ code: UInt32, pressed: Bool) {
        let state = pressed ? WL_POINTER_BUTTON_STATE_PRESSED : WL_POINTER_BUTTON_STATE_RELEASED
        zwlr_virtual_pointer_v1_button(proxy, monotonicMilliseconds(), code, state.rawValue)
        zwlr_virtual_pointer_v1_frame(proxy)
    }

    /// Moves to (x, y), then presses and releases `code` there. Requests only: flush or
    /// round-trip the connection to send them.
    public func click(x: Int32, y: Int32, button code: UInt32 = PointerButton.left) throws {
        try move(toX: x, y: y)
        button(code, pressed: true)
        button(code, pressed: false)
    }
}
