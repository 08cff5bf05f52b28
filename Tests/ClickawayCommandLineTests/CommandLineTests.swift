@testable import ClickawayCommandLine
import Foundation
import ProcessSupport
import PropertyBased
import Testing

enum Colour: String, CaseIterable, ExpressibleByArgument {
    case red, green
}

/// Every kind of option and argument the programs use.
struct Sample: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample", abstract: "A sample command.", discussion: "First paragraph.\nSecond paragraph.",
        version: "sample 1.0")

    @Option(name: [.customShort("c"), .long], help: ArgumentHelp("A file.", valueName: "file"), completion: .file(extension: "toml"))
    var config: String?
    @Option(help: "A colour.") var colour: Colour = .red
    @Option(name: .customLong("at-ms"), help: "When, in milliseconds.") var atMs: Int64 = 5
    @Option(help: "Repeated.") var tag: [String] = []
    @Option(help: ArgumentHelp("A macro-like value name.", valueName: "Ar")) var odd: String?
    @Flag(help: "Print JSON.") var json = false
    @Flag(inversion: .prefixedNo, help: "Whether Escape counts.") var escape: Bool?
    @Argument(help: "A coordinate.") var x: Int32
    @Argument(help: "A name.", completion: .custom("names") { ["alpha", "beta"] }) var name: String?
    @Argument(parsing: .postTerminator, help: ArgumentHelp("A command.", valueName: "command")) var command: [String] = []
}

/// A program with subcommands and a shared group of options.
struct Tool: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tool", abstract: "A tool.", version: "tool 2.0",
                                                    subcommands: [Sample.self, Shared.self],
                                                    exitStatuses: [ExitStatusHelp(0, "All went well."), ExitStatusHelp(64, "A wrong command line.")])
}

/// A program with the man page's own sections.
struct Documented: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documented", abstract: "A documented program.",
        discussion: "Reads `$DOCUMENTED_HOME/documented.conf`. Says so.", version: "documented 3.1",
        exitStatuses: [ExitStatusHelp(0, "Fine."), ExitStatusHelp(64, "A wrong `documented` command line.")],
        manual: [
            ManualSection("EXAMPLES", [.text("Run it:"), .literal("documented --x")]),
            ManualSection("ENVIRONMENT", [.list(.variable, [ManualItem("DOCUMENTED_HOME", "Where it reads.")])]),
            ManualSection("FILES", [.list(.path, [ManualItem("$DOCUMENTED_HOME/documented.conf", "What it reads.")])]),
        ])
    @Flag(help: "Loud.") var loud = false
}

struct Place: ParsableArguments {
    @Option(help: "Where.") var rect: String?
    func validate() throws {
        if rect == "bad" { throw ValidationError("--rect is bad") }
    }
}

struct Shared: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Uses a group.")
    @OptionGroup var place: Place
    @Flag(help: "Loud.") var loud = false
}

/// Options made from a table, as clickawayctl makes its popup keys' options.
struct Tabled: ParsableArguments {
    /// In a tuple, as clickawayctl keeps them: not options of their own besides the list's.
    let made = (shade: Option<String?>(name: .customLong("shade"), help: "A shade.", values: ["light", "dark"]),
                loud: Flag<Bool?>(name: .customLong("loud"), inversion: .prefixedNo, help: "Loud."))
    let list: ArgumentList
    init() { list = ArgumentList([made.shade, made.loud]) }
}

/// A new empty directory; the caller removes it.
private func scratchDirectory(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A program from PATH run to its end.
private func run(_ arguments: [String]) throws -> ProgramRun {
    try ProgramRun.run(["/usr/bin/env"] + arguments, environment: ProcessInfo.processInfo.environment)
}

/// Parses `words` into a new Sample; the usage error's message when there is one.
private func parse(_ words: [String]) -> (Sample, String?) {
    let sample = Sample()
    do {
        try CommandLineParser(bindings: Bindings(sample)).parse(words)
        return (sample, nil)
    } catch {
        return (sample, error.message)
    }
}

@Suite("Command line: parsing")
struct ParsingTests {
    @Test func defaultsWhenOnlyTheRequiredArgumentIsGiven() {
        let (s, error) = parse(["1"])
        #expect(error == nil)
        #expect(s.config == nil && s.colour == .red && s.atMs == 5 && s.tag.isEmpty && !s.json && s.escape == nil)
        #expect(s.x == 1 && s.name == nil && s.command.isEmpty)
    }

    @Test func everySpellingReachesItsProperty() {
        let (s, error) = parse(["--config=a.toml", "--colour", "green", "--at-ms", "7", "--tag", "a", "--tag=b", "--json",
                                "--no-escape", "-5", "n", "--", "echo", "--x", "-h"])
        #expect(error == nil)
        #expect(s.config == "a.toml" && s.colour == .green && s.atMs == 7 && s.tag == ["a", "b"] && s.json && s.escape == false)
        #expect(s.x == -5 && s.name == "n" && s.command == ["echo", "--x", "-h"])
        #expect(parse(["--escape", "1"]).0.escape == true)
        // A later value of a single option replaces the earlier one.
        #expect(parse(["--colour", "green", "--colour=red", "1"]).0.colour == .red)
    }

    @Test(arguments: [
        (["--color", "red", "1"], "Unknown option '--color'; did you mean '--colour'?"),
        (["--color=red", "1"], "Unknown option '--color'; did you mean '--colour'?"),
        (["-x", "1"], "Unknown option '-x'"),
        (["--colour", "blue", "1"], "The value 'blue' is invalid for '--colour <colour>'. Please provide one of 'red' or 'green'."),
        (["--at-ms", "soon", "1"], "The value 'soon' is invalid for '--at-ms <at-ms>': an integer is expected."),
        (["--config"], "Missing value for '--config <file>'"),
        (["--config", "--json", "1"], "Missing value for '--config <file>'"),
        ([], "Missing expected argument '<x>'"),
        (["1", "n", "extra"], "Unexpected argument 'extra'"),
        (["--json=yes", "1"], "The flag '--json' takes no value"),
        (["--no-json", "1"], "Unknown option '--no-json'"),
        // The value names of positionals are no options.
        (["--command", "1"], "Unknown option '--command'"),
        (["--x", "1"], "Unknown option '--x'"),
        (["one"], "The value 'one' is invalid for '<x>': an integer is expected."),
        (["99999999999"], "The value '99999999999' is invalid for '<x>': an integer is expected."),
        // Did you mean: a typo of a spelling the command takes, dashes, --no- and --help included.
        (["--colur", "blue", "1"], "Unknown option '--colur'; did you mean '--colour'?"),
        (["--no-escpae", "1"], "Unknown option '--no-escpae'; did you mean '--no-escape'?"),
        (["--hepl"], "Unknown option '--hepl'; did you mean '--help'?"),
        (["-x", "1"], "Unknown option '-x'"),
        (["-c"], "Missing value for '--config <file>'"),
    ])
    func usageErrorsSayWhatIsWrong(_ words: [String], _ message: String) {
        #expect(parse(words).1 == message, "\(words)")
    }

    @Test func shortSpellingsReachTheirProperty() {
        let (s, error) = parse(["-c", "a.toml", "1"])
        #expect(error == nil && s.config == "a.toml")
        let (t, error2) = parse(["-c=b.toml", "1"])
        #expect(error2 == nil && t.config == "b.toml")
    }

    @Test func suggestionsAreCloseWordsOnly() {
        #expect(Suggestion.closest("stauts", ["check", "status", "sync"]) == "status")
        #expect(Suggestion.closest("--jsno", ["--json", "--config"]) == "--json")
        #expect(Suggestion.closest("relod", ["reload", "open"]) == "reload")
        #expect(Suggestion.closest("frobnicate", ["check", "status"]) == nil)
        #expect(Suggestion.closest("", ["a"]) == nil)
        #expect(Suggestion.phrase("stauts", ["status"]) == "; did you mean 'status'?")
    }

    @Test func argumentListsAreTheCommandsOptionsAndChoicesAreChecked() throws {
        let parse = { (words: [String]) throws(UsageError) -> Tabled in
            let tabled = Tabled()
            try CommandLineParser(bindings: Bindings(tabled)).parse(words)
            return tabled
        }
        let given = try parse(["--shade", "dark", "--no-loud"])
        #expect(given.made.shade.wrappedValue == "dark" && given.made.loud.wrappedValue == false)
        let unset = try parse([])
        #expect(unset.made.shade.wrappedValue == nil && unset.made.loud.wrappedValue == nil)
        #expect(throws: UsageError.self) { try parse(["--shade", "grey"]) }
        #expect(Bindings(Tabled()).entries.map(\.definition.allowedValues) == [["light", "dark"], []])
    }

    @Test func optionGroupsParseAndValidateWithTheirCommand() {
        let program = CommandLineProgram(root: Tool.self)
        #expect(program.run(["shared", "--rect", "1,2,3,4", "--loud"]) == 0)
        #expect(program.run(["shared", "--rect", "bad"]) == 64)
        #expect(program.run(["shared", "--unknown"]) == 64)
        #expect(program.run(["nonsense"]) == 64)
        #expect(program.run(["help", "nonsense"]) == 64)
        #expect(program.run(["help", "shared"]) == 0)
        #expect(program.run(["sample", "--help"]) == 0)
        #expect(program.run(["--version"]) == 0)
        #expect(program.run(["-V"]) == 0)
        // A word where a subcommand goes that names none is a usage error (said with a
        // "did you mean": commandLineMistakesSayWhatWasMeant runs the program).
        #expect(program.run(["sampel"]) == 64)
        // --version is the program's, not a subcommand's.
        #expect(program.run(["sample", "--version", "1"]) == 64)
    }

    /// Whatever the words, parsing ends with values or a usage error, and every value the
    /// command then reads is there.
    @Test func anyWordsParseOrSayWhy() async {
        let words = Gen<String?>.element(of: [
            "--config", "--config=", "--colour", "--colour=green", "red", "--at-ms", "-1", "1", "--tag", "--json", "--json=",
            "--escape", "--no-escape", "--", "-", "-h=", "---", "--no-", "=", "", "x", "--odd", "Ar",
        ]).map { $0 ?? "" }
        await propertyCheck(count: 2000, input: words.array(of: 0...10)) { words in
            let (s, error) = parse(words)
            if error == nil {
                _ = (s.config, s.colour, s.atMs, s.tag, s.json, s.escape, s.x, s.name, s.command, s.odd)
            } else {
                #expect(!(error ?? "").isEmpty)
            }
        }
    }
}

@Suite("Command line: help, man pages and completions")
struct WritingTests {
    @Test func helpListsEverythingInEightyColumns() {
        let help = HelpText.help(CommandNode(Sample.self))
        for line in help.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        for text in ["OVERVIEW: A sample command.", "First paragraph.\n\nSecond paragraph.", "USAGE: sample [--config <file>]",
                     "  --colour <colour>       A colour. (values: red, green) (default: red)", "[--tag <tag> ...]",
                     "  --escape/--no-escape    Whether Escape counts.", "  <x>                     A coordinate.",
                     "[-- <command> ...]", "  -V, --version           Show the version.", "  -h, --help              Show help information.",
                     "  -c, --config <file>     A file."] {
            #expect(help.contains(text), "help lacks \(text):\n\(help)")
        }
        let tool = HelpText.help(CommandNode(Tool.self))
        #expect(tool.contains("USAGE: tool <subcommand>") && tool.contains("SUBCOMMANDS:\n  sample                  A sample command.\n  shared"))
    }

    /// The exit statuses a program lists are in its help and its man page's EXIT STATUS.
    @Test func exitStatusesAreInHelpAndTheManualPage() throws {
        let help = HelpText.help(CommandNode(Tool.self))
        #expect(help.contains("EXIT STATUS:\n  0                       All went well.\n  64                      A wrong command line.\n"), "\(help)")
        #expect(!HelpText.help(CommandNode(Sample.self)).contains("EXIT STATUS"))
        let page = ManualPage.page(for: CommandNode(Tool.self), date: try #require(ManualDate("2026-02-03")))
        #expect(page.contains(".Sh EXIT STATUS\n.Bl -tag -width 4n\n.It 0\nAll went well.\n.It 64\nA wrong command line.\n.El\n.Sh SEE ALSO\n"), "\(page)")
    }

    @Test func manualPageRendersWithoutWarnings() throws {
        let date = try #require(ManualDate("2026-02-03"))
        for root in [CommandNode(Sample.self), CommandNode(Tool.self)] {
            let page = ManualPage.page(for: root, date: date)
            #expect(page.contains(".Dd February 3, 2026\n.ds doc-volume-operating-system\n.Dt \(root.name.uppercased()) 1\n"))
            // The footer names the program and its version, and groff's header no BSD.
            #expect(page.contains("\n.Os \(root.name) \(root.name == "tool" ? "2.0" : "1.0")\n"), "\(page)")
            let scratch = try scratchDirectory("manual")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let path = scratch.appendingPathComponent("\(root.name).1").path
            try TestFiles.write(page, to: path)
            let groff = try run(["groff", "-ww", "-z", "-mandoc", path])
            #expect(groff.status == 0 && groff.stderr.isEmpty, "groff on \(root.name).1: \(groff.output)\n\(page)")
            let mandoc = try run(["mandoc", "-Tlint", "-W", "warning", path])
            #expect(mandoc.status == 0 && mandoc.output.isEmpty, "mandoc -Tlint on \(root.name).1: \(mandoc.output)\n\(page)")
        }
        let sample = ManualPage.page(for: CommandNode(Sample.self), date: date)
        // A value named like an mdoc macro is escaped, or it would be read as one.
        #expect(sample.contains(".It Fl -odd Ar \\&Ar\n") && sample.contains(".It Fl -escape | Fl -no-escape\n"))
        #expect(sample.contains(".It Fl c , Fl -config Ar file\n") && sample.contains(".It Fl V , Fl -version\n"), "\(sample)")
        #expect(ManualDate("2026-13-01") == nil && ManualDate("yesterday") == nil)
    }

    /// Help's plain text becomes mdoc: `backticks` literal text, paths `.Pa` (which does not
    /// hyphenate), `name(N)` `.Xr`, one sentence a line; the page's own sections go where
    /// mdoc has them, EXAMPLES after EXIT STATUS.
    @Test func manualPageSetsLiteralsPathsAndSections() throws {
        #expect(ManualPage.inline("Reload on `clickawayctl reload`; files in ~/.config/clickaway, see clickaway.toml(5).") == [
            "Reload on", ".Ql clickawayctl reload ;", "files in", ".Pa ~/.config/clickaway ,", "see", ".Xr clickaway.toml 5 .",
        ])
        #expect(ManualPage.inline("One (`a`) two. Three e.g. four: 0x... or `x`s.") == [
            "One", ".Ql ( a )", "two.", "Three e.g.\\& four: 0x...\\& or", ".Ql x Ns s .",
        ])
        let page = ManualPage.page(for: CommandNode(Documented.self), date: try #require(ManualDate("2026-02-03")))
        let order = [".Sh DESCRIPTION", ".Sh OPTIONS", ".Sh ENVIRONMENT", ".Sh FILES", ".Sh EXIT STATUS", ".Sh EXAMPLES", ".Sh SEE ALSO"]
        let positions = order.compactMap { page.range(of: "\n\($0)\n")?.lowerBound }
        #expect(positions.count == order.count && positions == positions.sorted(), "sections out of order:\n\(page)")
        for text in [".It Ev DOCUMENTED_HOME\n", ".It Pa $DOCUMENTED_HOME/documented.conf\n", ".Bd -literal -offset indent\ndocumented --x\n.Ed\n",
                     ".It 64\nA wrong\n.Ql documented\ncommand line.\n"] {
            #expect(page.contains(text), "the page lacks \(text):\n\(page)")
        }
        #expect(!page.split(separator: "\n").contains { !$0.hasPrefix(".\\\"") && $0.contains("`") }, "a backtick is left in the page:\n\(page)")
        let scratch = try scratchDirectory("manual-sections")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let path = scratch.appendingPathComponent("documented.1").path
        try TestFiles.write(page, to: path)
        let mandoc = try run(["mandoc", "-Tlint", "-W", "warning", path])
        #expect(mandoc.status == 0 && mandoc.output.isEmpty, "mandoc -Tlint: \(mandoc.output)\n\(page)")
        let groff = try run(["groff", "-ww", "-z", "-mandoc", path])
        #expect(groff.status == 0 && groff.stderr.isEmpty, "groff: \(groff.output)")
    }

    /// Each shell reads the scripts without a syntax error (running them is CompletionTests').
    @Test(arguments: Shell.allCases)
    func completionScriptsAreValidShell(_ shell: Shell) throws {
        let scratch = try scratchDirectory("completion-syntax")
        defer { try? FileManager.default.removeItem(at: scratch) }
        for root in [CommandNode(Sample.self), CommandNode(Tool.self)] {
            let path = scratch.appendingPathComponent("\(root.name).\(shell.rawValue)").path
            try TestFiles.write(CompletionScript.script(for: root, shell: shell), to: path)
            let check = switch shell {
            case .bash: try run(["bash", "-n", path])
            case .zsh: try run(["zsh", "-n", path])
            case .fish: try run(["fish", "--no-execute", path])
            }
            #expect(check.status == 0 && check.stderr.isEmpty, "\(shell) on \(root.name)'s script: \(check.output)")
        }
    }

    @Test func customCompletionsAreFoundByName() {
        #expect(CompletionScript.customWords("names", in: CommandNode(Tool.self)) == ["alpha", "beta"])
        #expect(CompletionScript.customWords("nothing", in: CommandNode(Tool.self)).isEmpty)
    }
}
