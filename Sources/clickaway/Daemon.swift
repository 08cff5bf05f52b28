import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import Glibc
import Logging
import SystemPackage

/// What every display server shares: the configuration and its reloads, the decision
/// engine, `rect` popups, dismissals and their commands, the control socket, systemd, and
/// one poll(2) loop over the display's socket, the control socket, the config watcher, the
/// config loader and the signal pipe. A click is read, decided and answered before anything
/// else; the one other thread loads configurations (`ConfigReloader`), never touching this state.
///
/// `X11Daemon` and `WaylandDaemon` supply the display: how clicks are intercepted, where
/// windows come from and how they are closed.
class Daemon {
    let logger: Logger
    var config: LoadedConfig
    let configFile: String?
    var engine: DecisionEngine
    let windows: any WindowSource
    /// `--backend`, which wins over `[settings] backend`.
    let backendOverride: Backend?
    let spawner: Spawner
    let loop: PollLoop
    let control: ControlServer
    let watcher: ConfigWatcher?
    let notifier: SystemdNotifier?
    var lastError: String?
    /// The diagnostics of the last configuration rejected since the last one accepted.
    var rejected: String?
    /// Where the running configuration came from: the files, or (when they had errors at
    /// start) the last good configuration or none.
    var running = RunningConfig.files
    /// The last configuration that loaded, kept for starts with a broken file.
    let lastGood: LastGoodConfig
    /// Loads configurations off the loop; nil if its thread could not start.
    private let reloader: ConfigReloader?
    /// The causes and `reload` requests of the load in progress, and of the one to start
    /// after it (asked for meanwhile: the files may have changed since it began reading).
    private var reloadInProgress: (causes: [String], requests: [ControlServer.Request])?
    private var reloadNext: (causes: [String], requests: [ControlServer.Request])?
    /// Popup sources this display cannot provide, said at every load (see `unavailable(in:)`).
    private(set) var unavailableSources: [String] = []
    /// `rect` popups opened by `clickawayctl open`, bottom to top, with when they opened.
    var rectOpen: [(name: String, openedAt: Int64, id: UInt64)] = []
    /// The next `rect` popup instance id: above 2^32, so never a window's, and kept by the
    /// instance across reloads.
    var nextRectID = UInt64(1) << 32
    /// The open popups last announced to monitors, by instance id, as they were described
    /// then: a reload may renumber or remove their popups.
    private var announced: [UInt64: [(String, JSON)]] = [:]
    private var lastStatusLine = ""
    private var nextWatchdog: Deadline?

    init(config: LoadedConfig, configFile: String?, backend: Backend?, outputs: [String: Rect], windows: any WindowSource,
         loop: PollLoop, control: ControlServer, notifier: SystemdNotifier?, logger: Logger) {
        self.config = config
        self.configFile = configFile
        backendOverride = backend
        engine = DecisionEngine(model: config.model, outputs: outputs)
        self.windows = windows
        self.loop = loop
        self.control = control
        self.notifier = notifier
        self.logger = logger
        spawner = Spawner(logger: logger)
        let environment = processEnvironment()
        lastGood = LastGoodConfig(state: StateLocation(environment: environment), configFile: configFile, environment: environment)
        reloader = ConfigReloader()
        if reloader == nil { logger.warning("cannot start the configuration loader thread; configurations load on the main loop") }
        watcher = ConfigWatcher(logger: logger)
        watcher?.watch(Self.watchedPaths(configFile: configFile, environment: environment))
    }

    var effectiveBackend: Backend { backendOverride ?? config.model.settings.backend }

    // MARK: - What a display supplies

    /// The display's name, as connected to.
    var displayName: String { fatalError("subclass") }
    /// How clicks are taken now, as `status` and `monitor` name it.
    var interceptionName: String { fatalError("subclass") }
    /// Whether clicks go through the daemon now.
    var isIntercepting: Bool { fatalError("subclass") }
    /// The display's connection, for poll(2).
    var displayDescriptor: Int32 { fatalError("subclass") }
    /// Why the connection to the display broke, once it has.
    var displayFailure: String? { fatalError("subclass") }
    /// Milliseconds on the clock click times are in.
    func now() -> Int64 { fatalError("subclass") }
    /// Handles every event already read from the display.
    func handleDisplayEvents() { fatalError("subclass") }
    /// Sends what is buffered for the display.
    func flushDisplay() { fatalError("subclass") }
    /// Just before poll(2): the display's socket must be safe to sleep on.
    func prepareToWait() { flushDisplay() }
    /// Just after poll(2), before anything else: `readable` says if the display's socket is.
    func finishWait(readable: Bool) {}
    /// Takes clicks for the open popups (`engine.open`): grabs, the shield, the overlay.
    func updateInterception() { fatalError("subclass") }
    /// Closes a popup's window by its `close`, `unmap` or `kill` (commands are run here).
    func closeWindow(_ window: UInt32, _ spec: PopupSpec, cause: DismissCause) { fatalError("subclass") }
    /// One round trip, with every event the display sent before it handled; nil or why not.
    func syncDisplay() -> String? { fatalError("subclass") }
    /// The display's part of `status`: its identity first, then its interception details.
    func displayStatus() -> (identity: [(String, JSON)], details: [(String, JSON)]) { fatalError("subclass") }
    /// A new configuration was accepted; the display follows its backend setting.
    func configurationReplaced() {}
    /// The popup, anchor and exclusion sources of `model` this display cannot provide.
    func unavailable(in model: ClickModel) -> [String] { [] }
    /// When the display next wants `handleDisplayEvents()` without input (a timer), if ever.
    var displayDeadline: Deadline? { nil }
    /// Other descriptors of the display to poll (sway's IPC), and what to do when one is readable.
    var extraDescriptors: [FileDescriptor] { [] }
    func extraDescriptorReadable() {}
    /// Puts everything back as it was before the daemon started.
    func releaseDisplay() {}

    // MARK: - The loop

    /// Runs until SIGTERM/SIGINT (returns 0) or the display goes away (returns 1).
    func run() -> Int32 {
        logger.info("running", metadata: [
            "display": "\(displayName)", "backend": "\(interceptionName)", "popups": "\(config.popupCount)",
            "control": "\(control.path)",
        ])
        noteUnavailableSources(config.model)
        notifier?.send("READY=1\nSTATUS=\(statusLine())")
        if let interval = notifier?.watchdogIntervalMs { nextWatchdog = .inMilliseconds(interval) }
        registerWithLoop()
        while true {
            if Signals.terminate != 0 {
                shutDown()
                return 0
            }
            if Signals.reload != 0 {
                Signals.reload = 0
                requestReload(because: "SIGHUP")
            }
            handleDisplayEvents()
            // Only with the events read: a window already gone is not mistaken for one that
            // stayed after its dismissal.
            if Signals.child != 0 {
                Signals.child = 0
                for failed in spawner.reap() where windows.closing.cancel(failed) && windows.isPresent(failed) {
                    logger.warning("the dismiss command failed and the window is still there: it counts as open again",
                                   metadata: ["window": "\(windows.describe(failed))"])
                    refresh()
                }
            }
            loop.runDueDeadlines()
            while let request = control.nextRequest() { answer(request) }
            // Drain the display's queue before sleeping: replies can pull events in unseen by poll.
            handleDisplayEvents()
            if let failure = displayFailure {
                logger.critical("lost the connection to the display \(displayName): \(failure)")
                notifier?.send("STOPPING=1\nSTATUS=lost the display \(displayName)")
                spawner.reap()
                return 1
            }
            loop.wait()
        }
    }

    /// Each source of input and each deadline, with what to do about it. The display comes
    /// first: libwayland's read must be finished before anything else runs.
    private func registerWithLoop() {
        loop.add(DisplaySource(self))
        loop.watch(Signals.pipe.read) { _ in Signals.drain() }
        if let watcher {
            loop.watch(watcher.descriptor) { _ in watcher.read(now: MonotonicClock.milliseconds()) }
            loop.schedule({ watcher.due.map(Deadline.init(milliseconds:)) }) { [unowned self] now in
                if watcher.takeDue(now: now) { requestReload(because: "a configuration file changed") }
            }
        }
        if let reloader { loop.watch(reloader.descriptor) { [unowned self] _ in reloadFinished() } }
        for fd in extraDescriptors { loop.watch(fd) { [unowned self] _ in extraDescriptorReadable() } }
        loop.schedule({ [unowned self] in spawner.nextSlowCheck }) { [unowned self] now in spawner.reportSlow(now: now) }
        loop.schedule({ [unowned self] in windows.closing.nextDeadline.map(Deadline.init(milliseconds:)) }) { [unowned self] now in
            expireClosing(now: now)
        }
        loop.schedule({ [unowned self] in nextWatchdog }) { [unowned self] now in pingWatchdog(now: now) }
        loop.schedule({ [unowned self] in displayDeadline }) { [unowned self] _ in handleDisplayEvents() }
    }

    /// The display's connection in the loop: flushed (Wayland: a read prepared) before each
    /// sleep, and the read finished first after it.
    private final class DisplaySource: PollSource {
        unowned let daemon: Daemon
        init(_ daemon: Daemon) { self.daemon = daemon }
        var pollDescriptor: FileDescriptor { FileDescriptor(rawValue: daemon.displayDescriptor) }
        func prepareToSleep() -> Bool {
            daemon.prepareToWait()
            return false
        }
        func pollReturned(_ readiness: Readiness) { daemon.finishWait(readable: !readiness.isEmpty) }
    }

    private func pingWatchdog(now: Int64) {
        guard let notifier, let interval = notifier.watchdogIntervalMs else { return }
        notifier.send("WATCHDOG=1")
        nextWatchdog = Deadline(milliseconds: now + interval)
    }

    private func expireClosing(now: Int64) {
        let stillThere = windows.closing.expire(now: now).filter(windows.isPresent)
        for window in stillThere {
            logger.warning("a dismissed window is still there \(ClosingWindows.timeoutMs) ms later: it counts as open again",
                           metadata: ["window": "\(windows.describe(window))"])
        }
        if !stillThere.isEmpty { refresh() }
    }

    // MARK: - Dismissing

    /// What dismissed popups: a click (button and position) or the Escape key (button 0).
    struct DismissCause {
        var reason: String
        var button: UInt8
        var x: Int32
        var y: Int32
        /// The event's time on the display's clock (X: for WM_DELETE_WINDOW).
        var time: UInt32
        var click: String
    }

    func act(on dismissed: [PopupInstance], decision: Decision, button: UInt8, x: Int32, y: Int32, time: UInt32) {
        dismiss(dismissed, cause: DismissCause(reason: decision.reason.rawValue, button: button, x: x, y: y,
                                               time: time, click: decision.click.rawValue))
    }

    func dismiss(_ dismissed: [PopupInstance], cause: DismissCause) {
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
        let now = MonotonicClock.milliseconds()
        for instance in dismissed {
            let spec = config.model.popups[Int(instance.popup)]
            if let window = Self.window(of: instance) {
                windows.closing.mark(window, now: now)
                if case .command(let argv) = spec.dismiss {
                    runDismissCommand(argv, spec, window: window, cause: cause)
                } else {
                    closeWindow(window, spec, cause: cause)
                }
            } else {
                rectOpen.removeAll { $0.name == spec.name }
                if case .command(let argv) = spec.dismiss { runDismissCommand(argv, spec, window: nil, cause: cause) }
            }
        }
        flushDisplay()
        refresh()
    }

    /// The environment says what dismissed the popup; for the Escape key, button and
    /// position are empty and CLICKAWAY_KEY is "Escape".
    private func runDismissCommand(_ argv: [String], _ spec: PopupSpec, window: UInt32?, cause: DismissCause) {
        let byKey = cause.button == 0
        let started = spawner.spawn(argv, environment: [
            "CLICKAWAY_POPUP": spec.name, "CLICKAWAY_WINDOW": window.map(windows.describe) ?? "",
            "CLICKAWAY_BUTTON": byKey ? "" : "\(cause.button)", "CLICKAWAY_X": byKey ? "" : "\(cause.x)",
            "CLICKAWAY_Y": byKey ? "" : "\(cause.y)", "CLICKAWAY_KEY": byKey ? "Escape" : "",
        ], popup: spec.name, window: window, now: MonotonicClock.milliseconds())
        // The command could not even start: the window stays, and so does the popup.
        if !started, let window { windows.closing.cancel(window) }
    }

    // MARK: - State

    /// Instance ids: a window popup's is its window id (32 bits); a `rect` popup's is
    /// counted from 2^32 (`nextRectID`), so the two never meet.
    static func window(of instance: PopupInstance) -> UInt32? {
        instance.id < UInt64(1) << 32 ? UInt32(instance.id) : nil
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

    /// Brings the engine and the interception in line with the windows and the `rect`
    /// popups, and tells monitors what opened and closed. Never called between a press and
    /// its answer.
    func refresh() {
        engine.setOpen(windows.openInstances() + rectInstances())
        engine.setWindowAreas(windows.windowAreas())
        updateInterception()
        // Announced once the display has the new interception: a script that clicks when it
        // sees "opened" is not faster than the daemon.
        flushDisplay()
        announceOpenChanges()
        let line = statusLine()
        if line != lastStatusLine {
            lastStatusLine = line
            notifier?.send("STATUS=\(line)")
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
        [
            ("popup", .string(config.model.popups[Int(o.popup)].name)),
            ("window", Self.window(of: o).map { .string(windows.describe($0)) } ?? .null),
            ("rect", o.rect.json),
        ]
    }

    /// One `monitor` line: `{"event":NAME,...}`.
    func broadcast(_ event: String, _ fields: [(String, JSON)]) {
        guard control.hasSubscribers else { return }
        control.broadcast(JSON.object([("event", .string(event))] + fields).text)
    }

    func statusLine() -> String {
        let base = "\(config.popupCount) popups configured, \(engine.open.count) open" + (isIntercepting ? ", intercepting clicks" : "")
        switch running {
        case .lastGood: return base + "; the configuration has errors: running the last good one"
        case .none: return base + "; the configuration has errors: running with none"
        case .files: return rejected == nil ? base : base + "; the last configuration edit was rejected"
        }
    }

    // MARK: - Config

    /// The files whose changes reload the configuration: the one given with --config, or
    /// the XDG config.toml and its conf.d.
    /// A file that is a symlink (stow, home-manager) is watched where it points too.
    static func watchedPaths(configFile: String?, environment: [String: String]) -> [ConfigWatcher.Target] {
        let location = ConfigLocation(environment: environment)
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

    /// The popups, anchors and exclusions whose window match satisfies `test`, as a user
    /// finds them in the config: `popup "menu"`, `an anchor of popup "menu"`, `exclude #2`.
    static func windowMatchUsers(in model: ClickModel, where test: (WindowMatch) -> Bool) -> [String] {
        var users: [String] = []
        for p in model.popups {
            if case .window(let m) = p.source, test(m) { users.append("popup \"\(p.name)\"") }
            for case .window(let m) in p.anchors where test(m) {
                users.append("an anchor of popup \"\(p.name)\"")
                break
            }
        }
        for (i, e) in model.exclusions.enumerated() {
            if case .window(let m) = e.source, test(m) { users.append("exclude #\(i + 1)") }
        }
        return users
    }

    /// Says which popups, anchors and exclusions can never match on this display.
    private func noteUnavailableSources(_ model: ClickModel) {
        unavailableSources = unavailable(in: model)
        for sentence in unavailableSources { logger.warning("\(sentence)") }
    }

    /// Loads the configuration again, off the loop; `request` (a `clickawayctl reload`) is
    /// answered once the outcome is known. Asked for while a load runs, another follows it.
    func requestReload(because cause: String, replyTo request: ControlServer.Request? = nil) {
        let requests = request.map { [$0] } ?? []
        guard reloadInProgress == nil else {
            reloadNext = ((reloadNext?.causes ?? []) + [cause], (reloadNext?.requests ?? []) + requests)
            return
        }
        startReload(causes: [cause], requests: requests)
    }

    private func startReload(causes: [String], requests: [ControlServer.Request]) {
        reloadInProgress = (causes, requests)
        notifier?.sendReloading(status: "reloading the configuration (\(causes[0]))")
        let job = ConfigReloader.Job(configFile: configFile, environment: processEnvironment(), lastGood: lastGood)
        if let reloader {
            reloader.start(job)
        } else {
            finishReload(ConfigReloader.perform(job))
        }
    }

    private func reloadFinished() {
        guard let outcome = reloader?.takeOutcome() else { return }
        finishReload(outcome)
    }

    private func finishReload(_ outcome: ConfigReloader.Outcome) {
        guard let batch = reloadInProgress else { return }
        reloadInProgress = nil
        watcher?.watch(outcome.watchTargets)
        var seen: Set<String> = []
        let cause = batch.causes.filter { seen.insert($0).inserted }.joined(separator: ", ")
        apply(outcome.result, because: cause)
        if let failure = outcome.keepFailure { logger.warning("cannot keep this configuration as the last good one: \(failure)") }
        let reply = reloadReply(outcome.result).text
        for request in batch.requests { control.reply(reply, to: request) }
        notifier?.send("READY=1\nSTATUS=\(statusLine())")
        if let next = reloadNext {
            reloadNext = nil
            startReload(causes: next.causes, requests: next.requests)
        }
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
            logger.error("configuration rejected, keeping the previous one (\(cause))\n\(error)")
            broadcast("rejected", [("cause", .string(cause)), ("diagnostics", .string("\(error)"))])
            return
        }
        config = fresh
        rejected = nil
        running = .files
        engine = DecisionEngine(model: fresh.model, outputs: engine.outputs)
        windows.replaceModel(fresh.model, now: now())
        rectOpen.removeAll { entry in
            guard let i = fresh.model.popupIndex(named: entry.name), case .rect = fresh.model.popups[Int(i)].source else { return true }
            return false
        }
        configurationReplaced()
        refresh()
        logger.info("configuration reloaded (\(cause))", metadata: ["popups": "\(fresh.popupCount)"])
        for note in fresh.notes { logger.notice("\(note)") }
        noteUnavailableSources(fresh.model)
        broadcast("reloaded", [("cause", .string(cause)), ("popups", .int(Int64(fresh.popupCount))),
                               ("files", .array(fresh.files.map(JSON.string)))])
    }

    /// At start the files had errors (`diagnostics`): the daemon runs with `running`, the
    /// last good configuration or none, until they are fixed.
    func startedWithErrors(_ diagnostics: String, running: RunningConfig) {
        rejected = diagnostics
        self.running = running
    }

    private func shutDown() {
        notifier?.send("STOPPING=1")
        releaseDisplay()
        flushDisplay()
        spawner.reap()
        logger.info("exiting: grabs released")
    }
}

/// Where the running configuration came from.
enum RunningConfig: Equatable {
    case files
    /// The files had errors at start: the last configuration that loaded, saved at that time.
    case lastGood(saved: String)
    /// The files had errors at start and there was no last good configuration.
    case none

    var savedAt: String? {
        if case .lastGood(let saved) = self { return saved }
        return nil
    }

    /// How `status` names it.
    var name: String {
        switch self {
        case .files: return "files"
        case .lastGood: return "last-good"
        case .none: return "none"
        }
    }
}
