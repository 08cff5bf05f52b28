internal import ClickawayConfig
internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON
internal import ClickawaySystem
internal import Logging

/// The models: built with the runtime popups off the loop and swapped in, and replaced by a
/// reloaded configuration.
extension Daemon {
    /// The model with the runtime popups; should they not fit the configuration, which each
    /// one's check before it was added rules out, they are all removed and the configured
    /// model is used.
    func fitted(_ combined: Result<ClickModel, ClickModel.Invalid>) -> ClickModel {
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
    func modelChanged(_ lookup: WindowLookup) {
        models.runtimeChanged(lookup)
        unsettled = true
    }

    /// Asks the loader's thread for the configured popups followed by the runtime ones. Part
    /// of `settle()`; returns whether the model was swapped in at once (no loader thread).
    func buildModel() -> Bool {
        let change = models.startBuilding()
        guard let built = reloading.build(ConfigReloader.Build(base: config.model, added: runtime.specs, version: change)) else {
            return false
        }
        return received(built)
    }

    /// A reload the files' changes call for, and what the loader finished since the last
    /// pass: reloads first (a model built with the replaced configuration, ready with it, is
    /// not worth swapping in for a moment), then the model built with the runtime popups,
    /// swapped in when they are still those it was built with (else the settle builds it
    /// again).
    func handleReloads() {
        guard reloading.hasWork else { return }
        if reloading.takeFilesChanged() { requestReload(because: "a configuration file changed") }
        while let done = reloading.takeFinished() { finishReload(done) }
        if let built = reloading.takeBuilt() { _ = received(built) }
        reloading.retireHandedBack()
    }

    /// Swaps a built model in if it is still wanted; returns whether it was.
    func received(_ built: ConfigReloader.Built) -> Bool {
        guard let lookup = models.takeBuilt(forChange: built.version) else { return false }
        let hold = LoopHold()
        // The replaced model goes to the loader's thread as a temporary: its release is the last.
        reloading.retire(swap(to: fitted(built.model)) { _ = display.configure($0, .runtimePopups(lookingAt: lookup)) })
        // How long the swap held the loop (bench/bigconfig reads it).
        logger.info("model with the runtime popups swapped in", metadata: hold.logged(["popups": "\(model.popups.count)"]))
        return true
    }

    /// Puts `fresh` in use, for a reload and for runtime popups alike: the engine (a click in
    /// progress goes on), the `rect` popups, the display's windows (`tell`), and the
    /// registrations it completes answered. A reload's model says which runtime popups it was
    /// built with (`besides`): those changed since are left out, those registered since are
    /// built in next. Returns the model it replaced, for the caller to retire.
    func swap(to fresh: ClickModel, besides built: [PopupSpec]? = nil, tell: (ClickModel) -> Void) -> ClickModel {
        let replaced = models.swap(to: fresh)
        if let built { followRuntime(besides: built) }
        engine = DecisionEngine(model: model, continuing: engine)
        rects.keep(in: model)
        openRegisteredRects()
        tell(model)
        answerRegistered()
        unsettled = true
        return replaced
    }

    // MARK: - Configuration

    /// Says which popups, anchors and exclusions can never match on this display.
    func noteUnavailableSources() {
        unavailableSources = display.state.abilities.unavailableSources(in: config.model)
        for sentence in unavailableSources { logger.warning("\(sentence)") }
    }

    /// Loads the configuration again, off the loop; `request` (a `clickawayctl reload`) is
    /// answered once the outcome is known.
    func requestReload(because cause: String, replyTo request: ControlServer.Request? = nil) {
        reloading.request(because: cause, replyTo: request, runtime: runtime.specs, reloading: supervision.reloading)
    }

    func finishReload(_ done: Reloading.Finished) {
        if done.outcome.waitedMs > 0 {
            logger.info("waited for the configuration files to stop changing before reading them", metadata: ["ms": "\(done.outcome.waitedMs)"])
        }
        let event = apply(done.outcome.result, prepared: done.outcome.prepared, because: done.cause)
        if let failure = done.outcome.keepFailure { logger.warning("cannot keep this configuration as the last good one: \(failure)") }
        let reply: JSON = switch done.outcome.result {
        case .success(let fresh): ReloadReply(popups: fresh.popupCount, files: fresh.files, waitedMs: done.outcome.waitedMs).json
        case .failure(let error): Refusal("the new configuration was rejected; the previous one keeps running", diagnostics: "\(error)").json
        }
        // Monitors hear what the reload closed (the settle) before they hear of the reload,
        // and `clickawayctl reload` returns once the interception follows it.
        afterSettle.append(.reloaded(reply: reply.text, to: done.requests, event: event))
        supervision.ready(statusLine())
        reloading.startNext(runtime: runtime.specs, reloading: supervision.reloading)
    }

    /// A valid configuration replaces the running one at once, popups re-matched against
    /// the windows on screen; an invalid one is reported and the running one stays.
    /// `prepared`: its model with the runtime popups registered when the load began, built by
    /// the loader; those registered since are added by a model built off the loop after.
    /// Returns the `reloaded` event, sent once the pass has settled.
    func apply(_ result: Result<LoadedConfig, ConfigError>, prepared: ConfigReloader.Prepared?, because cause: String) -> MonitorEvent? {
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
            return nil
        }
        let hold = LoopHold()
        // The last references to the replaced configuration go to the loader's thread.
        var replaced: LoadedConfig? = config
        let shrinking = Self.shrinks(from: model.popups.count, to: fresh.model.popups.count)
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
        // A model being built for the old configuration is dropped when it comes.
        models.configurationReplaced()
        let (reloaded, built) = reloadedModel(fresh.model, prepared)
        // A click pressed before the reload is decided on its release by the new model.
        var replacedModel: ClickModel? = swap(to: reloaded, besides: built) { model in
            if let unapplied = reconfigureDisplay(model) { (lastError, lastErrorIsRejection) = (unapplied, false) }
        }
        for entry in dropped { tellGone(entry, .gone(popup: entry.name, reason: .reload)) }
        reloading.retire((replaced.take()!, replacedModel.take()!), givingBack: shrinking)
        // How long the swap kept the loop (bench/bigconfig reads it).
        logger.info("configuration reloaded (\(cause))", metadata: hold.logged(["popups": "\(fresh.popupCount)"]))
        for note in fresh.notes { logger.notice("\(note)") }
        noteUnavailableSources()
        return .reloaded(cause: cause, popups: fresh.popupCount, files: fresh.files)
    }

    /// Tells the display of a reloaded model and the X11 mode its backend asks for; the
    /// display server is chosen at start, so a backend of another one is kept for the next
    /// start (and the display keeps its mode). Returns what is not applied, logged.
    func reconfigureDisplay(_ model: ClickModel) -> String? {
        let state = display.state
        guard let kind = backend.displayKind, kind != state.kind else { return display.configure(model, .reloaded(backend.x11Mode)) }
        _ = display.configure(model, .reloaded(nil))
        let unapplied = "backend = \"\(backend.rawValue)\" takes effect when clickaway starts again; keeping \(state.interception) on \(state.name)"
        logger.error("\(unapplied)")
        return unapplied
    }

    /// Whether a reload from `old` popups to `new` frees enough that its memory should go back
    /// to the system: glibc otherwise keeps it for later allocations (a daemon that ran a 4 MiB
    /// configuration stayed at 200 MB after a reload to the example one). Not between big
    /// configurations: giving back takes the loop's free pages too, faulted in again after.
    static func shrinks(from old: Int, to new: Int) -> Bool {
        old >= 10_000 && new <= old / 2
    }

    /// The model a reload swaps in, and the runtime popups it has: the loader's, with the
    /// runtime popups registered when the load began that fit the new configuration, unless
    /// none of those is still registered as it was (then the configured one: nothing to leave
    /// out of the engine). The loader's thread frees the one not taken (`Reloading`).
    func reloadedModel(_ configured: ClickModel, _ prepared: ConfigReloader.Prepared?) -> (ClickModel, [PopupSpec]) {
        guard let prepared, prepared.specs.contains(where: { runtime.entry(named: $0.name)?.spec == $0 }) else {
            return (configured, [])
        }
        switch prepared.model {
        case .success(let combined): return (combined, prepared.specs)
        case .failure: return (fitted(prepared.model), [])
        }
    }

    /// After a reload swapped in a model with the runtime popups `built`: those not registered
    /// as they were any more (removed, dropped by the reload, or changed, such as a process's
    /// popup that found its window) are left out of the engine, and those registered and not
    /// in it are added, by a model built off the loop (a `rect` one opens when that model has
    /// it, should it have been open before and closed with the reload's model).
    func followRuntime(besides built: [PopupSpec]) {
        var registered: [String: PopupSpec] = [:]
        for entry in runtime.entries { registered[entry.name] = entry.spec }
        var inModel: [String: PopupSpec] = [:]
        for spec in built {
            inModel[spec.name] = spec
            guard registered[spec.name] != spec, model.popupIndex(named: spec.name) != nil else { continue }
            models.end(spec.name)
            modelChanged(.none)
        }
        for entry in runtime.entries where inModel[entry.name] != entry.spec {
            switch entry.place {
            case .rect:
                if !rectsOpening.contains(entry.name) { rectsOpening.append(entry.name) }
                modelChanged(.none)
            case .window(let window): modelChanged(.window(window))
            case .pid: modelChanged(.all)
            }
        }
    }
}
