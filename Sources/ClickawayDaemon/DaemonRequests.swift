internal import ClickawayConfig
internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON
internal import Logging

/// Control requests: each handled in the pass it came in, and answered at once, after the
/// pass's settle when the reply tells of the state (`status`, `monitor`), or once
/// what it waits for is there (a reload, the display's sync or its answer about the pointer,
/// a runtime popup's model).
extension Daemon {
    // MARK: - Control requests

    func answer(_ request: ControlServer.Request) {
        // What it asks is settled in this pass without waiting for the pace of windows' changes.
        unpaced = true
        respond(to: request) {
            let parsed = try ControlRequest(line: request.line)
            switch parsed {
            case .status, .monitor:
                afterSettle.append(.request(parsed, request))
                return .null
            default:
                return try answer(parsed, request)
            }
        }
    }

    /// A request that tells of the state, answered once the pass has settled.
    func answerSettled(_ request: ControlRequest, _ origin: ControlServer.Request) {
        respond(to: origin) { try answer(request, origin) }
    }

    /// Sends what `reply` makes (nothing for `.null`: answered later or already), or why the
    /// request is refused.
    private func respond(to request: ControlServer.Request, _ reply: () throws -> JSON) {
        let json: JSON
        do {
            json = try reply()
        } catch let invalid as ControlRequest.Invalid {
            json = Refusal(invalid.description).json
        } catch let refusal as Refusal {
            json = refusal.json
        } catch {
            json = Refusal("\(error)").json
        }
        guard json != .null else { return }
        control.send(json.text, to: request.client)
    }

    /// The reply to `request`; `.null` when it is answered later or already.
    func answer(_ request: ControlRequest, _ origin: ControlServer.Request) throws -> JSON {
        switch request {
        case .sync:
            // Answered once the display has handled everything sent before the request:
            // the caller then sees the daemon in a settled state.
            startSync(.reply(origin))
            return .null
        case .status:
            return status().json
        case .reload:
            requestReload(because: "clickawayctl reload", replyTo: origin)
            return .null
        case .open(let name): return try afterSync(setRectPopup(name) { _ in true }, origin)
        case .close(let name): return try afterSync(setRectPopup(name) { _ in false }, origin)
        case .toggle(let name): return try afterSync(setRectPopup(name) { !$0 }, origin)
        case .dismiss(let name): return try dismissByName(name)
        case .pick(let timeoutMs):
            pickAsker = origin.connection
            display.perform(.pick(withinMs: timeoutMs) { [unowned self] picked in
                pickAsker = nil
                let reply = switch picked {
                case .success(let view): view.json
                case .failure(let refusal): refusal.json
                }
                control.reply(reply.text, to: origin)
            })
            return .null
        case .add(let popup): return try register(popup, origin, waiting: false)
        case .wait(let popup): return try register(popup, origin, waiting: true)
        case .show(let request):
            unsettled = true  // the drawing takes Escape on X11, and gives it back
            // Drawn from the windows as the display knows them now.
            engineFollowsWindows()
            return try show.answer(request, engine: engine)
        case .hit(let x, let y, let button):
            // Answered with whether another program holds the pointer, which the display finds out.
            display.perform(.probePointerGrab(ask(.hit(x: x, y: y, button: button, origin))))
            return .null
        case .monitor:
            guard control.subscribe(origin.client) else {
                throw Refusal("\(ControlServer.maxMonitors) monitors are connected already; close one first")
            }
            monitor.listen(engine.open, windows: display.windows, describe: openPopup)
            control.send(ControlReply.ok().text, to: origin.client)
            return .null
        }
    }

    /// Sends `reply` once the display has synced after this pass: a script's next click then
    /// meets the interception the reply tells of (the compositor or X server takes the
    /// click from another client, and may take it before what the daemon sent).
    private func afterSync(_ reply: JSON, _ origin: ControlServer.Request) -> JSON {
        startSync(.state(reply, origin))
        return .null
    }

    /// `open`, `close` and `toggle` of a `rect` popup. They only tell clickaway the popup's
    /// state: no dismiss action runs.
    func setRectPopup(_ name: String, open: (Bool) -> Bool) throws(Refusal) -> JSON {
        if runtime.contains(name) {
            // A runtime popup is open while it exists: closing it removes it.
            guard !open(true) else { return RectPopupReply(popup: name, open: true).json }
            removeRuntime([name], .gone(.closed))
            return RectPopupReply(popup: name, open: false).json
        }
        // A runtime popup that ended is in the model in use until the next is built: no popup.
        if models.hasEnded(name) {
            throw Refusal("no popup named \"\(name)\" in the configuration" + config.model.popupNameSuggestion(name))
        }
        let isOpen = try rects.set(name, open: open, model: model, outputs: engine.outputs, now: display.state.now).get()
        unsettled = true
        return RectPopupReply(popup: name, open: isOpen).json
    }

    /// `dismiss`: what a click outside the popup would do to it, from a key binding or a
    /// script: its open instances and the popups nested in them are dismissed, their dismiss
    /// actions run (a window asked to close, a command run, a `rect` popup marked closed)
    /// and monitors hear `dismissed` with reason "request". Decided on the windows as the
    /// display knows them now; a popup that is not open is no error (a key pressed twice).
    func dismissByName(_ name: String) throws(Refusal) -> JSON {
        // A runtime popup that ended is gone, though the model without it may still be on its way.
        guard let index = models.liveIndex(name) else {
            throw Refusal("no popup named \"\(name)\"" + model.popupNameSuggestion(name))
        }
        engineFollowsWindows()
        let nested = Set([index] + model.descendants(of: index))
        let dismissed = engine.open.filter { nested.contains($0.popup) }
        let names = dismissed.map { model.popups[Int($0.popup)].name }
        dismiss(dismissed, trigger: .request(time: display.state.now))
        return DismissReply(popup: name, dismissed: names).json
    }

    /// A request waiting for the display's answer (a sync, a pointer probe).
    enum DisplayWaiter {
        /// `clickawayctl sync`: answered once the display synced.
        case reply(ControlServer.Request)
        /// A state changed (`open`, `close`, `toggle`): answered with it once the display
        /// synced, or failed to (the state changed either way).
        case state(JSON, ControlServer.Request)
        /// `add` or `wait` of a window: registered once the display synced.
        case register(RuntimePopupRequest, ControlServer.Request, waiting: Bool)
        /// `hit`: explained once the display said whether another program holds the pointer.
        case hit(x: Int32, y: Int32, button: UInt8, ControlServer.Request)
        /// Monitors hear what opened once the display has synced after an interception that
        /// takes clicks only then (`Display.intercept`).
        case announce

        /// Who asked; nil for the daemon's own.
        var origin: ControlServer.Request? {
            switch self {
            case .reply(let origin), .state(_, let origin), .register(_, let origin, _), .hit(_, _, _, let origin): origin
            case .announce: nil
            }
        }
    }

    /// Numbers `waiter` for the display's answer.
    func ask(_ waiter: DisplayWaiter) -> Int {
        displaySerial += 1
        displayWaiters[displaySerial] = waiter
        return displaySerial
    }

    func startSync(_ waiter: DisplayWaiter) { display.perform(.sync(ask(waiter))) }

    /// The display answered request `id`: it synced (or failed to), or probed the pointer. A
    /// window popup waiting for the sync is registered now; the other replies come from the
    /// state this pass settles.
    func answered(_ id: Int, failure: String?, pointerHeldBy: String?) {
        guard let waiter = displayWaiters.removeValue(forKey: id) else { return }
        unpaced = true
        guard case .register = waiter, failure == nil else {
            afterSettle.append(.displayAnswer(waiter, failure: failure, pointerHeldBy: pointerHeldBy))
            return
        }
        reply(to: waiter, failure: nil, pointerHeldBy: nil)
    }

    /// The reply to a request that waited for the display.
    func reply(to waiter: DisplayWaiter, failure: String?, pointerHeldBy: String?) {
        let reply: JSON
        do throws(Refusal) {
            switch waiter {
            case .state(let state, _):
                if let failure { logger.warning("the display did not sync after a request: \(failure)") }
                reply = state
            case .reply:
                if let failure { throw Refusal(failure) }
                reply = ControlReply.ok()
            case .register(let request, let origin, let waiting):
                if let failure { throw Refusal(failure) }
                reply = try register(request, origin, waiting: waiting, displaySynced: true)
            case .announce:
                if let failure { logger.warning("the display did not sync after taking clicks: \(failure)") }
                announcementsWait -= 1
                if announcementsWait == 0 { monitor.announce(engine.open, windows: display.windows, describe: openPopup) }
                reply = .null
            case .hit(let x, let y, let button, _):
                if let failure { throw Refusal(failure) }
                let context = ExplanationContext(describe: display.windows.describe, tie: display.windows.tie(of:),
                                                 otherGrab: pointerHeldBy)
                reply = HitReply(engine.explain(button: button, x: x, y: y, time: display.state.now), context).json
            }
        } catch {
            reply = error.json
        }
        if reply != .null, let origin = waiter.origin { control.reply(reply.text, to: origin) }
    }

    func status() -> StatusReport {
        let runningNow: StatusReport.RunningConfiguration = switch running {
        case .files: .files
        case .lastGood(let saved): .lastGood(file: reloading.lastGood.path, saved: saved)
        case .none: .none
        }
        var listedOf = [Int](repeating: 0, count: engine.model.popups.count)
        let listed = engine.open.filter { instance in
            listedOf[Int(instance.popup)] += 1
            return listedOf[Int(instance.popup)] <= StatusReport.instanceLimit
        }
        return StatusReport(
            backend: display.state.interception, display: display.status(), config: config.files, popups: config.popupCount,
            rejected: rejected, running: runningNow, unavailable: unavailableSources,
            open: listed.map { openPopup($0, listing: OpenPopup.statusMemberLimit) }, openLeftOut: engine.open.count - listed.count,
            waiting: runtime.entries.compactMap { entry in
                if case .pid(let pid, _, _) = entry.place { WaitingPopup(popup: entry.name, pid: pid) } else { nil }
            },
            monitors: control.subscriberCount, lastError: lastError)
    }
}
