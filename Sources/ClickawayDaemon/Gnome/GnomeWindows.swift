internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayJSON
internal import ClickawaySystem
internal import Logging

/// Windows on GNOME Shell, as clickaway's extension reports them (`GnomeProtocol.Event.window`):
/// every `Meta.Window` once it is shown, its frame, class, title, type, transient parent and
/// process, then each change, and when it goes. A window's id is the extension's number for
/// it (from 1, in the order it saw them).
///
/// Families are by transient parent at any depth: a dialog, and a GTK dropdown or menu (an
/// xdg_popup, which mutter makes a DROPDOWN_MENU or POPUP_MENU window transient for its
/// toplevel, below the extension's layer): clicks on a popup's own dropdown are inside it.
/// Class and instance are mutter's wm_class and its instance (a Wayland client's app_id, an
/// X client's WM_CLASS); `app_id` matches a Wayland client's app_id (or a Flatpak's id).
final class GnomeWindows: RosterWindowSource {
    private struct Window {
        var rect: Rect
        var properties: WindowMatch.Properties
        var parent: UInt32
        var visible: Bool
    }

    let roster: WindowRoster<Int32>
    private var known: [UInt32: Window] = [:]
    /// Bottom to top, as the extension last said.
    private var stackingOrder: [UInt32] = []
    private var dirty = false
    private var changed = false

    init(model: ClickModel, logger: Logger) {
        roster = WindowRoster(model: model, naming: .decimal, logger: logger)
    }

    var count: Int { roster.count }

    /// The windows of a new connection (a hello), replacing all.
    func reset(_ descriptions: [JSON], stacking: [JSON]) {
        known.removeAll()
        for description in descriptions { take(description) }
        setStacking(stacking)
        dirty = true
    }

    /// None: the Shell or the extension went.
    func clear() {
        known.removeAll()
        stackingOrder.removeAll()
        dirty = true
    }

    func take(_ description: JSON) {
        guard let id = description["id"]?.intValue.flatMap(UInt32.init(exactly:)) else { return }
        func int(_ key: String) -> Int32 { GnomeDisplay.coordinate(description[key]?.intValue ?? 0) }
        func text(_ key: String) -> String? { description[key]?.stringValue }
        var properties = WindowMatch.Properties(windowClass: text("wmClass"), instance: text("instance"), title: text("title"),
                                                types: text("type").map { [$0] } ?? [], appId: text("appId"))
        properties.window = id
        properties.pid = Int32(clamping: description["pid"]?.intValue ?? 0)
        properties.transientFor = UInt32(clamping: description["parent"]?.intValue ?? 0)
        known[id] = Window(rect: Rect(x: int("x"), y: int("y"), width: int("width"), height: int("height")), properties: properties,
                           parent: properties.transientFor, visible: description["visible"]?.boolValue != false)
        dirty = true
    }

    func forget(_ id: UInt32) {
        if known.removeValue(forKey: id) != nil { dirty = true }
    }

    func setStacking(_ ids: [JSON]) {
        stackingOrder = ids.compactMap { $0.intValue.flatMap(UInt32.init(exactly:)) }
        dirty = true
    }

    func pid(of window: UInt32) -> Int32? { known[window]?.properties.pid }

    /// Whether `takeChange` has something to look at.
    var hasChange: Bool { dirty || changed }

    /// Whether the windows the engine sees changed since the last call.
    func takeChange() -> Bool {
        if dirty { applyWindows() }
        defer { changed = false }
        return changed
    }

    func replaceModel(_ model: ClickModel) {
        roster.rematch(model)
        changed = true
        applyWindows()
    }

    /// Brings the roster up to date: each visible window with a role, or in the family of a
    /// popup it is transient for (at any depth).
    private func applyWindows() {
        dirty = false
        let now = MonotonicClock.milliseconds()
        let shown = shownBottomToTop
        let present = Set(shown.map(\.id))
        for id in roster.entries.keys where !present.contains(id) { changed = roster.forget(id) || changed }
        let roles = Dictionary(uniqueKeysWithValues: shown.map { ($0.id, roster.model.roles(for: $0.window.properties)) })
        for (id, window) in shown {
            var own = roles[id]!
            let family = popupAncestor(of: id, roles)
            if family != nil { own.popup = nil }
            changed = roster.update(id, window: id, rect: window.rect, properties: window.properties, details: window.properties.pid,
                                    roles: own, family: family, tie: .transient, now: now) || changed
        }
        let order = shown.map(\.id).filter { roster[$0] != nil }
        changed = changed || order != roster.stacking
        roster.stacking = order
    }

    /// The windows on screen, bottom to top as mutter stacks them (those the extension has
    /// not placed yet last, by id).
    private var shownBottomToTop: [(id: UInt32, window: Window)] {
        let place = Dictionary(stackingOrder.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { a, _ in a })
        return known.filter { $0.value.visible && $0.value.rect.width > 0 && $0.value.rect.height > 0 }
            .map { (id: $0.key, window: $0.value) }
            .sorted { (place[$0.id] ?? Int.max, $0.id) < (place[$1.id] ?? Int.max, $1.id) }
    }

    /// The nearest window above `id` in its chain of transient parents that is a shown popup
    /// of its own.
    private func popupAncestor(of id: UInt32, _ roles: [UInt32: WindowRoles]) -> UInt32? {
        var parent = known[id]?.parent ?? 0
        var seen: Set<UInt32> = [id]
        while parent != 0, seen.insert(parent).inserted, let above = known[parent] {
            if above.visible, let popup = roles[parent]?.popup, roster.model.popups[Int(popup)].family { return parent }
            parent = above.parent
        }
        return nil
    }

    func popupWindow(for window: UInt32) -> Result<UInt32, Refusal> {
        if let known = known[window], known.visible { return .success(window) }
        return .failure(Refusal("no visible window \(window) on GNOME Shell (`clickawayctl status` lists the windows with a role)"))
    }

    /// The window under a point, as last reported.
    func view(at x: Int32, _ y: Int32) -> PickReply? {
        guard let (id, window) = shownBottomToTop.last(where: { $0.window.rect.contains(x: x, y: y) }) else { return nil }
        let p = window.properties
        return PickReply(window: "\(id)", rect: window.rect, appId: p.appId, title: p.title, windowClass: p.windowClass,
                         instance: p.instance, pid: p.pid)
    }
}
