import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The completion scripts each program writes (`--generate-completion-script`), run by the
/// shells themselves: bash by calling its completion function, fish and zsh in an
/// interactive shell in tmux, pressing Tab. Popup names come from the configuration file,
/// without a daemon.
@Suite("Shell completions")
struct CompletionTests {
    static let config = """
        [[popup]]
        name = "panel"
        rect = [0, 0, 100, 30]

        [[popup]]
        name = "palette"
        rect = [0, 40, 100, 30]

        [[popup]]
        name = "calendar"
        window = { class = "Cal" }
        """

    /// A configuration home with `config`, and a directory holding the two programs.
    final class Setup {
        let directory: URL
        let bin: URL
        var environment: [String: String] {
            ["XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
             "PATH": "\(bin.path):/usr/bin:/bin", "HOME": directory.appendingPathComponent("home").path]
        }

        init(config: String = CompletionTests.config) throws {
            directory = try scratchDirectory("completion")
            bin = directory.appendingPathComponent("bin")
            let fm = FileManager.default
            try fm.createDirectory(at: directory.appendingPathComponent("config/clickaway"), withIntermediateDirectories: true)
            try fm.createDirectory(at: directory.appendingPathComponent("home"), withIntermediateDirectories: true)
            try fm.createDirectory(at: bin, withIntermediateDirectories: true)
            try TestFiles.write(config, to: directory.appendingPathComponent("config/clickaway/config.toml").path)
            for program in ["clickaway", "clickawayctl"] {
                try fm.createSymbolicLink(at: bin.appendingPathComponent(program),
                                          withDestinationURL: DaemonFixture.buildDirectory.appendingPathComponent(program))
            }
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// `program --generate-completion-script shell`, saved in the scratch directory.
        func script(_ program: String, _ shell: String) throws -> String {
            let run = try CommandRun.run([bin.appendingPathComponent(program).path, "--generate-completion-script", shell])
            try #require(run.status == 0 && !run.stdout.isEmpty, "\(program) --generate-completion-script \(shell): \(run.output)")
            let path = directory.appendingPathComponent("\(program).\(shell)").path
            try TestFiles.write(run.stdout, to: path)
            return path
        }
    }

    /// What bash completes for `line` (the last word is the one completed), the way
    /// bash-completion calls the function the script registers.
    private func bash(_ setup: Setup, _ program: String, _ line: String) throws -> [String] {
        let script = try setup.script(program, "bash")
        let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let command = """
            source "$1"
            COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " ")))
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            COMP_LINE='\(line)'
            COMP_POINT=${#COMP_LINE}
            fn=$(complete -p \(program) | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p')
            "$fn" \(program) "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let run = try CommandRun.run(["bash", "-c", command, "bash", script], environment: setup.environment)
        try #require(run.status == 0, "bash completion of \"\(line)\" failed: \(run.output)")
        return run.stdout.split(separator: "\n").map(String.init).sorted()
    }

    @Test func bashCompletesRectPopupNamesForOpenCloseAndToggle() throws {
        let setup = try Setup()
        for subcommand in ["open", "close", "toggle"] {
            #expect(try bash(setup, "clickawayctl", "clickawayctl \(subcommand) pa") == ["palette", "panel"])
            // A window popup cannot be opened by name: it is not offered.
            #expect(try bash(setup, "clickawayctl", "clickawayctl \(subcommand) ") == ["palette", "panel"])
        }
        #expect(try bash(setup, "clickawayctl", "clickawayctl hit --open ") == ["calendar", "palette", "panel"])
        #expect(try bash(setup, "clickawayctl", "clickawayctl to") == ["toggle"])
    }

    /// A runtime popup's template and parent may be any popup, window popups included; its
    /// other options are offered as for any command.
    @Test func bashCompletesEveryPopupForRuntimeTemplatesAndParents() throws {
        let setup = try Setup()
        for line in ["clickawayctl open --like ", "clickawayctl wait --parent ", "clickawayctl open --rect 1,2,3,4 --like "] {
            #expect(try bash(setup, "clickawayctl", line) == ["calendar", "palette", "panel"], "\(line)")
        }
        #expect(try bash(setup, "clickawayctl", "clickawayctl wait --p").contains("--pid"))
        #expect(try bash(setup, "clickawayctl", "clickawayctl wa") == ["wait"])
    }

    @Test func bashCompletesTheDaemonsOptionsAndTheirValues() throws {
        let setup = try Setup()
        #expect(try bash(setup, "clickaway", "clickaway --backend ") == ["auto", "wayland", "x11-grab", "x11-shield"])
        #expect(try bash(setup, "clickaway", "clickaway --log-level d") == ["debug"])
        #expect(try bash(setup, "clickaway", "clickaway --l") == ["--log-level"])
    }

    /// The entry point the three shells' scripts call for popup names, offline; a
    /// configuration with errors completes nothing and still exits 0.
    @Test func customCompletionReadsTheConfigurationAndSurvivesABrokenOne() throws {
        let setup = try Setup()
        let ctl = setup.bin.appendingPathComponent("clickawayctl").path
        let names = try CommandRun.run([ctl, "---completion", "rect-popups"], environment: setup.environment)
        #expect(names.status == 0 && names.stdout == "panel\npalette\n", "\(names.output)")
        let all = try CommandRun.run([ctl, "---completion", "popups"], environment: setup.environment)
        #expect(all.status == 0 && all.stdout == "panel\npalette\ncalendar\n", "\(all.output)")

        let broken = try Setup(config: "[[popup]]\nname = 1\n")
        let none = try CommandRun.run([ctl, "---completion", "rect-popups"], environment: broken.environment)
        #expect(none.status == 0 && none.stdout.isEmpty, "\(none.output)")
    }

    @Test func fishCompletesPopupNamesAndTheDaemonsOptions() throws {
        let setup = try Setup()
        let ctlScript = try setup.script("clickawayctl", "fish"), daemonScript = try setup.script("clickaway", "fish")
        // The scripts read the command line, which only an interactive fish has.
        let terminal = try Terminal(["fish", "--no-config", "-C",
                                     "function fish_prompt; echo 'ready> '; end; source \(ctlScript); source \(daemonScript)"],
                                    environment: setup.environment)
        try terminal.waitFor("ready>", "fish's prompt")
        terminal.type("clickawayctl toggle pa\t")
        try terminal.waitFor("palette", "fish to offer palette after clickawayctl toggle pa<Tab>")
        #expect(terminal.screen.contains("panel"), "fish offered palette but not panel:\n\(terminal.screen)")
        #expect(!terminal.screen.contains("calendar"), "fish offered a window popup to toggle:\n\(terminal.screen)")
        terminal.type("\u{3}clear\nclickaway --backend x11-\t")
        try terminal.waitFor("x11-shield", "fish to offer x11-shield after clickaway --backend x11-<Tab>")
    }

    @Test func zshCompletesPopupNamesAndTheDaemonsOptions() throws {
        let setup = try Setup()
        let functions = setup.directory.appendingPathComponent("zsh-functions")
        try FileManager.default.createDirectory(at: functions, withIntermediateDirectories: true)
        for program in ["clickaway", "clickawayctl"] {
            try FileManager.default.copyItem(atPath: try setup.script(program, "zsh"), toPath: functions.appendingPathComponent("_\(program)").path)
        }
        let dump = setup.directory.appendingPathComponent("zcompdump").path
        let terminal = try Terminal(["zsh", "-f", "-i"], environment: setup.environment)
        terminal.type("PS1='ready> '; fpath=(\(functions.path) $fpath); autoload -U compinit; compinit -u -d \(dump)\n")
        try terminal.waitFor("ready>", "zsh's prompt")
        terminal.type("clickawayctl open pa\t")
        try terminal.waitFor("palette", "zsh to offer palette after clickawayctl open pa<Tab>")
        #expect(terminal.screen.contains("panel"), "zsh offered palette but not panel:\n\(terminal.screen)")
        terminal.type("\u{3}clear\nclickaway --backend x11-\t")
        try terminal.waitFor("x11-shield", "zsh to offer x11-shield after clickaway --backend x11-<Tab>")
    }
}

/// An interactive program in a tmux session of its own, 120x30, for as long as the value lives.
final class Terminal {
    private let socket = "clickaway-test-\(UUID().uuidString)"

    init(_ command: [String], environment: [String: String]) throws {
        let variables = environment.merging(["TERM": "xterm"]) { $1 }.map { "\($0.key)=\($0.value)" }
        // Started with every signal unblocked (ChildProcess): the tmux server it forks keeps
        // the mask, and the test's threads block signals tmux waits on.
        let start = try ChildProcess(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30",
                                      "--", "env", "-i"] + variables + command)
        guard let status = start.signalAndWait(0, within: .seconds(10)), status == 0 else {
            throw HarnessError("tmux new-session did not start \(command[0]) within 10 s\n\(start.logTail)")
        }
    }

    deinit { _ = try? tmux(["kill-server"]) }

    private func tmux(_ arguments: [String]) throws -> CommandRun {
        try CommandRun.run(["tmux", "-L", socket] + arguments, limit: .seconds(10))
    }

    /// Sends the text as keys (tab, newline and control characters included).
    func type(_ text: String) {
        _ = try? tmux(["send-keys", "-l", "--", text])
    }

    var screen: String { (try? tmux(["capture-pane", "-p"]).stdout) ?? "" }

    /// Waits (30 s at most) until `text` is on the screen.
    func waitFor(_ text: String, _ what: String) throws {
        do {
            try eventually(what, timeout: .seconds(30), every: .milliseconds(50)) { screen.contains(text) }
        } catch {
            throw HarnessError("\(error); the screen:\n\(screen)")
        }
    }
}
