public import ClickawayCore
public import ClickawayJSON

/// The reply to `status`: what the daemon runs with, tracks and holds. Encoded in one fixed
/// order (`clickawayctl status --json` prints it as it comes); printed for people by `text`.
public struct StatusReport: Equatable, Sendable {
    /// How clicks are taken now: "x11-grab", "x11-shield" or "wayland".
    public var backend: String
    public var display: DisplayStatus
    /// The configuration files read.
    public var config: [String]
    public var popups: Int
    /// The errors of the configuration last rejected, since the last one accepted.
    public var rejected: String?
    public var running: RunningConfiguration
    /// Popup sources this display cannot provide, one sentence each.
    public var unavailable: [String]
    public var open: [OpenPopup]
    /// The open popups beyond those listed: `status` lists the first `instanceLimit` of each
    /// popup (a burst of a program's thousands of menus is a count, not a page of them), so
    /// that every popup open is listed.
    public var openLeftOut: Int
    /// Runtime popups waiting for a process's window (`--pid`).
    public var waiting: [WaitingPopup]
    public var monitors: Int
    public var lastError: String?

    /// Where the running configuration came from.
    public enum RunningConfiguration: Equatable, Sendable {
        case files
        /// The files had errors at start: the last configuration that loaded, kept in `file`, saved at `saved`.
        case lastGood(file: String, saved: String)
        /// The files had errors at start and there was no last good configuration.
        case none

        public var name: String {
            switch self {
            case .files: "files"
            case .lastGood: "last-good"
            case .none: "none"
            }
        }
    }

    /// How many open instances of one popup `status` lists.
    public static let instanceLimit = 32

    public init(backend: String, display: DisplayStatus, config: [String], popups: Int, rejected: String?,
                running: RunningConfiguration, unavailable: [String], open: [OpenPopup], openLeftOut: Int = 0,
                waiting: [WaitingPopup] = [], monitors: Int, lastError: String?) {
        self.backend = backend
        self.display = display
        self.config = config
        self.popups = popups
        self.rejected = rejected
        self.running = running
        self.unavailable = unavailable
        self.open = open
        self.openLeftOut = openLeftOut
        self.waiting = waiting
        self.monitors = monitors
        self.lastError = lastError
    }

    public var json: JSON {
        var lastGood = JSON.null
        if case .lastGood(let file, let saved) = running { lastGood = .object([("file", .string(file)), ("saved", .string(saved))]) }
        return ControlReply.ok([("backend", .string(backend))] + display.identityFields + [
            ("config", .array(config.map(JSON.string))),
            ("popups", .int(Int64(popups))),
            ("rejected", rejected.map(JSON.string) ?? .null),
            ("running", .string(running.name)),
            ("last_good", lastGood),
            ("unavailable", .array(unavailable.map(JSON.string))),
        ] + display.detailFields + [
            ("open", .array(open.map { .object($0.fields) })),
        ] + (openLeftOut > 0 ? [("open_left_out", .int(Int64(openLeftOut)))] : []) + [
            ("waiting", .array(waiting.map(\.json))),
            ("monitors", .int(Int64(monitors))),
            ("last_error", lastError.map(JSON.string) ?? .null),
        ])
    }

    public init(reply: JSON) throws(MalformedReply) {
        guard let backend = reply["backend"]?.stringValue, let display = DisplayStatus(reply: reply),
              let config = reply["config"]?.arrayValue?.compactMap(\.stringValue), let popups = reply["popups"]?.intValue,
              let open = reply["open"]?.arrayValue?.compactMap(OpenPopup.init(json:)), let monitors = reply["monitors"]?.intValue
        else { throw MalformedReply("status", reply) }
        let running: RunningConfiguration
        switch reply["running"]?.stringValue {
        case "last-good":
            running = .lastGood(file: reply["last_good"]?["file"]?.stringValue ?? "?", saved: reply["last_good"]?["saved"]?.stringValue ?? "?")
        case "none": running = .none
        default: running = .files
        }
        self.init(backend: backend, display: display, config: config, popups: Int(popups), rejected: reply["rejected"]?.stringValue,
                  running: running, unavailable: reply["unavailable"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  open: open, openLeftOut: reply["open_left_out"]?.intValue.map { Int(clamping: $0) } ?? 0,
                  waiting: reply["waiting"]?.arrayValue?.compactMap(WaitingPopup.init(json:)) ?? [],
                  monitors: Int(monitors), lastError: reply["last_error"]?.stringValue)
    }

    /// Whether clicks go through the daemon now: grabs held, the shield mapped, the overlay
    /// covering something with a popup open.
    public var isIntercepting: Bool {
        switch display {
        case .x11(let x): x.grab.active || x.shield?.mapped == true
        case .wayland(let w): !open.isEmpty && !w.overlay.outputs.isEmpty
        }
    }

    /// What `clickawayctl status` prints.
    public var text: String {
        var lines: [String] = []
        lines.append("backend:  \(backend) on \(display.name)")
        lines.append("config:   \(config.isEmpty ? "none (no popups)" : config.joined(separator: ", "))")
        switch running {
        case .lastGood(let file, let saved):
            lines.append("running:  the last configuration that loaded, saved \(saved) in \(file), until the errors below are fixed")
        case .none:
            lines.append("running:  no configuration (no popups) until the errors below are fixed")
        case .files:
            break
        }
        switch display {
        case .x11(let x):
            if x.grab.active {
                lines.append("grab:     buttons \(x.grab.buttons.map(String.init).joined(separator: ", ")) on the root window (\(x.grab.held.count) combinations held)")
            } else {
                lines.append("grab:     none")
            }
            for r in x.grab.refused { lines.append("refused:  button \(r.button) with \(r.modifiers) (\(r.error))") }
            if let shield = x.shield {
                lines.append("shield:   \(shield.mapped ? "mapped, \(shield.holes.count) holes" : "not mapped")")
            }
        case .wayland(let w):
            let o = w.overlay
            lines.append("overlay:  on \(o.outputs.isEmpty ? "no output" : o.outputs.map(\.name).joined(separator: ", ")), \(o.holes.count) holes"
                         + (o.pointer ? "" : "; the seat has no pointer") + (o.touch ? "; touch" : "") + (o.tablets ? "; pens" : ""))
            lines.append("replay:   " + (o.replay.map { "through \($0)" } ?? "not possible here: replayed clicks are swallowed"))
            switch w.windows {
            case .sway(let sway): lines.append("sway:     \(sway.windows) windows with a role, through \(sway.socket)")
            case .kwin(let kwin):
                lines.append("kwin:     " + (kwin.version == 0 ? "script \(kwin.script) loaded, not heard from yet"
                    : "\(kwin.windows) windows with a role, through the script \(kwin.script) (KWin \(kwin.version))"))
            case .gnome(let gnome):
                lines.append("gnome:    " + (gnome.connected
                    ? "\(gnome.windows) windows with a role, through the extension \(gnome.uuid) (GNOME Shell \(gnome.shell))"
                    : "the extension \(gnome.uuid) is not connected: \(gnome.waiting ?? "waiting for it")"))
            case nil: lines.append("windows:  neither sway's IPC ($SWAYSOCK) nor KWin's scripting: rect popups only")
            }
        }
        for sentence in unavailable { lines.append("unavailable: \(sentence)") }
        lines.append("open:     \(open.isEmpty ? "nothing" : "")")
        for o in open {
            lines.append("  \(o.popup)  window \(o.window ?? "-")  [\([o.rect.x, o.rect.y, o.rect.width, o.rect.height].map(String.init).joined(separator: ", "))]"
                         + (o.runtime ? "  (runtime)" : ""))
            if !o.members.isEmpty { lines.append("    with its windows (inside it): \(o.membersText)") }
        }
        if openLeftOut > 0 { lines.append("  and \(openLeftOut) more") }
        for w in waiting { lines.append("waiting:  \(w.popup) (runtime) for a window of process \(w.pid)") }
        if let rejected {
            lines.append(running == .files
                         ? "rejected: the last configuration edit has errors; the previous configuration keeps running:"
                         : "rejected: the configuration has errors:")
            lines.append(rejected)
        }
        if let lastError, rejected == nil { lines.append("last error: \(lastError)") }
        return lines.joined(separator: "\n")
    }
}

/// The display's part of `status`.
public enum DisplayStatus: Equatable, Sendable {
    case x11(X11Status)
    case wayland(WaylandStatus)

    public var name: String {
        switch self {
        case .x11(let x): x.display
        case .wayland(let w): w.display
        }
    }

    /// The fields after `backend`: which display.
    var identityFields: [(String, JSON)] {
        switch self {
        case .x11(let x): [("fallback", x.fallback.map(JSON.string) ?? .null), ("display", .string(x.display))]
        case .wayland(let w): [("display", .string(w.display))]
        }
    }

    /// The fields after `unavailable`: how clicks are taken.
    var detailFields: [(String, JSON)] {
        switch self {
        case .x11(let x):
            return [
                ("grab", .object([
                    ("active", .bool(x.grab.active)),
                    ("buttons", .array(x.grab.buttons.map { .int(Int64($0)) })),
                    ("held", .array(x.grab.held.map { .object([("button", .int(Int64($0.button))), ("modifiers", .string($0.modifiers))]) })),
                    ("refused", .array(x.grab.refused.map {
                        .object([("button", .int(Int64($0.button))), ("modifiers", .string($0.modifiers)), ("error", .string($0.error))])
                    })),
                ])),
                ("shield", x.shield.map { s in
                    .object([("window", .string(s.window)), ("mapped", .bool(s.mapped)), ("holes", .array(s.holes.map(\.json)))])
                } ?? .null),
                ("escape", .object([
                    ("active", .bool(x.escape.active)),
                    ("refused", .array(x.escape.refused.map { .object([("modifiers", .string($0.modifiers)), ("error", .string($0.error))]) })),
                ])),
            ]
        case .wayland(let w):
            let o = w.overlay
            return [
                ("overlay", .object([
                    ("outputs", .array(o.outputs.map { .object([("name", .string($0.name)), ("rect", $0.rect.json)]) })),
                    ("holes", .array(o.holes.map(\.json))),
                    ("pointer", .bool(o.pointer)),
                    ("touch", .bool(o.touch)),
                    ("tablets", .bool(o.tablets)),
                    ("replay", o.replay.map(JSON.string) ?? .null),
                ])),
                ("sway", w.sway.map { .object([("socket", .string($0.socket)), ("windows", .int(Int64($0.windows)))]) } ?? .null),
                ("kwin", w.kwin.map {
                    .object([("script", .string($0.script)), ("version", .int(Int64($0.version))), ("windows", .int(Int64($0.windows)))])
                } ?? .null),
                ("gnome", w.gnome.map {
                    .object([("extension", .string($0.uuid)), ("connected", .bool($0.connected)), ("shell", .string($0.shell)),
                             ("windows", .int(Int64($0.windows))), ("waiting", $0.waiting.map(JSON.string) ?? .null)])
                } ?? .null),
            ]
        }
    }

    init?(reply: JSON) {
        guard let display = reply["display"]?.stringValue else { return nil }
        if let overlay = reply["overlay"] {
            self = .wayland(WaylandStatus(
                display: display,
                overlay: OverlayStatus(
                    outputs: overlay["outputs"]?.arrayValue?.compactMap { o in
                        o["name"]?.stringValue.flatMap { name in Rect(json: o["rect"]).map { (name, $0) } }
                    }.map { OverlayStatus.Output(name: $0.0, rect: $0.1) } ?? [],
                    holes: overlay["holes"]?.arrayValue?.compactMap { Rect(json: $0) } ?? [],
                    pointer: overlay["pointer"]?.boolValue == true, touch: overlay["touch"]?.boolValue == true,
                    tablets: overlay["tablets"]?.boolValue == true, replay: overlay["replay"]?.stringValue),
                windows: reply["sway"].flatMap { s in
                    s["socket"]?.stringValue.map { .sway(SwayStatus(socket: $0, windows: Int(s["windows"]?.intValue ?? 0))) }
                } ?? reply["kwin"].flatMap { k in
                    k["script"]?.stringValue.map {
                        .kwin(KWinStatus(script: $0, version: Int(k["version"]?.intValue ?? 0), windows: Int(k["windows"]?.intValue ?? 0)))
                    }
                } ?? reply["gnome"].flatMap { g in
                    g["extension"]?.stringValue.map {
                        .gnome(GnomeStatus(uuid: $0, connected: g["connected"]?.boolValue == true, shell: g["shell"]?.stringValue ?? "",
                                           windows: Int(g["windows"]?.intValue ?? 0), waiting: g["waiting"]?.stringValue))
                    }
                }))
            return
        }
        guard let grab = reply["grab"] else { return nil }
        let combination = { (j: JSON) in (button: Int(j["button"]?.intValue ?? 0), modifiers: j["modifiers"]?.stringValue ?? "?") }
        self = .x11(X11Status(
            fallback: reply["fallback"]?.stringValue, display: display,
            grab: GrabStatus(
                active: grab["active"]?.boolValue == true,
                buttons: grab["buttons"]?.arrayValue?.compactMap { $0.intValue.map(Int.init) } ?? [],
                held: grab["held"]?.arrayValue?.map { let c = combination($0); return GrabStatus.Held(button: c.button, modifiers: c.modifiers) } ?? [],
                refused: grab["refused"]?.arrayValue?.map {
                    let c = combination($0)
                    return GrabStatus.Refused(button: c.button, modifiers: c.modifiers, error: $0["error"]?.stringValue ?? "?")
                } ?? []),
            shield: reply["shield"].flatMap { s in
                s["window"]?.stringValue.map {
                    ShieldStatus(window: $0, mapped: s["mapped"]?.boolValue == true, holes: s["holes"]?.arrayValue?.compactMap { Rect(json: $0) } ?? [])
                }
            },
            escape: EscapeStatus(
                active: reply["escape"]?["active"]?.boolValue == true,
                refused: reply["escape"]?["refused"]?.arrayValue?.map {
                    EscapeStatus.Refused(modifiers: $0["modifiers"]?.stringValue ?? "?", error: $0["error"]?.stringValue ?? "?")
                } ?? [])))
    }
}

public struct X11Status: Equatable, Sendable {
    /// Why `auto` left the grab mode for the shield, once it has.
    public var fallback: String?
    public var display: String
    public var grab: GrabStatus
    /// nil until the shield mode is first used.
    public var shield: ShieldStatus?
    public var escape: EscapeStatus

    public init(fallback: String?, display: String, grab: GrabStatus, shield: ShieldStatus?, escape: EscapeStatus) {
        self.fallback = fallback
        self.display = display
        self.grab = grab
        self.shield = shield
        self.escape = escape
    }
}

/// The passive button grabs on the root window.
public struct GrabStatus: Equatable, Sendable {
    public struct Held: Equatable, Sendable {
        public var button: Int
        /// The lock modifiers, e.g. "NumLock+CapsLock" or "no modifiers".
        public var modifiers: String
        public init(button: Int, modifiers: String) {
            self.button = button
            self.modifiers = modifiers
        }
    }

    public struct Refused: Equatable, Sendable {
        public var button: Int
        public var modifiers: String
        /// The X error, e.g. "BadAccess".
        public var error: String
        public init(button: Int, modifiers: String, error: String) {
            self.button = button
            self.modifiers = modifiers
            self.error = error
        }
    }

    public var active: Bool
    public var buttons: [Int]
    public var held: [Held]
    public var refused: [Refused]

    public init(active: Bool, buttons: [Int], held: [Held], refused: [Refused]) {
        self.active = active
        self.buttons = buttons
        self.held = held
        self.refused = refused
    }
}

public struct ShieldStatus: Equatable, Sendable {
    /// Its window id, in hex.
    public var window: String
    public var mapped: Bool
    public var holes: [Rect]

    public init(window: String, mapped: Bool, holes: [Rect]) {
        self.window = window
        self.mapped = mapped
        self.holes = holes
    }
}

/// The Escape key's grabs on the root window.
public struct EscapeStatus: Equatable, Sendable {
    public struct Refused: Equatable, Sendable {
        public var modifiers: String
        public var error: String
        public init(modifiers: String, error: String) {
            self.modifiers = modifiers
            self.error = error
        }
    }

    public var active: Bool
    public var refused: [Refused]

    public init(active: Bool, refused: [Refused]) {
        self.active = active
        self.refused = refused
    }
}

public struct WaylandStatus: Equatable, Sendable {
    public var display: String
    public var overlay: OverlayStatus
    /// Where windows come from; nil on a compositor that tells nothing of them.
    public var windows: CompositorWindowsStatus?

    public init(display: String, overlay: OverlayStatus, windows: CompositorWindowsStatus?) {
        self.display = display
        self.overlay = overlay
        self.windows = windows
    }

    public var sway: SwayStatus? { if case .sway(let sway) = windows { sway } else { nil } }
    public var kwin: KWinStatus? { if case .kwin(let kwin) = windows { kwin } else { nil } }
    public var gnome: GnomeStatus? { if case .gnome(let gnome) = windows { gnome } else { nil } }
}

/// Where a Wayland compositor's windows come from.
public enum CompositorWindowsStatus: Equatable, Sendable {
    case sway(SwayStatus)
    case kwin(KWinStatus)
    case gnome(GnomeStatus)
}

/// GNOME Shell, through clickaway's extension: its layer takes the clicks, and it reports the windows.
public struct GnomeStatus: Equatable, Sendable {
    /// The extension's uuid.
    public var uuid: String
    /// Whether the extension has said hello on this daemon's bus connection.
    public var connected: Bool
    /// GNOME Shell's version, as the extension said; empty until it has.
    public var shell: String
    /// Windows with a role in the configuration.
    public var windows: Int
    /// What the daemon waits for while it is not connected (the extension disabled, the Shell gone).
    public var waiting: String?

    public init(uuid: String, connected: Bool, shell: String, windows: Int, waiting: String?) {
        self.uuid = uuid
        self.connected = connected
        self.shell = shell
        self.windows = windows
        self.waiting = waiting
    }
}

public struct OverlayStatus: Equatable, Sendable {
    public struct Output: Equatable, Sendable {
        public var name: String
        public var rect: Rect
        public init(name: String, rect: Rect) {
            self.name = name
            self.rect = rect
        }
    }

    public var outputs: [Output]
    public var holes: [Rect]
    /// What the seat has: a pointer, touch, pens.
    public var pointer: Bool
    public var touch: Bool
    public var tablets: Bool
    /// The protocol replayed clicks go through, nil when the compositor offers none.
    public var replay: String?

    public init(outputs: [Output], holes: [Rect], pointer: Bool, touch: Bool, tablets: Bool, replay: String?) {
        self.outputs = outputs
        self.holes = holes
        self.pointer = pointer
        self.touch = touch
        self.tablets = tablets
        self.replay = replay
    }
}

public struct SwayStatus: Equatable, Sendable {
    public var socket: String
    /// Windows with a role in the configuration.
    public var windows: Int

    public init(socket: String, windows: Int) {
        self.socket = socket
        self.windows = windows
    }
}

public struct KWinStatus: Equatable, Sendable {
    /// The script clickaway wrote and KWin runs.
    public var script: String
    /// KWin's major version, as the script found it; 0 until it has reported.
    public var version: Int
    /// Windows with a role in the configuration.
    public var windows: Int

    public init(script: String, version: Int, windows: Int) {
        self.script = script
        self.version = version
        self.windows = windows
    }
}

/// A runtime popup waiting for the window of a process (`clickawayctl open --pid`).
public struct WaitingPopup: Equatable, Sendable {
    public var popup: String
    public var pid: Int32

    public init(popup: String, pid: Int32) {
        self.popup = popup
        self.pid = pid
    }

    public var json: JSON { .object([("popup", .string(popup)), ("pid", .int(Int64(pid)))]) }

    public init?(json: JSON) {
        guard let popup = json["popup"]?.stringValue, let pid = json["pid"]?.intValue.flatMap(Int32.init(exactly:)) else { return nil }
        self.init(popup: popup, pid: pid)
    }
}
