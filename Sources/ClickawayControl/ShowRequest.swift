public import ClickawayJSON

/// `show`: the daemon draws its live model (each open popup's regions, slop, anchors,
/// exclusions, the holes, with names) on every output for `seconds`, or stops (`off`).
/// `{"request":"show","popups":[NAME,...],"seconds":S,"all":true}` or
/// `{"request":"show","off":true}`.
public struct ShowRequest: Equatable, Sendable {
    /// The popups to draw; empty: every one.
    public var popups: [String]
    /// How long to draw, 1 to `maxSeconds`.
    public var seconds: Int
    /// Also the configured popups that are closed, where their geometry is known (`rect`).
    public var all: Bool
    /// Stop drawing now.
    public var off: Bool

    public static let defaultSeconds = 10
    public static let maxSeconds = 3600

    public init(popups: [String] = [], seconds: Int = ShowRequest.defaultSeconds, all: Bool = false, off: Bool = false) {
        self.popups = popups
        self.seconds = seconds
        self.all = all
        self.off = off
    }

    public static let stop = ShowRequest(off: true)

    var fields: [(String, JSON)] {
        if off { return [("off", .bool(true))] }
        var fields: [(String, JSON)] = []
        if !popups.isEmpty { fields.append(("popups", .array(popups.map(JSON.string)))) }
        fields.append(("seconds", .int(Int64(seconds))))
        if all { fields.append(("all", .bool(true))) }
        return fields
    }

    init(json message: JSON) throws(ControlRequest.Invalid) {
        guard case .object(let pairs) = message else { throw .init("show needs an object") }
        for (key, _) in pairs where !["request", "popups", "seconds", "all", "off"].contains(key) {
            throw .init("show: unknown key \"\(key)\" (known: popups, seconds, all, off)")
        }
        var popups: [String] = []
        if let list = message["popups"] {
            guard case .array(let items) = list else { throw .init(#"show: "popups" is a list of names"#) }
            for item in items {
                guard let name = item.stringValue else { throw .init(#"show: "popups" is a list of names"#) }
                popups.append(name)
            }
        }
        var seconds = Self.defaultSeconds
        if let value = message["seconds"] {
            guard let n = value.intValue, n >= 1, n <= Int64(Self.maxSeconds) else {
                throw .init("show: \"seconds\" is a whole number from 1 to \(Self.maxSeconds)")
            }
            seconds = Int(n)
        }
        func flag(_ key: String) throws(ControlRequest.Invalid) -> Bool {
            guard let value = message[key] else { return false }
            guard let b = value.boolValue else { throw .init("show: \"\(key)\" is true or false") }
            return b
        }
        self.init(popups: popups, seconds: seconds, all: try flag("all"), off: try flag("off"))
    }
}

/// The reply to `show`: `{"ok":true,"popups":[NAME,...],"seconds":S,"outputs":N}`, what is
/// drawn and where; for `off`, whether something was being drawn.
public struct ShowReply: Equatable, Sendable {
    public var popups: [String]
    public var seconds: Int
    public var outputs: Int
    public var stopped: Bool

    public init(popups: [String], seconds: Int, outputs: Int, stopped: Bool = false) {
        self.popups = popups
        self.seconds = seconds
        self.outputs = outputs
        self.stopped = stopped
    }

    public var json: JSON {
        ControlReply.ok([("popups", .array(popups.map(JSON.string))), ("seconds", .int(Int64(seconds))),
                         ("outputs", .int(Int64(outputs))), ("stopped", .bool(stopped))])
    }

    public init(reply: JSON) throws(MalformedReply) {
        guard case .array(let items)? = reply["popups"], let seconds = reply["seconds"]?.intValue,
              let outputs = reply["outputs"]?.intValue, let stopped = reply["stopped"]?.boolValue else {
            throw MalformedReply("show", reply)
        }
        self.init(popups: items.compactMap(\.stringValue), seconds: Int(seconds), outputs: Int(outputs), stopped: stopped)
    }
}
