internal import CXCB
public import ClickawayCore

/// WM_CLASS: the instance name (first string) and the class (second string).
public struct WMClass: Hashable, Sendable {
    public var instance: String
    public var windowClass: String

    public init(instance: String, windowClass: String) {
        self.instance = instance
        self.windowClass = windowClass
    }
}

/// A property's value as the server stores it.
public struct PropertyValue {
    var type: Atom
    var format: UInt8
    var bytes: [UInt8]

    /// Format-8 text split at NULs. ICCCM's STRING is Latin-1; everything else is read as UTF-8.
    func strings(latin1: Bool) -> [String] {
        guard format == 8 else { return [] }
        var parts = bytes.split(separator: 0, omittingEmptySubsequences: false)
        if bytes.last == 0 { parts.removeLast() }
        return parts.map { part in
            // Latin-1 below 0x80 is ASCII, so UTF-8; above, each byte is the code point of its
            // value. Read for every window: scalar by scalar cost a read a fifth of its time.
            guard latin1 && !part.allSatisfy({ $0 < 0x80 }) else { return String(decoding: part, as: UTF8.self) }
            return String(decoding: part.map { UInt16($0) }, as: UTF16.self)
        }
    }

    var words: [UInt32] {
        guard format == 32 else { return [] }
        return bytes.withUnsafeBytes { raw in
            (0..<raw.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self) }
        }
    }
}

extension XConnection {
    /// Properties longer than this (in 32-bit units: 64 KiB) are read truncated.
    static let propertyLongLength: UInt32 = 16384

    private func sendGetProperty(_ window: WindowID, _ property: Atom, type: Atom = UInt32(XCB_GET_PROPERTY_TYPE_ANY.rawValue)) -> xcb_get_property_cookie_t {
        xcb_get_property(c, 0, window, property, type, 0, Self.propertyLongLength)
    }

    /// nil when the window does not have the property.
    private func propertyReply(_ cookie: xcb_get_property_cookie_t) throws(XError) -> PropertyValue? {
        try reply("GetProperty", { xcb_get_property_reply(c, cookie, $0) }) { r in
            guard r.pointee.type != UInt32(XCB_NONE) else { return nil }
            let bytes = UnsafeRawBufferPointer(start: xcb_get_property_value(r), count: Int(xcb_get_property_value_length(r)))
            return PropertyValue(type: r.pointee.type, format: r.pointee.format, bytes: Array(bytes))
        }
    }

    /// Collects replies sent together; see `collect`.
    private func propertyReplies(_ cookies: [xcb_get_property_cookie_t]) throws(XError) -> [PropertyValue?] {
        try collect(c, cookies, \.sequence) { (_, cookie) throws(XError) in try propertyReply(cookie) }
    }

    /// A format-32 property (CARDINAL, WINDOW, ATOM lists), or nil when the window lacks it.
    public func property32(_ window: WindowID, _ property: Atom) throws(XError) -> [UInt32]? {
        try propertyReply(sendGetProperty(window, property))?.words
    }

    public func wmClass(_ window: WindowID) throws(XError) -> WMClass? {
        try propertyReply(sendGetProperty(window, UInt32(XCB_ATOM_WM_CLASS.rawValue))).flatMap(wmClass(from:))
    }

    /// `_NET_WM_NAME` (UTF-8), else WM_NAME.
    public func title(_ window: WindowID) throws(XError) -> String? {
        let replies = try propertyReplies([
            sendGetProperty(window, atoms.netWMName),
            sendGetProperty(window, UInt32(XCB_ATOM_WM_NAME.rawValue)),
        ])
        return title(netWMName: replies[0], wmName: replies[1])
    }

    /// `_NET_WM_WINDOW_TYPE` as names without the `_NET_WM_WINDOW_TYPE_` prefix, lower case
    /// ("dialog", "popup_menu"), most specific first as the client listed them.
    public func windowTypes(_ window: WindowID) throws(XError) -> [String] {
        let atoms = try property32(window, atoms.netWMWindowType) ?? []
        return try atomNames(atoms).map(Self.windowTypeName)
    }

    /// Whether WM_PROTOCOLS lists WM_DELETE_WINDOW, i.e. whether the client can be asked to close.
    public func supportsDeleteWindow(_ window: WindowID) throws(XError) -> Bool {
        try property32(window, atoms.wmProtocols)?.contains(atoms.wmDeleteWindow) ?? false
    }

    /// Everything a `WindowMatch` looks at, and WM_TRANSIENT_FOR (what a window's family is
    /// made of), the six GetProperty requests pipelined. The process is _NET_WM_PID's (0
    /// without it: the client chose not to say).
    public func windowProperties(_ window: WindowID) throws(XError) -> WindowMatch.Properties {
        let replies = try propertyReplies([
            sendGetProperty(window, UInt32(XCB_ATOM_WM_CLASS.rawValue)),
            sendGetProperty(window, atoms.netWMName),
            sendGetProperty(window, UInt32(XCB_ATOM_WM_NAME.rawValue)),
            sendGetProperty(window, atoms.netWMWindowType),
            sendGetProperty(window, atoms.netWMPid, type: UInt32(XCB_ATOM_CARDINAL.rawValue)),
            sendGetProperty(window, StandardAtoms.wmTransientFor, type: UInt32(XCB_ATOM_WINDOW.rawValue)),
        ])
        let wmClass = replies[0].flatMap(wmClass(from:))
        let types = try atomNames(replies[3]?.words ?? []).map(Self.windowTypeName)
        return WindowMatch.Properties(
            windowClass: wmClass?.windowClass, instance: wmClass?.instance,
            title: title(netWMName: replies[1], wmName: replies[2]), types: types, window: window,
            pid: replies[4]?.words.first.flatMap { Int32(exactly: $0) } ?? 0,
            transientFor: replies[5]?.words.first ?? 0)
    }

    func wmClass(from value: PropertyValue) -> WMClass? {
        let parts = value.strings(latin1: value.type == UInt32(XCB_ATOM_STRING.rawValue))
        guard parts.count >= 2 else { return nil }
        return WMClass(instance: parts[0], windowClass: parts[1])
    }

    func title(netWMName: PropertyValue?, wmName: PropertyValue?) -> String? {
        if let netWMName, netWMName.type == atoms.utf8String, let title = netWMName.strings(latin1: false).first {
            return title
        }
        guard let wmName else { return nil }
        return wmName.strings(latin1: wmName.type == UInt32(XCB_ATOM_STRING.rawValue)).first ?? ""
    }

    static func windowTypeName(_ atomName: String) -> String {
        let prefix = "_NET_WM_WINDOW_TYPE_"
        return (atomName.hasPrefix(prefix) ? String(atomName.dropFirst(prefix.count)) : atomName).lowercased()
    }

    // MARK: Atoms

    public func internAtom(_ name: String) throws(XError) -> Atom {
        try internAtoms([name])[0]
    }

    /// All InternAtom requests first, then the replies: one round trip for the batch.
    public func internAtoms(_ names: [String]) throws(XError) -> [Atom] {
        try ClickawayX11.internAtoms(c, names)
    }

    /// GetAtomName for each atom, pipelined.
    public func atomNames(_ atoms: [Atom]) throws(XError) -> [String] {
        let cookies = atoms.map { xcb_get_atom_name(c, $0) }
        return try collect(c, cookies, \.sequence) { (_, cookie) throws(XError) in
            try reply("GetAtomName", { xcb_get_atom_name_reply(c, cookie, $0) }) { r in
                let bytes = UnsafeRawBufferPointer(start: xcb_get_atom_name_name(r), count: Int(xcb_get_atom_name_name_length(r)))
                return String(decoding: bytes, as: UTF8.self)
            }
        }
    }
}
