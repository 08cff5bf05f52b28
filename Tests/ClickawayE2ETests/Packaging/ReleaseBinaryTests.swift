import ClickawayCore
import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// What the release binaries link, read from their symbol tables: ICU's data alone is 36 MB,
/// full Foundation most of the rest of the 61 MB binaries this started from, and
/// FoundationEssentials 6.3 MiB of each (what argument-parser brought; BENCHMARKS.md,
/// Footprint). Sizes are measured by bench/footprint, not asserted here.
@Suite("Release binaries")
struct ReleaseBinaryTests {
    /// Symbol prefixes of what must not be linked: Swift modules by their mangled names, and
    /// ICU's data and functions as swift-corelibs-foundation renames them.
    static let icu = ["$s30FoundationInternationalization", "$s14_FoundationICU", "icudt", "swift_ucol_", "swift_u_"]
    static let foundation = ["$s10Foundation", "$s20FoundationEssentials", "$s22_FoundationCollections"]
    /// The regex runtime, 1.2 MB, which one `firstRange(of:)` or `contains(_: String)` links.
    static let regex = ["$s17_StringProcessing", "$s12_RegexParser"]

    @Test(arguments: ["clickaway", "clickawayctl"])
    func noICUNoFoundationAndNoRegexRuntime(_ binary: String) throws {
        let symbols = try definedSymbols(binary)
        for prefix in Self.icu + Self.foundation + Self.regex {
            let found = symbols.filter { $0.hasPrefix(prefix) }
            #expect(found.count == 0, "\(binary) links \(found.count) symbols starting \(prefix), e.g. \(found.prefix(3))")
        }
        // What the search above depends on: the symbols are there to search, and a linked
        // module shows by its mangled prefix.
        #expect(symbols.contains { $0.hasPrefix("$s13ClickawayCore") }, "no ClickawayCore symbols in \(binary): is it stripped?")
        #expect(symbols.contains { $0.hasPrefix("$s20ClickawayCommandLine") }, "no ClickawayCommandLine symbols in \(binary)")
    }

    /// Only libraries of the system's own packages: no Swift runtime, no ICU, and no
    /// libstdc++, which `make binaries` links in (its symbol tables alone are 0.7 MiB
    /// resident when it is loaded).
    @Test(arguments: ["clickaway", "clickawayctl"])
    func onlyTheSystemsSharedLibraries(_ binary: String) throws {
        let path = try Repository.releaseBinaries().appendingPathComponent(binary).path
        let dynamic = try CommandRun.run(["readelf", "--dynamic", path])
        try #require(dynamic.status == 0, "readelf failed: \(dynamic.output)")
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libc.so") }, "readelf shows no NEEDED libc: \(dynamic.stdout)")
        for line in needed {
            #expect(!line.contains("libswift") && !line.contains("libFoundation") && !line.contains("libicu"),
                    "\(binary) needs a shared library a user's machine does not have: \(line)")
            #expect(!line.contains("libstdc++"), "\(binary) loads libstdc++ instead of linking it in (make binaries): \(line)")
        }
    }

    /// Relative relocations packed (DT_RELR, the Makefile's RELEASE_LINK) where the build's
    /// glibc reads them, 2.36 and later: linked by gold, 28,000 of them filled 683 KB that the
    /// loader read at every start. Built on an older glibc, none are packed, or the programs
    /// would not start there.
    @Test(arguments: ["clickaway", "clickawayctl"])
    func relativeRelocationsArePacked(_ binary: String) throws {
        let path = try Repository.releaseBinaries().appendingPathComponent(binary).path
        let dynamic = try CommandRun.run(["readelf", "--dynamic", path])
        try #require(dynamic.status == 0, "readelf failed: \(dynamic.output)")
        func bytes(_ tag: String) -> Int? {
            dynamic.stdout.split(separator: "\n").first { $0.contains("(\(tag))") }
                .flatMap { line in line.split(separator: " ").reversed().dropFirst().first.flatMap { Int($0) } }
        }
        let getconf = try CommandRun.run(["getconf", "GNU_LIBC_VERSION"])
        let version = getconf.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = version.split(whereSeparator: { $0 == " " || $0 == "." }).compactMap { Int($0) }
        try #require(getconf.status == 0 && parts.count >= 2, "getconf GNU_LIBC_VERSION: \(getconf.output)")
        guard (parts[0], parts[1]) >= (2, 36) else {
            #expect(bytes("RELRSZ") == nil, "\(binary) packs relative relocations that glibc \(version) cannot read")
            return
        }
        #expect(bytes("RELRSZ") != nil, "\(binary) has no packed relative relocations (RELR): \(dynamic.stdout)")
        let unpacked = try #require(bytes("RELASZ"), "no RELASZ in \(dynamic.stdout)")
        #expect(unpacked < 16 * 1024, "\(binary) keeps \(unpacked) bytes of RELA relocations")
    }

    /// The Makefile packs them only for a glibc that reads them (`getconf GNU_LIBC_VERSION`).
    @Test func relocationsArePackedOnlyForAGlibcThatReadsThem() throws {
        for (glibc, packed) in [("glibc 2.35", false), ("glibc 2.36", true), ("glibc 2.41", true), ("glibc 2.100", true), ("", false)] {
            let run = try CommandRun.run(["make", "-n", "--no-print-directory", "-C", Repository.root.path, "binaries", "GLIBC=\(glibc)"])
            #expect(run.status == 0, "make -n binaries: \(run.output)")
            #expect(run.stdout.contains("-z -Xlinker pack-relative-relocs") == packed, "GLIBC=\(glibc): \(run.stdout)")
        }
    }

    private func definedSymbols(_ binary: String) throws -> [Substring] {
        let path = try Repository.releaseBinaries().appendingPathComponent(binary).path
        let nm = try CommandRun.run(["nm", "--defined-only", "--format=just-symbols", path])
        try #require(nm.status == 0, "nm failed on \(path): \(nm.output)")
        return nm.stdout.split(separator: "\n")
    }
}

/// The release binaries as `make install` builds them (the Swift runtime and libstdc++ linked
/// in, no dynamic symbol table), doing the daemon's job under openbox in both X11 modes: the
/// rest of the suite runs the debug build.
@Suite("Release binaries at work")
struct ReleaseDaemonTests {
    static let config = """
        [defaults]
        grace_ms = 0

        [[popup]]
        name = "pop"
        window = { class = "Pop" }

        [[popup]]
        name = "panel"
        rect = [1000, 20, 200, 100]
        """

    @Test(arguments: [XBackend.grab, .shield])
    func windowAndRectPopupsAreDismissedByOutsideClicksOnly(_ backend: XBackend) throws {
        let f = try DaemonFixture(config: Self.config, openbox: true, backend: backend)
        f.programs = try Repository.releaseBinaries()
        try f.startDaemon()
        let popup = try f.window(Rect(x: 100, y: 100, width: 300, height: 200), class: "Pop")
        try f.eventually("the popup to open") { try f.openPopups() == ["pop"] }
        let behind = try f.window(Rect(x: 600, y: 500, width: 200, height: 150), class: "Behind")
        let popupRect = try f.client.connection.rootRect(popup.id)

        try f.click(popupRect.x + 20, popupRect.y + 20)
        try f.client.waitForPresses(1, on: popup, "the inside click to reach the popup (openbox replays it)")
        #expect(f.client.presses(popup).count == 1, "the inside click did not reach the popup: \(f.log)")
        #expect(f.client.deleteRequests(popup) == 0)

        let open = try f.ctl(["open", "panel"])
        #expect(open.status == 0 && open.stdout == "panel: open\n", "\(open.output)")
        let behindRect = try f.client.connection.rootRect(behind.id)
        try f.click(behindRect.x + 50, behindRect.y + 50)
        #expect(f.client.deleteRequests(popup) == 1, "the outside click did not close the popup: \(f.log)")
        #expect(f.client.presses(behind).isEmpty, "the dismissing click reached the window under it")
        try f.eventually("both popups to be dismissed") { try f.openPopups().isEmpty }
        let status = try f.ctl(["status"])
        #expect(status.status == 0 && status.stdout.contains("open:     nothing"), "\(status.output)")
    }
}
