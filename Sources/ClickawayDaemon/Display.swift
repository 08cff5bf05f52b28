public import ClickawayControl
public import ClickawayCore
internal import ClickawaySystem
internal import SystemPackage

/// A display server the daemon takes clicks from, chosen at start: an X server (grabs on the
/// root, or the shield window) or a Wayland compositor with layer-shell (the overlay). Only
/// what differs between servers, in three parts: the input side (`nextInput`, `answer`,
/// `answerEscape`, `acted`), the interceptor (`intercept`, its notices, `release`) and the
/// windows, a read-only `WindowSource` (X11's tree, sway's IPC). The daemon drives it:
///
/// 1. `register(with:)` once: the display's connection first (libwayland's read must be
///    finished before anything else runs), then its other inputs (sway's IPC) and deadlines.
/// 2. `nextInput()` until nil after every wait: the display reads its events, handles what
///    is its own (windows, the shield's crossings, outputs) and hands out the rest. Each
///    click and key carries its own `InputToken`, opaque to the daemon.
/// 3. For each click: the daemon decides it from memory, `answer(_:with:)` sends the answer
///    at once, the daemon acts (dismisses, settles), and `acted(on:)` ends the click.
/// 4. `intercept(_:showing:)` after every change of the open popups: grabs, the shield, the
///    overlay.
///
/// The daemon never asks which display it has: what differs is said by the display, in its
/// `state` (its abilities among it). Each display flushes what it sent before the loop sleeps.
protocol Display: AnyObject {
    /// Adds the display's connection, other inputs and deadlines to the loop: first of all.
    func register(with loop: PollLoop)

    // MARK: The input side

    /// The next thing the daemon must know about, nil once everything read is handled.
    func nextInput() -> DisplayInput?
    /// Answers `click` by its token: no allocation, and nothing waited for before the answer
    /// is flushed. `decision` is nil for a release no press waited on. With the answer the
    /// X11 shield asks which window is under a click it let through, so that the window
    /// manager activates it, as it would have without the shield, once the reply comes.
    func answer(_ click: Click, with decision: Decision?)
    /// Answers the Escape key by its token: passed on or eaten.
    func answerEscape(_ key: EscapeKey, _ outcome: EscapeOutcome)
    /// The daemon has acted on `click` (dismissed, settled the interception): what must come
    /// after that goes now (Wayland: a released click is sent on to what is under it now).
    func acted(on click: Click)

    // MARK: The interceptor

    /// Takes clicks for the engine's open popups, and the Escape key for those that want it
    /// and, where the display can, while `show` draws (`showing`). What another client holds
    /// comes later, once the display has heard (`.intercepted`): never waited for. Returns
    /// true when clicks meet the new interception only once the server has read it, which a
    /// sync tells (Wayland: the overlay's input region grew), false when it is in place as
    /// sent (X11: the server handles the grabs before any later click).
    func intercept(_ engine: DecisionEngine, showing: Bool) -> Bool
    /// What the interception met since last asked: grabs another client holds, `auto` leaving
    /// grabs for the shield. Asked at `.intercepted`.
    func takeInterceptionNotices() -> [InterceptionNotice]
    /// Puts everything back as it was before the daemon started (grabs, the shield), flushed.
    func release()

    // MARK: The windows

    /// The windows on this display that play a role in the configuration; the display keeps
    /// them up to date, the daemon only reads them.
    var windows: any WindowSource { get }

    // MARK: What it is

    /// Its name, interception, clock, outputs, abilities, and whether the connection broke.
    var state: DisplayState { get }
    /// The display's part of `status`.
    func status() -> DisplayStatus

    // MARK: What the daemon asks of it

    /// Does `request`. Nothing is waited for: what answers comes from `nextInput()` or the
    /// request's callback.
    func perform(_ request: DisplayRequest)
    /// The model changed: its windows are matched again. A reload brings the X11 mode it asks
    /// for (the X server follows it); returns what of the reload it cannot apply (a mode it
    /// cannot switch to), logged and kept by the daemon as the last error, nil when all is.
    func configure(_ model: ClickModel, _ change: ModelChange) -> String?
    /// A canvas for `clickawayctl show`, or why this display cannot draw.
    func makeShowCanvas() throws(Refusal) -> any ShowCanvas
}

/// A display whose presses and keys come apart from everything else (X11's input
/// connection), for a thread that waits for them (`PressThread`). The others' come with the
/// rest, and the loop reads them.
protocol PressSource: AnyObject {
    /// What the press thread waits on.
    var pressDescriptor: FileDescriptor { get }
    /// The thread runs, sharing the daemon's state through `lock`: the loop no longer waits
    /// on `pressDescriptor`, and hands the lock over between events when the thread asks.
    /// Called before `Display.register(with:)`.
    func pressThreadStarted(_ thread: ThreadID, sharing lock: StateLock)
    /// On the press thread, the lock held: the next press or key (or the refresh that comes
    /// before it), nil once none is left.
    func nextPress() -> DisplayInput?
    /// After `nextPress` returned nil: whether the display has work of its own for the loop
    /// (a refresh, replies it waits for).
    var pressesLeftWork: Bool { get }
}

/// What a display is, as the daemon and `status` name it.
public struct DisplayState {
    public var kind: DisplayKind
    /// The display as connected to (":1", "wayland-1").
    public var name: String
    /// How clicks are taken now (`x11-grab`, `x11-shield`, `wayland`).
    public var interception: String
    /// Whether clicks go through the daemon now.
    public var isIntercepting: Bool
    /// Why the connection broke, once it has.
    public var failure: String?
    /// The outputs by name, for `output = "..."` rectangles.
    public var outputs: [String: Rect]
    /// Milliseconds on the clock click times are in.
    public var now: Int64
    public var abilities: DisplayAbilities

    public init(kind: DisplayKind, name: String, interception: String, isIntercepting: Bool, failure: String?, outputs: [String: Rect], now: Int64,
                abilities: DisplayAbilities) {
        self.kind = kind
        self.name = name
        self.interception = interception
        self.isIntercepting = isIntercepting
        self.failure = failure
        self.outputs = outputs
        self.now = now
        self.abilities = abilities
    }
}

/// What the daemon asks a display to do; each is answered later, if at all.
public enum DisplayRequest {
    /// Closes a dismissed popup's window by its `close`, `unmap` or `kill` (commands are the
    /// daemon's), for `trigger` (X: WM_DELETE_WINDOW carries its time). A refusal comes as
    /// `.closeRefused`.
    case close(UInt32, PopupSpec, trigger: DismissTrigger)
    /// `.synced(id)` from `nextInput()` once every input the display sent before now has been
    /// handed out and what the daemon sent for them processed (`clickawayctl sync`, `add
    /// --window`). X11 collects two round trips between events; Wayland two
    /// wl_display.syncs and, on sway, a fresh tree, refused when they have not come in 2 s.
    case sync(Int)
    /// Whether another program holds the pointer now (an open menu, a launcher): a click then
    /// goes to it and never reaches the daemon. Answered by `.pointerGrab(id, ...)` (`hit`).
    case probePointerGrab(Int)
    /// `pick`: the next click anywhere names the window under it, through `done` (called
    /// once, on the loop: the window, or why nothing was picked; at once where the display
    /// picks no windows: X11, where clickawayctl pick grabs the pointer itself).
    case pick(withinMs: Int, done: (Result<PickReply, Refusal>) -> Void)
    /// Ends a pick under way without an answer: whoever asked is gone, and the next click
    /// must not be taken for it.
    case cancelPick
}

/// Why the model changed (`Display.configure`).
public enum ModelChange: Sendable, Equatable {
    /// A reload, with the X11 mode its backend asks for (nil: the mode stays, as when the
    /// backend names another display server).
    case reloaded(X11Mode?)
    /// Runtime popups came or went: the windows `lookingAt` names are looked at anew.
    case runtimePopups(lookingAt: WindowLookup)
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
    /// The connection broke (`state.failure` says why): the daemon stops.
    case lost
    /// The `.sync(id)` asked of `perform` is done, or why it failed.
    case synced(Int, failure: String?)
    /// The answer to `.probePointerGrab(id)`: why clicks go to another program now, nil when
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
                token: InputToken) {
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

    public init(time: Int64, token: InputToken) {
        self.time = time
        self.token = token
    }
}

/// The display's own reference to an input it handed out, given back with the answer:
/// opaque to the daemon, which only hands it back. Two words hold what the display needs to
/// answer it (`X11Token`, `OverlayToken`), so that it keeps nothing of what it handed out,
/// and a click answered late or out of turn is still answered right.
public struct InputToken: Sendable, Equatable {
    let first: UInt64
    let second: UInt64

    init(_ first: UInt64 = 0, _ second: UInt64 = 0) {
        self.first = first
        self.second = second
    }
}

/// What dismissed popups: a click, the Escape key, or a request.
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
