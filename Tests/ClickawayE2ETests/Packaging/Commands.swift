import Foundation
import ProcessSupport
import XTestHarness

/// The repository, and the programs and trees the packaging tests work on.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func file(_ path: String) -> URL { root.appendingPathComponent(path) }

    static func text(_ path: String) throws -> String { try String(contentsOf: file(path), encoding: .utf8) }

    /// `clickawayVersion` in Sources/ClickawayCore/Version.swift, the one place the version is written.
    static func version() throws -> String {
        let source = try text("Sources/ClickawayCore/Version.swift")
        guard let line = source.split(separator: "\n").first(where: { $0.hasPrefix("public let clickawayVersion = \"") }) else {
            throw HarnessError("Version.swift has no `public let clickawayVersion = \"...\"` line")
        }
        return String(line.dropFirst("public let clickawayVersion = \"".count).dropLast())
    }

    /// The release binaries `make test` builds (CLICKAWAY_RELEASE_BIN), else those of an
    /// earlier `make binaries`.
    static func releaseBinaries() throws -> URL {
        let directory = ProcessInfo.processInfo.environment["CLICKAWAY_RELEASE_BIN"].map { URL(fileURLWithPath: $0) }
            ?? file(".build/release")
        for binary in ["clickaway", "clickawayctl"]
        where !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(binary).path) {
            throw HarnessError("no release \(binary) in \(directory.path): `make test` builds it (or `make binaries`)")
        }
        return directory
    }
}

/// A new empty directory under the temporary directory; the caller removes it (`defer`).
func scratchDirectory(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A command run to its end: its exit status, and stdout and stderr as the tests read them.
struct CommandRun {
    let status: Int32
    let stdout: String
    let stderr: String

    /// Both streams, for failure messages.
    var output: String { stdout + (stderr.isEmpty ? "" : "\n[stderr]\n" + stderr) }

    /// Runs `arguments[0]` (found on PATH) with the test's environment, less what a
    /// surrounding make hands down, plus `environment`; stdin is /dev/null. Bounded by `limit`.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                    limit: Duration = .seconds(300)) throws -> CommandRun {
        if let directory { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        var inherited = ProcessInfo.processInfo.environment
        for name in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "DESTDIR", "PREFIX", "BUILDDIR"] { inherited[name] = nil }
        let run = try ProgramRun.run(["/usr/bin/env"] + arguments, environment: inherited.merging(environment) { $1 },
                                     directory: (directory ?? Repository.root).path, limit: limit)
        return CommandRun(status: run.status, stdout: run.stdout, stderr: run.stderr)
    }
}
