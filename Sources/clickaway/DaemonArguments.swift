import ClickawayCore

/// The daemon's command line, read by hand: argument-parser would link FoundationEssentials
/// into the daemon, more than half of its binary, mapped for as long as the session lasts
/// (BENCHMARKS.md, "Footprint"). `--help`, the completion scripts and the checks of
/// clickaway(1) all come from `DaemonOption.all`.
struct DaemonArguments: Equatable {
    var config: String?
    var backend: Backend?
    var logLevel: LogLevel?
    var display: String?
}

/// What the command line asks for.
enum Invocation: Equatable {
    case run(DaemonArguments)
    case help
    case version
    case completionScript(CompletionShell)

    /// `--help` and `--version` win wherever they stand; anything else wrong is a `UsageError`.
    init(arguments: [String]) throws(UsageError) {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            self = .help
            return
        }
        if arguments.contains("--version") {
            self = .version
            return
        }
        var parsed = DaemonArguments()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw UsageError("unexpected argument \"\(argument)\": clickaway takes options only")
            }
            let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let inline = parts.count == 2 ? String(parts[1]) : nil
            if name == "generate-completion-script" {
                let value = try Self.value(inline, &rest, for: "--\(name) <shell>")
                guard let shell = CompletionShell(rawValue: value) else {
                    throw UsageError("--\(name) must be one of \(listed(CompletionShell.allCases.map(\.rawValue))), not \"\(value)\"")
                }
                self = .completionScript(shell)
                return
            }
            guard let option = DaemonOption.all.first(where: { $0.name == name }) else {
                throw UsageError("unknown option \"--\(name)\"")
            }
            let value = try Self.value(inline, &rest, for: option.synopsis)
            try option.assign(value, &parsed)
        }
        self = .run(parsed)
    }

    private static func value(_ inline: String?, _ rest: inout ArraySlice<String>, for synopsis: String) throws(UsageError) -> String {
        if let inline { return inline }
        guard let next = rest.popFirst() else { throw UsageError("\(synopsis) needs a value") }
        return next
    }
}

struct UsageError: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}

/// One option of the daemon, with everything `--help`, the completions and the man page say about it.
struct DaemonOption: Sendable {
    let name: String
    let valueName: String
    let help: String
    /// The values to offer in completions; nil: any text.
    let choices: [String]?
    let completesFiles: Bool
    let assign: @Sendable (String, inout DaemonArguments) throws(UsageError) -> Void

    var synopsis: String { "--\(name) <\(valueName)>" }

    static let all: [DaemonOption] = [
        DaemonOption(name: "config", valueName: "file",
                     help: "Read this file instead of config.toml and conf.d/*.toml.",
                     choices: nil, completesFiles: true) { value, arguments in arguments.config = value },
        DaemonOption(name: "backend", valueName: "backend",
                     help: "\(listed(Backend.allCases.map(\.rawValue))) (overrides [settings] backend). "
                         + "auto is wayland when WAYLAND_DISPLAY is set and --display is not given.",
                     choices: Backend.allCases.map(\.rawValue), completesFiles: false) { value, arguments throws(UsageError) in
            arguments.backend = try choice(value, for: "--backend")
        },
        DaemonOption(name: "log-level", valueName: "level",
                     help: "\(listed(LogLevel.allCases.map(\.rawValue))) (overrides [settings] log_level).",
                     choices: LogLevel.allCases.map(\.rawValue), completesFiles: false) { value, arguments throws(UsageError) in
            arguments.logLevel = try choice(value, for: "--log-level")
        },
        DaemonOption(name: "display", valueName: "display",
                     help: "The X display to use instead of $DISPLAY.",
                     choices: nil, completesFiles: false) { value, arguments in arguments.display = value },
    ]

    /// The flags besides the options, as `--help` lists them.
    static let flags: [(names: [String], help: String)] = [
        (["--version"], "Show the version."),
        (["-h", "--help"], "Show help information."),
    ]
}

private func choice<T: RawRepresentable & CaseIterable>(_ value: String, for option: String) throws(UsageError) -> T
where T.RawValue == String {
    guard let chosen = T(rawValue: value) else {
        throw UsageError("\(option) must be one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(value)\"")
    }
    return chosen
}

/// "a, b, c or d"
func listed(_ words: [String]) -> String {
    words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1]
}

// MARK: Help

enum DaemonHelp {
    static let abstract = "Close popups when you click outside them."
    static let discussion = """
        Watches pointer input on the X server or a Wayland compositor with layer-shell, \
        hit-tests each click against the popups described in \
        ~/.config/clickaway/config.toml, dismisses the popups a click lands outside of and \
        lets clicks inside them pass. The configuration is reloaded when \
        its files change, on SIGHUP and on `clickawayctl reload`; SIGTERM and SIGINT release \
        every grab and exit. Under systemd (Type=notify) it reports readiness and pings \
        the watchdog itself. See clickaway(1) and clickaway.toml(5).
        """

    static var usage: String {
        "clickaway " + DaemonOption.all.map { "[\($0.synopsis)]" }.joined(separator: " ")
    }

    static var text: String {
        let rows = DaemonOption.all.map { ($0.synopsis, $0.help) }
            + DaemonOption.flags.map { ($0.names.joined(separator: ", "), $0.help) }
        var lines = ["OVERVIEW: \(abstract)", ""] + wrapped(discussion, width: 80) + ["", "USAGE: \(usage)", "", "OPTIONS:"]
        for (label, help) in rows {
            let column = 26
            let text = wrapped(help, width: 80 - column)
            let first = "  " + label
            if first.count < column - 1 {
                lines.append(first + String(repeating: " ", count: column - first.count) + text[0])
                lines += text.dropFirst().map { String(repeating: " ", count: column) + $0 }
            } else {
                lines.append(first)
                lines += text.map { String(repeating: " ", count: column) + $0 }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Words of `text` in lines of at most `width` characters (a longer word gets its own line).
    static func wrapped(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + [line]
    }
}

// MARK: Completions

/// The shells `--generate-completion-script` writes for, as clickawayctl's argument-parser does.
enum CompletionShell: String, CaseIterable, Equatable {
    case bash, zsh, fish

    var script: String {
        switch self {
        case .bash: return Self.bashScript
        case .zsh: return Self.zshScript
        case .fish: return Self.fishScript
        }
    }

    /// The help's first sentence, without its full stop: a one-line description.
    private static func summary(_ help: String) -> String {
        var sentence = ""
        for (character, next) in zip(help, help.dropFirst().map(Optional.some) + [nil]) {
            if character == ".", next == nil || next == " " { break }
            sentence.append(character)
        }
        return sentence
    }

    /// `text` with each character in `replacements` replaced.
    private static func escaped(_ text: String, _ replacements: [Character: String]) -> String {
        var result = ""
        for character in text {
            if let replacement = replacements[character] { result += replacement } else { result.append(character) }
        }
        return result
    }

    private static var bashScript: String {
        let words = DaemonOption.all.map { "--\($0.name)" } + DaemonOption.flags.flatMap(\.names)
        var cases = ""
        for option in DaemonOption.all {
            let reply: String
            if let choices = option.choices {
                reply = #"COMPREPLY=($(compgen -W "\#(choices.joined(separator: " "))" -- "$cur")); return"#
            } else if option.completesFiles {
                reply = #"compopt -o filenames; COMPREPLY=($(compgen -f -- "$cur")); return"#
            } else {
                reply = "return"
            }
            cases += "        --\(option.name)) \(reply) ;;\n"
        }
        return """
            # bash completion for clickaway, written by `clickaway --generate-completion-script bash`.
            _clickaway() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                case $prev in
            \(cases)    esac
                COMPREPLY=($(compgen -W "\(words.joined(separator: " "))" -- "$cur"))
            }
            complete -F _clickaway clickaway

            """
    }

    private static var zshScript: String {
        func quoted(_ text: String) -> String {
            escaped(text, ["'": #"'\''"#, "[": #"\["#, "]": #"\]"#, ":": #"\:"#])
        }
        var specs: [String] = []
        for option in DaemonOption.all {
            let action = option.choices.map { "(\($0.joined(separator: " ")))" } ?? (option.completesFiles ? "_files" : " ")
            specs.append("'--\(option.name)=[\(quoted(summary(option.help)))]:\(option.valueName):\(action)'")
        }
        for flag in DaemonOption.flags {
            let description = "[\(quoted(summary(flag.help)))]"
            if flag.names.count == 1 {
                specs.append("'\(flag.names[0])\(description)'")
            } else {
                specs.append("'(\(flag.names.joined(separator: " ")))'{\(flag.names.joined(separator: ","))}'\(description)'")
            }
        }
        return """
            #compdef clickaway
            # zsh completion for clickaway, written by `clickaway --generate-completion-script zsh`.
            _arguments -s \\
                \(specs.joined(separator: " \\\n    "))

            """
    }

    private static var fishScript: String {
        func quoted(_ text: String) -> String { "'" + escaped(text, ["\\": #"\\"#, "'": #"\'"#]) + "'" }
        var lines = [
            "# fish completion for clickaway, written by `clickaway --generate-completion-script fish`.",
            "complete -c clickaway -f",
        ]
        for option in DaemonOption.all {
            // -x: a value, not a file; -r -F: a file.
            let values = option.choices.map { "-x -a \(quoted($0.joined(separator: " ")))" } ?? (option.completesFiles ? "-r -F" : "-x")
            lines.append("complete -c clickaway -l \(option.name) \(values) -d \(quoted(summary(option.help)))")
        }
        for flag in DaemonOption.flags {
            let names = flag.names.map { $0.hasPrefix("--") ? "-l \($0.dropFirst(2))" : "-s \($0.dropFirst())" }
            lines.append("complete -c clickaway \(names.joined(separator: " ")) -d \(quoted(summary(flag.help)))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
