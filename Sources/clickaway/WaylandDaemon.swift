import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayWayland
import Logging
import SystemPackage

/// The daemon on a Wayland compositor with layer-shell. There are no grabs: a transparent
/// layer surface on the overlay layer covers each output, and its input region is the
/// output minus the engine's holes, so inside clicks go straight to the popup and outside
/// clicks land here. The compositor never waits for us: a swallowed click simply stays on
/// the overlay; a replayed one is sent again after its release, through a wlroots virtual
/// pointer or KWin's fake input. Touch points and pen tips act as button 1.
///
/// Windows come from sway's IPC when `$SWAYSOCK` is set; elsewhere only `rect` popups open.
final class WaylandDaemon: Daemon {
    let client: WaylandClient
    let overlay: Overlay
    /// Sends replayed clicks; nil when the compositor offers no way to inject input.
    private let replayer: (any InputInjector)?
    private let sway: SwayWindows?
    private var knownOutputs: [OutputInfo] = []
    /// What a press to send on once released came from: a button, a finger, a pen.
    private enum Pressed: Hashable {
        case button(UInt32)
        case touch(Int32)
        case pen
    }
    /// The press of a click that goes on to what is below, until its release arrives.
    private var pendingReplays: [Pressed: Position] = [:]
    /// When sway's tree is next read while window geometry is in use (see `pollTree`).
    private var nextTreePoll: Deadline?
    /// Whether a `prepareRead()` awaits its `readEvents()` or `cancelRead()`.
    private var readPrepared = false
    /// The input region shrank: the compositor must have it before "opened" is announced.
    private var regionShrank = false
    private var failure: String?

    init(client: WaylandClient, config: LoadedConfig, configFile: String?, backend: Backend?, loop: PollLoop, control: ControlServer,
         notifier: SystemdNotifier?, swaySocket: String?, logger: Logger) throws {
        self.client = client
        // Without layer-shell there is no overlay: GNOME, for one, does not offer it.
        overlay = try Overlay(client: client)
        do {
            replayer = try client.makeInjector()
        } catch {
            logger.warning("\(error): clicks that should be replayed are swallowed instead")
            replayer = nil
        }
        let windows: any WindowSource
        if let swaySocket {
            let tracker = try SwayWindows(socketPath: swaySocket, model: config.model, logger: logger)
            sway = tracker
            windows = tracker
        } else {
            sway = nil
            windows = NoWindows()
        }
        super.init(config: config, configFile: configFile, backend: backend, outputs: [:], windows: windows,
                   loop: loop, control: control, notifier: notifier, logger: logger)
        sway?.onChange = { [unowned self] in refresh() }
        try client.connection.roundtrip()
        followOutputs()
        if let failure { throw WaylandError.connectionLost(display: client.connection.display, reason: failure) }
        refresh()
    }

    // MARK: - The display

    override var displayName: String { client.connection.display }
    override var interceptionName: String { "wayland" }
    override var isIntercepting: Bool { !engine.open.isEmpty && !overlay.coveredOutputs.isEmpty }
    override var displayDescriptor: Int32 { client.connection.fileDescriptor.rawValue }
    override var displayFailure: String? { failure ?? sway?.failure }
    override func now() -> Int64 { MonotonicClock.milliseconds() }
    override var extraDescriptors: [FileDescriptor] { sway?.descriptors ?? [] }

    override func handleDisplayEvents() {
        guard failure == nil else { return }
        do {
            try client.connection.dispatchPending()
        } catch {
            failure = "\(error)"
            return
        }
        handleClicks()
        followOutputs()
        pollTree()
    }

    override var displayDeadline: Deadline? { nextTreePoll }

    override func flushDisplay() {
        guard failure == nil else { return }
        do {
            if regionShrank {
                regionShrank = false
                try client.connection.roundtrip()
            } else {
                try client.connection.flush()
            }
        } catch {
            failure = "\(error)"
        }
    }

    /// libwayland's read protocol: only an empty queue may be slept on.
    override func prepareToWait() {
        while failure == nil && !client.connection.prepareRead() { handleDisplayEvents() }
        guard failure == nil else { return }
        readPrepared = true
        // A plain flush: a round trip now would wait for the read just announced.
        do { try client.connection.flush() } catch { failure = "\(error)" }
    }

    override func finishWait(readable: Bool) {
        guard readPrepared else { return }
        readPrepared = false
        if readable {
            do { try client.connection.readEvents() } catch { failure = "\(error)" }
        } else {
            client.connection.cancelRead()
        }
    }

    override func extraDescriptorReadable() { sway?.read() }

    /// One round trip: the compositor has handled every request sent before, and every event
    /// it sent before is handled here; a second one for the requests those events caused.
    override func syncDisplay() -> String? {
        do {
            try client.connection.roundtrip()
            handleDisplayEvents()
            // The tree read here may have changed: the engine must see it, not only the tracker.
            if sway?.sync() == true { refresh() }
            try client.connection.roundtrip()
            handleDisplayEvents()
        } catch {
            failure = "\(error)"
        }
        return failure.map { "Wayland round trip failed: \($0)" }
    }

    override func configurationReplaced() {
        if effectiveBackend == .x11Grab || effectiveBackend == .x11Shield {
            logger.error("backend = \"\(effectiveBackend.rawValue)\" takes effect when clickaway starts again; keeping wayland on \(displayName)")
        }
    }

    override func unavailable(in model: ClickModel) -> [String] {
        var sentences: [String] = []
        if sway == nil {
            sentences += Self.windowMatchUsers(in: model) { _ in true }.map {
                "\($0) matches windows, which clickaway finds on Wayland only through sway's IPC, and $SWAYSOCK is not set: "
                    + "it never matches here (a rect popup with `clickawayctl open` works on every compositor)"
            }
        }
        for p in model.popups {
            if p.escape {
                sentences.append("popup \"\(p.name)\" has escape = true, but Wayland lets no client take the Escape key: "
                                 + "bind Escape in the compositor to `clickawayctl close \(p.name)` instead")
            }
            if case .window = p.source, p.dismiss == .unmap {
                sentences.append("popup \"\(p.name)\" has dismiss = \"unmap\", which Wayland has no request for: "
                                 + "its window is closed instead (as with \"close\")")
            }
            if replayer == nil, p.outsideClick == .replay {
                sentences.append("popup \"\(p.name)\" has outside_click = \"replay\", but the compositor offers neither "
                                 + "zwlr_virtual_pointer_manager_v1 nor org_kde_kwin_fake_input (KWin offers it only to "
                                 + "programs it trusts: see the README): its outside clicks are swallowed")
            }
        }
        return sentences
    }

    override func closeWindow(_ window: UInt32, _ spec: PopupSpec, cause: DismissCause) {
        sway?.close(window, kill: spec.dismiss == .kill)
    }

    override func displayStatus() -> (identity: [(String, JSON)], details: [(String, JSON)]) {
        return (identity: [("display", .string(displayName))], details: [
            ("overlay", .object([
                ("outputs", .array(overlay.coveredOutputs.map { .object([("name", .string($0.name)), ("rect", $0.rect.json)]) })),
                ("holes", .array(overlay.holes.map(\.json))),
                ("pointer", .bool(client.seat?.hasPointer == true)),
                ("touch", .bool(client.seat?.hasTouch == true)),
                ("tablets", .bool(client.seat?.hasTablets == true)),
                ("replay", replayer.map { .string($0.protocolName) } ?? .null),
            ])),
            ("sway", sway.map { .object([("socket", .string($0.socketPath)), ("windows", .int(Int64($0.windowCount)))]) } ?? .null),
        ])
    }

    // MARK: - Clicks

    /// Every click here landed outside the holes, so the engine decides something for it.
    /// Nothing waits for an answer: a swallowed click is already eaten, and a click to
    /// replay goes on once its release has come (the overlay holds the pointer, finger or
    /// pen until then). A touch point or a pen tip is button 1.
    private func handleClicks() {
        let clicks = overlay.takeClicks()
        guard !clicks.isEmpty else { return }
        if clicks.contains(where: \.isPressed) { checkSwayTree() }
        for click in clicks {
            let pressed: Pressed = switch click.device {
            case .pointer: .button(click.button)
            case .touch(let id): .touch(id)
            case .pen: .pen
            }
            logger.debug("\(click)")
            // A button X11 has no number for cannot be configured, so it dismisses nothing:
            // it goes on, as an unlisted button does.
            guard let button = PointerButton.x11Button(code: click.button) else {
                if click.isPressed { pendingReplays[pressed] = click.position } else { replay(pressed, click) }
                continue
            }
            let time = now()
            if click.isPressed {
                let decision = engine.press(button: button, x: click.x, y: click.y, time: time)
                if decision.click != .swallow { pendingReplays[pressed] = click.position }
                act(on: engine.dismissed, decision: decision, button: button, x: click.x, y: click.y, time: click.time)
            } else {
                if let decision = engine.release(button: button, x: click.x, y: click.y, time: time) {
                    act(on: engine.dismissed, decision: decision, button: button, x: click.x, y: click.y, time: click.time)
                }
                // A touch the compositor took back was not a tap: nothing to send on.
                if click.isCancelled { pendingReplays[pressed] = nil } else { replay(pressed, click) }
            }
        }
    }

    /// Sends a click whose press was to be replayed again, to whatever is under it now: a
    /// pinhole in the input region at its point, then the click there at the exact point
    /// (motion first: compositors pick the surface under the pointer only on motion), and
    /// the region restored. A touch goes on as a touch where the compositor can inject one
    /// (KWin), else as a click of button 1, as a pen tip does. One connection carries all of
    /// it, so the compositor applies it in this order.
    private func replay(_ pressed: Pressed, _ release: OverlayClick) {
        guard let position = pendingReplays.removeValue(forKey: pressed), let replayer else { return }
        let holes = overlay.holes
        let pixel = position.pixel
        overlay.setHoles(holes + [Rect(x: pixel.x, y: pixel.y, width: 1, height: 1)])
        if case .touch(let id) = pressed, replayer.injectsTouch {
            replayer.tap(at: position, id: UInt32(bitPattern: id))
        } else {
            do {
                try replayer.click(at: position, button: release.button)
            } catch {
                logger.warning("cannot replay the click at \(position): \(error)")
            }
        }
        overlay.setHoles(holes)
        // The pointer rests where the pinhole was: the next click there is the overlay's.
        replayer.repick()
        flushDisplay()
    }

    // MARK: - sway windows that move without a word

    /// How often sway's tree is read while window geometry is in use: a window moved or
    /// resized without an event keeps its old rectangle for at most this long (plus sway's
    /// answer), as far as clicks in its old or new place outside it are concerned.
    static let treePollMs: Int64 = 250

    /// Before a press on the overlay is decided, sway's tree is read again when any window
    /// plays a role: a window moved without an event would otherwise be judged where it
    /// was. One round trip on the IPC; the compositor does not wait for it. A changed tree
    /// refreshes the engine (through `onChange`) before the press is decided. A sway too
    /// slow to answer within `treeCheckMs` leaves the decision to the tree already known.
    private func checkSwayTree() {
        guard let sway, sway.windowCount > 0 else { return }
        let started = MonotonicClock.microseconds()
        let inTime = sway.readTreeNow(within: Self.treeCheckMs)
        logger.debug("read sway's tree before deciding", metadata: ["microseconds": "\(MonotonicClock.microseconds() - started)"])
        if !inTime, sway.failure == nil {
            logger.warning("sway did not send its tree within \(Self.treeCheckMs) ms: deciding the click on the windows as last seen")
        }
    }

    /// How long a decision waits for sway's tree at most.
    static let treeCheckMs: Int64 = 250

    /// Asks for sway's tree every `treePollMs` while a popup is open and a window plays a
    /// role (a window popup, anchor or exclusion); otherwise no timer runs at all.
    private func pollTree() {
        guard let due = nextTreePoll, due.hasPassed() else { return }
        sway?.requestTree()
        nextTreePoll = nil
        scheduleTreePolls()
    }

    private func scheduleTreePolls() {
        guard let sway, !engine.open.isEmpty, sway.windowCount > 0 else {
            nextTreePoll = nil
            return
        }
        if nextTreePoll == nil { nextTreePoll = .inMilliseconds(Self.treePollMs) }
    }

    // MARK: - Outputs and the overlay

    /// Outputs come and go: the overlay gets a surface on each new one, `output = "..."`
    /// rectangles move with theirs.
    private func followOutputs() {
        let outputs = client.outputs
        guard outputs != knownOutputs else { return }
        knownOutputs = outputs
        do {
            try overlay.sync()
        } catch {
            logger.error("cannot cover the outputs with the overlay: \(error)")
        }
        logger.info("outputs", metadata: ["outputs": "\(outputs.map(\.description).joined(separator: ", "))"])
        engine.setOutputs(Dictionary(outputs.map { ($0.name, $0.rect) }, uniquingKeysWith: { a, _ in a }))
        refresh()
    }

    /// The input region is everything but the holes; with no popup open, one hole covers
    /// every output and the overlay takes nothing.
    override func updateInterception() {
        scheduleTreePolls()
        guard let bounds = client.layoutBounds else { return }
        let holes = engine.open.isEmpty ? [bounds] : engine.shieldHoles(screen: bounds)
        guard holes != overlay.holes else { return }
        if !engine.open.isEmpty { regionShrank = true }
        overlay.setHoles(holes)
        // A click without moving the pointer first goes where the new region says.
        replayer?.repick()
    }
}
