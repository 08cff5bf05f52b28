internal import ClickawaySystem

/// One run of a program: finds the command the words name, answers `--help`, `--version`
/// and the packaging entries, parses, validates and runs; returns the exit status.
struct CommandLineProgram {
    let root: CommandNode

    init(root: any ParsableCommand.Type) {
        self.root = CommandNode(root)
    }

    func run(_ words: [String]) -> Int32 {
        if let status = packagingEntry(words) { return status }

        var node = root
        var rest = words[...]
        while let first = rest.first, let subcommand = node.subcommand(named: first) {
            node = subcommand
            rest = rest.dropFirst()
        }
        if !node.subcommands.isEmpty, rest.first == "help" {
            var helped = node
            for word in rest.dropFirst() {
                guard let subcommand = helped.subcommand(named: word) else {
                    return usageError(unknownCommand(word, in: helped), node: helped)
                }
                helped = subcommand
            }
            print(HelpText.help(helped), terminator: "")
            return 0
        }
        let options = rest.prefix { $0 != "--" }
        if options.contains("-h") || options.contains("--help") {
            print(HelpText.help(node), terminator: "")
            return 0
        }
        if node.isRoot, !node.configuration.version.isEmpty, options.contains("--version") || options.contains("-V") {
            print(node.configuration.version)
            return 0
        }
        if !node.subcommands.isEmpty, rest.isEmpty {
            print(HelpText.help(node), terminator: "")
            return 0
        }

        // A word where a subcommand goes that names none (a command that groups subcommands
        // takes no words of its own).
        if !node.subcommands.isEmpty, let first = rest.first, !CommandLineParser.isOption(first),
           !node.definitions.contains(where: { !$0.isNamed }) {
            return usageError(unknownCommand(first, in: node), node: node)
        }

        var command = node.type.init()
        let bindings = Bindings(command)
        var parser = CommandLineParser(bindings: bindings)
        if node.isRoot, !node.configuration.version.isEmpty { parser.otherSpellings.append("--version") }
        do {
            try parser.parse(Array(rest))
            for var group in bindings.groups { try group.validate() }
            try command.validate()
            try command.run()
            return 0
        } catch let error as UsageError {
            return usageError(error.message, node: node)
        } catch let error as ValidationError {
            return usageError(error.message, node: node)
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch {
            StandardStreams.error("Error: \(error)")
            return 1
        }
    }

    /// "Unknown command 'stauts'; did you mean 'status'?"
    private func unknownCommand(_ word: String, in node: CommandNode) -> String {
        "Unknown command '\(word)'" + Suggestion.phrase(word, node.subcommands.map(\.name) + ["help"])
    }

    private func usageError(_ message: String, node: CommandNode) -> Int32 {
        StandardStreams.error("""
            Error: \(message)
            Usage: \(HelpText.fill(HelpText.usage(node), indent: 7, firstColumn: 7))
              See '\(node.fullName) --help' for more information.
            """)
        return usageErrorStatus
    }

    /// What `make install` and the shells call: nil when the words are none of them.
    /// `--generate-completion-script SHELL`, `--generate-manual [--date YYYY-MM-DD]`, and
    /// `---completion NAME`, which the scripts run for a custom completion's words.
    private func packagingEntry(_ words: [String]) -> Int32? {
        switch words.first {
        case "--generate-completion-script":
            guard words.count == 2, let shell = Shell(rawValue: words[1]) else {
                return usageError("--generate-completion-script takes one of \(Shell.allCases.map(\.rawValue).joined(separator: ", "))",
                                  node: root)
            }
            print(CompletionScript.script(for: root, shell: shell), terminator: "")
            return 0
        case "--generate-manual":
            let date: ManualDate?
            switch words.count {
            case 1: date = ManualDate.today()
            case 3 where words[1] == "--date": date = ManualDate(words[2])
            default: date = nil
            }
            guard let date else { return usageError("--generate-manual takes --date YYYY-MM-DD or nothing", node: root) }
            print(ManualPage.page(for: root, date: date), terminator: "")
            return 0
        case "---completion":
            if words.count >= 2 { CompletionScript.customWords(words[1], in: root).forEach { print($0) } }
            return 0
        default:
            return nil
        }
    }
}
