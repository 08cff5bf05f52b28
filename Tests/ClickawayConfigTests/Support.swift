import ClickawayConfig
import ClickawayCore
import Testing

/// The path every single-file test pretends its text came from.
let configPath = "/home/u/.config/clickaway/config.toml"

/// The diagnostics for `files`, rendered; "" when they load.
func rendered(_ files: [(path: String, text: String)]) -> String {
    do {
        _ = try ConfigLoader.load(files.map { ConfigFile(path: $0.path, text: $0.text) })
        return ""
    } catch {
        return error.description
    }
}

func rendered(_ text: String) -> String {
    rendered([(configPath, text)])
}

/// The diagnostics for one file; empty when it loads.
func diagnostics(_ text: String) -> [Diagnostic] {
    do {
        _ = try ConfigLoader.load([ConfigFile(path: configPath, text: text)])
        return []
    } catch {
        guard case .invalid(let diagnostics) = error else {
            Issue.record("unexpected \(error)")
            return []
        }
        return diagnostics
    }
}

func load(_ text: String) throws -> LoadedConfig {
    try ConfigLoader.load([ConfigFile(path: configPath, text: text)])
}

extension LoadedConfig {
    /// Regions declared under popups, at every depth (not counting the popups' own root regions).
    var regionCount: Int { model.popups.reduce(0) { $0 + Self.count($1.regions) } }

    private static func count(_ regions: [RegionSpec]) -> Int {
        regions.reduce(regions.count) { $0 + count($1.children) }
    }
}
