internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayDBus
internal import ClickawayJSON
internal import ClickawaySystem
internal import Glibc
internal import Logging
internal import SystemPackage

/// Windows on KWin, from a KWin script the daemon writes and loads over D-Bus (`KWinScript`):
/// the script reports every window as it appears, changes and goes, and closes the windows
/// the daemon names. A window's id is the script's number for it (from 1, in the order it
/// saw them); its rectangle is its frame, decorations included, as on X11.
///
/// Families are by `transientFor` at any depth: a dialog, and an xdg_popup (a GTK dropdown,
/// a menu), which KWin lists as a window transient for its toplevel, so a popup's own
/// dropdown is inside it. Class and instance are KWin's `resourceClass` and `resourceName`
/// (an X client's WM_CLASS; a Wayland client's app_id and executable), and `app_id` matches
/// `resourceClass` too. Start-up waits, bounded, for KWin's answers; nothing after it does.
final class KWinWindows: RosterWindowSource, CompositorWindows {
    /// One window as the script last described it.
    private struct Window {
        var id: UInt32
        var rect: Rect
        /// With the process (`pid`): what matches and what `kill` ends.
        var properties: WindowMatch.Properties
        var parent: UInt32
        var visible: Bool
        var stacking: Int
    }

    private let bus: BusConnection
    private let logger: Logger
    let scriptPath: String
    /// KWin's major version, as the script found it; 0 until it has said hello.
    private(set) var version = 0
    let roster: WindowRoster<Int32>
    private var known: [UInt32: Window] = [:]
    /// Something the roster sees changed since the last `takeChange`.
    private var changed = false
    /// Windows changed since the roster was last brought up to date.
    private var dirty = false
    /// The script's pending `Wait`, and commands for it.
    private var poll: BusConnection.Call?
    private var commands: [String] = []
    private let pollRenewal = LoopTimer()
    /// Pings sent and the last answered.
    private var ticketsSent = 0
    private var ticketsAnswered = 0
    private var closeRefusals: [UInt32] = []
    var hasCloseRefusals: Bool { !closeRefusals.isEmpty }
    /// Until the script's hello: when it is late.
    private let helloTimer = LoopTimer()
    /// `Scripting.start` was asked for, the script not having said hello after `run`.
    private var startAsked = false
    private(set) var failure: String?

    /// How long KWin has to run the script and hear from it: after `run`, and again after
    /// `Scripting.start`.
    static let helloLimitMs: Int64 = 2000
    /// How long each call to KWin at start and stop may take.
    static let callLimitMs: UInt64 = 2000

    /// Loads the script into KWin on the session bus at `busAddress`, or throws why not.
    init(busAddress: String, runtimeDirectory: String, model: ClickModel, logger: Logger) throws(DesktopServiceUnavailable) {
        self.logger = logger
        roster = WindowRoster(model: model, naming: .decimal, logger: logger)
        scriptPath = runtimeDirectory + "/clickaway-kwin.js"
        bus = try .reaching("org.kde.KWin", named: "KWin", at: busAddress, description: "clickaway-kwin", milliseconds: Self.callLimitMs)
        do {
            try load()
        } catch {
            throw DesktopServiceUnavailable(isRunning: true, reason: "\(error)")
        }
    }

    /// Writes the script, loads it into KWin and starts it.
    private func load() throws(BusConnection.Failure) {
        guard let name = bus.uniqueName else { throw BusConnection.Failure("the session bus at \(bus.address) gave no name") }
        try bus.export(path: KWinScript.path)
        try write(KWinScript.text(busName: name, pid: getpid()), to: scriptPath)
        // One left by a daemon that did not stop cleanly goes first: KWin loads a name once.
        _ = try? scripting("unloadScript", [KWinScript.plugin])
        guard case .number(let id) = try scripting("loadScript", [scriptPath, KWinScript.plugin]), id >= 0 else {
            throw BusConnection.Failure("KWin did not load \(scriptPath) as script \"\(KWinScript.plugin)\"")
        }
        try run(id)
        helloTimer.deadline = .inMilliseconds(Self.helloLimitMs)
        logger.info("KWin script loaded", metadata: ["script": "\(scriptPath)", "id": "\(id)"])
    }

    private func scripting(_ member: String, _ arguments: [String]) throws(BusConnection.Failure) -> BusConnection.Value {
        try bus.call("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting", member, arguments, milliseconds: Self.callLimitMs)
    }

    /// Starts the loaded script: its object is `/Scripting/Script<id>` on KWin 6 and
    /// `/<id>` on 5.27 (5.21.90 to 5.27). KWin numbers a script by how many are loaded, so
    /// another's that stayed loaded may hold the path: then `Scripting.start` follows
    /// (`helloLate`), which starts every loaded script not running yet.
    private func run(_ id: Int64) throws(BusConnection.Failure) {
        do {
            _ = try bus.call("org.kde.KWin", "/Scripting/Script\(id)", "org.kde.kwin.Script", "run", milliseconds: Self.callLimitMs)
        } catch {
            _ = try bus.call("org.kde.KWin", "/\(id)", "org.kde.kwin.Script", "run", milliseconds: Self.callLimitMs)
        }
    }

    private func write(_ text: String, to path: String) throws(BusConnection.Failure) {
        // Readable by KWin, written by this user only: the directory is the user's own.
        let temporary = path + ".new"
        do {
            let file = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                               permissions: [.ownerReadWrite, .groupRead, .otherRead])
            try file.closeAfter { _ = try file.writeAll(text.utf8) }
            guard rename(temporary, path) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            throw BusConnection.Failure("cannot write the KWin script \(path): \(error)")
        }
    }

    /// Unloads the script and removes its file: nothing of the daemon stays in KWin.
    func stop() {
        if let poll { bus.answer(poll, "[]") }
        poll = nil
        do {
            _ = try scripting("unloadScript", [KWinScript.plugin])
        } catch {
            logger.warning("cannot unload the KWin script: \(error) (it unloads itself within \(KWinScript.watchdogMs / 1000) s)")
        }
        unlink(scriptPath)
    }

    func register(with loop: PollLoop) {
        loop.watch(bus.descriptor, reading: { true }, writing: { [unowned self] in bus.wantsToWrite }) { [unowned self] _ in read() }
        loop.schedule(pollRenewal) { [unowned self] _ in answerPoll() }
        loop.schedule(helloTimer) { [unowned self] _ in helloLate() }
        // What came during start-up is queued already.
        read()
    }

    var compositorName: String { "KWin" }
    var windowCount: Int { roster.count }

    /// No hello after `run`: `Scripting.start`, not waited for; none after that either:
    /// said, and window popups stay closed (rect popups work) until the script reports.
    private func helloLate() {
        guard !startAsked else {
            helloTimer.deadline = nil
            let seconds = 2 * Self.helloLimitMs / 1000
            logger.error("KWin loaded the script \(scriptPath) but it did not report within \(seconds) s: window popups stay closed until it does; KWin's log (journalctl --user -b | grep kwin_scripting) says why")
            return
        }
        startAsked = true
        logger.info("the KWin script did not report after run: asking KWin to start the scripts loaded")
        bus.send("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting", "start")
        helloTimer.deadline = .inMilliseconds(Self.helloLimitMs)
    }
    /// The script reports every move as it happens.
    var movesSilently: Bool { false }
    var status: CompositorWindowsStatus { .kwin(KWinStatus(script: scriptPath, version: version, windows: windowCount)) }

    func takeChange() -> Bool {
        if dirty { applyWindows() }
        defer { changed = false }
        return changed
    }

    func takeCloseRefusal() -> UInt32? { closeRefusals.isEmpty ? nil : closeRefusals.removeFirst() }

    // MARK: - From the script

    func read() {
        bus.process()
        for call in bus.takeCalls() {
            switch call.member {
            case "Event":
                handle(call.argument.flatMap { try? JSON.parse($0) } ?? .null)
                bus.answer(call, reply())
            case "Wait":
                // A newer Wait replaces an older one (a reloaded script's, one KWin gave up on).
                if let poll { bus.answer(poll, "[]") }
                poll = call
                pollRenewal.deadline = .inMilliseconds(KWinScript.pollRenewalMs)
                if !commands.isEmpty { answerPoll() }
            default:
                bus.refuse(call, name: "org.freedesktop.DBus.Error.UnknownMethod", "clickaway's KWin object has Event and Wait")
            }
        }
        if failure == nil, let broken = bus.failure { failure = broken }
    }

    private func handle(_ message: JSON) {
        switch message["event"]?.stringValue.flatMap(KWinScript.Event.init(rawValue:)) {
        case .hello:
            helloTimer.deadline = nil
            version = Int(message["version"]?.intValue ?? 0)
            known.removeAll()
            for description in message["windows"]?.arrayValue ?? [] { take(description) }
            logger.info("KWin script running", metadata: ["kwin": "\(version)", "windows": "\(known.count)"])
        case .window: take(message)
        case .gone:
            if let id = message["id"]?.intValue.flatMap(UInt32.init(exactly:)), known.removeValue(forKey: id) != nil { dirty = true }
        case .pong: ticketsAnswered = max(ticketsAnswered, Int(message["ticket"]?.intValue ?? 0))
        case .refused:
            if let id = message["id"]?.intValue.flatMap(UInt32.init(exactly:)) {
                logger.warning("KWin did not close window \(id): \(message["why"]?.stringValue ?? "no reason given")")
                closeRefusals.append(id)
            }
        case nil: logger.warning("the KWin script sent what clickaway does not know: \(message.text)")
        }
    }

    private func take(_ description: JSON) {
        guard let id = description["id"]?.intValue.flatMap(UInt32.init(exactly:)) else { return }
        func int(_ key: String) -> Int32 { Int32(clamping: description[key]?.intValue ?? 0) }
        let resourceClass = description["resourceClass"]?.stringValue ?? ""
        let isPopup = description["popup"]?.boolValue == true
        var properties = WindowMatch.Properties(
            windowClass: resourceClass, instance: description["resourceName"]?.stringValue,
            title: description["title"]?.stringValue, types: [],
            // An xdg_popup's class is its executable's name, not an app_id.
            appId: isPopup || resourceClass.isEmpty ? nil : resourceClass)
        properties.window = id
        properties.pid = int("pid")
        known[id] = Window(id: id, rect: Rect(x: int("x"), y: int("y"), width: int("width"), height: int("height")),
                           properties: properties, parent: UInt32(clamping: description["parent"]?.intValue ?? 0),
                           visible: description["visible"]?.boolValue != false, stacking: Int(description["stacking"]?.intValue ?? 0))
        dirty = true
    }

    /// Brings the roster up to date with the windows known: each visible window with a
    /// role, or in the family of a popup it is transient for (at any depth).
    private func applyWindows() {
        dirty = false
        let now = MonotonicClock.milliseconds()
        let shown = shownBottomToTop
        let present = Set(shown.map(\.id))
        for id in roster.entries.keys where !present.contains(id) { changed = roster.forget(id) || changed }
        let roles = Dictionary(uniqueKeysWithValues: shown.map { ($0.id, roster.model.roles(for: $0.properties)) })
        for window in shown {
            var own = roles[window.id]!
            let family = popupAncestor(of: window, roles)
            if family != nil { own.popup = nil }
            changed = roster.update(window.id, window: window.id, rect: window.rect, properties: window.properties,
                                    details: window.properties.pid, roles: own, family: family, tie: .transient, now: now) || changed
        }
        let order = shown.map(\.id).filter { roster[$0] != nil }
        changed = changed || order != roster.stacking
        roster.stacking = order
    }

    /// The windows on screen, bottom to top as KWin stacks them.
    private var shownBottomToTop: [Window] {
        known.values.filter { $0.visible && $0.rect.width > 0 && $0.rect.height > 0 }.sorted { ($0.stacking, $0.id) < ($1.stacking, $1.id) }
    }

    /// The nearest window above `window` in its chain of transient parents that is a popup
    /// of its own, shown.
    private func popupAncestor(of window: Window, _ roles: [UInt32: WindowRoles]) -> UInt32? {
        var parent = window.parent
        var seen: Set<UInt32> = [window.id]
        while parent != 0, seen.insert(parent).inserted, let above = known[parent] {
            if above.visible, let popup = roles[parent]?.popup, roster.model.popups[Int(popup)].family { return parent }
            parent = above.parent
        }
        return nil
    }

    // MARK: - To the script

    /// The commands queued, as the script reads them; sent once.
    private func reply() -> String {
        defer { commands.removeAll() }
        return JSON.array(commands.map { .string($0) }).text
    }

    private func send(_ command: String) {
        commands.append(command)
        answerPoll()
    }

    /// Answers the pending `Wait` with the commands (none: the time to ask again came).
    private func answerPoll() {
        guard let poll else { return }
        bus.answer(poll, reply())
        self.poll = nil
        pollRenewal.deadline = nil
    }

    /// Asks the script to close the window as its close button would; for `kill`, ends its process.
    func close(_ window: UInt32, kill force: Bool) {
        if force, let pid = known[window]?.properties.pid, pid > 0, pid != getpid() {
            if Glibc.kill(pid, SIGKILL) != 0 {
                logger.warning("cannot kill the process of window \(window) (pid \(pid)): \(String(cString: strerror(errno)))")
            }
            return
        }
        send(KWinScript.close(window))
    }

    /// Asks the script for a pong: once it comes, every window event sent before has.
    func requestFreshTree() -> Int {
        ticketsSent += 1
        send(KWinScript.ping(ticketsSent))
        return ticketsSent
    }

    func hasAnswered(_ ticket: Int) -> Bool { ticketsAnswered >= ticket || failure != nil }

    func popupWindow(for window: UInt32) -> Result<UInt32, Refusal> {
        if let known = known[window], known.visible { return .success(window) }
        return .failure(Refusal("no visible window \(window) on KWin (`clickawayctl pick` shows a window's number)"))
    }

    func view(at x: Int32, _ y: Int32) -> PickReply? {
        guard let window = shownBottomToTop.last(where: { $0.rect.contains(x: x, y: y) }) else { return nil }
        let p = window.properties
        return PickReply(window: "\(window.id)", rect: window.rect, appId: p.appId, title: p.title, windowClass: p.windowClass,
                         instance: p.instance, pid: p.pid)
    }

    /// Events come without asking.
    func requestTree() {}

    /// A new configuration: the windows known are matched again at once (a runtime popup
    /// registered by window is open when the swap is done, as on sway).
    func replaceModel(_ model: ClickModel, readingTree: Bool) {
        roster.rematch(model)
        changed = true
        applyWindows()
    }
}
