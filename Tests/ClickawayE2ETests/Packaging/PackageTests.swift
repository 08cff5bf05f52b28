import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// `make deb` and `make dist` from the release binaries `make test` builds: the package is
/// unpacked into a scratch root and the tarball installed with its own script, and the
/// programs they carry are run.
@Suite("Debian package and tarball")
struct PackageTests {
    /// Every file the package must carry, under its root.
    static let packagedFiles = [
        "usr/bin/clickaway", "usr/bin/clickawayctl",
        "usr/lib/systemd/user/clickaway.service",
        "usr/share/man/man1/clickaway.1.gz", "usr/share/man/man1/clickawayctl.1.gz", "usr/share/man/man5/clickaway.toml.5.gz",
        "usr/share/bash-completion/completions/clickaway", "usr/share/bash-completion/completions/clickawayctl",
        "usr/share/zsh/vendor-completions/_clickaway", "usr/share/zsh/vendor-completions/_clickawayctl",
        "usr/share/fish/vendor_completions.d/clickaway.fish", "usr/share/fish/vendor_completions.d/clickawayctl.fish",
        "usr/share/doc/clickaway/README.md", "usr/share/doc/clickaway/config.toml",
        "usr/share/doc/clickaway/copyright", "usr/share/doc/clickaway/changelog.gz",
    ]

    @Test func debianPackageCarriesEverythingAndItsProgramsRun() throws {
        let scratch = try scratchDirectory("deb")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let version = try Repository.version()
        // gzip -1: the package's contents are what is tested, and xz takes minutes on 2 cores.
        let deb = try make("deb", in: scratch, environment: ["DEB_COMPRESSION": "gzip", "DEB_COMPRESSION_LEVEL": "1"])
        #expect(deb.hasSuffix("/clickaway_\(version)_\(try architecture()).deb"), "make deb made \(deb)")

        let fields = try CommandRun.run(["dpkg-deb", "--field", deb, "Package", "Version", "Depends"])
        try #require(fields.status == 0, "dpkg-deb --field failed: \(fields.output)")
        #expect(fields.stdout.contains("Package: clickaway\n") && fields.stdout.contains("Version: \(version)\n"), "\(fields.stdout)")
        // dpkg-shlibdeps' work: the libraries the binaries link, each with its package.
        for package in ["libc6", "libxcb1", "libxcb-xfixes0", "libxcb-randr0", "libxcb-xtest0", "libwayland-client0"] {
            #expect(fields.stdout.contains(" \(package)"), "Depends lacks \(package): \(fields.stdout)")
        }

        let root = scratch.appendingPathComponent("root")
        let unpack = try CommandRun.run(["dpkg-deb", "-x", deb, root.path])
        try #require(unpack.status == 0, "dpkg-deb -x failed: \(unpack.output)")
        for file in Self.packagedFiles {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), "the package has no /\(file)")
        }
        let recipes = try FileManager.default.contentsOfDirectory(atPath: Repository.file("config/recipes").path).filter { $0.hasSuffix(".toml") || $0.hasSuffix(".sh") }
        for recipe in recipes {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("usr/share/clickaway/recipes/\(recipe)").path),
                    "the package has no recipe \(recipe)")
        }

        let copyright = try String(contentsOf: root.appendingPathComponent("usr/share/doc/clickaway/copyright"), encoding: .utf8)
        #expect(copyright == (try Repository.text("packaging/debian/copyright")) && copyright.contains("\nLicense: MIT\n"),
                "the package's copyright file is not packaging/debian/copyright with the MIT licence")
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("usr/share/doc/clickaway/LICENSE").path),
                "the package carries LICENSE beside its copyright file (lintian: extra-license-file)")

        let bin = root.appendingPathComponent("usr/bin")
        try expectProgramsRun(in: bin, version: version,
                              example: root.appendingPathComponent("usr/share/doc/clickaway/config.toml").path)
        for binary in ["clickaway", "clickawayctl"] {
            let sections = try CommandRun.run(["readelf", "--section-headers", bin.appendingPathComponent(binary).path])
            #expect(!sections.stdout.contains(".symtab"), "/usr/bin/\(binary) is not stripped")
        }

        let unit = try String(contentsOf: root.appendingPathComponent("usr/lib/systemd/user/clickaway.service"), encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/clickaway\n") && unit.contains("\nExecReload=/usr/bin/clickawayctl reload\n"),
                "the packaged unit does not name /usr/bin:\n\(unit)")
        #expect(unit.contains("\nDocumentation=man:clickaway(1)\n"), "the packaged unit does not point at the man page")

        for page in ["man1/clickaway.1.gz", "man1/clickawayctl.1.gz", "man5/clickaway.toml.5.gz"] {
            let rendered = try CommandRun.run(["sh", "-c", "gunzip -c \"$1\" | groff -ww -z -mandoc", "sh",
                                               root.appendingPathComponent("usr/share/man/\(page)").path])
            #expect(rendered.status == 0 && rendered.stderr.isEmpty, "the packaged \(page) renders with warnings:\n\(rendered.output)")
        }

        let lintian = try CommandRun.run(["lintian", "--fail-on", "error,warning", deb])
        let tags = lintian.stdout.split(separator: "\n").filter { $0.range(of: #"^[EW]: "#, options: .regularExpression) != nil }
        #expect(lintian.status == 0 && tags.isEmpty, "lintian found errors or warnings:\n\(lintian.output)")
    }

    @Test func tarballInstallsWithItsScriptAndUninstalls() throws {
        let scratch = try scratchDirectory("dist")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let version = try Repository.version()
        let tarball = try make("dist", in: scratch)
        let name = "clickaway-\(version)-linux-\(try CommandRun.run(["uname", "-m"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))"
        #expect(tarball.hasSuffix("/\(name).tar.gz"), "make dist made \(tarball)")
        let unpacked = scratch.appendingPathComponent("unpacked")
        try FileManager.default.createDirectory(at: unpacked, withIntermediateDirectories: true)
        let untar = try CommandRun.run(["tar", "-C", unpacked.path, "-xzf", tarball])
        try #require(untar.status == 0, "tar failed: \(untar.output)")

        #expect(FileManager.default.contentsEqual(atPath: unpacked.appendingPathComponent("\(name)/LICENSE").path,
                                                  andPath: Repository.file("LICENSE").path), "the tarball has no LICENSE beside install.sh")

        // As a user would: ./install.sh with their HOME, into ~/.local.
        let home = scratch.appendingPathComponent("home")
        let prefix = home.appendingPathComponent(".local")
        let script = unpacked.appendingPathComponent("\(name)/install.sh").path
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path]
        let install = try CommandRun.run([script, "PREFIX=\(prefix.path)"], environment: environment)
        try #require(install.status == 0, "install.sh failed: \(install.output)")
        let config = home.appendingPathComponent(".config/clickaway/config.toml").path
        #expect(FileManager.default.contentsEqual(atPath: config, andPath: Repository.file("config/config.toml").path),
                "install.sh did not put the example configuration in place:\n\(install.output)")
        try expectProgramsRun(in: prefix.appendingPathComponent("bin"), version: version, example: config)
        for file in ["share/man/man1/clickawayctl.1", "share/man/man5/clickaway.toml.5", "share/zsh/site-functions/_clickawayctl",
                     "share/fish/vendor_completions.d/clickawayctl.fish", "share/bash-completion/completions/clickawayctl"] {
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "install.sh installed no \(file)")
        }
        let unit = try String(contentsOf: prefix.appendingPathComponent("share/systemd/user/clickaway.service"), encoding: .utf8)
        #expect(unit.contains("\nExecStart=\(prefix.path)/bin/clickaway\n"), "the unit does not name the installed daemon:\n\(unit)")

        let uninstall = try CommandRun.run([script, "--uninstall", "PREFIX=\(prefix.path)"], environment: environment)
        try #require(uninstall.status == 0, "install.sh --uninstall failed: \(uninstall.output)")
        let left = try filesUnder(prefix.path)
        #expect(left.isEmpty, "install.sh --uninstall left behind: \(left)")
        #expect(FileManager.default.fileExists(atPath: config), "install.sh --uninstall removed the configuration")
    }

    /// `make TARGET` from the release binaries into `scratch`; the file it made (its last line).
    private func make(_ target: String, in scratch: URL, environment: [String: String] = [:]) throws -> String {
        let run = try CommandRun.run([
            "make", "--no-print-directory", "-C", Repository.root.path, target, "BUILDDIR=\(try Repository.releaseBinaries().path)",
            "STAGE=\(scratch.appendingPathComponent("stage").path)", "PACKAGEDIR=\(scratch.appendingPathComponent("packages").path)",
        ], environment: environment)
        try #require(run.status == 0, "make \(target) failed (\(run.status)):\n\(run.output)")
        let made = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        try #require(FileManager.default.fileExists(atPath: made), "make \(target) printed no file it made:\n\(run.output)")
        return made
    }

    private func architecture() throws -> String {
        try CommandRun.run(["dpkg", "--print-architecture"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The installed programs answer --version, and clickawayctl accepts the installed example.
func expectProgramsRun(in bin: URL, version: String, example: String) throws {
    for binary in ["clickaway", "clickawayctl"] {
        let run = try CommandRun.run([bin.appendingPathComponent(binary).path, "--version"])
        #expect(run.status == 0 && run.stdout == "\(binary) \(version)\nLicense: MIT\n", "\(binary) --version: \(run.output)")
    }
    let check = try CommandRun.run([bin.appendingPathComponent("clickawayctl").path, "check", example])
    #expect(check.status == 0 && check.stdout.hasPrefix("ok: "), "clickawayctl check on the installed example: \(check.output)")
}

/// Everything but directories under `path`, relative to it.
func filesUnder(_ path: String) throws -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: path) else { return [] }
    var files: [String] = []
    while let relative = walker.nextObject() as? String {
        if walker.fileAttributes?[.type] as? FileAttributeType != .typeDirectory { files.append(relative) }
    }
    return files.sorted()
}
