import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// packaging/debian-packages is the one list of what the build and the tests need: the
/// Makefile, .ci/run and the README must not drift from it, nor from what Package.swift and
/// the tests use.
@Suite("The package list")
struct DependencyListTests {
    struct Entry {
        let package: String
        let purpose: String
        let provides: String
    }

    static func entries() throws -> [Entry] {
        try Repository.text("packaging/debian-packages").split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = words.first, !first.hasPrefix("#") else { return nil }
            return words.count >= 3 ? Entry(package: String(words[0]), purpose: String(words[1]), provides: String(words[2])) : nil
        }
    }

    @Test func everyPkgConfigModuleAndAptProviderOfPackageSwiftIsABuildPackage() throws {
        let manifest = try Repository.text("Package.swift")
        let build = try Self.entries().filter { $0.purpose == "build" }
        let modules = quoted(after: "pkgConfig: ", in: manifest).flatMap { $0.split(separator: " ").map(String.init) }
        #expect(modules.contains("xcb") && modules.contains("wayland-client"), "no pkgConfig modules found in Package.swift: \(modules)")
        for module in modules {
            #expect(build.contains { $0.provides == "pkgconfig:\(module)" }, "no build package provides the pkg-config module \(module)")
        }
        let providers = quoted(after: ".apt([", in: manifest, list: true)
        #expect(!providers.isEmpty)
        for package in providers {
            #expect(build.contains { $0.package == package }, "Package.swift names \(package) as a provider; the build list does not")
        }
    }

    /// Programs the tests start: the first word of a command they spawn. Each must come from
    /// a package of the list, or be part of every Debian system.
    @Test func everyProgramTheTestsRunIsInTheList() throws {
        let everywhere: Set = ["env", "sh", "bash", "setpriv", "tar", "gzip", "gunzip", "uname", "dpkg", "dpkg-deb", "sleep", "getconf"]
        let listed = Set(try Self.entries().flatMap { entry in
            entry.provides.split(separator: ",").filter { $0.hasPrefix("program:") }.map { String($0.dropFirst(8)) }
        })
        var programs: [String: String] = [:]
        for directory in ["Sources/XTestHarness", "Sources/WaylandHarness", "Tests"] {
            let root = Repository.file(directory)
            for case let relative as String in FileManager.default.enumerator(atPath: root.path)!.allObjects where relative.hasSuffix(".swift") {
                let text = try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
                for pattern in [#"ChildProcess\(\s*\["([A-Za-z][\w.-]*)""#, #"CommandRun\.run\(\["([A-Za-z][\w.-]*)""#,
                                #"Terminal\(\["([A-Za-z][\w.-]*)""#, #"executable\(named: "([\w.-]+)"\)"#,
                                #"\+ \["([A-Za-z][\w.-]*)", "-"#, #"fileURLWithPath: "/usr/bin/([\w.-]+)""#,
                                #"command: \["([A-Za-z][\w.-]*)""#, #"return \["([A-Za-z][\w.-]*)"[,\]]"#] {
                    let regex = try NSRegularExpression(pattern: pattern)
                    for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                        if let range = Range(match.range(at: 1), in: text) { programs[String(text[range])] = "\(directory)/\(relative)" }
                    }
                }
            }
        }
        // The scan finds what it must, or it proves nothing.
        for known in ["Xvfb", "openbox", "i3", "xterm", "sway", "phoc", "systemd-analyze", "lintian", "tmux"] {
            #expect(programs[known] != nil, "the scan of the tests did not find \(known); found \(programs.keys.sorted())")
        }
        for (program, file) in programs.sorted(by: { $0.key < $1.key }) where !everywhere.contains(program) {
            #expect(listed.contains(program), "\(file) runs \(program), which no package in packaging/debian-packages provides")
        }
    }

    /// `make deps` installs the whole list, CI runs the README's commands, and the README names them.
    @Test func makefileCIAndREADMEUseTheList() throws {
        let makefile = try Repository.text("Makefile"), ci = try Repository.text(".ci/run"), readme = try Repository.text("README.md")
        let everything = "packaging/check-deps --list build test package"
        #expect(makefile.contains("apt-get install -y --no-install-recommends $$(\(everything))"), "make deps does not install the whole list")
        #expect(makefile.contains("$$(packaging/check-deps --list build)"), "make build-deps does not install the build packages")
        // In its fresh root, in this order: nothing installed by hand beside the README's commands.
        let inRoot = ci.split(separator: "\n").filter { $0.contains("in_root \"") }
        let steps = ["&& make deps\"", "&& make install\"", "clickawayctl check ", "&& make test\""]
        let places = steps.map { step in inRoot.firstIndex { $0.contains(step) } }
        #expect(places.allSatisfy { $0 != nil } && places.compactMap { $0 } == places.compactMap { $0 }.sorted(),
                ".ci/run does not run make deps, make install, clickawayctl check and make test, in this order, in its root")

        // The README opens with its quick start: the first section.
        let sections = readme.components(separatedBy: "\n## ")
        #expect(sections.count > 1 && sections[1].hasPrefix("Quick start\n"), "the README's first section is not its quick start")
        for command in ["make build-deps", "make install", "systemctl --user enable --now clickaway"] {
            #expect(sections.count > 1 && sections[1].contains(command), "the README's quick start lacks \(command)")
        }
        let development = readme.components(separatedBy: "\n## Development").last ?? ""
        #expect(development.contains("make deps") && development.contains("make test"), "the README's Development section lacks make deps / make test")

        // The README's Debian line for building is the list's build packages.
        let build = try Self.entries().filter { $0.purpose == "build" }.map(\.package)
        let aptLine = readme.split(separator: "\n").first { $0.contains("apt-get install") && $0.contains("libxcb1-dev") }
        let named = aptLine.map { $0.split(separator: " ").drop { $0 != "install" }.dropFirst().filter { !$0.hasPrefix("-") }.map(String.init) }
        #expect(Set(named ?? []) == Set(build), "README's apt-get line \(named ?? []) is not the build list \(build)")
    }

    /// check-deps names exactly the packages whose programs or modules are missing, and how
    /// to install them.
    @Test func checkDepsNamesWhatIsMissing() throws {
        let scratch = try scratchDirectory("check-deps")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // A PATH with pkg-config only, and no pkg-config modules at all.
        let bin = scratch.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for program in ["pkg-config", "dpkg-query"] {
            try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent(program),
                                                       withDestinationURL: URL(fileURLWithPath: "/usr/bin/\(program)"))
        }
        let run = try CommandRun.run(["/usr/bin/bash", Repository.file("packaging/check-deps").path, "--for", "make install", "build"],
                                     environment: ["PATH": bin.path, "PKG_CONFIG_LIBDIR": scratch.path, "PKG_CONFIG_PATH": ""])
        #expect(run.status == 1, "check-deps found nothing missing: \(run.output)")
        #expect(run.stderr.contains("make install needs packages that are not installed"), "\(run.stderr)")
        #expect(run.stderr.contains("libwayland-dev: no pkg-config module wayland-client"), "\(run.stderr)")
        #expect(run.stderr.contains("binutils: no strip on PATH"), "\(run.stderr)")
        #expect(!run.stderr.contains("pkg-config:"), "pkg-config is there, yet named missing: \(run.stderr)")
        #expect(run.stderr.contains("sudo apt-get install --no-install-recommends make libxcb1-dev libxcb-xfixes0-dev"), "\(run.stderr)")
        // No C compiler on that PATH, nor swift: nothing finds libstdc++.a.
        #expect(run.stderr.contains("libstdc++-12-dev: no C compiler finds libstdc++.a"), "\(run.stderr)")

        let present = try CommandRun.run([Repository.file("packaging/check-deps").path, "build"])
        #expect(present.status == 0, "the build packages of this machine are not all there: \(present.output)")
    }

    /// swift.org's prerequisites may bring no `cc`: the release build finds gcc's libstdc++.a
    /// with $(CC) if it is there, else the Swift toolchain's clang beside `swift`, else gcc,
    /// and says what is missing when none can.
    @Test func libstdcxxIsFoundWithoutCC() throws {
        let scratch = try scratchDirectory("find-libstdcxx")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let script = Repository.file("packaging/find-libstdcxx").path
        func find(path: String, cc: String = "no-such-cc") throws -> CommandRun {
            try CommandRun.run(["/bin/sh", script], environment: ["PATH": path, "CC": cc, "SWIFT": "swift"])
        }
        func directory(_ name: String, linking programs: [String: String]) throws -> String {
            let bin = scratch.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            for (name, target) in programs {
                try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent(name), withDestinationURL: URL(fileURLWithPath: target))
            }
            return bin.path
        }

        // Only the toolchain: its clang, beside swift (and beside what a symbolic link on PATH names).
        let swift = try #require(CommandRun.run(["sh", "-c", "command -v swift"]).stdout.split(separator: "\n").first.map(String.init),
                                 "no swift on the tests' PATH")
        let toolchain = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent().path
        let viaLink = try directory("link", linking: ["swift": swift, "readlink": "/usr/bin/readlink"])
        for path in [toolchain, viaLink] {
            let run = try find(path: path)
            #expect(run.status == 0 && run.stdout.hasPrefix("/") && run.stdout.hasSuffix("/libstdc++.a\n"),
                    "with PATH=\(path) (no cc, no gcc): \(run.output)")
            #expect(FileManager.default.fileExists(atPath: run.stdout.trimmingCharacters(in: .newlines)), "\(run.output)")
        }

        // Nothing to ask: it names what it looked for.
        let empty = try directory("empty", linking: [:])
        let none = try find(path: empty)
        #expect(none.status == 1 && none.stdout.isEmpty, "\(none.output)")
        #expect(none.stderr.contains("no C compiler to ask where libstdc++.a is: no no-such-cc and no gcc on PATH, and no clang beside swift"),
                "\(none.stderr)")

        // A compiler that does not find it: the package to install.
        let fake = scratch.appendingPathComponent("fake")
        try FileManager.default.createDirectory(at: fake, withIntermediateDirectories: true)
        try TestFiles.write("#!/bin/sh\necho libstdc++.a\n", to: fake.appendingPathComponent("gcc").path)
        chmod(fake.appendingPathComponent("gcc").path, 0o755)
        let missing = try find(path: fake.path)
        #expect(missing.status == 1 && missing.stderr.contains("no libstdc++.a: gcc found none; install")
                && missing.stderr.contains("libstdc++-12-dev"), "\(missing.output)")

        // The Makefile's rule links what the script found, with no cc at all.
        let link = scratch.appendingPathComponent("static-libstdc++")
        let made = try CommandRun.run(["make", "--no-print-directory", "-C", Repository.root.path, "\(link.path)/libstdc++.a",
                                       "STATIC_CXX=\(link.path)", "CC=no-such-cc"])
        #expect(made.status == 0, "\(made.output)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.appendingPathComponent("libstdc++.a").path))?
                    .hasSuffix("/libstdc++.a") == true, "make linked no libstdc++.a: \(made.output)")
    }

    /// The release build links with lld (the Makefile's RELEASE_LINK): `make check-lld` finds
    /// it beside `swift` as the toolchain's clang does, also through a link on PATH, and says
    /// what is missing before a build fails on it.
    @Test func lldIsFoundBesideSwift() throws {
        let scratch = try scratchDirectory("check-lld")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let swift = try #require(CommandRun.run(["sh", "-c", "command -v swift"]).stdout.split(separator: "\n").first.map(String.init),
                                 "no swift on the tests' PATH")
        let link = scratch.appendingPathComponent("swift")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: URL(fileURLWithPath: swift))
        let lonely = scratch.appendingPathComponent("lonely/swift")
        try FileManager.default.createDirectory(at: lonely.deletingLastPathComponent(), withIntermediateDirectories: true)
        try TestFiles.write("#!/bin/sh\n", to: lonely.path)
        chmod(lonely.path, 0o755)
        func check(_ swift: String) throws -> CommandRun {
            try CommandRun.run(["make", "--no-print-directory", "-C", Repository.root.path, "check-lld", "SWIFT=\(swift)"],
                               environment: ["PATH": "/usr/bin:/bin"])
        }
        for found in [swift, link.path] {
            let run = try check(found)
            #expect(run.status == 0 && run.output.isEmpty, "SWIFT=\(found): \(run.output)")
        }
        let missing = try check(lonely.path)
        #expect(missing.status != 0 && missing.stderr.contains("no ld.lld beside \(lonely.path) nor on PATH"), "\(missing.output)")
    }

    /// The strings quoted after each `marker`; with `list`, every string up to the closing bracket.
    private func quoted(after marker: String, in text: String, list: Bool = false) -> [String] {
        text.components(separatedBy: marker).dropFirst().flatMap { rest -> [String] in
            let scope = list ? String(rest.prefix { $0 != "]" }) : String(rest.prefix { $0 != "," && $0 != ")" })
            return scope.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }
    }
}
