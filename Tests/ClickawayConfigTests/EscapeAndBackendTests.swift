import ClickawayConfig
import ClickawayCore
import Testing

/// The keys the shield mode and the Escape key brought: read, inherited, and rejected with
/// the usual diagnostics.
@Suite struct EscapeAndBackendTests {
    @Test func escapeDefaultsOffAndInheritsFromDefaults() throws {
        let loaded = try load("""
            [settings]
            backend = "x11-shield"
            [defaults]
            escape = true
            [[popup]]
            name = "menu"
            window = { class = "Menu" }
            [[popup]]
            name = "tip"
            window = { class = "Tip" }
            escape = false
            escape_key = "replay"
            """)
        #expect(loaded.model.settings.backend == .x11Shield)
        #expect(loaded.model.popups.map(\.escape) == [true, false])
        #expect(loaded.model.popups.map(\.escapeKey) == [.swallow, .replay])
        let plain = try load("[[popup]]\nname = \"p\"\nwindow = { class = \"P\" }\n")
        #expect(plain.model.popups[0].escape == false)
        #expect(plain.model.popups[0].escapeKey == .swallow)
    }

    @Test func familyDefaultsOnAndInheritsFromDefaults() throws {
        let plain = try load("[[popup]]\nname = \"p\"\nwindow = { class = \"P\" }\n")
        #expect(plain.model.popups[0].family)
        let loaded = try load("""
            [defaults]
            family = false
            [[popup]]
            name = "menu"
            window = { class = "Menu" }
            [[popup]]
            name = "form"
            window = { class = "Yad" }
            family = true
            """)
        #expect(loaded.model.popups.map(\.family) == [false, true])
        #expect(throws: ConfigError.self) { try load("[[popup]]\nname = \"p\"\nwindow = { class = \"P\" }\nfamily = 1\n") }
    }

    @Test func badEscapeValuesAreReportedWithTheirPlace() {
        #expect(throws: ConfigError.self) { try load("[[popup]]\nname = \"p\"\nwindow = { class = \"P\" }\nescape = \"yes\"\n") }
        do {
            _ = try load("[[popup]]\nname = \"p\"\nwindow = { class = \"P\" }\nescape = \"yes\"\nescape_key = \"eat\"\n")
            Issue.record("accepted bad escape values")
        } catch {
            let text = "\(error)"
            #expect(text.contains("\(configPath):4:10: error:"), "\(text)")
            #expect(text.contains("true or false"), "\(text)")
            #expect(text.contains("\(configPath):5:14: error:"), "\(text)")
            #expect(text.contains("\"swallow\" or \"replay\""), "\(text)")
        }
    }
}

/// What the Wayland backend brought to the config: the backend name and `app_id`.
@Suite struct WaylandConfigTests {
    @Test func waylandBackendAndAppIdAreRead() throws {
        let loaded = try load("""
            [settings]
            backend = "wayland"
            [[popup]]
            name = "menu"
            window = { app_id = "org.example.Menu", title = "Menu" }
            anchors = [ { window = { app_id = "waybar" } } ]
            """)
        #expect(loaded.model.settings.backend == .wayland)
        guard case .window(let match) = loaded.model.popups[0].source else {
            Issue.record("expected a window popup")
            return
        }
        #expect(match == WindowMatch(title: "Menu", appId: "org.example.Menu"))
    }

    @Test func appIdMustBeAString() {
        #expect(throws: ConfigError.self) {
            try load("[[popup]]\nname = \"p\"\nwindow = { app_id = 3 }\n")
        }
    }
}
