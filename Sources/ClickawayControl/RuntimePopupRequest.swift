public import ClickawayCore
public import ClickawayJSON

/// A popup a script registers at run time (`add` and `wait`, `clickawayctl open --rect/--window
/// /--pid` and `clickawayctl wait`): where it is, and the popup keys of the configuration, each
/// optional (unset: from `like`'s popup, else from `[defaults]`). Every field is checked here,
/// against the configuration's limits, before the daemon sees it.
public struct RuntimePopupRequest: Equatable, Sendable {
    /// Where the popup is.
    public enum Form: Equatable, Sendable {
        /// A screen rectangle, relative to an output when one is named.
        case rect(Rect, output: String?)
        /// A window on screen: an X window id (the client or its frame), sway's container id.
        case window(UInt32)
        /// The first top-level window of a process, waited for at most `timeoutMs`.
        case pid(Int32, timeoutMs: Int64)
    }

    public var form: Form
    /// Unset: the daemon names it (`runtime-N`).
    public var name: String?
    /// A popup whose keys (regions, anchors, options) this one starts from.
    public var like: String?
    public var parent: String?
    /// Rectangles where a click counts as inside, added to `like`'s.
    public var anchors: [Rect]
    /// The keys of `PopupFields.options` that `clickawayctl open` may set, the ones it sets.
    public var options: PopupOptions

    public init(form: Form, name: String? = nil, like: String? = nil, parent: String? = nil, anchors: [Rect] = [],
                options: PopupOptions = PopupOptions()) {
        self.form = form
        self.name = name
        self.like = like
        self.parent = parent
        self.anchors = anchors
        self.options = options
    }

    /// The rows of the keys a request may set.
    public static let optionRows = PopupFields.options.filter { $0.openOption != nil }

    // MARK: Limits

    /// As in the configuration: coordinates within ±2^20, sizes up to 2^20.
    public static let coordinateLimit: Int64 = 1 << 20
    /// How long `pid` waits for the window unless told, and at most.
    public static let defaultTimeoutMs: Int64 = 5000
    public static let maxTimeoutMs: Int64 = 60_000
    public static let maxAnchors = 32
    public static let maxNameLength = 64
    public static let maxOutputLength = 256
    public static let maxArguments = 256
    public static let maxArgumentBytes = 4096

    /// The keys a request may have besides "request", in the order `json` writes them.
    public static let keys = ["popup", "rect", "output", "window", "pid", "timeout_ms", "like", "parent", "anchors"]
        + optionRows.map(\.key)

    // MARK: Encoding

    /// The fields after `"request"`.
    public var fields: [(String, JSON)] {
        var fields: [(String, JSON)] = []
        if let name { fields.append(("popup", .string(name))) }
        switch form {
        case .rect(let rect, let output):
            fields.append(("rect", rect.json))
            if let output { fields.append(("output", .string(output))) }
        case .window(let window): fields.append(("window", .int(Int64(window))))
        case .pid(let pid, let timeoutMs): fields += [("pid", .int(Int64(pid))), ("timeout_ms", .int(timeoutMs))]
        }
        if let like { fields.append(("like", .string(like))) }
        if let parent { fields.append(("parent", .string(parent))) }
        if !anchors.isEmpty { fields.append(("anchors", .array(anchors.map(\.json)))) }
        for row in Self.optionRows {
            if let value = options[row.key] { fields.append((row.key, value.json)) }
        }
        return fields
    }

    // MARK: Decoding

    /// Reads and checks every field of `message`; the first problem found is the error.
    public init(json message: JSON, request: String) throws(ControlRequest.Invalid) {
        guard case .object(let pairs) = message else { throw .init("a request is an object") }
        for (key, _) in pairs where key != "request" && !Self.keys.contains(key) {
            throw .init("\(request): unknown key \"\(key)\"" + suggestion(key, Self.keys) + " (known: \(Self.keys.joined(separator: ", ")))")
        }
        let reader = FieldReader(message: message, request: request)
        let forms = ["rect", "window", "pid"].filter { message[$0] != nil }
        guard forms.count == 1 else {
            throw .init("\(request) needs exactly one of \"rect\", \"window\" and \"pid\"" + (forms.isEmpty ? "" : ", not \(forms.joined(separator: " and "))"))
        }
        switch forms[0] {
        case "rect":
            form = .rect(try reader.rect("rect"), output: try reader.text("output", limit: Self.maxOutputLength))
        case "window":
            let window = try reader.integer("window", in: 1...Int64(UInt32.max))
            form = .window(UInt32(window))
        default:
            let pid = try reader.integer("pid", in: 1...Int64(Int32.max))
            let timeout = try reader.optionalInteger("timeout_ms", in: 0...Self.maxTimeoutMs) ?? Self.defaultTimeoutMs
            form = .pid(Int32(pid), timeoutMs: timeout)
        }
        for (key, owner) in [("output", "rect"), ("timeout_ms", "pid")] where message[key] != nil && forms[0] != owner {
            throw .init("\(request): \"\(key)\" goes with \"\(owner)\" only")
        }
        name = try reader.name("popup")
        like = try reader.name("like")
        parent = try reader.name("parent")
        if let parent, parent == name { throw .init("\(request): a popup cannot be its own parent") }
        anchors = try reader.rects("anchors", limit: Self.maxAnchors)
        options = PopupOptions()
        for row in Self.optionRows where message[row.key] != nil {
            options[row.key] = try reader.literal(row.key, row.shape)
        }
    }

    /// Reads the fields of one request, each error naming the request and the field.
    private struct FieldReader {
        let message: JSON
        let request: String

        func fail(_ key: String, _ expected: String) -> ControlRequest.Invalid {
            .init("\(request): \"\(key)\" must be \(expected), not \(message[key]?.text ?? "missing")")
        }

        func integer(_ key: String, in range: ClosedRange<Int64>) throws(ControlRequest.Invalid) -> Int64 {
            guard let value = message[key]?.intValue, range.contains(value) else {
                throw fail(key, "an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }

        func optionalInteger(_ key: String, in range: ClosedRange<Int64>) throws(ControlRequest.Invalid) -> Int64? {
            message[key] == nil ? nil : try integer(key, in: range)
        }

        func text(_ key: String, limit: Int) throws(ControlRequest.Invalid) -> String? {
            guard let value = message[key] else { return nil }
            guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= limit, !text.utf8.contains(0) else {
                throw fail(key, "a string of 1 to \(limit) bytes without NUL")
            }
            return text
        }

        func name(_ key: String) throws(ControlRequest.Invalid) -> String? {
            guard let value = message[key] else { return nil }
            guard let text = value.stringValue, text.utf8.count <= RuntimePopupRequest.maxNameLength, isValidPopupName(text) else {
                throw fail(key, "a popup name of at most \(RuntimePopupRequest.maxNameLength) letters, digits, \"_\" and \"-\"")
            }
            return text
        }

        func rect(_ key: String) throws(ControlRequest.Invalid) -> Rect {
            guard let rect = Self.rect(message[key]) else { throw fail(key, Self.rectShape) }
            return rect
        }

        func rects(_ key: String, limit: Int) throws(ControlRequest.Invalid) -> [Rect] {
            guard let value = message[key] else { return [] }
            guard let items = value.arrayValue, items.count <= limit else { throw fail(key, "an array of at most \(limit) rectangles") }
            var rects: [Rect] = []
            for item in items {
                guard let rect = Self.rect(item) else { throw fail(key, "an array of rectangles, each \(Self.rectShape)") }
                rects.append(rect)
            }
            return rects
        }

        static let rectShape = "[x, y, width, height] with x and y within ±\(RuntimePopupRequest.coordinateLimit) "
            + "and width and height from 0 to \(RuntimePopupRequest.coordinateLimit)"

        static func rect(_ json: JSON?) -> Rect? {
            guard let items = json?.arrayValue, items.count == 4 else { return nil }
            let numbers = items.compactMap(\.intValue)
            let limit = RuntimePopupRequest.coordinateLimit
            guard numbers.count == 4, numbers[0...1].allSatisfy({ abs($0) <= limit }), numbers[2...3].allSatisfy({ (0...limit).contains($0) })
            else { return nil }
            return Rect(x: Int32(numbers[0]), y: Int32(numbers[1]), width: Int32(numbers[2]), height: Int32(numbers[3]))
        }

        /// A popup key's value, by the shape its row gives.
        func literal(_ key: String, _ shape: PopupValueShape) throws(ControlRequest.Invalid) -> PopupLiteral {
            switch shape {
            case .boolean: return .boolean(try flag(key))
            case .choice(let names): return .string(try choice(key, among: names))
            case .integer(let range): return .integer(try integer(key, in: range))
            case .buttons: return try buttons(key)
            case .action(let names): return try action(key, names)
            }
        }

        func choice(_ key: String, among names: [String]) throws(ControlRequest.Invalid) -> String {
            guard let name = message[key]?.stringValue, names.contains(name) else {
                throw fail(key, "one of " + names.map { "\"\($0)\"" }.joined(separator: ", "))
            }
            return name
        }

        func buttons(_ key: String) throws(ControlRequest.Invalid) -> PopupLiteral {
            guard let items = message[key]?.arrayValue, !items.isEmpty, items.count <= 31 else { throw fail(key, "an array of buttons 1 to 31") }
            var buttons: [PopupLiteral] = []
            for item in items {
                guard let b = item.intValue, (1...31).contains(b) else { throw fail(key, "an array of buttons 1 to 31") }
                if !buttons.contains(.integer(b)) { buttons.append(.integer(b)) }
            }
            return .array(buttons)
        }

        func flag(_ key: String) throws(ControlRequest.Invalid) -> Bool {
            guard let flag = message[key]?.boolValue else { throw fail(key, "true or false") }
            return flag
        }

        /// One of `names` or `{"command":[...]}`.
        func action(_ key: String, _ names: [String]) throws(ControlRequest.Invalid) -> PopupLiteral {
            let value = message[key]
            let choices = names.map { "\"\($0)\"" }.joined(separator: ", ") + #" or {"command":["program","argument",...]}"#
            if let name = value?.stringValue {
                guard names.contains(name) else { throw fail(key, choices) }
                return .string(name)
            }
            let limit = RuntimePopupRequest.maxArguments, bytes = RuntimePopupRequest.maxArgumentBytes
            guard case .object(let pairs)? = value, pairs.count == 1, let items = value?["command"]?.arrayValue,
                  (1...limit).contains(items.count) else {
                throw fail(key, choices + " with 1 to \(limit) strings")
            }
            var argv: [PopupLiteral] = []
            for item in items {
                guard let argument = item.stringValue, argument.utf8.count <= bytes, !argument.utf8.contains(0) else {
                    throw fail(key, "a command of strings of at most \(bytes) bytes without NUL")
                }
                argv.append(.string(argument))
            }
            guard argv[0] != .string("") else { throw fail(key, "a command whose program (the first string) is not empty") }
            return .table(["command": .array(argv)])
        }
    }
}

extension PopupLiteral {
    /// As the control protocol writes it.
    public var json: JSON {
        switch self {
        case .boolean(let b): .bool(b)
        case .integer(let n): .int(n)
        case .string(let s): .string(s)
        case .array(let items): .array(items.map(\.json))
        case .table(let pairs): .object(pairs.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
        }
    }
}

/// The reply to `add`, and the first line of `wait`'s: `{"ok":true,"popup":NAME,"window":W}`,
/// with the window as `status` writes it (null for a `rect` popup).
public struct RuntimePopupReply: Equatable, Sendable {
    public var popup: String
    public var window: String?

    public init(popup: String, window: String?) {
        self.popup = popup
        self.window = window
    }

    public var json: JSON { ControlReply.ok([("popup", .string(popup)), ("window", window.map(JSON.string) ?? .null)]) }

    public init(reply: JSON) throws(MalformedReply) {
        guard let popup = reply["popup"]?.stringValue else { throw MalformedReply("add", reply) }
        self.init(popup: popup, window: reply["window"]?.stringValue)
    }
}

/// How a popup registered with `wait` went away: the line that ends `wait`'s connection.
public enum WaitOutcome: Equatable, Sendable {
    /// A click or the Escape key dismissed it (as the `dismissed` monitor event says).
    case dismissed(popup: String, reason: String, button: UInt8, x: Int32, y: Int32, click: String)
    /// It went away otherwise.
    case gone(popup: String, reason: GoneReason)

    /// Why a runtime popup went away without being dismissed.
    public enum GoneReason: String, CaseIterable, Sendable {
        /// `clickawayctl close` (or `toggle`) of it.
        case closed
        /// Its window was closed, unmapped or destroyed by someone else.
        case windowGone = "window-gone"
        /// Its parent popup went away.
        case parentGone = "parent-gone"
        /// A reload brought a configured popup of its name, or took its parent.
        case reload
    }

    public var popup: String {
        switch self {
        case .dismissed(let popup, _, _, _, _, _), .gone(let popup, _): popup
        }
    }

    /// `{"event":"dismissed","popup":P,"reason":R,"button":B,"x":X,"y":Y,"click":C}` or
    /// `{"event":"gone","popup":P,"reason":R}`.
    public var json: JSON {
        switch self {
        case .dismissed(let popup, let reason, let button, let x, let y, let click):
            .object([("event", .string("dismissed")), ("popup", .string(popup)), ("reason", .string(reason)),
                     ("button", .int(Int64(button))), ("x", .int(Int64(x))), ("y", .int(Int64(y))), ("click", .string(click))])
        case .gone(let popup, let reason):
            .object([("event", .string("gone")), ("popup", .string(popup)), ("reason", .string(reason.rawValue))])
        }
    }

    public init?(json: JSON) {
        guard let popup = json["popup"]?.stringValue, let reason = json["reason"]?.stringValue else { return nil }
        switch json["event"]?.stringValue {
        case "dismissed":
            guard let button = json["button"]?.intValue.flatMap(UInt8.init(exactly:)), let x = json["x"]?.intValue.flatMap(Int32.init(exactly:)),
                  let y = json["y"]?.intValue.flatMap(Int32.init(exactly:)), let click = json["click"]?.stringValue else { return nil }
            self = .dismissed(popup: popup, reason: reason, button: button, x: x, y: y, click: click)
        case "gone":
            guard let reason = GoneReason(rawValue: reason) else { return nil }
            self = .gone(popup: popup, reason: reason)
        default:
            return nil
        }
    }
}
