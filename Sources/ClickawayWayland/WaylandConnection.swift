internal import CWaylandClient
internal import ClickawaySystem
internal import Glibc
public import SystemPackage

/// One connection to a Wayland compositor: the `wl_display`, and the steps of libwayland's
/// read protocol for a poll(2) loop that also watches other descriptors.
///
/// In a loop: `dispatchPending()` until `prepareRead()` is true, `flush()`, poll
/// `fileDescriptor` for input, then `readEvents()` if it is readable or `cancelRead()` if
/// not, then `dispatchPending()` again. Listeners run only inside the dispatch calls.
public final class WaylandConnection {
    /// What was connected to: a name in `$XDG_RUNTIME_DIR`, or an absolute socket path.
    public let display: String
    package let pointer: OpaquePointer

    /// Connects to `display` (a socket name in `$XDG_RUNTIME_DIR` or an absolute path), or
    /// to `$WAYLAND_DISPLAY` when nil.
    public init(display: String? = nil) throws {
        let target = display ?? getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "wayland-0"
        guard let pointer = wl_display_connect(target) else {
            throw WaylandError.cannotConnect(display: target, reason: String(cString: strerror(errno)))
        }
        self.display = target
        self.pointer = pointer
    }

    deinit { wl_display_disconnect(pointer) }

    /// The socket, for poll(2). Owned by the connection: do not close it.
    public var fileDescriptor: FileDescriptor { FileDescriptor(rawValue: wl_display_get_fd(pointer)) }

    /// Sends buffered requests. A full socket buffer is not an error: the rest goes on the
    /// next flush.
    public func flush() throws {
        if wl_display_flush(pointer) < 0, errno != EAGAIN { throw failure() }
    }

    /// Announces a read; false when events are already queued and must be dispatched first.
    public func prepareRead() -> Bool { wl_display_prepare_read(pointer) == 0 }

    /// Reads what the socket holds into the queue, after a successful `prepareRead()`.
    public func readEvents() throws {
        if wl_display_read_events(pointer) < 0 { throw failure() }
    }

    /// Gives up a read announced with `prepareRead()`.
    public func cancelRead() { wl_display_cancel_read(pointer) }

    /// Runs the listeners of every queued event; returns how many ran.
    @discardableResult
    public func dispatchPending() throws -> Int {
        let count = wl_display_dispatch_pending(pointer)
        if count < 0 { throw failure() }
        return Int(count)
    }

    /// Sends everything and waits until the compositor has handled it, dispatching every
    /// event it sent before its answer.
    public func roundtrip() throws {
        if wl_display_roundtrip(pointer) < 0 { throw failure() }
    }

    /// A wl_display.sync sent now (flushed before the next sleep), not waited for.
    public func syncPoint() -> SyncPoint { SyncPoint(connection: self) }

    /// One turn of the read protocol: dispatches what is queued, then waits at most
    /// `milliseconds` for the socket, reads and dispatches. Returns whether anything ran.
    @discardableResult
    public func dispatch(waitingAtMost milliseconds: Int32) throws -> Bool {
        var ran = try dispatchPending()
        while !prepareRead() { ran += try dispatchPending() }
        do { try flush() } catch {
            cancelRead()
            throw error
        }
        let readiness: Readiness
        do {
            readiness = try fileDescriptor.wait(until: .inMilliseconds(ran > 0 ? 0 : Int64(milliseconds)))
        } catch {
            cancelRead()
            throw WaylandError.systemCall("poll on the Wayland socket", errno: error.rawValue)
        }
        if readiness.isEmpty {
            cancelRead()
        } else {
            try readEvents()
        }
        ran += try dispatchPending()
        return ran > 0
    }

    /// The error that broke the connection, as precise as libwayland tells it.
    func failure() -> WaylandError {
        let code = wl_display_get_error(pointer)
        if code == EPROTO {
            var interface: UnsafePointer<wl_interface>?
            var id: UInt32 = 0
            let protocolCode = wl_display_get_protocol_error(pointer, &interface, &id)
            let name = interface.map { String(cString: $0.pointee.name) } ?? "an unknown object"
            return .protocolError(display: display, interface: name, objectID: id, code: protocolCode)
        }
        return .connectionLost(display: display, reason: String(cString: strerror(code != 0 ? code : errno)))
    }
}

/// A wl_display.sync: `isDone` once the compositor has handled every request sent before
/// it; every event it sent before is dispatched by then. Learnt by dispatching, never waited for.
/// Holds its connection: its callback is destroyed before the display is disconnected, even
/// when it outlives the rest (a sync pending when the compositor went, its owner torn down
/// after the connection's other holders: a use after free that crashed the daemon's exit).
public final class SyncPoint {
    public private(set) var isDone = false
    private let connection: WaylandConnection
    private var callback: OpaquePointer?
    private var listener: Listener<wl_callback_listener>?

    init(connection: WaylandConnection) {
        self.connection = connection
        callback = wl_display_sync(connection.pointer)
        var functions = wl_callback_listener()
        functions.done = { data, _, _ in
            let me = owner(data, as: SyncPoint.self)
            me.isDone = true
            me.destroyCallback()
        }
        let listener = Listener(functions)
        self.listener = listener
        if let callback { wl_callback_add_listener(callback, listener.pointer, Unmanaged.passUnretained(self).toOpaque()) }
    }

    private func destroyCallback() {
        if let callback { wl_callback_destroy(callback) }
        callback = nil
    }

    deinit { destroyCallback() }
}

/// A C struct of listener functions at a fixed address, for as long as its owner lives:
/// libwayland keeps the pointer given to `*_add_listener` and calls through it on dispatch.
package final class Listener<Functions> {
    package let pointer: UnsafeMutablePointer<Functions>

    package init(_ functions: Functions) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: functions)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// The object behind a listener's `data` argument.
package func owner<T: AnyObject>(_ data: UnsafeMutableRawPointer?, as type: T.Type) -> T {
    Unmanaged<T>.fromOpaque(data!).takeUnretainedValue()
}

/// The protocol id of an object, a value that names a surface without handing out its pointer.
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    package init(_ proxy: OpaquePointer) { rawValue = wl_proxy_get_id(proxy) }
    public var description: String { "#\(rawValue)" }
}
