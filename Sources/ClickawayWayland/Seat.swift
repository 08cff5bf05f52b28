internal import CWaylandClient
internal import CWaylandProtocols

/// What a press came from. A touch point and a pen tip act as button 1 does.
public enum InputDevice: Hashable, Sendable, CustomStringConvertible {
    case pointer
    /// A finger, by the id the compositor gave its touch point.
    case touch(id: Int32)
    /// A tablet tool's tip (a pen, an eraser, an airbrush...).
    case pen

    public var description: String {
        switch self {
        case .pointer: "pointer"
        case .touch(let id): "touch point \(id)"
        case .pen: "pen"
        }
    }
}

/// A pointer button, a touch point or a pen tip going down or up, as a client's seat
/// received it.
public struct PressEvent: Hashable, Sendable, CustomStringConvertible {
    public var device: InputDevice
    /// The surface under the pointer, finger or pen; nil if this client destroyed it meanwhile.
    public var surface: ObjectID?
    /// The position relative to that surface, exactly as sent (wl_fixed, 1/256 pixel: a
    /// Double holds every such value exactly).
    public var x: Double
    public var y: Double
    /// A Linux input event code: the pointer's button (`PointerButton.left` = BTN_LEFT =
    /// 0x110, ...); `PointerButton.left` for touch points and pen tips.
    public var button: UInt32
    public var isPressed: Bool
    /// A touch sequence the compositor took back (wl_touch.cancel): it ended without a lift.
    public var isCancelled: Bool
    public var serial: UInt32
    /// Milliseconds, from the compositor's clock.
    public var time: UInt32

    public var description: String {
        let what = device == .pointer ? "button 0x\(String(button, radix: 16))" : "\(device)"
        let action = isCancelled ? "cancel" : isPressed ? "press" : "release"
        return "\(action) of \(what) at (\(x), \(y)) on surface \(surface.map(\.description) ?? "gone")"
    }
}

/// Linux input event codes of pointer buttons (linux/input-event-codes.h).
public enum PointerButton {
    public static let left: UInt32 = 0x110
    public static let right: UInt32 = 0x111
    public static let middle: UInt32 = 0x112

    /// The code of an X11-numbered button (1 left, 2 middle, 3 right); nil for wheel
    /// notches (4-7), which Wayland reports as axis events.
    public static func code(x11Button: UInt8) -> UInt32? {
        switch x11Button {
        case 1: left
        case 2: middle
        case 3: right
        case 8: 0x113  // BTN_SIDE, X11's "back"
        case 9: 0x114  // BTN_EXTRA, X11's "forward"
        default: nil
        }
    }

    /// The X11 number of a button code, the numbering the config's `buttons` uses; nil for
    /// buttons X11 has no number for.
    public static func x11Button(code: UInt32) -> UInt8? {
        (1...9).first { Self.code(x11Button: UInt8($0)) == code }.map(UInt8.init)
    }
}

/// A bound wl_seat and what it reports presses through: its wl_pointer and wl_touch while
/// the seat has those capabilities, and its tablet tools once a tablet manager is known.
/// Capabilities come and go (a mouse plugged in or out, a virtual pointer created or
/// destroyed), so pointer and touch are taken and released on every capabilities event.
public final class Seat {
    private let proxy: OpaquePointer
    private let seatListener: Listener<wl_seat_listener>
    private let pointerListener: Listener<wl_pointer_listener>
    private let touchListener: Listener<wl_touch_listener>
    private var pointer: OpaquePointer?
    private var touch: OpaquePointer?
    private var tablets: TabletSeat?
    /// The surface the pointer is over and where, from enter and motion.
    private var focus: ObjectID?
    private var position = (x: 0.0, y: 0.0)
    /// Touch points down now: where they went down or last moved, on which surface.
    private var touchPoints: [Int32: (surface: ObjectID?, x: Double, y: Double)] = [:]
    private var presses: [PressEvent] = []

    init(proxy: OpaquePointer) {
        self.proxy = proxy
        var seatFunctions = wl_seat_listener()
        seatFunctions.capabilities = { data, _, capabilities in
            owner(data, as: Seat.self).update(capabilities: capabilities)
        }
        seatFunctions.name = { _, _, _ in }
        seatListener = Listener(seatFunctions)

        // Only the events of version 7 and below are set: the seat is bound at 7 at most,
        // and later events would find a NULL here.
        var functions = wl_pointer_listener()
        functions.enter = { data, _, _, surface, x, y in
            let seat = owner(data, as: Seat.self)
            seat.focus = surface.map(ObjectID.init)
            seat.position = (wl_fixed_to_double(x), wl_fixed_to_double(y))
        }
        functions.leave = { data, _, _, _ in owner(data, as: Seat.self).focus = nil }
        functions.motion = { data, _, _, x, y in
            owner(data, as: Seat.self).position = (wl_fixed_to_double(x), wl_fixed_to_double(y))
        }
        functions.button = { data, _, serial, time, button, state in
            let seat = owner(data, as: Seat.self)
            seat.presses.append(PressEvent(
                device: .pointer, surface: seat.focus, x: seat.position.x, y: seat.position.y, button: button,
                isPressed: state == WL_POINTER_BUTTON_STATE_PRESSED.rawValue, isCancelled: false, serial: serial, time: time))
        }
        functions.axis = { _, _, _, _, _ in }
        functions.frame = { _, _ in }
        functions.axis_source = { _, _, _ in }
        functions.axis_stop = { _, _, _, _ in }
        functions.axis_discrete = { _, _, _, _ in }
        pointerListener = Listener(functions)

        var touchFunctions = wl_touch_listener()
        touchFunctions.down = { data, _, serial, time, surface, id, x, y in
            let seat = owner(data, as: Seat.self)
            let point = (surface: surface.map(ObjectID.init), x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
            seat.touchPoints[id] = point
            seat.presses.append(PressEvent(
                device: .touch(id: id), surface: point.surface, x: point.x, y: point.y, button: PointerButton.left,
                isPressed: true, isCancelled: false, serial: serial, time: time))
        }
        touchFunctions.up = { data, _, serial, time, id in
            let seat = owner(data, as: Seat.self)
            guard let point = seat.touchPoints.removeValue(forKey: id) else { return }
            seat.presses.append(PressEvent(
                device: .touch(id: id), surface: point.surface, x: point.x, y: point.y, button: PointerButton.left,
                isPressed: false, isCancelled: false, serial: serial, time: time))
        }
        touchFunctions.motion = { data, _, _, id, x, y in
            let seat = owner(data, as: Seat.self)
            seat.touchPoints[id]?.x = wl_fixed_to_double(x)
            seat.touchPoints[id]?.y = wl_fixed_to_double(y)
        }
        touchFunctions.cancel = { data, _ in owner(data, as: Seat.self).cancelTouches() }
        touchFunctions.frame = { _, _ in }
        touchFunctions.shape = { _, _, _, _, _ in }
        touchFunctions.orientation = { _, _, _, _ in }
        touchListener = Listener(touchFunctions)
        wl_seat_add_listener(proxy, seatListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        tablets = nil
        update(capabilities: 0)
        if wl_seat_get_version(proxy) >= 5 { wl_seat_release(proxy) } else { wl_seat_destroy(proxy) }
    }

    /// Whether the seat currently has a pointer this client listens to.
    public var hasPointer: Bool { pointer != nil }
    /// Whether the seat currently has a touch device this client listens to.
    public var hasTouch: Bool { touch != nil }
    /// Whether pen input reaches this client (the compositor offers zwp_tablet_manager_v2).
    public var hasTablets: Bool { tablets != nil }

    func takePresses() -> [PressEvent] {
        defer { presses.removeAll() }
        return presses
    }

    /// Listens to the seat's tablet tools through `manager` (zwp_tablet_manager_v2).
    func attachTablets(_ manager: OpaquePointer) {
        guard tablets == nil else { return }
        tablets = TabletSeat(zwp_tablet_manager_v2_get_tablet_seat(manager, proxy)!) { [unowned self] in presses.append($0) }
    }

    private func cancelTouches() {
        for (id, point) in touchPoints {
            presses.append(PressEvent(
                device: .touch(id: id), surface: point.surface, x: point.x, y: point.y, button: PointerButton.left,
                isPressed: false, isCancelled: true, serial: 0, time: 0))
        }
        touchPoints.removeAll()
    }

    private func update(capabilities: UInt32) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        if capabilities & WL_SEAT_CAPABILITY_POINTER.rawValue != 0 {
            if pointer == nil {
                let pointer = wl_seat_get_pointer(proxy)!
                wl_pointer_add_listener(pointer, pointerListener.pointer, me)
                self.pointer = pointer
            }
        } else if let pointer {
            if wl_pointer_get_version(pointer) >= 3 { wl_pointer_release(pointer) } else { wl_pointer_destroy(pointer) }
            self.pointer = nil
            focus = nil
        }
        if capabilities & WL_SEAT_CAPABILITY_TOUCH.rawValue != 0 {
            if touch == nil {
                let touch = wl_seat_get_touch(proxy)!
                wl_touch_add_listener(touch, touchListener.pointer, me)
                self.touch = touch
            }
        } else if let touch {
            if wl_touch_get_version(touch) >= 3 { wl_touch_release(touch) } else { wl_touch_destroy(touch) }
            self.touch = nil
            // No lift will come for the points still down.
            cancelTouches()
        }
    }
}

/// A zwp_tablet_seat_v2: the tablets, tools and pads of one seat as the compositor
/// announces them. A tool's tip touching a surface is a press there, its lift the release;
/// both are reported with the time of the frame that ends them.
private final class TabletSeat {
    private let proxy: OpaquePointer
    private let report: (PressEvent) -> Void
    private let seatListener: Listener<zwp_tablet_seat_v2_listener>
    private let tabletListener: Listener<zwp_tablet_v2_listener>
    private let padListener: Listener<zwp_tablet_pad_v2_listener>
    private var tablets: Set<OpaquePointer> = []
    private var pads: Set<OpaquePointer> = []
    private var tools: [OpaquePointer: Tool] = [:]

    /// One tool's state between frames.
    final class Tool {
        let listener: Listener<zwp_tablet_tool_v2_listener>
        weak var seat: TabletSeat?
        var surface: ObjectID?
        var position = (x: 0.0, y: 0.0)
        /// The tip's change in the current frame: pressed (with its serial) or lifted.
        var tip: (pressed: Bool, serial: UInt32)?

        init(listener: Listener<zwp_tablet_tool_v2_listener>) { self.listener = listener }
    }

    init(_ proxy: OpaquePointer, report: @escaping (PressEvent) -> Void) {
        self.proxy = proxy
        self.report = report
        var seatFunctions = zwp_tablet_seat_v2_listener()
        seatFunctions.tablet_added = { data, _, tablet in owner(data, as: TabletSeat.self).add(tablet: tablet!) }
        seatFunctions.tool_added = { data, _, tool in owner(data, as: TabletSeat.self).add(tool: tool!) }
        seatFunctions.pad_added = { data, _, pad in owner(data, as: TabletSeat.self).add(pad: pad!) }
        seatListener = Listener(seatFunctions)

        var tabletFunctions = zwp_tablet_v2_listener()
        tabletFunctions.name = { _, _, _ in }
        tabletFunctions.id = { _, _, _, _ in }
        tabletFunctions.path = { _, _, _ in }
        tabletFunctions.done = { _, _ in }
        tabletFunctions.removed = { data, tablet in
            owner(data, as: TabletSeat.self).tablets.remove(tablet!)
            zwp_tablet_v2_destroy(tablet)
        }
        tabletListener = Listener(tabletFunctions)

        // Pads (the buttons, rings and strips beside a tablet) press nothing on a surface;
        // they are only followed so they can be released when they go.
        var padFunctions = zwp_tablet_pad_v2_listener()
        padFunctions.group = { _, _, _ in }
        padFunctions.path = { _, _, _ in }
        padFunctions.buttons = { _, _, _ in }
        padFunctions.done = { _, _ in }
        padFunctions.button = { _, _, _, _, _ in }
        padFunctions.enter = { _, _, _, _, _ in }
        padFunctions.leave = { _, _, _, _ in }
        padFunctions.removed = { data, pad in
            owner(data, as: TabletSeat.self).pads.remove(pad!)
            zwp_tablet_pad_v2_destroy(pad)
        }
        padListener = Listener(padFunctions)
        zwp_tablet_seat_v2_add_listener(proxy, seatListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        for tool in tools.keys { zwp_tablet_tool_v2_destroy(tool) }
        for tablet in tablets { zwp_tablet_v2_destroy(tablet) }
        for pad in pads { zwp_tablet_pad_v2_destroy(pad) }
        zwp_tablet_seat_v2_destroy(proxy)
    }

    private func add(tablet: OpaquePointer) {
        tablets.insert(tablet)
        zwp_tablet_v2_add_listener(tablet, tabletListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    private func add(pad: OpaquePointer) {
        pads.insert(pad)
        zwp_tablet_pad_v2_add_listener(pad, padListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    private func add(tool proxy: OpaquePointer) {
        var functions = zwp_tablet_tool_v2_listener()
        functions.type = { _, _, _ in }
        functions.hardware_serial = { _, _, _, _ in }
        functions.hardware_id_wacom = { _, _, _, _ in }
        functions.capability = { _, _, _ in }
        functions.done = { _, _ in }
        functions.removed = { data, tool in
            let state = owner(data, as: Tool.self)
            state.seat?.tools.removeValue(forKey: tool!)
            zwp_tablet_tool_v2_destroy(tool)
        }
        functions.proximity_in = { data, _, _, _, surface in
            owner(data, as: Tool.self).surface = surface.map(ObjectID.init)
        }
        functions.proximity_out = { data, _ in owner(data, as: Tool.self).surface = nil }
        functions.down = { data, _, serial in owner(data, as: Tool.self).tip = (true, serial) }
        functions.up = { data, _ in owner(data, as: Tool.self).tip = (false, 0) }
        functions.motion = { data, _, x, y in
            owner(data, as: Tool.self).position = (wl_fixed_to_double(x), wl_fixed_to_double(y))
        }
        functions.pressure = { _, _, _ in }
        functions.distance = { _, _, _ in }
        functions.tilt = { _, _, _, _ in }
        functions.rotation = { _, _, _ in }
        functions.slider = { _, _, _ in }
        functions.wheel = { _, _, _, _ in }
        // The barrel buttons are not clicks: with the tip up they mean hover actions.
        functions.button = { _, _, _, _, _ in }
        functions.frame = { data, _, time in
            let state = owner(data, as: Tool.self)
            guard let tip = state.tip else { return }
            state.tip = nil
            state.seat?.report(PressEvent(
                device: .pen, surface: state.surface, x: state.position.x, y: state.position.y, button: PointerButton.left,
                isPressed: tip.pressed, isCancelled: false, serial: tip.serial, time: time))
        }
        let tool = Tool(listener: Listener(functions))
        tool.seat = self
        tools[proxy] = tool
        zwp_tablet_tool_v2_add_listener(proxy, tool.listener.pointer, Unmanaged.passUnretained(tool).toOpaque())
    }
}
