import ClickawayCore
import ClickawayJSON
import ClickawaySystem
import ClickawayWayland
import Glibc
import Logging
import SystemPackage

/// Windows on sway, from its IPC: the whole tree (`get_tree`) again after every window or
/// workspace event. A view's id is its container id; `[con_id=N] kill` closes it.
///
/// sway 1.7 sends no event when a floating window is moved or resized (`move absolute
/// position`, `move position center`, `resize set`, a drag), so the daemon also reads the
/// tree before deciding a click on the overlay (`sync()`), and asks for it now and then
/// while geometry from windows is in use (`requestTree()`, see `WaylandDaemon`).
///
/// Two connections: one subscribed to events, one for requests, whose replies come in the
/// order asked. Nothing here blocks except start-up and `sync()`.
final class SwayWindows: WindowSource {
    struct View: Equatable {
        var rect: Rect
        var properties: WindowMatch.Properties
        var pid: Int32
        var roles: WindowRoles
        var openedAt: Int64
    }

    /// What a reply on the request connection answers.
    private enum Awaited {
        case tree
        case close(UInt32)
    }

    let socketPath: String
    private let events: SwayIPC
    private let requests: SwayIPC
    private var awaiting: [Awaited] = []
    /// An event came while a tree was on its way: that tree may be older than the event.
    private var treeStale = false
    private var model: ClickModel
    private let logger: Logger
    /// Visible views that play a role, by container id.
    private var views: [UInt32: View] = [:]
    /// Their ids, bottom to top: per workspace, tiled then floating.
    private var stacking: [UInt32] = []
    var closing = ClosingWindows()
    /// Called after the views changed (windows, their roles, places or stacking), outside
    /// of `sync()`.
    var onChange: (() -> Void)?
    private(set) var failure: String?

    init(socketPath: String, model: ClickModel, logger: Logger) throws(SwayIPC.Failure) {
        self.socketPath = socketPath
        self.model = model
        self.logger = logger
        events = try SwayIPC(path: socketPath)
        let subscribed = try events.call(.subscribe, #"["window","workspace"]"#)
        guard subscribed["success"]?.boolValue == true else {
            throw SwayIPC.Failure(description: "sway refused to send window events at \(socketPath): \(subscribed.text)")
        }
        requests = try SwayIPC(path: socketPath)
        _ = apply(tree: try requests.call(.getTree), now: MonotonicClock.milliseconds())
    }

    var descriptors: [FileDescriptor] { [events.descriptor, requests.descriptor] }
    var windowCount: Int { views.count }

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

    /// Waits (bounded) for the replies on their way, then reads a fresh tree: the caller
    /// sees every window sway had mapped before the request, where it is now. Returns
    /// whether the views changed.
    @discardableResult
    func sync() -> Bool {
        guard failure == nil else { return false }
        do {
            let deadline = Deadline.inMilliseconds(2000)
            while !awaiting.isEmpty {
                for reply in try requests.read() { handle(reply.payload) }
                guard !awaiting.isEmpty else { break }
                // After the replies: one of them may have asked for another tree.
                try requests.flush()
                guard !deadline.hasPassed() else { throw SwayIPC.Failure(description: "sway's IPC at \(socketPath) did not answer within 2000 ms") }
                _ = try? requests.descriptor.wait(until: deadline)
            }
            _ = try events.read()
            treeStale = false
            return apply(tree: try requests.call(.getTree), now: MonotonicClock.milliseconds())
        } catch {
            failure = "\(error)"
            return false
        }
    }

    /// Asks sway to close the view, as its close button would (xdg_toplevel.close), or
    /// for `kill`, ends its process.
    func close(_ window: UInt32, kill force: Bool) {
        if force, let pid = views[window]?.pid, pid > 0, pid != getpid() {
            if Glibc.kill(pid, SIGKILL) != 0 {
                logger.warning("cannot kill the process of window \(window) (pid \(pid)): \(String(cString: strerror(errno)))")
            }
            return
        }
        requests.send(.runCommand, "[con_id=\(window)] kill")
        awaiting.append(.close(window))
        do { try requests.flush() } catch { failure = "\(error)" }
    }

    /// Asks for a tree and waits at most `timeoutMs` for it, handling the replies before it
    /// as they come (`onChange` is called if the views changed). Returns whether it came in
    /// time; if not, it is applied when it comes, and nothing is broken: sway may be slow.
    @discardableResult
    func readTreeNow(within timeoutMs: Int64) -> Bool {
        guard failure == nil else { return false }
        // A new request even if one is on its way: that one may be older than the caller.
        requests.send(.getTree)
        awaiting.append(.tree)
        var before = awaiting.count  // replies up to and including this one
        do {
            let deadline = Deadline.inMilliseconds(timeoutMs)
            while true {
                let writing = try requests.flush()
                for reply in try requests.read() {
                    handle(reply.payload)
                    before -= 1
                }
                if before <= 0 { return true }
                guard !deadline.hasPassed() else { return false }
                _ = try? requests.descriptor.wait(for: writing ? [.readable, .writable] : .readable, until: deadline)
            }
        } catch {
            failure = "\(error)"
            return false
        }
    }

    /// Asks for the tree without waiting: the reply is applied when it comes, and
    /// `onChange` called if anything changed.
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
        switch awaiting.removeFirst() {
        case .tree:
            let changed = apply(tree: reply, now: MonotonicClock.milliseconds())
            if treeStale {
                treeStale = false
                requestTree()
            }
            if changed { onChange?() }
        case .close(let window):
            let refusal = reply.arrayValue?.first { $0["success"]?.boolValue != true }
            if let refusal {
                logger.warning("sway did not close window \(window): \(refusal["error"]?.stringValue ?? refusal.text)")
                if closing.cancel(window) { onChange?() }
            }
        }
    }

    // MARK: - The tree

    /// Takes the views of `tree`; returns whether they differ from the ones before.
    private func apply(tree: JSON, now: Int64) -> Bool {
        var found: [UInt32: View] = [:]
        var order: [UInt32] = []
        collect(tree, into: &found, order: &order, now: now)
        for (id, view) in views where found[id] == nil {
            closing.cancel(id)
            if let p = view.roles.popup { logger.info("popup closed", metadata: ["popup": "\(model.popups[Int(p)].name)", "window": "\(id)"]) }
        }
        for (id, view) in found {
            if let before = views[id], before.rect != view.rect, view.roles.popup != nil {
                logger.debug("popup window moved", metadata: ["window": "\(id)", "from": "\(before.rect)", "to": "\(view.rect)"])
            }
        }
        let changed = found != views || order != stacking
        views = found
        stacking = order
        return changed
    }

    private func collect(_ node: JSON, into found: inout [UInt32: View], order: inout [UInt32], now: Int64) {
        if node["shell"] != nil, node["visible"]?.boolValue == true,
           let id = node["id"]?.intValue.flatMap(UInt32.init(exactly:)), let rect = Self.rect(node["rect"]) {
            let xwayland = node["window_properties"]
            let properties = WindowMatch.Properties(
                windowClass: xwayland?["class"]?.stringValue, instance: xwayland?["instance"]?.stringValue,
                title: node["name"]?.stringValue, types: (xwayland?["window_type"]?.stringValue).map { [$0] } ?? [],
                appId: node["app_id"]?.stringValue)
            let roles = model.roles(for: properties)
            if !roles.isNone {
                let before = views[id]
                let still = before.flatMap { $0.roles.popup == roles.popup ? $0 : nil }
                if still == nil { closing.cancel(id) }
                found[id] = View(rect: rect, properties: properties, pid: Int32(clamping: node["pid"]?.intValue ?? 0),
                                 roles: roles, openedAt: still?.openedAt ?? now)
                order.append(id)
                if let p = roles.popup, still == nil {
                    logger.info("popup opened", metadata: ["popup": "\(model.popups[Int(p)].name)", "window": "\(id)", "rect": "\(rect)"])
                }
            }
        }
        for child in (node["nodes"]?.arrayValue ?? []) + (node["floating_nodes"]?.arrayValue ?? []) {
            collect(child, into: &found, order: &order, now: now)
        }
    }

    private static func rect(_ json: JSON?) -> Rect? {
        guard let json, let x = json["x"]?.intValue, let y = json["y"]?.intValue,
              let w = json["width"]?.intValue, let h = json["height"]?.intValue, w > 0, h > 0 else { return nil }
        return Rect(x: Int32(clamping: x), y: Int32(clamping: y), width: Int32(clamping: w), height: Int32(clamping: h))
    }

    // MARK: - WindowSource

    func openInstances() -> [PopupInstance] {
        stacking.compactMap { id in
            guard let v = views[id], let popup = v.roles.popup, !closing.contains(id) else { return nil }
            return PopupInstance(popup: popup, rect: v.rect, openedAt: v.openedAt, id: UInt64(id))
        }
    }

    func windowAreas() -> [Area] {
        var areas: [Area] = []
        for v in views.values {
            for p in v.roles.anchors { areas.append(Area(kind: .anchor(popup: p), rect: v.rect)) }
            if v.roles.excluded { areas.append(Area(kind: .exclusion, rect: v.rect)) }
        }
        return areas
    }

    func isPresent(_ window: UInt32) -> Bool { views[window] != nil }

    func replaceModel(_ model: ClickModel, now: Int64) {
        self.model = model
        sync()
    }

    func describe(_ window: UInt32) -> String { "\(window)" }
}
