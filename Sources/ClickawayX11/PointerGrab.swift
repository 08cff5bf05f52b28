internal import CXCB
public import ClickawaySystem
internal import SystemPackage

public typealias CursorID = UInt32

/// Glyphs of the server's built-in "cursor" font (X11/cursorfont.h). Each glyph's mask is
/// the glyph after it.
public enum CursorGlyph: UInt16, Sendable {
    case crosshair = 34
}

/// Why the server refused an active pointer grab: the status of GrabPointer's reply.
public enum PointerGrabRefusal: Equatable, Sendable, CustomStringConvertible {
    /// Another client holds an active pointer grab (an open menu, a screenshot tool).
    case alreadyGrabbed
    case invalidTime
    case notViewable
    /// Another client's synchronous grab has frozen the pointer.
    case frozen
    case unknown(UInt8)

    init?(status: UInt8) {
        switch Int(status) {
        case Int(XCB_GRAB_STATUS_SUCCESS.rawValue): return nil
        case Int(XCB_GRAB_STATUS_ALREADY_GRABBED.rawValue): self = .alreadyGrabbed
        case Int(XCB_GRAB_STATUS_INVALID_TIME.rawValue): self = .invalidTime
        case Int(XCB_GRAB_STATUS_NOT_VIEWABLE.rawValue): self = .notViewable
        case Int(XCB_GRAB_STATUS_FROZEN.rawValue): self = .frozen
        default: self = .unknown(status)
        }
    }

    public var description: String {
        switch self {
        case .alreadyGrabbed: "another program has grabbed the pointer (an open menu, a screenshot or picker tool)"
        case .invalidTime: "the grab's time is older than the last grab or later than the server's clock"
        case .notViewable: "the grab window is not viewable"
        case .frozen: "another program's grab has frozen the pointer"
        case .unknown(let status): "GrabPointer answered with unknown status \(status)"
        }
    }
}

extension XConnection {
    /// A cursor from the server's "cursor" font, black on white like Xlib's XCreateFontCursor.
    /// Give it back with `freeCursor` (or disconnect).
    public func createFontCursor(_ glyph: CursorGlyph) throws(XError) -> CursorID {
        let font = generateID()
        let cursor = generateID()
        let name = "cursor"
        let opened = xcb_open_font_checked(c, font, UInt16(name.utf8.count), name)
        if let error = check(CheckedCookie(sequence: opened.sequence)) { throw .request("OpenFont \"cursor\"", error) }
        let created = xcb_create_glyph_cursor_checked(
            c, cursor, font, font, glyph.rawValue, glyph.rawValue + 1, 0, 0, 0, 0xffff, 0xffff, 0xffff)
        // The cursor keeps what it needs from the font.
        xcb_close_font(c, font)
        if let error = check(CheckedCookie(sequence: created.sequence)) { throw .request("CreateGlyphCursor \(glyph)", error) }
        return cursor
    }

    public func freeCursor(_ cursor: CursorID) {
        xcb_free_cursor(c, cursor)
    }

    /// Grabs the pointer actively on `window`: until `ungrabPointer`, the pointer events in
    /// `events` go to this client only, reported relative to `window` (owner_events false), so
    /// a press's `child` is the child of `window` under the pointer. Pointer and keyboard stay
    /// unfrozen. One round trip; nil when the grab is held, else why the server refused it.
    public func grabPointer(_ window: WindowID, events: EventMask, cursor: CursorID?) throws(XError) -> PointerGrabRefusal? {
        let cookie = xcb_grab_pointer(
            c, 0, window, UInt16(truncatingIfNeeded: events.rawValue),
            GrabMode.async.xcb, GrabMode.async.xcb, UInt32(XCB_NONE), cursor ?? UInt32(XCB_NONE),
            UInt32(XCB_CURRENT_TIME))
        return try reply("GrabPointer", { xcb_grab_pointer_reply(c, cookie, $0) }) { r in
            PointerGrabRefusal(status: r.pointee.status)
        }
    }

    /// Whether another client holds the pointer, asked without waiting: a GrabPointer on
    /// `window` with no events, released at once by the UngrabPointer sent after it (which
    /// does nothing if the grab was refused). The reply is nil when the grab was had.
    public func sendPointerGrabProbe(_ window: WindowID) -> PendingReply<PointerGrabRefusal?> {
        let cookie = xcb_grab_pointer(c, 0, window, 0, GrabMode.async.xcb, GrabMode.async.xcb, UInt32(XCB_NONE),
                                      UInt32(XCB_NONE), UInt32(XCB_CURRENT_TIME))
        ungrabPointer()
        return PendingReply(sequence: cookie.sequence, request: "GrabPointer") { raw in
            PointerGrabRefusal(status: raw.assumingMemoryBound(to: xcb_grab_pointer_reply_t.self).pointee.status)
        }
    }

    /// Releases this client's active pointer grab; nothing happens when it holds none.
    /// Call `flush()` or `sync()` after it.
    public func ungrabPointer() {
        xcb_ungrab_pointer(c, UInt32(XCB_CURRENT_TIME))
    }

    /// The next event, waiting for the server until `deadline`; nil when it passed first.
    /// Drains libxcb's queue before each poll(2), since replies can pull events in without
    /// the socket staying readable.
    public func nextEvent(before deadline: Deadline) throws(XError) -> XEvent? {
        while true {
            flush()
            if let event = pollEvent() { return event }
            if let error = connectionError { throw error }
            guard !deadline.hasPassed() else { return nil }
            do {
                _ = try FileDescriptor(rawValue: fileDescriptor).wait(until: deadline)
            } catch {
                throw .connectionLost(reason: "poll on the X connection failed: \(error)")
            }
        }
    }
}
