import ClickawayConfig
import ClickawayCore
import Foundation
import Testing

/// Two popups one window can match: the window opens only the first, so `check` warns.
@Suite struct OverlapTests {
    static func overlaps(_ a: String, _ b: String) throws -> [String] {
        let config = try load("[[popup]]\nname = \"a\"\nwindow = \(a)\n\n[[popup]]\nname = \"b\"\nwindow = \(b)\n")
        return config.overlappingPopups.map { "\($0.first)+\($0.second)" }
    }

    @Test(arguments: [
        // Nothing set in both, or the same values: one window can match both.
        (#"{ class = "Popup" }"#, #"{ class = "Popup", instance = "xterm" }"#, true),
        (#"{ class = "Popup" }"#, #"{ title = "notes" }"#, true),
        (#"{ class = "Popup", title = "a" }"#, #"{ class = "Popup", title_glob = "a*" }"#, true),
        (#"{ type = "dialog" }"#, #"{ type = "dialog" }"#, true),
        // A key both set, with different values: never the same window.
        (#"{ class = "Popup" }"#, #"{ class = "Other" }"#, false),
        (#"{ class = "Popup", instance = "a" }"#, #"{ class = "Popup", instance = "b" }"#, false),
        (#"{ class = "Popup", title = "a" }"#, #"{ class = "Popup", title_glob = "b*" }"#, false),
        // WM_CLASS is X's, app_id Wayland's.
        (#"{ class = "foot" }"#, #"{ app_id = "foot" }"#, false),
    ])
    func popupsOverlapUnlessAKeyTellsThemApart(_ a: String, _ b: String, _ overlap: Bool) throws {
        #expect(try Self.overlaps(a, b) == (overlap ? ["a+b"] : []), "\(a) / \(b)")
    }

    @Test func theWarningNamesBothAndWhichOneOpens() throws {
        let config = try load("""
            [[popup]]
            name = "scratch"
            window = { class = "Popup" }
            [[popup]]
            name = "menu"
            rect = [0, 0, 10, 10]
            [[popup]]
            name = "popup"
            window = { class = "Popup", instance = "xterm" }
            """)
        let warning = try #require(config.overlappingPopups.first).description
        #expect(config.overlappingPopups.count == 1)
        #expect(warning.hasPrefix("popups \"scratch\" and \"popup\" can match the same window"), "\(warning)")
        #expect(warning.contains("opens only \"scratch\""), "\(warning)")
    }

    /// The installed example opens nothing by itself: no live popup matches the class the
    /// README's "Your first popup" makes (`xterm -class Popup`), so the block `pick` prints for
    /// it, pasted at the end, loads and is that window's only popup.
    @Test func theExampleLeavesTheFirstPopupToTheReadersPick() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let example = try String(contentsOf: root.appendingPathComponent("config/config.toml"), encoding: .utf8)
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Your first popup\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```toml\n").dropFirst().first?.components(separatedBy: "```").first,
                                 "no ```toml block in the README's Your first popup")
        #expect(block.contains("class = \"Popup\""), "\(block)")
        let combined = try load(example + "\n" + block)
        #expect(combined.overlappingPopups.isEmpty, "\(combined.overlappingPopups)")
        let xterm = WindowMatch.Properties(windowClass: "Popup", instance: "xterm", title: "xterm")
        let opened = try #require(combined.model.roles(for: xterm).popup, "the pasted block does not match the xterm")
        #expect(combined.model.popups[Int(opened)].name == "popup")
        #expect(try load(example).model.roles(for: xterm).popup == nil, "the example itself opens the README's xterm")
    }
}
