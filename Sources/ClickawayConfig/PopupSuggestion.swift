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
    /// Whether no window manager manages it (an override-redirect window: menus, bar popups).
    public var overrideRedirect: Bool

    public init(client: String, frame: String?, rect: Rect, properties: WindowMatch.Properties, acceptsDelete: Bool,
                overrideRedirect: Bool = false) {
        self.client = client
        self.frame = frame
        self.rect = rect
        self.properties = properties
        self.acceptsDelete = acceptsDelete
        self.overrideRedirect = overrideRedirect
    }

    /// A Wayland window's app_id when it has one (sway); else WM_CLASS when the window has it; else its title (dzen2's body, many override-redirect
    /// windows have no class); else its type. nil when there is nothing to match.
    public var match: WindowMatch? {
        if let appId = properties.appId, !appId.isEmpty { return WindowMatch(appId: appId) }
        if properties.windowClass != nil || properties.instance != nil {
            return WindowMatch(windowClass: properties.windowClass, instance: properties.instance, type: distinctiveType)
        }
        if let title = properties.title, !title.isEmpty { return WindowMatch(title: title, type: distinctiveType) }
        return distinctiveType.map { WindowMatch(type: $0) }
    }

    /// A program's popups usually share its class with its main window; a window type other
    /// than "normal" keeps the match off that main window.
    private var distinctiveType: String? {
        properties.types.first(where: WindowMatch.knownTypes.contains).flatMap { $0 == "normal" ? nil : $0 }
    }

    /// The class (else the instance, else the title) lower case, as a popup name: `[A-Za-z0-9_-]+`.
    public var name: String {
        for candidate in [properties.appId, properties.windowClass, properties.instance, properties.title].compactMap({ $0 }) {
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

    /// "close" asks the program through WM_DELETE_WINDOW. A window that does not take that
    /// message could only be unmapped, which leaves an override-redirect program running
    /// unseen (dzen2 -p): "kill" ends it.
    public var dismiss: String { acceptsDelete ? "close" : overrideRedirect ? "kill" : "unmap" }

    public var toml: String {
        var header = "# picked window \(client) at \(rect.x),\(rect.y) \(rect.width)x\(rect.height)"
        if let frame { header += " (its frame, \(frame))" }
        if let title = properties.title { header += ", title \(tomlString(title))" }
        guard let match else {
            return [header, "# it has no class, title or type that a [[popup]] could match; make it a popup by its id:",
                    "#   clickawayctl open --window \(client)"].joined(separator: "\n")
        }
        var lines = [header, "[[popup]]", "name = \(tomlString(name))", "window = \(inlineTable(match))"]
        if let title = properties.title, match.title == nil {
            var withTitle = match
            withTitle.title = title
            lines += ["# to match the title as well:", "# window = \(inlineTable(withTitle))"]
        }
        if !acceptsDelete {
            lines.append(overrideRedirect
                ? "# an override-redirect window that does not accept WM_DELETE_WINDOW: \"kill\" ends its program"
                : "# the window does not accept WM_DELETE_WINDOW, so \"close\" could only unmap it")
        }
        lines.append("dismiss = \(tomlString(dismiss))")
        return lines.joined(separator: "\n")
    }

    public var json: JSON {
        var matchPairs: [(String, JSON)] = []
        if let a = match?.appId { matchPairs.append(("app_id", .string(a))) }
        if let c = match?.windowClass { matchPairs.append(("class", .string(c))) }
        if let i = match?.instance { matchPairs.append(("instance", .string(i))) }
        if let t = match?.title { matchPairs.append(("title", .string(t))) }
        if let t = match?.type { matchPairs.append(("type", .string(t))) }
        // "app_id" only for a Wayland window (X11 windows have none).
        return .object([
            ("name", .string(name)),
            ("window", .string(client)),
            ("frame", frame.map(JSON.string) ?? .null),
            ("rect", .array([rect.x, rect.y, rect.width, rect.height].map { .int(Int64($0)) })),
        ] + (properties.appId.map { [("app_id", JSON.string($0))] } ?? []) + [
            ("class", properties.windowClass.map(JSON.string) ?? .null),
            ("instance", properties.instance.map(JSON.string) ?? .null),
            ("title", properties.title.map(JSON.string) ?? .null),
            ("types", .array(properties.types.map(JSON.string))),
            ("match", match == nil ? .null : .object(matchPairs)),
            ("override_redirect", .bool(overrideRedirect)),
            ("dismiss", .string(dismiss)),
        ])
    }

    private func inlineTable(_ m: WindowMatch) -> String {
        let pairs = [("app_id", m.appId), ("class", m.windowClass), ("instance", m.instance), ("title", m.title), ("type", m.type)]
            .compactMap { key, value in value.map { "\(key) = \(tomlString($0))" } }
        return "{ " + pairs.joined(separator: ", ") + " }"
    }
}
