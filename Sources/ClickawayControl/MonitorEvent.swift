public import ClickawayCore
public import ClickawayJSON

/// One line of `monitor`: `{"event":NAME,...}`. The daemon encodes them; `clickawayctl
/// monitor --help` and docs/control-protocol.md's table come from (or are tested against) `documentation`.
public enum MonitorEvent: Equatable, Sendable {
    /// A popup opened: a window that matches appeared, or a `rect` popup was opened. Sent
    /// once clicks outside it are intercepted.
    case opened(OpenPopup)
    case closed(OpenPopup)
    /// The windows that belong to an open popup (its dialogs, menus, dropdowns) changed.
    case family(OpenPopup)
    case dismissed(Dismissal)
    case reloaded(cause: String, popups: Int, files: [String])
    case rejected(cause: String, diagnostics: String)
    /// Another client holds a grab the daemon asked for: sent once the X server has answered
    /// the grabs, after the `opened` that asked for them.
    case grabRefused(GrabRefusal)
    /// `auto` switched to the shield.
    case backend(backend: String, reason: String)

    public enum Name: String, CaseIterable, Sendable {
        case opened, closed, family, dismissed, reloaded, rejected
        case grabRefused = "grab_refused"
        case backend
    }

    /// What dismissed popups: a click (its button and where), or the Escape key (button,
    /// x and y 0, reason "escape").
    public struct Dismissal: Equatable, Sendable {
        public var popups: [String]
        /// "outside", "inside", "anchor" (the decision's reason), "escape" or "request"
        /// (`clickawayctl dismiss`: button, x and y 0, click "none").
        public var reason: String
        public var button: UInt8
        public var x: Int32
        public var y: Int32
        /// What happened to the click: "swallow", "replay" or "pass" (for Escape: the key).
        public var click: String

        public init(popups: [String], reason: String, button: UInt8, x: Int32, y: Int32, click: String) {
            self.popups = popups
            self.reason = reason
            self.button = button
            self.x = x
            self.y = y
            self.click = click
        }
    }

    /// A grab another client already holds: a button with lock modifiers, or the Escape key.
    public enum GrabRefusal: Equatable, Sendable {
        case button(UInt8, modifiers: String, error: String, message: String)
        case key(String, message: String)

        public var message: String {
            switch self {
            case .button(_, _, _, let message), .key(_, let message): message
            }
        }
    }

    public var name: Name {
        switch self {
        case .opened: .opened
        case .closed: .closed
        case .family: .family
        case .dismissed: .dismissed
        case .reloaded: .reloaded
        case .rejected: .rejected
        case .grabRefused: .grabRefused
        case .backend: .backend
        }
    }

    public var json: JSON {
        let fields: [(String, JSON)]
        switch self {
        case .opened(let popup), .closed(let popup), .family(let popup): fields = popup.fields
        case .dismissed(let d):
            fields = [("popups", .array(d.popups.map(JSON.string))), ("reason", .string(d.reason)),
                      ("button", .int(Int64(d.button))), ("x", .int(Int64(d.x))), ("y", .int(Int64(d.y))),
                      ("click", .string(d.click))]
        case .reloaded(let cause, let popups, let files):
            fields = [("cause", .string(cause)), ("popups", .int(Int64(popups))), ("files", .array(files.map(JSON.string)))]
        case .rejected(let cause, let diagnostics): fields = [("cause", .string(cause)), ("diagnostics", .string(diagnostics))]
        case .grabRefused(.button(let button, let modifiers, let error, let message)):
            fields = [("button", .int(Int64(button))), ("modifiers", .string(modifiers)), ("error", .string(error)),
                      ("message", .string(message))]
        case .grabRefused(.key(let key, let message)): fields = [("key", .string(key)), ("message", .string(message))]
        case .backend(let backend, let reason): fields = [("backend", .string(backend)), ("reason", .string(reason))]
        }
        return .object([("event", .string(name.rawValue))] + fields)
    }

    /// The events and their fields, as `monitor --help` and docs/control-protocol.md list them.
    public static let documentation: [(events: [Name], fields: [String], note: String?)] = [
        ([.opened, .closed], ["popup", "window", "rect", "runtime", "members", "ties"], nil),
        ([.family], ["popup", "window", "rect", "runtime", "members", "ties"], "the windows that belong to an open popup changed"),
        ([.dismissed], ["popups", "reason", "button", "x", "y", "click"], nil),
        ([.reloaded], ["cause", "popups", "files"], nil),
        ([.rejected], ["cause", "diagnostics"], nil),
        ([.grabRefused], ["button", "modifiers", "error", "message"], "for the Escape key: key, message"),
        ([.backend], ["backend", "reason"], "auto switched to the shield"),
    ]

    /// One sentence for `monitor --help`.
    public static var helpText: String {
        let parts = documentation.map { entry in
            entry.events.map(\.rawValue).joined(separator: " and ") + " ("
                + entry.fields.joined(separator: ", ") + (entry.note.map { "; \($0)" } ?? "") + ")"
        }
        return "Events: " + parts.joined(separator: ", ") + "."
    }
}

/// An open popup as `status` lists it and `opened` and `closed` announce it.
public struct OpenPopup: Equatable, Sendable {
    public var popup: String
    /// The window as users see it (hex on X11, sway's container id), nil for a `rect` popup.
    public var window: String?
    public var rect: Rect
    /// Registered at run time (`clickawayctl open --rect/--window/--pid`, `wait`), not configured.
    public var runtime: Bool
    /// The windows that belong to it (its dialogs, menus, dropdowns), written as `window` is.
    public var members: [String]
    /// What tied each member to it (`FamilyTie`'s names), in the order of `members`.
    public var ties: [String]
    /// The members beyond those listed: `status` lists a family's first `statusMemberLimit`
    /// (one program's thousands of menus are a count, not a page of window ids).
    public var membersLeftOut: Int

    /// How many of a family's windows `status` lists.
    public static let statusMemberLimit = 32

    public init(popup: String, window: String?, rect: Rect, runtime: Bool = false, members: [String] = [], ties: [String]? = nil,
                membersLeftOut: Int = 0) {
        self.popup = popup
        self.window = window
        self.rect = rect
        self.runtime = runtime
        self.members = members
        self.ties = ties ?? members.map { _ in FamilyTie.transient.rawValue }
        self.membersLeftOut = membersLeftOut
    }

    /// `ties` is an object: each member's window and what tied it; `members_left_out` only
    /// when some are.
    public var fields: [(String, JSON)] {
        [("popup", .string(popup)), ("window", window.map(JSON.string) ?? .null), ("rect", rect.json), ("runtime", .bool(runtime)),
         ("members", .array(members.map(JSON.string))), ("ties", .object(zip(members, ties).map { ($0, .string($1)) }))]
            + (membersLeftOut > 0 ? [("members_left_out", .int(Int64(membersLeftOut)))] : [])
    }

    public init?(json: JSON) {
        guard let popup = json["popup"]?.stringValue, let rect = Rect(json: json["rect"]) else { return nil }
        let members = json["members"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.init(popup: popup, window: json["window"]?.stringValue, rect: rect, runtime: json["runtime"]?.boolValue == true,
                  members: members, ties: members.map { json["ties"]?[$0]?.stringValue ?? "" },
                  membersLeftOut: json["members_left_out"]?.intValue.map { Int(clamping: $0) } ?? 0)
    }

    /// The members as `status` writes them: each window and what tied it.
    public var membersText: String {
        let listed = zip(members, ties).map { member, tie in
            "\(member) (\(FamilyTie(rawValue: tie)?.sentence ?? tie))"
        }.joined(separator: ", ")
        return membersLeftOut > 0 ? listed + ", and \(membersLeftOut) more" : listed
    }
}
