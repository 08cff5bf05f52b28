internal import CXCB

/// Where the client window of a top-level window is, found as ICCCM 4.1.3.1 defines it: the
/// window that carries WM_STATE, which a window manager sets on the clients it manages, at
/// whatever depth it put them below its frame. A frame's own properties never make it the
/// client: i3 (`i3-frame`) and herbstluftwm (`_HERBST_DECORATION`) put WM_CLASS on theirs.
///
/// With no WM_STATE anywhere below it, a top-level window is nobody's frame: an
/// override-redirect window (menus, tooltips, many bar popups) is then its own client; any
/// other (while no window manager runs) is its own client if it has WM_CLASS (what xprop and
/// xdotool do too). A window manager may set WM_STATE only after mapping its frame, so for a
/// top-level that is not override-redirect the answer can still change: `searched` lists
/// the windows to watch for WM_STATE appearing.
public struct ClientSearch: Equatable, Sendable {
    /// The client window, nil when there is none (no WM_STATE below, no WM_CLASS on top).
    public var client: WindowID?
    /// Whether WM_STATE named the client: then it stays the client while it is mapped.
    public var managed: Bool
    /// The windows looked at, the top-level first, down to `XConnection.clientSearchDepth`.
    public var searched: [WindowID]
}

extension XConnection {
    /// How many levels below a top-level the search goes. Frames nest two or three deep
    /// (openbox: frame, plate, client); a client deeper than this is not found.
    public static let clientSearchDepth = 6

    /// Finds the client window of `topLevel`: the window carrying WM_STATE, breadth first,
    /// topmost children first; else `topLevel` itself when it has WM_CLASS. Each level is two
    /// round trips (WM_STATE of all its windows, then their children), whatever its width.
    ///
    /// `beforeReading` gets each window before its WM_STATE is read, for a caller that
    /// selects PropertyNotify on it there: a WM_STATE set after the read then still reaches it.
    ///
    /// An override-redirect top-level with no WM_STATE below it (i3's frames are
    /// override-redirect, with the client below) is never managed (ICCCM 4.1.10): it is its
    /// own client, with or without WM_CLASS (dzen2's body, Xt menus).
    public func findClient(of topLevel: WindowID, overrideRedirect: Bool = false,
                           beforeReading: (WindowID) -> Void = { _ in }) throws(XError) -> ClientSearch {
        var level = [topLevel]
        var searched: [WindowID] = []
        for depth in 0...Self.clientSearchDepth {
            level.forEach(beforeReading)
            let stateCookies = level.map { xcb_get_property(c, 0, $0, atoms.wmState, UInt32(XCB_GET_PROPERTY_TYPE_ANY.rawValue), 0, 0) }
            let hasState = try collect(c, stateCookies, \.sequence) { (_, cookie) throws(XError) in
                try unlessGone(depth > 0) { () throws(XError) in
                    try reply("GetProperty WM_STATE", { xcb_get_property_reply(c, cookie, $0) }) { $0.pointee.type != UInt32(XCB_NONE) }
                } ?? false
            }
            searched += level
            if let i = hasState.firstIndex(of: true) {
                return ClientSearch(client: level[i], managed: true, searched: searched)
            }
            guard depth < Self.clientSearchDepth else { break }
            let treeCookies = level.map { xcb_query_tree(c, $0) }
            level = try collect(c, treeCookies, \.sequence) { (_, cookie) throws(XError) in
                try unlessGone(depth > 0) { () throws(XError) in
                    try reply("QueryTree", { xcb_query_tree_reply(c, cookie, $0) }) { r in
                        Array(UnsafeBufferPointer(start: xcb_query_tree_children(r), count: Int(xcb_query_tree_children_length(r))))
                    }
                } ?? []
            }.flatMap { $0.reversed() }
            if level.isEmpty { break }
        }
        let ownClient = try overrideRedirect ? true : wmClass(topLevel) != nil
        return ClientSearch(client: ownClient ? topLevel : nil, managed: false, searched: searched)
    }

    /// `read`, or nil when `ignoringGone` and the window it asked about no longer exists
    /// (BadWindow): window managers create and destroy decoration windows inside their
    /// frames while managing a client, and one of those vanishing is no reason to give up.
    private func unlessGone<T>(_ ignoringGone: Bool, _ read: () throws(XError) -> T) throws(XError) -> T? {
        do {
            return try read()
        } catch {
            if ignoringGone, case .request(_, let info) = error, info.name == "BadWindow" { return nil }
            throw error
        }
    }
}
