internal import ClickawayControl
internal import ClickawayCore
internal import ClickawaySystem
internal import ClickawayWayland
internal import Logging
internal import SystemPackage

/// A Wayland compositor with layer-shell. There are no grabs: a transparent layer surface
/// on the overlay layer covers each output, and its input region is the output minus the
/// engine's holes, so inside clicks go straight to the popup and outside clicks land here.
/// The compositor never waits for us: a swallowed click simply stays on the overlay; a
/// replayed one is sent again after its release, through a wlroots virtual pointer or
/// KWin's fake input. Touch points and pen tips act as button 1.
///
/// Windows come from the compositor's own channel (`CompositorWindows`): sway's IPC when
/// `$SWAYSOCK` is set, a KWin script when KWin is on the session bus; elsewhere only `rect`
/// popups open.
final class WaylandDisplay: Display, PollSource {
    let client: WaylandClient
    private let overlay: Overlay
    private let logger: Logger
    /// Sends replayed clicks; nil when the compositor offers no way to inject input.
    private let replayer: (any InputInjector)?
    /// sway's or KWin's windows; nil on a compositor that tells nothing of them.
    private let compositorWindows: (any CompositorWindows)?
    private let noWindows: NoWindows
    private var knownOutputs: [OutputInfo] = []
    private var outputs: [String: Rect] = [:]
    /// The press of a click that goes on to what is below, until its release arrives: the
    /// overlay holds the pointer, finger or pen until then.
    private var pendingReplays: [OverlayToken.Pressed: Position] = [:]
    /// Clicks read from the overlay, not handed out yet.
    private var clicks: [OverlayClick] = []
    /// The daemon must refresh before the next click: the windows or the outputs changed.
    private var changed = false
    /// Syncs not answered yet, oldest first.
    private var syncs: [WaylandSync] = [] { didSet { syncWait.deadline = syncs.first?.deadline } }
    /// When the oldest sync stops waiting for the compositor.
    private let syncWait = LoopTimer()
    /// `probePointerGrab`s not answered yet.
    private var grabProbes: [Int] = []
    private var outputsChanged = false
    /// Whether a popup is open (the last `intercept`).
    private var popupsOpen = false
    /// When sway's tree is next read while window geometry is in use (see `pollTree`).
    private let nextTreePoll = LoopTimer()
    /// Whether a `prepareRead()` awaits its `readEvents()` or `cancelRead()`.
    private var readPrepared = false
    /// A `pick` under way: the overlay takes every click, and the next press answers it.
    private var picking: ((Result<PickReply, Refusal>) -> Void)?
    private var pickSeconds = 0
    /// When the pick gives up.
    private let pickTimer = LoopTimer()
    /// The press that answered a pick: its release stays on the overlay too.
    private var pickRelease: OverlayToken.Pressed?
    /// The holes the engine asked for last (`intercept`), put back after a pick.
    private var engineHoles: [Rect]?
    private var broken: String?

    /// Connects the overlay (layer-shell is required: GNOME, for one, does not offer it),
    /// the replay injector and where windows come from: sway's IPC at `swaySocket`, or
    /// else KWin on the session bus at `sessionBus` (its script written into `runtimeDirectory`).
    public init(client: WaylandClient, model: ClickModel, swaySocket: String?, sessionBus: String?, runtimeDirectory: String?,
                logger: Logger) throws {
        self.client = client
        self.logger = logger
        // A press wakes the loop onto the CPU at once rather than at the compositor's next tick.
        if let failure = ShortSlices.request() {
            logger.debug("the loop runs with the default time slices: \(failure)")
        }
        overlay = try Overlay(client: client)
        do {
            replayer = try client.makeInjector()
        } catch {
            logger.warning("\(error): clicks that should be replayed are swallowed instead")
            replayer = nil
        }
        var kwinFailure: String?
        if let swaySocket {
            compositorWindows = try SwayWindows(socketPath: swaySocket, model: model, logger: logger)
        } else if let sessionBus, let runtimeDirectory {
            do {
                compositorWindows = try KWinWindows(busAddress: sessionBus, runtimeDirectory: runtimeDirectory, model: model, logger: logger)
            } catch {
                if error.isRunning {
                    logger.error("cannot follow KWin's windows: \(error.reason)")
                    kwinFailure = error.reason
                } else {
                    logger.debug("no windows from KWin: \(error.reason)")
                }
                compositorWindows = nil
            }
        } else {
            compositorWindows = nil
        }
        noWindows = NoWindows(unavailable: kwinFailure.map { "KWin's windows cannot be followed (\($0)): only --rect popups work here" }
            ?? Self.withoutWindows)
        try client.connection.roundtrip()
        followOutputs()
        if let broken { throw WaylandError.connectionLost(display: client.connection.display, reason: broken) }
    }

    private var name: String { client.connection.display }

    public var state: DisplayState {
        DisplayState(
            kind: .wayland, name: name, interception: "wayland", isIntercepting: popupsOpen && !overlay.coveredOutputs.isEmpty,
            failure: broken ?? compositorWindows?.failure, outputs: outputs, now: MonotonicClock.milliseconds(), abilities: abilities)
    }

    /// Made once: `state` is asked between clicks, and must not build text each time.
    private lazy var abilities = DisplayAbilities(
        windowsUnavailable: compositorWindows == nil ? noWindows.unavailable : nil,
        escapeUnavailable: "Wayland lets no client take the Escape key",
        unmapUnavailable: "Wayland has no request for it",
        replayUnavailable: replayer == nil ? "the compositor offers neither zwlr_virtual_pointer_manager_v1 nor "
            + "org_kde_kwin_fake_input (KWin offers it only to programs it trusts: see docs/wayland.md)" : nil)
    /// `.lost` was handed out.
    private var lostTold = false

    static let withoutWindows = "windows are found on Wayland only through sway's IPC ($SWAYSOCK) or KWin's scripting "
        + "(KWin on the session bus), neither of which is here: only --rect popups work here"

    public var windows: any WindowSource { compositorWindows ?? noWindows }

    // MARK: - The loop

    public var pollDescriptor: FileDescriptor { client.connection.fileDescriptor }

    /// libwayland's read protocol: only an empty queue may be slept on. Events dispatched
    /// while preparing may bring clicks or outputs: then the loop only looks.
    public func prepareToSleep() -> Bool {
        while broken == nil && !client.connection.prepareRead() { dispatch() }
        guard broken == nil else { return true }
        readPrepared = true
        // Everything handed out has been acted on: a sync's second wl_display.sync goes after it.
        if let sync = syncs.first, sync.wantsSecond(compositorWindows), clicks.isEmpty, !changed, !outputsChanged {
            syncs[0].second = client.connection.syncPoint()
        }
        // A plain flush: a round trip now would wait for the read just announced.
        do { try client.connection.flush() } catch { broken = "\(error)" }
        // Clicks and syncs wait while sway's tree asked for before a press has not come.
        let waitingForTree = treeAsked != nil
        return changed || outputsChanged || !grabProbes.isEmpty || compositorWindows?.hasCloseRefusals == true
            || (!waitingForTree && (!clicks.isEmpty || syncs.first?.canAdvance() == true))
    }

    public func pollReturned(_ readiness: Readiness) {
        guard readPrepared else { return }
        readPrepared = false
        if readiness.isEmpty {
            client.connection.cancelRead()
        } else {
            do { try client.connection.readEvents() } catch { broken = "\(error)" }
        }
    }

    public func register(with loop: PollLoop) {
        loop.add(self)
        compositorWindows?.register(with: loop)
        loop.schedule(nextTreePoll) { [unowned self] _ in pollTree() }
        // Wake the loop when a press stops waiting for sway's tree, or a sync for the
        // compositor; `nextInput` moves them on.
        loop.schedule(treeWait) { _ in }
        loop.schedule(syncWait) { _ in }
        loop.schedule(pickTimer) { [unowned self] _ in
            let done = picking
            endPick()
            done?(.failure(Refusal("nobody clicked within \(pickSeconds) s")))
        }
    }

    /// Runs the listeners of what is queued and takes the clicks and outputs they brought.
    private func dispatch() {
        guard broken == nil else { return }
        do {
            try client.connection.dispatchPending()
        } catch {
            broken = "\(error)"
            return
        }
        let taken = overlay.takeClicks()
        // Before a press is decided, sway's tree is read again: see `askSwayTree`.
        if taken.contains(where: \.isPressed) { askSwayTree() }
        clicks += taken
        followOutputs()
    }

    // MARK: - Clicks

    /// Every click here landed outside the holes, so the engine decides something for it.
    /// Once everything read is handed out, a broken connection (or sway's, KWin's) comes as `.lost`, once.
    public func nextInput() -> DisplayInput? {
        if let input = nextRead() { return input }
        guard !lostTold, broken != nil || compositorWindows?.failure != nil else { return nil }
        lostTold = true
        return .lost
    }

    private func nextRead() -> DisplayInput? {
        if clicks.isEmpty { dispatch() }
        let treeKnown = swayTreeArrived()
        if compositorWindows?.takeChange() == true { changed = true }
        if outputsChanged {
            outputsChanged = false
            return .outputsChanged
        }
        if changed {
            changed = false
            return .changed
        }
        if let refused = compositorWindows?.takeCloseRefusal() { return .closeRefused(refused) }
        guard treeKnown else { return nil }
        while !clicks.isEmpty {
            let click = clicks.removeFirst()
            let pressed = OverlayToken.Pressed(click)
            logger.debug("\(click)")
            if let done = picking, click.isPressed {
                pickRelease = pressed
                endPick()
                if case .pointer = click.device, PointerButton.x11Button(code: click.button) != 1 {
                    done(.failure(Refusal("cancelled with another button than the left one")))
                } else if let view = compositorWindows?.view(at: click.x, click.y) {
                    done(.success(view))
                } else {
                    done(.failure(Refusal("the click at (\(click.x), \(click.y)) was on no window \(compositorWindows?.compositorName ?? "the compositor") shows")))
                }
                continue
            }
            if !click.isPressed, let held = pickRelease, held == pressed {
                pickRelease = nil
                continue
            }
            // A button X11 has no number for cannot be configured, so it dismisses nothing:
            // it goes on, as an unlisted button does.
            guard let button = PointerButton.x11Button(code: click.button) else {
                if click.isPressed { pendingReplays[pressed] = click.position } else { replay(pressed, button: click.button) }
                continue
            }
            return .click(Click(isPress: click.isPressed, button: button, x: click.x, y: click.y, time: MonotonicClock.milliseconds(),
                                releaseGoesElsewhere: false, token: OverlayToken(click, pressed).token))
        }
        if !grabProbes.isEmpty { return .pointerGrab(grabProbes.removeFirst(), heldBy: nil) }
        guard let sync = syncs.first, sync.canAdvance() else { return nil }
        if let failure = broken.map({ "Wayland round trip failed: \($0)" }) ?? sync.lateness(compositorWindows) {
            syncs.removeFirst()
            return .synced(sync.id, failure: failure)
        }
        // The second sync, once the daemon has acted on the inputs that came before the
        // first, is sent as the display is about to sleep (`prepareToSleep`).
        guard let second = sync.second, second.isDone else { return nil }
        syncs.removeFirst()
        return .synced(sync.id, failure: nil)
    }

    /// Nothing waits for an answer: a swallowed click is already eaten, and a click to
    /// replay goes on once its release has come, after the daemon has acted on it.
    public func answer(_ click: Click, with decision: Decision?) {
        let token = OverlayToken(click.token)
        if click.isPress {
            if decision?.click != .swallow { pendingReplays[token.pressed] = token.position }
        } else if token.isCancelled {
            // A touch the compositor took back was not a tap: nothing to send on.
            pendingReplays[token.pressed] = nil
        }
    }

    public func acted(on click: Click) {
        guard !click.isPress else { return }
        let token = OverlayToken(click.token)
        replay(token.pressed, button: token.button)
    }

    /// Wayland lets no client take the Escape key (`DisplayAbilities.escapeUnavailable`).
    public func answerEscape(_ key: EscapeKey, _ outcome: EscapeOutcome) {}

    /// Sends a click whose press was to be replayed again, to whatever is under it now: a
    /// pinhole in the input region at its point, then the click there at the exact point
    /// (motion first: compositors pick the surface under the pointer only on motion), and
    /// the region restored. A touch goes on as a touch where the compositor can inject one
    /// (KWin), else as a click of button 1, as a pen tip does. One connection carries all of
    /// it, so the compositor applies it in this order.
    private func replay(_ pressed: OverlayToken.Pressed, button: UInt32) {
        guard let position = pendingReplays.removeValue(forKey: pressed), let replayer else { return }
        let holes = overlay.holes
        let pixel = position.pixel
        overlay.setHoles(holes + [Rect(x: pixel.x, y: pixel.y, width: 1, height: 1)])
        if case .touch(let id) = pressed, replayer.injectsTouch {
            replayer.tap(at: position, id: UInt32(bitPattern: id))
        } else {
            do {
                try replayer.click(at: position, button: button)
            } catch {
                logger.warning("cannot replay the click at \(position): \(error)")
            }
        }
        overlay.setHoles(holes)
        // The pointer rests where the pinhole was: the next click there is the overlay's.
        replayer.repick()
        flush()
    }

    public func perform(_ request: DisplayRequest) {
        switch request {
        case .close(let window, let spec, _): compositorWindows?.close(window, kill: spec.dismiss == .kill)
        case .sync(let id): startSync(id)
        // No Wayland protocol tells one client about another's grab: answered at once, with none.
        case .probePointerGrab(let id): grabProbes.append(id)
        case .pick(let milliseconds, let done):
            do throws(Refusal) { try startPick(within: milliseconds, done) } catch { done(.failure(error)) }
        case .cancelPick: cancelPick()
        }
    }

    // MARK: - sway windows that move without a word

    /// How often sway's tree is read while window geometry is in use: a window moved or
    /// resized without an event keeps its old rectangle for at most this long (plus sway's
    /// answer), as far as clicks in its old or new place outside it are concerned.
    static let treePollMs: Int64 = 250

    /// How long a press waits for sway's tree at most.
    static let treeCheckMs: Int64 = 250

    /// The tree asked for before the clicks read are handed out: its reply's number and how
    /// long they wait for it.
    private var treeAsked: (ticket: Int, deadline: Deadline, asked: Int64)? { didSet { treeWait.deadline = treeAsked?.deadline } }
    private let treeWait = LoopTimer()

    /// Before a press on the overlay is decided, sway's tree is read again when any window
    /// plays a role: a window moved without an event would otherwise be judged where it
    /// was. The clicks read wait in `clicks` until the tree is there (the loop goes on, and
    /// the compositor does not wait for it: the overlay has the click); a changed tree
    /// refreshes the engine before the press is decided. A sway too slow to answer within
    /// `treeCheckMs` leaves the decision to the tree already known.
    private func askSwayTree() {
        guard let source = compositorWindows, source.movesSilently, source.windowCount > 0 || picking != nil else { return }
        // A press while one waits: the newer tree, by the first press's time limit.
        treeAsked = (source.requestFreshTree(), treeAsked?.deadline ?? .inMilliseconds(Self.treeCheckMs),
                     treeAsked?.asked ?? MonotonicClock.microseconds())
    }

    /// Whether the clicks may be handed out: no tree asked for, or it came, or its time ran out.
    private func swayTreeArrived() -> Bool {
        guard let asked = treeAsked, let source = compositorWindows else { return true }
        let came = source.hasAnswered(asked.ticket)
        guard came || asked.deadline.hasPassed() else { return false }
        treeAsked = nil
        logger.debug("read sway's tree before deciding", metadata: ["microseconds": "\(MonotonicClock.microseconds() - asked.asked)"])
        if !came {
            logger.warning("sway did not send its tree within \(Self.treeCheckMs) ms: deciding the click on the windows as last seen")
        }
        return true
    }

    /// Asks for sway's tree every `treePollMs` while a popup is open and a window plays a
    /// role (a window popup, anchor or exclusion); otherwise no timer runs at all.
    private func pollTree() {
        compositorWindows?.requestTree()
        nextTreePoll.deadline = nil
        scheduleTreePolls()
    }

    private func scheduleTreePolls() {
        guard let source = compositorWindows, source.movesSilently, popupsOpen, source.windowCount > 0 else {
            nextTreePoll.deadline = nil
            return
        }
        if nextTreePoll.deadline == nil { nextTreePoll.deadline = .inMilliseconds(Self.treePollMs) }
    }

    // MARK: - Outputs and the overlay

    /// Outputs come and go: the overlay gets a surface on each new one, `output = "..."`
    /// rectangles move with theirs.
    private func followOutputs() {
        let current = client.outputs
        guard current != knownOutputs else { return }
        knownOutputs = current
        do {
            try overlay.sync()
        } catch {
            logger.error("cannot cover the outputs with the overlay: \(error)")
        }
        logger.info("outputs", metadata: ["outputs": "\(current.map(\.description).joined(separator: ", "))"])
        outputs = Dictionary(current.map { ($0.name, $0.rect) }, uniquingKeysWith: { a, _ in a })
        outputsChanged = true
    }

    /// The input region is everything but the holes; with no popup open, one hole covers
    /// every output and the overlay takes nothing.
    /// The compositor takes the new region from this client's connection, a click from
    /// another's: while popups are open, the region is in place once a sync comes back.
    public func intercept(_ engine: DecisionEngine, showing: Bool) -> Bool {
        popupsOpen = !engine.open.isEmpty
        scheduleTreePolls()
        guard let bounds = client.layoutBounds else { return false }
        let holes = engine.open.isEmpty ? [bounds] : engine.holes(in: bounds)
        engineHoles = holes
        // A pick keeps the whole overlay until its click.
        guard picking == nil, holes != overlay.holes else { return false }
        overlay.setHoles(holes)
        // A click without moving the pointer first goes where the new region says.
        replayer?.repick()
        return popupsOpen
    }

    /// The overlay takes every click until the next press, which names the view under it
    /// (on sway, its tree is read again first, as before a press is decided).
    private func startPick(within milliseconds: Int, _ done: @escaping (Result<PickReply, Refusal>) -> Void) throws(Refusal) {
        guard compositorWindows != nil else { throw Refusal(noWindows.unavailable) }
        guard picking == nil else { throw Refusal("another pick is under way") }
        picking = done
        pickSeconds = (milliseconds + 999) / 1000
        pickTimer.deadline = .inMilliseconds(Int64(milliseconds))
        overlay.setHoles([])
        flush()
        replayer?.repick()
    }

    private func cancelPick() {
        guard picking != nil else { return }
        logger.info("pick ended: clickawayctl pick is gone")
        endPick()
    }

    private func endPick() {
        picking = nil
        pickTimer.deadline = nil
        if let holes = engineHoles ?? client.layoutBounds.map({ [$0] }) { overlay.setHoles(holes) }
        replayer?.repick()
        flush()
    }

    /// The overlay takes its input region from the compositor, which refuses nothing.
    public func takeInterceptionNotices() -> [InterceptionNotice] { [] }

    private func flush() {
        guard broken == nil else { return }
        do { try client.connection.flush() } catch { broken = "\(error)" }
    }

    /// How long a sync waits for the compositor and its windows before it is refused.
    static let syncLimitMs: Int64 = 2000

    private func startSync(_ id: Int) {
        // The windows read here may have changed: the engine sees it (`.changed`) before the sync is answered.
        syncs.append(WaylandSync(id: id, first: client.connection.syncPoint(), windowsTicket: compositorWindows?.requestFreshTree(),
                                 deadline: .inMilliseconds(Self.syncLimitMs)))
    }

    public func configure(_ model: ClickModel, _ change: ModelChange) -> String? {
        switch change {
        case .reloaded: compositorWindows?.replaceModel(model, readingTree: true)
        case .runtimePopups(let lookup): compositorWindows?.replaceModel(model, readingTree: lookup != .none)
        }
        return nil
    }

    /// The overlay and its surfaces go with the connection; KWin's script is unloaded.
    public func release() { compositorWindows?.stop() }

    public func status() -> DisplayStatus {
        .wayland(WaylandStatus(
            display: name,
            overlay: OverlayStatus(
                outputs: overlay.coveredOutputs.map { OverlayStatus.Output(name: $0.name, rect: $0.rect) },
                holes: overlay.holes,
                pointer: client.seat?.hasPointer == true, touch: client.seat?.hasTouch == true,
                tablets: client.seat?.hasTablets == true, replay: replayer?.protocolName),
            windows: compositorWindows?.status))
    }
}

/// What a Wayland click's token holds: where it landed, to the 1/256 pixel the compositor
/// says, what pressed it, its Linux button code, and whether the compositor took the touch
/// back. The press's place is kept (`pendingReplays`) only for a click that goes on.
struct OverlayToken: Equatable {
    /// What a press to send on once released came from: a button, a finger, a pen.
    enum Pressed: Hashable {
        case button(UInt32)
        case touch(Int32)
        case pen

        init(_ click: OverlayClick) {
            self = switch click.device {
            case .pointer: .button(click.button)
            case .touch(let id): .touch(id)
            case .pen: .pen
            }
        }
    }

    var position: Position
    var pressed: Pressed
    var button: UInt32
    var isCancelled: Bool

    init(position: Position, pressed: Pressed, button: UInt32, isCancelled: Bool) {
        self.position = position
        self.pressed = pressed
        self.button = button
        self.isCancelled = isCancelled
    }

    init(_ click: OverlayClick, _ pressed: Pressed) {
        self.init(position: click.position, pressed: pressed, button: click.button, isCancelled: click.isCancelled)
    }

    /// First word: x and y in 1/256 pixels. Second: the button code (low 16 bits), the
    /// device's kind (2 bits) and whether cancelled (1 bit), and a touch point's id or a
    /// button code (high 32 bits).
    init(_ token: InputToken) {
        position = Position(x: Double(Int32(truncatingIfNeeded: token.first >> 32)) / 256,
                            y: Double(Int32(truncatingIfNeeded: token.first)) / 256)
        button = UInt32(token.second & 0xffff)
        isCancelled = token.second & 0x40000 != 0
        let value = UInt32(truncatingIfNeeded: token.second >> 32)
        pressed = switch (token.second >> 16) & 3 {
        case 0: .button(value)
        case 1: .touch(Int32(bitPattern: value))
        default: .pen
        }
    }

    var token: InputToken {
        let (kind, value): (UInt64, UInt32) = switch pressed {
        case .button(let code): (0, code)
        case .touch(let id): (1, UInt32(bitPattern: id))
        case .pen: (2, 0)
        }
        let x = UInt64(UInt32(bitPattern: Int32((position.x * 256).rounded())))
        let y = UInt64(UInt32(bitPattern: Int32((position.y * 256).rounded())))
        return InputToken(x << 32 | y, UInt64(value) << 32 | (isCancelled ? 0x40000 : 0) | kind << 16 | UInt64(button & 0xffff))
    }
}

/// A sync on Wayland, never waited for: a wl_display.sync and, on sway and KWin, the
/// windows as they are now; once both are in and the daemon has acted on the inputs before
/// them, a second wl_display.sync.
struct WaylandSync {
    let id: Int
    let first: SyncPoint
    /// The number of the windows asked for (`CompositorWindows.requestFreshTree`).
    let windowsTicket: Int?
    let deadline: Deadline
    var second: SyncPoint?

    /// Whether `nextInput` has something to do: the second answer came, or the time ran out.
    func canAdvance() -> Bool {
        if let second { return second.isDone || deadline.hasPassed() }
        return deadline.hasPassed()
    }

    /// Whether the second wl_display.sync is due: the first and the windows are in.
    func wantsSecond(_ windows: (any CompositorWindows)?) -> Bool { second == nil && firstIsIn(windows) && !deadline.hasPassed() }

    private func firstIsIn(_ windows: (any CompositorWindows)?) -> Bool {
        first.isDone && (windowsTicket.map { windows?.hasAnswered($0) ?? true } ?? true)
    }

    /// Why the sync is refused: what did not answer in time.
    func lateness(_ windows: (any CompositorWindows)?) -> String? {
        guard deadline.hasPassed() else { return nil }
        if let second { return second.isDone ? nil : "the compositor did not answer within \(WaylandDisplay.syncLimitMs) ms" }
        if !first.isDone { return "the compositor did not answer within \(WaylandDisplay.syncLimitMs) ms" }
        guard !firstIsIn(windows) else { return nil }
        return "\(windows?.compositorName ?? "the compositor") did not send its windows within \(WaylandDisplay.syncLimitMs) ms"
    }
}
