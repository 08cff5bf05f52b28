extension ClickModel {
    /// The popups, anchors and exclusions whose window match satisfies `test`, as a user
    /// finds them in the configuration: `popup "menu"`, `an anchor of popup "menu"`, `exclude #2`.
    public func windowMatchUsers(where test: (WindowMatch) -> Bool) -> [String] {
        Self.windowMatchUsers(popups: popups, exclusions: exclusions, where: test)
    }

    static func windowMatchUsers(popups: [PopupSpec], exclusions: [ExclusionSpec], where test: (WindowMatch) -> Bool) -> [String] {
        var users: [String] = []
        for p in popups {
            if case .window(let m) = p.source, test(m) { users.append("popup \"\(p.name)\"") }
            for case .window(let m) in p.anchors where test(m) {
                users.append("an anchor of popup \"\(p.name)\"")
                break
            }
        }
        for (i, e) in exclusions.enumerated() {
            if case .window(let m) = e.source, test(m) { users.append("exclude #\(i + 1)") }
        }
        return users
    }
}
