/// The popups, anchors and exclusions that match windows, filed by the one exact key each
/// must have (class, instance, title, app_id, window, pid): a window is compared only with
/// the matches filed under its own values and with those that have no exact key (a title
/// glob or a type alone). A configuration of 66,000 popups costs a window a handful of
/// comparisons, not 66,000.
struct WindowMatchIndex: Sendable {
    /// Where a match comes from.
    enum Role: Sendable {
        case popup
        case anchor
        case exclusion
    }

    struct Candidate: Sendable {
        /// The popup's index (for an exclusion, the exclusion's).
        var owner: Int32
        var role: Role
        var match: WindowMatch
    }

    private var byClass: [String: [Candidate]] = [:]
    private var byInstance: [String: [Candidate]] = [:]
    private var byTitle: [String: [Candidate]] = [:]
    private var byAppId: [String: [Candidate]] = [:]
    private var byWindow: [UInt32: [Candidate]] = [:]
    private var byPid: [Int32: [Candidate]] = [:]
    private var unkeyed: [Candidate] = []

    /// Empties it a piece at a time (`ClickModel.free`).
    mutating func removeAllInPieces(_ pause: () -> Void) {
        byClass.removeAllInPieces(pause)
        byInstance.removeAllInPieces(pause)
        byTitle.removeAllInPieces(pause)
        byAppId.removeAllInPieces(pause)
        byWindow.removeAllInPieces(pause)
        byPid.removeAllInPieces(pause)
        unkeyed.removeAllInPieces(pause)
    }

    init(popups: [PopupSpec], exclusions: [ExclusionSpec]) {
        for (i, popup) in popups.enumerated() {
            if case .window(let match) = popup.source { file(Candidate(owner: Int32(i), role: .popup, match: match)) }
            for case .window(let match) in popup.anchors { file(Candidate(owner: Int32(i), role: .anchor, match: match)) }
        }
        for (i, exclusion) in exclusions.enumerated() {
            if case .window(let match) = exclusion.source { file(Candidate(owner: Int32(i), role: .exclusion, match: match)) }
        }
    }

    private mutating func file(_ candidate: Candidate) {
        let m = candidate.match
        if let key = m.window { byWindow[key, default: []].append(candidate) }
        else if let key = m.pid { byPid[key, default: []].append(candidate) }
        else if let key = m.windowClass { byClass[key, default: []].append(candidate) }
        else if let key = m.appId { byAppId[key, default: []].append(candidate) }
        else if let key = m.instance { byInstance[key, default: []].append(candidate) }
        else if let key = m.title { byTitle[key, default: []].append(candidate) }
        else { unkeyed.append(candidate) }
    }

    /// Every match that may match `properties`, each filed once: those under its values and
    /// the unkeyed ones. Not in any order.
    func candidates(for p: WindowMatch.Properties, _ body: (Candidate) -> Void) {
        if let list = byWindow[p.window] { list.forEach(body) }
        if p.pid != 0, let list = byPid[p.pid] { list.forEach(body) }
        if let key = p.windowClass, let list = byClass[key] { list.forEach(body) }
        if let key = p.appId, let list = byAppId[key] { list.forEach(body) }
        if let key = p.instance, let list = byInstance[key] { list.forEach(body) }
        if let key = p.title, let list = byTitle[key] { list.forEach(body) }
        unkeyed.forEach(body)
    }
}
