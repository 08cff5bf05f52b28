internal import CXCB
public import ClickawayCore
#if canImport(Glibc)
internal import Glibc
#endif

/// A request sent whose reply is collected later: by `XConnection.poll(_:)`, which never
/// blocks (`xcb_poll_for_reply`), or by `wait(_:)`. Each one must be collected or
/// `discard`ed exactly once, or libxcb keeps its reply forever.
public struct PendingReply<Value> {
    let sequence: UInt32
    let request: String
    /// Copies what is needed out of the reply, which libxcb allocated and the caller frees.
    let decode: (UnsafeMutableRawPointer) -> Value
}

/// What became of a request sent earlier.
public enum ReplyPoll<Value> {
    /// No reply yet: ask again after the connection has been read.
    case notYet
    case value(Value)
    case failed(XError)
}

extension XConnection {
    /// The reply if it has come (reading what the socket holds, without waiting), else `.notYet`.
    public func poll<Value>(_ pending: PendingReply<Value>) -> ReplyPoll<Value> {
        var reply: UnsafeMutableRawPointer?
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        reads &+= 1
        guard xcb_poll_for_reply(c, pending.sequence, &reply, &error) != 0 else { return .notYet }
        return outcome(pending, reply, error)
    }

    /// Waits for the reply: only where a round trip is allowed (start-up, `sync`).
    public func wait<Value>(_ pending: PendingReply<Value>) -> ReplyPoll<Value> {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        reads &+= 1
        let reply = xcb_wait_for_reply(c, pending.sequence, &error)
        return outcome(pending, reply, error)
    }

    /// Drops the reply of a request whose answer no longer matters.
    public func discard<Value>(_ pending: PendingReply<Value>) {
        xcb_discard_reply(c, pending.sequence)
    }

    private func outcome<Value>(_ pending: PendingReply<Value>, _ reply: UnsafeMutableRawPointer?,
                                _ error: UnsafeMutablePointer<xcb_generic_error_t>?) -> ReplyPoll<Value> {
        guard let reply else {
            if let error {
                let info = XErrorInfo(error)
                free(error)
                return .failed(.request(pending.request, info))
            }
            let code = xcb_connection_has_error(c)
            return .failed(.connectionLost(reason: connectionErrorReason(code == 0 ? XCB_CONN_ERROR : code)))
        }
        defer { free(reply) }
        return .value(pending.decode(reply))
    }

    // MARK: Requests whose replies are collected later

    /// A GetInputFocus: once its reply is there, the server has processed every request
    /// sent before it, and libxcb holds every event the server sent before that.
    public func sendRoundTrip() -> PendingReply<Void> {
        let cookie = xcb_get_input_focus(c)
        return PendingReply(sequence: cookie.sequence, request: "GetInputFocus") { _ in }
    }

    public func sendGetWindowAttributes(_ window: WindowID) -> PendingReply<WindowAttributes> {
        let cookie = xcb_get_window_attributes(c, window)
        return PendingReply(sequence: cookie.sequence, request: "GetWindowAttributes") { raw in
            WindowAttributes(raw.assumingMemoryBound(to: xcb_get_window_attributes_reply_t.self).pointee)
        }
    }

    /// Whether the window has WM_STATE (the client search's question, `findClient`).
    public func sendHasWMState(_ window: WindowID) -> PendingReply<Bool> {
        let cookie = xcb_get_property(c, 0, window, atoms.wmState, UInt32(XCB_GET_PROPERTY_TYPE_ANY.rawValue), 0, 0)
        return PendingReply(sequence: cookie.sequence, request: "GetProperty WM_STATE") { raw in
            raw.assumingMemoryBound(to: xcb_get_property_reply_t.self).pointee.type != UInt32(XCB_NONE)
        }
    }

    /// The window's children, bottom to top.
    public func sendQueryTree(_ window: WindowID) -> PendingReply<[WindowID]> {
        let cookie = xcb_query_tree(c, window)
        return PendingReply(sequence: cookie.sequence, request: "QueryTree") { raw in
            let r = raw.assumingMemoryBound(to: xcb_query_tree_reply_t.self)
            return Array(UnsafeBufferPointer(start: xcb_query_tree_children(r), count: Int(xcb_query_tree_children_length(r))))
        }
    }

    /// A property's value, nil when the window lacks it.
    func sendProperty(_ window: WindowID, _ property: Atom, type: Atom = UInt32(XCB_GET_PROPERTY_TYPE_ANY.rawValue))
        -> PendingReply<PropertyValue?> {
        let cookie = xcb_get_property(c, 0, window, property, type, 0, Self.propertyLongLength)
        return PendingReply(sequence: cookie.sequence, request: "GetProperty") { raw in
            let r = raw.assumingMemoryBound(to: xcb_get_property_reply_t.self)
            guard r.pointee.type != UInt32(XCB_NONE) else { return nil }
            let bytes = UnsafeRawBufferPointer(start: xcb_get_property_value(r), count: Int(xcb_get_property_value_length(r)))
            return PropertyValue(type: r.pointee.type, format: r.pointee.format, bytes: Array(bytes))
        }
    }

    public func sendWMClass(_ window: WindowID) -> PendingReply<WMClass?> {
        let pending = sendProperty(window, StandardAtoms.wmClass)
        return PendingReply(sequence: pending.sequence, request: pending.request) { [self] raw in
            pending.decode(raw).flatMap(wmClass(from:))
        }
    }

    /// Whether WM_PROTOCOLS lists WM_DELETE_WINDOW.
    public func sendSupportsDeleteWindow(_ window: WindowID) -> PendingReply<Bool> {
        let pending = sendProperty(window, atoms.wmProtocols)
        let delete = atoms.wmDeleteWindow
        return PendingReply(sequence: pending.sequence, request: pending.request) { raw in
            pending.decode(raw)?.words.contains(delete) ?? false
        }
    }

    public func sendGeometry(_ window: WindowID) -> PendingReply<WindowGeometry> {
        let cookie = xcb_get_geometry(c, window)
        return PendingReply(sequence: cookie.sequence, request: "GetGeometry") { raw in
            let g = raw.assumingMemoryBound(to: xcb_get_geometry_reply_t.self).pointee
            return WindowGeometry(
                root: g.root, rect: Rect(x: Int32(g.x), y: Int32(g.y), width: Int32(g.width), height: Int32(g.height)),
                borderWidth: g.border_width, depth: g.depth)
        }
    }

    /// Where the window's origin is on the root.
    public func sendRootOrigin(_ window: WindowID) -> PendingReply<(x: Int32, y: Int32)> {
        let cookie = xcb_translate_coordinates(c, window, root, 0, 0)
        return PendingReply(sequence: cookie.sequence, request: "TranslateCoordinates") { raw in
            let r = raw.assumingMemoryBound(to: xcb_translate_coordinates_reply_t.self).pointee
            return (Int32(r.dst_x), Int32(r.dst_y))
        }
    }

    public func sendAtomName(_ atom: Atom) -> PendingReply<String> {
        let cookie = xcb_get_atom_name(c, atom)
        return PendingReply(sequence: cookie.sequence, request: "GetAtomName") { raw in
            let r = raw.assumingMemoryBound(to: xcb_get_atom_name_reply_t.self)
            let bytes = UnsafeRawBufferPointer(start: xcb_get_atom_name_name(r), count: Int(xcb_get_atom_name_name_length(r)))
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Everything a `WindowMatch` looks at, and WM_TRANSIENT_FOR: the six GetProperty
    /// requests of `windowProperties`, sent; `properties(from:names:)` makes them a value.
    public func sendWindowProperties(_ window: WindowID) -> [PendingReply<PropertyValue?>] {
        [
            sendProperty(window, StandardAtoms.wmClass),
            sendProperty(window, atoms.netWMName),
            sendProperty(window, StandardAtoms.wmName),
            sendProperty(window, atoms.netWMWindowType),
            sendProperty(window, atoms.netWMPid, type: UInt32(XCB_ATOM_CARDINAL.rawValue)),
            sendProperty(window, StandardAtoms.wmTransientFor, type: UInt32(XCB_ATOM_WINDOW.rawValue)),
        ]
    }

    /// WM_CLASS among the replies of `sendWindowProperties`: nil when the window has none.
    public func wmClass(in replies: [PropertyValue?]) -> WMClass? { replies[0].flatMap(wmClass(from:)) }

    /// The window type atoms among the replies of `sendWindowProperties`: their names are
    /// needed before `properties(of:from:names:)`.
    public func windowTypeAtoms(_ replies: [PropertyValue?]) -> [Atom] { replies[3]?.words ?? [] }

    /// The properties of `window` from the replies of `sendWindowProperties`, the window
    /// types named by `names` (GetAtomName's answers for `windowTypeAtoms`).
    public func properties(of window: WindowID, from replies: [PropertyValue?], names: [Atom: String]) -> WindowMatch.Properties {
        let wmClass = wmClass(in: replies)
        let types = windowTypeAtoms(replies).map { names[$0].map(Self.windowTypeName) ?? "" }
        return WindowMatch.Properties(
            windowClass: wmClass?.windowClass, instance: wmClass?.instance,
            title: title(netWMName: replies[1], wmName: replies[2]), types: types, window: window,
            pid: replies[4]?.words.first.flatMap { Int32(exactly: $0) } ?? 0,
            transientFor: replies[5]?.words.first ?? 0)
    }
}
