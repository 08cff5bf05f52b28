internal import ClickawayControl
internal import ClickawayCore
internal import ClickawaySystem

/// The popups scripts registered at run time (`add`, `wait`): each a `PopupSpec` that comes
/// after the configured popups in the daemon's model, where it is, and who hears how it went
/// away. A reload keeps them; being dismissed, closed, or losing its window removes one.
struct RuntimePopups {
    /// Where a runtime popup is.
    enum Place: Equatable, CustomStringConvertible {
        /// A screen rectangle: open from the start, like a configured `rect` popup opened by name.
        case rect
        /// A window, open while it is mapped.
        case window(UInt32)
        /// Waiting for the first window of a process until the deadline.
        case pid(Int32, deadline: Deadline, timeoutMs: Int64)

        var description: String {
            switch self {
            case .rect: "rect"
            case .window(let window): "window \(window)"
            case .pid(let pid, _, let timeoutMs): "pid \(pid), waited for \(timeoutMs) ms"
            }
        }
    }

    struct Entry {
        var spec: PopupSpec
        var place: Place
        /// The `wait` connection the popup lives as long as, told how it went away.
        var owner: ControlServer.Connection?
        /// The `add` or `wait` not answered yet: answered once the model has the popup, and
        /// for a process once its window is there.
        var unanswered: ControlServer.Request?

        var name: String { spec.name }
    }

    /// Runtime popups at once, waiting ones included: each costs a model rebuild to add.
    static let limit = 64

    private(set) var entries: [Entry] = []
    private var serial = 0

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    var specs: [PopupSpec] { entries.map(\.spec) }

    func contains(_ name: String) -> Bool { entries.contains { $0.name == name } }

    func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// The runtime popup that is `window`, if any.
    func name(ofWindow window: UInt32) -> String? { entries.first { $0.place == .window(window) }?.name }

    /// `runtime-N`, the first N that is neither a runtime popup's name nor `taken`.
    mutating func freshName(taken: (String) -> Bool) -> String {
        while true {
            serial += 1
            let name = "runtime-\(serial)"
            if !contains(name) && !taken(name) { return name }
        }
    }

    mutating func append(_ entry: Entry) { entries.append(entry) }

    /// The request registering `name` is answered now: returns it, once.
    mutating func answered(_ name: String) -> ControlServer.Request? {
        guard let i = entries.firstIndex(where: { $0.name == name }) else { return nil }
        defer { entries[i].unanswered = nil }
        return entries[i].unanswered
    }

    /// The process's window is there: the popup is that window from now on.
    mutating func resolve(_ name: String, to window: UInt32) -> Entry? {
        guard let i = entries.firstIndex(where: { $0.name == name }) else { return nil }
        entries[i].place = .window(window)
        entries[i].spec.source = .window(WindowMatch(window: window))
        defer { entries[i].unanswered = nil }
        return entries[i]
    }

    /// Removes the popups named and the runtime popups nested in them, at any depth; returns
    /// them, each with whether it was named (false: its parent went).
    mutating func remove(_ names: Set<String>) -> [(entry: Entry, named: Bool)] {
        var gone = names
        var removed: [(Entry, Bool)] = []
        var changed = true
        while changed {
            changed = false
            for entry in entries where !gone.contains(entry.name) && entry.spec.parent.map(gone.contains) == true {
                gone.insert(entry.name)
                changed = true
            }
        }
        for entry in entries where gone.contains(entry.name) { removed.append((entry, names.contains(entry.name))) }
        entries.removeAll { gone.contains($0.name) }
        return removed
    }

    /// Keeps the popups that still fit beside `configured` (a new configuration). Returns the
    /// popups removed.
    mutating func keep(besides configured: ClickModel) -> [Entry] {
        let (kept, dropped) = Self.fitting(entries, spec: \.spec, besides: configured)
        entries = kept
        return dropped
    }

    /// The rule a reload keeps runtime popups by, in their order: a configured popup of the
    /// same name, or a parent or redirect target gone (a dropped one included), drops one.
    /// The loop applies it to the popups registered (`keep(besides:)`), the loader's thread
    /// to those it builds the reload's model with (`ConfigReloader.prepare`).
    static func fitting<Item>(_ items: [Item], spec: (Item) -> PopupSpec, besides configured: ClickModel)
        -> (kept: [Item], dropped: [Item]) {
        var kept: [Item] = []
        var keptSpecs: [PopupSpec] = []
        var dropped: [Item] = []
        for item in items {
            let candidate = spec(item)
            if ModelValidator.problems(adding: keptSpecs + [candidate], to: configured, limit: 1).isEmpty {
                kept.append(item)
                keptSpecs.append(candidate)
            } else {
                dropped.append(item)
            }
        }
        return (kept, dropped)
    }

    /// Removes every runtime popup; returns them.
    mutating func removeAll() -> [Entry] {
        defer { entries = [] }
        return entries
    }

    /// The popups waiting for a window whose time ran out, removed.
    mutating func expire(now: Int64) -> [Entry] {
        let expired = entries.filter { if case .pid(_, let deadline, _) = $0.place { deadline.hasPassed(now: now) } else { false } }
        entries.removeAll { entry in expired.contains { $0.name == entry.name } }
        return expired
    }

    /// When the next wait for a window runs out.
    var nextDeadline: Deadline? {
        entries.lazy.compactMap { if case .pid(_, let deadline, _) = $0.place { deadline } else { nil } }.min()
    }

    /// The popups owned by `connection` (`wait`), and those still waiting for a window that
    /// it asked for (`add --pid`), now that it closed: nobody is told when they open.
    func owned(by connection: ControlServer.Connection) -> Set<String> {
        Set(entries.filter { $0.owner == connection || $0.unanswered?.connection == connection }.map(\.name))
    }
}
