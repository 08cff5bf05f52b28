internal import CXCB
public import ClickawayCore
#if canImport(Glibc)
internal import Glibc
#endif

/// A request sent with its error held back for `XConnection.check(_:)`.
/// Check every one: libxcb keeps an unchecked error until it is collected.
public struct CheckedCookie: Sendable {
    let sequence: UInt32

    /// For the test harness's own checked requests.
    package init(sequence: UInt32) { self.sequence = sequence }
}

public enum GrabMode: Sendable {
    /// The pointer freezes after the grabbing press until the grabber sends AllowEvents.
    case sync
    case async

    var xcb: UInt8 { UInt8(self == .sync ? XCB_GRAB_MODE_SYNC.rawValue : XCB_GRAB_MODE_ASYNC.rawValue) }
}

/// How AllowEvents thaws a pointer frozen by a SYNC grab.
public enum AllowMode: Sendable {
    /// Release the grab and deliver the press again as if the grab (and any passive grab
    /// at or above the grab window) did not exist.
    case replayPointer
    /// Keep the grab and thaw: the grabber gets the rest of the click, up to the release.
    case asyncPointer
    /// The keyboard counterparts, for a key grabbed with a SYNC keyboard mode.
    case replayKeyboard
    case asyncKeyboard

    var xcb: UInt8 {
        switch self {
        case .replayPointer: UInt8(XCB_ALLOW_REPLAY_POINTER.rawValue)
        case .asyncPointer: UInt8(XCB_ALLOW_ASYNC_POINTER.rawValue)
        case .replayKeyboard: UInt8(XCB_ALLOW_REPLAY_KEYBOARD.rawValue)
        case .asyncKeyboard: UInt8(XCB_ALLOW_ASYNC_KEYBOARD.rawValue)
        }
    }
}

/// Key and button modifier bits of a button event's `state` and of GrabButton.
public struct ModifierMask: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let shift = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_SHIFT.rawValue))
    /// CapsLock (or ShiftLock): always this bit.
    public static let lock = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_LOCK.rawValue))
    public static let control = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_CONTROL.rawValue))
    public static let mod1 = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_1.rawValue))
    public static let mod2 = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_2.rawValue))
    public static let mod3 = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_3.rawValue))
    public static let mod4 = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_4.rawValue))
    public static let mod5 = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_5.rawValue))
    /// Matches every combination; a grab with it fails whole if any overlapping grab exists.
    public static let any = ModifierMask(rawValue: UInt16(XCB_MOD_MASK_ANY.rawValue))

    /// Button1Mask to Button5Mask: the buttons held, in an event's state.
    public static let buttons = ModifierMask(rawValue: UInt16(XCB_BUTTON_MASK_1.rawValue) * 0x1F)

    /// The state bit of `button` (1-5); none for the others, which the state does not carry.
    public static func button(_ button: UInt8) -> ModifierMask {
        (1...5).contains(button) ? ModifierMask(rawValue: UInt16(XCB_BUTTON_MASK_1.rawValue) << UInt16(button - 1)) : []
    }
}

public struct EventMask: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let buttonPress = EventMask(rawValue: XCB_EVENT_MASK_BUTTON_PRESS.rawValue)
    public static let buttonRelease = EventMask(rawValue: XCB_EVENT_MASK_BUTTON_RELEASE.rawValue)
    public static let enterWindow = EventMask(rawValue: XCB_EVENT_MASK_ENTER_WINDOW.rawValue)
    public static let leaveWindow = EventMask(rawValue: XCB_EVENT_MASK_LEAVE_WINDOW.rawValue)
    public static let pointerMotion = EventMask(rawValue: XCB_EVENT_MASK_POINTER_MOTION.rawValue)
    public static let structureNotify = EventMask(rawValue: XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue)
    public static let substructureNotify = EventMask(rawValue: XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY.rawValue)
    public static let substructureRedirect = EventMask(rawValue: XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT.rawValue)
    public static let propertyChange = EventMask(rawValue: XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue)
    public static let keyPress = EventMask(rawValue: XCB_EVENT_MASK_KEY_PRESS.rawValue)
    public static let focusChange = EventMask(rawValue: XCB_EVENT_MASK_FOCUS_CHANGE.rawValue)
}

public enum MapState: UInt8, Sendable {
    case unmapped = 0
    /// Mapped, but an ancestor is not.
    case unviewable = 1
    case viewable = 2
}

public enum WindowClass: UInt16, Sendable {
    case inputOutput = 1
    case inputOnly = 2
}

public struct WindowAttributes: Equatable, Sendable {
    public var mapState: MapState
    public var overrideRedirect: Bool
    public var windowClass: WindowClass
    /// What this connection selected on the window.
    public var yourEventMask: EventMask
    /// What all clients together selected on the window.
    public var allEventMasks: EventMask

    init(_ a: xcb_get_window_attributes_reply_t) {
        mapState = MapState(rawValue: a.map_state) ?? .unmapped
        overrideRedirect = a.override_redirect != 0
        windowClass = WindowClass(rawValue: a._class) ?? .inputOutput
        yourEventMask = EventMask(rawValue: a.your_event_mask)
        allEventMasks = EventMask(rawValue: a.all_event_masks)
    }
}

public struct WindowTree: Equatable, Sendable {
    public var root: WindowID
    /// 0 for the root window itself.
    public var parent: WindowID
    /// Bottom to top in stacking order.
    public var children: [WindowID]
}

public struct WindowGeometry: Equatable, Sendable {
    public var root: WindowID
    /// Relative to the parent's origin; the size excludes the border.
    public var rect: Rect
    public var borderWidth: UInt16
    public var depth: UInt8
}

extension XConnection {
    /// The error of a request sent checked, or nil when it succeeded. Blocks until the
    /// server has answered. Also nil when the connection broke: see `hasError`.
    public func check(_ cookie: CheckedCookie) -> XErrorInfo? {
        reads &+= 1
        guard let error = xcb_request_check(c, xcb_void_cookie_t(sequence: cookie.sequence)) else { return nil }
        defer { free(error) }
        return XErrorInfo(error)
    }

    /// Drops the error a request sent checked may have, without waiting: for one whose
    /// outcome no longer matters (libxcb would keep its error until asked).
    public func discard(_ cookie: CheckedCookie) {
        xcb_discard_reply(c, cookie.sequence)
    }

    // MARK: Grabs

    /// A passive grab of `button` with exactly `modifiers` on `window`, reporting press and
    /// release to this client only (owner_events false), keyboard untouched. Fails with
    /// BadAccess, seen by `check`, if another client grabs the same combination there.
    public func grabButton(
        button: UInt8, modifiers: ModifierMask, window: WindowID, pointerMode: GrabMode
    ) -> CheckedCookie {
        let mask = EventMask([.buttonPress, .buttonRelease]).rawValue
        let cookie = xcb_grab_button_checked(
            c, 0, window, UInt16(mask), pointerMode.xcb, UInt8(XCB_GRAB_MODE_ASYNC.rawValue),
            UInt32(XCB_NONE), UInt32(XCB_NONE), button, modifiers.rawValue)
        return CheckedCookie(sequence: cookie.sequence)
    }

    /// A passive grab of the key `keycode` with exactly `modifiers` on `window`, freezing the
    /// keyboard (SYNC) until AllowEvents says whether the key goes on. Fails with BadAccess
    /// if another client grabs the same combination there.
    public func grabKey(keycode: UInt8, modifiers: ModifierMask, window: WindowID) -> CheckedCookie {
        let cookie = xcb_grab_key_checked(c, 0, window, modifiers.rawValue, keycode,
                                          UInt8(XCB_GRAB_MODE_ASYNC.rawValue), UInt8(XCB_GRAB_MODE_SYNC.rawValue))
        return CheckedCookie(sequence: cookie.sequence)
    }

    public func ungrabKey(keycode: UInt8, modifiers: ModifierMask, window: WindowID) {
        xcb_ungrab_key(c, keycode, window, modifiers.rawValue)
    }

    /// Releases a passive grab; no error if there was none.
    public func ungrabButton(button: UInt8, modifiers: ModifierMask, window: WindowID) {
        xcb_ungrab_button(c, button, window, modifiers.rawValue)
    }

    /// Thaws a pointer frozen by a SYNC grab. Unchecked and no round trip: this is the
    /// daemon's answer to a press, so it must not wait. Call `flush()` after it.
    public func allowEvents(_ mode: AllowMode, time: Timestamp) {
        xcb_allow_events(c, mode.xcb, time)
    }

    // MARK: Windows

    /// Selects events on a window (replacing this client's earlier selection there).
    public func selectInput(_ window: WindowID, _ mask: EventMask) -> CheckedCookie {
        var value = mask.rawValue
        let cookie = xcb_change_window_attributes_checked(c, window, XCB_CW_EVENT_MASK.rawValue, &value)
        return CheckedCookie(sequence: cookie.sequence)
    }

    /// Asks for `mask`'s events of another client's window (PropertyNotify, the pointer's
    /// crossings; none: stops), replacing this connection's earlier selection there,
    /// unchecked: a window already gone yields an error event, which the event loop logs and
    /// drops. Any number of clients may select these; ButtonPress only one.
    public func watch(_ window: WindowID, for mask: EventMask) {
        var value = mask.rawValue
        xcb_change_window_attributes(c, window, XCB_CW_EVENT_MASK.rawValue, &value)
    }

    public func queryTree(_ window: WindowID) throws(XError) -> WindowTree {
        try reply("QueryTree", { xcb_query_tree_reply(c, xcb_query_tree(c, window), $0) }) { r in
            let children = UnsafeBufferPointer(start: xcb_query_tree_children(r), count: Int(xcb_query_tree_children_length(r)))
            return WindowTree(root: r.pointee.root, parent: r.pointee.parent, children: Array(children))
        }
    }

    /// Where the point (`x`, `y`) of `window` is in `destination`'s coordinates (the root by default).
    public func translateCoordinates(
        _ window: WindowID, x: Int16 = 0, y: Int16 = 0, to destination: WindowID? = nil
    ) throws(XError) -> (x: Int32, y: Int32) {
        let cookie = xcb_translate_coordinates(c, window, destination ?? root, x, y)
        return try reply("TranslateCoordinates", { xcb_translate_coordinates_reply(c, cookie, $0) }) { r in
            (Int32(r.pointee.dst_x), Int32(r.pointee.dst_y))
        }
    }

    /// The window's outer rectangle (border included) in root coordinates: GetGeometry and
    /// TranslateCoordinates pipelined into one round trip.
    public func rootRect(_ window: WindowID) throws(XError) -> Rect {
        let geometryCookie = xcb_get_geometry(c, window)
        let translateCookie = xcb_translate_coordinates(c, window, root, 0, 0)
        let geometry: xcb_get_geometry_reply_t
        do throws(XError) {
            geometry = try reply("GetGeometry", { xcb_get_geometry_reply(c, geometryCookie, $0) }) { $0.pointee }
        } catch {
            xcb_discard_reply(c, translateCookie.sequence)
            throw error
        }
        let origin = try reply("TranslateCoordinates", { xcb_translate_coordinates_reply(c, translateCookie, $0) }) { r in
            (x: Int32(r.pointee.dst_x), y: Int32(r.pointee.dst_y))
        }
        // (0, 0) is inside the border; the outer edge is one border width further out.
        let border = Int32(geometry.border_width)
        return Rect(x: origin.x - border, y: origin.y - border,
                    width: Int32(geometry.width) + 2 * border, height: Int32(geometry.height) + 2 * border)
    }

    public func getWindowAttributes(_ window: WindowID) throws(XError) -> WindowAttributes {
        try reply("GetWindowAttributes", { xcb_get_window_attributes_reply(c, xcb_get_window_attributes(c, window), $0) }) { r in
            WindowAttributes(r.pointee)
        }
    }

    // MARK: Dismissing

    /// Asks the window's client to close it (ICCCM WM_DELETE_WINDOW). Only meaningful when
    /// the window lists WM_DELETE_WINDOW in WM_PROTOCOLS; errors arrive as `.error` events.
    public func sendDeleteWindow(_ window: WindowID, time: Timestamp) {
        sendClientMessage(atoms.wmProtocols, about: window, data: [atoms.wmDeleteWindow, time])
    }

    /// Asks the window manager to activate (focus and, by its own rules, raise) a client
    /// window, as a pager does for a click on it: EWMH `_NET_ACTIVE_WINDOW` with source 2
    /// (a direct user action) and the click's time. Unchecked.
    public func requestActivation(_ window: WindowID, time: Timestamp) {
        sendClientMessage(atoms.netActiveWindow, about: window, data: [2, time], to: root,
                          mask: [.substructureRedirect, .substructureNotify])
    }

    /// Sends a format-32 ClientMessage of `type` about `window` (at most five words of
    /// `data`) to `destination`, for the clients selecting `mask` there; with no destination,
    /// to the client that created `window`. Unchecked.
    public func sendClientMessage(_ type: Atom, about window: WindowID, data: [UInt32], to destination: WindowID? = nil,
                                  mask: EventMask = []) {
        var event = xcb_client_message_event_t()
        event.response_type = UInt8(XCB_CLIENT_MESSAGE)
        event.format = 32
        event.window = window
        event.type = type
        withUnsafeMutableBytes(of: &event.data.data32) { words in
            for (i, word) in data.prefix(5).enumerated() { words.storeBytes(of: word, toByteOffset: 4 * i, as: UInt32.self) }
        }
        withUnsafeBytes(of: event) { bytes in
            _ = xcb_send_event(c, 0, destination ?? window, mask.rawValue, bytes.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
    }

    /// Errors (the window is already gone) arrive as `.error` events.
    public func unmapWindow(_ window: WindowID) {
        xcb_unmap_window(c, window)
    }

    /// Disconnects the client that created `window`. Errors arrive as `.error` events.
    public func killClient(_ window: WindowID) {
        xcb_kill_client(c, window)
    }
}
