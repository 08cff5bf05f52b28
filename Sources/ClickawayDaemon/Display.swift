public import ClickawayControl
public import ClickawayCore
public import ClickawaySystem

/// A display server the daemon takes clicks from, chosen at start: an X server (grabs on the
/// root, or the shield window) or a Wayland compositor with layer-shell (the overlay). The
/// daemon owns one and drives it in this order:
///
/// 1. `register(with:)` once: the display's connection (a `PollSource`) and any other input
///    it has (sway's IPC) join the daemon's loop.
/// 2. `nextInput()` until nil after every wait: the display reads its events, handles what
///    is its own (windows, the shield's crossings, outputs) and hands out the rest.
/// 3. For each click: the daemon decides it from memory, `answer(_:with:)` sends the answer
///    at once, and only then does the daemon act (dismiss, refresh, announce).
/// 4. `intercept(_:)` after every change of the open popups: grabs, the shield, the overlay.
public protocol Display: PollSource {
    /// The display as connected to (":1", "wayland-1").
    var name: String { get }
    /// How clicks are taken now, as `status` and `monitor` name it.
    var interceptionName: String { get }
    /// Whether clicks go through the daemon now.
    var isIntercepting: Bool { get }
    /// Why the connection broke, once it has.
    var failure: String? { get }
    /// The windows on this display that play a role in the configuration.
    var windows: any WindowSource { get }
    /// The outputs by name, for `output = "..."` rectangles.
    var outputs: [String: Rect] { get }
    /// Milliseconds on the clock click times are in.
    func now() -> Int64

    /// Adds the display's other inputs and deadlines to the loop (its connection is added by
    /// the daemon, first, as a `PollSource`).
    func register(with loop: PollLoop)
    /// The next thing the daemon must know about, nil once everything read is handled.
    func nextInput() -> DisplayInput?
    /// Answers the click `nextInput()` just handed out, from memory: no round trip, no
    /// allocation before the answer is flushed. `decision` is nil for a release no press
    /// waited on.
    func answer(_ click: Click, with decision: Decision?)
    /// Answers the Escape key `nextInput()` just handed out: passed on or eaten.
    func answerEscape(_ outcome: EscapeOutcome)
    /// Takes clicks for the engine's open popups; says what another client refused.
    func intercept(_ engine: DecisionEngine) -> [InterceptionNotice]
    /// Closes a dismissed popup's window by its `close`, `unmap` or `kill` (commands are
    /// the daemon's), for `trigger` (X: WM_DELETE_WINDOW carries its time).
    func close(_ window: UInt32, _ spec: PopupSpec, trigger: DismissTrigger)
    /// One round trip, with every event the display sent before it handled (`drain`
    /// handles inputs); nil, or why it failed.
    func sync(_ drain: () -> Void) -> String?
    /// The display's part of `status`.
    func status() -> DisplayStatus
    /// Whether another program holds the pointer now (an open menu, a launcher): a click then
    /// goes to it and never reaches the daemon. nil when none does or the display cannot tell.
    /// For `hit`, between clicks: may cost a round trip.
    func otherPointerGrab() -> String?
    /// A new configuration was accepted: windows are matched again, the backend setting followed.
    func configurationReplaced(_ model: ClickModel, backend: Backend)
    /// Runtime popups came or went: the windows known are matched again against `model`, and
    /// those `lookup` says looked at anew. Between clicks only.
    func popupsChanged(_ model: ClickModel, lookingAt lookup: WindowLookup)
    /// The window a runtime popup given `window` is (X11: the client of that top-level, or
    /// that client; sway: that container), among the windows mapped now; or why there is none.
    func popupWindow(for window: UInt32) -> Result<UInt32, Refusal>
    /// Why this display cannot find windows for runtime popups, nil when it can.
    var windowsUnavailable: String? { get }
    /// The popup, anchor and exclusion sources of `model` this display can never provide, one
    /// sentence each.
    func unavailableSources(in model: ClickModel) -> [String]
    /// Sends what is buffered.
    func flush()
    /// Puts everything back as it was before the daemon started: grabs, the shield.
    func release()
}

/// What a display hands the daemon from `nextInput()`.
public enum DisplayInput: Sendable {
    /// A press or release to decide and answer.
    case click(Click)
    /// The Escape key, while a popup that wants it is open (X11): answer with `answerEscape`.
    case escapeKey(time: Int64)
    /// Windows, their roles or places, or what the interception needs changed: refresh.
    case changed
    /// The outputs changed (`Display.outputs`).
    case outputsChanged
}

/// A press or release of a button, a finger or a pen tip (button 1).
public struct Click: Sendable {
    public var isPress: Bool
    /// X11's button number.
    public var button: UInt8
    public var x: Int32
    public var y: Int32
    /// Milliseconds on the display's clock (`Display.now()`).
    public var time: Int64
    /// X11: the press goes on to the window under it, so its release will not come to the
    /// daemon; a `trigger = "click"` popup must be decided on the press.
    public var releaseGoesElsewhere: Bool

    public init(isPress: Bool, button: UInt8, x: Int32, y: Int32, time: Int64, releaseGoesElsewhere: Bool) {
        self.isPress = isPress
        self.button = button
        self.x = x
        self.y = y
        self.time = time
        self.releaseGoesElsewhere = releaseGoesElsewhere
    }
}

/// What dismissed popups: a click, or the Escape key.
public enum DismissTrigger: Sendable {
    case click(Click, Decision)
    case escapeKey(time: Int64, EscapeOutcome)

    /// When it happened, on the display's clock.
    public var time: Int64 {
        switch self {
        case .click(let click, _): click.time
        case .escapeKey(let time, _): time
        }
    }
}

/// What the display tells the daemon when it takes clicks: a grab another client holds,
/// or `auto` leaving the grab mode for the shield.
public enum InterceptionNotice: Sendable {
    case refused(MonitorEvent.GrabRefusal)
    case switchedBackend(to: String, because: String)
}

/// Which windows a change of the runtime popups may give a role they did not have.
public enum WindowLookup: Sendable, Equatable {
    /// None: popups went, or a `rect` one came.
    case none
    /// This window (a popup names it, as `popupWindow(for:)` gave it).
    case window(UInt32)
    /// Any window (a popup names a process).
    case all
}
