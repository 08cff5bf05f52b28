import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayX11
import Glibc
import Logging

/// One poll(2) loop over the X connection, the control socket, the config watcher and the
/// signal pipe. No threads: a press is read, decided and answered before anything else.
final class Daemon {
    let x: XConnection
    let logger: Logger
    var config: LoadedConfig
    let configFile: String?
    var engine: DecisionEngine
    let tracker: WindowTracker
    let grabs: Grabs
    let escape: EscapeKey
    /// `--backend`, which wins over `[settings] backend`.
    let backendOverride: Backend?
    /// How clicks reach the daemon: grabs on the root, or the shield window.
    private(set) var interception: Interception = .grab
    var shield: ShieldWindow?
    /// Why `auto` left the grab mode for the shield, once it has.
    var fallbackReason: String?
    private var screen: Rect
    /// A press swallowed on the shield whose release has not come yet: the shield stays up
    /// until then, because unmapping it would end the grab and send the release on.
    private var shieldHoldsAClick = false
    let spawner: Spawner
    let control: ControlServer
    let watcher: ConfigWatcher?
    let notifier: SystemdNotifier?
    let clock: ServerClock
    var lastError: String?
    /// The diagnostics of the last configuration rejected since the last one accepted.
    var rejected: String?
    /// `rect` popups opened by `clickawayctl open`, bottom to top, with when they opened.
    var rectOpen: [(name: String, openedAt: Int64, id: UInt64)] = []
    /// The next `rect` popup instance id: above 2^32, so never a window's, and kept by the
    /// instance across reloads.
    var nextRectID = UInt64(1) << 32
    /// The open popups last announced to monitors, by instance id, as they were described
    /// then: a reload may renumber or remove their popups.
    private var announced: [UInt64: [(String, JSON)]] = [:]
    private var lastStatusLine = ""
    private var nextWatchdog: Int64?

    enum Interception: String {
        case grab = "x11-grab"
        case shield = "x11-shield"
    }

    init(x: XConnection, config: LoadedConfig, configFile: String?, backend: Backend?, control: ControlServer,
         notifier: SystemdNotifier?, logger: Logger) throws(XError) {
        self.x = x
        backendOverride = backend
        screen = x.screenRect
        self.config = config
        self.configFile = configFile
        self.control = control
        self.notifier = notifier
        self.logger = logger
        clock = try x.calibrateClock()
        // The grab mode needs only the core protocol; RandR (1.3) places `output = ...`
        // rectangles and follows screen changes, and its absence costs only that.
        do {
            let version = try x.requireRandR()
            logger.debug("RandR \(version)")
        } catch {
            logger.warning("\(error): rectangles with output = \"...\" cannot be placed and screen changes are not followed")
        }
        engine = DecisionEngine(model: config.model, outputs: (try? x.outputs()) ?? [:])
        tracker = WindowTracker(x: x, model: config.model, logger: logger)
        grabs = Grabs(x: x, logger: logger)
        escape = EscapeKey(x: x, grabs: grabs, logger: logger)
        spawner = Spawner(logger: logger)
        watcher = ConfigWatcher(logger: logger)
        watcher?.watch(Self.watchedPaths(configFile: configFile))
        // SubstructureNotify on root may be selected by any number of clients; ButtonPress may not.
        if let error = x.check(x.selectInput(x.root, .substructureNotify)) {
            throw .request("ChangeWindowAttributes", error)
        }
        _ = x.check(x.selectRandrScreenChange(x.root))
        try useBackend(effectiveBackend)
        try tracker.scan(now: clock.now())
        refresh()
    }

    var effectiveBackend: Backend { backendOverride ?? config.model.settings.backend }

    /// x11-grab and auto start with grabs on the root; x11-shield needs XFixes 2 and fails
    /// plainly without it.
    private func useBackend(_ backend: Backend) throws(XError) {
        switch backend {
        case .x11Shield:
            try enterShieldMode()
        case .auto, .x11Grab:
            if backend == .auto && fallbackReason != nil { return }
            shield?.update(active: false, holes: [])
            shieldHoldsAClick = false
            interception = .grab
        }
    }

    /// `auto` after a refused grab: the shield needs no grab on the root, so it works where
    /// another client holds one. Said once, in the log and in `status`.
    private func fallBackToShield(because reason: String) {
        do {
            try enterShieldMode()
        } catch {
            logger.error("a grab was refused and the shield mode is not available either (\(error)); staying with grabs")
            return
        }
        fallbackReason = reason
        logger.warning("switching to the shield mode (backend = \"auto\") because a grab was refused: \(reason)")
        broadcast("backend", [("backend", .string(Interception.shield.rawValue)), ("reason", .string(reason))])
    }

    /// The shield (made the first time) takes clicks instead of grabs on the root.
    private func enterShieldMode() throws(XError) {
        if shield == nil { shield = try ShieldWindow(x: x, screen: screen, logger: logger) }
        grabs.release()
        interception = .shield
    }

    /// Runs until SIGTERM/SIGINT (returns 0) or the X server goes away (returns 1).
    func run() -> Int32 {
        logger.info("running", metadata: [
            "display": "\(x.display)", "popups": "\(config.popupCount)", "control": "\(control.path)",
        ])
        notifier?.send("READY=1\nSTATUS=\(statusLine())")
        if let interval = notifier?.watchdogIntervalMs { nextWatchdog = ServerClock.monotonicMilliseconds() + interval }
        while true {
            if Signals.terminate != 0 {
                shutDown()
                return 0
            }
            if Signals.reload != 0 {
                Signals.reload = 0
                _ = reload(because: "SIGHUP")
            }
            let now = ServerClock.monotonicMilliseconds()
            if watcher?.takeDue(now: now) == true { _ = reload(because: "a configuration file changed") }
            pingWatchdog(now: now)
            while let event = x.pollEvent() { handle(event) }
            // Only with the events read: an unmap already sent is not mistaken for a window
            // that stayed after its dismissal.
            if Signals.child != 0 {
                Signals.child = 0
                for failed in spawner.reap() where tracker.cancelClosing(client: failed) {
                    logger.warning("the dismiss command failed and the window is still there: it counts as open again",
                                   metadata: ["window": "\(hex(failed))"])
                    refresh()
                }
            }
            expireClosing(now: ServerClock.monotonicMilliseconds())
            // Drain libxcb's queue before sleeping: replies can pull events in unseen by poll.
            while let event = x.pollEvent() { handle(event) }
            if let error = x.connectionError {
                logger.critical("lost the connection to the X server \(x.display): \(error)")
                notifier?.send("STOPPING=1\nSTATUS=lost the X server \(x.display)")
                spawner.reap()
                return 1
            }
            x.flush()
            waitForInput()
        }
    }

    /// Sleeps in poll(2) until input or the next deadline: a slow command to report, a
    /// config change to reload, a dismissed window to give up on, a watchdog ping.
    /// With none of those pending it sleeps without a timeout.
    private func waitForInput() {
        var fds = [pollfd(fd: x.fileDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: Signals.pipe.read, events: Int16(POLLIN), revents: 0)]
        if let watcher { fds.append(pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0)) }
        let fixed = fds.count
        for (fd, wantsWrite) in control.pollDescriptors {
            fds.append(pollfd(fd: fd, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0))
        }
        let now = ServerClock.monotonicMilliseconds()
        let deadlines = [spawner.checkSlow(now: now), watcher?.due, tracker.nextClosingDeadline, nextWatchdog].compactMap { $0 }
        let timeout = deadlines.min().map { Int32(clamping: max(0, $0 - now)) } ?? -1
        guard poll(&fds, nfds_t(fds.count), timeout) > 0 else { return }
        if fds[1].revents != 0 { Signals.drain() }
        if let watcher, fds[2].revents != 0 { watcher.read(now: ServerClock.monotonicMilliseconds()) }
        for p in fds.dropFirst(fixed) where p.revents != 0 {
            let readable = p.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
            let writable = p.revents & Int16(POLLOUT) != 0
            for request in control.handle(fd: p.fd, readable: readable, writable: writable) {
                answer(request)
            }
        }
    }

    private func pingWatchdog(now: Int64) {
        guard let due = nextWatchdog, now >= due, let notifier, let interval = notifier.watchdogIntervalMs else { return }
        notifier.send("WATCHDOG=1")
        nextWatchdog = now + interval
    }

    private func expireClosing(now: Int64) {
        guard let due = tracker.nextClosingDeadline, now >= due else { return }
        let stillThere = tracker.expireClosing(now: now)
        for client in stillThere {
            logger.warning("a dismissed window is still mapped \(WindowTracker.closeTimeoutMs) ms later: it counts as open again",
                           metadata: ["window": "\(hex(client))"])
        }
        if !stillThere.isEmpty { refresh() }
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
            refresh()
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
            if interception == .shield { shield?.keepOnTop(stacking: tracker.stacking, now: ServerClock.monotonicMilliseconds()) }
        }
    }

    /// The press path: decide from memory, answer, flush; only then act on the decision.
    private func press(_ e: ButtonEvent) {
        let decision = engine.press(button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time))
        if decision.click == .swallow {
            x.allowEvents(.asyncPointer, time: e.time)
            shieldHoldsAClick = e.window == shield?.window
        } else if let shield, e.window == shield.window {
            shield.replay(e)
        } else {
            x.allowEvents(.replayPointer, time: e.time)
        }
        x.flush()
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
        act(on: dismissed, decision: decision, event: e)
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
            act(on: engine.dismissed, decision: decision, event: e)
        }
        if wasHolding && !shieldHoldsAClick { refresh() }
    }

    private func act(on dismissed: [PopupInstance], decision: Decision, event e: ButtonEvent) {
        dismiss(dismissed, cause: DismissCause(reason: decision.reason.rawValue, button: e.button, x: e.rootX, y: e.rootY,
                                               time: e.time, click: decision.click.rawValue))
    }

    /// What dismissed popups: a click (button and position) or the Escape key (button 0).
    struct DismissCause {
        var reason: String
        var button: UInt8
        var x: Int32
        var y: Int32
        var time: Timestamp
        var click: String
    }

    private func dismiss(_ dismissed: [PopupInstance], cause: DismissCause) {
        guard !dismissed.isEmpty else { return }
        let names = dismissed.map { config.model.popups[Int($0.popup)].name }
        logger.info("dismissed", metadata: [
            "popups": "\(names.joined(separator: ","))", "reason": "\(cause.reason)", "button": "\(cause.button)",
            "x": "\(cause.x)", "y": "\(cause.y)", "click": "\(cause.click)",
        ])
        broadcast("dismissed", [
            ("popups", .array(names.map(JSON.string))), ("reason", .string(cause.reason)),
            ("button", .int(Int64(cause.button))), ("x", .int(Int64(cause.x))), ("y", .int(Int64(cause.y))),
            ("click", .string(cause.click)),
        ])
        let now = ServerClock.monotonicMilliseconds()
        for instance in dismissed {
            let spec = config.model.popups[Int(instance.popup)]
            if let client = Self.client(of: instance) {
                tracker.markClosing(client: client, now: now)
                dismissWindow(spec, client: client, cause: cause)
            } else {
                rectOpen.removeAll { $0.name == spec.name }
                if case .command(let argv) = spec.dismiss { runDismissCommand(argv, spec, client: nil, cause: cause) }
            }
        }
        x.flush()
        refresh()
    }

    private func dismissWindow(_ spec: PopupSpec, client: WindowID, cause: DismissCause) {
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
        case .command(let argv):
            runDismissCommand(argv, spec, client: client, cause: cause)
        }
    }

    /// The environment says what dismissed the popup; for the Escape key, button and
    /// position are empty and CLICKAWAY_KEY is "Escape".
    private func runDismissCommand(_ argv: [String], _ spec: PopupSpec, client: WindowID?, cause: DismissCause) {
        let byKey = cause.button == 0
        let started = spawner.spawn(argv, environment: [
            "CLICKAWAY_POPUP": spec.name, "CLICKAWAY_WINDOW": client.map(hex) ?? "",
            "CLICKAWAY_BUTTON": byKey ? "" : "\(cause.button)", "CLICKAWAY_X": byKey ? "" : "\(cause.x)",
            "CLICKAWAY_Y": byKey ? "" : "\(cause.y)", "CLICKAWAY_KEY": byKey ? "Escape" : "",
        ], popup: spec.name, window: client, now: ServerClock.monotonicMilliseconds())
        // The command could not even start: the window stays, and so does the popup.
        if !started, let client { _ = tracker.cancelClosing(client: client) }
    }

    // MARK: - State

    /// Instance ids: a window popup's is its client window (29 bits); a `rect` popup's is
    /// counted from 2^32 (`nextRectID`), so the two never meet.
    static func client(of instance: PopupInstance) -> WindowID? {
        instance.id < UInt64(1) << 32 ? WindowID(instance.id) : nil
    }

    /// The open `rect` popups as instances, placed on the current outputs.
    private func rectInstances() -> [PopupInstance] {
        rectOpen.compactMap { entry in
            guard let index = config.model.popupIndex(named: entry.name),
                  case .rect(let r, let output) = config.model.popups[Int(index)].source,
                  let rect = ClickModel.screenRect(r, output: output, outputs: engine.outputs)
            else { return nil }
            return PopupInstance(popup: index, rect: rect, openedAt: entry.openedAt, id: entry.id)
        }
    }

    /// Brings the engine and the grabs in line with the windows and the `rect` popups, and
    /// tells monitors what opened and closed. Never called between a press and its AllowEvents.
    func refresh() {
        engine.setOpen(tracker.openInstances() + rectInstances())
        engine.setWindowAreas(tracker.windowAreas())
        updateInterception()
        let wantsEscape = engine.open.contains { config.model.popups[Int($0.popup)].escape }
        for sentence in escape.update(wanted: wantsEscape) {
            lastError = sentence
            broadcast("grab_refused", [("key", .string("Escape")), ("message", .string(sentence))])
        }
        // Announced once the server has the grabs or the shield: a script that clicks when
        // it sees "opened" is not faster than the daemon.
        x.flush()
        announceOpenChanges()
        let line = statusLine()
        if line != lastStatusLine {
            lastStatusLine = line
            notifier?.send("STATUS=\(line)")
        }
    }

    /// Grabs on the root for the open popups' buttons, or the shield with the engine's holes.
    private func updateInterception() {
        let active = !engine.open.isEmpty
        if interception == .shield, let shield {
            shield.update(active: active || shieldHoldsAClick, holes: active ? engine.shieldHoles(screen: screen) : [])
            return
        }
        var wanted = ButtonSet(bits: 0)
        for o in engine.open { wanted.bits |= config.model.popups[Int(o.popup)].buttons.bits }
        let refused = grabs.update(to: wanted).map { ($0.0, $0.1, grabs.refusalSentence($0.0, $0.1)) }
        for (combo, error, sentence) in refused {
            lastError = sentence
            broadcast("grab_refused", [
                ("button", .int(Int64(combo.button))), ("modifiers", .string(grabs.describe(combo.modifiers))),
                ("error", .string(error.name)), ("message", .string(sentence)),
            ])
        }
        if let (_, _, sentence) = refused.first, effectiveBackend == .auto {
            fallBackToShield(because: sentence)
            if interception == .shield { updateInterception() }
        }
    }

    private func announceOpenChanges() {
        var now: [UInt64: [(String, JSON)]] = [:]
        for o in engine.open { now[o.id] = announced[o.id] ?? popupFields(o) }
        for (id, fields) in announced where now[id] == nil {
            broadcast("closed", fields)
        }
        for o in engine.open where announced[o.id] == nil {
            broadcast("opened", now[o.id] ?? [])
        }
        announced = now
    }

    func popupFields(_ o: PopupInstance) -> [(String, JSON)] {
        let r = o.rect
        return [
            ("popup", .string(config.model.popups[Int(o.popup)].name)),
            ("window", Self.client(of: o).map { .string(hex($0)) } ?? .null),
            ("rect", .array([r.x, r.y, r.width, r.height].map { .int(Int64($0)) })),
        ]
    }

    /// One `monitor` line: `{"event":NAME,...}`.
    func broadcast(_ event: String, _ fields: [(String, JSON)]) {
        guard control.hasSubscribers else { return }
        control.broadcast(JSON.object([("event", .string(event))] + fields).text)
    }

    func statusLine() -> String {
        let open = engine.open.count
        let intercepting = grabs.isGrabbing || shield?.mapped == true
        let base = "\(config.popupCount) popups configured, \(open) open" + (intercepting ? ", intercepting clicks" : "")
        return rejected == nil ? base : base + "; the last configuration edit was rejected"
    }

    // MARK: - Config

    /// The files whose changes reload the configuration: the one given with --config, or
    /// the XDG config.toml and its conf.d.
    /// A file that is a symlink (stow, home-manager) is watched where it points too.
    static func watchedPaths(configFile: String?) -> [ConfigWatcher.Target] {
        let location = ConfigLocation(environment: processEnvironment())
        let files = configFile.map { [$0] } ?? [location.mainFile]
        var targets = files.map(ConfigWatcher.Target.file)
        for file in files {
            if let resolved = realpath(file, nil) {
                let target = String(cString: resolved)
                free(resolved)
                if target != file { targets.append(.file(target)) }
            }
        }
        return configFile == nil ? targets + [.directory(location.dropInDirectory)] : targets
    }

    /// Loads the configuration again. A valid one replaces the running one at once, popups
    /// re-matched against the windows on screen; an invalid one is reported and the running
    /// one stays. Returns the new configuration, or the error.
    func reload(because cause: String) -> Result<LoadedConfig, ConfigError> {
        notifier?.sendReloading(status: "reloading the configuration (\(cause))")
        defer { notifier?.send("READY=1\nSTATUS=\(statusLine())") }
        watcher?.watch(Self.watchedPaths(configFile: configFile))
        let fresh: LoadedConfig
        do {
            fresh = try ConfigLoader.load(file: configFile, environment: processEnvironment())
        } catch {
            rejected = "\(error)"
            lastError = "configuration rejected, keeping the previous one:\n\(error)"
            logger.error("configuration rejected, keeping the previous one (\(cause))\n\(error)")
            broadcast("rejected", [("cause", .string(cause)), ("diagnostics", .string("\(error)"))])
            return .failure(error)
        }
        config = fresh
        rejected = nil
        engine = DecisionEngine(model: fresh.model, outputs: engine.outputs)
        tracker.replaceModel(fresh.model, now: clock.now())
        rectOpen.removeAll { entry in
            guard let i = fresh.model.popupIndex(named: entry.name), case .rect = fresh.model.popups[Int(i)].source else { return true }
            return false
        }
        grabs.release()
        do {
            try useBackend(effectiveBackend)
        } catch {
            logger.error("cannot switch to backend \(effectiveBackend.rawValue): \(error); keeping \(interception.rawValue)")
        }
        refresh()
        logger.info("configuration reloaded (\(cause))", metadata: ["popups": "\(fresh.popupCount)"])
        for note in fresh.notes { logger.notice("\(note)") }
        broadcast("reloaded", [("cause", .string(cause)), ("popups", .int(Int64(fresh.popupCount))),
                               ("files", .array(fresh.files.map(JSON.string)))])
        return .success(fresh)
    }

    private func shutDown() {
        notifier?.send("STOPPING=1")
        grabs.release()
        escape.release()
        shield = nil
        x.flush()
        spawner.reap()
        logger.info("exiting: grabs released")
    }
}
