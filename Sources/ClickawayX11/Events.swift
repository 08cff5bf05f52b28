internal import CXCB
public import ClickawayCore
#if canImport(Glibc)
internal import Glibc
#endif

/// An event or asynchronous error from the server, copied out of libxcb.
///
/// Every payload is a struct of integers, so reading an event never touches the Swift heap:
/// the daemon's press path (poll, decide, AllowEvents, flush) must not allocate.
public enum XEvent: Equatable, Sendable {
    case buttonPress(ButtonEvent)
    case buttonRelease(ButtonEvent)
    case keyPress(KeyEvent)
    case enterNotify(CrossingEvent)
    case leaveNotify(CrossingEvent)
    case createNotify(CreateNotify)
    case destroyNotify(DestroyNotify)
    case unmapNotify(UnmapNotify)
    case mapNotify(MapNotify)
    case reparentNotify(ReparentNotify)
    case configureNotify(ConfigureNotify)
    case propertyNotify(PropertyNotify)
    case clientMessage(ClientMessage)
    case randrScreenChange(ScreenChange)
    /// An error for a request sent unchecked.
    case error(XErrorInfo)
    /// Anything this layer does not decode, by its response type (send-event bit cleared).
    case other(UInt8)
}

public struct ButtonEvent: Equatable, Sendable {
    public var button: UInt8
    public var time: Timestamp
    public var root: WindowID
    /// The window the event is reported on: the grab window for grabbed presses.
    public var window: WindowID
    /// The child of `window` that contains the pointer, or 0.
    public var child: WindowID
    public var rootX: Int32
    public var rootY: Int32
    public var eventX: Int32
    public var eventY: Int32
    /// Modifier and button state just before the event.
    public var state: UInt16
}

public struct KeyEvent: Equatable, Sendable {
    public var keycode: UInt8
    public var time: Timestamp
    /// The window the event is reported on: the grab window for grabbed keys.
    public var window: WindowID
    /// Modifier and button state just before the event.
    public var state: UInt16
}

public enum CrossingMode: UInt8, Sendable {
    case normal = 0, grab = 1, ungrab = 2, whileGrabbed = 3
}

/// EnterNotify / LeaveNotify. Grab activation and release send them with mode `.grab` / `.ungrab`.
public struct CrossingEvent: Equatable, Sendable {
    /// `detail` NotifyInferior: into or out of one of the window's own children.
    public static let inferior: UInt8 = 2
    public var mode: CrossingMode
    public var detail: UInt8
    public var time: Timestamp
    public var root: WindowID
    public var window: WindowID
    public var child: WindowID
    public var rootX: Int32
    public var rootY: Int32
}

public struct CreateNotify: Equatable, Sendable {
    public var parent: WindowID
    public var window: WindowID
    public var rect: Rect
    public var overrideRedirect: Bool
}

public struct DestroyNotify: Equatable, Sendable {
    /// The window the event was selected on (the window itself, or its parent).
    public var event: WindowID
    public var window: WindowID
}

public struct UnmapNotify: Equatable, Sendable {
    public var event: WindowID
    public var window: WindowID
    public var fromConfigure: Bool
}

public struct MapNotify: Equatable, Sendable {
    public var event: WindowID
    public var window: WindowID
    public var overrideRedirect: Bool
}

public struct ReparentNotify: Equatable, Sendable {
    public var event: WindowID
    public var window: WindowID
    public var parent: WindowID
    /// Position in the new parent.
    public var x: Int32
    public var y: Int32
    public var overrideRedirect: Bool
}

public struct ConfigureNotify: Equatable, Sendable {
    public var event: WindowID
    public var window: WindowID
    /// The sibling just below the window in stacking order, or 0 when it is at the bottom.
    public var aboveSibling: WindowID
    /// Relative to the parent, except in a synthetic event from the window manager
    /// (ICCCM 4.1.5), where it is in root coordinates.
    public var rect: Rect
    public var borderWidth: UInt16
    public var overrideRedirect: Bool
    public var synthetic: Bool
}

public struct PropertyNotify: Equatable, Sendable {
    public var window: WindowID
    public var atom: Atom
    public var time: Timestamp
    public var deleted: Bool
}

public struct ClientMessage: Equatable, Sendable {
    public var window: WindowID
    public var type: Atom
    public var format: UInt8
    /// The 20 data bytes read as five 32-bit words (format 32, what ICCCM/EWMH use).
    public var data: (UInt32, UInt32, UInt32, UInt32, UInt32)

    public static func == (a: ClientMessage, b: ClientMessage) -> Bool {
        a.window == b.window && a.type == b.type && a.format == b.format && a.data == b.data
    }
}

/// RandR ScreenChangeNotify: the root window's size (or rotation) changed.
public struct ScreenChange: Equatable, Sendable {
    public var root: WindowID
    public var width: UInt16
    public var height: UInt16
    public var time: Timestamp
}

extension XConnection {
    /// The next event, reading from the socket if nothing is queued; nil when there is none.
    public func pollEvent() -> XEvent? {
        reads &+= 1
        guard let raw = xcb_poll_for_event(c) else { return nil }
        defer { free(raw) }
        return decode(UnsafeRawPointer(raw))
    }

    /// The next event already in libxcb's queue, without reading the socket.
    public func pollQueuedEvent() -> XEvent? {
        guard let raw = xcb_poll_for_queued_event(c) else { return nil }
        defer { free(raw) }
        return decode(UnsafeRawPointer(raw))
    }

    private func decode(_ raw: UnsafeRawPointer) -> XEvent {
        let responseType = raw.load(as: UInt8.self)
        // The top bit marks events sent with SendEvent.
        let type = responseType & 0x7f
        let synthetic = responseType & 0x80 != 0
        switch Int32(type) {
        case 0:
            return .error(XErrorInfo(raw.assumingMemoryBound(to: xcb_generic_error_t.self)))
        case XCB_BUTTON_PRESS:
            return .buttonPress(ButtonEvent(raw.load(as: xcb_button_press_event_t.self)))
        case XCB_BUTTON_RELEASE:
            return .buttonRelease(ButtonEvent(raw.load(as: xcb_button_press_event_t.self)))
        case XCB_KEY_PRESS:
            return .keyPress(KeyEvent(raw.load(as: xcb_key_press_event_t.self)))
        case XCB_ENTER_NOTIFY:
            return .enterNotify(CrossingEvent(raw.load(as: xcb_enter_notify_event_t.self)))
        case XCB_LEAVE_NOTIFY:
            return .leaveNotify(CrossingEvent(raw.load(as: xcb_enter_notify_event_t.self)))
        case XCB_CREATE_NOTIFY:
            let e = raw.load(as: xcb_create_notify_event_t.self)
            return .createNotify(CreateNotify(
                parent: e.parent, window: e.window,
                rect: Rect(x: Int32(e.x), y: Int32(e.y), width: Int32(e.width), height: Int32(e.height)),
                overrideRedirect: e.override_redirect != 0))
        case XCB_DESTROY_NOTIFY:
            let e = raw.load(as: xcb_destroy_notify_event_t.self)
            return .destroyNotify(DestroyNotify(event: e.event, window: e.window))
        case XCB_UNMAP_NOTIFY:
            let e = raw.load(as: xcb_unmap_notify_event_t.self)
            return .unmapNotify(UnmapNotify(event: e.event, window: e.window, fromConfigure: e.from_configure != 0))
        case XCB_MAP_NOTIFY:
            let e = raw.load(as: xcb_map_notify_event_t.self)
            return .mapNotify(MapNotify(event: e.event, window: e.window, overrideRedirect: e.override_redirect != 0))
        case XCB_REPARENT_NOTIFY:
            let e = raw.load(as: xcb_reparent_notify_event_t.self)
            return .reparentNotify(ReparentNotify(
                event: e.event, window: e.window, parent: e.parent, x: Int32(e.x), y: Int32(e.y),
                overrideRedirect: e.override_redirect != 0))
        case XCB_CONFIGURE_NOTIFY:
            let e = raw.load(as: xcb_configure_notify_event_t.self)
            return .configureNotify(ConfigureNotify(
                event: e.event, window: e.window, aboveSibling: e.above_sibling,
                rect: Rect(x: Int32(e.x), y: Int32(e.y), width: Int32(e.width), height: Int32(e.height)),
                borderWidth: e.border_width, overrideRedirect: e.override_redirect != 0, synthetic: synthetic))
        case XCB_PROPERTY_NOTIFY:
            let e = raw.load(as: xcb_property_notify_event_t.self)
            return .propertyNotify(PropertyNotify(
                window: e.window, atom: e.atom, time: e.time, deleted: e.state == UInt8(XCB_PROPERTY_DELETE.rawValue)))
        case XCB_CLIENT_MESSAGE:
            let e = raw.load(as: xcb_client_message_event_t.self)
            let d = e.data.data32
            return .clientMessage(ClientMessage(window: e.window, type: e.type, format: e.format, data: (d.0, d.1, d.2, d.3, d.4)))
        default:
            if let base = randrEventBase, type == base &+ UInt8(XCB_RANDR_SCREEN_CHANGE_NOTIFY) {
                let e = raw.load(as: xcb_randr_screen_change_notify_event_t.self)
                return .randrScreenChange(ScreenChange(root: e.root, width: e.width, height: e.height, time: e.timestamp))
            }
            return .other(type)
        }
    }
}

extension ButtonEvent {
    init(_ e: xcb_button_press_event_t) {
        self.init(button: e.detail, time: e.time, root: e.root, window: e.event, child: e.child,
                  rootX: Int32(e.root_x), rootY: Int32(e.root_y), eventX: Int32(e.event_x), eventY: Int32(e.event_y),
                  state: e.state)
    }
}

extension KeyEvent {
    init(_ e: xcb_key_press_event_t) {
        self.init(keycode: e.detail, time: e.time, window: e.event, state: e.state)
    }
}

extension CrossingEvent {
    init(_ e: xcb_enter_notify_event_t) {
        self.init(mode: CrossingMode(rawValue: e.mode) ?? .normal, detail: e.detail, time: e.time, root: e.root,
                  window: e.event, child: e.child, rootX: Int32(e.root_x), rootY: Int32(e.root_y))
    }
}
