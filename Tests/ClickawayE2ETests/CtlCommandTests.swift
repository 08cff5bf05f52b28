import ClickawayJSON
import Foundation
import ProcessSupport
import Testing

/// `clickawayctl` as a user runs it: exit codes, and `hit --json` on the UIKit scenarios.
@Suite("clickawayctl check and hit")
struct CtlCommandTests {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func ctl(_ arguments: [String], config: String? = nil) throws -> ProgramRun {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("clickawayctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var args = arguments
        if let config {
            let path = dir.appendingPathComponent("config.toml").path
            try TestFiles.write(config, to: path)
            args = args.map { $0 == "CONFIG" ? path : $0 }
        }
        return try ProgramRun.run([DaemonFixture.buildDirectory.appendingPathComponent("clickawayctl").path] + args,
                                  environment: ["XDG_CONFIG_HOME": dir.path, "PATH": "/usr/bin:/bin"])
    }

    @Test func checkAcceptsTheShippedExample() throws {
        let r = try ctl(["check", Self.repoRoot.appendingPathComponent("config/config.toml").path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "ok: 1 popup, 1 exclusion\n")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
    }

    /// Two popups that can match the same window: ok (exit 0), with a warning naming both.
    @Test func checkWarnsAboutPopupsMatchingTheSameWindow() throws {
        let config = "[[popup]]\nname = \"scratch\"\nwindow = { class = \"Popup\" }\n\n"
            + "[[popup]]\nname = \"popup\"\nwindow = { class = \"Popup\", instance = \"xterm\" }\n"
        let r = try ctl(["check", "CONFIG"], config: config)
        #expect(r.status == 0 && r.stdout == "ok: 2 popups, 0 exclusions\n", "\(r.output)")
        #expect(r.stderr.hasPrefix("warning: popups \"scratch\" and \"popup\" can match the same window"), "\(r.stderr)")
        let json = try ctl(["check", "--json", "CONFIG"], config: config)
        let object = try JSON.parse(json.stdout)
        #expect(json.status == 0 && object["warnings"]?.arrayValue?.count == 1, "\(json.output)")
    }

    /// `--config FILE` (and `-c`) beside the positional FILE, as everywhere else a file is read.
    @Test func checkTakesTheFileAsConfigToo() throws {
        let config = "[[popup]]\nname = \"a\"\nrect = [0, 0, 10, 10]\n"
        for arguments in [["check", "CONFIG"], ["check", "--config", "CONFIG"], ["check", "-c", "CONFIG"],
                          ["check", "--config", "CONFIG", "CONFIG"]] {
            let r = try ctl(arguments, config: config)
            #expect(r.status == 0 && r.stdout == "ok: 1 popup, 0 exclusions\n", "\(arguments): \(r.output)")
        }
        let both = try ctl(["check", "--config", "CONFIG", "/elsewhere.toml"], config: config)
        #expect(both.status == 64 && both.stderr.contains("give the file once: --config "), "\(both.output)")
    }

    /// `check --json`: one object, whether the configuration loads, has errors or cannot be read.
    @Test func checkPrintsJSON() throws {
        let ok = try ctl(["check", "--json", "CONFIG"], config: "[[popup]]\nname = \"a\"\nrect = [0, 0, 10, 10]\n")
        #expect(ok.status == 0 && ok.stderr.isEmpty, "\(ok.output)")
        let loaded = try JSON.parse(ok.stdout)
        #expect(loaded["ok"]?.boolValue == true && loaded["popups"]?.intValue == 1 && loaded["exclusions"]?.intValue == 0)
        #expect(loaded["files"]?.arrayValue?.count == 1 && loaded["notes"]?.arrayValue?.isEmpty == true, "\(ok.stdout)")

        let bad = try ctl(["check", "--json", "CONFIG"], config: "[[popup]]\nname = \"a\"\nwindow = { clss = \"x\" }\n")
        #expect(bad.status == 1 && bad.stderr.isEmpty, "\(bad.output)")
        let errors = try JSON.parse(bad.stdout)
        let first = errors["diagnostics"]?.arrayValue?.first
        #expect(errors["ok"]?.boolValue == false && first?["line"]?.intValue == 3 && first?["column"]?.intValue == 12, "\(bad.stdout)")
        #expect(first?["path"]?.stringValue == "popup \"a\" → window", "\(bad.stdout)")
        #expect(first?["message"]?.stringValue == "unknown key \"clss\"; did you mean \"class\"?", "\(bad.stdout)")

        let missing = try ctl(["check", "--json", "/nonexistent/clickaway.toml"])
        let unreadable = try JSON.parse(missing.stdout)
        #expect(missing.status == 2 && unreadable["ok"]?.boolValue == false, "\(missing.output)")
    }

    /// Mistakes on the command line say what was meant or expected (exit 64).
    @Test(arguments: [
        (["stauts"], "Error: Unknown command 'stauts'; did you mean 'status'?"),
        (["help", "reloda"], "Error: Unknown command 'reloda'; did you mean 'reload'?"),
        (["hit", "a", "b"], "Error: The value 'a' is invalid for '<x>': an integer is expected."),
        (["hit", "--buton", "2", "1", "1"], "Error: Unknown option '--buton'; did you mean '--button'?"),
        (["check", "--jsno"], "Error: Unknown option '--jsno'; did you mean '--json'?"),
        (["--verison"], "Error: Unknown option '--verison'; did you mean '--version'?"),
    ])
    func commandLineMistakesSayWhatWasMeant(_ arguments: [String], _ message: String) throws {
        let r = try ctl(arguments)
        #expect(r.status == 64 && r.stderr.hasPrefix(message + "\nUsage: "), "\(arguments): \(r.output)")
    }

    @Test func checkReportsErrorsWithFileLineAndExits1() throws {
        let r = try ctl(["check", "CONFIG"], config: "[[popup]]\nname = \"a\"\nwindow = { clss = \"x\" }\n")
        #expect(r.status == 1)
        #expect(r.stderr.contains("config.toml:3:12: error: popup \"a\" → window: unknown key \"clss\"; did you mean \"class\"?"))
    }

    @Test func checkOfAMissingFileExits2() throws {
        let r = try ctl(["check", "/nonexistent/clickaway.toml"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("/nonexistent/clickaway.toml"))
    }

    @Test func checkWithNoConfigAtAllSaysWhereItGoes() throws {
        let r = try ctl(["check"])
        #expect(r.status == 0)
        #expect(r.stdout == "ok: 0 popups, 0 exclusions\n")
        #expect(r.stderr.contains("clickaway/config.toml"))
    }

    static let uikitScenarios = """
        # DejalView: the Delete button; anything else hides it.
        [[popup]]
        name = "delete"
        rect = [240, 10, 70, 30]
        grace_ms = 0

        # DTTableView: taps outside the cells count as outside.
        [[popup]]
        name = "table"
        rect = [0, 100, 320, 200]
        passthrough = true
          [[popup.region]]
          name = "cell0"
          rect = [0, 40, 320, 44]
          [[popup.region]]
          name = "cell1"
          rect = [0, 90, 320, 44]

        # Liam Kim: a wider touch area, and a redirect to a subview.
        [[popup]]
        name = "form"
        rect = [400, 0, 200, 100]
        redirect = "field"
          [[popup.region]]
          name = "field"
          rect = [20, 20, 100, 20]
          [[popup.region]]
          name = "button"
          rect = [150, 60, 20, 20]
          slop = 10

        # What happens when I touch: a button sticking out of its superview.
        [[popup]]
        name = "window"
        rect = [700, 0, 300, 300]
          [[popup.region]]
          name = "red"
          rect = [0, 0, 100, 100]
          clip = false
            [[popup.region.region]]
            name = "button"
            rect = [80, 40, 60, 20]
        """

    @Test(arguments: [
        (["--open", "delete", "100", "20"],
         #"{"x":100,"y":20,"hit":null,"path":[],"dismiss":["delete"],"click":"swallow","grab":null}"#),
        (["--open", "delete", "250", "20"],
         #"{"x":250,"y":20,"hit":{"popup":"delete","region":"delete"},"path":["delete"],"dismiss":[],"click":"pass","grab":null}"#),
        (["--open", "table", "160", "186"],
         #"{"x":160,"y":186,"hit":null,"path":[],"dismiss":["table"],"click":"swallow","grab":null}"#),
        (["--open", "table", "160", "200"],
         #"{"x":160,"y":200,"hit":{"popup":"table","region":"table.cell1"},"path":["table","table.cell1"],"dismiss":[],"click":"pass","grab":null}"#),
        (["--open", "form", "590", "90"],
         #"{"x":590,"y":90,"hit":{"popup":"form","region":"form.field"},"path":["form","form.field"],"dismiss":[],"click":"pass","grab":null}"#),
        (["--open", "form", "545", "55"],
         #"{"x":545,"y":55,"hit":{"popup":"form","region":"form.button"},"path":["form","form.button"],"dismiss":[],"click":"pass","grab":null}"#),
        (["--open", "window", "820", "50"],
         #"{"x":820,"y":50,"hit":{"popup":"window","region":"window.red.button"},"path":["window","window.red","window.red.button"],"dismiss":[],"click":"pass","grab":null}"#),
        (["--open", "delete", "--open", "window", "820", "50"],
         #"{"x":820,"y":50,"hit":{"popup":"window","region":"window.red.button"},"path":["window","window.red","window.red.button"],"dismiss":["delete"],"click":"pass","grab":null}"#),
    ])
    func hitJSONOnUIKitScenarios(_ arguments: [String], _ expected: String) throws {
        let r = try ctl(["hit", "--config", "CONFIG", "--json"] + arguments, config: Self.uikitScenarios)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == expected + "\n")
    }

    @Test func hitExplainsInWords() throws {
        let r = try ctl(["hit", "--config", "CONFIG", "--open", "window", "820", "50"], config: Self.uikitScenarios)
        #expect(r.stdout.contains("hit:      window → window.red → window.red.button"))
        #expect(r.stdout.contains("click:    pass (inside popup \"window\")"))
    }

    @Test func hitNeedsARectangleForWindowPopups() throws {
        let r = try ctl(["hit", "--config", "CONFIG", "--open", "pop", "1", "1"],
                        config: "[[popup]]\nname = \"pop\"\nwindow = { class = \"Pop\" }\n")
        #expect(r.status != 0)
        #expect(r.stderr.contains("--open pop=100,40,300,200"))
    }
}
