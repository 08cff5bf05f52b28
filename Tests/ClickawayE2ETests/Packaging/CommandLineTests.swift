import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The daemon's command line (its enums checked as it reads them) and one version for both
/// programs.
@Suite("Command lines")
struct CommandLineTests {
    static let daemon = DaemonFixture.buildDirectory.appendingPathComponent("clickaway").path
    static let ctl = DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl").path

    @Test func bothProgramsPrintTheOneVersion() throws {
        let version = try Repository.version()
        #expect(version.split(separator: ".").count == 3, "\(version) is not MAJOR.MINOR.PATCH")
        for (program, name) in [(Self.daemon, "clickaway"), (Self.ctl, "clickawayctl")] {
            let run = try CommandRun.run([program, "--version"])
            #expect(run.status == 0 && run.stdout == "\(name) \(version)\nLicense: MIT\n", "\(name) --version: \(run.output)")
        }
    }

    /// MIT, said the same way wherever someone looks: LICENSE, the Debian copyright file
    /// (with the whole text, as Debian wants it), the README.
    @Test func theLicenceIsMITEverywhere() throws {
        let licence = try Repository.text("LICENSE")
        #expect(licence.hasPrefix("MIT License\n\nCopyright (c) 2026 the clickaway developers\n"), "LICENSE:\n\(licence)")
        let copyright = try Repository.text("packaging/debian/copyright")
        #expect(!copyright.contains("none stated"), "the Debian copyright file states no licence")
        #expect(copyright.contains("\nLicense: MIT\n"), "the Debian copyright file has no License: MIT paragraph")
        // The text after the copyright line, as a Debian copyright file indents it.
        let permission = licence.components(separatedBy: "the clickaway developers\n\n").last ?? ""
        let indented = permission.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map { $0.isEmpty ? " ." : " " + $0 }.joined(separator: "\n")
        #expect(!permission.isEmpty && copyright.contains(indented), "the Debian copyright file lacks LICENSE's text")
        let readme = try Repository.text("README.md")
        #expect(readme.contains("\n## License\n\nMIT"), "the README does not say MIT")
    }

    @Test func helpListsEveryOptionWithItsValues() throws {
        let run = try CommandRun.run([Self.daemon, "--help"])
        #expect(run.status == 0, "\(run.output)")
        let help = run.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for text in ["USAGE: clickaway [--config <file>] [--backend <backend>] [--log-level <level>] [--display <display>]",
                     "(values: auto, x11-grab, x11-shield, wayland)", "(values: error, warning, info, debug, trace)",
                     "--version", "-h, --help"] {
            #expect(help.contains(text), "clickaway --help lacks \(text):\n\(run.stdout)")
        }
    }

    @Test(arguments: [
        (["--colour"], "Unknown option '--colour'"),
        (["--backend", "x11"], "The value 'x11' is invalid for '--backend <backend>'. Please provide one of 'auto', 'x11-grab', 'x11-shield' or 'wayland'."),
        (["--log-level=loud"], "The value 'loud' is invalid for '--log-level <level>'."),
        (["--config"], "Missing value for '--config <file>'"),
        (["config.toml"], "Unexpected argument 'config.toml'"),
    ])
    func aWrongCommandLineExits64SayingWhatIsWrong(_ arguments: [String], _ message: String) throws {
        let run = try CommandRun.run([Self.daemon] + arguments)
        #expect(run.status == 64, "clickaway \(arguments.joined(separator: " ")) exited \(run.status): \(run.output)")
        #expect(run.stderr.hasPrefix("Error: \(message)") && run.stderr.contains("\nUsage: clickaway "), "\(run.stderr)")
    }

    /// Both spellings of an option reach the daemon: with `=` and as the next word, it goes
    /// on to connect to the display it was given, and says that one is not there (exit 69).
    @Test func optionsWithEqualsAndWithoutAreTheSame() throws {
        let scratch = try scratchDirectory("options")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let config = scratch.appendingPathComponent("config.toml").path
        try TestFiles.write("[settings]\nbackend = \"wayland\"\n", to: config)
        for arguments in [["--config=\(config)", "--backend=x11-grab", "--display=:4321", "--log-level=debug"],
                          ["--config", config, "--backend", "x11-grab", "--display", ":4321", "--log-level", "debug"]] {
            let run = try CommandRun.run([Self.daemon] + arguments, environment: ["XDG_RUNTIME_DIR": scratch.path])
            #expect(run.status == 69 && run.stderr.contains(":4321"), "clickaway \(arguments): \(run.output)")
        }
    }
}
