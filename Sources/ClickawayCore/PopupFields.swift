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

    /// The keys `[defaults]` sets for every popup, one row each: the TOML reader, the
    /// `[defaults]` merge, the runtime request and `clickawayctl open`'s options go through
    /// these rows, so a key is added here and where its value is acted on.
    public static let options: [PopupOption] = [
        .row("outside_click", .choice(of: OutsideClick.self), .swallow, \.outsideClick,
             open: .option("outside", "What happens to the click that dismisses it.")),
        .row("inside_click", .choice(of: InsideClick.self), .pass, \.insideClick,
             open: .option("inside", "What a click on it does besides reaching it: nothing, or dismiss it.")),
        .row("trigger", .choice(of: Trigger.self), .press, \.trigger,
             open: .option("trigger", "Dismiss on the press, or when press and release are both outside.")),
        .row("buttons", .buttons, .standard, \.buttons,
             open: .option("buttons", "The buttons that may dismiss it.", valueName: "1,2,3")),
        .row("grace_ms", .integer(0...graceLimitMs), 150, \.graceMs,
             open: .option("grace", "Not dismissed in its first milliseconds.", valueName: "ms")),
        .row("dismiss", .dismissAction, .close, \.dismiss,
             open: .option("dismiss", "How a click outside closes its window (or give a command after --).")),
        .row("escape", .boolean, false, \.escape,
             open: .option("escape", "Whether the Escape key dismisses it (X11, GNOME).")),
        .row("escape_key", .choice(of: EscapeOutcome.self), .swallow, \.escapeKey),
        .row("family", .boolean, true, \.family),
    ]

    /// Every key, those read by code of their own (where the popup is, its region tree) first.
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
    ] + options.map(\.field)

    /// The keys `[defaults]` takes.
    public static var inheritedKeys: [String] { options.map(\.key) }
    /// The keys a `[[popup]]` table takes.
    public static var popupKeys: [String] { all.map(\.key) }

    private static func field(_ key: String, _ type: String, _ defaultValue: String?, runtime: Bool = false) -> PopupField {
        PopupField(key: key, type: type, defaultValue: defaultValue, inherited: false, runtime: runtime)
    }
}

/// One key `[defaults]` takes: its value's kind, its default, and where in `PopupSpec` it
/// goes. Typed where it is written (`row`), plain literals everywhere it is read. A class:
/// the rows are gone through for every popup read and merged, and a row as a value was
/// copied each time, its strings, shape and closures retained and released one by one
/// (`clickawayctl check` of 500 popups, callgrind: 4,400 instructions a popup more;
/// BENCHMARKS.md, issue 44's redesign).
public final class PopupOption: Sendable {
    /// How `clickawayctl open` takes the key: `--name`, with its help.
    public struct OpenOption: Sendable {
        public let name: String
        public let help: String
        public let valueName: String?

        public static func option(_ name: String, _ help: String, valueName: String? = nil) -> OpenOption {
            OpenOption(name: name, help: help, valueName: valueName)
        }
    }

    public let key: String
    public let shape: PopupValueShape
    /// The built-in value, as a popup that sets nothing (and `[defaults]` nothing) has it.
    public let defaultValue: PopupLiteral
    /// nil: only the configuration sets it.
    public let openOption: OpenOption?
    /// Sets the popup's value from a literal of `shape`.
    private let assign: @Sendable (PopupLiteral, inout PopupSpec) -> Void

    private init(key: String, shape: PopupValueShape, defaultValue: PopupLiteral, openOption: OpenOption?,
                 assign: @escaping @Sendable (PopupLiteral, inout PopupSpec) -> Void) {
        self.key = key
        self.shape = shape
        self.defaultValue = defaultValue
        self.openOption = openOption
        self.assign = assign
    }

    public static func row<Value>(_ key: String, _ kind: PopupValueKind<Value>, _ defaultValue: Value,
                                  _ path: WritableKeyPath<PopupSpec, Value> & Sendable, open: OpenOption? = nil) -> PopupOption {
        PopupOption(key: key, shape: kind.shape, defaultValue: kind.literal(defaultValue), openOption: open) { literal, popup in
            if let value = kind.value(literal) { popup[keyPath: path] = value }
        }
    }

    /// What `PopupFields.all` says of it, made from the row.
    public var field: PopupField {
        PopupField(key: key, type: shape.type, defaultValue: "`\(defaultValue.toml)`", inherited: true, runtime: openOption != nil)
    }

    public func apply(_ literal: PopupLiteral, to popup: inout PopupSpec) { assign(literal, &popup) }
}

/// A value as a file or a request writes it: what the readers (TOML, JSON, the command line)
/// make of a popup key's value by its shape, before the key's kind turns it into its type.
public indirect enum PopupLiteral: Hashable, Sendable {
    case boolean(Bool)
    case integer(Int64)
    case string(String)
    case array([PopupLiteral])
    case table([String: PopupLiteral])

    /// As TOML writes it: `true`, `150`, `"close"`, `[1, 2, 3]`, `{ command = ["a"] }`.
    public var toml: String {
        switch self {
        case .boolean(let b): "\(b)"
        case .integer(let n): "\(n)"
        case .string(let s): "\"\(s)\""
        case .array(let items): "[" + items.map(\.toml).joined(separator: ", ") + "]"
        case .table(let pairs): "{ " + pairs.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value.toml)" }.joined(separator: ", ") + " }"
        }
    }
}

/// The few shapes a popup key's value takes: each reader knows these, not the keys.
public enum PopupValueShape: Sendable, Equatable {
    case boolean
    /// One of these strings.
    case choice([String])
    case integer(ClosedRange<Int64>)
    /// Pointer buttons 1 to 31, at least one, none twice.
    case buttons
    /// One of these strings, or `{ command = ["program", "argument", ...] }`.
    case action([String])

    /// `PopupField.type`: what clickaway.toml(5) must show.
    var type: String {
        switch self {
        case .boolean: "boolean"
        case .choice(let names): names.map { "`\"\($0)\"`" }.joined(separator: ", ")
        case .integer(let range): "integer, \(range.lowerBound) to \(range.upperBound)"
        case .buttons: "array of 1-31"
        case .action(let names): (names.map { "`\"\($0)\"`" } + ["`{ command = [...] }`"]).joined(separator: ", ")
        }
    }
}

/// A key's value: its shape, and how a literal of that shape becomes the value and back.
public struct PopupValueKind<Value>: Sendable {
    let shape: PopupValueShape
    /// nil only for a literal not of `shape`, which the readers never make.
    let value: @Sendable (PopupLiteral) -> Value?
    let literal: @Sendable (Value) -> PopupLiteral
}

extension PopupValueKind where Value == Bool {
    static var boolean: Self {
        Self(shape: .boolean, value: { if case .boolean(let b) = $0 { b } else { nil } }, literal: PopupLiteral.boolean)
    }
}

extension PopupValueKind where Value == Int64 {
    static func integer(_ range: ClosedRange<Int64>) -> Self {
        Self(shape: .integer(range), value: { if case .integer(let n) = $0 { n } else { nil } }, literal: PopupLiteral.integer)
    }
}

extension PopupValueKind where Value == ButtonSet {
    static var buttons: Self {
        Self(shape: .buttons, value: { literal in
            guard case .array(let items) = literal else { return nil }
            return ButtonSet(items.compactMap { if case .integer(let n) = $0 { Int(n) } else { nil } })
        }, literal: { .array($0.buttons.map { .integer(Int64($0)) }) })
    }
}

extension PopupValueKind where Value == DismissAction {
    /// The spelling of each action: `"close"`, `"unmap"`, `"kill"`, `{ command = [...] }`.
    static var dismissAction: Self {
        let named: [(String, DismissAction)] = [("close", .close), ("unmap", .unmap), ("kill", .kill)]
        return Self(shape: .action(named.map(\.0)), value: { literal in
            switch literal {
            case .string(let name): return named.first { $0.0 == name }?.1
            case .table(let pairs):
                guard case .array(let items)? = pairs["command"] else { return nil }
                return .command(items.compactMap { if case .string(let s) = $0 { s } else { nil } })
            default: return nil
            }
        }, literal: { action in
            if case .command(let argv) = action { return .table(["command": .array(argv.map(PopupLiteral.string))]) }
            // Every other action has its name.
            return .string(named.first { $0.1 == action }!.0)
        })
    }
}

extension PopupValueKind {
    static func choice(of _: Value.Type) -> Self where Value: RawRepresentable & CaseIterable & Sendable, Value.RawValue == String {
        Self(shape: .choice(Value.allCases.map(\.rawValue)), value: { if case .string(let s) = $0 { Value(rawValue: s) } else { nil } },
             literal: { .string($0.rawValue) })
    }
}

/// The `[defaults]` keys a table, a request or the built-in defaults set, each as read.
public struct PopupOptions: Hashable, Sendable {
    private var values: [String: PopupLiteral]

    public init(_ values: [String: PopupLiteral] = [:]) { self.values = values }

    public static let builtIn = PopupOptions(Dictionary(uniqueKeysWithValues: PopupFields.options.map { ($0.key, $0.defaultValue) }))

    public subscript(key: String) -> PopupLiteral? {
        get { values[key] }
        set { values[key] = newValue }
    }

    /// Keys set here win over `base`.
    public func over(_ base: PopupOptions) -> PopupOptions {
        PopupOptions(values.merging(base.values) { mine, _ in mine })
    }

    public func applied(to popup: PopupSpec) -> PopupSpec {
        var result = popup
        for row in PopupFields.options {
            if let value = values[row.key] { row.apply(value, to: &result) }
        }
        return result
    }

    /// What a popup read with the built-in values (`PopupSpec`'s initializer's) inherits from
    /// these: the keys set here to another value.
    public var inheritance: PopupInheritance {
        PopupInheritance(changed: PopupFields.options.compactMap { row in
            values[row.key].flatMap { $0 == row.defaultValue ? nil : (row, $0) }
        })
    }

    /// `popup` with these keys, and `inherited`'s where these set none. `popup` has the
    /// built-in values (it was made by `PopupSpec`'s initializer, whose defaults are the
    /// rows': PopupFieldDefaultsTests), so only what `[defaults]` changes is set, and a popup
    /// that sets none of these keys, where `[defaults]` changes none, is taken as it is.
    /// `clickawayctl check` of 500 such popups, callgrind: 3,300 instructions a popup more
    /// when every popup took every inherited literal through its row (BENCHMARKS.md, issue
    /// 44's redesign).
    public func applied(to popup: PopupSpec, inheriting inherited: PopupInheritance) -> PopupSpec {
        var result = popup
        for (row, value) in inherited.changed where values.isEmpty || values[row.key] == nil {
            row.apply(value, to: &result)
        }
        return values.isEmpty ? result : applied(to: result)
    }
}

/// What every popup of a configuration inherits from `[defaults]` beyond the built-in
/// values (`PopupOptions.inheritance`), found once for all of them.
public struct PopupInheritance: Sendable {
    let changed: [(row: PopupOption, value: PopupLiteral)]
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
