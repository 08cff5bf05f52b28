import ClickawayControl
import ClickawayCore
@testable import ClickawayDaemon
import ClickawaySystem
import Logging
import SystemPackage

/// A display that exists only in memory, for the daemon's own logic: the test maps and
/// unmaps windows and queues clicks and keys; the display records every answer, close and
/// interception. Windows are matched by the real `WindowRoster`, so popups, anchors and
/// exclusions are what the configuration makes of them. It claims nothing of X or Wayland.
final class ScriptedDisplay: Display, PollSource, RosterWindowSource {
    /// What the daemon asked the display to do, in order.
    enum Effect: Equatable {
        case answered(press: Bool, button: UInt8, x: Int32, y: Int32, click: ClickOutcome?, reason: Decision.Reason?)
        case acted(press: Bool)
        case escape(EscapeOutcome)
        case closed(window: UInt32, popup: String)
        case intercepting([String])
    }

    let roster: WindowRoster<Void>
    private(set) var effects: [Effect] = []
    private var inputs: [DisplayInput] = []
    /// Milliseconds on the display's clock: the test moves it.
    var clock: Int64 = 10_000
    /// A closed window unmaps itself, as a client honouring WM_DELETE_WINDOW does.
    var windowsCloseWhenAsked = true
    private var serial: UInt32 = 0
    /// The popups the last interception was for.
    private var interceptedFor: [String]?
    /// Every window mapped, whatever its role now.
    private var mapped: [UInt32: (Rect, WindowMatch.Properties)] = [:]

    init(model: ClickModel) {
        roster = WindowRoster(model: model, naming: .hex, logger: Logger(label: "scripted") { _ in SwiftLogNoOpLogHandler() })
    }

    // MARK: - The script

    /// Maps `window` (again: moves it); `family`: the popup window it belongs to (a dialog of it).
    func map(_ window: UInt32, class windowClass: String, at rect: Rect, pid: Int32 = 0, family: UInt32? = nil) {
        let properties = WindowMatch.Properties(windowClass: windowClass, window: window, pid: pid)
        mapped[window] = (rect, properties)
        roster.update(window, window: window, rect: rect, properties: properties, details: (), family: family, now: clock)
        roster.stacking.removeAll { $0 == window }
        roster.stacking.append(window)
        inputs.append(.changed)
    }

    func unmap(_ window: UInt32) {
        mapped[window] = nil
        roster.forget(window)
        roster.stacking.removeAll { $0 == window }
        inputs.append(.changed)
    }

    func press(_ x: Int32, _ y: Int32, button: UInt8 = 1) { click(true, x, y, button) }
    func release(_ x: Int32, _ y: Int32, button: UInt8 = 1) { click(false, x, y, button) }

    func click(_ x: Int32, _ y: Int32, button: UInt8 = 1) {
        press(x, y, button: button)
        release(x, y, button: button)
    }

    private func click(_ isPress: Bool, _ x: Int32, _ y: Int32, _ button: UInt8) {
        serial += 1
        inputs.append(.click(Click(isPress: isPress, button: button, x: x, y: y, time: clock, releaseGoesElsewhere: false,
                                   token: InputToken(UInt64(serial)))))
    }

    func escape() { inputs.append(.escapeKey(EscapeKey(time: clock, token: InputToken()))) }

    /// The server refused to close `window` (sway answering `kill` with an error).
    func refuseClose(_ window: UInt32) { inputs.append(.closeRefused(window)) }

    /// The effects since the last call.
    func takeEffects() -> [Effect] {
        defer { effects = [] }
        return effects
    }

    // MARK: - Display

    let name = "scripted"
    private(set) var isIntercepting = false
    var outputs: [String: Rect] = ["S-1": Rect(x: 0, y: 0, width: 1000, height: 800)]
    /// The display server it stands for, as a reload's backend is compared with.
    var kind = DisplayKind.x11
    var state: DisplayState {
        DisplayState(kind: kind, name: name, interception: "scripted", isIntercepting: isIntercepting, failure: nil, outputs: outputs,
                     now: clock, abilities: DisplayAbilities(processWindowRequirement: "a scripted window must be mapped with its pid"))
    }
    /// The display is its own window source, from the real roster.
    var windows: any WindowSource { self }
    var pollDescriptor: FileDescriptor { FileDescriptor(rawValue: -1) }
    func prepareToSleep() -> Bool { !inputs.isEmpty }
    func pollReturned(_ readiness: Readiness) {}

    func register(with loop: PollLoop) { loop.add(self) }

    func nextInput() -> DisplayInput? { inputs.isEmpty ? nil : inputs.removeFirst() }

    func answer(_ click: Click, with decision: Decision?) {
        effects.append(.answered(press: click.isPress, button: click.button, x: click.x, y: click.y, click: decision?.click,
                                 reason: decision?.reason))
    }

    func acted(on click: Click) { effects.append(.acted(press: click.isPress)) }

    func answerEscape(_ key: EscapeKey, _ outcome: EscapeOutcome) { effects.append(.escape(outcome)) }

    /// How many times the daemon asked for the interception.
    private(set) var intercepts = 0

    /// A display whose interception takes clicks only once it has synced, as Wayland's overlay.
    var interceptionWaitsForSync = false

    /// Whether `show` drew at the last interception.
    private(set) var showing = false

    func intercept(_ engine: DecisionEngine, showing: Bool) -> Bool {
        self.showing = showing
        intercepts += 1
        let open = engine.open.map { engine.model.popups[Int($0.popup)].name }
        isIntercepting = !open.isEmpty
        let changed = open != interceptedFor
        if changed { effects.append(.intercepting(open)) }
        interceptedFor = open
        return interceptionWaitsForSync && changed && !open.isEmpty
    }

    func perform(_ request: DisplayRequest) {
        switch request {
        case .close(let window, let spec, _):
            effects.append(.closed(window: window, popup: spec.name))
            if windowsCloseWhenAsked { unmap(window) }
        case .sync(let id):
            if syncsWait { syncsStarted.append(id) } else { inputs.append(.synced(id, failure: nil)) }
        case .probePointerGrab(let id): inputs.append(.pointerGrab(id, heldBy: pointerHeldBy))
        case .pick(_, let done): done(.failure(Refusal("the scripted display picks nothing")))
        case .cancelPick: break
        }
    }

    /// A display whose syncs take their time, as an X server's round trips do in a burst:
    /// `perform(.sync)` only notes them until `finishSyncs`.
    var syncsWait = false
    private(set) var syncsStarted: [Int] = []

    /// The syncs started are done: after the inputs queued before now.
    func finishSyncs(failure: String? = nil) {
        inputs += syncsStarted.map { .synced($0, failure: failure) }
        syncsStarted = []
    }

    func status() -> DisplayStatus {
        .wayland(WaylandStatus(display: name, overlay: OverlayStatus(outputs: [], holes: [], pointer: true, touch: false,
                                                                     tablets: false, replay: nil), windows: nil))
    }
    /// Another program holding the pointer, as `hit` is told.
    var pointerHeldBy: String?
    /// What the display hears of its grabs once the server has answered (X11's refusals).
    func heard(_ notice: InterceptionNotice) {
        notices.append(notice)
        inputs.append(.intercepted)
    }
    private var notices: [InterceptionNotice] = []
    func takeInterceptionNotices() -> [InterceptionNotice] {
        defer { notices = [] }
        return notices
    }
    /// What a reload's configuration asks that this display says it cannot apply.
    var unapplied: String?
    /// The last change `configure` was told of.
    private(set) var lastChange: ModelChange?

    func configure(_ model: ClickModel, _ change: ModelChange) -> String? {
        lastChange = change
        rematch(model)
        guard case .reloaded = change else { return nil }
        return unapplied
    }

    /// Every mapped window looked at again, as the X tracker does with the windows it has seen.
    private func rematch(_ model: ClickModel) {
        roster.rematch(model)
        for (window, (rect, properties)) in mapped {
            roster.update(window, window: window, rect: rect, properties: properties, details: (), now: clock)
        }
    }

    func popupWindow(for window: UInt32) -> Result<UInt32, Refusal> {
        mapped[window] != nil ? .success(window) : .failure(Refusal("no window \(window) is mapped"))
    }

    func makeShowCanvas() throws(Refusal) -> any ShowCanvas { throw Refusal("the scripted display draws nothing") }
    func release() { isIntercepting = false }
}
