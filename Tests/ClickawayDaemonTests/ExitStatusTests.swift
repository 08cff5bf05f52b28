import ClickawayDaemon
import Foundation
import ProcessSupport
import Testing

/// The daemon's exit statuses, the unit that acts on them and docs/systemd.md that lists them
/// say the same thing.
@Suite struct ExitStatusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The unit's one line for `key`, without the key.
    static func unitValue(_ key: String) throws -> String? {
        try text("systemd/clickaway.service").split(separator: "\n").first { $0.hasPrefix(key + "=") }
            .map { String($0.dropFirst(key.count + 1)) }
    }

    @Test func statusesAreDistinctAndSysexitsWhereSysexitsHasOne() {
        let values = DaemonExitStatus.allCases.map(\.rawValue)
        #expect(Set(values).count == values.count)
        #expect(values == [0, 1, 64, 69, 73])
        #expect(DaemonExitStatus.noRestart.map(\.rawValue) == [64, 69, 73])
        for status in DaemonExitStatus.allCases { #expect(status.meaning.hasSuffix("."), "\(status)") }
    }

    /// systemd restarts on failure, except after what a restart cannot fix.
    @Test func theUnitDoesNotRestartWhatARestartCannotFix() throws {
        #expect(try Self.unitValue("Restart") == "on-failure")
        let prevented = try #require(try Self.unitValue("RestartPreventExitStatus"), "the unit has no RestartPreventExitStatus=")
        #expect(prevented.split(separator: " ").map { Int32($0) } == DaemonExitStatus.noRestart.map(\.rawValue))
    }

    /// ExecCondition= as systemd runs it ($$ is a $): the start is skipped (exit 1) without
    /// DISPLAY and WAYLAND_DISPLAY, and goes ahead with either.
    @Test func theUnitSkipsTheStartWithoutADisplay() throws {
        let line = try #require(try Self.unitValue("ExecCondition"), "the unit has no ExecCondition=")
        let prefix = "/bin/sh -c '"
        try #require(line.hasPrefix(prefix) && line.hasSuffix("'"), "ExecCondition=\(line) is not /bin/sh -c '...'")
        let script = String(line.dropFirst(prefix.count).dropLast()).replacingOccurrences(of: "$$", with: "$")
        #expect(!script.contains("'"))
        for (environment, expected) in [([String: String](), Int32(1)), (["DISPLAY": ""], 1), (["WAYLAND_DISPLAY": ""], 1),
                                        (["DISPLAY": ":0"], 0), (["WAYLAND_DISPLAY": "wayland-1"], 0),
                                        (["DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-1"], 0)] {
            let run = try ProgramRun.run(["/bin/sh", "-c", script], environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
            #expect(run.status == expected, "ExecCondition with \(environment): \(run.status) \(run.stderr)")
        }
    }

    /// docs/systemd.md has a row for each status and the unit's restart rule; the README's
    /// start-up section has the start-up lines for sessions with and without systemd.
    @Test func theDocumentationListsEveryStatus() throws {
        let section = try Self.text("docs/systemd.md")
        for status in DaemonExitStatus.allCases {
            let restarted = status != .stopped && !DaemonExitStatus.noRestart.contains(status)
            #expect(section.range(of: #"\n\| \#(status.rawValue) \| [^\n]+ \| \#(restarted ? "yes" : "no") \|\n"#,
                                  options: .regularExpression) != nil, "docs/systemd.md lacks a row for \(status.rawValue)")
        }
        #expect(section.contains("RestartPreventExitStatus=64 69 73"))
        let readme = try Self.text("README.md")
        let startUp = try #require(readme.components(separatedBy: "\n## Start it with your session\n").dropFirst().first?
            .components(separatedBy: "\n## ").first, "the README has no start-up section")
        #expect(startUp.contains("exec --no-startup-id clickaway") && startUp.contains("systemctl --user start clickaway"))
    }
}
