import ClickawayControl
import ClickawayCore
import ClickawayX11
import Testing
import XTestHarness

/// When a popup closes, its family is let go: each member is placed again by its own ties, in
/// the order the members were mapped, never by client alone (issue 43): one transient for an
/// earlier member joins it, the others matching a popup open their own, the rest are nothing.
@Suite struct FamilyReleaseTests {
    static let config = """
        [defaults]
        grace_ms = 0
        dismiss = "unmap"

        [[popup]]
        name = "pop"
        window = { class = "Pop" }

        """

    /// Members: a big family. The one transient for an earlier member is mapped long after it;
    /// one member matches nothing.
    static let members = 200
    static let parentIndex = 10
    static let transientIndex = 150
    static let bystanderIndex = 180

    /// Small windows side by side, none over another.
    static func rect(_ i: Int) -> Rect {
        Rect(x: Int32(20 + (i % 25) * 40), y: Int32(100 + (i / 25) * 40), width: 30, height: 30)
    }

    @Test(arguments: XBackend.allCases)
    func aBigFamilyLetGoEndsPlacedByItsOwnTies(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config, backend: backend)
        try f.startDaemon()
        let client = f.client
        let owner = try client.createWindow(at: Rect(x: 20, y: 600, width: 200, height: 100), wmClass: Self.pop,
                                            title: "owner", overrideRedirect: true)
        try f.sync()
        try f.eventually("the owner to open pop") { try f.openPopups() == ["pop"] }

        // The owner's menus: override-redirect windows of its client mapped while it is open.
        var members: [TestWindow] = []
        for i in 0..<Self.members {
            let transientFor = i == Self.transientIndex ? members[Self.parentIndex].id : nil
            let wmClass = i == Self.bystanderIndex ? WMClass(instance: "script", windowClass: "Script") : Self.pop
            members.append(try client.createWindow(at: Self.rect(i), wmClass: wmClass, title: "member \(i)",
                                                   overrideRedirect: true, transientFor: transientFor))
        }
        try f.sync()
        let family = try #require(try f.report().open.first)
        #expect(try f.report().open.count == 1, "the members opened popups of their own while their owner was open")
        #expect(family.members.count + family.membersLeftOut == Self.members, "\(family.membersText)")

        try client.destroy(owner)
        try f.sync()
        let report = try f.report()
        // Every member that matches pop is a popup of its own but the one transient for
        // another, which is in that one's family; the one that matches nothing is nowhere.
        #expect(report.open.count + report.openLeftOut == Self.members - 2,
                "\(report.open.count) listed and \(report.openLeftOut) left out")
        let parent = try #require(report.open.first { $0.window == hex(members[Self.parentIndex].id) },
                                  "the transient's parent is no open popup: \(report.open.map(\.window))")
        #expect(parent.members == [hex(members[Self.transientIndex].id)], "\(parent.membersText)")
        #expect(parent.ties == [FamilyTie.transient.rawValue], "\(parent.ties)")
        let byWindow = Set(report.open.compactMap(\.window))
        #expect(!byWindow.contains(hex(members[Self.transientIndex].id)), "the transient member opened a popup of its own")
        #expect(!byWindow.contains(hex(members[Self.bystanderIndex].id)), "the member matching nothing opened a popup")
        for popup in report.open where popup.window != parent.window {
            #expect(popup.members.isEmpty, "\(popup.window ?? "?") took in \(popup.membersText) by client")
        }

        // A click on the transient member is inside its parent and outside every other; in
        // the shield mode too, where the members, mapped after the shield, are above it.
        let inside = Self.rect(Self.transientIndex)
        try f.click(inside.x + 5, inside.y + 5)
        try f.eventually("a click on the transient member to dismiss every popup but its parent") {
            try f.report().open.map(\.window) == [parent.window]
        }
        // Its parent dismissed, the member is let go in turn, and matches pop on its own.
        try f.click(1000, 700)
        try f.eventually("an outside click to dismiss the parent, its member to open pop") {
            try f.report().open.map(\.window) == [hex(members[Self.transientIndex].id)]
        }
        try f.click(1000, 700)
        try f.eventually("an outside click to dismiss the member") { try f.openPopups().isEmpty }
    }

    static let pop = WMClass(instance: "pop", windowClass: "Pop")
}
