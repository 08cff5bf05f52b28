/// A validated configuration, compiled for hit-testing. Immutable: a reload builds a new one.
public final class ClickModel: Sendable {
    public let settings: Settings
    public let popups: [PopupSpec]
    public let exclusions: [ExclusionSpec]
    let regions: RegionTable
    /// Index of each popup's parent, or -1: what the decision loop reads.
    let parentOf: [Int32]
    /// What the press path needs of each popup, as plain values: no strings or arrays to retain.
    let traits: [PopupTraits]
    private let indexByName: [String: Int32]
    /// The window matches by the values they need: what `roles(for:)` looks through.
    private let matchIndex: WindowMatchIndex
    /// Every window match in the config: popups, anchors and exclusions, in order. Made with
    /// the model (on the loader's thread), so that a reload compares two lists, not builds them.
    public let windowMatches: [WindowMatch]
    /// Each of `windowMatches` hashed: lists of 70,000 matches compared as numbers first.
    public let windowMatchHashes: [Int]
    /// Whether a window match names a title (exact or glob): X11 then follows titles. Found
    /// with the model (on the loader's thread), not at each window or reload on the loop.
    public let matchesTitles: Bool
    /// The popups, anchors and exclusions that match by app_id, which only Wayland windows have.
    public let appIdMatchUsers: [String]
    /// The `rect` anchors (popups' first) and exclusions, each with its output: what the engine
    /// places on the screen, found here rather than in every popup at each swap on the loop.
    public let rectAreas: [RectArea]

    public struct RectArea: Sendable {
        public let kind: Area.Kind
        public let rect: Rect
        public let output: String?
    }

    public struct Invalid: Error, Sendable {
        public let problems: [ModelProblem]
    }

    /// `pause` is called between the steps of the build: a caller on a background thread lets
    /// others run there.
    public convenience init(settings: Settings = Settings(), popups: [PopupSpec], exclusions: [ExclusionSpec] = [],
                            pause: () -> Void = {}) throws(Invalid) {
        let problems = ModelValidator.problems(popups: popups)
        guard problems.isEmpty else { throw Invalid(problems: problems) }
        pause()
        self.init(checked: settings, popups: popups, exclusions: exclusions, pause: pause)
    }

    /// This model with `added` after its popups (runtime popups): only the added popups are
    /// checked, against this model's names.
    public func adding(_ added: [PopupSpec], pause: () -> Void = {}) throws(Invalid) -> ClickModel {
        guard !added.isEmpty else { return self }
        let problems = ModelValidator.problems(adding: added, to: self)
        guard problems.isEmpty else { throw Invalid(problems: problems) }
        pause()
        return ClickModel(checked: settings, popups: popups + added, exclusions: exclusions, pause: pause)
    }

    private init(checked settings: Settings, popups: [PopupSpec], exclusions: [ExclusionSpec], pause: () -> Void) {
        self.settings = settings
        self.popups = popups
        self.exclusions = exclusions
        var byName: [String: Int32] = [:]
        for (i, p) in popups.enumerated() { byName[p.name] = Int32(i) }
        indexByName = byName
        parentOf = popups.map { p in p.parent.flatMap { byName[$0] } ?? -1 }
        traits = popups.map(PopupTraits.init)
        pause()
        regions = RegionTable(popups: popups)
        pause()
        matchIndex = WindowMatchIndex(popups: popups, exclusions: exclusions)
        pause()
        windowMatches = Self.windowMatches(popups: popups, exclusions: exclusions)
        windowMatchHashes = windowMatches.map(\.hashValue)
        pause()
        matchesTitles = Self.anyWindowMatch(popups: popups, exclusions: exclusions) { $0.title != nil || $0.titleGlob != nil }
        appIdMatchUsers = Self.windowMatchUsers(popups: popups, exclusions: exclusions) { $0.appId != nil }
        rectAreas = Self.rectAreas(popups: popups, exclusions: exclusions)
    }

    private static func rectAreas(popups: [PopupSpec], exclusions: [ExclusionSpec]) -> [RectArea] {
        var areas: [RectArea] = []
        for (i, p) in popups.enumerated() {
            for case .rect(let rect, let output) in p.anchors {
                areas.append(RectArea(kind: .anchor(popup: Int32(i)), rect: rect, output: output))
            }
        }
        for case .rect(let rect, let output) in exclusions.map(\.source) {
            areas.append(RectArea(kind: .exclusion, rect: rect, output: output))
        }
        return areas
    }

    private static func anyWindowMatch(popups: [PopupSpec], exclusions: [ExclusionSpec], _ test: (WindowMatch) -> Bool) -> Bool {
        for p in popups {
            if case .window(let m) = p.source, test(m) { return true }
            for case .window(let m) in p.anchors where test(m) { return true }
        }
        return exclusions.contains { if case .window(let m) = $0.source { test(m) } else { false } }
    }

    public func popupIndex(named name: String) -> Int32? { indexByName[name] }

    /// `; did you mean "x"?` for a popup name not found, from the daemon's loop: none among
    /// more than `suggestionCandidatesLimit` popups.
    public func popupNameSuggestion(_ word: String) -> String {
        popups.count <= suggestionCandidatesLimit ? suggestion(word, popups.map(\.name)) : ""
    }

    /// Dotted path of a region node: "calendar.card".
    public func regionPath(_ node: Int32) -> String { regions.paths[Int(node)] }

    /// The dotted paths from the popup's root down to `node`.
    public func regionAncestry(_ node: Int32) -> [String] {
        regions.ancestry(of: node).map { regions.paths[Int($0)] }
    }

    /// The popup's parent (`parent = "..."`), nil for a top-level popup.
    public func parent(of popup: Int32) -> Int32? {
        let parent = parentOf[Int(popup)]
        return parent >= 0 ? parent : nil
    }

    /// The popups nested in `popup`, at any depth.
    public func descendants(of popup: Int32) -> [Int32] {
        let children = popups.indices.map(Int32.init).filter { parentOf[Int($0)] == popup }
        return children + children.flatMap(descendants(of:))
    }

    /// What a window with these properties is: the first popup in config order that it
    /// opens (a popup that names this very window or its process first), the popups it
    /// anchors, and whether it is excluded.
    public func roles(for properties: WindowMatch.Properties) -> WindowRoles {
        var roles = WindowRoles()
        var byIdentity = false
        matchIndex.candidates(for: properties) { candidate in
            guard candidate.match.matches(properties) else { return }
            switch candidate.role {
            case .popup:
                // The first in config order; one naming this window or its process before all.
                let identity = candidate.match.isByIdentity
                guard let current = roles.popup else {
                    (roles.popup, byIdentity) = (candidate.owner, identity)
                    return
                }
                if (identity && !byIdentity) || (identity == byIdentity && candidate.owner < current) {
                    (roles.popup, byIdentity) = (candidate.owner, identity)
                }
            case .anchor:
                if !roles.anchors.contains(candidate.owner) { roles.anchors.append(candidate.owner) }
            case .exclusion:
                roles.excluded = true
            }
        }
        roles.anchors.sort()
        return roles
    }

    private static func windowMatches(popups: [PopupSpec], exclusions: [ExclusionSpec]) -> [WindowMatch] {
        var matches: [WindowMatch] = []
        for p in popups {
            for case .window(let m) in [p.source] + p.anchors { matches.append(m) }
        }
        for case .window(let m) in exclusions.map(\.source) { matches.append(m) }
        return matches
    }

    /// A rectangle from the config on screen: relative to its output's origin when it names one.
    /// nil when the output is not connected.
    public static func screenRect(_ rect: Rect, output: String?, outputs: [String: Rect]) -> Rect? {
        guard let output else { return rect }
        guard let o = outputs[output] else { return nil }
        return rect.offsetBy(dx: o.x, dy: o.y)
    }
}

/// The parts a window plays in the config.
public struct WindowRoles: Sendable, Equatable {
    public var popup: Int32?
    public var anchors: [Int32] = []
    public var excluded = false

    public init(popup: Int32? = nil, anchors: [Int32] = [], excluded: Bool = false) {
        self.popup = popup
        self.anchors = anchors
        self.excluded = excluded
    }

    /// Whether the window plays no part at all.
    public var isNone: Bool { popup == nil && anchors.isEmpty && !excluded }
}

/// Why a window belongs to an open popup's family: what `status`, `hit` and `monitor` say.
public enum FamilyTie: String, Sendable, Equatable {
    /// WM_TRANSIENT_FOR the popup's window, at any depth (a dialog, a dialog's dialog).
    case transient = "transient-for"
    /// An override-redirect window of the popup's X client mapped after the popup's window
    /// (GTK and Qt menus and dropdowns, Xt menus, dzen2's body).
    case sameClient = "same-client"
    /// A view of the popup's process with its app_id, opened after the popup (sway).
    case sameProcess = "same-process"

    /// The tie as a person reads it, of the member `window`.
    public var sentence: String {
        switch self {
        case .transient: "transient for it"
        case .sameClient: "its program's override-redirect window, mapped after it"
        case .sameProcess: "its process's window with its app_id, opened after it"
        }
    }
}

extension ClickModel {
    /// Frees `model` a piece at a time when this is its last reference (otherwise only lets it
    /// go): every part whose elements hold strings or arrays. The rest (plain values: traits,
    /// parents, hashes, region nodes) is a handful of buffers, each freed at once.
    public static func free(_ model: consuming ClickModel, pause: () -> Void) {
        guard isKnownUniquelyReferenced(&model) else { return }
        // Copies share the model's storage; once the model is gone they are its only owners.
        var popups = model.popups, exclusions = model.exclusions, windowMatches = model.windowMatches
        var appIdMatchUsers = model.appIdMatchUsers, rectAreas = model.rectAreas, paths = model.regions.paths
        var names = model.indexByName, matchIndex = model.matchIndex
        _ = consume model
        pause()
        popups.removeAllInPieces(pause)
        exclusions.removeAllInPieces(pause)
        windowMatches.removeAllInPieces(pause)
        appIdMatchUsers.removeAllInPieces(pause)
        rectAreas.removeAllInPieces(pause)
        paths.removeAllInPieces(pause)
        names.removeAllInPieces(pause)
        matchIndex.removeAllInPieces(pause)
    }
}
