import Foundation
import Testing
import XTestHarness

/// The daemon's command line, read without argument-parser: the same conventions as
/// clickawayctl's (`--opt value` and `--opt=value`, exit 64 for a wrong command line), and
/// one version for both programs.
@Suite("Command lines")
struct CommandLineTests {
    static let daemon = DaemonFixture.buildDirectory.appendingPathComponent("clickaway").path
    static let ctl = DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl").path

    @Test func bothProgramsPrintTheOneVersion() throws {
        let version = try Repository.version()
        #expect(version.split(separator: ".").count == 3, "\(version) is not MAJOR.MINOR.PATCH")
        for (program, name) in [(Self.daemon, "clickaway"), (Self.ctl, "clickawayctl")] {
            let run = try CommandRun.run([program, "--version"])
            #expect(run.status == 0 && run.stdout == "\(name) \(version)\n", "\(name) --version: \(run.output)")
        }
    }

    @Test func helpListsEveryOptionWithItsValues() throws {
        let run = try CommandRun.run([Self.daemon, "--help"])
        #expect(run.status == 0, "\(run.output)")
        for text in ["USAGE: clickaway [--config <file>] [--backend <backend>] [--log-level <level>] [--display <display>]",
                     "auto, x11-grab, x11-shield or wayland", "error, warning, info, debug or trace", "--version", "-h, --help"] {
            #expect(run.stdout.contains(text), "clickaway --help lacks \(text):\n\(run.stdout)")
        }
        #expect(run.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 || $0.hasPrefix("USAGE:") }, "a line of --help is wider than 80:\n\(run.stdout)")
        #expect(try CommandRun.run([Self.daemon, "--display", ":1", "-h"]).stdout == run.stdout, "-h after an option is not the same help")
    }

    @Test(arguments: [
        (["--colour"], "unknown option \"--colour\""),
        (["--backend", "x11"], "--backend must be one of auto, x11-grab, x11-shield, wayland, not \"x11\""),
        (["--log-level=loud"], "--log-level must be one of error, warning, info, debug, trace, not \"loud\""),
        (["--config"], "--config <file> needs a value"),
        (["config.toml"], "unexpected argument \"config.toml\""),
        (["--generate-completion-script", "tcsh"], "--generate-completion-script must be one of bash, zsh or fish, not \"tcsh\""),
    ])
    func aWrongCommandLineExits64SayingWhatIsWrong(_ arguments: [String], _ message: String) throws {
        let run = try CommandRun.run([Self.daemon] + arguments)
        #expect(run.status == 64, "clickaway \(arguments.joined(separator: " ")) exited \(run.status): \(run.output)")
        #expect(run.stderr.hasPrefix("clickaway: \(message)") && run.stderr.contains("\nUsage: clickaway "), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    /// Both spellings of an option reach the daemon: with `=` and as the next word, it goes
    /// on to connect to the display it was given, and says that one is not there.
    @Test func optionsWithEqualsAndWithoutAreTheSame() throws {
        let scratch = try scratchDirectory("options")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let config = scratch.appendingPathComponent("config.toml").path
        try "[settings]\nbackend = \"wayland\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        for arguments in [["--config=\(config)", "--backend=x11-grab", "--display=:4321", "--log-level=debug"],
                          ["--config", config, "--backend", "x11-grab", "--display", ":4321", "--log-level", "debug"]] {
            let run = try CommandRun.run([Self.daemon] + arguments, environment: ["XDG_RUNTIME_DIR": scratch.path])
            #expect(run.status == 1 && run.stderr.contains(":4321"), "clickaway \(arguments): \(run.output)")
        }
    }
}
