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
}
