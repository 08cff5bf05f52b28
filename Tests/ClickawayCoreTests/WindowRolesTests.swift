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
