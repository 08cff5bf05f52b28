/// `--help`, the usage line of errors, in 80 columns.
enum HelpText {
    static let width = 80
    /// Where descriptions start in the OPTIONS, ARGUMENTS and SUBCOMMANDS lists.
    static let descriptionColumn = 26

    static func help(_ node: CommandNode) -> String {
        let configuration = node.configuration
        var sections: [String] = []
        if !configuration.abstract.isEmpty {
            sections.append(wrap("OVERVIEW: " + configuration.abstract, indent: 0))
        }
        if !configuration.discussion.isEmpty {
            sections.append(configuration.discussion.split(separator: "\n", omittingEmptySubsequences: false)
                .map { wrap(String($0), indent: 0) }.joined(separator: "\n\n"))
        }
        sections.append("USAGE: " + fill(usage(node), indent: 7, firstColumn: 7))

        let definitions = node.definitions
        let arguments = definitions.filter { !$0.isNamed }
        if !arguments.isEmpty {
            sections.append("ARGUMENTS:\n" + arguments.map { row($0.synopsis, describe($0)) }.joined(separator: "\n"))
        }
        var options = definitions.filter(\.isNamed)
            .map { row($0.listing, describe($0)) }
        if node.isRoot, !configuration.version.isEmpty { options.append(row("-V, --version", versionHelp)) }
        options.append(row("-h, --help", helpHelp))
        sections.append("OPTIONS:\n" + options.joined(separator: "\n"))

        if node.isRoot, !configuration.exitStatuses.isEmpty {
            sections.append("EXIT STATUS:\n" + configuration.exitStatuses.map { row(String($0.status), $0.meaning) }.joined(separator: "\n"))
        }
        if !node.subcommands.isEmpty {
            sections.append("SUBCOMMANDS:\n" + node.subcommands.map { row($0.name, $0.configuration.abstract) }.joined(separator: "\n")
                            + "\n\n  See '\(node.fullName) help <subcommand>' for detailed help.")
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    static let versionHelp = "Show the version."
    static let helpHelp = "Show help information."

    /// `clickaway [--config <file>] …`, `clickawayctl <subcommand>`: the elements.
    static func usage(_ node: CommandNode) -> [String] {
        if !node.subcommands.isEmpty { return [node.fullName, "<subcommand>"] }
        return [node.fullName] + node.definitions.map(usageElement)
    }

    private static func usageElement(_ definition: ArgumentDefinition) -> String {
        let repeated = definition.isRepeated ? " ..." : ""
        let element = definition.synopsis + repeated
        return definition.isOptional ? "[\(element)]" : element
    }

    /// The help text with what the values may be and the default.
    static func describe(_ definition: ArgumentDefinition) -> String {
        var parts = [definition.help]
        if !definition.allowedValues.isEmpty {
            parts.append("(values: \(definition.allowedValues.joined(separator: ", ")))")
        }
        if let value = definition.defaultDescription { parts.append("(default: \(value))") }
        return parts.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// "  label                   description", the description wrapped under itself.
    private static func row(_ label: String, _ description: String) -> String {
        let start = "  " + label
        let body = wrap(description, indent: descriptionColumn, firstColumn: descriptionColumn)
        guard start.count + 2 <= descriptionColumn else {
            return start + "\n" + String(repeating: " ", count: descriptionColumn) + body
        }
        return start + String(repeating: " ", count: descriptionColumn - start.count) + body
    }

    /// Words filled into `width` columns. The first line starts at column `firstColumn`
    /// (what is before it is the caller's), the others at `indent`, padded.
    static func wrap(_ text: String, indent: Int, firstColumn: Int = 0) -> String {
        fill(text.split(separator: " ").map(String.init), indent: indent, firstColumn: firstColumn)
    }

    /// `wrap` for units that stay on one line each, like a usage line's `[--name <value>]`.
    static func fill(_ units: [String], indent: Int, firstColumn: Int = 0) -> String {
        var lines: [String] = []
        var line = ""
        for word in units {
            let room = width - (lines.isEmpty ? firstColumn : indent)
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= room {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        lines.append(line)
        let padding = String(repeating: " ", count: indent)
        return lines.enumerated().map { $0.offset == 0 ? $0.element : padding + $0.element }.joined(separator: "\n")
    }
}
