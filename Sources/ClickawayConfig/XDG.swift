import Foundation

/// Where the configuration lives: `$XDG_CONFIG_HOME/clickaway/config.toml`
/// (`~/.config/clickaway/config.toml` by default), then `conf.d/*.toml` beside it.
public struct ConfigLocation: Sendable, Equatable {
    public let mainFile: String
    public let dropInDirectory: String

    public init(environment: [String: String]) {
        let configHome: String
        // The XDG spec says a relative $XDG_CONFIG_HOME is invalid and must be ignored.
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            configHome = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            configHome = (home as NSString).appendingPathComponent(".config")
        }
        let directory = (configHome as NSString).appendingPathComponent("clickaway")
        mainFile = (directory as NSString).appendingPathComponent("config.toml")
        dropInDirectory = (directory as NSString).appendingPathComponent("conf.d")
    }

    /// The files to load, in order: the main file if it exists, then the drop-ins by name.
    /// Hidden files are skipped, so editors' backup and lock files do not get loaded.
    public func existingFiles() -> [String] {
        let fileManager = FileManager.default
        let main = fileManager.fileExists(atPath: mainFile) ? [mainFile] : []
        let names = (try? fileManager.contentsOfDirectory(atPath: dropInDirectory)) ?? []
        let dropIns = names.filter { $0.hasSuffix(".toml") && !$0.hasPrefix(".") }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { (dropInDirectory as NSString).appendingPathComponent($0) }
        return main + dropIns
    }
}
