internal import CXCB

/// An X protocol error (BadWindow, BadAccess, ...), copied out of libxcb's `xcb_generic_error_t`.
public struct XErrorInfo: Hashable, Sendable, CustomStringConvertible {
    public var errorCode: UInt8
    public var majorOpcode: UInt8
    public var minorOpcode: UInt16
    /// The bad resource (window, atom, ...) for the errors that name one, else 0.
    public var resourceID: UInt32
    public var sequence: UInt16

    public init(errorCode: UInt8, majorOpcode: UInt8, minorOpcode: UInt16, resourceID: UInt32, sequence: UInt16) {
        self.errorCode = errorCode
        self.majorOpcode = majorOpcode
        self.minorOpcode = minorOpcode
        self.resourceID = resourceID
        self.sequence = sequence
    }

    init(_ error: UnsafePointer<xcb_generic_error_t>) {
        let e = error.pointee
        self.init(errorCode: e.error_code, majorOpcode: e.major_code, minorOpcode: e.minor_code,
                  resourceID: e.resource_id, sequence: e.sequence)
    }

    /// The core protocol's name for the error; extension errors get their number.
    public var name: String {
        switch errorCode {
        case 1: "BadRequest"
        case 2: "BadValue"
        case 3: "BadWindow"
        case 4: "BadPixmap"
        case 5: "BadAtom"
        case 6: "BadCursor"
        case 7: "BadFont"
        case 8: "BadMatch"
        case 9: "BadDrawable"
        case 10: "BadAccess"
        case 11: "BadAlloc"
        case 12: "BadColormap"
        case 13: "BadGContext"
        case 14: "BadIDChoice"
        case 15: "BadName"
        case 16: "BadLength"
        case 17: "BadImplementation"
        default: "extension error \(errorCode)"
        }
    }

    /// The request that failed, for the core requests this layer sends; else its opcode.
    public var requestName: String {
        switch majorOpcode {
        case 1: "CreateWindow"
        case 2: "ChangeWindowAttributes"
        case 3: "GetWindowAttributes"
        case 8: "MapWindow"
        case 10: "UnmapWindow"
        case 12: "ConfigureWindow"
        case 14: "GetGeometry"
        case 15: "QueryTree"
        case 16: "InternAtom"
        case 17: "GetAtomName"
        case 20: "GetProperty"
        case 25: "SendEvent"
        case 26: "GrabPointer"
        case 28: "GrabButton"
        case 29: "UngrabButton"
        case 33: "GrabKey"
        case 35: "AllowEvents"
        case 40: "TranslateCoordinates"
        case 45: "OpenFont"
        case 94: "CreateGlyphCursor"
        case 113: "KillClient"
        default: "request \(majorOpcode).\(minorOpcode)"
        }
    }

    public var description: String {
        "\(name) in \(requestName) (resource 0x\(String(resourceID, radix: 16)), sequence \(sequence))"
    }
}

/// Why talking to the X server failed.
public enum XError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Neither an explicit display nor `$DISPLAY`.
    case noDisplay
    case cannotConnect(display: String, reason: String)
    /// The connection broke after it was made (server gone, protocol error).
    case connectionLost(reason: String)
    /// A request that needed a reply got an X error instead.
    case request(String, XErrorInfo)
    case missingExtension(String)
    case extensionTooOld(String, have: Version, need: Version)

    public var description: String {
        switch self {
        case .noDisplay:
            "no X display: DISPLAY is not set and no display was given"
        case let .cannotConnect(display, reason):
            "cannot connect to X server \"\(display)\": \(reason)"
        case let .connectionLost(reason):
            "lost the connection to the X server: \(reason)"
        case let .request(request, error):
            "\(request) failed: \(error)"
        case let .missingExtension(name):
            "the X server has no \(name) extension"
        case let .extensionTooOld(name, have, need):
            "the X server's \(name) is version \(have), \(need) or later is needed"
        }
    }
}

/// An extension's protocol version.
public struct Version: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var major: UInt32
    public var minor: UInt32

    public init(_ major: UInt32, _ minor: UInt32) {
        self.major = major
        self.minor = minor
    }

    public static func < (a: Version, b: Version) -> Bool {
        (a.major, a.minor) < (b.major, b.minor)
    }

    public var description: String { "\(major).\(minor)" }
}

/// libxcb's `xcb_connection_has_error` codes, in words.
func connectionErrorReason(_ code: Int32) -> String {
    switch code {
    case XCB_CONN_ERROR: "socket, pipe or stream error (is the server running?)"
    case XCB_CONN_CLOSED_EXT_NOTSUPPORTED: "an extension the connection needs is missing"
    case XCB_CONN_CLOSED_MEM_INSUFFICIENT: "out of memory"
    case XCB_CONN_CLOSED_REQ_LEN_EXCEED: "request longer than the server accepts"
    case XCB_CONN_CLOSED_PARSE_ERR: "cannot parse the display name"
    case XCB_CONN_CLOSED_INVALID_SCREEN: "the server has no such screen"
    case XCB_CONN_CLOSED_FDPASSING_FAILED: "file descriptor passing failed"
    default: "connection error \(code)"
    }
}
