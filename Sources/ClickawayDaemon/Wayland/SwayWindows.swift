internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON
internal import ClickawaySystem
internal import ClickawayWayland
internal import Glibc
internal import Logging
internal import SystemPackage

/// Windows on sway, from its IPC: the whole tree (`get_tree`) again after every window or
/// workspace event. A view's id is its container id; `[con_id=N] kill` closes it.
///
/// sway 1.7 sends no event when a floating window is moved or resized (`move absolute
/// position`, `move position center`, `resize set`, a drag), so the daemon also reads the
/// tree before deciding a press on the overlay (`requestFreshTree()`), and asks for it now
/// and then while geometry from windows is in use (`requestTree()`, see `WaylandDisplay`).
///
/// Two connections: one subscribed to events, one for requests, whose replies come in the
/// order asked. Nothing here blocks but start-up. The views with a role are
/// in `roster`, keyed by container id, with their pid.
final class SwayWindows: RosterWindowSource, CompositorWindows {

    /// What a reply on the request connection answers.
    private enum Awaited {
        case tree
        case close(UInt32)
    }

    let socketPath: String
    private let events: SwayIPC
    private let requests: SwayIPC
    private var awaiting: [Awaited] = []
    /// The tree last read: a new model places its views at once, before a fresh one comes.
    private var lastTree: JSON = .null
    /// Replies handled on the request connection: numbers them for `hasAnswered`.
    private var repliesHandled = 0
    /// An event came while a tree was on its way: that tree may be older than the event.
    private var treeStale = false
    private let logger: Logger
    /// Visible views that play a role; stacked bottom to top: per workspace, tiled then floating.
    let roster: WindowRoster<Int32>
    /// Every visible view in the last tree, with or without a role: what `--window` may name.
    private(set) var views: Set<UInt32> = []
    /// The same views in tree order, with their places: what `pick` finds a point in.
    private var placed: [(id: UInt32, rect: Rect, properties: WindowMatch.Properties, pid: Int32)] = []
    /// The views changed (windows, their roles, places or stacking) since `takeChange()`.
    private var changed = false
    /// Windows sway refused to close (`close`), not told yet.
    private var closeRefusals: [UInt32] = []
    var hasCloseRefusals: Bool { !closeRefusals.isEmpty }
    private(set) var failure: String?

    init(socketPath: String, model: ClickModel, logger: Logger) throws(SwayIPC.Failure) {
        self.socketPath = socketPath
        self.logger = logger
        roster = WindowRoster(model: model, naming: .decimal, logger: logger)
        events = try SwayIPC(path: socketPath)
        let subscribed = try events.call(.subscribe, #"["window","workspace"]"#)
        guard subscribed["success"]?.boolValue == true else {
            throw SwayIPC.Failure(description: "sway refused to send window events at \(socketPath): \(subscribed.text)")
        }
        requests = try SwayIPC(path: socketPath)
        _ = apply(tree: try requests.call(.getTree), now: MonotonicClock.milliseconds())
    }

    var compositorName: String { "sway" }
    var windowCount: Int { roster.count }
    /// sway 1.7 sends no event when a floating window is moved or resized.
    var movesSilently: Bool { true }
    var status: CompositorWindowsStatus { .sway(SwayStatus(socket: socketPath, windows: windowCount)) }

    func register(with loop: PollLoop) {
        for descriptor in [events.descriptor, requests.descriptor] { loop.watch(descriptor) { [unowned self] _ in read() } }
    }

    /// sway keeps nothing of the daemon's.
    func stop() {}

    /// Whether the views changed since the last call.
    func takeChange() -> Bool {
        defer { changed = false }
        return changed
    }

    /// A window sway refused to close, oldest first.
    func takeCloseRefusal() -> UInt32? { closeRefusals.isEmpty ? nil : closeRefusals.removeFirst() }

    /// Reads both connections: events ask for a new tree, replies are applied.
    func read() {
        guard failure == nil else { return }
        do {
            let news = try events.read().filter(\.isEvent)
            if !news.isEmpty {
                logger.debug("sway events", metadata: ["changes": "\(news.map { $0.payload["change"]?.stringValue ?? "?" })"])
                requestTree()
            }
            for reply in try requests.read() { handle(reply.payload) }
            try requests.flush()
        } catch {
            failure = "\(error)"
        }
    }

    /// Asks sway to close the view, as its close button would (xdg_toplevel.close), or
    /// for `kill`, ends its process.
    func close(_ window: UInt32, kill force: Bool) {
        if force, let pid = roster[window]?.details, pid > 0, pid != getpid() {
            if Glibc.kill(pid, SIGKILL) != 0 {
                logger.warning("cannot kill the process of window \(window) (pid \(pid)): \(String(cString: strerror(errno)))")
            }
            return
        }
        requests.send(.runCommand, "[con_id=\(window)] kill")
        awaiting.append(.close(window))
        do { try requests.flush() } catch { failure = "\(error)" }
    }

    /// Asks for a tree now, even if one is on its way (that one may be older than the
    /// caller's question), without waiting: `hasAnswered` says when its reply is applied.
    func requestFreshTree() -> Int {
        guard failure == nil else { return repliesHandled }
        requests.send(.getTree)
        awaiting.append(.tree)
        do { try requests.flush() } catch { failure = "\(error)" }
        return repliesHandled + awaiting.count
    }

    /// Whether the reply `requestFreshTree` numbered `ticket` has been applied (or never
    /// will be: the connection broke).
    func hasAnswered(_ ticket: Int) -> Bool { repliesHandled >= ticket || failure != nil }

    /// Asks for the tree without waiting: the reply is applied when it comes (`read()`).
    func requestTree() {
        guard failure == nil else { return }
        if awaiting.contains(where: { if case .tree = $0 { true } else { false } }) {
            treeStale = true
            return
        }
        requests.send(.getTree)
        awaiting.append(.tree)
        do { try requests.flush() } catch { failure = "\(error)" }
    }

    private func handle(_ reply: JSON) {
        guard !awaiting.isEmpty else { return }
        repliesHandled += 1
        switch awaiting.removeFirst() {
        case .tree:
            let changed = apply(tree: reply, now: MonotonicClock.milliseconds())
            if treeStale {
                treeStale = false
                requestTree()
            }
            if changed { self.changed = true }
        case .close(let window):
            let refusal = reply.arrayValue?.first { $0["success"]?.boolValue != true }
            if let refusal {
                logger.warning("sway did not close window \(window): \(refusal["error"]?.stringValue ?? refusal.text)")
                closeRefusals.append(window)
            }
        }
    }

    // MARK: - The tree

    /// Takes the views of `tree`; returns whether what the engine sees changed.
    private func apply(tree: JSON, now: Int64) -> Bool {
        lastTree = tree
        var found: [(id: UInt32, rect: Rect, properties: WindowMatch.Properties, pid: Int32)] = []
        collect(tree, into: &found)
        let present = Set(found.map(\.id))
        views = present
        placed = found
        var changed = false
        for id in roster.entries.keys where !present.contains(id) { changed = roster.forget(id) || changed }
        // A popup's family: the views of its process with its app_id (or X class) opened
        // after it. sway's tree shows no parent link for a dialog (GTK's set_parent is not in
        // it), so that is what ties yad's file dialog to yad's form; the app_id keeps a
        // terminal server's other windows (footclient's) out, and "after it" (sway numbers its
        // containers as it makes them) the windows of the process that were there before the
        // popup opened. The first such view opening a popup is it.
        let matched = found.map { roster.model.roles(for: $0.properties) }
        var owners: [Family: (id: UInt32, popup: Int32)] = [:]
        for (view, roles) in zip(found, matched) where view.pid > 0 && view.id < owners[Family(view)]?.id ?? .max {
            if let popup = roles.popup, roster.model.popups[Int(popup)].family {
                owners[Family(view)] = (view.id, popup)
            }
        }
        for (view, matchedRoles) in zip(found, matched) {
            if let before = roster[view.id], before.rect != view.rect, before.roles.popup != nil {
                logger.debug("popup window moved", metadata: ["window": "\(view.id)", "from": "\(before.rect)", "to": "\(view.rect)"])
            }
            var roles = matchedRoles
            var family: UInt32?
            if let owner = owners[Family(view)], owner.id < view.id, roles.popup == nil || roles.popup == owner.popup {
                roles.popup = nil
                family = owner.id
            }
            changed = roster.update(view.id, window: view.id, rect: view.rect, properties: view.properties, details: view.pid,
                                    roles: roles, family: family, tie: .sameProcess, now: now) || changed
        }
        let order = found.map(\.id).filter { roster[$0] != nil }
        changed = changed || order != roster.stacking
        roster.stacking = order
        return changed
    }

    /// The view under a point, as the last tree has them: of the visible views that contain
    /// it, the last in tree order (floating views come after tiled ones, in their stacking
    /// order); nil on no view (the desktop, a bar).
    func popupWindow(for window: UInt32) -> Result<UInt32, Refusal> {
        if views.contains(window) { return .success(window) }
        return .failure(Refusal("no visible window with con_id \(window) on sway (`swaymsg -t get_tree` shows the ids)"))
    }

    func view(at x: Int32, _ y: Int32) -> PickReply? {
        guard let view = placed.last(where: { $0.rect.contains(x: x, y: y) }) else { return nil }
        let p = view.properties
        return PickReply(window: "\(view.id)", rect: view.rect, appId: p.appId, title: p.title, windowClass: p.windowClass,
                         instance: p.instance, pid: view.pid)
    }

    /// What the views of one popup's family share: the process and the app_id (X class).
    private struct Family: Hashable {
        var pid: Int32
        var app: String?
        init(_ view: (id: UInt32, rect: Rect, properties: WindowMatch.Properties, pid: Int32)) {
            pid = view.pid
            app = view.properties.appId ?? view.properties.windowClass
        }
    }

    /// Every visible view, in tree order. `parentLayout`: the layout of the node's parent.
    private func collect(_ node: JSON, parentLayout: String? = nil,
                         into found: inout [(id: UInt32, rect: Rect, properties: WindowMatch.Properties, pid: Int32)]) {
        if node["shell"] != nil, node["visible"]?.boolValue == true,
           let id = node["id"]?.intValue.flatMap(UInt32.init(exactly:)),
           let rect = Self.decoratedRect(node, parentLayout: parentLayout) {
            let xwayland = node["window_properties"]
            var properties = WindowMatch.Properties(
                windowClass: xwayland?["class"]?.stringValue, instance: xwayland?["instance"]?.stringValue,
                title: node["name"]?.stringValue, types: (xwayland?["window_type"]?.stringValue).map { [$0] } ?? [],
                appId: node["app_id"]?.stringValue)
            let pid = Int32(clamping: node["pid"]?.intValue ?? 0)
            properties.window = id
            properties.pid = pid
            found.append((id, rect, properties, pid))
        }
        let layout = node["layout"]?.stringValue
        for child in (node["nodes"]?.arrayValue ?? []) + (node["floating_nodes"]?.arrayValue ?? []) {
            collect(child, parentLayout: layout, into: &found)
        }
    }

    /// A view's whole rectangle, its title bar and borders included, as a window's frame is
    /// on X11. sway's `rect` is the container less its title bar (`ipc_json_describe_node`
    /// in sway/ipc-json.c moves the box's top down by the title bar's height) with the
    /// borders; `deco_rect` is the title bar, whose x and y count from the workspace (a
    /// floating view) or the parent, so only its height is used: the title bar is right above
    /// `rect`. In a tabbed or stacked container a tiled view's title bar is the container's
    /// tab row, shared with its siblings: that stays out. With `border none` or `pixel`,
    /// or fullscreen, `deco_rect` is empty and `rect` is the whole view.
    static func decoratedRect(_ node: JSON, parentLayout: String?) -> Rect? {
        guard var rect = rect(node["rect"]) else { return nil }
        let tabs = parentLayout == "tabbed" || parentLayout == "stacked"
        if node["type"]?.stringValue == "floating_con" || !tabs,
           let title = node["deco_rect"]?["height"]?.intValue, title > 0, node["deco_rect"]?["width"]?.intValue ?? 0 > 0 {
            let height = Int32(clamping: title)
            rect = Rect(x: rect.x, y: rect.y - height, width: rect.width, height: rect.height + height)
        }
        return rect
    }

    private static func rect(_ json: JSON?) -> Rect? {
        guard let json, let x = json["x"]?.intValue, let y = json["y"]?.intValue,
              let w = json["width"]?.intValue, let h = json["height"]?.intValue, w > 0, h > 0 else { return nil }
        return Rect(x: Int32(clamping: x), y: Int32(clamping: y), width: Int32(clamping: w), height: Int32(clamping: h))
    }

    /// A new configuration: the views known are matched again, then (unless the new model
    /// matches no view the old one did not) every view of the last tree is placed anew, and
    /// the tree is asked for again (a view may have moved without an event).
    func replaceModel(_ model: ClickModel, readingTree: Bool) {
        // Matched again first: a window that loses its role is forgotten under the model its
        // popup index is of.
        roster.rematch(model)
        changed = true
        guard readingTree else { return }
        _ = apply(tree: lastTree, now: MonotonicClock.milliseconds())
        requestTree()
    }
}
