internal import CWaylandClient
internal import CWaylandProtocols
internal import ClickawayCore
internal import ClickawaySystem

/// A zwlr_virtual_pointer_v1: a pointer device the client drives. While it exists the seat
/// has the pointer capability even with no mouse. It has no touch: wlroots has no protocol
/// for virtual touch points.
public final class VirtualPointer: InputInjector {
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

    public var protocolName: String { "zwlr_virtual_pointer_v1" }
    public var injectsTouch: Bool { false }

    /// Absolute motion is a fraction (x / extent) of the bounds of all outputs, so those
    /// are needed to place the pointer exactly.
    public func move(to position: Position) throws {
        guard let bounds = client.layoutBounds else { throw WaylandError.noOutputs }
        let (x, xExtent) = Self.absolute(position.x - Double(bounds.x), span: bounds.width)
        let (y, yExtent) = Self.absolute(position.y - Double(bounds.y), span: bounds.height)
        zwlr_virtual_pointer_v1_motion_absolute(proxy, Self.timestamp(), x, y, xExtent, yExtent)
        zwlr_virtual_pointer_v1_frame(proxy)
    }

    public func button(_ code: UInt32, pressed: Bool) {
        let state = pressed ? WL_POINTER_BUTTON_STATE_PRESSED : WL_POINTER_BUTTON_STATE_RELEASED
        zwlr_virtual_pointer_v1_button(proxy, Self.timestamp(), code, state.rawValue)
        zwlr_virtual_pointer_v1_frame(proxy)
    }

    /// A relative motion of nothing: wlroots looks for the surface under the pointer on
    /// every motion.
    public func repick() {
        zwlr_virtual_pointer_v1_motion(proxy, Self.timestamp(), 0, 0)
        zwlr_virtual_pointer_v1_frame(proxy)
    }

    public func touchDown(_ id: UInt32, at position: Position) {}
    public func touchUp(_ id: UInt32) {}

    /// `offset` pixels into a span of `span` pixels as a fraction value / extent with an
    /// extent of 1024 steps per pixel, aimed a quarter of a wl_fixed step (1/1024 pixel)
    /// past the 1/256 pixel wanted: the compositor's floating-point product lands inside
    /// that step, never a hair before a pixel's edge (which its hit-test would floor into
    /// the pixel before), and rounds back to the exact wl_fixed value for the client.
    /// Spans too wide for 1024 steps per pixel in 32 bits get 256, then whole pixels.
    static func absolute(_ offset: Double, span: Int32) -> (value: UInt32, extent: UInt32) {
        let span = UInt64(max(span, 1))
        let fixed = Int64((offset * 256).rounded(.down))
        let (value, extent): (Int64, UInt64)
        if span * 1024 <= UInt64(UInt32.max) {
            (value, extent) = (fixed * 4 + 1, span * 1024)
        } else if span * 256 <= UInt64(UInt32.max) {
            (value, extent) = (fixed, span * 256)
        } else {
            (value, extent) = (fixed >> 8, span)
        }
        return (UInt32(clamping: min(max(value, 0), Int64(extent) - 1)), UInt32(extent))
    }

    /// Wayland input times: CLOCK_MONOTONIC milliseconds, wrapped to 32 bits.
    private static func timestamp() -> UInt32 { UInt32(truncatingIfNeeded: MonotonicClock.milliseconds()) }
}
