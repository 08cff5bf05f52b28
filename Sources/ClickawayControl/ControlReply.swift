public import ClickawayCore
public import ClickawayJSON

/// A reply line: `{"ok":true,...}` with a request's own fields, or a refusal,
/// `{"ok":false,"error":"...",...}`.
public enum ControlReply {
    /// `{"ok":true}` and `fields`.
    public static func ok(_ fields: [(String, JSON)] = []) -> JSON { .object([("ok", .bool(true))] + fields) }

    /// Whether the daemon did what was asked.
    public static func succeeded(_ reply: JSON) -> Bool { reply["ok"]?.boolValue == true }
}

/// `{"ok":false,"error":MESSAGE}`, with a rejected configuration's `diagnostics`.
public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var diagnostics: String?
    /// The daemon's last line on the connection: it closes it next (`"closing":true`), and
    /// the message says why (too many connections, a request too long, another user).
    public var closing: Bool

    public init(_ message: String, diagnostics: String? = nil, closing: Bool = false) {
        self.message = message
        self.diagnostics = diagnostics
        self.closing = closing
    }

    public var json: JSON {
        .object([("ok", .bool(false)), ("error", .string(message))]
            + (diagnostics.map { [("diagnostics", .string($0))] } ?? [])
            + (closing ? [("closing", .bool(true))] : []))
    }

    /// The refusal in a reply, nil when the reply is not one.
    public init?(reply: JSON) {
        guard reply["ok"]?.boolValue != true else { return nil }
        self.init(reply["error"]?.stringValue ?? reply.text, diagnostics: reply["diagnostics"]?.stringValue,
                  closing: reply["closing"]?.boolValue == true)
    }

    public var description: String { message }
}

/// A reply that does not have the fields its request's reply has.
public struct MalformedReply: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ what: String, _ reply: JSON) { description = "the daemon's reply to \(what) is not understood: \(reply.text)" }
}

/// `reload`: `{"ok":true,"popups":N,"files":[...]}`.
public struct ReloadReply: Equatable, Sendable {
    public var popups: Int
    public var files: [String]
    /// How long the daemon waited for the files to stop changing before it read them (a
    /// file being saved as the reload came); 0 when it did not wait.
    public var waitedMs: Int64

    public init(popups: Int, files: [String], waitedMs: Int64 = 0) {
        self.popups = popups
        self.files = files
        self.waitedMs = waitedMs
    }

    public var json: JSON {
        ControlReply.ok([("popups", .int(Int64(popups))), ("files", .array(files.map(JSON.string)))]
            + (waitedMs > 0 ? [("waited_ms", .int(waitedMs))] : []))
    }

    public init(reply: JSON) throws(MalformedReply) {
        guard let popups = reply["popups"]?.intValue, let files = reply["files"]?.arrayValue?.compactMap(\.stringValue) else {
            throw MalformedReply("reload", reply)
        }
        self.init(popups: Int(popups), files: files, waitedMs: reply["waited_ms"]?.intValue ?? 0)
    }
}

/// `open`, `close` and `toggle`: `{"ok":true,"popup":NAME,"open":BOOL}`.
public struct RectPopupReply: Equatable, Sendable {
    public var popup: String
    public var open: Bool

    public init(popup: String, open: Bool) {
        self.popup = popup
        self.open = open
    }

    public var json: JSON { ControlReply.ok([("popup", .string(popup)), ("open", .bool(open))]) }

    public init(reply: JSON) throws(MalformedReply) {
        guard let popup = reply["popup"]?.stringValue, let open = reply["open"]?.boolValue else { throw MalformedReply("open", reply) }
        self.init(popup: popup, open: open)
    }
}

/// `dismiss`: `{"ok":true,"popup":NAME,"dismissed":[NAME,...]}`: the popups dismissed (the
/// named one and those nested in it), none when it was not open.
public struct DismissReply: Equatable, Sendable {
    public var popup: String
    public var dismissed: [String]

    public init(popup: String, dismissed: [String]) {
        self.popup = popup
        self.dismissed = dismissed
    }

    public var json: JSON { ControlReply.ok([("popup", .string(popup)), ("dismissed", .array(dismissed.map(JSON.string)))]) }

    public init(reply: JSON) throws(MalformedReply) {
        guard let popup = reply["popup"]?.stringValue, let list = reply["dismissed"]?.arrayValue else {
            throw MalformedReply("dismiss", reply)
        }
        let names = list.compactMap(\.stringValue)
        guard names.count == list.count else { throw MalformedReply("dismiss", reply) }
        self.init(popup: popup, dismissed: names)
    }
}

/// `pick` (Wayland): the view clicked, as sway's tree has it: `{"ok":true,"window":ID,
/// "rect":[X,Y,W,H],"app_id":A,"title":T,"class":C,"instance":I,"pid":P}` (null where it has none).
public struct PickReply: Equatable, Sendable {
    public var window: String
    public var rect: Rect
    public var appId: String?
    public var title: String?
    public var windowClass: String?
    public var instance: String?
    public var pid: Int32

    public init(window: String, rect: Rect, appId: String?, title: String?, windowClass: String?, instance: String?, pid: Int32) {
        (self.window, self.rect, self.appId, self.title) = (window, rect, appId, title)
        (self.windowClass, self.instance, self.pid) = (windowClass, instance, pid)
    }

    public var json: JSON {
        ControlReply.ok([
            ("window", .string(window)), ("rect", rect.json), ("app_id", appId.map(JSON.string) ?? .null),
            ("title", title.map(JSON.string) ?? .null), ("class", windowClass.map(JSON.string) ?? .null),
            ("instance", instance.map(JSON.string) ?? .null), ("pid", .int(Int64(pid))),
        ])
    }

    public init(reply: JSON) throws(MalformedReply) {
        guard let window = reply["window"]?.stringValue, let rect = Rect(json: reply["rect"]) else { throw MalformedReply("pick", reply) }
        self.init(window: window, rect: rect, appId: reply["app_id"]?.stringValue, title: reply["title"]?.stringValue,
                  windowClass: reply["class"]?.stringValue, instance: reply["instance"]?.stringValue,
                  pid: Int32(clamping: reply["pid"]?.intValue ?? 0))
    }
}

/// `hit`: `{"ok":true,"explanation":{...},"text":"..."}`: the explanation as `hit --json`
/// prints it, and in words.
public struct HitReply: Equatable, Sendable {
    public var explanation: JSON
    public var text: String

    public init(_ explanation: Explanation, _ context: ExplanationContext = ExplanationContext()) {
        self.explanation = explanation.json(context)
        text = explanation.humanText(context)
    }

    public var json: JSON { ControlReply.ok([("explanation", explanation), ("text", .string(text))]) }

    public init(reply: JSON) throws(MalformedReply) {
        guard let explanation = reply["explanation"], let text = reply["text"]?.stringValue else { throw MalformedReply("hit", reply) }
        self.explanation = explanation
        self.text = text
    }
}

extension Rect {
    /// `[x, y, width, height]`, as `status` and `monitor` write rectangles.
    public var json: JSON { .array([x, y, width, height].map { .int(Int64($0)) }) }

    /// A rectangle as `json` writes it.
    public init?(json: JSON?) {
        guard let numbers = json?.arrayValue?.compactMap({ $0.intValue.flatMap(Int32.init(exactly:)) }), numbers.count == 4 else { return nil }
        self.init(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }
}
