// The configuration, as the core sees it: popups, their region trees, exclusions.
// Built by `ClickawayConfig` from TOML, or directly by tests.

public enum OutsideClick: String, Sendable, CaseIterable {
    /// The dismissing click reaches nothing.
    case swallow
    /// The dismissing click goes on to whatever is under it.
    case replay
}

public enum Trigger: String, Sendable, CaseIterable {
    /// Dismiss on the press.
    case press
    /// Dismiss when press and release both land outside.
    case click
}

/// What a click on the popup itself does to it besides reaching it (`inside_click`).
public enum InsideClick: String, Sendable, CaseIterable {
    /// Nothing: it stays open.
    case pass
    /// It is dismissed, as by a click outside, once the click has reached it.
    case dismiss
}

/// What happens to the Escape key that dismissed a popup (`escape_key`).
public enum EscapeOutcome: String, Sendable, CaseIterable {
    /// Eaten: the focused window never sees it.
    case swallow
    /// Passed on to the focused window.
    case replay
}

/// What happens to the click itself.
public enum ClickOutcome: String, Sendable {
    case pass, swallow, replay
}

/// Pointer buttons 1...31 as a bit set.
public struct ButtonSet: Hashable, Sendable {
    public var bits: UInt32
    public init(bits: UInt32) { self.bits = bits }
    public init(_ buttons: [Int]) {
        var b: UInt32 = 0
        for n in buttons where n >= 1 && n <= 31 { b |= 1 << UInt32(n) }
        bits = b
    }
    @inlinable public func contains(_ button: UInt8) -> Bool {
        button < 32 && bits & (1 << UInt32(button)) != 0
    }
    public var buttons: [Int] { (1...31).filter { bits & (1 << UInt32($0)) != 0 } }
    public static let standard = ButtonSet([1, 2, 3])
}

/// How to recognise another program's window. Every key that is set must match.
public struct WindowMatch: Hashable, Sendable {
    /// WM_CLASS class (second string), exact.
    public var windowClass: String?
    /// WM_CLASS instance (first string), exact.
    public var instance: String?
    /// _NET_WM_NAME / WM_NAME, exact.
    public var title: String?
    /// _NET_WM_NAME / WM_NAME, shell-style glob (`*`, `?`, `[...]`).
    public var titleGlob: String?
    /// _NET_WM_WINDOW_TYPE without its prefix, lower case: "dialog", "popup_menu", ...
    public var type: String?
    /// A Wayland toplevel's app_id (xdg_toplevel.set_app_id), exact.
    public var appId: String?
    /// One window by its id (the X client window, sway's container id): runtime popups only.
    public var window: UInt32?
    /// The windows of one process (X11's _NET_WM_PID, sway's pid): runtime popups only, while
    /// they wait for the process's window.
    public var pid: Int32?

    public init(windowClass: String? = nil, instance: String? = nil, title: String? = nil,
                titleGlob: String? = nil, type: String? = nil, appId: String? = nil, window: UInt32? = nil,
                pid: Int32? = nil) {
        self.windowClass = windowClass
        self.instance = instance
        self.title = title
        self.titleGlob = titleGlob
        self.type = type
        self.appId = appId
        self.window = window
        self.pid = pid
    }

    public var isEmpty: Bool {
        windowClass == nil && instance == nil && title == nil && titleGlob == nil && type == nil && appId == nil
            && window == nil && pid == nil
    }

    /// Whether it names one window or one process rather than a kind of window: such a
    /// match wins over the others (a runtime popup for a window a configured popup matches).
    public var isByIdentity: Bool { window != nil || pid != nil }

    /// The properties of a real window, as read by a backend.
    public struct Properties: Sendable, Equatable {
        public var windowClass: String?
        public var instance: String?
        public var title: String?
        public var types: [String]
        public var appId: String?
        /// The window these are of (the X client window, sway's container id), and its
        /// process when known (0: unknown).
        public var window: UInt32
        public var pid: Int32
        /// The window this one is a dialog or menu of (X11's WM_TRANSIENT_FOR; 0: none). Not
        /// matched on: it places the window in a popup's family.
        public var transientFor: UInt32
        public init(windowClass: String? = nil, instance: String? = nil, title: String? = nil, types: [String] = [],
                    appId: String? = nil, window: UInt32 = 0, pid: Int32 = 0, transientFor: UInt32 = 0) {
            self.windowClass = windowClass
            self.instance = instance
            self.title = title
            self.types = types
            self.appId = appId
            self.window = window
            self.pid = pid
            self.transientFor = transientFor
        }
    }

    public func matches(_ p: Properties) -> Bool {
        if isEmpty { return false }
        if let c = windowClass, c != p.windowClass { return false }
        if let i = instance, i != p.instance { return false }
        if let t = title, t != p.title { return false }
        if let g = titleGlob, !Glob.matches(g, p.title ?? "") { return false }
        if let t = type, !p.types.contains(t) { return false }
        if let a = appId, a != p.appId { return false }
        if let w = window, w != p.window { return false }
        if let pid, pid != p.pid { return false }
        return true
    }

    /// The window types `type` accepts (the suffixes of `_NET_WM_WINDOW_TYPE_*`).
    public static let knownTypes = [
        "desktop", "dock", "toolbar", "menu", "utility", "splash", "dialog", "dropdown_menu",
        "popup_menu", "tooltip", "notification", "combo", "dnd", "normal",
    ]
}

public enum DismissAction: Hashable, Sendable {
    /// ICCCM WM_DELETE_WINDOW.
    case close
    case unmap
    /// KillClient.
    case kill
    /// argv run without a shell.
    case command([String])
}

/// A rectangle on screen, optionally relative to a named output, or a window's rectangle.
public enum AreaSource: Hashable, Sendable {
    case rect(Rect, output: String?)
    case window(WindowMatch)
}

/// A region of a popup: a rectangle in its parent's coordinates, with children.
public struct RegionSpec: Sendable, Equatable {
    public var name: String?
    public var rect: Rect
    public var slop: Insets
    public var passthrough: Bool
    /// `popup.region.path` or `region.path` within the same popup.
    public var redirect: String?
    public var clip: Bool
    public var hidden: Bool
    public var enabled: Bool
    /// Back to front: later children are on top.
    public var children: [RegionSpec]

    public init(name: String? = nil, rect: Rect, slop: Insets = .zero, passthrough: Bool = false,
                redirect: String? = nil, clip: Bool = true, hidden: Bool = false, enabled: Bool = true,
                children: [RegionSpec] = []) {
        self.name = name
        self.rect = rect
        self.slop = slop
        self.passthrough = passthrough
        self.redirect = redirect
        self.clip = clip
        self.hidden = hidden
        self.enabled = enabled
        self.children = children
    }
}

extension RegionSpec {
    /// Whether any of `regions`, at any depth, redirects: only then are paths resolved.
    static func anyRedirect(_ regions: [RegionSpec]) -> Bool {
        regions.contains { $0.redirect != nil || anyRedirect($0.children) }
    }
}

public struct PopupSpec: Sendable, Equatable {
    public var name: String
    public var parent: String?
    /// Where the root region's rectangle comes from.
    public var source: AreaSource
    public var anchors: [AreaSource]
    public var passthrough: Bool
    public var slop: Insets
    public var clip: Bool
    public var redirect: String?
    public var regions: [RegionSpec]
    public var outsideClick: OutsideClick
    public var insideClick: InsideClick
    public var trigger: Trigger
    public var buttons: ButtonSet
    public var graceMs: Int64
    public var dismiss: DismissAction
    /// The Escape key dismisses this popup (the topmost such one) while it is open.
    public var escape: Bool
    /// What happens to that Escape press: eaten, or passed on to the focused window.
    public var escapeKey: EscapeOutcome
    /// The windows that belong to the popup's window (its dialogs, menus, dropdowns) count
    /// as inside it and never open popups of their own.
    public var family: Bool

    public init(name: String, parent: String? = nil, source: AreaSource, anchors: [AreaSource] = [],
                passthrough: Bool = false, slop: Insets = .zero, clip: Bool = true, redirect: String? = nil,
                regions: [RegionSpec] = [], outsideClick: OutsideClick = .swallow, insideClick: InsideClick = .pass,
                trigger: Trigger = .press,
                buttons: ButtonSet = .standard, graceMs: Int64 = 150, dismiss: DismissAction = .close,
                escape: Bool = false, escapeKey: EscapeOutcome = .swallow, family: Bool = true) {
        self.name = name
        self.parent = parent
        self.source = source
        self.anchors = anchors
        self.passthrough = passthrough
        self.slop = slop
        self.clip = clip
        self.redirect = redirect
        self.regions = regions
        self.outsideClick = outsideClick
        self.insideClick = insideClick
        self.trigger = trigger
        self.buttons = buttons
        self.graceMs = graceMs
        self.dismiss = dismiss
        self.escape = escape
        self.escapeKey = escapeKey
        self.family = family
    }

    /// The popup's own rectangle when it has a fixed one.
    public var fixedRect: Rect? {
        if case .rect(let r, _) = source { return r }
        return nil
    }
}

public struct ExclusionSpec: Sendable, Equatable {
    public var source: AreaSource
    public init(source: AreaSource) { self.source = source }
}

/// The `backend` setting: which display server, and on X11 how clicks are taken. Two
/// choices in one word for users; `displayKind` and `x11Mode` part them.
public enum Backend: String, Sendable, CaseIterable {
    case auto
    case x11Grab = "x11-grab"
    case x11Shield = "x11-shield"
    case wayland

    /// The display server asked for; nil: the session's (Wayland when it has one).
    public var displayKind: DisplayKind? {
        switch self {
        case .auto: nil
        case .x11Grab, .x11Shield: .x11
        case .wayland: .wayland
        }
    }

    /// How an X server's clicks are taken.
    public var x11Mode: X11Mode {
        switch self {
        case .x11Grab: .grab
        case .x11Shield: .shield
        case .auto, .wayland: .auto
        }
    }
}

/// A display server clickaway runs on, chosen at start.
public enum DisplayKind: String, Sendable {
    case x11
    case wayland
}

/// How clicks are taken on X11: grabs on the root, the shield window, or grabs falling back
/// on the shield where another client holds one (`auto`).
public enum X11Mode: Sendable, Equatable {
    case auto
    case grab
    case shield
}

public enum LogLevel: String, Sendable, CaseIterable {
    case error, warning, info, debug, trace
}

public struct Settings: Sendable, Equatable {
    public var backend: Backend = .auto
    public var logLevel: LogLevel = .info
    /// A rejected configuration is also shown as a desktop notification (notify-send).
    public var notify = true
    public init() {}
}
