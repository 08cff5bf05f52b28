import CWaylandClient

/// A pointer button press or release as a client's seat received it.
public struct PointerButtonEvent: Hashable, Sendable, CustomStringConvertible {
    /// The surface under the pointer; nil if this client destroyed it meanwhile.
    public var surface: ObjectID?
    /// The pointer's position relative to that surface.
    public var x: Double
    public var y: Double
    /// A Linux input event code (`PointerButton.left` = BTN_LEFT = 0x110, ...).
    public var button: UInt32
    public var isPressed: Bool
    public var serial: UInt32
    /// Milliseconds, from the compositor's clock.
    public var time: UInt32

    public var description: String {
        "\(isPressed ? "press" : "release") of button 0x\(String(button, radix: 16)) at (\(x), \(y)) on surface \(surface.map(\.description) ?? "gone")"
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

/// A bound wl_seat and, while the seat has the pointer capability, its wl_pointer. The
/// capability comes and goes (a mouse plugged in or out, a virtual pointer created or
/// destroyed), so the pointer is taken and released on every capabilities event.
public final class Seat {
    private let proxy: OpaquePointer
    private let seatListener: Listener<wl_seat_listener>
    private let pointerListener: Listener<wl_pointer_listener>
    private var pointer: OpaquePointer?
    /// The surface the pointer is over and where, from enter and motion.
    private var focus: ObjectID?
    private var position = (x: 0.0, y: 0.0)
    private var buttons: [PointerButtonEvent] = []

    init(proxy: OpaquePointer) {
        self.proxy = proxy
        var seatFunctions = wl_seat_listener()
        seatFunctions.capabilities = { data, _, capabilities in
            owner(data, as: Seat.self).update(hasPointer: capabilities & WL_SEAT_CAPABILITY_POINTER.rawValue != 0)
        }
        seatFunctions.name = { _, _, _ in }
        seatListener = Listener(seatFunctions)

        // Only the events of wl_pointer version 7 and below are set: the seat is bound at 7
        // at most, and later events would find a NULL here.
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
            seat.buttons.append(PointerButtonEvent(
                surface: seat.focus, x: seat.position.x, y: seat.position.y, button: button,
                isPressed: state == WL_POINTER_BUTTON_STATE_PRESSED.rawValue, serial: serial, time: time))
        }
        functions.axis = { _, _, _, _, _ in }
        functions.frame = { _, _ in }
        functions.axis_source = { _, _, _ in }
        functions.axis_stop = { _, _, _, _ in }
        functions.axis_discrete = { _, _, _, _ in }
        pointerListener = Listener(functions)
        wl_seat_add_listener(proxy, seatListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        update(hasPointer: false)
        if wl_seat_get_version(proxy) >= 5 { wl_seat_release(proxy) } else { wl_seat_destroy(proxy) }
    }

    /// Whether the seat currently has a pointer this client listens to.
    public var hasPointer: Bool { pointer != nil }

    func takeButtons() -> [PointerButtonEvent] {
        defer { buttons.removeAll() }
        return buttons
    }

    private func update(hasPointer: Bool) {
        if hasPointer, pointer == nil {
            let pointer = wl_seat_get_pointer(proxy)!
            wl_pointer_add_listener(pointer, pointerListener.pointer, Unmanaged.passUnretained(self).toOpaque())
            self.pointer = pointer
        } else if !hasPointer, let pointer {
            if wl_pointer_get_version(pointer) >= 3 { wl_pointer_release(pointer) } else { wl_pointer_destroy(pointer) }
            self.pointer = nil
            focus = nil
        }
    }
}
