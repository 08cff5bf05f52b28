public import ClickawayConfig
public import ClickawayControl
public import ClickawayCore
internal import ClickawayJSON
public import ClickawaySystem
internal import Glibc
public import Logging

/// The daemon: one display (X11 or Wayland, `Display`), the configuration and the decision
/// engine, and a few parts of its own: `rect` popups, the monitor feed, systemd, reloads,
/// dismiss commands. One poll(2) loop drives it all; a click is read, decided and answered
/// before anything else happens. The one other thread loads configurations, builds models
/// and frees replaced ones (`ConfigReloader`), never touching this state.
///
/// A state machine: each input (a click, the Escape key, windows or outputs changed, a
/// control request, a reload finished, a deadline, a signal, a connection closed) has one
/// handler, run from `step()`. A handler changes the state and marks what is stale; it ends
/// with `settle()`, the one place that brings the model, the engine, the interception and
/// the announcements in line. Nothing `settle()` runs calls a handler or `settle()` again.
public final class Daemon {
    private let display: any Display
    private let logger: Logger
    private let loop: PollLoop
    private let control: ControlServer
    private var monitor: MonitorFeed
    private let supervision: Supervision
    private let reloading: Reloading
    private let commands: DismissCommands
    private var config: LoadedConfig
    /// The configured popups, then the runtime ones: what the engine, the display and every
    /// name lookup see.
    private var model: ClickModel
    private var engine: DecisionEngine
    private var rects = RectPopups()
    /// Its deadline is asked for before every wait, so with no runtime exclusivity check:
    /// RuntimePopups' methods change only itself, and call out to nothing that reaches back.
    @exclusivity(unchecked) private var runtime = RuntimePopups()
    /// `--backend`, which wins over `[settings] backend`.
    private let backendOverride: Backend?
    /// Where the running configuration came from: the files, or (when they had errors at
    /// start) the last good configuration or none.
    private var running: RunningConfig
    /// The diagnostics of the last configuration rejected since the last one accepted.
    private var rejected: String?
    private var lastError: String?
    /// `lastError` is a rejected configuration's: the next one accepted clears it.
    private var lastErrorIsRejection = false
    /// Popup sources the display cannot provide, said at every load.
    private var unavailableSources: [String] = []
    /// The runtime popups changed since the model in use was built: a new one is built off
    /// the loop (`ConfigReloader.Build`), and the display looks at these windows anew when
    /// it is swapped in.
    private var staleModel: WindowLookup?
    /// Counts the changes of the runtime popups: a model built for an older count is dropped.
    private var modelVersion = 0
    /// Whether a model is being built.
    private var building = false
    /// Popups of the model in use whose runtime popup ended: left out of the engine until a
    /// model without them is swapped in.
    private var endedPopups: Set<Int32> = []
    /// Runtime `rect` popups registered since: open once the model has them.
    private var rectsOpening: [String] = []
    /// Something changed that the engine, the interception or the monitors must follow.
    private var unsettled = true
    /// `clickawayctl show`: the model drawn on the screen (Show/ShowDrawing.swift).
    private let show: ShowDrawing

    /// `startErrors`: the files had these errors at start, and `config` is the last good
    /// configuration or none (`running`).
    public init(display: any Display, config: LoadedConfig, configFile: String?, backend: Backend?,
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
        model = config.model
        engine = DecisionEngine(model: config.model, outputs: display.outputs)
        settle()
    }

    private var backend: Backend { backendOverride ?? config.model.settings.backend }

    // MARK: - The loop

    /// Runs until SIGTERM/SIGINT (returns 0) or the display goes away (returns 1).
    public func run() -> Int32 {
        logger.info("running", metadata: [
            "display": "\(display.name)", "backend": "\(display.interceptionName)", "popups": "\(config.popupCount)",
            "control": "\(control.path)",
        ])
        start()
        while Signals.terminate == 0 {
            step()
            if let failure = display.failure {
                logger.critical("lost the connection to the display \(display.name): \(failure)")
                supervision.stopping("lost the display \(display.name)")
                _ = commands.reap()
                return 1
            }
            loop.wait()
        }
        shutDown()
        return 0
    }

    /// What comes before the first wait: the display's sources and every deadline join the
    /// loop, and systemd hears the daemon is ready.
    func start() {
        noteUnavailableSources()
        registerWithLoop()
        supervision.ready(statusLine())
    }

    /// One pass of the loop between two waits: every input that came, each by its handler.
    func step() {
        handleDisplayInput()
        handleSignals()
        // With the events read: a window already gone is not mistaken for one that stayed
        // after its dismissal.
        loop.runDueDeadlines()
        settle()
        while let request = control.nextRequest() { answer(request) }
        for connection in control.takeHangUps() { removeRuntime(runtime.owned(by: connection), .waitEnded) }
        settle()
        // Drain before sleeping: what was done since may have queued events.
        handleDisplayInput()
    }

    /// SIGHUP reloads; SIGCHLD reaps dismiss commands (after the display's events are read, so
    /// that a failed command's window is judged as it is now).
    private func handleSignals() {
        if Signals.reload != 0 {
            Signals.reload = 0
            requestReload(because: "SIGHUP")
        }
        if Signals.child != 0 {
            Signals.child = 0
            reapCommands()
        }
    }

    /// Each source of input and each deadline, with what to do about it. The display comes
    /// first: libwayland's read must be finished before anything else runs.
    private func registerWithLoop() {
        loop.add(display)
        display.register(with: loop)
        loop.watch(Signals.pipe.read) { _ in Signals.drain() }
        reloading.register(with: loop, changed: { [unowned self] in requestReload(because: "a configuration file changed") },
                           finished: { [unowned self] in finishReload($0) },
                           built: { [unowned self] in modelBuilt($0) })
        // Deadlines are asked for before every wait: where it can, each question holds what it
        // asks rather than an unowned daemon (a check and a retain each time).
        loop.schedule({ [commands] in commands.nextSlowCheck }) { [unowned self] now in commands.reportSlow(now: now) }
        loop.schedule({ [display] in display.windows.closing.nextDeadline.map(Deadline.init(milliseconds:)) }) { [unowned self] now in
            expireClosing(now: now)
        }
        loop.schedule({ [unowned self] in runtime.nextDeadline }) { [unowned self] now in expireWindowWaits(now: now) }
        loop.schedule({ [show] in show.nextDeadline }) { [unowned self] now in if show.expire(now: now) { unsettled = true } }
        supervision.register(with: loop)
    }

    /// Everything the display has read, each click answered before it is acted on, and the
    /// state settled after each input: the next click is decided on what is known.
    private func handleDisplayInput() {
        while let input = display.nextInput() {
            switch input {
            case .click(let click):
                handle(click)
                settle()
                display.acted(on: click)
            case .escapeKey(let key):
                escapePressed(key)
                settle()
            case .changed:
                unsettled = true
                settle()
            case .outputsChanged:
                engine.setOutputs(display.outputs)
                unsettled = true
                settle()
            }
        }
    }

    // MARK: - Clicks

    /// The press path: decide from memory, answer, and only then act on the decision.
    private func handle(_ click: Click) {
        let decision = click.isPress
            ? engine.press(button: click.button, x: click.x, y: click.y, time: click.time)
            : engine.release(button: click.button, x: click.x, y: click.y, time: click.time)
        display.answer(click, with: decision)
        guard let decision else { return }
        var dismissed = decision.dismissCount > 0 ? engine.dismissed : []
        if click.isPress && click.releaseGoesElsewhere && decision.awaitsRelease && decision.click != .swallow {
            // The press goes on to the window under it, and its release with it: decide now.
            if let release = engine.release(button: click.button, x: click.x, y: click.y, time: click.time), release.dismissCount > 0 {
                dismissed += engine.dismissed
            }
        }
        dismiss(dismissed, trigger: .click(click, decision))
    }

    /// Escape while a popup with `escape = true` is open: answer the frozen keyboard first,
    /// then dismiss the topmost such popup and the popups nested in it.
    private func escapePressed(_ key: EscapeKey) {
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

    private func dismiss(_ dismissed: [PopupInstance], trigger: DismissTrigger) {
        guard !dismissed.isEmpty else { return }
        let names = dismissed.map { model.popups[Int($0.popup)].name }
        let event: MonitorEvent.Dismissal = switch trigger {
        case .click(let click, let decision):
            .init(popups: names, reason: decision.reason.rawValue, button: click.button, x: click.x, y: click.y,
                  click: decision.click.rawValue)
        case .escapeKey(_, let outcome):
            .init(popups: names, reason: "escape", button: 0, x: 0, y: 0, click: outcome.rawValue)
        }
        logger.info("dismissed", metadata: [
            "popups": "\(names.joined(separator: ","))", "reason": "\(event.reason)", "button": "\(event.button)",
            "x": "\(event.x)", "y": "\(event.y)", "click": "\(event.click)",
        ])
        monitor.send(.dismissed(event))
        let now = MonotonicClock.milliseconds()
        for instance in dismissed {
            let spec = model.popups[Int(instance.popup)]
            if let window = instance.id.window {
                display.windows.closing.mark(window, now: now)
                if case .command(let argv) = spec.dismiss {
                    runCommand(argv, spec, window: window, trigger: trigger)
                } else {
                    display.close(window, spec, trigger: trigger)
                }
            } else {
                rects.dismissed(instance.id)
                if case .command(let argv) = spec.dismiss { runCommand(argv, spec, window: nil, trigger: trigger) }
            }
        }
        display.flush()
        unsettled = true
        // Runtime popups end with their dismissal; whoever waits on one hears how.
        removeRuntime(Set(names.filter(runtime.contains)), .dismissed(event))
    }

    /// The environment says what dismissed the popup; for the Escape key, button and
    /// position are empty and CLICKAWAY_KEY is "Escape".
    private func runCommand(_ argv: [String], _ spec: PopupSpec, window: UInt32?, trigger: DismissTrigger) {
        var environment = ["CLICKAWAY_POPUP": spec.name, "CLICKAWAY_WINDOW": window.map(display.windows.describe) ?? ""]
        switch trigger {
        case .click(let click, _):
            environment.merge(["CLICKAWAY_BUTTON": "\(click.button)", "CLICKAWAY_X": "\(click.x)", "CLICKAWAY_Y": "\(click.y)",
                               "CLICKAWAY_KEY": ""]) { $1 }
        case .escapeKey:
            environment.merge(["CLICKAWAY_BUTTON": "", "CLICKAWAY_X": "", "CLICKAWAY_Y": "", "CLICKAWAY_KEY": "Escape"]) { $1 }
        }
        let started = commands.run(argv, environment: environment, popup: spec.name, window: window, now: MonotonicClock.milliseconds())
        // The command could not even start: the window stays, and so does the popup.
        if !started, let window { display.windows.closing.cancel(window) }
    }

    /// A failed command leaves its window, which counts as open again while it is there.
    private func reapCommands() {
        for failed in commands.reap() where display.windows.closing.cancel(failed) && display.windows.isPresent(failed) {
            logger.warning("the dismiss command failed and the window is still there: it counts as open again",
                           metadata: ["window": "\(display.windows.describe(failed))"])
            unsettled = true
        }
        settle()
    }

    private func expireClosing(now: Int64) {
        let stillThere = display.windows.closing.expire(now: now).filter(display.windows.isPresent)
        for window in stillThere {
            logger.warning("a dismissed window is still there \(ClosingWindows.timeoutMs) ms later: it counts as open again",
                           metadata: ["window": "\(display.windows.describe(window))"])
        }
        if !stillThere.isEmpty { unsettled = true }
    }

    // MARK: - State

    /// Brings the runtime popups in line with the windows, asks for a model with the runtime
    /// popups as they are now, brings the engine and the interception in line, and tells
    /// monitors what opened and closed. The end of every handler; never between a press and
    /// its answer. Without a loader thread a model is swapped in at once, and the runtime
    /// popups are looked at again; each such pass resolves or removes one, so they end.
    private func settle() {
        guard unsettled || (staleModel != nil && !building) else { return }
        var swapped: Bool
        repeat {
            settleRuntimeWindows()
            swapped = staleModel != nil && !building && buildModel()
        } while swapped
        unsettled = false
        engine.setOpen((display.windows.openInstances() + rects.instances(model, outputs: engine.outputs))
            .filter { !endedPopups.contains($0.popup) })
        engine.setWindowAreas(display.windows.windowAreas().filter { area in
            switch area.kind {
            case .anchor(let popup), .member(_, let popup, _): !endedPopups.contains(popup)
            case .exclusion: true
            }
        })
        show.update(engine)
        for notice in display.intercept(engine) {
            switch notice {
            case .refused(let refusal):
                lastError = refusal.message
                lastErrorIsRejection = false
                monitor.send(.grabRefused(refusal))
            case .switchedBackend(let backend, let reason):
                monitor.send(.backend(backend: backend, reason: reason))
            }
        }
        // Announced once the display has the new interception: a script that clicks when it
        // sees "opened" is not faster than the daemon.
        display.flush()
        monitor.announce(engine.open, windows: display.windows, describe: openPopup)
        supervision.status(statusLine())
    }

    /// The names of the open popups, bottom to top.
    var openNames: [String] { engine.open.map { model.popups[Int($0.popup)].name } }

    private func openPopup(_ instance: PopupInstance) -> OpenPopup {
        let name = model.popups[Int(instance.popup)].name
        return OpenPopup(popup: name, window: instance.id.window.map(display.windows.describe), rect: instance.rect,
                         runtime: runtime.contains(name),
                         members: instance.id.window.map { display.windows.familyMembers(of: $0).map(display.windows.describe) } ?? [])
    }

    private func statusLine() -> String {
        let base = counted(config.popupCount, "popup") + " configured, \(engine.open.count) open" + (display.isIntercepting ? ", intercepting clicks" : "")
        switch running {
        case .lastGood: return base + "; the configuration has errors: running the last good one"
        case .none: return base + "; the configuration has errors: running with none"
        case .files: return rejected == nil ? base : base + "; the last configuration edit was rejected"
        }
    }

    // MARK: - Control requests

    private func answer(_ request: ControlServer.Request) {
        let reply: JSON
        do {
            reply = try answer(try ControlRequest(line: request.line), request)
        } catch let invalid as ControlRequest.Invalid {
            reply = Refusal(invalid.description).json
        } catch let refusal as Refusal {
            reply = refusal.json
        } catch {
            reply = Refusal("\(error)").json
        }
        settle()
        guard reply != .null else { return }
        control.send(reply.text, to: request.client)
    }

    /// The reply to `request`; `.null` when it is answered later or already.
    private func answer(_ request: ControlRequest, _ origin: ControlServer.Request) throws -> JSON {
        switch request {
        case .sync:
            // Answered once the display has handled everything sent before the request:
            // the caller then sees the daemon in a settled state.
            if let failure = display.sync({ handleDisplayInput() }) { throw Refusal(failure) }
            return ControlReply.ok()
        case .status:
            return status().json
        case .reload:
            requestReload(because: "clickawayctl reload", replyTo: origin)
            return .null
        case .open(let name): return try setRectPopup(name) { _ in true }
        case .close(let name): return try setRectPopup(name) { _ in false }
        case .toggle(let name): return try setRectPopup(name) { !$0 }
        case .add(let popup): return try register(popup, origin, waiting: false)
        case .wait(let popup): return try register(popup, origin, waiting: true)
        case .show(let request):
            unsettled = true  // the drawing takes Escape on X11, and gives it back
            return try show.answer(request, engine: engine)
        case .hit(let x, let y, let button):
            let context = ExplanationContext(describe: display.windows.describe, otherGrab: display.otherPointerGrab())
            return HitReply(engine.explain(button: button, x: x, y: y, time: display.now()), context).json
        case .monitor:
            guard control.subscribe(origin.client) else {
                throw Refusal("\(ControlServer.maxMonitors) monitors are connected already; close one first")
            }
            control.send(ControlReply.ok().text, to: origin.client)
            return .null
        }
    }

    /// `open`, `close` and `toggle` of a `rect` popup. They only tell clickaway the popup's
    /// state: no dismiss action runs.
    private func setRectPopup(_ name: String, open: (Bool) -> Bool) throws(Refusal) -> JSON {
        if runtime.contains(name) {
            // A runtime popup is open while it exists: closing it removes it.
            guard !open(true) else { return RectPopupReply(popup: name, open: true).json }
            removeRuntime([name], .gone(.closed))
            return RectPopupReply(popup: name, open: false).json
        }
        let isOpen = try rects.set(name, open: open, model: model, outputs: engine.outputs, now: display.now()).get()
        unsettled = true
        return RectPopupReply(popup: name, open: isOpen).json
    }

    // MARK: - Runtime popups

    /// `add` and `wait`: a popup from a script, checked like a configured one, placed after
    /// the configured popups in the model. Answered once a model with it is swapped in (built
    /// off the loop), and for a process once its window is there.
    private func register(_ request: RuntimePopupRequest, _ origin: ControlServer.Request, waiting: Bool) throws(Refusal) -> JSON {
        let started = MonotonicClock.microseconds()
        guard runtime.count < RuntimePopups.limit else {
            throw Refusal("\(RuntimePopups.limit) runtime popups are registered already; close one first")
        }
        var spec = try runtimeSpec(request)
        let place: RuntimePopups.Place
        switch request.form {
        case .rect(let rect, let output):
            if let output, engine.outputs[output] == nil {
                throw Refusal("output \"\(output)\" is not connected (connected: \(engine.outputs.keys.sorted().joined(separator: ", ")))")
            }
            spec.source = .rect(rect, output: output)
            place = .rect
        case .window(let id):
            if let why = display.windowsUnavailable { throw Refusal(why) }
            try settleDisplay()
            let window = try display.popupWindow(for: id).get()
            if let other = runtime.name(ofWindow: window) {
                throw Refusal("window \(display.windows.describe(window)) is runtime popup \"\(other)\" already")
            }
            spec.source = .window(WindowMatch(window: window))
            place = .window(window)
        case .pid(let pid, let timeoutMs):
            if let why = display.windowsUnavailable { throw Refusal(why) }
            guard kill(pid, 0) == 0 || errno == EPERM else { throw Refusal("there is no process with pid \(pid)") }
            // No round trip: a window the display has not read yet is taken when it is read.
            spec.source = .window(WindowMatch(pid: pid))
            place = .pid(pid, deadline: .inMilliseconds(timeoutMs), timeoutMs: timeoutMs)
        }
        let problems = ModelValidator.problems(adding: pendingSpecs + [spec], to: model)
        guard problems.isEmpty else { throw Refusal(problems.map { "\($0)" }.joined(separator: "; ")) }
        if waiting && !control.hold(origin.connection) {
            throw Refusal("\(ControlServer.maxHolders) clickawayctl wait are waiting already; end one first")
        }
        runtime.append(RuntimePopups.Entry(spec: spec, place: place, owner: waiting ? origin.connection : nil, unanswered: origin))
        switch place {
        case .rect:
            rectsOpening.append(spec.name)
            modelChanged(.none)
        case .window(let window): modelChanged(.window(window))
        case .pid: modelChanged(.all)
        }
        settle()
        // How long the request kept the loop (bench/runtime reads it).
        logger.info("runtime popup registered", metadata: [
            "popup": "\(spec.name)", "place": "\(place)", "microseconds": "\(MonotonicClock.microseconds() - started)",
        ])
        // Answered by `answerRegistered` or `settleRuntimeWindows`.
        return .null
    }

    /// The runtime popups not in the model in use yet.
    private var pendingSpecs: [PopupSpec] { runtime.specs.filter { model.popupIndex(named: $0.name) == nil } }

    /// The popup a request describes: `like`'s keys (else `[defaults]`), then the request's.
    private func runtimeSpec(_ request: RuntimePopupRequest) throws(Refusal) -> PopupSpec {
        // The model may still have a runtime popup that ended, until the model without it comes.
        let name = request.name ?? runtime.freshName { [model] in model.popupIndex(named: $0) != nil }
        if model.popupIndex(named: name) != nil || runtime.contains(name) {
            let kind = config.model.popupIndex(named: name) != nil ? "configured" : runtime.contains(name) ? "runtime" : "runtime (going away now)"
            throw Refusal("there is a \(kind) popup named \"\(name)\" already")
        }
        var spec: PopupSpec
        if let like = request.like {
            guard let template = popupSpec(named: like) else {
                throw Refusal("no popup named \"\(like)\" to take as a template" + model.popupNameSuggestion(like))
            }
            spec = template
            spec.name = name
        } else {
            spec = config.withDefaults(PopupSpec(name: name, source: .rect(Rect(x: 0, y: 0, width: 0, height: 0), output: nil)))
        }
        if let parent = request.parent {
            guard popupSpec(named: parent) != nil else {
                throw Refusal("no popup named \"\(parent)\" to nest in" + model.popupNameSuggestion(parent))
            }
            spec.parent = parent
        }
        spec.anchors += request.anchors.map { .rect($0, output: nil) }
        spec.outsideClick = request.outsideClick ?? spec.outsideClick
        spec.trigger = request.trigger ?? spec.trigger
        spec.buttons = request.buttons ?? spec.buttons
        spec.graceMs = request.graceMs ?? spec.graceMs
        spec.escape = request.escape ?? spec.escape
        spec.dismiss = request.dismiss ?? spec.dismiss
        return spec
    }

    /// A popup of the configuration or a runtime one, in the model or not yet.
    private func popupSpec(named name: String) -> PopupSpec? {
        if let entry = runtime.entry(named: name) { return entry.spec }
        guard config.model.popupIndex(named: name) != nil, let index = model.popupIndex(named: name) else { return nil }
        return model.popups[Int(index)]
    }

    /// Handles everything the display sent before now, so that a window mapped just before the
    /// request is known.
    private func settleDisplay() throws(Refusal) {
        if let failure = display.sync({ handleDisplayInput() }) { throw Refusal(failure) }
    }

    private func combinedModel() -> ClickModel {
        fitted(Result { () throws(ClickModel.Invalid) in try config.model.adding(runtime.specs) })
    }

    /// The model with the runtime popups; should they not fit the configuration, which each
    /// one's check before it was added rules out, they are all removed and the configured
    /// model is used.
    private func fitted(_ combined: Result<ClickModel, ClickModel.Invalid>) -> ClickModel {
        switch combined {
        case .success(let model): return model
        case .failure(let invalid):
            logger.error("runtime popups do not fit the configuration, removing them all: \(invalid.problems)")
            for entry in runtime.removeAll() {
                rects.forget(entry.name)
                tellGone(entry, .gone(popup: entry.name, reason: .reload))
            }
            return config.model
        }
    }

    /// The runtime popups changed: a model with them as they are now is built at the next
    /// `settle()`, and the display looks at `lookup`'s windows anew when it is swapped in
    /// (together with any change not swapped in yet).
    private func modelChanged(_ lookup: WindowLookup) {
        modelVersion += 1
        unsettled = true
        staleModel = switch (staleModel, lookup) {
        case (nil, _), (.none?, _): lookup
        case (let pending?, .none): pending
        case (.window(let a)?, .window(let b)) where a == b: lookup
        default: .all
        }
    }

    /// Asks the loader's thread for the configured popups followed by the runtime ones. Part
    /// of `settle()`; returns whether the model was swapped in at once (no loader thread).
    private func buildModel() -> Bool {
        building = true
        guard let built = reloading.build(ConfigReloader.Build(base: config.model, added: runtime.specs, version: modelVersion)) else {
            return false
        }
        return received(built)
    }

    /// The loader built a model: swapped in when the runtime popups are still those it was
    /// built with, else built again.
    private func modelBuilt(_ built: ConfigReloader.Built) {
        _ = received(built)
        settle()
    }

    /// Swaps a built model in if it is still wanted; returns whether it was.
    private func received(_ built: ConfigReloader.Built) -> Bool {
        building = false
        guard built.version == modelVersion else { return false }
        let lookup = staleModel ?? .none
        staleModel = nil
        swapModel(fitted(built.model), lookingAt: lookup)
        return true
    }

    /// A new model for the engine (the click in progress goes on), the `rect` popups and the
    /// display's windows; the registrations it completes are answered.
    private func swapModel(_ fresh: ClickModel, lookingAt lookup: WindowLookup) {
        let started = MonotonicClock.microseconds()
        let replaced = model
        defer {
            reloading.retire(replaced)
            // How long the swap held the loop (bench/bigconfig reads it).
            logger.info("model with the runtime popups swapped in", metadata: [
                "popups": "\(model.popups.count)", "microseconds": "\(MonotonicClock.microseconds() - started)",
            ])
        }
        model = fresh
        endedPopups = []
        engine = DecisionEngine(model: model, continuing: engine)
        rects.keep(in: model)
        openRegisteredRects()
        display.popupsChanged(model, lookingAt: lookup)
        answerRegistered()
        unsettled = true
    }

    /// The runtime `rect` popups registered since the last model, open now that it has them.
    private func openRegisteredRects() {
        for name in rectsOpening {
            _ = rects.set(name, open: { _ in true }, model: model, outputs: engine.outputs, now: display.now())
        }
        rectsOpening = []
    }

    /// Answers the `add` and `wait` of the `rect` and window popups the model now has (a
    /// process's popup is answered when its window is there, a window's that went away is
    /// refused by `settleRuntimeWindows`).
    private func answerRegistered() {
        for entry in runtime.entries where entry.unanswered != nil && model.popupIndex(named: entry.name) != nil {
            let window: String?
            switch entry.place {
            case .rect: window = nil
            case .window(let id):
                guard display.windows.isPresent(id) else { continue }
                window = display.windows.describe(id)
            case .pid: continue
            }
            if let request = runtime.answered(entry.name) {
                control.reply(RuntimePopupReply(popup: entry.name, window: window).json.text, to: request)
            }
        }
    }

    /// Why runtime popups are removed, and so what their `wait` hears.
    private enum RuntimeEnd {
        case dismissed(MonitorEvent.Dismissal)
        case gone(WaitOutcome.GoneReason)
        /// Its `wait`'s connection closed: nobody is left to tell.
        case waitEnded

        func outcome(_ popup: String) -> WaitOutcome? {
            switch self {
            case .dismissed(let d): .dismissed(popup: popup, reason: d.reason, button: d.button, x: d.x, y: d.y, click: d.click)
            case .gone(let reason): .gone(popup: popup, reason: reason)
            case .waitEnded: nil
            }
        }
    }

    /// Removes runtime popups and the runtime popups nested in them (whose `wait` hears that
    /// their parent went), then rebuilds the model.
    private func removeRuntime(_ names: Set<String>, _ end: RuntimeEnd) {
        guard !names.isEmpty else { return }
        for (entry, named) in runtime.remove(names) {
            ended(entry)
            let outcome = named ? end.outcome(entry.name) : .gone(popup: entry.name, reason: .parentGone)
            logger.info("runtime popup removed", metadata: [
                "popup": "\(entry.name)", "reason": "\(outcome?.json["reason"]?.stringValue ?? "its clickawayctl wait ended")",
            ])
            if let outcome { tellGone(entry, outcome) }
        }
    }

    /// A runtime popup removed: out of the engine now, out of the model once a new one is built.
    private func ended(_ entry: RuntimePopups.Entry) {
        if let index = model.popupIndex(named: entry.name) { endedPopups.insert(index) }
        rectsOpening.removeAll { $0 == entry.name }
        modelChanged(.none)
    }

    /// Tells the `wait` of a runtime popup how it ended, and an `add` not answered yet that it
    /// never came to be.
    private func tellGone(_ entry: RuntimePopups.Entry, _ outcome: WaitOutcome) {
        if let request = entry.unanswered {
            let reason = outcome.json["reason"]?.stringValue ?? "?"
            let refusal = switch entry.place {
            case .pid: Refusal("popup \"\(entry.name)\" went away (\(reason)) before its window appeared")
            case .window(let window): Refusal("window \(display.windows.describe(window)) went away while it was being registered")
            case .rect: Refusal("popup \"\(entry.name)\" went away (\(reason)) while it was being registered")
            }
            if let owner = entry.owner { control.finish(owner, with: refusal.json.text) } else { control.reply(refusal.json.text, to: request) }
            return
        }
        if let owner = entry.owner { control.finish(owner, with: outcome.json.text) }
    }

    /// Part of `settle()`, for the runtime popups the model has: a process's window that
    /// appeared becomes its popup's window (and the request is answered); a runtime popup
    /// whose window is gone is removed, and so is a `rect` one closed with its parent
    /// (`clickawayctl close PARENT`). Each marks the model stale.
    private func settleRuntimeWindows() {
        var gone: Set<String> = []
        var closed: Set<String> = []
        var resolved = false
        for entry in runtime.entries where model.popupIndex(named: entry.name) != nil {
            switch entry.place {
            case .rect:
                if !rects.isOpen(entry.name) { closed.insert(entry.name) }
            case .window(let window):
                if !display.windows.isPresent(window) { gone.insert(entry.name) }
            case .pid:
                guard let index = model.popupIndex(named: entry.name),
                      let window = display.windows.openInstances().first(where: { $0.popup == index })?.id.window,
                      let settled = runtime.resolve(entry.name, to: window) else { continue }
                resolved = true
                logger.info("runtime popup found its window", metadata: ["popup": "\(entry.name)", "window": "\(display.windows.describe(window))"])
                let reply = RuntimePopupReply(popup: entry.name, window: display.windows.describe(window)).json.text
                if let request = entry.unanswered { control.reply(reply, to: request) }
                _ = settled
            }
        }
        removeRuntime(closed, .gone(.parentGone))
        removeRuntime(gone, .gone(.windowGone))
        if resolved { modelChanged(.none) }
    }

    /// Processes whose window did not come in time: their popups go, with an error that says so.
    private func expireWindowWaits(now: Int64) {
        let expired = runtime.expire(now: now)
        guard !expired.isEmpty else { return }
        for entry in expired {
            ended(entry)
            guard case .pid(let pid, _, let timeoutMs) = entry.place else { continue }
            let alive = kill(pid, 0) == 0 || errno == EPERM
            let message = alive
                ? "no window of process \(pid) appeared within \(timeoutMs) ms"
                    + (display.processWindowRequirement.map { " (\($0))" } ?? "")
                : "process \(pid) ended without showing a window within \(timeoutMs) ms"
            logger.info("runtime popup removed", metadata: ["popup": "\(entry.name)", "reason": "\(message)"])
            let refusal = Refusal(message).json.text
            if let owner = entry.owner {
                control.finish(owner, with: refusal)
            } else if let request = entry.unanswered {
                control.reply(refusal, to: request)
            }
        }
    }

    private func status() -> StatusReport {
        let runningNow: StatusReport.RunningConfiguration = switch running {
        case .files: .files
        case .lastGood(let saved): .lastGood(file: reloading.lastGood.path, saved: saved)
        case .none: .none
        }
        return StatusReport(
            backend: display.interceptionName, display: display.status(), config: config.files, popups: config.popupCount,
            rejected: rejected, running: runningNow, unavailable: unavailableSources, open: engine.open.map(openPopup),
            waiting: runtime.entries.compactMap { entry in
                if case .pid(let pid, _, _) = entry.place { WaitingPopup(popup: entry.name, pid: pid) } else { nil }
            },
            monitors: control.subscriberCount, lastError: lastError)
    }

    // MARK: - Configuration

    /// Says which popups, anchors and exclusions can never match on this display.
    private func noteUnavailableSources() {
        unavailableSources = display.unavailableSources(in: config.model)
        for sentence in unavailableSources { logger.warning("\(sentence)") }
    }

    /// Loads the configuration again, off the loop; `request` (a `clickawayctl reload`) is
    /// answered once the outcome is known.
    private func requestReload(because cause: String, replyTo request: ControlServer.Request? = nil) {
        if let done = reloading.request(because: cause, replyTo: request, reloading: supervision.reloading) { finishReload(done) }
    }

    private func finishReload(_ done: Reloading.Finished) {
        if done.outcome.waitedMs > 0 {
            logger.info("waited for the configuration files to stop changing before reading them", metadata: ["ms": "\(done.outcome.waitedMs)"])
        }
        apply(done.outcome.result, because: done.cause)
        if let failure = done.outcome.keepFailure { logger.warning("cannot keep this configuration as the last good one: \(failure)") }
        let reply: JSON = switch done.outcome.result {
        case .success(let fresh): ReloadReply(popups: fresh.popupCount, files: fresh.files, waitedMs: done.outcome.waitedMs).json
        case .failure(let error): Refusal("the new configuration was rejected; the previous one keeps running", diagnostics: "\(error)").json
        }
        for request in done.requests { control.reply(reply.text, to: request) }
        supervision.ready(statusLine())
        if let next = reloading.startNext(reloading: supervision.reloading) { finishReload(next) }
    }

    /// A valid configuration replaces the running one at once, popups re-matched against
    /// the windows on screen; an invalid one is reported and the running one stays.
    private func apply(_ result: Result<LoadedConfig, ConfigError>, because cause: String) {
        let fresh: LoadedConfig
        switch result {
        case .success(let loaded): fresh = loaded
        case .failure(let error):
            rejected = "\(error)"
            lastError = "configuration rejected, keeping the previous one:\n\(error)"
            lastErrorIsRejection = true
            logger.error("configuration rejected, keeping the previous one (\(cause))\n\(error)")
            monitor.send(.rejected(cause: cause, diagnostics: "\(error)"))
            commands.notifyRejected("\(error)", running: running, enabled: config.model.settings.notify)
            return
        }
        let started = MonotonicClock.microseconds()
        // The last references to the replaced configuration go to the loader's thread.
        let replaced = (config, model)
        defer { reloading.retire(replaced) }
        config = fresh
        rejected = nil
        // The file was fixed: its rejection is no error any more.
        if lastErrorIsRejection { (lastError, lastErrorIsRejection) = (nil, false) }
        running = .files
        let dropped = runtime.keep(besides: fresh.model)
        for entry in dropped {
            rects.forget(entry.name)
            logger.warning("runtime popup \"\(entry.name)\" is removed: the new configuration has a popup of its name, or lacks one it refers to")
        }
        // Every runtime popup is in the new model: a model being built for the old one is
        // dropped when it comes.
        model = combinedModel()
        modelVersion += 1
        (staleModel, endedPopups) = (nil, [])
        // A click pressed before the reload is decided on its release by the new model.
        engine = DecisionEngine(model: model, continuing: engine)
        rects.keep(in: model)
        openRegisteredRects()
        display.configurationReplaced(model, backend: backend)
        answerRegistered()
        for entry in dropped { tellGone(entry, .gone(popup: entry.name, reason: .reload)) }
        // Monitors hear what closed before they hear of the reload.
        unsettled = true
        settle()
        // How long the swap kept the loop (bench/reload reads it).
        logger.info("configuration reloaded (\(cause))", metadata: [
            "popups": "\(fresh.popupCount)", "microseconds": "\(MonotonicClock.microseconds() - started)",
        ])
        for note in fresh.notes { logger.notice("\(note)") }
        noteUnavailableSources()
        monitor.send(.reloaded(cause: cause, popups: fresh.popupCount, files: fresh.files))
    }

    private func shutDown() {
        supervision.stopping()
        show.stop(because: "the daemon is stopping")
        display.release()
        display.flush()
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
