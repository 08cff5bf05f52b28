import ClickawayConfig
import Foundation
import Testing

/// Every recipe in config/recipes loads on its own, as `clickaway --config RECIPE` would.
@Suite struct RecipeTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/recipes")
    static let recipes: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        .filter { $0.hasSuffix(".toml") }
        .sorted()

    @Test func everyProgramHasARecipe() {
        let expected: Set = ["dzen2.toml", "eww.toml", "polybar.toml", "sway.toml", "tint2.toml", "xterm.toml", "yad.toml"]
        #expect(expected.subtracting(Self.recipes).isEmpty,
                "missing from \(Self.directory.path): \(expected.subtracting(Self.recipes).sorted())")
    }

    @Test(arguments: recipes)
    func recipeLoadsWithAPopup(_ name: String) {
        let path = Self.directory.appendingPathComponent(name).path
        do {
            let config = try ConfigLoader.load(file: path, environment: [:])
            #expect(config.popupCount >= 1, "\(path) declares no [[popup]]")
            #expect(config.notes.isEmpty, "\(path): \(config.notes)")
        } catch {
            Issue.record("\(path) does not load:\n\(error)")
        }
    }

    /// The recipes that need no configuration entry are shell scripts (`sh -n` checks them in
    /// the end-to-end tests, which run two of them).
    @Test func scriptRecipesAreExecutableShellScripts() throws {
        let scripts = ((try? FileManager.default.contentsOfDirectory(atPath: Self.directory.path)) ?? []).filter { $0.hasSuffix(".sh") }
        #expect(Set(scripts).isSuperset(of: ["eww-calendar.sh", "polybar-calendar.sh", "popup-calendar.sh"]))
        for script in scripts {
            let path = Self.directory.appendingPathComponent(script).path
            #expect(FileManager.default.isExecutableFile(atPath: path), "\(script) is not executable")
            #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("#!/bin/sh\n# clickaway recipe: "))
        }
    }
}
