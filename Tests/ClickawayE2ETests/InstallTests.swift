import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// `make install` into a temporary prefix, from the binaries this test run was built with,
/// then `systemd-analyze verify` on the installed unit, then `make uninstall`.
@Suite("make install and uninstall")
struct InstallTests {
    static let packageRoot = Repository.root
    static let binaries = ["clickaway", "clickawayctl"]

    @Test func installsVerifiesAndUninstallsWithoutTouchingTheConfiguration() throws {
        let fm = FileManager.default
        let root = fm.temporaryDirectory.appendingPathComponent("clickaway-install-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: root) }
        let prefix = root.appendingPathComponent("prefix").path
        let configDir = root.appendingPathComponent("config/clickaway").path
        let built = DaemonFixture.buildDirectory.path
        for binary in Self.binaries where !fm.isExecutableFile(atPath: "\(built)/\(binary)") {
            throw HarnessError("\(built)/\(binary) is not built: run `swift build` before `swift test` (`make test` does both)")
        }
        let variables = ["PREFIX=\(prefix)", "CONFIGDIR=\(configDir)", "BUILDDIR=\(built)",
                         "STAGE=\(root.appendingPathComponent("stage").path)"]

        let install = try CommandRun.run(["make", "-C", Self.packageRoot.path, "install"] + variables, in: root)
        try #require(install.status == 0, "make install failed (\(install.status)):\n\(install.output)")

        // The GNOME Shell extension, for the GNOME Shell here (43: imports), where GNOME finds it.
        let gnomeExtension = "\(prefix)/share/gnome-shell/extensions/clickaway@clickaway.github.io"
        let metadata = try String(contentsOfFile: gnomeExtension + "/metadata.json", encoding: .utf8)
        let entry = try String(contentsOfFile: gnomeExtension + "/extension.js", encoding: .utf8)
        let shell = try? CommandRun.run(["gnome-shell", "--version"])
        let major = shell?.stdout.firstMatch(of: /GNOME Shell (\d+)/).map { String($0.output.1) } ?? "45"
        #expect(metadata.contains("\"\(major)\""), "make install picked the extension for another GNOME Shell than \(major):\n\(metadata)")
        #expect(entry.contains(Int(major)! >= 45 ? "export default class" : "function enable()"), "\(entry.prefix(300))")

        let example = Self.packageRoot.appendingPathComponent("config/config.toml").path
        try expectProgramsRun(in: URL(fileURLWithPath: "\(prefix)/bin"), version: try Repository.version(), example: example)
        for binary in Self.binaries {
            let sections = try CommandRun.run(["readelf", "--section-headers", "\(prefix)/bin/\(binary)"])
            #expect(!sections.stdout.contains(".symtab"), "make install did not strip \(binary)")
        }
        for file in ["man/man1/clickaway.1", "man/man1/clickawayctl.1", "man/man5/clickaway.toml.5",
                     "bash-completion/completions/clickawayctl", "zsh/site-functions/_clickawayctl",
                     "fish/vendor_completions.d/clickawayctl.fish", "bash-completion/completions/clickaway"] {
            #expect(fm.fileExists(atPath: "\(prefix)/share/\(file)"), "make install installed no share/\(file)")
        }

        let unitPath = "\(prefix)/share/systemd/user/clickaway.service"
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        #expect(unit.contains("\nExecStart=\(prefix)/bin/clickaway\n"), "ExecStart does not name the installed daemon:\n\(unit)")
        #expect(unit.contains("\nExecReload=\(prefix)/bin/clickawayctl reload\n"), "ExecReload does not name the installed clickawayctl")
        #expect(unit.contains("\nDocumentation=file:\(prefix)/share/doc/clickaway/README.md\n"))
        #expect(unit.range(of: "@[A-Z]+@", options: .regularExpression) == nil, "a placeholder is left in \(unitPath)")
        #expect(fm.fileExists(atPath: "\(prefix)/share/doc/clickaway/README.md"))
        #expect(fm.contentsEqual(atPath: "\(prefix)/share/doc/clickaway/LICENSE", andPath: Self.packageRoot.appendingPathComponent("LICENSE").path),
                "make install did not install the licence beside the README")
        // The README's links into docs/ lead somewhere where it is installed too.
        let readme = try String(contentsOfFile: "\(prefix)/share/doc/clickaway/README.md", encoding: .utf8)
        let linked = Set(readme.matches(of: /\]\((docs\/[^)#]+)/).map { String($0.output.1) })
        #expect(linked.contains("docs/wayland.md") && linked.contains("docs/example.svg"), "\(linked)")
        for path in linked {
            #expect(fm.fileExists(atPath: "\(prefix)/share/doc/clickaway/\(path)"), "the README links to \(path), which make install did not install")
        }

        let recipes = try fm.contentsOfDirectory(atPath: Self.packageRoot.appendingPathComponent("config/recipes").path)
            .filter { $0.hasSuffix(".toml") || $0.hasSuffix(".sh") }
        #expect(!recipes.isEmpty)
        for recipe in recipes {
            #expect(fm.contentsEqual(atPath: "\(prefix)/share/clickaway/recipes/\(recipe)",
                                     andPath: Self.packageRoot.appendingPathComponent("config/recipes/\(recipe)").path),
                    "recipe \(recipe) was not installed as it is")
        }
        #expect(fm.contentsEqual(atPath: "\(configDir)/config.toml", andPath: example), "the example configuration was not installed")

        try verify(unitPath: unitPath, root: root, manPath: "\(prefix)/share/man")

        // A configuration that exists is the user's: a second install leaves it alone.
        let mine = "# my own configuration\n"
        try TestFiles.write(mine, to: "\(configDir)/config.toml")
        let again = try CommandRun.run(["make", "-C", Self.packageRoot.path, "install"] + variables, in: root)
        try #require(again.status == 0, "the second make install failed (\(again.status)):\n\(again.output)")
        #expect(try String(contentsOfFile: "\(configDir)/config.toml", encoding: .utf8) == mine,
                "make install overwrote an existing configuration")
        #expect(again.output.contains("kept your \(configDir)/config.toml"), "\(again.output)")

        let uninstall = try CommandRun.run(["make", "-C", Self.packageRoot.path, "uninstall"] + variables, in: root)
        try #require(uninstall.status == 0, "make uninstall failed (\(uninstall.status)):\n\(uninstall.output)")
        let left = try filesUnder(prefix)
        #expect(left.isEmpty, "make uninstall left behind: \(left)")
        for directory in ["share/clickaway", "share/doc/clickaway"] {
            #expect(!fm.fileExists(atPath: "\(prefix)/\(directory)"), "make uninstall left \(prefix)/\(directory)")
        }
        #expect(try String(contentsOfFile: "\(configDir)/config.toml", encoding: .utf8) == mine,
                "make uninstall touched the configuration")
    }

    /// `systemd-analyze --user verify`, as the user manager would load the unit: it must pass
    /// without a word about the unit. A broken copy must draw a warning, or the check checks nothing.
    /// It also runs `man` on the unit's `Documentation=man:` pages, found where install put them.
    private func verify(unitPath: String, root: URL, manPath: String) throws {
        guard let analyze = executable(named: "systemd-analyze") else {
            Issue.record("systemd-analyze is not installed: install the systemd package (apt-get install systemd)")
            return
        }
        // The user-mode manager it starts needs a runtime directory of its own.
        let runtime = root.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let environment = ["XDG_RUNTIME_DIR": runtime.path, "MANPATH": manPath]

        let verified = try CommandRun.run([analyze, "--user", "verify", unitPath], in: root, environment: environment)
        #expect(verified.status == 0, "systemd-analyze verify failed (\(verified.status)):\n\(verified.output)")
        #expect(!verified.output.contains("clickaway.service"), "systemd-analyze verify warns about the unit:\n\(verified.output)")

        let broken = root.appendingPathComponent("broken/clickaway.service")
        try FileManager.default.createDirectory(at: broken.deletingLastPathComponent(), withIntermediateDirectories: true)
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        try TestFiles.write(unit.replacingOccurrences(of: "[Service]\n", with: "[Service]\nRestartSecs=2\n"), to: broken.path)
        let rejected = try CommandRun.run([analyze, "--user", "verify", broken.path], in: root, environment: environment)
        #expect(rejected.output.contains("Unknown key 'RestartSecs'"),
                "systemd-analyze verify did not notice an unknown key, so its silence proves nothing:\n\(rejected.output)")
    }

    private func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":") + ["/usr/bin", "/bin"])
            .map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
