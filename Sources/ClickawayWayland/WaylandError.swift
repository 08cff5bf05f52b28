internal import Glibc

/// What went wrong talking to a Wayland compositor, worded for a log line.
public enum WaylandError: Error, Equatable, CustomStringConvertible {
    /// `wl_display_connect` failed: no compositor listens at `display`.
    case cannotConnect(display: String, reason: String)
    /// The connection broke (the compositor went away, or a read or write failed).
    case connectionLost(display: String, reason: String)
    /// The compositor reported a protocol error on an object and closed the connection.
    case protocolError(display: String, interface: String, objectID: UInt32, code: UInt32)
    /// A global clickaway needs is not offered by this compositor.
    case missingGlobal(interface: String, purpose: String)
    /// The compositor has no such output (any more).
    case unknownOutput(String)
    /// No output is known yet, so there is no space to place the pointer in.
    case noOutputs
    /// The compositor sized a surface anchored to every edge of its output as empty.
    case emptySurface(width: Int32, height: Int32)
    /// A system call failed while making a buffer or a similar resource.
    case systemCall(String, errno: Int32)

    public var description: String {
        switch self {
        case let .cannotConnect(display, reason):
            "cannot connect to Wayland display \"\(display)\": \(reason)"
        case let .connectionLost(display, reason):
            "lost the connection to Wayland display \"\(display)\": \(reason)"
        case let .protocolError(display, interface, objectID, code):
            "Wayland display \"\(display)\" reported protocol error \(code) on \(interface)@\(objectID)"
        case let .missingGlobal(interface, purpose):
            "the compositor does not offer \(interface), which clickaway needs \(purpose)"
        case let .unknownOutput(name):
            "the compositor has no output \(name)"
        case .noOutputs:
            "the compositor has announced no output yet"
        case let .emptySurface(width, height):
            "the compositor configured an overlay surface as \(width)x\(height) instead of its output's size"
        case let .systemCall(call, errno):
            "\(call) failed: \(String(cString: strerror(errno)))"
        }
    }
}
