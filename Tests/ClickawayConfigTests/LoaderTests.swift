import ClickawayConfig
import ClickawayCore
import Foundation
import Testing

/// A fresh directory under NSTemporaryDirectory, removed at the end of the test.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("clickaway-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` at `relativePath`, creating directories on the way; returns the full path.
    @discardableResult
    func write(_ relativePath: String, _ text: String) throws -> String {
        let full = (path as NSString).appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: true, encoding: .utf8)
        return full
    }
}

@Suite struct LoaderTests {
    /// The loader (`clickaway`'s loader thread passes a `BackgroundPacer`) is asked to pause
    /// between small pieces of a load: between statements, between popups, and between the
    /// steps of the model's build, so no stretch of it spans the file.
    @Test func aLoadPausesBetweenStatementsPopupsAndTheModelsSteps() throws {
        let home = try TemporaryDirectory()
        let popups = 200
        let file = try home.write("config.toml", (0..<popups).map {
            "[[popup]]\nname = \"p\($0)\"\nwindow = { class = \"C\($0)\" }\n"
        }.joined())
        var pauses = 0
        let loaded = try ConfigLoader.load(file: file, environment: [:]) { pauses += 1 }
        #expect(loaded.model.popups.count == popups)
        // Three statements and a popup read each, and the build's steps.
        #expect(pauses >= popups * 4 + 4, "\(pauses) pauses")
        // A file that does not load pauses as it is read too.
        let broken = try home.write("broken.toml", String(repeating: "[[popup]]\nname = 1\n", count: popups))
        var brokenPauses = 0
        #expect(throws: ConfigError.self) { try ConfigLoader.load(file: broken, environment: [:]) { brokenPauses += 1 } }
        #expect(brokenPauses >= popups * 3)
    }

    @Test func xdgLookupLoadsTheMainFileThenDropInsByName() throws {
        let home = try TemporaryDirectory()
        let main = try home.write("clickaway/config.toml", """
            [settings]
            log_level = "debug"
            [defaults]
            grace_ms = 300
            [[popup]]
            name = "calendar"
            window = { class = "eww-calendar" }
            """)
        // Written out of order on purpose: the lookup sorts by name.
        let b = try home.write("clickaway/conf.d/20-b.toml", """
            [defaults]
            outside_click = "replay"
            [[popup]]
            name = "volume"
            parent = "calendar"
            rect = [0, 0, 10, 10]
            grace_ms = 0
            """)
        let a = try home.write("clickaway/conf.d/10-a.toml", """
            [settings]
            backend = "x11-grab"
            [[exclude]]
            window = { class = "Onboard" }
            """)
        try home.write("clickaway/conf.d/.30-hidden.toml", "this is not TOML")
        try home.write("clickaway/conf.d/README.txt", "neither is this")

        let config = try ConfigLoader.load(environment: ["XDG_CONFIG_HOME": home.path, "HOME": "/nonexistent"])
        #expect(config.files == [main, a, b])
        #expect(config.notes.isEmpty)
        // [settings] keys merge key by key across files.
        #expect(config.model.settings.logLevel == .debug)
        #expect(config.model.settings.backend == .x11Grab)
        // [defaults] from every file apply to popups of every file; a popup's own keys win.
        #expect(config.model.popups.map(\.name) == ["calendar", "volume"])
        #expect(config.model.popups.map(\.graceMs) == [300, 0])
        #expect(config.model.popups.map(\.outsideClick) == [.replay, .replay])
        #expect(config.exclusionCount == 1)
    }

    @Test func laterFilesOverrideEarlierOnesKeyByKey() throws {
        let config = try ConfigLoader.load([
            ConfigFile(path: "/c/config.toml", text: "[defaults]\ngrace_ms = 10\ntrigger = \"click\"\n"),
            ConfigFile(path: "/c/conf.d/a.toml", text: "[defaults]\ngrace_ms = 20\n[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\n"),
        ])
        #expect(config.model.popups[0].graceMs == 20)
        #expect(config.model.popups[0].trigger == .click)
        #expect(config.model.popups[0].buttons == .standard)
    }

    /// Popups are read with the built-in values and get only what `[defaults]` changes
    /// (`PopupOptions.inheritance`): a popup's own key at its built-in value still wins over
    /// `[defaults]`, and `[defaults]` at a built-in value changes nothing.
    @Test func aPopupsOwnBuiltInValueWinsOverDefaults() throws {
        let config = try ConfigLoader.load([
            ConfigFile(path: "/c/config.toml", text: """
                [defaults]
                grace_ms = 300
                outside_click = "swallow"
                buttons = [1]
                dismiss = { command = ["true"] }
                [[popup]]
                name = "own"
                rect = [0, 0, 1, 1]
                grace_ms = 150
                buttons = [1, 2, 3]
                escape = true
                [[popup]]
                name = "inherits"
                rect = [0, 0, 1, 1]
                """),
        ])
        let own = config.model.popups[0], inherits = config.model.popups[1]
        #expect(own.graceMs == 150 && own.buttons == .standard && own.escape && own.dismiss == .command(["true"]))
        #expect(inherits.graceMs == 300 && inherits.buttons == ButtonSet([1]) && !inherits.escape)
        #expect(inherits.outsideClick == .swallow && inherits.dismiss == .command(["true"]))
    }

    @Test func parentsAndRedirectsResolveAcrossFiles() throws {
        let config = try ConfigLoader.load([
            ConfigFile(path: "/c/conf.d/a.toml", text: "[[popup]]\nname = \"child\"\nparent = \"menu\"\nrect = [0, 0, 1, 1]\nredirect = \"menu.item\"\n"),
            ConfigFile(path: "/c/conf.d/b.toml", text: "[[popup]]\nname = \"menu\"\nrect = [0, 0, 9, 9]\n[[popup.region]]\nname = \"item\"\nrect = [0, 0, 1, 1]\n"),
        ])
        #expect(config.model.popupIndex(named: "menu") == 1)
    }

    @Test func noConfigFileIsAnEmptyConfigWithANote() throws {
        let home = try TemporaryDirectory()
        let config = try ConfigLoader.load(environment: ["XDG_CONFIG_HOME": home.path])
        let expected = home.path + "/clickaway/config.toml"
        #expect(config.popupCount == 0)
        #expect(config.files.isEmpty)
        #expect(config.notes == [.noConfigFile(expectedPath: expected)])
        #expect(config.notes[0].description
            == "no configuration file; running with no popups (create \(expected) to add some)")
    }

    @Test func dropInsAloneAreEnough() throws {
        let home = try TemporaryDirectory()
        let dropIn = try home.write("clickaway/conf.d/p.toml", "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\n")
        let config = try ConfigLoader.load(environment: ["XDG_CONFIG_HOME": home.path])
        #expect(config.files == [dropIn])
        #expect(config.notes.isEmpty)
    }

    @Test func explicitFileReplacesTheLookup() throws {
        let home = try TemporaryDirectory()
        try home.write("clickaway/config.toml", "this would not parse")
        let file = try home.write("other.toml", "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\n")
        let config = try ConfigLoader.load(file: file, environment: ["XDG_CONFIG_HOME": home.path])
        #expect(config.files == [file])
        #expect(config.popupCount == 1)
    }

    @Test func explicitFileThatCannotBeReadIsItsOwnError() throws {
        let home = try TemporaryDirectory()
        let missing = home.path + "/missing.toml"
        #expect {
            try ConfigLoader.load(file: missing, environment: [:])
        } throws: { error in
            guard case ConfigError.unreadable(let path, let reason) = error else { return false }
            return path == missing && reason == "no such file"
                && "\(error)" == "\(missing): error: cannot read: no such file"
        }
        #expect {
            try ConfigLoader.load(file: home.path, environment: [:])
        } throws: { error in
            guard case ConfigError.unreadable(_, let reason) = error else { return false }
            return reason == "it is a directory"
        }
    }

    @Test func unreadableAndUndecodableFilesInTheLookupAreDiagnostics() throws {
        let home = try TemporaryDirectory()
        try home.write("clickaway/config.toml", "[[popup]]\nname = \"p\"\n")
        try FileManager.default.createDirectory(atPath: home.path + "/clickaway/conf.d/10-dir.toml",
                                                withIntermediateDirectories: true)
        let latin1 = home.path + "/clickaway/conf.d/20-latin1.toml"
        #expect(FileManager.default.createFile(atPath: latin1, contents: Data([0x23, 0x20, 0xE9, 0x0A])))
        #expect {
            try ConfigLoader.load(environment: ["XDG_CONFIG_HOME": home.path])
        } throws: { error in
            "\(error)" == """
                \(home.path)/clickaway/config.toml:1:1: error: popup "p": missing window = { ... } or rect = [x, y, width, height]
                    1 | [[popup]]
                      | ^^^^^^^^^

                \(home.path)/clickaway/conf.d/10-dir.toml: error: cannot read: it is a directory

                \(home.path)/clickaway/conf.d/20-latin1.toml:1:3: error: invalid TOML: invalid UTF-8 (byte 0xE9); configuration files are UTF-8 text
                    1 | # \u{FFFD}
                      |   ^
                """
        }
    }

    @Test func aFileOverTheSizeLimitIsRefusedUnread() throws {
        let home = try TemporaryDirectory()
        let big = try home.write("big.toml", String(repeating: "# padding\n", count: ConfigLoader.limits.maxBytes / 10 + 1))
        #expect {
            try ConfigLoader.load(file: big, environment: [:])
        } throws: { error in
            "\(error)" == "\(big): error: the file has 4194310 bytes; a configuration file may have at most 4194304 (4 MiB)"
        }
    }

    @Test func aFIFOInTheFilesPlaceIsRefusedWithoutWaiting() throws {
        let home = try TemporaryDirectory()
        let fifo = home.path + "/config.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect {
            try ConfigLoader.load(file: fifo, environment: [:])
        } throws: { error in
            "\(error)" == "\(fifo): error: cannot read: it is not a regular file"
        }
    }

    @Test func stateGoesUnderXDGStateHome() {
        #expect(StateLocation(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]).lastGoodFile == "/s/clickaway/last-good.toml")
        #expect(StateLocation(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]).lastGoodFile
            == "/h/.local/state/clickaway/last-good.toml")
    }

    @Test func locationFollowsTheXDGSpec() {
        #expect(ConfigLocation(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]).mainFile
            == "/x/clickaway/config.toml")
        #expect(ConfigLocation(environment: ["XDG_CONFIG_HOME": "/x"]).dropInDirectory == "/x/clickaway/conf.d")
        // Unset, empty and relative values all fall back to ~/.config.
        for value in [nil, "", "relative/dir"] {
            var environment = ["HOME": "/h"]
            environment["XDG_CONFIG_HOME"] = value
            #expect(ConfigLocation(environment: environment).mainFile == "/h/.config/clickaway/config.toml")
        }
    }
}
