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
}
