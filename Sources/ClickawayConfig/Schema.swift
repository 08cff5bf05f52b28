internal import ClickawayCore
internal import ClickawayTOML

/// The keys the configuration accepts, table by table.
enum Schema {
    static let topLevelKeys = ["settings", "defaults", "popup", "exclude"]
    static let settingsKeys = SettingFields.keys
    /// The keys a popup inherits from `[defaults]`, and all a popup takes (`PopupFields`).
    static let inheritedKeys = PopupFields.inheritedKeys
    static let popupKeys = PopupFields.popupKeys
    static let regionKeys = ["name", "rect", "slop", "passthrough", "redirect", "clip", "hidden", "enabled", "region"]
    /// Anchors and exclusions: a window or a rectangle, nothing else.
    static let areaKeys = ["window", "rect", "output"]
    static let windowKeys = ["class", "instance", "title", "title_glob", "type", "app_id"]

    /// Coordinates, sizes and slop stay within ±2^20 px (a million, far beyond any screen),
    /// so no sum of them along the deepest region tree can overflow 32 bits.
    static let coordinateLimit = 1 << 20
    static let coordinates = -coordinateLimit...coordinateLimit
    static let sizes = 0...coordinateLimit
}

/// Maps one file's TOML onto the core model, reporting every problem on the way.
extension ConfigReader {
    /// `pause` is called between popups and exclusions (see `ConfigLoader.load`).
    func fragment(from root: TOMLValue, pause: () -> Void = {}) -> ConfigFragment {
        let document = TableNode(value: root, human: ModelPath())
        checkKeys(of: document, allowed: Schema.topLevelKeys)
        var fragment = ConfigFragment()
        if let node = document["settings"], let settings = table(node, allowed: Schema.settingsKeys) {
            fragment.settings = self.settings(settings)
        }
        if let node = document["defaults"], let defaults = table(node, allowed: Schema.inheritedKeys) {
            fragment.defaults = options(defaults)
        }
        if let node = document["popup"] {
            fragment.popups = tables(node, expected: "an array of tables ([[popup]])").compactMap {
                pause()
                return popup($0)
            }
        }
        if let node = document["exclude"] {
            fragment.exclusions = tables(node, expected: "an array of tables ([[exclude]])").compactMap {
                pause()
                return exclusion($0)
            }
        }
        return fragment
    }

    // MARK: Tables

    private func settings(_ t: TableNode) -> SettingsOverrides {
        SettingsOverrides(backend: t["backend"].flatMap(backend),
                          logLevel: t["log_level"].flatMap { choice($0, of: LogLevel.self) },
                          notify: t["notify"].flatMap(bool))
    }

    /// The `[defaults]` keys a table sets, read by their rows in the rows' order. Looked up by
    /// `Schema.inheritedKeys` (the rows' keys, in their order), the row taken only for a key
    /// the table has: for every popup, a row taken for each key retained and released it
    /// (64 KiB of `[[popup]]`, callgrind: 360 instructions a popup more).
    private func options(_ t: TableNode) -> PopupOptions {
        var options = PopupOptions()
        for (index, key) in Schema.inheritedKeys.enumerated() {
            if let node = t[key] { options[key] = literal(node, PopupFields.options[index].shape) }
        }
        return options
    }

    /// nil for a popup without a usable name, once its other errors are reported: the file
    /// has errors then, and such a popup takes no part in the checks across popups.
    private func popup(_ element: TableElement) -> PopupDraft? {
        let writtenName = element.table["name"]?.string
        let step: PathStep = writtenName.map { .popup(index: element.index, name: $0) }
            ?? .table("popup #\(element.index + 1)")
        let t = TableNode(value: element.table, human: ModelPath([step]))
        checkKeys(of: t, allowed: Schema.popupKeys)
        if let node = t["name"] {
            name(node)
        } else {
            report("missing required key \"name\"", at: t)
        }
        // The popup is its own root region: the region keys that make sense there apply to it.
        var root = RegionSpec(rect: Self.placeholderRect)
        readRegionBody(t, into: &root, header: "popup.region")
        let spec = PopupSpec(
            name: writtenName ?? "",
            parent: t["parent"].flatMap(string),
            source: area(t) ?? .rect(Self.placeholderRect, output: nil),
            anchors: t["anchors"].map { anchors($0, popup: t.human) } ?? [],
            passthrough: root.passthrough, slop: root.slop, clip: root.clip, redirect: root.redirect,
            regions: root.children)
        let options = options(t)
        return writtenName == nil ? nil : PopupDraft(spec: spec, options: options, index: element.index)
    }

    /// `header`: how these regions' `[[...]]` header is written, for messages.
    private func regions(_ node: Node, parent: ModelPath, header: String) -> [RegionSpec] {
        tables(node, expected: "an array of tables ([[\(header)]])").map { element in
            let human = parent.appending(.region(index: element.index, name: element.table["name"]?.string))
            let t = TableNode(value: element.table, human: human)
            checkKeys(of: t, allowed: Schema.regionKeys)
            var region = RegionSpec(rect: Self.placeholderRect)
            if let node = t["name"] { region.name = name(node) }
            if let node = t["rect"] {
                if let rect = rect(node) { region.rect = rect }
            } else {
                report("missing required key \"rect\"", at: t)
            }
            if let node = t["hidden"], let hidden = bool(node) { region.hidden = hidden }
            if let node = t["enabled"], let enabled = bool(node) { region.enabled = enabled }
            readRegionBody(t, into: &region, header: header + ".region")
            return region
        }
    }

    /// The keys a popup shares with its regions, and the child regions.
    private func readRegionBody(_ t: TableNode, into region: inout RegionSpec, header: String) {
        if let node = t["slop"], let slop = slop(node) { region.slop = slop }
        if let node = t["passthrough"], let passthrough = bool(node) { region.passthrough = passthrough }
        if let node = t["redirect"] { region.redirect = string(node) }
        if let node = t["clip"], let clip = bool(node) { region.clip = clip }
        if region.passthrough && region.redirect != nil, let second = later("passthrough", "redirect", in: t) {
            report("passthrough and redirect exclude each other", atKeyOf: second, human: t.human)
        }
        if let node = t["region"] { region.children = regions(node, parent: t.human, header: header) }
    }

    private func anchors(_ node: Node, popup: ModelPath) -> [AreaSource] {
        tables(node, expected: "an array of anchors like [{ rect = [x, y, width, height] }]").compactMap { element in
            let t = TableNode(value: element.table, human: popup.appending(.anchor(index: element.index)))
            checkKeys(of: t, allowed: Schema.areaKeys)
            return area(t)
        }
    }

    private func exclusion(_ element: TableElement) -> ExclusionSpec? {
        let t = TableNode(value: element.table, human: ModelPath([.exclude(index: element.index)]))
        checkKeys(of: t, allowed: Schema.areaKeys)
        return area(t).map(ExclusionSpec.init)
    }

    /// `window = { ... }` or `rect = [...]` with an optional `output`: where a popup, anchor or exclusion is.
    private func area(_ t: TableNode) -> AreaSource? {
        let window = t["window"], rect = t["rect"], output = t["output"]
        if window != nil && rect != nil {
            if let second = later("window", "rect", in: t) {
                report("window and rect exclude each other; set one of them", atKeyOf: second, human: t.human)
            }
            return nil
        }
        if let window {
            if let output { report("output only applies to rect, not to window", atKeyOf: output.value, human: t.human) }
            return windowMatch(window).map(AreaSource.window)
        }
        guard let rect else {
            report("missing window = { ... } or rect = [x, y, width, height]", at: t)
            return nil
        }
        let screenOutput = output.flatMap(string)
        return self.rect(rect).map { .rect($0, output: screenOutput) }
    }

    private func windowMatch(_ node: Node) -> WindowMatch? {
        guard let t = table(node, expected: "a window match like { class = \"...\" }", allowed: Schema.windowKeys)
        else { return nil }
        if t.isEmpty {
            report("expected at least one of \(Schema.windowKeys.joined(separator: ", "))", at: t)
        }
        return WindowMatch(windowClass: t["class"].flatMap(string), instance: t["instance"].flatMap(string),
                           title: t["title"].flatMap(string), titleGlob: t["title_glob"].flatMap(string),
                           type: t["type"].flatMap { choice($0, among: WindowMatch.knownTypes) },
                           appId: t["app_id"].flatMap(string))
    }

    // MARK: Values

    private func backend(_ node: Node) -> Backend? { choice(node, of: Backend.self) }

    /// `[A-Za-z0-9_-]+`: names appear in redirect paths (`popup.region`) and on command lines.
    /// A bad name is still returned, so references to it do not report a second error.
    @discardableResult
    private func name(_ node: Node) -> String? {
        guard let s = string(node) else { return nil }
        if !isValidPopupName(s) {
            report("expected a name made of letters, digits, \"_\" and \"-\", found \"\(s)\"", at: node)
        }
        return s
    }

    private func rect(_ node: Node) -> Rect? {
        let form = "[x, y, width, height]"
        // The count first: a huge array is refused without reading its elements.
        guard !node.value.isArray || node.value.count == 4 else {
            report("rect needs 4 integers \(form), found \(node.value.count)", at: node)
            return nil
        }
        guard let items = array(node, expected: "an array of 4 integers \(form)") else { return nil }
        let x = integer(items[0], of: node, in: Schema.coordinates), y = integer(items[1], of: node, in: Schema.coordinates)
        let width = integer(items[2], of: node, in: Schema.sizes), height = integer(items[3], of: node, in: Schema.sizes)
        guard let x, let y, let width, let height else { return nil }
        return Rect(x: Int32(x), y: Int32(y), width: Int32(width), height: Int32(height))
    }

    /// `slop = N` or `slop = [top, right, bottom, left]`.
    private func slop(_ node: Node) -> Insets? {
        let sizes = Schema.sizes
        if node.value.kind == .integer {
            return integer(node, in: sizes).map { Insets(all: Int32($0)) }
        }
        let form = "[top, right, bottom, left]"
        guard !node.value.isArray || node.value.count == 4 else {
            report("slop needs 4 integers \(form), found \(node.value.count)", at: node)
            return nil
        }
        guard let items = array(node, expected: "a non-negative integer or \(form)") else { return nil }
        let sides = items.map { integer($0, of: node, in: sizes) }
        guard let top = sides[0], let right = sides[1], let bottom = sides[2], let left = sides[3] else { return nil }
        return Insets(top: Int32(top), right: Int32(right), bottom: Int32(bottom), left: Int32(left))
    }

    /// A `[defaults]` key's value, by the shape its row gives.
    private func literal(_ node: Node, _ shape: PopupValueShape) -> PopupLiteral? {
        switch shape {
        case .boolean: bool(node).map(PopupLiteral.boolean)
        case .choice(let names): choice(node, among: names).map(PopupLiteral.string)
        case .integer(let range): integer(node, in: Int(range.lowerBound)...Int(range.upperBound)).map { .integer(Int64($0)) }
        case .buttons: buttons(node)
        case .action(let names): action(node, names)
        }
    }

    private func buttons(_ node: Node) -> PopupLiteral? {
        guard let items = array(node, expected: "an array of button numbers like [1, 2, 3]") else { return nil }
        guard !items.isEmpty else {
            report("expected at least one button, found an empty array", at: node)
            return nil
        }
        var seen: [Int] = []
        for item in items {
            guard let button = integer(item, of: node, in: 1...31) else { continue }
            if seen.contains(button) {
                report("button \(button) is listed twice", at: element(item, of: node))
            } else {
                seen.append(button)
            }
        }
        return .array(seen.map { .integer(Int64($0)) })
    }

    /// One of `names` (`"close" | "unmap" | "kill"`) or `{ command = ["argv0", ...] }`.
    private func action(_ node: Node, _ names: [String]) -> PopupLiteral? {
        let expected = names.map { "\"\($0)\"" }.joined(separator: ", ") + " or { command = [...] }"
        if node.value.kind == .string {
            return choice(node, among: names, expected: expected).map(PopupLiteral.string)
        }
        guard let t = table(node, expected: expected, allowed: ["command"]) else { return nil }
        guard let command = t["command"] else {
            report("missing required key \"command\" (command = [\"program\", \"argument\", ...])", at: t)
            return nil
        }
        guard let items = array(command, expected: "an array of strings [\"program\", \"argument\", ...]")
        else { return nil }
        guard let program = items.first else {
            report("expected at least the program to run, found an empty array", at: command)
            return nil
        }
        let argv = items.compactMap { string(element($0, of: command)) }
        guard argv.count == items.count else { return nil }
        guard !argv[0].isEmpty else {
            report("the program name must not be empty", at: element(program, of: command))
            return nil
        }
        return .table(["command": .array(argv.map(PopupLiteral.string))])
    }

    private static let placeholderRect = Rect(x: 0, y: 0, width: 0, height: 0)
}
