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
///    is its own (windows, the shield's crossings, outputs) and hands out the rest. Each
///    click and key carries its own `InputToken`: the display keeps nothing of what it
///    handed out.
/// 3. For each click: the daemon decides it from memory, `answer(_:with:)` sends the answer
///    at once, the daemon acts (dismisses, settles), and `acted(on:)` ends the click.
/// 4. `intercept(_:)` after every change of the open popups: grabs, the shield, the overlay.
///
/// The daemon never asks which display it has: what differs is said by the display.
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
    /// What a process's window must carry to be found by `open --pid` here, when the display
    /// needs more than its windows (X11: `_NET_WM_PID`); said when none came in time.
    var processWindowRequirement: String? { get }

    /// Adds the display's other inputs and deadlines to the loop (its connection is added by
    /// the daemon, first, as a `PollSource`).
    func register(with loop: PollLoop)
    /// The next thing the daemon must know about, nil once everything read is handled.
    func nextInput() -> DisplayInput?
    /// Answers `click` by its token: no allocation, and nothing waited for before the answer
    /// is flushed. `decision` is nil for a release no press waited on. With the answer the
    /// X11 shield asks which window is under a click it let through, so that the window
    /// manager activates it, as it would have without the shield, once the reply comes.
    func answer(_ click: Click, with decision: Decision?)
    /// The daemon has acted on `click` (dismissed, settled the interception): what must come
    /// after that goes now (Wayland: a released click is sent on to what is under it now).
    func acted(on click: Click)
    /// Answers the Escape key by its token: passed on or eaten.
    func answerEscape(_ key: EscapeKey, _ outcome: EscapeOutcome)
    /// Takes clicks for the engine's open popups. What another client holds comes later,
    /// once the display has heard (`.intercepted`): never waited for. Returns true when clicks
    /// meet the new interception only once the server has read it, which a sync tells
    /// (Wayland: the overlay's input region grew), false when it is in place as sent (X11:
    /// the server handles the grabs before any later click).
    func intercept(_ engine: DecisionEngine) -> Bool
    /// What the interception met since last asked: grabs another client holds, `auto` leaving
    /// grabs for the shield. Asked at `.intercepted`.
    func takeInterceptionNotices() -> [InterceptionNotice]
    /// Closes a dismissed popup's window by its `close`, `unmap` or `kill` (commands are
    /// the daemon's), for `trigger` (X: WM_DELETE_WINDOW carries its time).
    func close(_ window: UInt32, _ spec: PopupSpec, trigger: DismissTrigger)
    /// Asks for `.synced(id)` from `nextInput()` once every input the display sent before
    /// now has been handed out and what the daemon sent for them processed (`clickawayctl
    /// sync`, `add --window`). Neither display waits for it: X11 collects two round trips
    /// between events; Wayland two wl_display.syncs and, on sway, a fresh tree, refused when
    /// they have not come within 2 s.
    func startSync(_ id: Int)
    /// The display's part of `status`.
    func status() -> DisplayStatus
    /// Asks whether another program holds the pointer now (an open menu, a launcher): a
    /// click then goes to it and never reaches the daemon. Answered by `.pointerGrab(id, ...)`
    /// from `nextInput()`, never waited for (for `hit`).
    func probePointerGrab(_ id: Int)

    /// `pick`: the next click anywhere names the window under it, through `done` (called
    /// once, on the loop: the window, or why nothing was picked). Refused where the display
    /// cannot (X11: clickawayctl pick grabs the pointer itself).
    func startPick(within milliseconds: Int, _ done: @escaping (Result<PickReply, Refusal>) -> Void) throws(Refusal)
    /// Ends a pick under way without an answer: whoever asked is gone (`clickawayctl pick`
    /// interrupted), and the next click must not be taken for it.
    func cancelPick()
    /// A new configuration was accepted: windows are matched again, the backend setting followed.
    /// Returns what of it the display cannot apply (a backend it cannot switch to), logged and
    /// kept by the daemon as the last error; nil when all is applied.
    func configurationReplaced(_ model: ClickModel, backend: Backend) -> String?
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
    case escapeKey(EscapeKey)
    /// Windows, their roles or places, or what the interception needs changed: refresh.
    case changed
    /// The outputs changed (`Display.outputs`).
    case outputsChanged
    /// The server refused to close a dismissed popup's window (`close`): it stays.
    case closeRefused(UInt32)
    /// The `startSync(id)` is done, or why it failed.
    case synced(Int, failure: String?)
    /// The answer to `probePointerGrab(id)`: why clicks go to another program now, nil when
    /// none holds the pointer or the display cannot tell.
    case pointerGrab(Int, heldBy: String?)
    /// The interception met something: `takeInterceptionNotices()` says what. (No payload:
    /// every input is copied on the click path, and a larger one costs each click.)
    case intercepted
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
    public var token: InputToken

    public init(isPress: Bool, button: UInt8, x: Int32, y: Int32, time: Int64, releaseGoesElsewhere: Bool,
                token: InputToken = InputToken()) {
        self.isPress = isPress
        self.button = button
        self.x = x
        self.y = y
        self.time = time
        self.releaseGoesElsewhere = releaseGoesElsewhere
        self.token = token
    }
}

/// A press of the Escape key.
public struct EscapeKey: Sendable, Equatable {
    /// Milliseconds on the display's clock.
    public var time: Int64
    public var token: InputToken

    public init(time: Int64, token: InputToken = InputToken()) {
        self.time = time
        self.token = token
    }
}

/// The display's own reference to an input it handed out, given back with the answer: what
/// the display needs to answer it, so that it never has to remember "the click just handed
/// out" (and a click answered late or out of turn is still answered right).
public struct InputToken: Sendable, Equatable {
    /// X11: the window the event was reported on (the root's grab, the shield); Wayland: the
    /// number of the click among those read from the overlay.
    public var window: UInt32
    /// X11: the server's time of the event, which AllowEvents names.
    public var stamp: UInt32
    /// X11: the modifier and button state just before the event.
    public var state: UInt16

    public init(window: UInt32 = 0, stamp: UInt32 = 0, state: UInt16 = 0) {
        self.window = window
        self.stamp = stamp
        self.state = state
    }
}

/// What dismissed popups: a click, or the Escape key.
extension Display {
    public func startPick(within milliseconds: Int, _ done: @escaping (Result<PickReply, Refusal>) -> Void) throws(Refusal) {
        throw Refusal("the daemon picks windows on sway only; on X11 clickawayctl pick grabs the pointer itself")
    }

    public func cancelPick() {}
}

public enum DismissTrigger: Sendable {
    case click(Click, Decision)
    case escapeKey(EscapeKey, EscapeOutcome)
    /// `clickawayctl dismiss`, at `time` on the display's clock.
    case request(time: Int64)

    /// When it happened, on the display's clock.
    public var time: Int64 {
        switch self {
        case .click(let click, _): click.time
        case .escapeKey(let key, _): key.time
        case .request(let time): time
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
