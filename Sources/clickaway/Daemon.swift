import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayX11
import Glibc
import Logging

/// One poll(2) loop over the X connection, the control socket and the signal pipe.
/// No threads: a press is read, decided and answered before anything else happens.
final class Daemon {
    private let x: XConnection
    private var logger: Logger
    private var config: LoadedConfig
    private let configFile: String?
    private var engine: DecisionEngine
    private let tracker: WindowTracker
    private let grabs: Grabs
    private let spawner: Spawner
    private let control: ControlServer
    private let clock: ServerClock
    private var lastError: String?

    init(x: XConnection, config: LoadedConfig, configFile: String?, control: ControlServer, logger: Logger) throws(XError) {
        self.x = x
        self.config = config
        self.configFile = configFile
        self.control = control
        self.logger = logger
        clock = try x.calibrateClock()
        engine = DecisionEngine(model: config.model, outputs: (try? x.outputs()) ?? [:])
        tracker = WindowTracker(x: x, model: config.model, logger: logger)
        grabs = Grabs(x: x, logger: logger)
        spawner = Spawner(logger: logger)
        // SubstructureNotify on root may be selected by any number of clients; ButtonPress may not.
        if let error = x.check(x.selectInput(x.root, .substructureNotify)) {
            throw .request("ChangeWindowAttributes", error)
        }
        _ = x.check(x.selectRandrScreenChange(x.root))
        try tracker.scan(now: clock.now())
        refresh()
    }

    /// Runs until SIGTERM/SIGINT (returns 0) or the X server goes away (returns 1).
    func run() -> Int32 {
        logger.info("running", metadata: [
            "display": "\(x.display)", "popups": "\(config.popupCount)", "control": "\(control.path)",
        ])
        while true {
            if Signals.terminate != 0 {
                shutDown()
                return 0
            }
            if Signals.child != 0 {
                Signals.child = 0
                spawner.reap()
            }
            if Signals.reload != 0 {
                Signals.reload = 0
                reload()
            }
            // Drain libxcb's queue before sleeping: replies can pull events in unseen by poll.
            while let event = x.pollEvent() { handle(event) }
            if let error = x.connectionError {
                logger.critical("lost the connection to the X server \(x.display): \(error)")
                spawner.reap()
                return 1
            }
            x.flush()
            waitForInput()
        }
    }

    private func waitForInput() {
        var fds = [pollfd(fd: x.fileDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: Signals.pipe.read, events: Int16(POLLIN), revents: 0)]
        for (fd, wantsWrite) in control.pollDescriptors {
            fds.append(pollfd(fd: fd, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0))
        }
        let timeout: Int32 = spawner.checkSlow(now: ServerClock.monotonicMilliseconds())
            .map { Int32(clamping: max(0, $0 - ServerClock.monotonicMilliseconds())) } ?? -1
        guard poll(&fds, nfds_t(fds.count), timeout) > 0 else { return }
        if fds[1].revents != 0 { Signals.drain() }
        for p in fds.dropFirst(2) where p.revents != 0 {
            let readable = p.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
            let writable = p.revents & Int16(POLLOUT) != 0
            for request in control.handle(fd: p.fd, readable: readable, writable: writable) {
                answer(request)
            }
        }
    }

    // MARK: - X events

    private func handle(_ event: XEvent) {
        switch event {
        case .buttonPress(let e): press(e)
        case .buttonRelease(let e): release(e)
        case .randrScreenChange:
            engine.setOutputs((try? x.outputs()) ?? [:])
        case .error(let error):
            // Requests about windows that vanished (a popup closed mid-click) end here.
            logger.debug("X error", metadata: ["error": "\(error)"])
        default:
            if tracker.apply(event, now: clock.now()) { refresh() }
        }
    }

    /// The press path: decide from memory, answer, flush; only then act on the decision.
    private func press(_ e: ButtonEvent) {
        let decision = engine.press(button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time))
        x.allowEvents(decision.click == .swallow ? .asyncPointer : .replayPointer, time: e.time)
        x.flush()
        var dismissed = engine.dismissed
        if decision.awaitsRelease && decision.click != .swallow {
            // A replayed press's release goes to the window under it, not to us: decide now.
            if let r = engine.release(button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time)), r.dismissCount > 0 {
                dismissed += engine.dismissed
            }
        }
        act(on: dismissed, click: decision.click, event: e)
    }

    /// Reaches us only while we hold the pointer after a swallowed press.
    private func release(_ e: ButtonEvent) {
        guard let decision = engine.release(button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time)) else { return }
        act(on: engine.dismissed, click: decision.click, event: e)
    }

    private func act(on dismissed: [PopupInstance], click: ClickOutcome, event e: ButtonEvent) {
        guard !dismissed.isEmpty else { return }
        for instance in dismissed {
            let spec = config.model.popups[Int(instance.popup)]
            let client = WindowID(truncatingIfNeeded: instance.id)
            logger.info("dismissed", metadata: [
                "popup": "\(spec.name)", "window": "\(hex(client))", "button": "\(e.button)",
                "x": "\(e.rootX)", "y": "\(e.rootY)", "click": "\(click.rawValue)",
            ])
            tracker.markClosing(client: client)
            dismiss(spec, client: client, event: e)
        }
        x.flush()
        refresh()
    }

    private func dismiss(_ spec: PopupSpec, client: WindowID, event e: ButtonEvent) {
        switch spec.dismiss {
        case .close:
            if tracker.trackedClient(client)?.supportsDelete == true {
                x.sendDeleteWindow(client, time: e.time)
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
            spawner.spawn(argv, environment: [
                "CLICKAWAY_POPUP": spec.name, "CLICKAWAY_WINDOW": hex(client), "CLICKAWAY_BUTTON": "\(e.button)",
                "CLICKAWAY_X": "\(e.rootX)", "CLICKAWAY_Y": "\(e.rootY)",
            ], popup: spec.name, now: ServerClock.monotonicMilliseconds())
        }
    }

    /// Brings the engine and the grabs in line with the windows. Never called between a
    /// press and its AllowEvents.
    private func refresh() {
        engine.setOpen(tracker.openInstances())
        engine.setWindowAreas(tracker.windowAreas())
        var wanted = ButtonSet(bits: 0)
        for o in engine.open { wanted.bits |= config.model.popups[Int(o.popup)].buttons.bits }
        for (combo, error) in grabs.update(to: wanted) { lastError = grabs.refusalSentence(combo, error) }
    }

    // MARK: - Config

    private func reload() {
        do {
            let fresh = try ConfigLoader.load(file: configFile, environment: processEnvironment())
            config = fresh
            engine = DecisionEngine(model: fresh.model, outputs: engine.outputs)
            tracker.replaceModel(fresh.model, now: clock.now())
            grabs.release()
            refresh()
            logger.info("configuration reloaded", metadata: ["popups": "\(fresh.popupCount)"])
        } catch {
            lastError = "configuration rejected, keeping the previous one:\n\(error)"
            logger.error("configuration rejected, keeping the previous one\n\(error)")
        }
    }

    // MARK: - Control requests

    private func answer(_ request: ControlServer.Request) {
        let reply: JSON
        do {
            let message = try JSON.parse(request.line)
            switch message["request"]?.stringValue {
            case "sync": reply = sync()
            case "status": reply = JSONReply.ok(status())
            case let other?: reply = JSONReply.error("unknown request \"\(other)\" (known: sync, status)")
            case nil: reply = JSONReply.error("a request is an object with a \"request\" key, e.g. {\"request\":\"status\"}")
            }
        } catch {
            reply = JSONReply.error("malformed request: \(error)")
        }
        control.send(reply.text, to: request.client)
    }

    /// Answers after one round trip to the X server and after handling every event the
    /// server sent before it: the caller then sees the daemon in a settled state.
    private func sync() -> JSON {
        do {
            try x.sync()
        } catch {
            return JSONReply.error("X server round trip failed: \(error)")
        }
        while let event = x.pollQueuedEvent() { handle(event) }
        // A second round trip: the AllowEvents and dismiss requests those events caused
        // have been processed by the server when the caller hears back.
        do {
            try x.sync()
        } catch {
            return JSONReply.error("X server round trip failed: \(error)")
        }
        return JSONReply.ok()
    }

    private func status() -> [(String, JSON)] {
        let combos = { (list: [Grabs.Combination]) in
            JSON.array(list.map { .object([("button", .int(Int64($0.button))), ("modifiers", .string(self.grabs.describe($0.modifiers)))]) })
        }
        let refused = JSON.array(grabs.refused.map { combo, error in
            .object([("button", .int(Int64(combo.button))), ("modifiers", .string(grabs.describe(combo.modifiers))),
                     ("error", .string(error.name))])
        })
        let open = JSON.array(engine.open.map { o in
            let r = o.rect
            return .object([
                ("popup", .string(config.model.popups[Int(o.popup)].name)),
                ("window", .string(hex(WindowID(truncatingIfNeeded: o.id)))),
                ("rect", .array([r.x, r.y, r.width, r.height].map { .int(Int64($0)) })),
            ])
        })
        return [
            ("backend", .string("x11-grab")),
            ("display", .string(x.display)),
            ("config", .array(config.files.map(JSON.string))),
            ("popups", .int(Int64(config.popupCount))),
            ("grab", .object([
                ("active", .bool(grabs.isGrabbing)),
                ("buttons", .array(grabs.buttons.buttons.map { .int(Int64($0)) })),
                ("held", combos(grabs.held)),
                ("refused", refused),
            ])),
            ("open", open),
            ("last_error", lastError.map(JSON.string) ?? .null),
        ]
    }

    private func shutDown() {
        grabs.release()
        x.flush()
        spawner.reap()
        logger.info("exiting: grabs released")
    }
}
