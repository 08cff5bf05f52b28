internal import ClickawayCore

/// What one file contributes. Files are merged in order: popups and exclusions are
/// concatenated; `[settings]` and `[defaults]` keys of later files win key by key.
struct ConfigFragment {
    var settings = SettingsOverrides()
    var defaults = PopupOptions()
    var popups: [PopupDraft] = []
    var exclusions: [ExclusionSpec] = []
}

/// Every file's fragment merged in load order, `[defaults]` applied, remembering where each
/// popup and exclusion was written so problems found in the merged lists can be located.
struct MergedConfig {
    /// A file number and an index within that file's `[[popup]]` or `[[exclude]]` array.
    struct Origin {
        let file: Int
        let index: Int
    }

    private(set) var settings = Settings()
    private(set) var popups: [PopupSpec] = []
    private(set) var popupOrigins: [Origin] = []
    private(set) var exclusions: [ExclusionSpec] = []
    private(set) var exclusionOrigins: [Origin] = []
    /// `[defaults]` over the built-in ones, as every popup inherits them.
    private(set) var defaults = PopupOptions.builtIn

    init(_ fragments: [ConfigFragment]) {
        var settingsOverrides = SettingsOverrides()
        var defaults = PopupOptions()
        for fragment in fragments {
            settingsOverrides = fragment.settings.over(settingsOverrides)
            defaults = fragment.defaults.over(defaults)
        }
        settings = settingsOverrides.applied(to: settings)
        // Defaults from every file apply to popups of every file.
        let inherited = defaults.over(.builtIn)
        self.defaults = inherited
        popups.reserveCapacity(fragments.reduce(0) { $0 + $1.popups.count })
        let inheritance = inherited.inheritance
        for (file, fragment) in fragments.enumerated() {
            for draft in fragment.popups {
                popups.append(draft.options.applied(to: draft.spec, inheriting: inheritance))
                popupOrigins.append(Origin(file: file, index: draft.index))
            }
            exclusions += fragment.exclusions
            exclusionOrigins += fragment.exclusions.indices.map { Origin(file: file, index: $0) }
        }
    }
}

/// The `[settings]` keys a file sets.
struct SettingsOverrides {
    var backend: Backend?
    var logLevel: LogLevel?
    var notify: Bool?

    /// Keys set here win over `base`.
    func over(_ base: SettingsOverrides) -> SettingsOverrides {
        SettingsOverrides(backend: backend ?? base.backend, logLevel: logLevel ?? base.logLevel, notify: notify ?? base.notify)
    }

    func applied(to settings: Settings) -> Settings {
        var result = settings
        result.backend = backend ?? result.backend
        result.logLevel = logLevel ?? result.logLevel
        result.notify = notify ?? result.notify
        return result
    }
}

/// A popup as read from its file, before `[defaults]` from every file are known.
struct PopupDraft {
    /// Complete but for the inherited keys, which have the built-in values (`PopupSpec`'s
    /// initializer's, as `applied(to:inheriting:)` expects). Values that could not be read
    /// are placeholders; the file then has diagnostics, so the spec only feeds the
    /// cross-reference checks.
    var spec: PopupSpec
    /// The inheritable keys the popup sets itself.
    var options: PopupOptions
    /// Its place in its file's `[[popup]]` array.
    var index: Int
}
