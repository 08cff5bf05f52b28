/// The shells `--generate-completion-script` writes for.
enum Shell: String, CaseIterable {
    case bash, zsh, fish
}

/// Completion scripts from the definitions `--help` prints: subcommands, options, enum
/// values, files, and the words of custom completions, which the scripts get by running
/// `PROGRAM ---completion NAME` when Tab is pressed. Programs have one level of subcommands.
enum CompletionScript {
    static func script(for root: CommandNode, shell: Shell) -> String {
        switch shell {
        case .bash: bash(root)
        case .zsh: zsh(root)
        case .fish: fish(root)
        }
    }

    /// The words of the custom completion `name`, for `---completion NAME`.
    static func customWords(_ name: String, in root: CommandNode) -> [String] {
        for node in root.all {
            for definition in node.definitions {
                if case .custom(name, let words) = definition.completion { return words() }
            }
        }
        return []
    }

    private static func header(_ root: CommandNode, _ shell: Shell) -> String {
        "# \(shell.rawValue) completion for \(root.name), written by `\(root.name) --generate-completion-script \(shell.rawValue)`."
    }

    /// `clickawayctl` → `_clickawayctl`, a name every shell takes for a function.
    private static func functionName(_ root: CommandNode) -> String {
        "_" + String(root.name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// Options as the command line spells them, `-h` and `--help` (and `--version`) included.
    private static func optionSpellings(_ node: CommandNode) -> [String] {
        node.definitions.flatMap { definition -> [String] in
            switch definition.kind {
            case .option: (definition.shortSpelling.map { [$0] } ?? []) + [definition.spelling]
            case .flag(let invertible):
                (definition.shortSpelling.map { [$0] } ?? []) + (invertible ? [definition.spelling, "--no-\(definition.name)"] : [definition.spelling])
            case .positional, .postTerminator: []
            }
        } + (node.isRoot && !node.configuration.version.isEmpty ? ["-V", "--version"] : []) + ["-h", "--help"]
    }

    /// A single-quoted shell word.
    private static func quoted(_ text: String) -> String {
        var result = "'"
        for character in text {
            if character == "'" { result += "'\\''" } else { result.append(character) }
        }
        return result + "'"
    }

    // MARK: bash

    private static func bash(_ root: CommandNode) -> String {
        let function = functionName(root)
        var lines = [
            header(root, .bash),
            "",
            "# \(function)_words WORDS: those of WORDS (none with a space) that start with the word completed.",
            "\(function)_words() {",
            "    COMPREPLY=($(compgen -W \"$1\" -- \"$cur\"))",
            "}",
            "",
            "# \(function)_position FIRST OPTIONS: how many positional arguments are before the word",
            "# completed, counting from word FIRST; OPTIONS take a value, the word after them.",
            "\(function)_position() {",
            "    local i n=0",
            "    for ((i = $1; i < COMP_CWORD; i++)); do",
            "        case ${COMP_WORDS[i]} in",
            "        =) ((i++)) ;;",
            "        -*) [[ \" $2 \" == *\" ${COMP_WORDS[i]} \"* && ${COMP_WORDS[i+1]} != = ]] && ((i++)) ;;",
            "        *) ((n++)) ;;",
            "        esac",
            "    done",
            "    echo $n",
            "}",
            "",
            "\(function)() {",
            "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command=\(root.name) first=1",
            "    # --name=value: bash splits the = off.",
            "    [[ $prev == = ]] && prev=${COMP_WORDS[COMP_CWORD-2]}",
            "    [[ $cur == = ]] && cur=",
            "    COMPREPLY=()",
        ]
        if !root.subcommands.isEmpty {
            lines += [
                "    if ((COMP_CWORD > 1)); then",
                "        case ${COMP_WORDS[1]} in",
                "        \(root.subcommands.map(\.name).joined(separator: "|"))) command=${COMP_WORDS[1]} first=2 ;;",
                "        esac",
                "    fi",
            ]
        }
        lines += ["    case $command in"]
        for node in root.all {
            lines.append("    \(node.name))")
            lines += bashCommand(node, root: root).map { "        " + $0 }
            lines.append("        ;;")
        }
        lines += ["    esac", "}", "", "complete -F \(function) \(root.name)", ""]
        return lines.joined(separator: "\n")
    }

    private static func bashCommand(_ node: CommandNode, root: CommandNode) -> [String] {
        let function = functionName(root)
        let definitions = node.definitions
        let valued = definitions.filter(\.takesValue)
        var lines: [String] = []
        if !valued.isEmpty {
            lines.append("case $prev in")
            for definition in valued {
                let pattern = (definition.shortSpelling.map { $0 + "|" } ?? "") + definition.spelling
                lines.append("\(pattern)) \(bashValues(definition, root: root) ?? ":") ; return ;;")
            }
            lines.append("esac")
        }
        lines += ["if [[ $cur == -* ]]; then",
                  "    \(function)_words \(quoted(optionSpellings(node).joined(separator: " ")))",
                  "    return",
                  "fi"]
        if !node.subcommands.isEmpty {
            lines.append("((COMP_CWORD == 1)) && \(function)_words \(quoted(node.subcommands.map(\.name).joined(separator: " ")))")
            return lines
        }
        let positionals = definitions.filter { $0.kind == .positional }
        let completing = positionals.enumerated().compactMap { index, definition in
            bashValues(definition, root: root).map { "\(index)) \($0) ;;" }
        }
        if !completing.isEmpty {
            let spellings = valued.flatMap { ($0.shortSpelling.map { [$0] } ?? []) + [$0.spelling] }
            lines.append("case $(\(function)_position $first \(quoted(spellings.joined(separator: " ")))) in")
            lines += completing
            lines.append("esac")
        }
        return lines
    }

    /// The command that fills COMPREPLY for a value; nil when nothing is offered.
    private static func bashValues(_ definition: ArgumentDefinition, root: CommandNode) -> String? {
        let function = functionName(root)
        switch definition.completion {
        case .custom(let name, _):
            return "\(function)_words \"$(\(root.name) ---completion \(name) 2>/dev/null)\""
        case .file(let fileExtension):
            return "compopt -o filenames 2>/dev/null; local IFS=$'\\n'; COMPREPLY=($(compgen -d -- \"$cur\") $(compgen -f -X '!*.\(fileExtension)' -- \"$cur\"))"
        case nil:
            guard !definition.allowedValues.isEmpty else { return nil }
            return "\(function)_words \(quoted(definition.allowedValues.joined(separator: " ")))"
        }
    }

    // MARK: zsh

    private static func zsh(_ root: CommandNode) -> String {
        let function = functionName(root)
        var lines = [
            "#compdef \(root.name)",
            header(root, .zsh),
            "",
            "# \(function)_custom COMPADD-OPTIONS... NAME: the words of the program's custom completion",
            "# NAME (_arguments puts its compadd options before the action's own word).",
            "\(function)_custom() {",
            "    local -a candidates",
            "    candidates=(${(f)\"$(\(root.name) ---completion ${@[-1]} 2>/dev/null)\"})",
            "    compadd \"${@[1,-2]}\" -a candidates",
            "}",
            "",
            "\(function)() {",
            "    local curcontext=$curcontext state line ret=1",
            "    typeset -A opt_args",
        ]
        if root.subcommands.isEmpty {
            lines += ["    _arguments \\"] + zshSpecs(root, root: root).map { "        \($0) \\" } + ["        && ret=0"]
        } else {
            lines += ["    _arguments -C \\"] + zshHelpAndVersion(root).map { "        \($0) \\" }
            lines += ["        ': :->subcommand' \\", "        '*:: :->arguments' && ret=0", "    case $state in", "    subcommand)",
                      "        local -a subcommands=("]
            lines += root.subcommands.map { "            \(quoted($0.name + ":" + $0.configuration.abstract))" }
            lines += ["        )", "        _describe -t subcommands '\(root.name) subcommand' subcommands && ret=0", "        ;;",
                      "    arguments)", "        curcontext=${curcontext%:*:*}:\(root.name)-$words[1]:", "        case $words[1] in"]
            for node in root.subcommands {
                lines.append("        \(node.name))")
                lines += ["            _arguments \\"] + zshSpecs(node, root: root).map { "                \($0) \\" }
                lines += ["                && ret=0", "            ;;"]
            }
            lines += ["        esac", "        ;;", "    esac"]
        }
        lines += ["    return ret", "}", "", "\(function) \"$@\"", ""]
        return lines.joined(separator: "\n")
    }

    private static func zshHelpAndVersion(_ node: CommandNode) -> [String] {
        (node.isRoot && !node.configuration.version.isEmpty ? ["{-V,--version}" + quoted("[\(zshEscaped(HelpText.versionHelp))]")] : [])
            + ["'(- *)'{-h,--help}\(quoted("[\(zshEscaped(HelpText.helpHelp))]"))"]
    }

    private static func zshSpecs(_ node: CommandNode, root: CommandNode) -> [String] {
        var specs: [String] = []
        for definition in node.definitions {
            let help = "[\(zshEscaped(definition.help))]"
            switch definition.kind {
            case .option:
                let action = zshAction(definition, root: root)
                for spelling in (definition.shortSpelling.map { [$0] } ?? []) + [definition.spelling] {
                    specs.append(quoted((definition.isRepeated ? "*" : "") + spelling + help + ":\(zshEscaped(definition.valueName)):" + action))
                }
            case .flag(let invertible):
                if invertible {
                    specs.append(quoted("(--no-\(definition.name))\(definition.spelling)\(help)"))
                    specs.append(quoted("(\(definition.spelling))--no-\(definition.name)\(help)"))
                } else {
                    specs.append(quoted(definition.spelling + help))
                }
            case .positional:
                let colons = definition.isOptional ? "::" : ":"
                specs.append(quoted(colons + zshEscaped(definition.valueName) + ":" + zshAction(definition, root: root)))
            case .postTerminator:
                break
            }
        }
        return specs + zshHelpAndVersion(node)
    }

    private static func zshAction(_ definition: ArgumentDefinition, root: CommandNode) -> String {
        switch definition.completion {
        case .custom(let name, _): return "\(functionName(root))_custom \(name)"
        case .file(let fileExtension): return "_files -g \\*.\(fileExtension)"
        case nil: return definition.allowedValues.isEmpty ? " " : "(\(definition.allowedValues.joined(separator: " ")))"
        }
    }

    /// Text inside an `_arguments` spec's brackets or a message: `[`, `]` and `:` are syntax there.
    private static func zshEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if "[]:\\".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }

    // MARK: fish

    private static func fish(_ root: CommandNode) -> String {
        let function = "_" + functionName(root)
        var lines = [header(root, .fish), ""]
        if !root.subcommands.isEmpty {
            lines += [
                "# The subcommand on the command line, nothing before one is typed.",
                "function \(function)_subcommand",
                "    set -l words (commandline -opc)",
                "    switch \"$words[2]\"",
                "    case \(root.subcommands.map(\.name).joined(separator: " "))",
                "        echo $words[2]",
                "    end",
                "end",
                "",
                "# Whether the subcommand on the command line is $argv[1] (\"\": none).",
                "function \(function)_using",
                "    set -l subcommand (\(function)_subcommand)",
                "    test \"$subcommand\" = \"$argv[1]\"",
                "end",
                "",
            ]
        }
        lines.append("complete -c \(root.name) -f")
        for node in root.all {
            let condition = root.subcommands.isEmpty ? "" : " -n \(quoted("\(function)_using \(quoted(node.isRoot ? "" : node.name))"))"
            let prefix = "complete -c \(root.name)\(condition)"
            for definition in node.definitions {
                let help = definition.help.isEmpty ? "" : " -d \(quoted(definition.help))"
                switch definition.kind {
                case .option:
                    let short = definition.short.map { " -s \($0)" } ?? ""
                    lines.append("\(prefix)\(short) -l \(definition.name) -r\(fishValues(definition, root: root))\(help)")
                case .flag(let invertible):
                    lines.append("\(prefix) -l \(definition.name)\(help)")
                    if invertible { lines.append("\(prefix) -l no-\(definition.name)\(help)") }
                case .positional:
                    let values = fishValues(definition, root: root)
                    if !values.isEmpty { lines.append(prefix + values) }
                case .postTerminator:
                    break
                }
            }
            if node.isRoot, !node.configuration.version.isEmpty {
                lines.append("\(prefix) -s V -l version -d \(quoted(HelpText.versionHelp))")
            }
            lines.append("\(prefix) -s h -l help -d \(quoted(HelpText.helpHelp))")
            for subcommand in node.subcommands {
                lines.append("\(prefix) -a \(subcommand.name) -d \(quoted(subcommand.configuration.abstract))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// ` -a …` or ` -F`: what fish offers for a value.
    private static func fishValues(_ definition: ArgumentDefinition, root: CommandNode) -> String {
        switch definition.completion {
        case .custom(let name, _): return " -a \(quoted("(\(root.name) ---completion \(name) 2>/dev/null)"))"
        case .file: return " -F"
        case nil: return definition.allowedValues.isEmpty ? "" : " -a \(quoted(definition.allowedValues.joined(separator: " ")))"
        }
    }
}
