import ClickawayCore
import Testing

/// Which part a window plays, from its properties: the same rules on X11 and on sway.
@Suite struct WindowRolesTests {
    func model() throws -> ClickModel {
        var menu = PopupSpec(name: "menu", source: .window(WindowMatch(appId: "menu")))
        menu.anchors = [.window(WindowMatch(appId: "bar"))]
        let x11 = PopupSpec(name: "x11", source: .window(WindowMatch(windowClass: "Menu")))
        let both = PopupSpec(name: "both", source: .window(WindowMatch(title: "T", appId: "menu")))
        return try ClickModel(popups: [menu, x11, both],
                              exclusions: [ExclusionSpec(source: .window(WindowMatch(appId: "osk")))])
    }

    @Test func appIdMatchesOnlyItsOwnValue() throws {
        let m = try model()
        #expect(m.roles(for: .init(appId: "menu")).popup == 0)
        #expect(m.roles(for: .init(appId: "Menu")).isNone)
        // An X window has no app_id: a rule naming one never matches it.
        #expect(m.roles(for: .init(windowClass: "Menu", instance: "menu")).popup == 1)
        #expect(m.roles(for: .init(windowClass: "x", instance: "menu", title: "T")).isNone)
    }

    @Test func firstPopupInConfigOrderWinsAndAnchorsAndExclusionsAreFound() throws {
        let m = try model()
        #expect(m.roles(for: .init(title: "T", appId: "menu")) == WindowRoles(popup: 0))
        #expect(m.roles(for: .init(appId: "bar")) == WindowRoles(anchors: [0]))
        #expect(m.roles(for: .init(appId: "osk")) == WindowRoles(excluded: true))
        #expect(m.windowMatches.count == 5)
    }

    /// A runtime popup names one window or one process: it wins over a configured popup that
    /// matches the same window by kind, wherever it is in the model.
    @Test func aPopupByWindowOrPidWinsOverOneByKind() throws {
        let byClass = PopupSpec(name: "term", source: .window(WindowMatch(windowClass: "Term")))
        let byWindow = PopupSpec(name: "runtime-1", source: .window(WindowMatch(window: 0x1a00003)))
        let byPid = PopupSpec(name: "runtime-2", source: .window(WindowMatch(pid: 42)))
        let m = try ClickModel(popups: [byClass, byWindow, byPid])
        #expect(m.roles(for: .init(windowClass: "Term", window: 0x1a00003, pid: 42)).popup == 1)
        #expect(m.roles(for: .init(windowClass: "Term", window: 0x1a00004, pid: 42)).popup == 2)
        #expect(m.roles(for: .init(windowClass: "Term", window: 0x1a00004, pid: 7)).popup == 0)
        #expect(m.roles(for: .init(windowClass: "Other", window: 0x1a00004, pid: 0)).isNone)
        #expect(!WindowMatch(window: 1).isEmpty && WindowMatch(pid: 1).isByIdentity && !WindowMatch(windowClass: "x").isByIdentity)
    }
}

/// The window match index and the incremental check of added popups agree with walking
/// every popup and checking the whole list.
@Suite struct ModelIndexAgreementTests {
    static let classes = ["A", "B", "C", nil]
    static let titles = ["t1", "t2", nil]

    static func randomMatch(_ g: inout some RandomNumberGenerator) -> WindowMatch {
        var m = WindowMatch()
        switch Int.random(in: 0..<7, using: &g) {
        case 0: m.windowClass = classes.randomElement(using: &g)!
        case 1: m.title = titles.randomElement(using: &g)!
        case 2: m.titleGlob = ["t*", "?2", "x*"].randomElement(using: &g)!
        case 3: m.type = ["dialog", "menu"].randomElement(using: &g)!
        case 4: m.pid = Int32.random(in: 1...3, using: &g)
        case 5: m.window = UInt32.random(in: 1...3, using: &g)
        default:
            m.windowClass = classes.randomElement(using: &g)!
            m.instance = ["i", "j"].randomElement(using: &g)!
        }
        if m.isEmpty { m.appId = "app" }
        return m
    }

    /// `roles(for:)` as it was: every popup in config order.
    static func walkedRoles(_ model: ClickModel, _ properties: WindowMatch.Properties) -> WindowRoles {
        var roles = WindowRoles()
        var byIdentity = false
        for (i, p) in model.popups.enumerated() {
            if !byIdentity, case .window(let match) = p.source, roles.popup == nil || match.isByIdentity, match.matches(properties) {
                roles.popup = Int32(i)
                byIdentity = match.isByIdentity
            }
            for case .window(let match) in p.anchors where match.matches(properties) {
                roles.anchors.append(Int32(i))
                break
            }
        }
        roles.excluded = model.exclusions.contains { if case .window(let m) = $0.source { m.matches(properties) } else { false } }
        return roles
    }

    @Test func indexedRolesAreTheRolesOfEveryPopupInOrder() throws {
        var g = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let popups = (0..<Int.random(in: 1...12, using: &g)).map { i in
                PopupSpec(name: "p\(i)", source: .window(Self.randomMatch(&g)),
                          anchors: Bool.random(using: &g) ? [.window(Self.randomMatch(&g))] : [])
            }
            let exclusions = (0..<Int.random(in: 0...2, using: &g)).map { _ in ExclusionSpec(source: .window(Self.randomMatch(&g))) }
            let model = try ClickModel(popups: popups, exclusions: exclusions)
            for _ in 0..<30 {
                let properties = WindowMatch.Properties(
                    windowClass: Self.classes.randomElement(using: &g)!, instance: ["i", "j", nil].randomElement(using: &g)!,
                    title: ["t1", "t2", "x3", nil].randomElement(using: &g)!, types: [["dialog"], ["menu"], []].randomElement(using: &g)!,
                    appId: ["app", nil].randomElement(using: &g)!, window: UInt32.random(in: 0...3, using: &g),
                    pid: Int32.random(in: 0...3, using: &g))
                #expect(model.roles(for: properties) == Self.walkedRoles(model, properties), "\(properties) in \(popups)")
            }
        }
    }

    @Test func addedPopupsHaveTheProblemsTheWholeListHas() throws {
        var g = SystemRandomNumberGenerator()
        let names = ["a", "b", "c", "d", "e"]
        for _ in 0..<300 {
            let base = try ClickModel(popups: [PopupSpec(name: "a", source: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil)),
                                               PopupSpec(name: "b", parent: "a", source: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil))])
            let added = (0..<Int.random(in: 1...3, using: &g)).map { _ in
                PopupSpec(name: names.randomElement(using: &g)!, parent: Bool.random(using: &g) ? names.randomElement(using: &g)! : nil,
                          source: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil))
            }
            // The same places, maybe in another order.
            let whole = ModelValidator.problems(popups: base.popups + added).map(\.path.description).sorted()
            #expect(ModelValidator.problems(adding: added, to: base).map(\.path.description).sorted() == whole,
                    "\(added.map { ($0.name, $0.parent) })")
        }
    }
}
