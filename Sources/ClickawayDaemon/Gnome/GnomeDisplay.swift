internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayDBus
internal import ClickawayJSON
internal import ClickawaySystem
internal import Glibc
internal import Logging
internal import SystemPackage

/// GNOME Shell on Wayland, which has no layer-shell and tells no client where another's
/// windows are: clickaway's Shell extension does the display's part (`GnomeProtocol`, the
/// messages; data/gnome-shell/, the extension). Its layer over every window lets clicks in
/// the holes through to the windows, so the daemon hears only of clicks that may dismiss;
/// it reports each press and carries out the answer (a replay after the release, through a
/// virtual pointer of its own), reports the windows, closes them, and takes Escape.
///
/// The daemon owns `GnomeProtocol.busName` on the session bus and exports its object; the
/// extension watches the name, so a daemon that starts after the Shell, or again, is found
/// at once, and a daemon gone takes the layer with it. A press's `Event` call is held until
/// the press is decided and answered in its reply; the daemon's own commands go in the reply
/// to the extension's `Wait`, held until there are some. The Shell never waits: the extension
/// takes its layer down after `GnomeProtocol.answerLimitMs` without an answer.
final class GnomeDisplay: Display, PollSource {
    private let bus: BusConnection
    private let logger: Logger
    private let gnomeWindows: GnomeWindows
    private let displayName: String
    /// The extension's unique name on the bus since its hello; nil while not connected.
    private var extensionPeer: String?
    /// The unique name that owns `org.gnome.Shell`, as the bus last said: the only peer whose
    /// hello is taken (GNOME Shell owns the name before it enables any extension, on the same
    /// connection its extensions call from).
    private var shellOwner: String?
    /// The last peer refused, told of once in the log.
    private var refusedPeer: String?
    private var shellVersion = ""
    /// What the daemon waits for while the extension is not connected.
    private var waitingFor: String?
    /// The extension's pending `Wait`, and commands for it (JSON objects as text).
    private var poll: BusConnection.Call?
    private var commands: [String] = []
    /// Presses and releases read, not handed out yet, each with its held `Event` call.
    private var clicks: [(click: Click, call: BusConnection.Call)] = []
    /// The `Event` calls of clicks handed out, by the press's id and whether a press: answered
    /// with the decision (a press) or once the daemon has acted (a release).
    private var heldPresses: [Int64: BusConnection.Call] = [:]
    private var heldReleases: [Int64: BusConnection.Call] = [:]
    private var escapes: [EscapeKey] = []
    private var changed = false
    private var outputsChanged = false
    private var outputs: [String: Rect] = [:]
    /// The stage: every monitor's rectangle together.
    private var bounds: Rect?
    /// The holes and Escape the engine wants, and what the extension was last sent.
    private var wantedHoles: [Rect]?
    private var wantedEscape = false
    private var sentHoles: [Rect]?? = .none
    private var sentEscape: Bool?
    /// `clickawayctl show`'s picture while it draws, and what the extension was last sent.
    private var wantedShow: [ShowPicture.Fill]?
    private var sentShow: [ShowPicture.Fill]?? = .none
    /// Syncs not answered yet: the daemon's id, the ping's ticket, when it gives up.
    private var syncs: [(id: Int, ticket: Int?, deadline: Deadline)] = [] { didSet { syncWait.deadline = syncs.first?.deadline } }
    private let syncWait = LoopTimer()
    private var ticketsSent = 0
    private var ticketsAnswered = 0
    private var closeRefusals: [UInt32] = []
    private var grabProbes: [Int] = []
    private var broken: String?
    private var lostTold = false

    /// How long each call at start may take.
    static let callLimitMs: UInt64 = 2000
    /// How long asking the bus who owns `org.gnome.Shell` may take on the loop (only for a
    /// hello while no owner is known, never on the press path).
    static let ownerLimitMs: UInt64 = 250
    /// How long a sync waits for the extension.
    static let syncLimitMs: Int64 = 2000

    /// Connects to the session bus at `busAddress`, checks the extension, and owns the name
    /// the extension looks for. A disabled extension is waited for; a missing, failed or
    /// mismatched one throws with what to run.
    init(busAddress: String, displayName: String, model: ClickModel, logger: Logger) throws(DesktopServiceUnavailable) {
        self.logger = logger
        self.displayName = displayName
        gnomeWindows = GnomeWindows(model: model, logger: logger)
        bus = try .reaching("org.gnome.Shell", named: "GNOME Shell", at: busAddress, description: "clickaway-gnome",
                            milliseconds: Self.callLimitMs)
        do {
            try bus.watchOwner(of: "org.gnome.Shell")
            // After the watch: a change from now on is told.
            shellOwner = bus.owner(of: "org.gnome.Shell", milliseconds: Self.callLimitMs)
            waitingFor = try Self.checkExtension(bus)
            try bus.export(path: GnomeProtocol.path)
            try bus.requestName(GnomeProtocol.busName)
        } catch let error as DesktopServiceUnavailable {
            throw error
        } catch {
            throw DesktopServiceUnavailable(isRunning: true, reason: "\(error)")
        }
        if let waitingFor { logger.error("\(waitingFor)") }
        logger.info("waiting for GNOME Shell's extension", metadata: ["name": "\(GnomeProtocol.busName)"])
    }

    /// What GNOME Shell says of the extension (`org.gnome.Shell.Extensions.GetExtensionInfo`):
    /// nil when it is enabled and of this daemon's version, a sentence when it is disabled or
    /// the Shell does not answer (the daemon waits for it); throws when it is missing, failed
    /// or of another version.
    private static func checkExtension(_ bus: BusConnection) throws -> String? {
        let uuid = GnomeProtocol.uuid
        let info: [String: String]
        do {
            info = try bus.callDictionary("org.gnome.Shell.Extensions", "/org/gnome/Shell/Extensions", "org.gnome.Shell.Extensions",
                                          "GetExtensionInfo", uuid, milliseconds: callLimitMs)
        } catch {
            // A Shell still starting, or too busy to answer in time: the extension's hello says its version.
            return "GNOME Shell did not say whether its extension \(uuid) is enabled (\(error)): waiting for it to connect"
        }
        let relogin = "then log out and in again (GNOME Shell on Wayland finds new extensions only when it starts)"
        guard let state = info["state"].flatMap(Double.init) else {
            throw DesktopServiceUnavailable(isRunning: true, reason: "GNOME Shell has no extension \(uuid), which clickaway needs on GNOME: "
                              + "install it with `make install` in clickaway's source (or your package's clickaway-gnome-shell-extension), "
                              + "\(relogin), and enable it: gnome-extensions enable \(uuid)")
        }
        let version = info["version"].flatMap(Double.init).map { Int($0) }
        switch state {
        case 4:
            throw DesktopServiceUnavailable(isRunning: true, reason: "GNOME Shell says its extension \(uuid) is OUT OF DATE: it was not made for this "
                              + "GNOME Shell version; install the one for it with `make install` (which picks by `gnome-shell --version`), \(relogin)")
        case 3:
            throw DesktopServiceUnavailable(isRunning: true, reason: "GNOME Shell's extension \(uuid) failed (\(info["error"] ?? "no reason given")): "
                              + "see `journalctl --user -b | grep clickaway`; reinstall it with `make install`, \(relogin)")
        default: break
        }
        if let version, version != GnomeProtocol.version {
            throw DesktopServiceUnavailable(isRunning: true, reason: "GNOME Shell's extension \(uuid) is version \(version), this clickaway speaks version "
                              + "\(GnomeProtocol.version): install the extension of this clickaway with `make install`, \(relogin)")
        }
        return state == 1 ? nil : "GNOME Shell's extension \(uuid) is installed but not enabled: run `gnome-extensions enable \(uuid)`; "
            + "until it is, no popup is dismissed"
    }

    // MARK: - The loop

    var pollDescriptor: FileDescriptor { bus.descriptor }
    var wantsToWrite: Bool { bus.wantsToWrite }

    func prepareToSleep() -> Bool {
        read()
        return changed || outputsChanged || !clicks.isEmpty || !escapes.isEmpty || !grabProbes.isEmpty || !closeRefusals.isEmpty
            || gnomeWindows.hasChange || syncs.first.map(isDone) == true || (broken != nil && !lostTold)
    }

    func pollReturned(_ readiness: Readiness) {
        if !readiness.isEmpty { read() }
    }

    func register(with loop: PollLoop) {
        loop.add(self)
        loop.schedule(syncWait) { _ in }
        read()
    }

    // MARK: - From the extension

    private func read() {
        guard broken == nil else { return }
        bus.process()
        for change in bus.takeOwnerChanges() where change.name == "org.gnome.Shell" {
            shellOwner = change.newOwner.isEmpty ? nil : change.newOwner
            if change.newOwner.isEmpty {
                disconnected(waiting: "GNOME Shell left the session bus: waiting for it to come back")
            } else if let extensionPeer, extensionPeer != change.newOwner {
                disconnected(waiting: "another GNOME Shell took org.gnome.Shell: waiting for its extension")
            }
        }
        for call in bus.takeCalls() {
            switch call.member {
            case "Event": handle(call)
            case "Wait" where call.sender == nil || call.sender != extensionPeer:
                // Only the extension that said hello waits for commands: no other peer takes them.
                bus.refuse(call, name: GnomeProtocol.notConnectedError, "say hello first: only GNOME Shell's clickaway extension waits here")
            case "Wait":
                // A newer Wait replaces an older one (a re-enabled extension's, a restarted Shell's).
                if let poll { bus.answer(poll, "[]") }
                poll = call
                if !commands.isEmpty { answerPoll() }
            default:
                bus.refuse(call, name: "org.freedesktop.DBus.Error.UnknownMethod", "clickaway's GNOME object has Event and Wait")
            }
        }
        if let failure = bus.failure { broken = failure }
    }

    private func handle(_ call: BusConnection.Call) {
        let message = call.argument.flatMap { try? JSON.parse($0) } ?? .null
        guard let event = message["ev"]?.stringValue.flatMap(GnomeProtocol.Event.init(rawValue:)) else {
            logger.warning("clickaway's GNOME Shell extension sent what this daemon does not know: \(call.argument ?? "nothing")")
            bus.answer(call, "[]")
            return
        }
        if event == .hello {
            guard let peer = call.sender, isShell(peer) else {
                refuse(call)
                return
            }
            hello(message, from: peer)
        } else if call.sender != extensionPeer {
            // A disabled extension's, or a Shell's gone: not the extension this daemon talks to.
            bus.answer(call, "[]")
            return
        }
        switch event {
        case .hello: break
        case .press, .release:
            if let click = click(message, isPress: event == .press) {
                clicks.append((click, call))
                return
            }
        case .escape:
            escapes.append(EscapeKey(time: MonotonicClock.milliseconds(), token: InputToken()))
        case .window: gnomeWindows.take(message["window"] ?? .null)
        case .gone:
            if let id = message["id"]?.intValue.flatMap(UInt32.init(exactly:)) { gnomeWindows.forget(id) }
        case .stacking: gnomeWindows.setStacking(message["ids"]?.arrayValue ?? [])
        case .monitors: takeMonitors(message["monitors"]?.arrayValue ?? [])
        case .pong: ticketsAnswered = max(ticketsAnswered, Int(message["ticket"]?.intValue ?? 0))
        case .refused:
            if let id = message["id"]?.intValue.flatMap(UInt32.init(exactly:)) {
                logger.warning("GNOME Shell did not close window \(id): \(message["why"]?.stringValue ?? "no reason given")")
                closeRefusals.append(id)
            }
        case .layerDown:
            logger.warning("GNOME Shell's extension took its layer and drawing down (\(message["why"]?.stringValue ?? "no reason given")): sending it again")
            // The clicks it gave up on went nowhere: they dismiss nothing now, late.
            for (_, held) in clicks { bus.answer(held, "[]") }
            clicks.removeAll()
            sentHoles = .none
            sentEscape = nil
            sentShow = .none
            sendInterception()
            sendShow()
        case .bye:
            bus.answer(call, "[]")
            disconnected(waiting: "the extension \(GnomeProtocol.uuid) was disabled: waiting for `gnome-extensions enable \(GnomeProtocol.uuid)`")
            return
        }
        bus.answer(call, reply())
    }

    /// Whether `peer` is GNOME Shell, the owner of `org.gnome.Shell`. The bus tells of a new
    /// owner before anything that owner sends (GNOME Shell takes the name before it runs any
    /// JavaScript), so a known owner is asked nothing; none known (the name had none, or the
    /// bus did not answer at start) is asked once more, bounded.
    private func isShell(_ peer: String) -> Bool {
        if shellOwner == nil { shellOwner = bus.owner(of: "org.gnome.Shell", milliseconds: Self.ownerLimitMs) }
        return peer == shellOwner
    }

    /// A hello from a peer that is not GNOME Shell: answered with an error, and the extension
    /// connected (if any) stays the one.
    private func refuse(_ call: BusConnection.Call) {
        let peer = call.sender ?? "a peer without a name"
        let owner = shellOwner.map { "GNOME Shell is \($0)" } ?? "nobody owns org.gnome.Shell"
        if refusedPeer != peer {
            refusedPeer = peer
            logger.warning("refused a hello from \(peer) on the session bus: it is not GNOME Shell (\(owner)); only GNOME Shell's extension is taken")
        }
        bus.refuse(call, name: GnomeProtocol.notShellError, "clickaway takes a hello only from GNOME Shell (the owner of org.gnome.Shell); \(peer) is not it: \(owner)")
    }

    private func hello(_ message: JSON, from peer: String) {
        let version = message["protocol"]?.intValue ?? 0
        guard version == GnomeProtocol.version else {
            logger.error("GNOME Shell's extension speaks version \(version), this clickaway \(GnomeProtocol.version): install the extension of this clickaway (`make install`) and log out and in again")
            return
        }
        if let poll, extensionPeer != peer {
            bus.answer(poll, "[]")
            self.poll = nil
        }
        extensionPeer = peer
        waitingFor = nil
        shellVersion = message["shell"]?.stringValue ?? ""
        gnomeWindows.reset(message["windows"]?.arrayValue ?? [], stacking: message["stacking"]?.arrayValue ?? [])
        takeMonitors(message["monitors"]?.arrayValue ?? [])
        logger.info("GNOME Shell's extension connected", metadata: ["shell": "\(shellVersion)", "peer": "\(peer)"])
        // A new layer: the interception and the drawing are sent again.
        sentHoles = .none
        sentEscape = nil
        sentShow = .none
        sendInterception()
        sendShow()
        changed = true
    }

    /// The extension or the Shell went: no windows, nothing to send until the next hello.
    private func disconnected(waiting: String) {
        guard extensionPeer != nil || waitingFor == nil else { return }
        logger.warning("\(waiting)")
        extensionPeer = nil
        waitingFor = waiting
        if let poll { bus.answer(poll, "[]") }
        poll = nil
        commands.removeAll()
        for (_, call) in heldPresses { bus.answer(call, "[]") }
        for (_, call) in heldReleases { bus.answer(call, "[]") }
        heldPresses.removeAll()
        heldReleases.removeAll()
        gnomeWindows.clear()
        changed = true
    }

    private func click(_ message: JSON, isPress: Bool) -> Click? {
        func number(_ key: String) -> Double? {
            switch message[key] {
            case .int(let i): Double(i)
            case .number(let d): d
            default: nil
            }
        }
        guard let x = number("x"), let y = number("y"), x.isFinite, y.isFinite,
              let button = message["button"]?.intValue.flatMap(UInt8.init(exactly:)) else { return nil }
        let id = message["id"]?.intValue ?? 0
        return Click(isPress: isPress, button: button, x: Self.coordinate(x), y: Self.coordinate(y),
                     time: MonotonicClock.milliseconds(), releaseGoesElsewhere: false, token: InputToken(UInt64(bitPattern: id)))
    }

    /// A place the extension says, as a whole pixel within what any screen could be: what
    /// comes over the bus must not make the daemon's arithmetic overflow.
    static func coordinate(_ value: Double) -> Int32 { Int32(max(-Self.coordinateLimit, min(Self.coordinateLimit, value.rounded(.down)))) }
    static func coordinate(_ value: Int64) -> Int32 { Int32(max(-Int64(Self.coordinateLimit), min(Int64(Self.coordinateLimit), value))) }
    static let coordinateLimit: Double = 1_048_576

    private func takeMonitors(_ monitors: [JSON]) {
        var named: [String: Rect] = [:]
        var all: Rect?
        for (index, m) in monitors.enumerated() {
            func int(_ key: String) -> Int32 { Self.coordinate(m[key]?.intValue ?? 0) }
            let rect = Rect(x: int("x"), y: int("y"), width: int("width"), height: int("height"))
            named[m["name"]?.stringValue ?? "monitor-\(index)"] = rect
            all = all.map { a in
                let right = max(a.x + a.width, rect.x + rect.width), bottom = max(a.y + a.height, rect.y + rect.height)
                let x = min(a.x, rect.x), y = min(a.y, rect.y)
                return Rect(x: x, y: y, width: right - x, height: bottom - y)
            } ?? rect
        }
        guard named != outputs || all != bounds else { return }
        outputs = named
        bounds = all
        outputsChanged = true
    }

    // MARK: - Inputs

    func nextInput() -> DisplayInput? {
        read()
        if gnomeWindows.takeChange() { changed = true }
        if outputsChanged {
            outputsChanged = false
            return .outputsChanged
        }
        if changed {
            changed = false
            return .changed
        }
        if !closeRefusals.isEmpty { return .closeRefused(closeRefusals.removeFirst()) }
        if !clicks.isEmpty {
            let (click, call) = clicks.removeFirst()
            let id = Int64(bitPattern: click.token.first)
            // An id told twice (only a broken extension would) leaves no call held for ever.
            let earlier = click.isPress ? heldPresses.updateValue(call, forKey: id) : heldReleases.updateValue(call, forKey: id)
            if let earlier { bus.answer(earlier, "[]") }
            logger.debug("GNOME Shell \(click.isPress ? "press" : "release") \(id) of button \(click.button) at (\(click.x), \(click.y))")
            return .click(click)
        }
        if !escapes.isEmpty { return .escapeKey(escapes.removeFirst()) }
        if !grabProbes.isEmpty { return .pointerGrab(grabProbes.removeFirst(), heldBy: nil) }
        if let sync = syncs.first, isDone(sync) {
            syncs.removeFirst()
            var failure: String?
            if let ticket = sync.ticket, ticketsAnswered < ticket, extensionPeer != nil {
                failure = "GNOME Shell's extension did not answer within \(Self.syncLimitMs) ms"
            }
            return .synced(sync.id, failure: failure)
        }
        guard !lostTold, let broken else { return nil }
        lostTold = true
        logger.error("the session bus connection broke: \(broken)")
        return .lost
    }

    /// A press is answered in its own call's reply: swallowed, or sent on once released (a
    /// click that passes, which the layer took, goes on as a replay does).
    func answer(_ click: Click, with decision: Decision?) {
        guard click.isPress else { return }
        let id = Int64(bitPattern: click.token.first)
        guard let call = heldPresses.removeValue(forKey: id) else { return }
        let answer: GnomeProtocol.Answer = decision?.click == .swallow ? .swallow : .replay
        commands.insert(GnomeProtocol.answer(id, answer), at: 0)
        bus.answer(call, reply())
    }

    /// A release's call is answered once the daemon has acted: its reply carries the holes
    /// as they are after the dismissal, before the extension sends the click on.
    func acted(on click: Click) {
        guard !click.isPress, let call = heldReleases.removeValue(forKey: Int64(bitPattern: click.token.first)) else { return }
        bus.answer(call, reply())
    }

    /// The extension's grab takes Escape away from the focused window: it cannot be passed on.
    func answerEscape(_ key: EscapeKey, _ outcome: EscapeOutcome) {}

    // MARK: - The interception

    func intercept(_ engine: DecisionEngine, showing: Bool) -> Bool {
        let open = !engine.open.isEmpty
        wantedHoles = open ? bounds.map { engine.holes(in: $0) } ?? [] : nil
        let popups = engine.model.popups
        wantedEscape = engine.open.contains { popups[Int($0.popup)].escape }
        return sendInterception() && open
    }

    /// Sends the holes and Escape when they differ from what the extension has; true when
    /// something was sent.
    @discardableResult
    private func sendInterception() -> Bool {
        guard extensionPeer != nil else { return false }
        var sent = false
        if sentHoles != .some(wantedHoles) {
            sentHoles = .some(wantedHoles)
            send(GnomeProtocol.holes(wantedHoles))
            sent = true
        }
        if sentEscape != wantedEscape {
            sentEscape = wantedEscape
            send(GnomeProtocol.escape(wantedEscape))
            sent = true
        }
        return sent
    }

    func takeInterceptionNotices() -> [InterceptionNotice] { [] }

    /// The layer and the Escape grab go: the extension is told, and the name leaves the bus
    /// as the connection closes, which it also takes as the end.
    func release() {
        if extensionPeer != nil {
            wantedHoles = nil
            wantedEscape = false
            sendInterception()
        }
        bus.process()
    }

    // MARK: - What it is

    var windows: any WindowSource { gnomeWindows }

    var state: DisplayState {
        DisplayState(kind: .wayland, name: displayName, interception: "gnome", isIntercepting: wantedHoles != nil && extensionPeer != nil,
                     failure: broken, outputs: outputs, now: MonotonicClock.milliseconds(), abilities: abilities)
    }

    private let abilities = DisplayAbilities(unmapUnavailable: "GNOME Shell has no request for it")

    func status() -> DisplayStatus {
        .wayland(WaylandStatus(
            display: displayName,
            overlay: OverlayStatus(outputs: outputs.sorted { $0.key < $1.key }.map { OverlayStatus.Output(name: $0.key, rect: $0.value) },
                                   holes: extensionPeer != nil ? wantedHoles ?? [] : [], pointer: true, touch: false, tablets: false,
                                   replay: "the GNOME Shell extension's virtual pointer"),
            windows: .gnome(GnomeStatus(uuid: GnomeProtocol.uuid, connected: extensionPeer != nil, shell: shellVersion,
                                        windows: gnomeWindows.count, waiting: waitingFor))))
    }

    // MARK: - Requests

    func perform(_ request: DisplayRequest) {
        switch request {
        case .close(let window, let spec, _): close(window, kill: spec.dismiss == .kill)
        case .sync(let id):
            let ticket: Int? = extensionPeer == nil ? nil : ping()
            syncs.append((id, ticket, .inMilliseconds(Self.syncLimitMs)))
        case .probePointerGrab(let id): grabProbes.append(id)
        case .pick(_, let done): done(.failure(Refusal("pick is not available on GNOME yet: write the [[popup]] by hand (clickawayctl status shows what matched)")))
        case .cancelPick: break
        }
    }

    private func isDone(_ sync: (id: Int, ticket: Int?, deadline: Deadline)) -> Bool {
        guard let ticket = sync.ticket else { return true }
        return ticketsAnswered >= ticket || extensionPeer == nil || sync.deadline.hasPassed()
    }

    private func ping() -> Int {
        ticketsSent += 1
        send(GnomeProtocol.ping(ticketsSent))
        return ticketsSent
    }

    private func close(_ window: UInt32, kill force: Bool) {
        if force, let pid = gnomeWindows.pid(of: window), pid > 0, pid != getpid() {
            if Glibc.kill(pid, SIGKILL) != 0 {
                logger.warning("cannot kill the process of window \(window) (pid \(pid)): \(String(cString: strerror(errno)))")
            }
            return
        }
        send(GnomeProtocol.close(window))
    }

    func configure(_ model: ClickModel, _ change: ModelChange) -> String? {
        gnomeWindows.replaceModel(model)
        return nil
    }

    // MARK: - show

    /// `clickawayctl show` draws through the extension, which must be connected to begin.
    func makeShowCanvas() throws(Refusal) -> any ShowCanvas {
        guard extensionPeer != nil else {
            throw Refusal("show cannot draw on GNOME while GNOME Shell's extension is not connected: \(waitingFor ?? "waiting for it")")
        }
        return GnomeShowCanvas(display: self)
    }

    /// The picture the extension draws (nil: none), sent when it differs from what it has.
    func draw(_ fills: [ShowPicture.Fill]?) {
        if let fills, fills.count > GnomeProtocol.showFillLimit {
            logger.warning("show draws \(GnomeProtocol.showFillLimit) of the picture's \(fills.count) rectangles on GNOME: the top ones (labels first) are left out")
        }
        wantedShow = fills
        sendShow()
    }

    private func sendShow() {
        guard extensionPeer != nil, sentShow != .some(wantedShow) else { return }
        sentShow = .some(wantedShow)
        send(GnomeProtocol.show(wantedShow))
    }

    /// The monitors the extension told of.
    var outputCount: Int { outputs.count }

    // MARK: - To the extension

    /// The commands queued, as one reply; sent once.
    private func reply() -> String {
        defer { commands.removeAll(keepingCapacity: true) }
        return "[" + commands.joined(separator: ",") + "]"
    }

    private func send(_ command: String) {
        commands.append(command)
        answerPoll()
    }

    private func answerPoll() {
        guard let poll else { return }
        bus.answer(poll, reply())
        self.poll = nil
    }
}
