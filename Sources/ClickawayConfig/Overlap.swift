public import ClickawayCore

/// Two window popups one window can match: the roster gives such a window to the first of
/// them in the file, and the second never opens for it (a pasted `pick` block under an
/// example that matches the same class).
public struct OverlappingPopups: Sendable, Equatable, CustomStringConvertible {
    /// The popup that gets the window: the first in the file.
    public let first: String
    /// The popup that never opens for a window both match.
    public let second: String

    public var description: String {
        "popups \"\(first)\" and \"\(second)\" can match the same window (no key both window matches set has "
            + "different values): such a window opens only \"\(first)\", the first in the configuration; "
            + "give them a key with different values (class, instance, title, type, app_id) or remove one"
    }

    /// Every such pair, in the order of the file.
    public static func find(in model: ClickModel) -> [OverlappingPopups] {
        let matches: [(name: String, match: WindowMatch)] = model.popups.compactMap { popup in
            if case .window(let match) = popup.source, !match.isByIdentity { return (popup.name, match) }
            return nil
        }
        var pairs: [OverlappingPopups] = []
        for (i, a) in matches.enumerated() {
            for b in matches[(i + 1)...] where canMatchTheSameWindow(a.match, b.match) {
                pairs.append(OverlappingPopups(first: a.name, second: b.name))
            }
        }
        return pairs
    }

    /// No key set in both with different values. An app_id belongs to Wayland windows and
    /// WM_CLASS to X ones: a match by one and a match by the other never meet.
    static func canMatchTheSameWindow(_ a: WindowMatch, _ b: WindowMatch) -> Bool {
        func differ(_ x: String?, _ y: String?) -> Bool { x != nil && y != nil && x != y }
        if differ(a.windowClass, b.windowClass) || differ(a.instance, b.instance) || differ(a.title, b.title)
            || differ(a.titleGlob, b.titleGlob) || differ(a.type, b.type) || differ(a.appId, b.appId) {
            return false
        }
        // An exact title the other's glob cannot match.
        if let title = a.title, let glob = b.titleGlob, !Glob.matches(glob, title) { return false }
        if let title = b.title, let glob = a.titleGlob, !Glob.matches(glob, title) { return false }
        let aX = a.windowClass != nil || a.instance != nil, bX = b.windowClass != nil || b.instance != nil
        if (a.appId != nil && b.appId == nil && bX && !aX) || (b.appId != nil && a.appId == nil && aX && !bX) { return false }
        return true
    }
}

extension LoadedConfig {
    /// What `clickawayctl check` warns about: popups that can match the same window.
    public var overlappingPopups: [OverlappingPopups] { OverlappingPopups.find(in: model) }
}
