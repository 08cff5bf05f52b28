public import ClickawayCore
public import ClickawayJSON
internal import ClickawayTOML

/// The `[[popup]]` block that matches a window `clickawayctl pick` found.
public struct PopupSuggestion: Sendable {
    /// The window a match looks at, as xprop writes it (`0x1a00022`).
    public var client: String
    /// Its window manager's frame, when it has one.
    public var frame: String?
    /// Where it is on screen: what the popup's rectangle will be.
    public var rect: Rect
    public var properties: WindowMatch.Properties
    /// Whether it takes WM_DELETE_WINDOW (`dismiss = "close"`).
    public var acceptsDelete: Bool

    public init(client: String, frame: String?, rect: Rect, properties: WindowMatch.Properties, acceptsDelete: Bool) {
        self.client = client
        self.frame = frame
        self.rect = rect
        self.properties = properties
        self.acceptsDelete = acceptsDelete
    }

    public var match: WindowMatch {
        WindowMatch(windowClass: properties.windowClass, instance: properties.instance, type: distinctiveType)
    }

    /// A program's popups usually share its class with its main window; a window type other
    /// than "normal" keeps the match off that main window.
    private var distinctiveType: String? {
        properties.types.first(where: WindowMatch.knownTypes.contains).flatMap { $0 == "normal" ? nil : $0 }
    }

    /// The class (else the instance) lower case, as a popup name: `[A-Za-z0-9_-]+`.
    public var name: String {
        for candidate in [properties.windowClass, properties.instance].compactMap({ $0 }) {
            var name = ""
            for scalar in candidate.lowercased().unicodeScalars {
                if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-" {
                    name.unicodeScalars.append(scalar)
                } else if !name.hasSuffix("-") {
                    name += "-"
                }
            }
            let trimmed = String(name.drop { $0 == "-" }.reversed().drop { $0 == "-" }.reversed())
            if !trimmed.isEmpty { return trimmed }
        }
        return "picked"
    }

    /// "close" asks the program through WM_DELETE_WINDOW; a window that does not take that
    /// message could only be unmapped, so say so.
    public var dismiss: String { acceptsDelete ? "close" : "unmap" }

    public var toml: String {
        var header = "# picked window \(client) at \(rect.x),\(rect.y) \(rect.width)x\(rect.height)"
        if let frame { header += " (its frame, \(frame))" }
        if let title = properties.title { header += ", title \(tomlString(title))" }
        var lines = [header, "[[popup]]", "name = \(tomlString(name))", "window = \(inlineTable(match))"]
        if let title = properties.title {
            var withTitle = match
            withTitle.title = title
            lines += ["# to match the title as well:", "# window = \(inlineTable(withTitle))"]
        }
        if !acceptsDelete { lines.append("# the window does not accept WM_DELETE_WINDOW, so \"close\" could only unmap it") }
        lines.append("dismiss = \(tomlString(dismiss))")
        return lines.joined(separator: "\n")
    }

    public var json: JSON {
        var matchPairs: [(String, JSON)] = []
        if let c = match.windowClass { matchPairs.append(("class", .string(c))) }
        if let i = match.instance { matchPairs.append(("instance", .string(i))) }
        if let t = match.type { matchPairs.append(("type", .string(t))) }
        return .object([
            ("name", .string(name)),
            ("window", .string(client)),
            ("frame", frame.map(JSON.string) ?? .null),
            ("rect", .array([rect.x, rect.y, rect.width, rect.height].map { .int(Int64($0)) })),
            ("class", properties.windowClass.map(JSON.string) ?? .null),
            ("instance", properties.instance.map(JSON.string) ?? .null),
            ("title", properties.title.map(JSON.string) ?? .null),
            ("types", .array(properties.types.map(JSON.string))),
            ("match", .object(matchPairs)),
            ("dismiss", .string(dismiss)),
        ])
    }

    private func inlineTable(_ m: WindowMatch) -> String {
        let pairs = [("class", m.windowClass), ("instance", m.instance), ("title", m.title), ("type", m.type)]
            .compactMap { key, value in value.map { "\(key) = \(tomlString($0))" } }
        return "{ " + pairs.joined(separator: ", ") + " }"
    }
}
