internal import ClickawayConfig
internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON
internal import ClickawaySystem
internal import Glibc
internal import Logging
internal import SystemPackage

/// The daemon: one display (X11 or Wayland, `Display`), the configuration and the decision
/// engine, and a few parts of its own: `rect` popups, the monitor feed, systemd, reloads,
/// dismiss commands. One epoll loop drives it all; a click is read, decided and answered
/// before anything else happens. The one other thread loads configurations, builds models
/// and frees replaced ones (`ConfigReloader`), never touching this state.
///
/// A state machine: each input (a click, the Escape key, windows or outputs changed, a
/// control request, a reload finished, a model built, a deadline, a signal, a connection
/// closed) has one handler, run from `step()` and only there: the loop's callbacks only note
/// what came. A handler changes the state and marks what is stale; `step()` then settles
/// once (`settle()`, the one place that brings the model, the engine, the interception and
/// the announcements in line), and what must follow the settled state comes after it
/// (`AfterSettle`). Nothing `settle()` runs calls a handler or `settle()` again. The handlers
/// of control requests, runtime popups and reloads are in `DaemonRequests`,
/// `DaemonRuntimePopups` and `DaemonModels`.
final class Daemon {
    let display: any Display
    let logger: Logger
    let loop: PollLoop
    let control: ControlServer
    /// What monitors hear. `finishPass` looks at it for every click, so with no runtime
    /// exclusivity check: its methods call out to nothing that touches it (`describe` reads the
    /// model and the windows). bench/callgrind, inside click: 63 instructions a click more with
    /// the check (BENCHMARKS.md, the daemon's part of an inside click).
    @exclusivity(unchecked) var monitor: MonitorFeed
    let supervision: Supervision
    let reloading: Reloading
    let commands: DismissCommands
    var config: LoadedConfig
    /// The model in use, its runtime popups that ended, and a new one due or being built.
    /// Looked at by every pass's settle, and changed only by ModelState's own methods, which
    /// call out to no other code: bench/callgrind, inside click: 68 instructions a click more
    /// with a runtime exclusivity check (BENCHMARKS.md, the daemon's part of an inside click).
    @exclusivity(unchecked) var models: ModelState
    /// The configured popups, then the runtime ones: what the engine, the display and every
    /// name lookup see.
    var model: ClickModel { models.model }
    var engine: DecisionEngine
    var rects = RectPopups()
    /// Exclusivity checked at run time: its methods take closures from the daemon, and one
    /// that read it while it was being changed (`freshName`) was caught by that check.
    var runtime = RuntimePopups() { didSet { windowWaits.deadline = runtime.nextDeadline } }
    /// When the next runtime popup's wait for its window runs out.
    let windowWaits = LoopTimer()
    /// Dismissed windows not gone yet (`ClosingWindows`), and when the first counts as open
    /// again (`closingMoved()`).
    var closing = ClosingWindows()
    let closingTimer = LoopTimer()
    /// `--backend`, which wins over `[settings] backend`.
    let backendOverride: Backend?
    /// Where the running configuration came from: the files, or (when they had errors at
    /// start) the last good configuration or none.
    var running: RunningConfig
    /// The diagnostics of the last configuration rejected since the last one accepted.
    var rejected: String?
    var lastError: String?
    /// `lastError` is a rejected configuration's: the next one accepted clears it.
    var lastErrorIsRejection = false
    /// Popup sources the display cannot provide, said at every load.
    var unavailableSources: [String] = []
    /// Runtime `rect` popups registered since: open once the model has them.
    var rectsOpening: [String] = []
    /// Where presses are handled when the display has them on their own (`startPressThread`).
    private var pressThread: PressThread?
    // `unsettled`, `windowsChanged`, `pacing`, `unpaced` and `commandStarted` are looked at by
    // every click, loaded and stored whole: `@exclusivity(unchecked)` saves them nothing
    // (bench/callgrind, inside click; BENCHMARKS.md, the daemon's part of an inside click).
    /// Something changed that the engine, the interception or the monitors must follow.
    var unsettled = true
    /// Windows changed since the last settle: settled as soon as `pacing` allows, or at once
    /// when a click, a key or a request needs the state as it is.
    var windowsChanged = false
    var pacing = SettlePacing()
    /// A click, a key or a request came this pass: its settle does not wait for the pace of
    /// windows' changes, so that what follows sees the state as it is.
    var unpaced = false
    /// When the changes of windows that wait for `pacing` are settled (`pacedSettleMoved()`).
    let pacedSettle = LoopTimer()
    /// Requests waiting for the display's answer, by the number `ask` gave them.
    var displayWaiters: [Int: DisplayWaiter] = [:]
    /// Syncs started for an interception that takes clicks only once the display has synced:
    /// monitors hear what opened after the last (`DisplayWaiter.announce`).
    var announcementsWait = 0
    var displaySerial = 0
    /// `clickawayctl show`: the model drawn on the screen (Show/ShowDrawing.swift).
    let show: ShowDrawing
    /// What this pass does once it has settled, in the order it was handled; and the buffer
    /// `finishPass` takes it into, so that neither is copied or allocated at each click.
    /// Looked at by every click, so with no runtime exclusivity check: each access is a
    /// statement of the daemon's that calls out to no other code. bench/callgrind, inside
    /// click: a click without it, 168 instructions more for `afterSettle`, 281 for
    /// `finishing` (BENCHMARKS.md, the daemon's part of an inside click).
    @exclusivity(unchecked) var afterSettle: [AfterSettle] = []
    @exclusivity(unchecked) private var finishing: [AfterSettle] = []
    /// A dismiss command started this pass: SIGCHLD waits for the next one (`handleSignals`).
    var commandStarted = false
    /// The display's connection broke (`.lost`): the loop ends after this pass.
    var displayLost = false
    /// Makes the loop's next wait return at once: another pass is due.
    let passAgain = LoopTimer()
    /// The connection a `pick` under way answers to: the pick ends with it.
    var pickAsker: ControlServer.Connection?

    /// What waits for a pass's settle: what must see the state it leaves. A click's item is
    /// the click itself; the others, which requests and reloads leave, are boxed
    /// (`indirect`), so that the item every click appends, copies and destroys is 48 bytes
    /// with nothing to release, not the largest request's: bench/callgrind, inside click,
    /// 204 instructions a click less (BENCHMARKS.md, the daemon's part of an inside click).
    enum AfterSettle {
        /// The daemon has acted on this click: the display may finish it (Wayland's replay).
        case acted(Click)
        /// A request answered from the settled state (`status`, `monitor`).
        indirect case request(ControlRequest, ControlServer.Request)
        /// The display answered a sync or a pointer probe: the waiter's reply.
        indirect case displayAnswer(DisplayWaiter, failure: String?, pointerHeldBy: String?)
        /// A reload's replies and its `reloaded` event, after what it closed is announced.
        indirect case reloaded(reply: String, to: [ControlServer.Request], event: MonitorEvent?)
    }

    /// `startErrors`: the files had these errors at start, and `config` is the last good
    /// configuration or none (`running`).
    init(display: any Display, config: LoadedConfig, configFile: String?, backend: Backend?,
                running: RunningConfig = .files, startErrors: String? = nil, loop: PollLoop, control: ControlServer,
                notifier: SystemdNotifier?, logger: Logger) {
        self.display = display
        self.config = config
        backendOverride = backend
        self.running = running
        rejected = startErrors
        self.loop = loop
        self.control = control
        self.logger = logger
        monitor = MonitorFeed(control: control)
        supervision = Supervision(notifier: notifier)
        reloading = Reloading(configFile: configFile, environment: processEnvironment(), logger: logger)
        commands = DismissCommands(logger: logger)
        if let startErrors { commands.notifyRejected(startErrors, running: running, enabled: config.model.settings.notify) }
        show = ShowDrawing(display: display, logger: logger)
        models = ModelState(config.model)
        engine = DecisionEngine(model: config.model, outputs: display.state.outputs)
        // Appended to after every click: no allocation once a pass has held a few.
        afterSettle.reserveCapacity(16)
        finishing.reserveCapacity(16)
    }

    var backend: Backend { backendOverride ?? config.model.settings.backend }

    // MARK: - The loop

    /// Runs until SIGTERM/SIGINT (returns 0) or the display goes away (returns 1).
    public func run() -> Int32 {
        logger.info("running", metadata: [
            "display": "\(display.state.name)", "backend": "\(display.state.interception)", "popups": "\(config.popupCount)",
            "control": "\(control.path)",
        ])
        start()
        while Signals.terminate == 0 {
            step()
            if displayLost {
                let state = display.state
                logger.critical("lost the connection to the display \(state.name): \(state.failure ?? "it hung up")")
                supervision.stopping("lost the display \(state.name)")
                _ = commands.reap()
                return 1
            }
            loop.wait()
        }
        shutDown()
        return 0
    }

    /// What comes before the first wait: the display's sources and every deadline join the
    /// loop, a first pass takes what the display has and settles (the grabs for popups open
    /// already), and systemd hears the daemon is ready.
    func start() {
        noteUnavailableSources()
        if let presses = display as? any PressSource { startPressThread(for: presses) }
        registerWithLoop()
        step()
        supervision.ready(statusLine())
    }

    /// Presses decided and answered on a thread of their own, which sleeps between them: the
    /// scheduler puts it on the CPU as soon as one comes, while the loop's thread may have used
    /// its share on a burst of windows (BENCHMARKS.md, what those presses wait for). Without
    /// it, the loop reads them with the rest.
    private func startPressThread(for presses: any PressSource) {
        let lock = StateLock()
        lock.lock()
        switch PressThread.start(waitingOn: presses.pressDescriptor, lock: lock, handle: { [unowned self] in handlePresses(presses) }) {
        case .success(let thread):
            loop.stateLock = lock
            presses.pressThreadStarted(thread.id, sharing: lock)
            pressThread = thread
        case .failure(let error):
            lock.unlock()
            logger.warning("cannot start a thread for presses (\(error)); the loop reads them with the rest")
        }
    }

    /// One pass of the loop between two waits: every input that came, each by its handler, the
    /// display's first (a click is decided and answered before anything else runs); then one
    /// settle; then what must see the settled state. A display with events still queued makes
    /// the loop's next wait return at once (`PollSource.prepareToSleep`).
    func step() {
        handleDisplayInput()
        handleSignals()
        // With the events read: a window already gone is not mistaken for one that stayed
        // after its dismissal.
        loop.runDueDeadlines()
        // After the deadlines: the files' changes settle on one (the watcher's debounce).
        handleReloads()
        while let request = control.nextRequest() { answer(request) }
        for connection in control.takeHangUps() {
            if connection == pickAsker {
                pickAsker = nil
                display.perform(.cancelPick)
            }
            removeRuntime(runtime.owned(by: connection), .waitEnded)
            displayWaiters = displayWaiters.filter { $0.value.origin?.connection != connection }
        }
        settle()
        pacedSettleMoved()
        finishPass()
        commandStarted = false
    }

    /// What this pass's inputs left for after the settle, in the order they came. Emptied
    /// from its end, its capacity kept: `removeAll(keepingCapacity:)` (a `replaceSubrange`
    /// and `swift_arrayDestroy`) cost a click's pass 119 instructions more (bench/callgrind).
    func finishPass() {
        guard !afterSettle.isEmpty else { return }
        Swift.swap(&afterSettle, &finishing)
        defer { while finishing.popLast() != nil {} }
        for index in finishing.indices {
            switch finishing[index] {
            case .acted(let click): display.acted(on: click)
            case .request(let request, let origin): answerSettled(request, origin)
            case .displayAnswer(let waiter, let failure, let heldBy): reply(to: waiter, failure: failure, pointerHeldBy: heldBy)
            case .reloaded(let reply, let requests, let event):
                if let event { monitor.send(event) }
                for request in requests { control.reply(reply, to: request) }
            }
        }
    }

    /// SIGHUP reloads; SIGCHLD reaps dismiss commands (after the display's events are read, so
    /// that a failed command's window is judged as it is now). Not in a pass that started one:
    /// a command that fails at once would put its popup back before the pass's settle
    /// announced it closed; the next pass, due at once, reaps it.
    func handleSignals() {
        if Signals.reload != 0 {
            Signals.reload = 0
            requestReload(because: "SIGHUP")
        }
        guard Signals.child != 0 else { return }
        if commandStarted {
            passAgain.deadline = .inMilliseconds(0)
        } else {
            Signals.child = 0
            reapCommands()
        }
    }

    /// Each source of input and each deadline, with what to do about it. The display comes
    /// first (its connection first of all): libwayland's read must be finished before
    /// anything else runs.
    func registerWithLoop() {
        display.register(with: loop)
        // Woken after the press thread handled presses: the pass settles and acts on them.
        if let pressThread { loop.add(pressThread) }
        loop.watch(Signals.pipe.read) { _ in Signals.drain() }
        reloading.register(with: loop)
        loop.schedule(commands.slowCheck) { [unowned self] now in commands.reportSlow(now: now) }
        loop.schedule(passAgain) { [unowned self] _ in passAgain.deadline = nil }
        loop.schedule(closingTimer) { [unowned self] now in expireClosing(now: now) }
        loop.schedule(windowWaits) { [unowned self] now in expireWindowWaits(now: now) }
        loop.schedule(show.expiry) { [unowned self] now in if show.expire(now: now) { unsettled = true } }
        // Wakes the loop: the pass's settle takes what the pace of windows' changes now allows.
        loop.schedule(pacedSettle) { _ in }
        supervision.register(with: loop)
    }

    /// Everything the display has read, each click answered before it is acted on, and the
    /// state settled after each input: the next click is decided on what is known.
    func handleDisplayInput() {
        while let input = display.nextInput() { take(input) }
    }

    /// On the press thread, with the state lock held (the loop asleep, or at a safe point
    /// between two events): each press and key the display's press connection brought, as
    /// the loop would take them. Returns whether the loop must follow them now (settle, act):
    /// a click that dismissed and swallowed nothing leaves it nothing to do, and waking it
    /// would take the CPU from the X server that is delivering that click (BENCHMARKS.md,
    /// what those presses wait for).
    func handlePresses(_ presses: any PressSource) -> Bool {
        var loopFollows = false
        while let input = presses.nextPress() {
            guard case .click(let click) = input else {
                take(input)
                if case .changed = input {} else { loopFollows = true }
                continue
            }
            engineFollowsWindows()
            if handle(click) {
                afterSettle.append(.acted(click))
                unpaced = true
                loopFollows = true
            } else {
                display.acted(on: click)
            }
        }
        return loopFollows || presses.pressesLeftWork
    }

    /// One input, by its handler.
    private func take(_ input: DisplayInput) {
        switch input {
        case .click(let click):
            // Decided on the windows as they are, answered, and only then the rest; a
            // click after it in this pass is decided on what it dismissed.
            engineFollowsWindows()
            handle(click)
            afterSettle.append(.acted(click))
            unpaced = true
        case .escapeKey(let key):
            engineFollowsWindows()
            escapePressed(key)
            unpaced = true
        case .changed:
            windowsChanged = true
        case .lost:
            displayLost = true
        case .closeRefused(let window):
            // The window stays, and counts as open again.
            if closing.cancel(window) {
                closingMoved()
                unsettled = true
            }
        case .outputsChanged:
            engine.setOutputs(display.state.outputs)
            unsettled = true
        case .synced(let id, let failure):
            answered(id, failure: failure, pointerHeldBy: nil)
        case .pointerGrab(let id, let heldBy):
            answered(id, failure: nil, pointerHeldBy: heldBy)
        case .intercepted:
            for notice in display.takeInterceptionNotices() { intercepted(notice) }
        }
    }

    /// A grab refused (the last error, and monitors hear of it), or `auto` gone over to the
    /// shield, which a settle gives the open popups.
    func intercepted(_ notice: InterceptionNotice) {
        switch notice {
        case .refused(let refusal):
            lastError = refusal.message
            lastErrorIsRejection = false
            monitor.send(.grabRefused(refusal))
            reportStatus()
        case .switchedBackend(let backend, let reason):
            monitor.send(.backend(backend: backend, reason: reason))
            unsettled = true
        }
    }

    // MARK: - Clicks

    /// The press path: decide from memory, answer, and only then act on the decision.
    /// Returns whether it dismissed or swallowed anything: what a settle must follow.
    @discardableResult
    func handle(_ click: Click) -> Bool {
        let decision = click.isPress
            ? engine.press(button: click.button, x: click.x, y: click.y, time: click.time)
            : engine.release(button: click.button, x: click.x, y: click.y, time: click.time)
        display.answer(click, with: decision)
        guard let decision else { return false }
        var dismissed = decision.dismissCount > 0 ? engine.dismissed : []
        if click.isPress && click.releaseGoesElsewhere && decision.awaitsRelease && decision.click != .swallow {
            // The press goes on to the window under it, and its release with it: decide now.
            if let release = engine.release(button: click.button, x: click.x, y: click.y, time: click.time), release.dismissCount > 0 {
                dismissed += engine.dismissed
            }
        }
        dismiss(dismissed, trigger: .click(click, decision))
        return !dismissed.isEmpty || decision.click == .swallow
    }

    /// Escape while a popup with `escape = true` is open: answer the frozen keyboard first,
    /// then dismiss the topmost such popup and the popups nested in it.
    func escapePressed(_ key: EscapeKey) {
        if show.isShowing {
            display.answerEscape(key, .swallow)
            show.stop(because: "the Escape key")
            unsettled = true
            return
        }
        guard let target = engine.open.last(where: { model.popups[Int($0.popup)].escape }) else {
            display.answerEscape(key, .replay)
            return
        }
        let outcome = model.popups[Int(target.popup)].escapeKey
        display.answerEscape(key, outcome)
        let below = Set(model.descendants(of: target.popup))
        dismiss([target] + engine.open.filter { below.contains($0.popup) }, trigger: .escapeKey(key, outcome))
    }

    // MARK: - Dismissing

    func dismiss(_ dismissed: [PopupInstance], trigger: DismissTrigger) {
        guard !dismissed.isEmpty else { return }
        let names = dismissed.map { model.popups[Int($0.popup)].name }
        let event: MonitorEvent.Dismissal = switch trigger {
        case .click(let click, let decision):
            .init(popups: names, reason: decision.reason.rawValue, button: click.button, x: click.x, y: click.y,
                  click: decision.click.rawValue)
        case .escapeKey(_, let outcome):
            .init(popups: names, reason: "escape", button: 0, x: 0, y: 0, click: outcome.rawValue)
        case .request:
            .init(popups: names, reason: "request", button: 0, x: 0, y: 0, click: "none")
        }
        logger.info("dismissed", metadata: [
            "popups": "\(names.joined(separator: ","))", "reason": "\(event.reason)", "button": "\(event.button)",
            "x": "\(event.x)", "y": "\(event.y)", "click": "\(event.click)",
        ])
        // Decided before the settle that announces what opened: a popup that opened since is
        // announced first, so that no monitor hears of a dismissal of what never opened.
        if control.hasSubscribers {
            let stillOpen = Set(engine.open.map(\.id))
            monitor.announce(engine.open + dismissed.filter { !stillOpen.contains($0.id) }, windows: display.windows,
                             describe: openPopup)
        }
        monitor.send(.dismissed(event))
        let now = MonotonicClock.milliseconds()
        for instance in dismissed {
            let spec = model.popups[Int(instance.popup)]
            if let window = instance.id.window {
                closing.mark(window, openedAt: instance.openedAt, now: now)
                if case .command(let argv) = spec.dismiss {
                    runCommand(argv, spec, window: window, trigger: trigger)
                } else {
                    display.perform(.close(window, spec, trigger: trigger))
                }
            } else {
                rects.dismissed(instance.id)
                if case .command(let argv) = spec.dismiss { runCommand(argv, spec, window: nil, trigger: trigger) }
            }
        }
        closingMoved()
        unsettled = true
        // Runtime popups end with their dismissal; whoever waits on one hears how.
        removeRuntime(Set(names.filter(runtime.contains)), .dismissed(event))
    }

    /// The environment says what dismissed the popup; for the Escape key, button and
    /// position are empty and CLICKAWAY_KEY is "Escape".
    func runCommand(_ argv: [String], _ spec: PopupSpec, window: UInt32?, trigger: DismissTrigger) {
        var environment = ["CLICKAWAY_POPUP": spec.name, "CLICKAWAY_WINDOW": window.map(display.windows.describe) ?? ""]
        switch trigger {
        case .click(let click, _):
            environment.merge(["CLICKAWAY_BUTTON": "\(click.button)", "CLICKAWAY_X": "\(click.x)", "CLICKAWAY_Y": "\(click.y)",
                               "CLICKAWAY_KEY": ""]) { $1 }
        case .escapeKey:
            environment.merge(["CLICKAWAY_BUTTON": "", "CLICKAWAY_X": "", "CLICKAWAY_Y": "", "CLICKAWAY_KEY": "Escape"]) { $1 }
        case .request:
            environment.merge(["CLICKAWAY_BUTTON": "", "CLICKAWAY_X": "", "CLICKAWAY_Y": "", "CLICKAWAY_KEY": ""]) { $1 }
        }
        let started = commands.run(argv, environment: environment, popup: spec.name, window: window, now: MonotonicClock.milliseconds())
        commandStarted = true
        // The command could not even start: the window stays, and so does the popup.
        if !started, let window {
            closing.cancel(window)
            closingMoved()
        }
    }

    /// A failed command leaves its window, which counts as open again while it is there.
    func reapCommands() {
        for failed in commands.reap() where closing.cancel(failed) && display.windows.isPresent(failed) {
            logger.warning("the dismiss command failed and the window is still there: it counts as open again",
                           metadata: ["window": "\(display.windows.describe(failed))"])
            unsettled = true
        }
        closingMoved()
    }

    func expireClosing(now: Int64) {
        let stillThere = closing.expire(now: now).filter(display.windows.isPresent)
        closingMoved()
        for window in stillThere {
            logger.warning("a dismissed window is still there \(ClosingWindows.timeoutMs) ms later: it counts as open again",
                           metadata: ["window": "\(display.windows.describe(window))"])
        }
        if !stillThere.isEmpty { unsettled = true }
    }

    /// After windows changed, and after every settle that may have changed the pace or
    /// settled them: set here rather than by observers of `windowsChanged` and `pacing`,
    /// which would cost every click runtime exclusivity checks.
    func pacedSettleMoved() {
        pacedSettle.deadline = windowsChanged ? pacing.deadline : nil
    }

    /// After closing windows were marked, cancelled or went.
    func closingMoved() {
        closingTimer.deadline = closing.nextDeadline.map(Deadline.init(milliseconds:))
    }

    // MARK: - State

    /// Brings the runtime popups in line with the windows, asks for a model with the runtime
    /// popups as they are now, brings the engine and the interception in line, and tells
    /// monitors what opened and closed. Once a pass, from `step()` only, after its handlers;
    /// never between a press and its answer (`engineFollowsWindows()` alone comes before it).
    /// Without a loader thread a model is swapped in at once, and the runtime popups are
    /// looked at again; each such pass resolves or removes one, so they end.
    func settle() {
        // Not paced while a request waits for the display: what settling sends must be on the
        // wire before the display's last round trip, so that the request sees it done.
        if windowsChanged && (unsettled || unpaced || !displayWaiters.isEmpty || pacing.allows(now: MonotonicClock.microseconds())) {
            (windowsChanged, unsettled) = (false, true)
        }
        unpaced = false
        guard unsettled || models.wantsBuild else { return }
        let started = MonotonicClock.microseconds()
        defer {
            let now = MonotonicClock.microseconds()
            pacing.settled(tookMicroseconds: now - started, now: now)
            pacedSettleMoved()
        }
        var swapped: Bool
        repeat {
            settleRuntimeWindows()
            swapped = models.wantsBuild && buildModel()
        } while swapped
        unsettled = false
        updateEngine()
        show.update(engine)
        // Announced once the display has the new interception: a script that clicks when it
        // sees "opened" is not faster than the daemon.
        if display.intercept(engine, showing: show.isShowing) {
            announcementsWait += 1
            startSync(.announce)
        }
        if announcementsWait == 0 { monitor.announce(engine.open, windows: display.windows, describe: openPopup) }
        reportStatus()
    }

    /// The engine with the open popups and the window areas the display knows now: what a
    /// click or a key is decided on. Nothing is sent or announced here; `settle()` does that
    /// after the answer.
    func updateEngine() {
        // The display's arrays as they are when nothing is added or left out: in a burst of
        // windows a copy of thousands at every settle is most of what it costs.
        var open = display.windows.openInstances()
        let rectInstances = rects.instances(model, outputs: engine.outputs)
        if !rectInstances.isEmpty { open += rectInstances }
        var areas = display.windows.windowAreas()
        let ended = models.ended
        if !ended.isEmpty {
            open.removeAll { ended.contains($0.popup) }
            areas.removeAll { area in
                switch area.kind {
                case .anchor(let popup), .member(_, let popup, _): ended.contains(popup)
                case .exclusion: false
                }
            }
        }
        if closing.leaveOut(of: &open, &areas) { closingMoved() }
        engine.setOpen(open)
        engine.setWindowAreas(areas)
    }

    /// Before a click or a key is decided, when something changed since the last settle:
    /// runtime popups whose window or parent went are ended (rare, and only then a `wait`
    /// hears it), and the engine sees the windows.
    func engineFollowsWindows() {
        guard windowsChanged || unsettled else { return }
        if windowsChanged && hasRuntimePopups { settleRuntimeWindows() }
        updateEngine()
    }

    /// Out of line: inlined into `handleDisplayInput`, its runtime exclusivity check of
    /// `runtime` was hoisted to the top, and every click paid for it.
    @inline(never)
    private var hasRuntimePopups: Bool { !runtime.isEmpty }

    /// The names of the open popups, bottom to top.
    var openNames: [String] { engine.open.map { model.popups[Int($0.popup)].name } }

    /// The runtime popups registered, in their order (for tests).
    var runtimeNames: [String] { runtime.entries.map(\.name) }

    /// Whether a reload is loading (for tests).
    var isReloading: Bool { reloading.isLoading }

    /// Whether the model in use has the runtime popups as they are registered, and no model
    /// is being built (for tests).
    var modelHasRuntimePopups: Bool {
        models.isCurrent && runtime.entries.allSatisfy { models.liveIndex($0.name) != nil }
    }

    func openPopup(_ instance: PopupInstance) -> OpenPopup {
        openPopup(instance, listing: Int.max)
    }

    /// The instance with the first `limit` windows of its family named, the rest counted.
    func openPopup(_ instance: PopupInstance, listing limit: Int) -> OpenPopup {
        let name = model.popups[Int(instance.popup)].name
        let family = instance.id.window.map(display.windows.familyMembers(of:)) ?? []
        let members = family.prefix(limit)
        return OpenPopup(popup: name, window: instance.id.window.map(display.windows.describe), rect: instance.rect,
                         runtime: runtime.contains(name), members: members.map { display.windows.describe($0.window) },
                         ties: members.map(\.tie.rawValue), membersLeftOut: family.count - members.count)
    }

    /// What `statusLine()` says, compared before the line is built: a burst of windows
    /// settles hundreds of times a second, and few of those change it.
    private struct StatusFacts: Equatable {
        var popups: Int
        var open: Int
        var intercepting: Bool
        var running: RunningConfig
        var rejected: Bool
    }
    private var statusFacts: StatusFacts?

    /// Gives systemd the status line when what it says changed.
    func reportStatus() {
        let facts = StatusFacts(popups: config.popupCount, open: engine.open.count, intercepting: display.state.isIntercepting,
                                running: running, rejected: rejected != nil)
        guard facts != statusFacts else { return }
        statusFacts = facts
        supervision.status(statusLine())
    }

    func statusLine() -> String {
        let base = counted(config.popupCount, "popup") + " configured, \(engine.open.count) open" + (display.state.isIntercepting ? ", intercepting clicks" : "")
        switch running {
        case .lastGood: return base + "; the configuration has errors: running the last good one"
        case .none: return base + "; the configuration has errors: running with none"
        case .files: return rejected == nil ? base : base + "; the last configuration edit was rejected"
        }
    }

    func shutDown() {
        supervision.stopping()
        show.stop(because: "the daemon is stopping")
        display.release()
        _ = commands.reap()
        logger.info("exiting: grabs released")
    }
}

/// Where the running configuration came from.
public enum RunningConfig: Equatable, Sendable {
    case files
    /// The files had errors at start: the last configuration that loaded, saved at that time.
    case lastGood(saved: String)
    /// The files had errors at start and there was no last good configuration.
    case none
}
