@testable import ClickawayConfig
import ClickawayCore
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// The man pages: clickaway(1) and clickawayctl(1) are written by the programs from their
/// command definitions (`--generate-manual`), as `make install` does; clickaway.toml(5) is written by
/// hand in man/ and kept to the loader's key lists (here) and to PopupFields and SettingFields
/// (PopupFieldTableTests).
@Suite("Man pages")
struct ManualPageTests {
    @Test func configurationPageRendersWithoutWarnings() throws {
        try expectRendersCleanly(Repository.file("man/clickaway.toml.5").path)
    }

    /// The generated pages render cleanly and carry what --help lists: every option of the
    /// daemon, every subcommand of clickawayctl.
    @Test(arguments: ["clickaway", "clickawayctl"])
    func generatedPageRendersWithoutWarningsAndHasWhatHelpLists(_ program: String) throws {
        let scratch = try scratchDirectory("man")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let built = DaemonFixture.buildDirectory
        let run = try CommandRun.run([built.appendingPathComponent(program).path, "--generate-manual", "--date", "2026-01-01"])
        try #require(run.status == 0 && run.stdout.hasPrefix(".\\\""), "\(program) --generate-manual failed: \(run.output)")
        #expect(run.stdout.contains(".Dd January 1, 2026\n"), "the page does not carry the date given")
        let page = scratch.appendingPathComponent("\(program).1").path
        try TestFiles.write(run.stdout, to: page)
        try expectRendersCleanly(page)
        let source = try String(contentsOfFile: page, encoding: .utf8)
        let help = try CommandRun.run([built.appendingPathComponent(program).path, "--help"])
        guard program == "clickawayctl" else {
            for option in ["config", "backend", "log-level", "display", "version"] {
                #expect(help.stdout.contains("--\(option)") && source.range(of: "\n\\.It (Fl [a-zA-Z] , )?Fl -\(option)[ \n]", options: .regularExpression) != nil,
                        "clickaway.1 does not describe --\(option)")
            }
            return
        }
        // Each subcommand's line starts with two spaces; wrapped descriptions with more.
        let subcommands = help.stdout.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n")
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") && !$0.hasPrefix("  See ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) } ?? []
        #expect(subcommands.count >= 10, "no subcommands found in clickawayctl --help:\n\(help.stdout)")
        for subcommand in subcommands {
            #expect(source.contains(".It Em \(subcommand)"), "clickawayctl.1 does not describe \(subcommand)")
        }
    }

    /// Each page, as man shows it: the header is not groff 1.22's "BSD General Commands
    /// Manual", the footer names the program and its version (what --version prints), no
    /// backtick is left, no path is hyphenated across lines, and the sections a reader looks
    /// for are there.
    @Test(arguments: ["clickaway.1", "clickawayctl.1", "clickaway.toml.5"])
    func pageHasItsSectionsFooterAndUnbrokenPaths(_ name: String) throws {
        let scratch = try scratchDirectory("man-sections")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let built = DaemonFixture.buildDirectory
        let program = name == "clickawayctl.1" ? "clickawayctl" : "clickaway"
        let path: String
        if name.hasSuffix(".5") {
            path = Repository.file("man/\(name)").path
        } else {
            let run = try CommandRun.run([built.appendingPathComponent(program).path, "--generate-manual", "--date", "2026-01-01"])
            try #require(run.status == 0, "\(program) --generate-manual failed: \(run.output)")
            path = scratch.appendingPathComponent(name).path
            try TestFiles.write(run.stdout, to: path)
        }
        let version = try CommandRun.run([built.appendingPathComponent(program).path, "--version"]).stdout
            .split(separator: "\n").first.map(String.init) ?? ""
        #expect(version.hasPrefix("\(program) "), "\(program) --version printed \(version)")
        let man = try CommandRun.run(["man", "-l", path], environment: ["MANWIDTH": "60", "MANPAGER": "cat", "PAGER": "cat"])
        let lines = man.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first), footer = try #require(lines.last)
        #expect(!header.contains("BSD") && header.contains("General Commands Manual") || name.hasSuffix(".5") && !header.contains("BSD"),
                "\(name)'s header: \(header)")
        #expect(footer.hasPrefix(version + " ") && footer.hasSuffix(" " + version) && !footer.contains("BSD"),
                "\(name)'s footer does not name \(version): \(footer)")
        for line in lines {
            #expect(!line.contains("`"), "\(name) shows a backtick: \(line)")
            #expect(line.range(of: #"\S*/\S*\x{2010}$"#, options: .regularExpression) == nil, "\(name) hyphenates a path: \(line)")
        }
        var sections = ["ENVIRONMENT", "FILES", "EXAMPLES"]
        if name.hasSuffix(".1") { sections.append("EXIT STATUS") }
        if name == "clickaway.1" { sections.append("SIGNALS") }
        if name == "clickawayctl.1" { sections += ["SIGNALS", "JSON OUTPUT"] }
        for section in sections {
            #expect(lines.contains(section), "\(name) has no \(section) section")
        }
    }

    /// clickawayctl(1)'s EXIT STATUS has the codes clickawayctl exits with: every `ExitCode(N)`
    /// its sources throw, `wait`'s (WaitStatus: 3, and 128 + SIGINT or SIGTERM), the command
    /// line's 64 and success; and its JSON OUTPUT the formats of hit, status, wait, pick and monitor.
    @Test func clickawayctlPageHasEveryExitStatusAndJSONFormat() throws {
        let run = try CommandRun.run([DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl").path, "--generate-manual"])
        let source = run.stdout
        let exitStatus = try #require(source.components(separatedBy: "\n.Sh EXIT STATUS\n").last?.components(separatedBy: "\n.Sh ").first)
        let documented = Set(exitStatus.split(separator: "\n").filter { $0.hasPrefix(".It ") }.map { String($0.dropFirst(4)) })
        let directory = Repository.file("Sources/clickawayctl")
        var thrown: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let code = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            thrown.formUnion(code.matches(of: /ExitCode\((\d+)\)/).map { String($0.output.1) })
            if let gone = code.firstMatch(of: /static let gone: Int32 = (\d+)/) { thrown.insert(String(gone.output.1)) }
        }
        #expect(thrown.isSuperset(of: ["1", "2", "3"]), "the scan of Sources/clickawayctl found \(thrown.sorted())")
        let exits = thrown.union(["0", "64", "\(128 + SIGINT)", "\(128 + SIGTERM)"])
        #expect(documented == exits, "clickawayctl.1's EXIT STATUS \(documented.sorted()) and the codes clickawayctl exits with \(exits.sorted()) differ")
        let json = try #require(source.components(separatedBy: "\n.Sh JSON OUTPUT\n").last?.components(separatedBy: "\n.Sh ").first)
        for format in ["check --json", "reload --json", "hit --json", "status --json", "wait --json", "pick --json"] {
            #expect(json.contains(".It Ic \(format)\n"), "clickawayctl.1's JSON OUTPUT lacks \(format)")
        }
        for event in ["opened", "closed", "family", "dismissed", "reloaded", "rejected", "grab_refused", "backend"] {
            #expect(json.range(of: "\n\\.It (.* )?\(event)( |,|\n)", options: .regularExpression) != nil, "clickawayctl.1's JSON OUTPUT lacks the \(event) event")
        }
    }

    /// A page with a mistake groff warns about: without the warning, silence proves nothing.
    @Test func aBrokenPageDrawsAWarning() throws {
        let scratch = try scratchDirectory("man-broken")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let page = scratch.appendingPathComponent("broken.1")
        try TestFiles.write(try Repository.text("man/clickaway.toml.5") + ".Bl -tag\n.It Fl x\nunclosed list\n.Xx what\n", to: page.path)
        let rendered = try CommandRun.run(["groff", "-ww", "-z", "-mandoc", page.path])
        #expect(!rendered.stderr.isEmpty, "groff said nothing about a page with an unknown macro and an unclosed list")
        let lint = try CommandRun.run(["mandoc", "-Tlint", "-W", "warning", page.path])
        #expect(lint.status != 0 && !lint.output.isEmpty, "mandoc -Tlint said nothing about a page with an unknown macro and an unclosed list")
    }

    /// The keys clickaway.toml(5) documents, table by table, are the loader's, and the loader
    /// takes each of them in its table; a key it does not know draws "unknown key", so the
    /// check can fail.
    @Test func configurationPageHasTheKeysOfTheLoaderAndTheLoaderTakesThem() throws {
        let page = try Repository.text("man/clickaway.toml.5")
        var manKeys: [String: Set<String>] = [:]
        var section = ""
        for line in page.split(separator: "\n") {
            if line.hasPrefix(".Sh ") { section = String(line.dropFirst(4)) }
            if line.hasPrefix(".It Cm "), let key = line.split(separator: " ").dropFirst(2).first {
                manKeys[section, default: []].insert(String(key))
            }
        }
        let defaults = manKeys["DEFAULTS"] ?? []
        #expect(defaults.contains("grace_ms") && (manKeys["POPUPS"] ?? []).contains("anchors"), "no keys found in clickaway.toml.5")

        // Both ways: every key the loader takes is documented in its section, and no other.
        for (manSection, loaderKeys) in [("SETTINGS", Schema.settingsKeys), ("DEFAULTS", Schema.inheritedKeys),
                                         ("POPUPS", Schema.popupKeys), ("REGIONS", Schema.regionKeys),
                                         ("EXCLUSIONS", Schema.areaKeys), ("WINDOW MATCH", Schema.windowKeys)] {
            let documented = (manKeys[manSection] ?? []).union(manSection == "POPUPS" ? defaults : [])
            #expect(documented == Set(loaderKeys),
                    "clickaway.toml.5 \(manSection) and the loader differ: man only \(documented.subtracting(loaderKeys)), loader only \(Set(loaderKeys).subtracting(documented))")
        }

        // Each table with what it needs around a key; a key the table already has is tried as it is.
        let contexts: [String: (head: String, body: String, close: String)] = [
            "SETTINGS": ("[settings]\n", "", ""),
            "DEFAULTS": ("[defaults]\n", "", ""),
            "POPUPS": ("[[popup]]\n", "name = \"p\"\nrect = [0, 0, 10, 10]\n", ""),
            "REGIONS": ("[[popup]]\nname = \"p\"\nrect = [0, 0, 10, 10]\n[[popup.region]]\n", "rect = [0, 0, 5, 5]\n", ""),
            "EXCLUSIONS": ("[[exclude]]\n", "rect = [0, 0, 5, 5]\n", ""),
            "WINDOW MATCH": ("[[popup]]\nname = \"p\"\nwindow = { ", "class = \"c\"", " }\n"),
        ]
        for (manSection, context) in contexts {
            let keys = manKeys[manSection] ?? []
            #expect(!keys.isEmpty, "clickaway.toml.5 has no keys under \(manSection)")
            let inline = manSection == "WINDOW MATCH"
            func config(_ key: String) -> String {
                let present = context.body.hasPrefix("\(key) =") || context.body.contains("\n\(key) =")
                let entry = present ? "" : (inline ? ", \(key) = 0" : "\(key) = 0\n")
                return context.head + context.body + entry + context.close
            }
            #expect(unknownKeyDiagnostics(config("name_of_nothing")).isEmpty == false,
                    "an unknown key under \(manSection) drew no \"unknown key\":\n\(config("name_of_nothing"))")
            for key in keys {
                #expect(!unknownKeyDiagnostics(config(key)).contains("\"\(key)\""),
                        "the loader does not take \(key), which clickaway.toml.5 documents under \(manSection)")
            }
        }
    }

    /// The "unknown key" lines of loading `text`.
    private func unknownKeyDiagnostics(_ text: String) -> String {
        do {
            _ = try ConfigLoader.load([ConfigFile(path: "test.toml", text: text)])
            return ""
        } catch {
            return "\(error)".split(separator: "\n").filter { $0.contains("unknown key") }.joined(separator: "\n")
        }
    }

    /// groff with every warning, mandoc's linter from warnings up, and man.
    private func expectRendersCleanly(_ path: String) throws {
        let rendered = try CommandRun.run(["groff", "-ww", "-z", "-mandoc", path])
        #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(path) renders with warnings:\n\(rendered.output)")
        let lint = try CommandRun.run(["mandoc", "-Tlint", "-W", "warning", path])
        #expect(lint.status == 0 && lint.output.isEmpty, "mandoc -Tlint -W warning \(path):\n\(lint.output)")
        let man = try CommandRun.run(["man", "--warnings", "-l", path], environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
        #expect(man.status == 0 && man.stderr.isEmpty, "man --warnings -l \(path):\n\(man.stderr)")
        #expect(man.stdout.count > 500, "man -l \(path) printed almost nothing:\n\(man.stdout)")
    }
}

/// What the README and docs/ tell a reader to type exists: every `clickawayctl COMMAND` is a
/// command clickawayctl(1) describes, and every `clickaway --OPTION` an option of clickaway(1).
@Suite("The README and docs/ against the programs")
struct DocumentedCommandTests {
    @Test func everyCommandAndOptionNamedExists() throws {
        let built = DaemonFixture.buildDirectory
        let ctlPage = try CommandRun.run([built.appendingPathComponent("clickawayctl").path, "--generate-manual"]).stdout
        let daemonPage = try CommandRun.run([built.appendingPathComponent("clickaway").path, "--generate-manual"]).stdout
        let commands = Set(ctlPage.matches(of: /\n\.It Em ([a-z]+)\n/).map { String($0.output.1) })
        #expect(commands.isSuperset(of: ["check", "status", "hit", "pick", "wait", "show"]), "\(commands)")
        let docs = try FileManager.default.contentsOfDirectory(atPath: Repository.file("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }
        var named: Set<String> = [], options: Set<String> = []
        for document in ["README.md"] + docs {
            let text = try Repository.text(document)
            // As typed: in code (after a backtick, at a line's start in a block, after exec), not in prose.
            for match in text.matches(of: /(?:`|\n *|exec |=|& |\| )clickawayctl ([a-z]+)\b/) {
                named.insert(String(match.output.1))
                #expect(commands.contains(String(match.output.1)), "\(document) names clickawayctl \(match.output.1), which clickawayctl(1) does not describe")
            }
            for match in text.matches(of: /\bclickaway (--[a-z-]+)/) {
                options.insert(String(match.output.1))
                let option = String(match.output.1.dropFirst(2))
                #expect(daemonPage.contains("Fl -\(option)"), "\(document) names clickaway --\(option), which clickaway(1) does not describe")
            }
        }
        #expect(named.isSuperset(of: ["status", "hit", "monitor", "pick", "reload", "open", "wait"]), "the scan found \(named.sorted())")
        #expect(options.contains("--backend"), "the scan found \(options.sorted())")
    }
}
