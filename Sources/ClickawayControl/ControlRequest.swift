public import ClickawayJSON

/// One request on the control socket: a line `{"request":NAME,...}`. The daemon decodes
/// it, clickawayctl and the tests encode it; docs/control-protocol.md and bench/clickbench.c are tested
/// against `Name` and `documentedForm`.
public enum ControlRequest: Equatable, Sendable {
    /// Answered once the daemon has handled everything the display sent before it.
    case sync
    case status
    /// Answered when the new configuration has loaded or been rejected.
    case reload
    case open(popup: String)
    case close(popup: String)
    case toggle(popup: String)
    /// Dismisses the popup's open instances (and those nested in them) as a click outside
    /// would: their dismiss actions run. Any popup, `rect`, window or runtime; answered with
    /// what was dismissed, nothing when it was not open.
    case dismiss(popup: String)
    /// What a press of `button` at (x, y) would do now.
    case hit(x: Int32, y: Int32, button: UInt8)
    /// The reply, then every `MonitorEvent` until the connection closes.
    case monitor
    /// Registers a runtime popup; answered with its name (for `pid`, once the window is there).
    case add(RuntimePopupRequest)
    /// As `add`, then one `WaitOutcome` line when the popup goes away; closing the connection
    /// first removes the popup.
    case wait(RuntimePopupRequest)
    /// Wayland (sway): the daemon's overlay takes the next click, and the view under it is
    /// the answer (`PickReply`); `timeoutMs` without a click, or another button, picks nothing.
    case pick(timeoutMs: Int)
    /// Draws the live model on the screen for a while (`ShowRequest`), or stops drawing.
    case show(ShowRequest)

    public enum Name: String, CaseIterable, Sendable {
        case sync, status, reload, open, close, toggle, dismiss, hit, monitor, add, wait, pick, show
    }

    public var name: Name {
        switch self {
        case .sync: .sync
        case .status: .status
        case .reload: .reload
        case .open: .open
        case .close: .close
        case .toggle: .toggle
        case .dismiss: .dismiss
        case .hit: .hit
        case .monitor: .monitor
        case .add: .add
        case .wait: .wait
        case .pick: .pick
        case .show: .show
        }
    }

    /// How docs/control-protocol.md shows each request.
    public static func documentedForm(_ name: Name) -> String {
        switch name {
        case .open, .close, .toggle, .dismiss: #"{"request":"\#(name.rawValue)","popup":"NAME"}"#
        case .hit: #"{"request":"hit","x":X,"y":Y,"button":B}"#
        case .add, .wait: #"{"request":"\#(name.rawValue)","rect":[X,Y,W,H]}"#
        case .show: #"{"request":"show","popups":[NAME,...],"seconds":S}"#
        default: #"{"request":"\#(name.rawValue)"}"#
        }
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [("request", .string(name.rawValue))]
        switch self {
        case .open(let popup), .close(let popup), .toggle(let popup), .dismiss(let popup): fields.append(("popup", .string(popup)))
        case .hit(let x, let y, let button):
            fields += [("x", .int(Int64(x))), ("y", .int(Int64(y))), ("button", .int(Int64(button)))]
        case .add(let popup), .wait(let popup): fields += popup.fields
        case .show(let show): fields += show.fields
        case .pick(let timeoutMs): fields.append(("timeout_ms", .int(Int64(timeoutMs))))
        case .sync, .status, .reload, .monitor: break
        }
        return .object(fields)
    }

    /// Why a line is not a request, in the words of the error reply.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// Decodes one request line.
    public init(line: String) throws(Invalid) {
        let message: JSON
        do { message = try JSON.parse(line) } catch { throw Invalid("malformed request: \(error)") }
        try self.init(json: message)
    }

    public init(json message: JSON) throws(Invalid) {
        guard let requested = message["request"]?.stringValue else {
            throw Invalid(#"a request is an object with a "request" key, e.g. {"request":"status"}"#)
        }
        guard let name = Name(rawValue: requested) else {
            throw Invalid("unknown request \"\(requested)\" (known: \(Name.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        switch name {
        case .sync: self = .sync
        case .status: self = .status
        case .reload: self = .reload
        case .monitor: self = .monitor
        case .open, .close, .toggle, .dismiss:
            guard let popup = message["popup"]?.stringValue else {
                throw Invalid(#"this request needs the popup's name: {"request":"\#(name.rawValue)","popup":"NAME"}"#)
            }
            self = switch name {
            case .open: .open(popup: popup)
            case .close: .close(popup: popup)
            case .dismiss: .dismiss(popup: popup)
            default: .toggle(popup: popup)
            }
        case .hit:
            guard let x = message["x"]?.intValue.flatMap(Int32.init(exactly:)),
                  let y = message["y"]?.intValue.flatMap(Int32.init(exactly:)) else {
                throw Invalid(#"hit needs integer coordinates: {"request":"hit","x":100,"y":200}"#)
            }
            let button = message["button"]?.intValue ?? 1
            guard let b = UInt8(exactly: button), b >= 1 else { throw Invalid("button must be 1 to 255, not \(button)") }
            self = .hit(x: x, y: y, button: b)
        case .add: self = .add(try RuntimePopupRequest(json: message, request: "add"))
        case .wait: self = .wait(try RuntimePopupRequest(json: message, request: "wait"))
        case .show: self = .show(try ShowRequest(json: message))
        case .pick:
            let timeout = message["timeout_ms"]?.intValue ?? 30_000
            guard (1...3_600_000).contains(timeout) else { throw Invalid("pick: \"timeout_ms\" is from 1 to 3600000, not \(timeout)") }
            self = .pick(timeoutMs: Int(timeout))
        }
    }
}
