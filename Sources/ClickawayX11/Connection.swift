internal import CXCB
public import ClickawayCore
#if canImport(Glibc)
internal import Glibc
#endif

public typealias WindowID = UInt32
public typealias Atom = UInt32
/// Server time in milliseconds; 0 means CurrentTime.
public typealias Timestamp = UInt32

/// A window as xprop and xwininfo write it: `0x1a00003`.
public func hex(_ window: WindowID) -> String { "0x" + String(window, radix: 16) }

/// One connection to an X server, for the default screen of its display.
///
/// libxcb is thread-safe and every stored property is immutable, so the connection may be
/// shared between threads; what the caller builds on it (an event loop) is its own business.
public final class XConnection: @unchecked Sendable {
    let c: OpaquePointer
    /// Counts the calls that may read the socket (an event or reply looked for, a reply or a
    /// request's check waited for, a flush). A reply not there when this was n is not there
    /// still while it is n: looking again would only cost libxcb a recvmsg(2) that finds
    /// nothing. A request that fills libxcb's buffer may read too, uncounted: a flush always
    /// follows before the loop sleeps.
    /// Counted on every pass of the loop: no runtime exclusivity check (each access is a
    /// statement of this class that calls out to nothing). bench/callgrind, inside click: 210
    /// instructions a click without it (BENCHMARKS.md, the daemon's part of an inside click).
    @exclusivity(unchecked) public internal(set) var reads: UInt64 = 0
    /// The display name actually used, e.g. ":1".
    public let display: String
    public let root: WindowID
    /// The screen's size when the connection was made (RandR may change it later).
    public let screenRect: Rect
    /// Atoms the layer itself needs, interned once at connect time.
    public let atoms: StandardAtoms
    /// RandR's first event code, or nil without RandR; fixed at connect time so that
    /// decoding an event never needs a round trip.
    let randrEventBase: UInt8?
    /// The bits of a resource id that a client chooses; the others name the client
    /// (the setup's resource-id-mask, the same for every client of a server).
    let resourceIDMask: UInt32
    /// The client bits of this connection's own ids.
    let resourceIDBase: UInt32

    /// Connects to `display`, or to `$DISPLAY` when it is nil. Costs one round trip.
    public init(display: String? = nil) throws(XError) {
        let name = display ?? getenv("DISPLAY").map { String(cString: $0) }
        guard let name, !name.isEmpty else { throw .noDisplay }

        var screenNumber: Int32 = 0
        // xcb_connect never returns NULL: failure is a connection object in an error state.
        let c = xcb_connect(name, &screenNumber)!
        let code = xcb_connection_has_error(c)
        guard code == 0 else {
            xcb_disconnect(c)
            throw .cannotConnect(display: name, reason: connectionErrorReason(code))
        }
        guard let screen = Self.screen(c, number: screenNumber) else {
            xcb_disconnect(c)
            throw .cannotConnect(display: name, reason: connectionErrorReason(XCB_CONN_CLOSED_INVALID_SCREEN))
        }

        // Pipeline the atoms and RandR's extension data into a single round trip.
        xcb_prefetch_extension_data(c, cxcb_randr_id())
        let atoms: StandardAtoms
        do {
            atoms = try StandardAtoms(c)
        } catch {
            xcb_disconnect(c)
            throw error
        }
        let randr = xcb_get_extension_data(c, cxcb_randr_id())?.pointee

        self.c = c
        self.display = name
        self.root = screen.root
        self.screenRect = Rect(x: 0, y: 0, width: Int32(screen.width_in_pixels), height: Int32(screen.height_in_pixels))
        self.atoms = atoms
        self.randrEventBase = randr.flatMap { $0.present != 0 ? $0.first_event : nil }
        self.resourceIDMask = xcb_get_setup(c).pointee.resource_id_mask
        self.resourceIDBase = xcb_get_setup(c).pointee.resource_id_base
    }

    /// Whether two windows were created by the same X client: every id a client allocates
    /// shares the bits outside the resource-id mask (X protocol, connection setup).
    public func sameClient(_ a: WindowID, _ b: WindowID) -> Bool { clientBase(of: a) == clientBase(of: b) }

    /// The bits every id of `window`'s client shares: the same for windows of one client.
    public func clientBase(of window: WindowID) -> WindowID { window & ~resourceIDMask }

    /// Whether this connection created `window` (the shield, pick's windows).
    public func isOwn(_ window: WindowID) -> Bool { sameClient(window, resourceIDBase) }

    deinit { xcb_disconnect(c) }

    private static func screen(_ c: OpaquePointer, number: Int32) -> xcb_screen_t? {
        var it = xcb_setup_roots_iterator(xcb_get_setup(c))
        for _ in 0..<number where it.rem > 0 { xcb_screen_next(&it) }
        return it.rem > 0 ? it.data.pointee : nil
    }

    /// For poll(2): readable when the server sent something. Drain `pollEvent()` before
    /// sleeping on it, since replies can pull events into libxcb's queue unseen.
    public var fileDescriptor: Int32 { xcb_get_file_descriptor(c) }

    /// Writes what is queued. libxcb reads the socket too while it waits to write (as it does
    /// when a request fills its buffer): counted in `reads`.
    public func flush() {
        reads &+= 1
        _ = xcb_flush(c)
    }

    public func generateID() -> UInt32 { xcb_generate_id(c) }

    /// True once the connection is unusable (server gone, protocol error); it never recovers.
    public var hasError: Bool { xcb_connection_has_error(c) != 0 }

    /// What broke the connection, or nil while it works.
    public var connectionError: XError? {
        let code = xcb_connection_has_error(c)
        return code == 0 ? nil : .connectionLost(reason: connectionErrorReason(code))
    }

    /// Whether the connection broke (`connectionError` says why): a look that builds nothing.
    public var isBroken: Bool { xcb_connection_has_error(c) != 0 }

    /// A GetInputFocus round trip: when it returns, the server has processed every request
    /// sent before it, and every event it generated for us before then is in our queue.
    public func sync() throws(XError) {
        try reply("GetInputFocus", { xcb_get_input_focus_reply(c, xcb_get_input_focus(c), $0) }) { _ in }
    }

    /// Test support: the raw connection, for requests this layer does not wrap (XTest,
    /// creating windows). Package-internal so the daemon's code keeps to the safe API.
    package func withUnsafeConnection<T, E: Error>(_ body: (OpaquePointer) throws(E) -> T) throws(E) -> T {
        try body(c)
    }

    /// Waits for a reply, turns an X error into `XError.request`, and frees whatever libxcb
    /// returned after `body` copied what it needs. The reply pointer must not escape `body`.
    func reply<Reply, T>(
        _ request: String,
        _ fetch: (UnsafeMutablePointer<UnsafeMutablePointer<xcb_generic_error_t>?>) -> UnsafeMutablePointer<Reply>?,
        _ body: (UnsafeMutablePointer<Reply>) throws(XError) -> T
    ) throws(XError) -> T {
        reads &+= 1
        return try Self.reply(c, request, fetch, body)
    }

    static func reply<Reply, T>(
        _ c: OpaquePointer,
        _ request: String,
        _ fetch: (UnsafeMutablePointer<UnsafeMutablePointer<xcb_generic_error_t>?>) -> UnsafeMutablePointer<Reply>?,
        _ body: (UnsafeMutablePointer<Reply>) throws(XError) -> T
    ) throws(XError) -> T {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        guard let reply = fetch(&error) else {
            if let error {
                let info = XErrorInfo(error)
                free(error)
                throw .request(request, info)
            }
            // No reply and no error: libxcb only does that when the connection broke.
            let code = xcb_connection_has_error(c)
            throw .connectionLost(reason: connectionErrorReason(code == 0 ? XCB_CONN_ERROR : code))
        }
        defer { free(reply) }
        return try body(reply)
    }
}

/// Atoms the layer uses to read and send ICCCM/EWMH properties and messages.
public struct StandardAtoms: Sendable {
    public let wmProtocols: Atom
    public let wmDeleteWindow: Atom
    public let wmState: Atom
    public let utf8String: Atom
    public let netWMName: Atom
    public let netWMWindowType: Atom
    public let netSupportingWMCheck: Atom
    public let netActiveWindow: Atom
    public let netWMPid: Atom

    /// Predefined atoms (X11 protocol, appendix B): no InternAtom needed.
    public static let wmName = Atom(XCB_ATOM_WM_NAME.rawValue)
    public static let wmClass = Atom(XCB_ATOM_WM_CLASS.rawValue)
    public static let wmTransientFor = Atom(XCB_ATOM_WM_TRANSIENT_FOR.rawValue)

    static let names = [
        "WM_PROTOCOLS", "WM_DELETE_WINDOW", "WM_STATE", "UTF8_STRING",
        "_NET_WM_NAME", "_NET_WM_WINDOW_TYPE", "_NET_SUPPORTING_WM_CHECK", "_NET_ACTIVE_WINDOW",
        "_NET_WM_PID",
    ]

    init(_ c: OpaquePointer) throws(XError) {
        let a = try internAtoms(c, Self.names)
        wmProtocols = a[0]
        wmDeleteWindow = a[1]
        wmState = a[2]
        utf8String = a[3]
        netWMName = a[4]
        netWMWindowType = a[5]
        netSupportingWMCheck = a[6]
        netActiveWindow = a[7]
        netWMPid = a[8]
    }
}

/// Sends every InternAtom first and only then collects the replies: one round trip in all.
func internAtoms(_ c: OpaquePointer, _ names: [String]) throws(XError) -> [Atom] {
    let cookies = names.map { name in
        xcb_intern_atom(c, 0, UInt16(name.utf8.count), name)
    }
    return try collect(c, cookies, \.sequence) { (i, cookie) throws(XError) in
        try XConnection.reply(c, "InternAtom \(names[i])", { xcb_intern_atom_reply(c, cookie, $0) }) { $0.pointee.atom }
    }
}

/// Collects the replies of requests already sent, in order. When one fails, the replies
/// still outstanding are discarded, or libxcb would keep them forever.
func collect<Cookie, T>(
    _ c: OpaquePointer, _ cookies: [Cookie], _ sequence: (Cookie) -> UInt32,
    _ each: (Int, Cookie) throws(XError) -> T
) throws(XError) -> [T] {
    var results: [T] = []
    results.reserveCapacity(cookies.count)
    for (i, cookie) in cookies.enumerated() {
        do throws(XError) {
            results.append(try each(i, cookie))
        } catch {
            for rest in cookies[(i + 1)...] { xcb_discard_reply(c, sequence(rest)) }
            throw error
        }
    }
    return results
}
