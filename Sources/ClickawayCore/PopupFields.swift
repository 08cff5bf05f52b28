/// Every key a `[[popup]]` takes, once: its name, what it holds and its default, and where
/// else it may be given. The TOML reader's key lists come from here; the runtime request
/// (`clickawayctl open`) and clickaway.toml(5), the reference, are tested against it: each
/// key's values, default and limits (dunst's settings_data.h, as a table of values).
public struct PopupField: Sendable {
    /// The TOML key.
    public let key: String
    /// The values it takes, in Markdown: backticks around what is written in the file, and
    /// every number a limit clickaway.toml(5) must give.
    public let type: String
    /// As written in the file, in backticks; nil when there is none (required, or nothing by default).
    public let defaultValue: String?
    /// `[defaults]` may set it for every popup.
    public let inherited: Bool
    /// `clickawayctl open` (the `add` and `wait` requests) may set it.
    public let runtime: Bool
}

public enum PopupFields {
    /// An hour: a longer grace period is a typo, and time arithmetic stays far from overflow.
    public static let graceLimitMs: Int64 = 3_600_000

    public static let all: [PopupField] = [
        field("name", "string `[A-Za-z0-9_-]+`", nil, runtime: true),
        field("parent", "popup name", nil, runtime: true),
        field("window", "window match (below)", nil, runtime: true),
        field("rect", "`[x, y, width, height]`", nil, runtime: true),
        field("output", "string", nil, runtime: true),
        field("anchors", "array of `{ rect = [...] }` (+ `output`) or `{ window = {...} }`", "`[]`", runtime: true),
        field("passthrough", "boolean", "`false`"),
        field("slop", "integer or `[top, right, bottom, left]`", "`0`"),
        field("clip", "boolean", "`true`"),
        field("redirect", "region path", nil),
        field("region", "table", nil),
        field("outside_click", "`\"swallow\"`, `\"replay\"`", "`\"swallow\"`", inherited: true, runtime: true),
        field("trigger", "`\"press\"`, `\"click\"`", "`\"press\"`", inherited: true, runtime: true),
        field("buttons", "array of 1-31", "`[1, 2, 3]`", inherited: true, runtime: true),
        field("grace_ms", "integer, 0 to \(graceLimitMs)", "`150`", inherited: true, runtime: true),
        field("dismiss", "`\"close\"`, `\"unmap\"`, `\"kill\"`, `{ command = [...] }`", "`\"close\"`", inherited: true, runtime: true),
        field("escape", "boolean", "`false`", inherited: true, runtime: true),
        field("escape_key", "`\"swallow\"`, `\"replay\"`", "`\"swallow\"`", inherited: true),
        field("family", "boolean", "`true`", inherited: true),
    ]

    /// The keys `[defaults]` takes.
    public static var inheritedKeys: [String] { all.filter(\.inherited).map(\.key) }
    /// The keys a `[[popup]]` table takes.
    public static var popupKeys: [String] { all.map(\.key) }

    private static func field(_ key: String, _ type: String, _ defaultValue: String?, inherited: Bool = false,
                              runtime: Bool = false) -> PopupField {
        PopupField(key: key, type: type, defaultValue: defaultValue, inherited: inherited, runtime: runtime)
    }
}

/// Every key `[settings]` takes, once, as PopupFields holds a popup's: the TOML reader's key
/// list comes from here, and clickaway.toml(5) and the reader's defaults are tested against it.
public struct SettingField: Sendable {
    /// The TOML key.
    public let key: String
    /// The values it takes, as clickaway.toml(5) lists them (`\(dq` for `"`).
    public let values: [String]
    /// The default, as it would be written in the file.
    public let defaultValue: String
}

public enum SettingFields {
    public static let all: [SettingField] = [
        SettingField(key: "backend", values: Backend.allCases.map { "\"\($0.rawValue)\"" }, defaultValue: "\"\(Settings().backend.rawValue)\""),
        SettingField(key: "log_level", values: LogLevel.allCases.map { "\"\($0.rawValue)\"" },
                     defaultValue: "\"\(Settings().logLevel.rawValue)\""),
        SettingField(key: "notify", values: ["true", "false"], defaultValue: "\(Settings().notify)"),
    ]

    /// The keys `[settings]` takes.
    public static var keys: [String] { all.map(\.key) }
}
