internal import ClickawayConfig
internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON
internal import ClickawaySystem
internal import Glibc
internal import Logging

/// Runtime popups (`add`, `wait`): registered, answered once the model has them, and removed
/// when dismissed, closed, their window gone or their `wait` ended, whoever waits told how.
extension Daemon {
    // MARK: - Runtime popups

    /// `add` and `wait`: a popup from a script, checked like a configured one, placed after
    /// the configured popups in the model. Answered once a model with it is swapped in (built
    /// off the loop), and for a process once its window is there.
    func register(_ request: RuntimePopupRequest, _ origin: ControlServer.Request, waiting: Bool,
                          displaySynced: Bool = false) throws(Refusal) -> JSON {
        let hold = LoopHold()
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
            if let why = display.state.abilities.windowsUnavailable { throw Refusal(why) }
            // A window mapped just before the request is known once the display has synced.
            guard displaySynced else {
                startSync(.register(request, origin, waiting: waiting))
                return .null
            }
            let window = try display.windows.popupWindow(for: id).get()
            if let other = runtime.name(ofWindow: window) {
                throw Refusal("window \(display.windows.describe(window)) is runtime popup \"\(other)\" already")
            }
            spec.source = .window(WindowMatch(window: window))
            place = .window(window)
        case .pid(let pid, let timeoutMs):
            if let why = display.state.abilities.windowsUnavailable { throw Refusal(why) }
            guard kill(pid, 0) == 0 || errno == EPERM else { throw Refusal("there is no process with pid \(pid)") }
            // No round trip: a window the display has not read yet is taken when it is read.
            spec.source = .window(WindowMatch(pid: pid))
            place = .pid(pid, deadline: .inMilliseconds(timeoutMs), timeoutMs: timeoutMs)
        }
        // Checked as the next model is built: the configured popups, then the runtime ones
        // (not the model in use, which may still have one that ended under this name).
        let problems = ModelValidator.problems(adding: runtime.specs + [spec], to: config.model)
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
        // How long the request kept the loop (bench/runtime and bench/bigconfig read it).
        logger.info("runtime popup registered", metadata: hold.logged(["popup": "\(spec.name)", "place": "\(place)"]))
        // Answered by `answerRegistered` or `settleRuntimeWindows`.
        return .null
    }

    /// The popup a request describes: `like`'s keys (else `[defaults]`), then the request's.
    func runtimeSpec(_ request: RuntimePopupRequest) throws(Refusal) -> PopupSpec {
        // A fresh name is none the model in use has, a runtime popup that ended among them.
        let name = request.name ?? runtime.freshName { [model] in model.popupIndex(named: $0) != nil }
        // The name of a runtime popup that ended is free, though the model in use has it until
        // the model without it is swapped in.
        let configured = config.model.popupIndex(named: name) != nil
        if configured || runtime.contains(name) {
            throw Refusal("there is a \(configured ? "configured" : "runtime") popup named \"\(name)\" already")
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
        return request.options.applied(to: spec)
    }

    /// A popup of the configuration or a runtime one, in the model or not yet.
    func popupSpec(named name: String) -> PopupSpec? {
        if let entry = runtime.entry(named: name) { return entry.spec }
        guard config.model.popupIndex(named: name) != nil, let index = model.popupIndex(named: name) else { return nil }
        return model.popups[Int(index)]
    }

    /// The runtime `rect` popups registered since the last model, open now that it has them
    /// (a reload's model may not have those registered while it loaded).
    func openRegisteredRects() {
        rectsOpening.removeAll { name in
            guard models.liveIndex(name) != nil else { return false }
            _ = rects.set(name, open: { _ in true }, model: model, outputs: engine.outputs, now: display.state.now)
            return true
        }
    }

    /// Answers the `add` and `wait` of the `rect` and window popups the model now has (a
    /// process's popup is answered when its window is there, a window's that went away is
    /// refused by `settleRuntimeWindows`).
    func answerRegistered() {
        for entry in runtime.entries where entry.unanswered != nil && models.liveIndex(entry.name) != nil {
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
    enum RuntimeEnd {
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
    func removeRuntime(_ names: Set<String>, _ end: RuntimeEnd) {
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
    func ended(_ entry: RuntimePopups.Entry) {
        models.end(entry.name)
        rectsOpening.removeAll { $0 == entry.name }
        modelChanged(.none)
    }

    /// Tells the `wait` of a runtime popup how it ended, and an `add` not answered yet that it
    /// never came to be.
    func tellGone(_ entry: RuntimePopups.Entry, _ outcome: WaitOutcome) {
        if entry.unanswered != nil {
            let reason = outcome.json["reason"]?.stringValue ?? "?"
            let refusal = switch entry.place {
            case .pid: Refusal("popup \"\(entry.name)\" went away (\(reason)) before its window appeared")
            case .window(let window): Refusal("window \(display.windows.describe(window)) went away while it was being registered")
            case .rect: Refusal("popup \"\(entry.name)\" went away (\(reason)) while it was being registered")
            }
            refuse(entry, refusal)
            return
        }
        if let owner = entry.owner { control.finish(owner, with: outcome.json.text) }
    }

    /// Tells a runtime popup's `wait` (or its `add`, not answered yet) why it never came to
    /// be or stays no longer.
    func refuse(_ entry: RuntimePopups.Entry, _ refusal: Refusal) {
        if let owner = entry.owner {
            control.finish(owner, with: refusal.json.text)
        } else if let request = entry.unanswered {
            control.reply(refusal.json.text, to: request)
        }
    }

    /// Part of `settle()`, for the runtime popups the model has: a process's window that
    /// appeared becomes its popup's window (and the request is answered); a runtime popup
    /// whose window is gone is removed, and so is a `rect` one closed with its parent
    /// (`clickawayctl close PARENT`). Each marks the model stale.
    func settleRuntimeWindows() {
        var gone: Set<String> = []
        var closed: Set<String> = []
        var resolved = false
        for entry in runtime.entries where models.liveIndex(entry.name) != nil {
            switch entry.place {
            case .rect:
                if !rects.isOpen(entry.name) { closed.insert(entry.name) }
            case .window(let window):
                if !display.windows.isPresent(window) { gone.insert(entry.name) }
            case .pid:
                guard let index = models.liveIndex(entry.name),
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
    func expireWindowWaits(now: Int64) {
        let expired = runtime.expire(now: now)
        guard !expired.isEmpty else { return }
        for entry in expired {
            ended(entry)
            guard case .pid(let pid, _, let timeoutMs) = entry.place else { continue }
            let alive = kill(pid, 0) == 0 || errno == EPERM
            let message = alive
                ? "no window of process \(pid) appeared within \(timeoutMs) ms"
                    + (display.state.abilities.processWindowRequirement.map { " (\($0))" } ?? "")
                : "process \(pid) ended without showing a window within \(timeoutMs) ms"
            logger.info("runtime popup removed", metadata: ["popup": "\(entry.name)", "reason": "\(message)"])
            refuse(entry, Refusal(message))
        }
    }
}
