internal import CXCB
public import ClickawayCore

/// An override-redirect InputOnly window over the screen whose input shape is kept by an
/// `InputShape`: it takes clicks where its shape covers and lets them fall through elsewhere.
extension XConnection {
    /// Creates (unmapped) the shield window over `rect`, with a SYNC grab of every button
    /// with any modifiers on it. Requests only, no round trip: the window is this client's
    /// own and new, so nobody else grabs there and the grab cannot be refused; an error
    /// (the server out of memory) comes back as an event.
    public func createShieldWindow(_ rect: Rect) -> WindowID {
        let id = generateID()
        // Value list in mask-bit order: OVERRIDE_REDIRECT, EVENT_MASK. Crossing events tell
        // whether the pointer is over the shield or in one of its holes.
        let values: [UInt32] = [1, EventMask([.structureNotify, .enterWindow, .leaveWindow]).rawValue]
        xcb_create_window(
            c, 0, id, root, Int16(clamping: rect.x), Int16(clamping: rect.y),
            UInt16(clamping: rect.width), UInt16(clamping: rect.height), 0,
            UInt16(XCB_WINDOW_CLASS_INPUT_ONLY.rawValue), UInt32(XCB_COPY_FROM_PARENT),
            XCB_CW_OVERRIDE_REDIRECT.rawValue | XCB_CW_EVENT_MASK.rawValue, values)
        xcb_grab_button(
            c, 0, id, UInt16(EventMask([.buttonPress, .buttonRelease]).rawValue), UInt8(XCB_GRAB_MODE_SYNC.rawValue),
            UInt8(XCB_GRAB_MODE_ASYNC.rawValue), UInt32(XCB_NONE), UInt32(XCB_NONE),
            UInt8(XCB_BUTTON_INDEX_ANY.rawValue), UInt16(XCB_MOD_MASK_ANY.rawValue))
        return id
    }

    public func mapWindow(_ window: WindowID) { xcb_map_window(c, window) }

    public func destroyWindow(_ window: WindowID) { xcb_destroy_window(c, window) }

    /// Puts the window on top of its siblings.
    public func raiseWindow(_ window: WindowID) {
        var above = UInt32(XCB_STACK_MODE_ABOVE.rawValue)
        xcb_configure_window(c, window, UInt16(XCB_CONFIG_WINDOW_STACK_MODE.rawValue), &above)
    }

    /// Puts the window just above (or just below) `sibling`, another child of the same parent.
    public func restackWindow(_ window: WindowID, _ placement: StackPlacement, _ sibling: WindowID) {
        let mode = placement == .above ? XCB_STACK_MODE_ABOVE : XCB_STACK_MODE_BELOW
        // Value list in mask-bit order: SIBLING, STACK_MODE.
        let values: [UInt32] = [sibling, UInt32(mode.rawValue)]
        xcb_configure_window(c, window, UInt16(XCB_CONFIG_WINDOW_SIBLING.rawValue | XCB_CONFIG_WINDOW_STACK_MODE.rawValue), values)
    }

    /// Asks TranslateCoordinates which child of the root is at (x, y) now, honouring input
    /// shapes; the reply (the top-level window, nil for the bare root) is collected later.
    public func sendChildOfRoot(x px: Int32, y py: Int32) -> PendingReply<WindowID?> {
        let cookie = xcb_translate_coordinates(c, root, root, Int16(clamping: px), Int16(clamping: py))
        return PendingReply(sequence: cookie.sequence, request: "TranslateCoordinates") { raw in
            let child = raw.assumingMemoryBound(to: xcb_translate_coordinates_reply_t.self).pointee.child
            return child == UInt32(XCB_NONE) ? nil : child
        }
    }

    /// Asks QueryPointer which child of the root the pointer is in now; the reply (nil for
    /// the bare root) is collected later.
    public func sendPointerChildOfRoot() -> PendingReply<WindowID?> {
        let cookie = xcb_query_pointer(c, root)
        return PendingReply(sequence: cookie.sequence, request: "QueryPointer") { raw in
            let child = raw.assumingMemoryBound(to: xcb_query_pointer_reply_t.self).pointee.child
            return child == UInt32(XCB_NONE) ? nil : child
        }
    }

    public func moveResizeWindow(_ window: WindowID, to rect: Rect) {
        let values: [UInt32] = [UInt32(bitPattern: rect.x), UInt32(bitPattern: rect.y),
                                UInt32(clamping: rect.width), UInt32(clamping: rect.height)]
        let mask = XCB_CONFIG_WINDOW_X.rawValue | XCB_CONFIG_WINDOW_Y.rawValue
            | XCB_CONFIG_WINDOW_WIDTH.rawValue | XCB_CONFIG_WINDOW_HEIGHT.rawValue
        xcb_configure_window(c, window, UInt16(mask), values)
    }
}

public enum StackPlacement: Sendable {
    case above, below
}

/// A window's input shape as XFixes regions owned by this object: "covered" is the screen
/// minus the holes; `punch` takes one more point out of it (a pinhole for a press let
/// through), which stays out, holes changing or not, until `closePinhole`. Regions are made
/// up front, so the press path sends requests and allocates nothing.
/// Needs XFixes 2.0 (`requireXFixes()`), negotiated before the first request.
public final class InputShape {
    private let x: XConnection
    private let window: WindowID
    private let screenRegion: UInt32
    private let holesRegion: UInt32
    private let covered: UInt32
    private let point: UInt32
    private let punched: UInt32
    /// The point uncovered while the shape applied is `punched` (covered minus the point)
    /// rather than `covered`.
    public private(set) var pinhole: (x: Int32, y: Int32)?
    public var hasPinhole: Bool { pinhole != nil }

    public init(x: XConnection, window: WindowID) {
        self.x = x
        self.window = window
        (screenRegion, holesRegion, covered, point, punched) = (x.generateID(), x.generateID(), x.generateID(), x.generateID(), x.generateID())
        for region in [screenRegion, holesRegion, covered, point, punched] {
            xcb_xfixes_create_region(x.c, region, 0, nil)
        }
    }

    deinit {
        for region in [screenRegion, holesRegion, covered, point, punched] { xcb_xfixes_destroy_region(x.c, region) }
    }

    /// Covers `screen` except `holes` (and the pinhole, while there is one), and applies it.
    public func cover(_ screen: Rect, except holes: [Rect]) {
        var whole = xcbRect(screen)
        xcb_xfixes_set_region(x.c, screenRegion, 1, &whole)
        let rects = holes.map(xcbRect)
        xcb_xfixes_set_region(x.c, holesRegion, UInt32(rects.count), rects)
        xcb_xfixes_subtract_region(x.c, screenRegion, holesRegion, covered)
        if hasPinhole { xcb_xfixes_subtract_region(x.c, covered, point, punched) }
        apply()
    }

    /// Uncovers the one point (x, y), so that a press there replayed now reaches the window
    /// below, and keeps it uncovered until `closePinhole`.
    public func punch(x px: Int32, y py: Int32) {
        var dot = xcb_rectangle_t(x: Int16(clamping: px), y: Int16(clamping: py), width: 1, height: 1)
        xcb_xfixes_set_region(x.c, point, 1, &dot)
        xcb_xfixes_subtract_region(x.c, covered, point, punched)
        pinhole = (px, py)
        apply()
    }

    /// Covers the pinhole again.
    public func closePinhole() {
        guard hasPinhole else { return }
        pinhole = nil
        apply()
    }

    /// Forgets the pinhole without a request, for a window that is being unmapped.
    public func dropPinhole() { pinhole = nil }

    private func apply() {
        xcb_xfixes_set_window_shape_region(x.c, window, UInt8(XCB_SHAPE_SK_INPUT.rawValue), 0, 0, hasPinhole ? punched : covered)
    }
}

private func xcbRect(_ r: Rect) -> xcb_rectangle_t {
    xcb_rectangle_t(x: Int16(clamping: r.x), y: Int16(clamping: r.y),
                    width: UInt16(clamping: max(0, r.width)), height: UInt16(clamping: max(0, r.height)))
}
