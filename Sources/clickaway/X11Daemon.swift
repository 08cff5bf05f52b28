import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayX11
import Glibc
import Logging

/// The daemon on an X server: windows from the X tree, clicks through SYNC grabs on the
/// root or through the shield window, Escape through a key grab.
final class X11Daemon: Daemon {
    let x: XConnection
    let tracker: WindowTracker
    let grabs: Grabs
    let escape: EscapeKey
    let clock: ServerClock
    /// How clicks reach the daemon: grabs on the root, or the shield window.
    private(set) var interception: Interception = .grab
    var shield: ShieldWindow?
    /// Why `auto` left the grab mode for the shield, once it has.
    var fallbackReason: String?
    private var screen: Rect
    /// A press swallowed on the shield whose release has not come yet: the shield stays up
    /// until then, because unmapping it would end the grab and send the release on.
    private var shieldHoldsAClick = false
    /// Whether the pointer is over the shield rather than in a hole (its crossing events).
    private var pointerOnShield = false

    enum Interception: String {
        case grab = "x11-grab"
        case shield = "x11-shield"
    }

    init(x: XConnection, config: LoadedConfig, configFile: String?, backend: Backend?, loop: PollLoop, control: ControlServer,
         notifier: SystemdNotifier?, logger: Logger) throws(XError) {
        self.x = x
        screen = x.screenRect
        clock = try x.calibrateClock()
        // The grab mode needs only the core protocol; RandR (1.3) places `output = ...`
        // rectangles and follows screen changes, and its absence costs only that.
        do {
            let version = try x.requireRandR()
            logger.debug("RandR \(version)")
        } catch {
            logger.warning("\(error): rectangles with output = \"...\" cannot be placed and screen changes are not followed")
        }
        tracker = WindowTracker(x: x, model: config.model, logger: logger)
        grabs = Grabs(x: x, logger: logger)
        escape = EscapeKey(x: x, grabs: grabs, logger: logger)
        super.init(config: config, configFile: configFile, backend: backend, outputs: (try? x.outputs()) ?? [:],
                   windows: tracker, loop: loop, control: control, notifier: notifier, logger: logger)
        // SubstructureNotify on root may be selected by any number of clients; ButtonPress may not.
        if let error = x.check(x.selectInput(x.root, .substructureNotify)) {
            throw .request("ChangeWindowAttributes", error)
        }
        _ = x.check(x.selectRandrScreenChange(x.root))
        try useBackend(effectiveBackend)
        try tracker.scan(now: clock.now())
        refresh()
    }

    /// x11-grab and auto start with grabs on the root; x11-shield needs XFixes 2 and fails
    /// plainly without it. The display is chosen at start: a reload to `wayland` keeps X.
    private func useBackend(_ backend: Backend) throws(XError) {
        switch backend {
        case .x11Shield:
            try enterShieldMode()
        case .wayland:
            logger.error("backend = \"wayland\" takes effect when clickaway starts again; keeping \(interception.rawValue) on \(x.display)")
        case .auto, .x11Grab:
            if backend == .auto && fallbackReason != nil { return }
            shield?.update(active: false, holes: [])
            shieldHoldsAClick = false
            pointerOnShield = false
            interception = .grab
        }
    }

    /// `auto` after a refused grab: the shield needs no grab on the root, so it works where
    /// another client holds one. Said once, in the log and in `status`.
    /// Returns whether the shield now takes the clicks.
    private func fallBackToShield(because reason: String) -> Bool {
        do {
            try enterShieldMode()
        } catch {
            logger.error("a grab was refused and the shield mode is not available either (\(error)); staying with grabs")
            return false
        }
        fallbackReason = reason
        logger.warning("switching to the shield mode (backend = \"auto\") because a grab was refused: \(reason)")
        broadcast("backend", [("backend", .string(Interception.shield.rawValue)), ("reason", .string(reason))])
        return true
    }

    /// The shield (made the first time) takes clicks instead of grabs on the root.
    private func enterShieldMode() throws(XError) {
        if shield == nil { shield = try ShieldWindow(x: x, screen: screen, logger: logger) }
        grabs.release()
        interception = .shield
    }

    // MARK: - The display

    override var displayName: String { x.display }
    override var interceptionName: String { interception.rawValue }
    override var isIntercepting: Bool { grabs.isGrabbing || shield?.mapped == true }
    override var displayDescriptor: Int32 { x.fileDescriptor }
    override var displayFailure: String? { x.connectionError.map { "\($0)" } }
    override func now() -> Int64 { clock.now() }
    override func flushDisplay() { x.flush() }

    override func handleDisplayEvents() {
        while let event = x.pollEvent() { handle(event) }
    }

    /// Answers after one round trip to the X server and after handling every event the
    /// server sent before it: the caller then sees the daemon in a settled state.
    override func syncDisplay() -> String? {
        do {
            try x.sync()
            while let event = x.pollQueuedEvent() { handle(event) }
            // A second round trip: the AllowEvents and dismiss requests those events caused
            // have been processed by the server when the caller hears back.
            try x.sync()
            return nil
        } catch {
            return "X server round trip failed: \(error)"
        }
    }

    override func configurationReplaced() {
        grabs.release()
        do {
            try useBackend(effectiveBackend)
        } catch {
            logger.error("cannot switch to backend \(effectiveBackend.rawValue): \(error); keeping \(interception.rawValue)")
        }
    }

    override func unavailable(in model: ClickModel) -> [String] {
        Self.windowMatchUsers(in: model) { $0.appId != nil }.map {
            "\($0) matches by app_id, which only Wayland windows have: it never matches on the X server \(x.display) "
                + "(X windows are matched by class, instance, title and type)"
        }
    }

    override func releaseDisplay() {
        grabs.release()
        escape.release()
        shield = nil
    }

    // MARK: - X events

    func handle(_ event: XEvent) {
        switch event {
        case .buttonPress(let e): press(e)
        case .buttonRelease(let e): release(e)
        case .keyPress(let e) where escape.matches(e): escapePressed(e)
        case .unmapNotify(let e) where e.window == shield?.window:
            // Another client unmapped it: it must come back while popups are open.
            shield?.noteUnmapped()
            pointerOnShield = false
            refresh()
        case .enterNotify(let e) where e.window == shield?.window:
            shield?.closePinhole()
            pointerEntered(shield: true)
            x.flush()
        case .leaveNotify(let e) where e.window == shield?.window && e.mode != .grab:
            // A grab taking the pointer (mode Grab) leaves it where it is.
            pointerEntered(shield: false)
        case .randrScreenChange:
            // Not the event's size: RandR swaps it when the first CRTC is rotated.
            if let root = try? x.getGeometry(x.root) { screen = Rect(x: 0, y: 0, width: root.rect.width, height: root.rect.height) }
            shield?.resize(to: screen)
            engine.setOutputs((try? x.outputs()) ?? [:])
            refresh()
        case .error(let error):
            // Requests about windows that vanished (a popup closed mid-click) end here.
            logger.debug("X error", metadata: ["error": "\(error)"])
        default:
            if tracker.apply(event, now: clock.now()) { refresh() }
            if interception == .shield { shield?.keepOnTop(stacking: tracker.stacking, now: MonotonicClock.milliseconds()) }
        }
    }

    /// The press path: decide from memory, answer, flush; only then act on the decision.
    private func press(_ e: ButtonEvent) {
        let decision = engine.press(button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time))
        let onShieldGrab = e.window == shield?.window
        var windowUnder: ChildOfRootQuery?
        if decision.click == .swallow {
            x.allowEvents(.asyncPointer, time: e.time)
            shieldHoldsAClick = onShieldGrab
        } else if let shield, onShieldGrab || shield.mapped {
            // Buttons 1-3 focus on a click; the wheel does not.
            windowUnder = shield.replay(e, findWindowUnder: onShieldGrab && e.button <= 3)
        } else {
            x.allowEvents(.replayPointer, time: e.time)
        }
        x.flush()
        if let windowUnder { activate(under: windowUnder, time: e.time) }
        // The replayed press first, the dismissal after: on a shared CPU, let the X server
        // deliver it before this process goes on to unmap and ungrab (BENCHMARKS.md, case 4).
        if decision.dismissCount > 0 && decision.click != .swallow { sched_yield() }
        var dismissed = engine.dismissed
        if decision.awaitsRelease && decision.click != .swallow {
            // A replayed press's release goes to the window under it, not to us: decide now.
            if let r = engine.release(button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time)), r.dismissCount > 0 {
                dismissed += engine.dismissed
            }
        }
        act(on: dismissed, decision: decision, button: e.button, x: e.rootX, y: e.rootY, time: e.time)
    }

    /// Escape while a popup with `escape = true` is open: answer the frozen keyboard first,
    /// then dismiss the topmost such popup and the popups nested in it.
    private func escapePressed(_ e: KeyEvent) {
        guard let target = engine.open.last(where: { config.model.popups[Int($0.popup)].escape }) else {
            x.allowEvents(.replayKeyboard, time: e.time)
            x.flush()
            return
        }
        let spec = config.model.popups[Int(target.popup)]
        x.allowEvents(spec.escapeKey == .swallow ? .asyncKeyboard : .replayKeyboard, time: e.time)
        x.flush()
        let below = Set(descendants(of: target.popup))
        dismiss([target] + engine.open.filter { below.contains($0.popup) }, cause: DismissCause(reason: "escape", button: 0, x: 0, y: 0, time: e.time,
                                                       click: spec.escapeKey.rawValue))
    }

    /// Reaches us only while we hold the pointer after a swallowed press.
    private func release(_ e: ButtonEvent) {
        let wasHolding = shieldHoldsAClick
        // The shield keeps holding while another button is still down (Button1Mask is 1 << 8).
        let otherButtonsDown = e.state & 0x1F00 & ~(UInt16(0x80) << UInt16(e.button)) != 0
        shieldHoldsAClick = wasHolding && otherButtonsDown
        if let decision = engine.release(button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time)) {
            act(on: engine.dismissed, decision: decision, button: e.button, x: e.rootX, y: e.rootY, time: e.time)
        }
        if wasHolding && !shieldHoldsAClick { refresh() }
    }

    override func closeWindow(_ client: UInt32, _ spec: PopupSpec, cause: DismissCause) {
        switch spec.dismiss {
        case .close:
            if tracker.trackedClient(client)?.supportsDelete == true {
                x.sendDeleteWindow(client, time: cause.time)
            } else {
                logger.warning("window does not support WM_DELETE_WINDOW, so \"close\" cannot ask it to close; unmapping it instead (set dismiss = \"kill\" or a command to choose otherwise)", metadata: [
                    "popup": "\(spec.name)", "window": "\(hex(client))",
                ])
                x.unmapWindow(client)
            }
        case .unmap:
            x.unmapWindow(client)
        case .kill:
            x.killClient(client)
        case .command:
            break  // run by Daemon.dismiss
        }
    }

    // MARK: - Interception

    /// Grabs on the root for the open popups' buttons, or the shield with the engine's
    /// holes; Escape grabbed while a popup that wants it is open.
    override func updateInterception() {
        updateClickInterception()
        let wantsEscape = engine.open.contains { config.model.popups[Int($0.popup)].escape }
        for sentence in escape.update(wanted: wantsEscape) {
            lastError = sentence
            broadcast("grab_refused", [("key", .string("Escape")), ("message", .string(sentence))])
        }
    }

    private func updateClickInterception() {
        let active = !engine.open.isEmpty
        var wanted = ButtonSet(bits: 0)
        for o in engine.open { wanted.bits |= config.model.popups[Int(o.popup)].buttons.bits }
        if interception == .shield, let shield {
            shield.update(active: active || shieldHoldsAClick, holes: active ? engine.shieldHoles(screen: screen) : [])
            // Over the shield, grabs on the root take the clicks that may focus a window, so
            // that one let through reaches the window manager's grabs (ShieldWindow.replay).
            // In a hole there are none: clicks there never wait for the daemon.
            wanted.bits |= ButtonSet(bits: 0b1110).bits
            for (combo, error) in grabs.update(to: active && shield.mapped && pointerOnShield ? wanted : ButtonSet(bits: 0)) {
                logger.debug("\(grabs.refusalSentence(combo, error, .shieldKeepsThem))")
            }
            return
        }
        let refused = grabs.update(to: wanted)
        guard let first = refused.first else { return }
        if effectiveBackend == .auto, fallBackToShield(because: grabs.refusalSentence(first.0, first.1, .shieldTakesThem)) {
            report(refused, .shieldTakesThem)
            updateClickInterception()
        } else {
            report(refused, .notDismissing)
        }
    }

    private func report(_ refused: [(Grabs.Combination, XErrorInfo)], _ consequence: Grabs.Consequence) {
        for (combo, error) in refused {
            let sentence = grabs.refusalSentence(combo, error, consequence)
            if consequence == .notDismissing { logger.error("\(sentence)") } else { logger.warning("\(sentence)") }
            lastError = sentence
            broadcast("grab_refused", [
                ("button", .int(Int64(combo.button))), ("modifiers", .string(grabs.describe(combo.modifiers))),
                ("error", .string(error.name)), ("message", .string(sentence)),
            ])
        }
    }

    /// The pointer crossed into the shield or out of it into a hole: grabs on the root while
    /// it is over the shield (see `updateClickInterception`).
    private func pointerEntered(shield entered: Bool) {
        guard entered != pointerOnShield else { return }
        pointerOnShield = entered
        guard interception == .shield else { return }
        updateClickInterception()
        x.flush()
    }

    /// After a press let through from the shield's own grab, which no window manager grab
    /// saw: asks the window manager to activate the client under it, as a click would have
    /// (EWMH; a window manager without it, and the bare root, get nothing). Runs after the
    /// answer to the press is flushed: the round trip here never holds the pointer.
    private func activate(under query: ChildOfRootQuery, time: Timestamp) {
        do {
            guard let top = try x.childOfRoot(query), top != shield?.window,
                  let client = try tracker.client(of: top) else { return }
            x.requestActivation(client, time: time)
            logger.debug("asked the window manager to activate the window under a click let through the shield",
                         metadata: ["window": "\(hex(client))"])
        } catch {
            logger.debug("no window to activate under a click let through the shield: \(error)")
        }
    }

    override func displayStatus() -> (identity: [(String, JSON)], details: [(String, JSON)]) {
        let combos = { (list: [Grabs.Combination]) in
            JSON.array(list.map { .object([("button", .int(Int64($0.button))), ("modifiers", .string(self.grabs.describe($0.modifiers)))]) })
        }
        let refused = JSON.array(grabs.refused.map { combo, error in
            .object([("button", .int(Int64(combo.button))), ("modifiers", .string(grabs.describe(combo.modifiers))),
                     ("error", .string(error.name))])
        })
        return (identity: [
            ("fallback", fallbackReason.map(JSON.string) ?? .null),
            ("display", .string(x.display)),
        ], details: [
            ("grab", .object([
                ("active", .bool(grabs.isGrabbing)),
                ("buttons", .array(grabs.buttons.buttons.map { .int(Int64($0)) })),
                ("held", combos(grabs.held)),
                ("refused", refused),
            ])),
            ("shield", shield.map { s in
                .object([("window", .string(hex(s.window))), ("mapped", .bool(s.mapped)),
                         ("holes", .array(s.holes.map(\.json)))])
            } ?? .null),
            ("escape", .object([
                ("active", .bool(escape.isGrabbing)),
                ("refused", .array(escape.refused.map { .object([("modifiers", .string(grabs.describe($0.modifiers))),
                                                                 ("error", .string($0.error.name))]) })),
            ])),
        ])
    }
}
