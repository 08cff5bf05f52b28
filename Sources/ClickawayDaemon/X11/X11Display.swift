internal import ClickawayControl
internal import ClickawayCore
internal import ClickawaySystem
internal import ClickawayX11
internal import Glibc
internal import Logging
internal import SystemPackage

/// An X server: windows from the X tree, clicks through SYNC grabs on the root or through
/// the shield window, Escape through a key grab.
///
/// Three connections: the windows' (`x`: the root's window events, RandR, closing popups,
/// show's windows), the window reads' (`WindowTracker.reader`) and the input's (`input`: the
/// grabs, the shield, and the presses and keys they bring): a press never waits in line
/// behind a burst of window events, nor its answer behind the requests those events called
/// for, and the press thread reads them (`PressSource`; BENCHMARKS.md, what those presses
/// wait for).
///
/// The press path: on the press thread, `nextPress()` reads the press and hands it out with
/// nothing else done (the loop's `nextInput()` without one, and for events the loop's own
/// reads of replies pulled into libxcb's queue); the daemon decides from memory; `answer`
/// sends AllowEvents (or the shield's replay, with the question which window is under it,
/// answered later) and flushes before anything else, then yields the CPU when the daemon is
/// about to dismiss something.
final class X11Display: Display, PressSource, PollSource {
    let x: XConnection
    /// The input's connection: what the daemon grabs and the shield, nothing else.
    private let input: XConnection
    private let logger: Logger
    private let clock: ServerClock
    private let tracker: WindowTracker
    private let buttonGrabs: PassiveGrabSet
    private let escapeGrabs: PassiveGrabSet
    /// Shield mode: the windows above the shield whose clicks are decided too.
    private let aboveShield: AboveShieldWindows
    private let escapeKeycodes: [UInt8]
    /// How clicks reach the daemon: grabs on the root, or the shield window.
    private var interception: Interception = .grab {
        didSet { takeTimeSlices() }
    }
    /// Made the first time the shield mode is entered, by requests only; what it needs of the
    /// server is asked at start, so that entering it later (`auto`'s fallback, a reload)
    /// never waits for the server.
    private var shield: ShieldWindow?
    /// Why the shield, and show's windows, cannot be made here: XFixes 2 or SHAPE missing.
    private let shapingUnavailable: XError?
    /// `--backend`'s mode, or the configuration's.
    private var mode: X11Mode
    /// Why `auto` left the grab mode for the shield, once it has.
    private var fallbackReason: String?
    private var screen: Rect
    private(set) var outputs: [String: Rect]
    /// A press swallowed on the shield whose release has not come yet: the shield stays up
    /// until then, because unmapping it would end the grab and send the release on.
    private var shieldHoldsAClick = false
    /// Whether the pointer is over the shield rather than in a hole (its crossing events).
    private var pointerOnShield = false
    /// The buttons the open popups take, whether any is open and whether more than one is:
    /// kept for when the pointer crosses into the shield or out of it.
    private var wanted = (active: false, several: false, buttons: ButtonSet(bits: 0))
    // The properties below are looked at on every pass of the loop, two or three times, so
    // those marked with no runtime exclusivity check: each access is one statement of this
    // type's own that calls out to no other code. bench/callgrind, inside click: 1,215
    // instructions a click without it (BENCHMARKS.md, the daemon's part of an inside click;
    // `changed`, `shieldCoverDue` and `outputsRead`, loaded and stored whole, saved nothing).
    /// The windows' connection's events; one may be read ahead (while preparing to sleep).
    @exclusivity(unchecked) private var events: EventFeed
    /// The input connection's events (presses, releases, keys, the shield's crossings); one
    /// may be read ahead (while preparing to sleep, or before a refresh it must follow).
    @exclusivity(unchecked) private var inputEvents: EventFeed
    /// Window events handled since the input's socket was last read: without a press thread,
    /// a long batch of them looks at it every `inputLookEvery`, so that a press that came
    /// meanwhile goes first.
    private var windowEventsUnlooked = 0
    private static let inputLookEvery = 16
    /// Shared with the press thread, which reads the input's socket (`nextPress`); nil while
    /// the loop reads it.
    private var stateLock: StateLock?
    /// The loop's thread, which makes the display, and the press thread once it runs: their
    /// time slices follow the mode (`takeTimeSlices`).
    private let loopThread = ThreadID.current
    private var pressThread: ThreadID?
    /// The loop this display registered with: its wakeups follow the mode (`spaceLoopWakes`).
    private weak var loop: PollLoop?
    /// The press thread is reading what woke it (`nextPress`).
    private var readingPresses = false
    /// The daemon must refresh (`DisplayInput.changed`) before the next event.
    private var changed = false
    /// Windows changed: the shield must be looked at (`keepShieldAbove`) once the events
    /// and window reads in hand are done, once a batch rather than at every event.
    private var shieldCoverDue = false
    /// What the windows above the shield were last all looked at for (`watchAboveShield`).
    private var followedFor: (several: Bool, shieldMaps: Int)?
    /// The screen and its outputs being read again after RandR said they changed.
    private var outputsRead: OutputsRead?
    /// Grabs refused and `auto`'s switch to the shield, for the daemon to take (`.intercepted`).
    @exclusivity(unchecked) private var notices: [InterceptionNotice] = []
    /// Syncs not answered yet.
    @exclusivity(unchecked) private var syncs = X11Syncs()
    /// When the oldest sync stops waiting for window reads: set after each change of `syncs`
    /// (an observer would cost every click a runtime exclusivity check of it).
    private let syncReads = LoopTimer()
    /// `probePointerGrab`s sent, oldest first, and those answered, not handed out yet.
    @exclusivity(unchecked) private var grabProbes: [(id: Int, reply: PendingReply<PointerGrabRefusal?>)] = []
    @exclusivity(unchecked) private var grabAnswers: [(id: Int, heldBy: String?)] = []
    /// Clicks let through the shield's own grab: which top-level is under each, asked as it
    /// was answered; its client is activated when the reply comes (`activateUnderClicks`).
    @exclusivity(unchecked) private var activations: [(under: PendingReply<WindowID?>, time: Timestamp)] = []

    enum Interception: String {
        case grab = "x11-grab"
        case shield = "x11-shield"
    }

    public init(x: XConnection, model: ClickModel, mode: X11Mode, logger: Logger) throws(XError) {
        self.x = x
        input = try XConnection(display: x.display)
        // Read at the first look: the loop has not looked at the sockets yet.
        events = EventFeed(x, socketReadable: true)
        inputEvents = EventFeed(input, socketReadable: true)
        self.logger = logger
        self.mode = mode
        screen = x.screenRect
        clock = try x.calibrateClock()
        // The grab mode needs only the core protocol; RandR (1.3) places `output = ...`
        // rectangles and follows screen changes, and its absence costs only that.
        // Without it no RandR request may be sent: libxcb closes a connection that sends one.
        let hasRandR: Bool
        do {
            let version = try x.requireRandR()
            logger.debug("RandR \(version)")
            hasRandR = true
        } catch {
            logger.warning("\(error): rectangles with output = \"...\" cannot be placed and screen changes are not followed")
            hasRandR = false
        }
        switch hasRandR ? OutputsRead(x: x).advance(wait: true) : nil {
        case .success(let read)?:
            outputs = read.outputs
        case .failure(let error)?:
            logger.warning("cannot read the screen's outputs: \(error); popups placed on outputs stay closed until the screen changes")
            outputs = [:]
        case nil:
            outputs = [:]
        }
        tracker = try WindowTracker(x: x, input: input, model: model, logger: logger)
        let locks = LockModifiers(x: x)
        buttonGrabs = PassiveGrabSet(x: input, locks: locks)
        escapeGrabs = PassiveGrabSet(x: input, locks: locks)
        aboveShield = AboveShieldWindows(x: input)
        escapeKeycodes = ((try? x.keycodes(forKeysym: Keysym.escape)) ?? []).sorted()
        if escapeKeycodes.isEmpty { logger.warning("no key produces Escape in the keyboard map: escape = true has no effect") }
        do {
            // The shield is the input's; show's windows are `x`'s.
            try ShieldWindow.checkSupport(input)
            try ShieldWindow.checkSupport(x)
            shapingUnavailable = nil
        } catch {
            shapingUnavailable = error
            if mode != .shield {
                logger.info("the shield mode is not available on \(x.display) (\(error)): grabs only, and a refused grab has nothing to fall back on")
            }
        }
        // SubstructureNotify on root may be selected by any number of clients; ButtonPress may not.
        if let error = x.check(x.selectInput(x.root, .substructureNotify)) {
            throw .request("ChangeWindowAttributes", error)
        }
        if hasRandR { _ = x.check(x.selectRandrScreenChange(x.root)) }
        try use(mode)
        try tracker.scan(now: clock.now())
    }

    public var state: DisplayState {
        DisplayState(
            kind: .x11, name: x.display, interception: interception.rawValue, isIntercepting: buttonGrabs.isGrabbing || shield?.mapped == true,
            failure: (x.connectionError ?? input.connectionError ?? tracker.reader.connectionError).map { "\($0)" }, outputs: outputs, now: clock.now(),
            abilities: abilities)
    }

    /// Made once: `state` is asked between clicks, and must not build text each time.
    private lazy var abilities = DisplayAbilities(
        appIdUnavailable: "which only Wayland windows have: it never matches on the X server \(x.display) "
            + "(X windows are matched by class, instance, title and type)",
        processWindowRequirement: "on X11 the window must carry _NET_WM_PID, as GTK and Qt windows do")
    /// `.lost` was handed out.
    private var lostTold = false

    public var windows: any WindowSource { tracker }

    // MARK: - The loop

    /// The input's connection, looked at first after every wait; the windows' when a press
    /// thread waits on the input's.
    public var pollDescriptor: FileDescriptor { FileDescriptor(rawValue: stateLock == nil ? input.fileDescriptor : x.fileDescriptor) }

    public var pressDescriptor: FileDescriptor { FileDescriptor(rawValue: input.fileDescriptor) }

    public func pressThreadStarted(_ thread: ThreadID, sharing lock: StateLock) {
        stateLock = lock
        pressThread = thread
        takeTimeSlices()
    }

    /// Flushes, and looks whether libxcb already holds an event: replies can pull events into
    /// its queue without the socket becoming readable again (i3's prepare callback).
    public func prepareToSleep() -> Bool {
        let told = collectInputReplies()
        var synced = false
        if !syncs.isEmpty {
            let now = MonotonicClock.milliseconds()
            // Everything handed out has been acted on: a sync's second round trip goes after it.
            if !changed && !inputEvents.hasQueuedEvent() && !events.hasQueuedEvent() {
                _ = syncs.startSecondRoundTrip(x: x, input: input, readsBusy: readsBusy, now: now)
            }
            synced = syncs.canAdvance(now: now)
            syncReads.deadline = syncs.deadline
        }
        input.flush()
        x.flush()
        tracker.flush()
        let grabAnswer = hasGrabAnswer()
        // After every other look at replies, which may have read its replies or window
        // replies into libxcb's memory (`WindowTracker.collect` looks only when something may
        // have read); before the look at events, which collecting replies can pull into its
        // queue.
        let outputsReady = outputsRead?.advance() != nil
        let work = tracker.hasWork
        return inputEvents.hasQueuedEvent() || events.hasQueuedEvent() || changed || work || synced || grabAnswer || told || outputsReady
    }

    /// A socket with nothing to read is not read: the next event is looked for in libxcb's
    /// queue only, with no recvmsg(2) that would find nothing.
    public func pollReturned(_ readiness: Readiness) {
        if stateLock == nil { inputEvents.socketReadable = readiness.canRead } else { events.socketReadable = readiness.canRead }
    }

    public func register(with loop: PollLoop) {
        self.loop = loop
        spaceLoopWakes()
        loop.add(self)
        // The windows' connection, after the input's, unless a press thread reads that.
        if stateLock == nil {
            loop.watch(FileDescriptor(rawValue: x.fileDescriptor)) { [unowned self] _ in events.socketReadable = true }
        }
        // Wakes the loop when a sync stops waiting for window reads; `nextInput` moves it on.
        loop.schedule(syncReads) { _ in }
        // The window reads' replies and PropertyNotify: `nextInput` reads them (`tracker.work`).
        loop.watch(FileDescriptor(rawValue: tracker.reader.fileDescriptor)) { [tracker] _ in tracker.readerBecameReadable() }
    }

    // MARK: - Events

    /// The input's events first, then the windows' events in the order the server sent them,
    /// each window change applied at once (no round trip) and the refresh they call for
    /// coalesced: `.changed` comes once a batch is read, and before any click, which is then
    /// decided on what was known. Windows are read by requests whose replies are collected as
    /// they come, between events (`WindowTracker.work`): the loop never waits for the X
    /// server, and a press during a burst of windows is read as soon as it arrives (by the
    /// press thread; without one, the input's socket is looked at every `inputLookEvery`
    /// window events).
    /// Once everything read is handed out, a broken connection comes as `.lost`, once: looked
    /// at after the click, not on every pass's way to it.
    public func nextInput() -> DisplayInput? {
        if let input = nextRead() { return input }
        guard !lostTold, x.isBroken || input.isBroken || tracker.reader.isBroken else { return nil }
        lostTold = true
        return .lost
    }

    /// The press thread's: the input's events only, the socket read once each time it woke
    /// the thread. The loop still takes those that its own reads of replies pulled into
    /// libxcb's queue (`nextRead`), which never make the socket readable.
    public func nextPress() -> DisplayInput? {
        if !readingPresses {
            readingPresses = true
            inputEvents.socketReadable = true
        }
        if let input = nextFromInput() { return input }
        readingPresses = false
        // The replies the socket brought with the events, taken here, so that the loop need
        // not be woken for them.
        if collectInputReplies() { return .intercepted }
        input.flush()
        return nil
    }

    /// The input connection's events up to the first the daemon must see (the refresh a press
    /// must follow comes before it); nil once none is left.
    private func nextFromInput() -> DisplayInput? {
        while let event = inputEvents.peek() {
            if changed && event.isInput {
                changed = false
                return .changed
            }
            inputEvents.drop()
            if let input = handle(event) { return input }
        }
        return nil
    }

    /// The input connection's replies that have come, each acted on: the window under a
    /// click let through the shield's own grab activated, the pointer over the windows above
    /// the shield followed, refused grabs told. Returns whether notices wait (`.intercepted`).
    private func collectInputReplies() -> Bool {
        if !activations.isEmpty { activateUnderClicks() }
        if aboveShield.isAsking && aboveShield.collectPointer() { grabOverShield() }
        return grabsChecking && collectRefusals() || !notices.isEmpty
    }

    /// A refresh (the shield let go of a swallowed click), or a sync's round trip, whose
    /// reply the press thread may have read from the socket.
    public var pressesLeftWork: Bool { changed || !syncs.isEmpty }

    private func nextRead() -> DisplayInput? {
        while true {
            // A safe point, between two events or window reads: a press thread that asked
            // decides and answers first.
            stateLock?.handOverIfAsked()
            if let input = nextFromInput() { return input }
            if let event = events.next() {
                if stateLock == nil {
                    windowEventsUnlooked += 1
                    if windowEventsUnlooked >= Self.inputLookEvery {
                        windowEventsUnlooked = 0
                        inputEvents.socketReadable = true
                    }
                }
                if let input = handle(event) { return input }
                continue
            }
            // Nothing being read or placed (after a click, as a rule): no clock read, no step.
            if tracker.isBusy {
                let step = tracker.work(now: clock.now())
                if step.changed { changed = true }
                if step.progressed {
                    // A window read may turn out to be a frame the shield must stay above.
                    shieldCoverDue = true
                    continue
                }
            }
            if shieldCoverDue {
                shieldCoverDue = false
                keepShieldAbove()
            }
            if changed {
                changed = false
                return .changed
            }
            if hasGrabAnswer() {
                let answer = grabAnswers.removeFirst()
                return .pointerGrab(answer.id, heldBy: answer.heldBy)
            }
            if let read = outputsRead, let result = read.advance() {
                outputsRead = nil
                take(result)
                return .outputsChanged
            }
            if collectInputReplies() { return .intercepted }
            guard !syncs.isEmpty else { return nil }
            let step = syncs.advance(now: MonotonicClock.milliseconds())
            syncReads.deadline = syncs.deadline
            switch step {
            case .waiting: return nil
            case .progressed:
                input.flush()
                x.flush()
                continue
            case .synced(let id, let failure): return .synced(id, failure: failure)
            }
        }
    }

    /// What a sync waits for once the events before it are handled: the windows being read,
    /// and the outputs.
    private var readsBusy: Bool { tracker.readsPending || outputsRead != nil }

    /// The screen and outputs read after a RandR change: the shield follows the screen.
    private func take(_ read: OutputsRead.Outcome) {
        switch read {
        case .success(let (screen, outputs)):
            self.screen = screen
            shield?.resize(to: screen)
            self.outputs = outputs
        case .failure(let error):
            logger.error("cannot read the screen's outputs after it changed: \(error); popups placed on outputs stay closed until the next change")
            outputs = [:]
        }
    }

    // Out of line: inlined into `nextInput`, its runtime exclusivity check of the tracker's
    // windows would be hoisted to the top, and every click would pay for it.
    @inline(never)
    private func keepShieldAbove() {
        let changed = tracker.takeChangedForShield()
        guard interception == .shield else { return }
        shield?.keepAbove(stacking: tracker.stacking, mappedWindows: tracker.mapped, isFrame: tracker.isFrame,
                          changed: changed, position: tracker.roster.stackingPosition(of:), now: MonotonicClock.milliseconds())
        watchAboveShield(changed: changed)
    }

    /// Shield mode: the pointer's crossings of the windows above the shield that are read and
    /// no popup's (`AboveShieldWindows`), so that the root's grabs are held over them too;
    /// none while no popup is open. With two popups open, each one's windows are outside the
    /// other, and a click there dismisses it, as in the grab mode: then theirs too. Thousands
    /// of popups' windows may be above the shield: only those in `changed` (nil: any may
    /// have) are looked at again, unless the shield was mapped again, the popups open went
    /// from one to several or back, or a new model came.
    private func watchAboveShield(changed: Set<WindowID>?) {
        guard interception == .shield, wanted.active, let shield, shield.mapped else {
            followedFor = nil
            return aboveShield.update([])
        }
        let now = (several: wanted.several, shieldMaps: shield.maps)
        func follows(_ window: WindowID) -> Bool {
            shield.keepsAbove(window) && (tracker.overrideRedirectBystanders.contains(window)
                || now.several && tracker.overrideRedirectOfPopups.contains(window))
        }
        if let changed, let before = followedFor, before == now {
            aboveShield.update(changed, follows: follows)
        } else {
            // With one popup open, its windows (thousands, maybe) are not even looked at.
            let candidates = now.several ? tracker.overrideRedirectBystanders.union(tracker.overrideRedirectOfPopups)
                : tracker.overrideRedirectBystanders
            aboveShield.update(candidates.filter(follows))
            followedFor = now
        }
        grabOverShield()
    }

    /// Handles what is the display's own; returns what the daemon must see.
    private func handle(_ event: XEvent) -> DisplayInput? {
        switch event {
        case .buttonPress(let e):
            return .click(Click(isPress: true, button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time),
                                releaseGoesElsewhere: true, token: X11Token(window: e.window, stamp: e.time, state: e.state).token))
        case .buttonRelease(let e):
            return .click(Click(isPress: false, button: e.button, x: e.rootX, y: e.rootY, time: clock.unwrap(e.time),
                                releaseGoesElsewhere: false, token: X11Token(window: e.window, stamp: e.time, state: e.state).token))
        case .keyPress(let e) where e.window == x.root && escapeKeycodes.contains(e.keycode):
            return .escapeKey(EscapeKey(time: clock.unwrap(e.time), token: X11Token(window: e.window, stamp: e.time, state: 0).token))
        case .unmapNotify(let e) where e.window == shield?.window:
            // Another client unmapped it: it must come back while popups are open.
            shield?.noteUnmapped()
            pointerOnShield = false
            return .changed
        case .enterNotify(let e) where e.window == shield?.window:
            // Not flushed here: a press read with the Enter that comes before it (a click after
            // a move) sends these with its answer, in one write: flushed alone, they woke the
            // X server, whose turn at other clients then held the answer (up to 5 ms).
            shield?.closePinhole()
            pointerEntered(shield: true)
        case .leaveNotify(let e) where e.window == shield?.window && e.mode != .grab:
            // A grab taking the pointer (mode Grab) leaves it where it is, and so does the
            // pinhole of a press let through (the end of the shield's own grab says it left).
            // Else the root's grabs went, and came back with the next move, often after the
            // press that follows it, which the shield's grab took again: a cycle per click.
            if shield?.isInPinhole(x: e.rootX, y: e.rootY) != true { pointerEntered(shield: false) }
        case .enterNotify(let e) where aboveShield.crossed(e, entered: true):
            if interception == .shield { grabOverShield() }
        case .leaveNotify(let e) where aboveShield.crossed(e, entered: false):
            if interception == .shield { grabOverShield() }
        case .randrScreenChange:
            // Read by requests answered between events, not the event's size (RandR swaps it
            // when the first CRTC is rotated); a read still going is moot.
            outputsRead?.discard()
            outputsRead = OutputsRead(x: x)
        case .error(let error) where ["CreateWindow", "GrabButton"].contains(error.requestName):
            // Only the shield's and show's are sent unchecked (`createShieldWindow`, `ShowWindow`).
            logger.error("the X server could not make a window of the daemon's or the shield's grab (\(error)): the shield mode cannot take clicks, or show cannot draw")
        case .error(let error):
            // Requests about windows that vanished (a popup closed mid-click) end here.
            logger.debug("X error", metadata: ["error": "\(error)"])
        default:
            if case .mapNotify(let e) = event, e.event == x.root, e.overrideRedirect { shield?.overrideRedirectMapped(e.window) }
            if tracker.apply(event, now: clock.now()) { changed = true }
            shieldCoverDue = true
        }
        return nil
    }

    // MARK: - Answers

    /// A press: eaten (AsyncPointer) or sent on (ReplayPointer, or the shield's replay), and
    /// flushed; then, for a press let through the shield's own grab, the window under it
    /// activated, and for one replayed that dismisses, the X server given the CPU first.
    /// A release only reaches the daemon after a swallowed press.
    public func answer(_ click: Click, with decision: Decision?) {
        let token = X11Token(click.token)
        let time = token.stamp
        guard click.isPress else {
            let wasHolding = shieldHoldsAClick
            shieldHoldsAClick = wasHolding
                && ButtonEvent.otherButtonsHeld(releasing: click.button, state: ModifierMask(rawValue: token.state))
            if wasHolding && !shieldHoldsAClick { changed = true }
            return
        }
        let swallow = decision?.click == .swallow
        let onShieldGrab = token.window == shield?.window
        var windowUnder: PendingReply<WindowID?>?
        if swallow {
            input.allowEvents(.asyncPointer, time: time)
            shieldHoldsAClick = onShieldGrab
        } else if let shield, onShieldGrab || shield.mapped {
            // Buttons 1-3 focus on a click; the wheel does not.
            windowUnder = shield.replay(x: click.x, y: click.y, time: time, findWindowUnder: onShieldGrab && click.button <= 3)
        } else {
            input.allowEvents(.replayPointer, time: time)
        }
        input.flush()
        if let windowUnder { activations.append((windowUnder, time)) }
        // The replayed press first, the dismissal after: on a shared CPU, let the X server
        // deliver it before this process goes on to unmap and ungrab (BENCHMARKS.md, case 4).
        if let decision, decision.dismissCount > 0 && !swallow { sched_yield() }
    }

    public func acted(on click: Click) {}

    public func answerEscape(_ key: EscapeKey, _ outcome: EscapeOutcome) {
        input.allowEvents(outcome == .swallow ? .asyncKeyboard : .replayKeyboard, time: X11Token(key.token).stamp)
        input.flush()
    }

    private func close(_ client: UInt32, _ spec: PopupSpec, trigger: DismissTrigger) {
        switch spec.dismiss {
        case .close:
            if tracker.supportsDelete(client) {
                // The press's own time: the unwrapped clock keeps the server's low 32 bits.
                x.sendDeleteWindow(client, time: Timestamp(truncatingIfNeeded: trigger.time))
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
        case .command:
            break  // the daemon runs it
        }
        // Sent at once, as the click's answer is: the window goes while the pass settles.
        x.flush()
    }

    /// After presses let through from the shield's own grab, which no window manager grab
    /// saw: asks the window manager to activate the client under each, as a click would have
    /// (EWMH; a window manager without it, and the bare root, get nothing). Takes the replies
    /// that came, oldest first, never waiting for one.
    private func activateUnderClicks() {
        while let (under, time) = activations.first {
            switch input.poll(under) {
            case .notYet: return
            case .value(let top):
                if let top, top != shield?.window, let client = tracker.client(of: top) {
                    input.requestActivation(client, time: time)
                    logger.debug("asked the window manager to activate the window under a click let through the shield",
                                 metadata: ["window": "\(hex(client))"])
                }
            case .failed(let error):
                logger.debug("no window to activate under a click let through the shield: \(error)")
            }
            activations.removeFirst()
        }
    }

    // MARK: - Interception

    /// The grab and auto modes start with grabs on the root; the shield mode needs XFixes 2
    /// and fails plainly without it.
    private func use(_ mode: X11Mode) throws(XError) {
        switch mode {
        case .shield:
            try enterShieldMode()
        case .auto, .grab:
            if mode == .auto && fallbackReason != nil { return }
            shield?.update(active: false, holes: [])
            shieldHoldsAClick = false
            pointerOnShield = false
            interception = .grab
            aboveShield.update([])
        }
    }

    /// Grab mode: the thread that reads presses (the press thread, or the loop's without one)
    /// takes short time slices, so that a press frozen by the grab wakes it onto the CPU at
    /// once rather than at the X server's next tick; so does the loop's beside a press thread:
    /// in a burst of one program's popups, 3f's late presses were 1.4 times the reference
    /// grabber's with the loop's short slices only, 1.1 times with the press thread's only and
    /// 0.8 times with both (BENCHMARKS.md, short slices for the press thread). The shield
    /// mode keeps the default: a press in a hole never wakes the daemon, and the shield's
    /// crossings and pinholes wake it twice as often as a grab's press does; preempting the
    /// server at each of those wakeups made the shield's late presses in a burst of other
    /// clients' windows half as many again (BENCHMARKS.md, other clients' windows). Set by
    /// the threads' ids: a change of mode comes on either thread.
    private func takeTimeSlices() {
        let short = interception == .grab
        setTimeSlices(short: short, of: loopThread, "the loop's")
        if let pressThread { setTimeSlices(short: short, of: pressThread, "the press") }
        spaceLoopWakes()
    }

    /// Shield mode, presses on their own thread: the loop wakes at most every 2 ms. On the
    /// default time slices it took the CPU from the X server at each wakeup, and in a burst of
    /// popups it woke for every few events the server wrote: 3ps had 1.4 times the reference
    /// shield's late presses, and 0.8 and 0.6 times with the wakeups 1 and 2 ms apart. The
    /// grab mode's short slices already give the CPU back; there, spacing made 3f miss its
    /// bound (BENCHMARKS.md, the loop's wakeups in a burst). Windows, requests and a
    /// dismissal's settle wait up to that long in a burst; no press does.
    private func spaceLoopWakes() {
        loop?.wakeSpacing = interception == .shield && pressThread != nil ? Self.shieldLoopWakeSpacingMicroseconds : 0
    }
    private static let shieldLoopWakeSpacingMicroseconds: Int64 = 2000

    private func setTimeSlices(short: Bool, of thread: ThreadID, _ name: String) {
        let failure = short ? ShortSlices.request(for: thread) : ShortSlices.drop(for: thread)
        if let failure { logger.debug("\(name) thread's time slices stay as they were: \(failure)") }
    }

    /// The shield (made the first time) takes clicks instead of grabs on the root.
    private func enterShieldMode() throws(XError) {
        if let shapingUnavailable { throw shapingUnavailable }
        if shield == nil { shield = ShieldWindow(x: input, screen: screen, logger: logger) }
        buttonGrabs.release()
        interception = .shield
    }

    /// Grabs on the root for the open popups' buttons, or the shield with the engine's
    /// holes; Escape grabbed while a popup that wants it is open. What the server refuses
    /// comes from `nextInput` once it has answered (`collectRefusals`).
    /// While `show` draws, Escape is grabbed in the grab mode only: in the shield mode the
    /// root holds no grab while the pointer is in a hole, and any passive grab there costs
    /// every click in a hole the X server's check of the root's grabs (BENCHMARKS.md, show).
    public func intercept(_ engine: DecisionEngine, showing: Bool) -> Bool {
        let popups = engine.model.popups
        var buttons = ButtonSet(bits: 0)
        for o in engine.open { buttons.bits |= popups[Int(o.popup)].buttons.bits }
        wanted = (!engine.open.isEmpty, engine.open.count > 1, buttons)
        if interception == .grab { grabOnRoot() }
        if interception == .shield, let shield {
            shield.update(active: wanted.active || shieldHoldsAClick, holes: wanted.active ? engine.holes(in: screen) : [],
                          stacking: tracker.stacking, menusMapped: tracker.overrideRedirectMappedSinceOpenInstances)
            // A pointer left in a pinhole that is now inside a hole is in that hole, and no
            // crossing event will say so.
            if pointerOnShield && shield.pinholeIsInAHole { pointerOnShield = false }
            grabOverShield()
        }
        watchAboveShield(changed: [])
        let wantsEscape = (showing && interception == .grab) || engine.open.contains { popups[Int($0.popup)].escape }
        escapeGrabs.request(wantsEscape ? escapeKeycodes.map(PassiveGrabSet.Input.key) : [])
        return false
    }

    /// Grab mode: the open popups' buttons on the root.
    private func grabOnRoot() {
        let before = buttonGrabs.wanted
        buttonGrabs.request(wanted.buttons.buttons.map { .button(UInt8($0)) })
        if buttonGrabs.wanted != before && buttonGrabs.isGrabbing {
            logger.debug("grabbing buttons on the root window", metadata: [
                "buttons": "\(wanted.buttons.buttons)", "combinations": "\(buttonGrabs.held.count)",
            ])
        }
    }

    /// Shield mode: grabs on the root only while the pointer is over the shield or a window
    /// above it that belongs to no popup, for buttons 1-3 too, so that a click let through
    /// reaches the window manager's grabs (`ShieldWindow.replay`). In a hole there are none:
    /// clicks there never wait for the daemon.
    private func grabOverShield() {
        var buttons = wanted.buttons
        buttons.bits |= ButtonSet(bits: 0b1110).bits
        let over = wanted.active && shield?.mapped == true && (pointerOnShield || aboveShield.pointerOver != nil)
        // Not waited for: the pointer crosses in and out as it moves, and a press must never
        // wait behind a round trip. Refusals are told when the server has answered.
        buttonGrabs.request((over ? buttons : ButtonSet(bits: 0)).buttons.map { .button(UInt8($0)) })
    }

    public func takeInterceptionNotices() -> [InterceptionNotice] {
        defer { notices = [] }
        return notices
    }

    /// Whether grabs wait for the server's answer (`collectRefusals`).
    private var grabsChecking: Bool { buttonGrabs.isChecking || escapeGrabs.isChecking }

    /// The grabs the server refused, once it has answered them: logged, and told to the
    /// daemon (`notices`; whether any waits). A button refused in the grab mode makes `auto`
    /// switch to the shield; in the shield mode the grabs follow the pointer, and a refusal is
    /// only logged.
    private func collectRefusals() -> Bool {
        // `notices` is changed only by statements that call nothing else (`told` first): it
        // has no runtime exclusivity check.
        let refused = buttonGrabs.collectRefusals()
        if let first = refused.first {
            if interception == .shield {
                for (combo, error) in refused { logger.debug("\(buttonGrabs.refusalSentence(combo, error, .shieldKeepsThem))") }
            } else if mode == .auto,
                      let notice = fallBackToShield(because: buttonGrabs.refusalSentence(first.combination, first.error, .shieldTakesThem)) {
                let told = [notice] + report(refused, .shieldTakesThem)
                notices += told
            } else {
                let told = report(refused, .notDismissing)
                notices += told
            }
        }
        for (combo, error) in escapeGrabs.collectRefusals() {
            let sentence = escapeGrabs.escapeRefusalSentence(combo, error)
            logger.error("\(sentence)")
            let told = InterceptionNotice.refused(escapeGrabs.refusal(combo, error, sentence))
            notices.append(told)
        }
        return !notices.isEmpty
    }

    /// `auto` after a refused grab: the shield needs no grab on the root, so it works where
    /// another client holds one. Said once, in the log and in `status`.
    private func fallBackToShield(because reason: String) -> InterceptionNotice? {
        do {
            try enterShieldMode()
        } catch {
            logger.error("a grab was refused and the shield mode is not available either (\(error)); staying with grabs")
            return nil
        }
        fallbackReason = reason
        logger.warning("switching to the shield mode (backend = \"auto\") because a grab was refused: \(reason)")
        return .switchedBackend(to: Interception.shield.rawValue, because: reason)
    }

    private func report(_ refused: [(combination: PassiveGrabSet.Combination, error: XErrorInfo)],
                        _ consequence: RefusalConsequence) -> [InterceptionNotice] {
        refused.map { combo, error in
            let sentence = buttonGrabs.refusalSentence(combo, error, consequence)
            if consequence == .notDismissing { logger.error("\(sentence)") } else { logger.warning("\(sentence)") }
            return .refused(buttonGrabs.refusal(combo, error, sentence))
        }
    }

    /// The pointer crossed into the shield or out of it into a hole: grabs on the root while
    /// it is over the shield (see `grabOverShield`).
    private func pointerEntered(shield entered: Bool) {
        guard entered != pointerOnShield else { return }
        pointerOnShield = entered
        guard interception == .shield else { return }
        grabOverShield()
    }

    // MARK: - The rest

    public func perform(_ request: DisplayRequest) {
        switch request {
        case .close(let client, let spec, let trigger): close(client, spec, trigger: trigger)
        case .sync(let id): startSync(id)
        case .probePointerGrab(let id): probePointerGrab(id)
        case .pick(_, let done): done(.failure(Refusal("the daemon picks windows on sway and KWin only; on X11 clickawayctl pick grabs the pointer itself")))
        case .cancelPick: break
        }
    }

    /// Answers after one round trip to the X server and after handling every event the
    /// server sent before it: the caller then sees the daemon in a settled state.
    private func startSync(_ id: Int) {
        syncs.start(id, x: x, reader: tracker.reader, input: input)
        syncReads.deadline = syncs.deadline
        x.flush()
        input.flush()
        // Sent while no window may be read: the tracker's own flush would leave it.
        tracker.reader.flush()
    }

    /// The grabs held stay through a reload (the refresh after it asks for what the new
    /// popups take): a press during a reload is still intercepted, and no round trip retakes
    /// them. A new mode starts afresh, and a refused combination is tried again.
    public func configure(_ model: ClickModel, _ change: ModelChange) -> String? {
        // Windows may have become popups or stopped: all looked at again.
        followedFor = nil
        switch change {
        case .runtimePopups(let lookup):
            tracker.replaceModel(model, now: clock.now(), inspecting: lookup)
            return nil
        case .reloaded(let asked):
            tracker.replaceModel(model, now: clock.now())
            let mode = asked ?? self.mode
            let switching = mode != self.mode
            self.mode = mode
            if switching || !buttonGrabs.refused.isEmpty { buttonGrabs.release() }
            do {
                try use(mode)
                return nil
            } catch {
                let unapplied = "cannot switch to backend x11-shield: \(error); keeping \(interception.rawValue)"
                logger.error("\(unapplied)")
                return unapplied
            }
        }
    }

    /// Show's windows need what the shield's do, asked for at start: no round trip here.
    public func makeShowCanvas() throws(Refusal) -> any ShowCanvas {
        if let shapingUnavailable {
            throw Refusal("cannot draw on \(x.display): \(shapingUnavailable) (clickawayctl show --svg FILE draws offline)")
        }
        return X11ShowCanvas(display: self)
    }

    public func release() {
        buttonGrabs.release()
        escapeGrabs.release()
        aboveShield.update([])
        shield = nil
        input.flush()
        x.flush()
    }

    /// Asks the server for the pointer: refused while another client holds it (X has no
    /// request that names the holder), else taken and given back at once.
    private func probePointerGrab(_ id: Int) {
        grabProbes.append((id, x.sendPointerGrabProbe(x.root)))
        x.flush()
    }

    /// Whether a grab probe's answer waits for `nextInput`: the oldest probe's reply is taken
    /// if it has come (reading what the connection holds, never waiting).
    private func hasGrabAnswer() -> Bool {
        guard let probe = grabProbes.first else { return !grabAnswers.isEmpty }
        let heldBy: String?
        switch x.poll(probe.reply) {
        case .notYet: return !grabAnswers.isEmpty
        case .value(let refusal?) where refusal == .alreadyGrabbed || refusal == .frozen: heldBy = "\(refusal)"
        case .value, .failed: heldBy = nil
        }
        grabProbes.removeFirst()
        grabAnswers.append((probe.id, heldBy))
        return true
    }

    public func status() -> DisplayStatus {
        let locks = buttonGrabs.locks
        return .x11(X11Status(
            fallback: fallbackReason, display: x.display,
            grab: GrabStatus(
                active: buttonGrabs.isGrabbing, buttons: buttonGrabs.buttons,
                held: buttonGrabs.held.compactMap { combo in
                    guard case .button(let button) = combo.input else { return nil }
                    return GrabStatus.Held(button: Int(button), modifiers: locks.describe(combo.modifiers))
                },
                refused: buttonGrabs.refused.compactMap { combo, error in
                    guard case .button(let button) = combo.input else { return nil }
                    return GrabStatus.Refused(button: Int(button), modifiers: locks.describe(combo.modifiers), error: error.name)
                }),
            shield: shield.map { ShieldStatus(window: hex($0.window), mapped: $0.mapped, holes: $0.holes) },
            escape: EscapeStatus(
                active: escapeGrabs.isGrabbing,
                refused: escapeGrabs.refused.map { EscapeStatus.Refused(modifiers: locks.describe($0.combination.modifiers), error: $0.error.name) })))
    }
}

/// What an X11 input's token holds: the window the event was reported on (the root's grab,
/// the shield), the server's time of the event, which AllowEvents names, and the modifier
/// and button state just before it.
struct X11Token: Equatable {
    var window: UInt32
    var stamp: UInt32
    var state: UInt16

    init(window: UInt32, stamp: UInt32, state: UInt16) {
        self.window = window
        self.stamp = stamp
        self.state = state
    }

    init(_ token: InputToken) {
        window = UInt32(truncatingIfNeeded: token.first >> 32)
        stamp = UInt32(truncatingIfNeeded: token.first)
        state = UInt16(truncatingIfNeeded: token.second)
    }

    var token: InputToken { InputToken(UInt64(window) << 32 | UInt64(stamp), UInt64(state)) }
}

extension XEvent {
    /// A press, release or key the daemon answers: what a refresh must come before.
    var isInput: Bool {
        switch self {
        case .buttonPress, .buttonRelease, .keyPress: true
        default: false
        }
    }
}

extension ButtonEvent {
    /// Whether another button than `button` was still down when it was released (`state` is
    /// from just before the event).
    static func otherButtonsHeld(releasing button: UInt8, state: ModifierMask) -> Bool {
        !state.intersection(.buttons).subtracting(.button(button)).isEmpty
    }
}
