import CXCB
import ClickawayCore
import ClickawayX11
import Glibc
import ProcessSupport

/// A button press or release as a test window saw it, relative to the window.
public struct Click: Equatable, Sendable, CustomStringConvertible {
    public var button: UInt8
    public var x: Int32
    public var y: Int32

    public init(button: UInt8, x: Int32, y: Int32) {
        self.button = button
        self.x = x
        self.y = y
    }

    public var description: String { "button \(button) at (\(x), \(y))" }
}

/// A window created by a `TestClient`; its records live in the client.
public struct TestWindow: Hashable, Sendable {
    public let id: WindowID
}

/// A test program's X client: one connection, any number of top-level windows, and a
/// record of what each window received. Nothing is read behind the test's back: records
/// change only in `drain()` and the `wait` functions.
public final class TestClient {
    public let connection: XConnection
    /// Every event this client received, in order.
    public private(set) var events: [XEvent] = []

    private struct Record {
        var closesOnDelete: Bool
        var presses: [Click] = []
        var releases: [Click] = []
        var keys: [UInt8] = []
        var deleteRequests = 0
        var destroyed = false
    }
    private var records: [WindowID: Record] = [:]

    public init(display: String) throws {
        connection = try XConnection(display: display)
    }

    // MARK: Windows

    /// Creates, names and maps a top-level InputOutput window, and returns once it is
    /// viewable (after the window manager framed and mapped it, if one runs).
    ///
    /// - Parameters:
    ///   - type: `_NET_WM_WINDOW_TYPE` by its short name ("dialog", "popup_menu").
    ///   - closesOnDelete: list WM_DELETE_WINDOW in WM_PROTOCOLS and destroy the window
    ///     when a WM_DELETE_WINDOW message arrives, like a well-behaved client.
    ///   - fixedSize: minimum and maximum size equal to the size (xmonad floats such windows).
    ///   - transientFor: the window this one is a dialog of (WM_TRANSIENT_FOR).
    @discardableResult
    public func createWindow(
        at rect: Rect,
        wmClass: WMClass = WMClass(instance: "recorder", windowClass: "Recorder"),
        title: String = "recorder",
        type: String? = nil,
        closesOnDelete: Bool = false,
        overrideRedirect: Bool = false,
        fixedSize: Bool = true,
        transientFor: WindowID? = nil,
        timeout: Duration = .seconds(5)
    ) throws -> TestWindow {
        let x = connection
        let id = x.generateID()
        let typeAtom = try type.map { try x.internAtom("_NET_WM_WINDOW_TYPE_" + $0.uppercased()) }
        let eventMask: EventMask = [.buttonPress, .buttonRelease, .keyPress, .structureNotify, .focusChange]

        let created = x.withUnsafeConnection { c in
            // Value list in the order of the mask bits: BACK_PIXEL, OVERRIDE_REDIRECT, EVENT_MASK.
            let values: [UInt32] = [0xdddddd, overrideRedirect ? 1 : 0, eventMask.rawValue]
            let mask = XCB_CW_BACK_PIXEL.rawValue | XCB_CW_OVERRIDE_REDIRECT.rawValue | XCB_CW_EVENT_MASK.rawValue
            let cookie = xcb_create_window_checked(
                c, UInt8(XCB_COPY_FROM_PARENT), id, x.root,
                Int16(rect.x), Int16(rect.y), UInt16(rect.width), UInt16(rect.height), 0,
                UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue), UInt32(XCB_COPY_FROM_PARENT), mask, values)
            setString(c, id, UInt32(XCB_ATOM_WM_CLASS.rawValue), UInt32(XCB_ATOM_STRING.rawValue),
                      wmClass.instance + "\0" + wmClass.windowClass + "\0")
            setString(c, id, x.atoms.netWMName, x.atoms.utf8String, title)
            setString(c, id, UInt32(XCB_ATOM_WM_NAME.rawValue), UInt32(XCB_ATOM_STRING.rawValue), title)
            if let typeAtom {
                setWords(c, id, x.atoms.netWMWindowType, UInt32(XCB_ATOM_ATOM.rawValue), [typeAtom])
            }
            if let transientFor {
                setWords(c, id, UInt32(XCB_ATOM_WM_TRANSIENT_FOR.rawValue), UInt32(XCB_ATOM_WINDOW.rawValue), [transientFor])
            }
            if closesOnDelete {
                setWords(c, id, x.atoms.wmProtocols, UInt32(XCB_ATOM_ATOM.rawValue), [x.atoms.wmDeleteWindow])
            }
            // WM_NORMAL_HINTS with USPosition|USSize, so a window manager keeps the position,
            // and (`fixedSize`) PMinSize|PMaxSize both the size, so xmonad floats it there
            // instead of tiling it.
            let size = [UInt32(rect.width), UInt32(rect.height)]
            let hints: [UInt32] = [1 | 2 | (fixedSize ? 16 | 32 : 0), UInt32(bitPattern: rect.x), UInt32(bitPattern: rect.y)]
                + size + size + size + Array(repeating: 0, count: 9)
            setWords(c, id, UInt32(XCB_ATOM_WM_NORMAL_HINTS.rawValue), UInt32(XCB_ATOM_WM_SIZE_HINTS.rawValue), hints)
            xcb_map_window(c, id)
            return CheckedCookie(sequence: cookie.sequence)
        }
        if let error = x.check(created) { throw HarnessError("cannot create a window at \(rect): \(error)") }
        records[id] = Record(closesOnDelete: closesOnDelete)

        try wait("MapNotify for window 0x\(String(id, radix: 16)) at \(rect)", timeout: timeout) { event in
            if case let .mapNotify(m) = event, m.window == id { return true }
            return nil
        }
        // Under a window manager the client is mapped before its frame: wait for the frame too.
        try eventually("window 0x\(String(id, radix: 16)) to become viewable", timeout: timeout) {
            try x.getWindowAttributes(id).mapState == .viewable
        }
        return TestWindow(id: id)
    }

    /// Plays a reparenting window manager's part without one: a top-level "frame" at `rect`
    /// with a WM_CLASS of its own (as i3 and herbstluftwm give theirs), the client inside it,
    /// both mapped, and no WM_STATE yet (`setWMState`). Returns once both are viewable.
    public func createFramed(_ rect: Rect, frameClass: WMClass, clientClass: WMClass) throws -> (frame: WindowID, client: WindowID) {
        let x = connection
        let (frame, client) = (x.generateID(), x.generateID())
        let inside = Rect(x: 2, y: 20, width: rect.width - 4, height: rect.height - 22)
        x.withUnsafeConnection { c in
            for (window, parent, r, wmClass) in [(frame, x.root, rect, frameClass), (client, frame, inside, clientClass)] {
                xcb_create_window(c, UInt8(XCB_COPY_FROM_PARENT), window, parent, Int16(r.x), Int16(r.y),
                                  UInt16(r.width), UInt16(r.height), 0, UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue),
                                  UInt32(XCB_COPY_FROM_PARENT), 0, nil)
                setString(c, window, UInt32(XCB_ATOM_WM_CLASS.rawValue), UInt32(XCB_ATOM_STRING.rawValue),
                          wmClass.instance + "\0" + wmClass.windowClass + "\0")
            }
            xcb_map_window(c, client)
            xcb_map_window(c, frame)
        }
        try x.sync()
        return (frame, client)
    }

    /// Sets WM_STATE (NormalState) on a window, as a window manager does once it manages it.
    public func setWMState(_ window: WindowID) throws {
        let x = connection
        let state: [UInt32] = [1, 0]
        x.withUnsafeConnection { c in
            setWords(c, window, x.atoms.wmState, x.atoms.wmState, state)
        }
        try x.sync()
    }

    /// Changes the window's title (WM_NAME and _NET_WM_NAME) after it is mapped, and waits
    /// until the server has done it; `waiting: false` only writes the requests, as a program
    /// that sets its title and goes on does.
    public func setTitle(_ window: TestWindow, _ title: String, waiting: Bool = true) throws {
        let x = connection
        x.withUnsafeConnection { c in
            setString(c, window.id, x.atoms.netWMName, x.atoms.utf8String, title)
            setString(c, window.id, UInt32(XCB_ATOM_WM_NAME.rawValue), UInt32(XCB_ATOM_STRING.rawValue), title)
        }
        if waiting { try x.sync() } else { x.flush() }
    }

    /// Sets `property` to `bytes` of type STRING (ICCCM's Latin-1), as older Xlib programs
    /// write WM_CLASS and WM_NAME, or deletes it (nil); waits until the server has done it.
    public func setLatin1(_ window: TestWindow, _ property: Atom, _ bytes: [UInt8]?) throws {
        connection.withUnsafeConnection { c in
            if let bytes {
                setBytes(c, window.id, property, UInt32(XCB_ATOM_STRING.rawValue), bytes)
            } else {
                xcb_delete_property(c, window.id, property)
            }
        }
        try connection.sync()
    }

    /// Gives the window the keyboard focus.
    public func focus(_ window: TestWindow) throws {
        connection.withUnsafeConnection { c in
            _ = xcb_set_input_focus(c, UInt8(XCB_INPUT_FOCUS_POINTER_ROOT.rawValue), window.id, UInt32(XCB_CURRENT_TIME))
        }
        try connection.sync()
    }

    /// Moves the window (its frame's position under a window manager aside).
    public func move(_ window: TestWindow, to rect: Rect) throws {
        connection.moveResizeWindow(window.id, to: rect)
        try connection.sync()
    }

    public func destroy(_ window: TestWindow) throws {
        connection.withUnsafeConnection { c in _ = xcb_destroy_window(c, window.id) }
        try connection.sync()
    }

    // MARK: Focus

    /// The window holding the keyboard focus (None is 0, PointerRoot 1).
    public func inputFocus() throws -> WindowID {
        try connection.withUnsafeConnection { c throws -> WindowID in
            guard let reply = xcb_get_input_focus_reply(c, xcb_get_input_focus(c), nil) else {
                throw HarnessError("GetInputFocus failed")
            }
            defer { free(reply) }
            return reply.pointee.focus
        }
    }

    /// `_NET_ACTIVE_WINDOW` on the root, nil when the window manager has not set it.
    public func activeWindow() throws -> WindowID? {
        try connection.property32(connection.root, try connection.internAtom("_NET_ACTIVE_WINDOW"))?.first
    }

    /// Whether `window` has the focus: the input focus is on it or on the frame around it
    /// (some window managers focus their frame), and `_NET_ACTIVE_WINDOW` names it when
    /// `activeWindow` is true.
    public func isFocused(_ window: TestWindow, activeWindow checkActive: Bool) throws -> Bool {
        let focus = try inputFocus()
        var focused = focus == window.id
        if !focused && focus > 1 && focus != connection.root {
            var w = window.id
            while let parent = try? connection.queryTree(w).parent, parent != connection.root, parent != 0 {
                if parent == focus { focused = true }
                w = parent
            }
        }
        return try focused && (!checkActive || activeWindow() == window.id)
    }

    /// Waits until `window` has the focus (see `isFocused`), looking again at every FocusIn
    /// and root property change; fails saying where the focus is instead.
    public func waitForFocus(_ window: TestWindow, activeWindow checkActive: Bool, timeout: Duration = .seconds(5)) throws {
        if let error = connection.check(connection.selectInput(connection.root, .propertyChange)) {
            throw HarnessError("cannot watch the root window's properties: \(error)")
        }
        if try isFocused(window, activeWindow: checkActive) { return }
        do {
            try wait("the focus on window 0x\(String(window.id, radix: 16))", timeout: timeout) { _ in
                (try? isFocused(window, activeWindow: checkActive)) == true ? true : nil
            }
        } catch {
            let active = (try? activeWindow()).flatMap { $0.map { "0x" + String($0, radix: 16) } } ?? "unset"
            let focus = (try? inputFocus()).map { w in
                "0x" + String(w, radix: 16) + ((try? connection.wmClass(w)).flatMap { $0.map { " (\($0.windowClass))" } } ?? "")
            } ?? "unknown"
            throw HarnessError("\(error): the input focus is on \(focus), _NET_ACTIVE_WINDOW is \(active)")
        }
    }

    // MARK: Records

    /// Reads everything the server has sent so far: a round trip first, so every event
    /// generated before this call is in, then the queue.
    public func drain() throws {
        try connection.sync()
        while let event = connection.pollQueuedEvent() { try handle(event) }
    }

    public func presses(_ window: TestWindow) -> [Click] { records[window.id]?.presses ?? [] }
    public func releases(_ window: TestWindow) -> [Click] { records[window.id]?.releases ?? [] }
    /// Keycodes of the key presses the window received.
    public func keys(_ window: TestWindow) -> [UInt8] { records[window.id]?.keys ?? [] }
    /// WM_DELETE_WINDOW messages the window received.
    public func deleteRequests(_ window: TestWindow) -> Int { records[window.id]?.deleteRequests ?? 0 }
    public func isDestroyed(_ window: TestWindow) -> Bool { records[window.id]?.destroyed ?? false }

    /// Records events until `match` returns a value; fails after `timeout` naming `what`.
    @discardableResult
    public func wait<T>(_ what: String, timeout: Duration = .seconds(5), _ match: (XEvent) -> T?) throws -> T {
        try connection.waitForEvent(what, timeout: timeout) { event throws -> T? in
            try handle(event)
            return match(event)
        }
    }

    /// Records events until `window` has had `count` presses: a window manager that grabs
    /// presses on its frames for click-to-focus (openbox) replays them in its own time, which
    /// no sync with the daemon covers. Fails after `timeout` naming `what`.
    public func waitForPresses(_ count: Int, on window: TestWindow, _ what: String, timeout: Duration = .seconds(5)) throws {
        while presses(window).count < count {
            try wait(what, timeout: timeout) { event in
                if case .buttonPress(let b) = event, b.window == window.id { return true }
                return nil
            }
        }
    }

    /// A passive grab on the root window from this client, e.g. to hold a combination the
    /// daemon then cannot grab. Returns the X error if the grab failed.
    public func grabOnRoot(button: UInt8, modifiers: ModifierMask, mode: GrabMode = .async) -> XErrorInfo? {
        connection.check(connection.grabButton(button: button, modifiers: modifiers, window: connection.root, pointerMode: mode))
    }

    /// Holds the X server for this client alone (GrabServer), once it has taken it: the server
    /// answers no other client until `ungrabServer`, as one busy with another client answers
    /// late.
    public func grabServer() throws {
        connection.withUnsafeConnection { c in _ = xcb_grab_server(c) }
        try connection.sync()
    }

    public func ungrabServer() throws {
        connection.withUnsafeConnection { c in _ = xcb_ungrab_server(c) }
        try connection.sync()
    }

    /// RandR: switches every CRTC off, as unplugging the monitors does (the server tells
    /// RandR clients the screen changed). Returns what switches them on again as they were.
    public func switchOffScreens() throws -> () throws -> Void {
        let root = connection.root
        let shown: [CrtcConfig] = try connection.withUnsafeConnection { c throws(HarnessError) in
            let (crtcs, timestamp) = try Self.screenResources(c, root)
            var shown: [CrtcConfig] = []
            for crtc in crtcs {
                guard let info = xcb_randr_get_crtc_info_reply(c, xcb_randr_get_crtc_info(c, crtc, timestamp), nil) else {
                    throw HarnessError("RRGetCrtcInfo failed")
                }
                defer { free(info) }
                guard info.pointee.mode != 0 else { continue }
                shown.append(CrtcConfig(crtc: crtc, x: info.pointee.x, y: info.pointee.y, mode: info.pointee.mode,
                                        rotation: info.pointee.rotation,
                                        outputs: Array(UnsafeBufferPointer(start: xcb_randr_get_crtc_info_outputs(info),
                                                                           count: Int(info.pointee.num_outputs)))))
            }
            for config in shown { try Self.set(config.switchedOff, c, root) }
            return shown
        }
        return { [connection] in
            try connection.withUnsafeConnection { c throws(HarnessError) in
                for config in shown { try Self.set(config, c, root) }
            }
        }
    }

    /// What a CRTC shows, and where.
    private struct CrtcConfig {
        var crtc: UInt32
        var x: Int16
        var y: Int16
        var mode: UInt32
        var rotation: UInt16
        var outputs: [UInt32]

        var switchedOff: CrtcConfig {
            CrtcConfig(crtc: crtc, x: 0, y: 0, mode: 0, rotation: UInt16(XCB_RANDR_ROTATION_ROTATE_0.rawValue), outputs: [])
        }
    }

    private static func screenResources(_ c: OpaquePointer, _ root: WindowID) throws(HarnessError) -> (crtcs: [UInt32], timestamp: UInt32) {
        guard let resources = xcb_randr_get_screen_resources_current_reply(c, xcb_randr_get_screen_resources_current(c, root), nil) else {
            throw HarnessError("RRGetScreenResourcesCurrent failed")
        }
        defer { free(resources) }
        return (Array(UnsafeBufferPointer(start: xcb_randr_get_screen_resources_current_crtcs(resources), count: Int(resources.pointee.num_crtcs))),
                resources.pointee.config_timestamp)
    }

    private static func set(_ config: CrtcConfig, _ c: OpaquePointer, _ root: WindowID) throws(HarnessError) {
        let timestamp = try screenResources(c, root).timestamp
        let reply = xcb_randr_set_crtc_config_reply(
            c, xcb_randr_set_crtc_config(c, config.crtc, UInt32(XCB_CURRENT_TIME), timestamp, config.x, config.y, config.mode,
                                         config.rotation, UInt32(config.outputs.count), config.outputs), nil)
        defer { free(reply) }
        guard let reply, reply.pointee.status == 0 else { throw HarnessError("RRSetCrtcConfig failed (status \(reply?.pointee.status ?? 255))") }
    }

    private func handle(_ event: XEvent) throws {
        events.append(event)
        switch event {
        case let .buttonPress(b) where records[b.window] != nil:
            records[b.window]!.presses.append(Click(button: b.button, x: b.eventX, y: b.eventY))
        case let .buttonRelease(b) where records[b.window] != nil:
            records[b.window]!.releases.append(Click(button: b.button, x: b.eventX, y: b.eventY))
        case let .keyPress(k) where records[k.window] != nil:
            records[k.window]!.keys.append(k.keycode)
        case let .clientMessage(m) where records[m.window] != nil
            && m.type == connection.atoms.wmProtocols && m.data.0 == connection.atoms.wmDeleteWindow:
            records[m.window]!.deleteRequests += 1
            if records[m.window]!.closesOnDelete {
                connection.withUnsafeConnection { c in _ = xcb_destroy_window(c, m.window) }
                connection.flush()
            }
        case let .destroyNotify(d) where records[d.window] != nil:
            records[d.window]!.destroyed = true
        default:
            break
        }
    }
}

private func setString(_ c: OpaquePointer, _ window: WindowID, _ property: Atom, _ type: Atom, _ value: String) {
    setBytes(c, window, property, type, Array(value.utf8))
}

private func setBytes(_ c: OpaquePointer, _ window: WindowID, _ property: Atom, _ type: Atom, _ bytes: [UInt8]) {
    xcb_change_property(c, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, property, type, 8, UInt32(bytes.count), bytes)
}

private func setWords(_ c: OpaquePointer, _ window: WindowID, _ property: Atom, _ type: Atom, _ value: [UInt32]) {
    xcb_change_property(c, UInt8(XCB_PROP_MODE_REPLACE.rawValue), window, property, type, 32, UInt32(value.count), value)
}

/// ICCCM WM_STATE, set by the window manager on the client windows it manages.
public enum WMState: UInt32, Sendable {
    case withdrawn = 0
    case normal = 1
    case iconic = 3
}

extension XConnection {
    /// The window's WM_STATE: whether a window manager manages it (the daemon only asks
    /// whether it is there, in `findClient`).
    public func wmState(_ window: WindowID) throws(XError) -> WMState? {
        try property32(window, atoms.wmState)?.first.flatMap(WMState.init(rawValue:))
    }
}
