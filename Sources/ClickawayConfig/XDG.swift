/// Where the configuration lives: `$XDG_CONFIG_HOME/clickaway/config.toml`
/// (`~/.config/clickaway/config.toml` by default), then `conf.d/*.toml` beside it.
public struct ConfigLocation: Sendable, Equatable {
    public let mainFile: String
    public let dropInDirectory: String

    public init(environment: [String: String]) {
        let directory = FileSystem.join(XDG.base("XDG_CONFIG_HOME", default: ".config", environment), "clickaway")
        mainFile = FileSystem.join(directory, "config.toml")
        dropInDirectory = FileSystem.join(directory, "conf.d")
    }

    /// The files to load, in order: the main file if it exists, then the drop-ins by name.
    /// Hidden files are skipped, so editors' backup and lock files do not get loaded.
    public func existingFiles() -> [String] {
        let main = FileSystem.exists(mainFile) ? [mainFile] : []
        let names = FileSystem.names(in: dropInDirectory) ?? []
        let dropIns = names.filter { $0.hasSuffix(".toml") && !$0.hasPrefix(".") }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { FileSystem.join(dropInDirectory, $0) }
        return main + dropIns
    }
}

/// Where the daemon keeps what it must remember across starts: `$XDG_STATE_HOME/clickaway/`
/// (`~/.local/state/clickaway/` by default).
public struct StateLocation: Sendable, Equatable {
    public let directory: String

    public init(environment: [String: String]) {
        directory = FileSystem.join(XDG.base("XDG_STATE_HOME", default: ".local/state", environment), "clickaway")
    }

    /// The last configuration that loaded without errors.
    public var lastGoodFile: String { FileSystem.join(directory, "last-good.toml") }
}

enum XDG {
    /// `$variable`, or `~/fallback`: the XDG spec says a relative value is invalid and must be ignored.
    static func base(_ variable: String, default fallback: String, _ environment: [String: String]) -> String {
        if let value = environment[variable], value.hasPrefix("/") { return value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileSystem.passwordHome() ?? "/"
        return FileSystem.join(home, fallback)
    }
}
