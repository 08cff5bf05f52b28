internal import ClickawayConfig
internal import ClickawayControl
internal import ClickawayCore
internal import ClickawaySystem
internal import Glibc
internal import Logging

/// Reloads of the configuration: asked for by a changed file (the watcher), SIGHUP or
/// `clickawayctl reload`, loaded off the loop (`ConfigReloader`), one at a time. A reload
/// asked for while one runs follows it: the files may have changed since it began reading.
final class Reloading {
    /// A load finished: its outcome, why it was asked for, and the `reload` requests to answer.
    struct Finished {
        var outcome: ConfigReloader.Outcome
        var cause: String
        var requests: [ControlServer.Request]
    }

    private let environment: [String: String]

    let configFile: String?
    /// The last configuration that loaded, kept for starts with a broken file.
    let lastGood: LastGoodConfig
    private let logger: Logger
    /// Loads configurations off the loop; nil if its thread could not start.
    private let reloader: ConfigReloader?
    private let watcher: ConfigWatcher?
    private var inProgress: (causes: [String], requests: [ControlServer.Request])?
    /// Whether a load was started and its outcome not taken yet.
    var isLoading: Bool { inProgress != nil }
    private var next: (causes: [String], requests: [ControlServer.Request])?
    /// The files changed and their changes settled: a reload is due (`takeFilesChanged`).
    private var filesChanged = false
    /// Loads finished, not taken yet (`takeFinished`).
    private var finished: [Finished] = []
    /// Whether anything above waits to be taken: the daemon asks at every pass, a click's too,
    /// so stored.
    private(set) var hasWork = false
    /// What the loader handed back, kept until `retireHandedBack` so that the loader's thread
    /// frees it, whatever the daemon took of it.
    private var handedBack = ConfigReloader.Ready()
    /// Without a loader thread a load finishes where it is asked for: this wakes the loop at
    /// once, so that the next `step()` takes it.
    private let finishedHere = LoopTimer()

    init(configFile: String?, environment: [String: String], logger: Logger) {
        self.configFile = configFile
        self.environment = environment
        self.logger = logger
        lastGood = LastGoodConfig(state: StateLocation(environment: environment), configFile: configFile, environment: environment)
        reloader = ConfigReloader()
        if reloader == nil { logger.warning("cannot start the configuration loader thread; configurations load on the main loop") }
        watcher = ConfigWatcher(logger: logger)
        watcher?.watch(Self.watchedPaths(configFile: configFile, environment: environment))
    }

    /// Watches the files and the loader. The loop's callbacks only note what came: the daemon
    /// takes it in `step()` (`takeFilesChanged`, `takeFinished`, `takeBuilt`).
    func register(with loop: PollLoop) {
        loop.schedule(finishedHere) { _ in }
        if let watcher {
            loop.watch(watcher.descriptor) { _ in watcher.read(now: MonotonicClock.milliseconds()) }
            loop.schedule(watcher.debounce) { [unowned self] now in
                if watcher.takeDue(now: now) { (filesChanged, hasWork) = (true, true) }
            }
        }
        if let reloader {
            loop.watch(reloader.descriptor) { [unowned self] _ in
                let ready = reloader.takeReady()
                // Newer than anything not taken yet, which the loader's thread frees.
                retireHandedBack()
                handedBack = ready
                hasWork = true
                if let outcome = ready.outcome, let done = complete(outcome) { finished.append(done) }
            }
        }
    }

    /// Whether the files changed (and settled) since last asked: a reload is due.
    func takeFilesChanged() -> Bool {
        defer { filesChanged = false }
        return filesChanged
    }

    /// The next finished load, in the order they finished.
    func takeFinished() -> Finished? {
        finishedHere.deadline = nil
        return finished.isEmpty ? nil : finished.removeFirst()
    }

    /// The model the loader built with runtime popups, until `retireHandedBack`.
    func takeBuilt() -> ConfigReloader.Built? { handedBack.built }

    /// The loop's last references to what the loader handed back, once the daemon has taken
    /// what it keeps: a model it did not take (built for runtime popups that changed since,
    /// or a reload's when it took the configured one) is freed on the loader's thread.
    func retireHandedBack() {
        hasWork = !finished.isEmpty
        guard handedBack.built != nil || handedBack.outcome != nil else { return }
        reloader?.retire(handedBack.take())
    }

    /// Loads the configuration again, off the loop; `request` (a `clickawayctl reload`) is
    /// answered once the outcome is known (`takeFinished`). The loader builds the new model
    /// with the runtime popups `runtime` (those registered now) that fit it.
    func request(because cause: String, replyTo request: ControlServer.Request?, runtime: [PopupSpec],
                 reloading: (String) -> Void) {
        let requests = request.map { [$0] } ?? []
        guard inProgress == nil else {
            next = ((next?.causes ?? []) + [cause], (next?.requests ?? []) + requests)
            return
        }
        start(causes: [cause], requests: requests, runtime: runtime, reloading: reloading)
    }

    /// Builds `base` with `added` after its popups off the loop; returns it at once when there
    /// is no loader thread.
    func build(_ build: ConfigReloader.Build) -> ConfigReloader.Built? {
        guard let reloader else { return build.perform() }
        reloader.start(build)
        return nil
    }

    /// Frees `value` off the loop, on the loader's thread (on the loop when there is none).
    /// Callers pass their last reference as a temporary (`Optional.take()`): from a binding,
    /// even a `consume`d one, swiftc may pass a copy and release the binding after the call,
    /// and that release may then be the last, on the loop.
    func retire(_ value: consuming any Sendable, givingBack: Bool = false) {
        reloader?.retire(value, givingBack: givingBack)
    }

    /// After one finished: the reload asked for meanwhile, if any, with `runtime` as they are now.
    func startNext(runtime: [PopupSpec], reloading: (String) -> Void) {
        guard let queued = next else { return }
        next = nil
        start(causes: queued.causes, requests: queued.requests, runtime: runtime, reloading: reloading)
    }

    /// Without a loader thread the load is done here, and finished like the others.
    private func start(causes: [String], requests: [ControlServer.Request], runtime: [PopupSpec],
                       reloading: (String) -> Void) {
        inProgress = (causes, requests)
        reloading("reloading the configuration (\(causes[0]))")
        // Watched before the load reads: a change while it reads is a change seen.
        watcher?.watch(Self.watchedPaths(configFile: configFile, environment: environment))
        let job = ConfigReloader.Job(configFile: configFile, environment: environment, lastGood: lastGood, runtime: runtime)
        guard let reloader else {
            if let done = complete(ConfigReloader.perform(job)) {
                finished.append(done)
                hasWork = true
                finishedHere.deadline = .inMilliseconds(0)
            }
            return
        }
        reloader.start(job)
    }

    private func complete(_ outcome: ConfigReloader.Outcome) -> Finished? {
        guard let batch = inProgress else { return nil }
        inProgress = nil
        watcher?.watch(outcome.watchTargets)
        // What was read against what is there now: a change the watcher could not see (or
        // saw before its watch) is loaded next.
        if ConfigSnapshot.take(configFile: configFile, environment: environment) != outcome.snapshot {
            logger.info("the configuration changed while it was being loaded: loading it again")
            watcher?.markChanged(now: MonotonicClock.milliseconds())
        }
        var seen: Set<String> = []
        return Finished(outcome: outcome, cause: batch.causes.filter { seen.insert($0).inserted }.joined(separator: ", "),
                        requests: batch.requests)
    }

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
}
