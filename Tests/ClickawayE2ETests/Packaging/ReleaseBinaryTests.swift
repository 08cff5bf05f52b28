import Foundation
import ProcessSupport
import Testing
import XTestHarness

/// What the release binaries link, read from their symbol tables: ICU's data alone is 36 MB,
/// full Foundation most of the rest of the 61 MB binaries this started from (BENCHMARKS.md,
/// Footprint). Sizes are measured by bench/footprint, not asserted here.
@Suite("Release binaries")
struct ReleaseBinaryTests {
    /// Symbol prefixes of what must not be linked: Swift modules by their mangled names, and
    /// ICU's data and functions as swift-corelibs-foundation renames them.
    static let icu = ["$s30FoundationInternationalization", "$s14_FoundationICU", "icudt", "swift_ucol_", "swift_u_"]
    static let fullFoundation = ["$s10Foundation"]

    @Test(arguments: ["clickaway", "clickawayctl"])
    func noICUAndNoFullFoundation(_ binary: String) throws {
        let symbols = try definedSymbols(binary)
        // argument-parser on Linux imports FoundationEssentials (BENCHMARKS.md: what it costs):
        // that one is allowed, ICU and the rest of Foundation are not.
        let forbidden = Self.icu + Self.fullFoundation
        for prefix in forbidden {
            let found = symbols.filter { $0.hasPrefix(prefix) }
            #expect(found.count == 0, "\(binary) links \(found.count) symbols starting \(prefix), e.g. \(found.prefix(3))")
        }
        // What the search above depends on: the symbols are there to search, and a linked
        // module shows by its mangled prefix.
        #expect(symbols.contains { $0.hasPrefix("$s13ClickawayCore") }, "no ClickawayCore symbols in \(binary): is it stripped?")
        #expect(symbols.contains { $0.hasPrefix("$s14ArgumentParser") }, "no ArgumentParser symbols in \(binary)")
    }

    @Test(arguments: ["clickaway", "clickawayctl"])
    func noSwiftOrICUSharedLibraries(_ binary: String) throws {
        let path = try Repository.releaseBinaries().appendingPathComponent(binary).path
        let dynamic = try CommandRun.run(["readelf", "--dynamic", path])
        try #require(dynamic.status == 0, "readelf failed: \(dynamic.output)")
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libc.so") }, "readelf shows no NEEDED libc: \(dynamic.stdout)")
        for line in needed {
            #expect(!line.contains("libswift") && !line.contains("libFoundation") && !line.contains("libicu"),
                    "\(binary) needs a shared library a user's machine does not have: \(line)")
        }
    }

    private func definedSymbols(_ binary: String) throws -> [Substring] {
        let path = try Repository.releaseBinaries().appendingPathComponent(binary).path
        let nm = try CommandRun.run(["nm", "--defined-only", "--format=just-symbols", path])
        try #require(nm.status == 0, "nm failed on \(path): \(nm.output)")
        return nm.stdout.split(separator: "\n")
    }
}
