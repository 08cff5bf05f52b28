import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// Nothing an editor or a dotfile manager does to the configuration is lost, and no reload
/// applies a file being written (issue 24). Waits are bounded (`eventually`), never sleeps.
@Suite("Configuration changes: editors, links, churn, stable reads", .serialized)
struct ConfigChangeTests {
    static func rects(_ names: [String]) -> String {
        names.map { "[[popup]]\nname = \"\($0)\"\nrect = [0, 0, 5, 5]\n\n" }.joined()
    }

    func configured(_ f: DaemonRun) throws -> Set<String> {
        Set(try f.report().config.map { ($0 as NSString).lastPathComponent })
    }

    func popupCount(_ f: DaemonRun) throws -> Int { try f.report().popups }

    /// Saved in place, by a rename, and by vim's backup dance (the file renamed to a backup,
    /// a new one written, the backup deleted): each is applied.
    @Test(arguments: ["in place", "rename", "vim"])
    func editorsSaveStyles(_ style: String) throws {
        let f = try DaemonFixture(config: Self.rects(["a"]))
        try f.startDaemon()
        let text = Self.rects(["a", "b", "c"])
        switch style {
        case "in place": try f.editConfigInPlace(text)
        case "rename": try f.replaceConfigByRename(text)
        default:
            #expect(rename(f.configPath, f.configPath + "~") == 0)
            try TestFiles.write(text, to: f.configPath)
            unlink(f.configPath + "~")
        }
        try f.eventually("the \(style) save to be applied") { try popupCount(f) == 3 }
    }

    /// conf.d created while the daemon runs, then 30 drop-ins added and 25 removed as fast
    /// as they can be: the daemon ends with exactly the 5 left.
    @Test func dropInChurn() throws {
        let f = try DaemonFixture(config: "")
        let home = f.directory.appendingPathComponent("clickaway").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try f.startDaemon(useConfigFile: false)
        let dropIns = home + "/conf.d"
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        for i in 0..<30 { try TestFiles.write(Self.rects(["d\(i)"]), to: dropIns + "/\(String(format: "%02d", i)).toml") }
        for i in 0..<25 { unlink(dropIns + "/\(String(format: "%02d", i)).toml") }
        let left: Set<String> = Set((25..<30).map { "\($0).toml" })
        try f.eventually("the 5 drop-ins left, and only them", timeout: .seconds(10)) { try configured(f) == left }
        #expect(try popupCount(f) == 5)
    }

    /// A file deleted just after a new conf.d appeared, while a large configuration loads:
    /// its popup goes.
    @Test func aDropInRemovedWhileALargeConfigurationLoads() throws {
        let f = try DaemonFixture(config: "")
        let home = f.directory.appendingPathComponent("clickaway").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // Slow to load: thousands of popups.
        try TestFiles.write(Self.rects((0..<3000).map { "big\($0)" }), to: home + "/config.toml")
        try f.startDaemon(useConfigFile: false)
        let dropIns = home + "/conf.d"
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        try TestFiles.write(Self.rects(["ghost"]), to: dropIns + "/ghost.toml")
        try f.eventually("the ghost to load", timeout: .seconds(20)) { try popupCount(f) == 3001 }
        unlink(dropIns + "/ghost.toml")
        try TestFiles.write(Self.rects(["late"]), to: dropIns + "/late.toml")
        try f.eventually("the ghost to go and the late one to come", timeout: .seconds(20)) {
            try configured(f) == ["config.toml", "late.toml"]
        }
        #expect(try f.ctl(["open", "ghost"]).status != 0)
    }

    /// `~/.config/clickaway` as a link to a package directory (stow, home-manager), switched
    /// to another package by rm + ln: the switch is applied, and so are edits in the new one.
    @Test(arguments: ["rm+ln", "rename"])
    func aLinkedConfigurationDirectorySwitched(_ how: String) throws {
        let f = try DaemonFixture(config: "")
        func package(_ name: String, _ popups: [String]) throws -> String {
            let dir = f.directory.appendingPathComponent("dotfiles/\(name)/clickaway").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try TestFiles.write(Self.rects(popups), to: dir + "/config.toml")
            return dir
        }
        let old = try package("a", ["a1"]), new = try package("b", ["b1", "b2"])
        let link = f.directory.appendingPathComponent("clickaway").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: old)
        try f.startDaemon(useConfigFile: false)
        #expect(try popupCount(f) == 1)
        if how == "rm+ln" {
            unlink(link)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: new)
        } else {
            try FileManager.default.createSymbolicLink(atPath: link + ".new", withDestinationPath: new)
            #expect(rename(link + ".new", link) == 0)
        }
        try f.eventually("the switch to the new package") { try popupCount(f) == 2 }
        try TestFiles.write(Self.rects(["b1", "b2", "b3"]), to: new + "/config.toml")
        try f.eventually("an edit in the new package") { try popupCount(f) == 3 }
    }

    /// `clickawayctl reload` while the file is saved in place over and over (truncated, then
    /// written in two parts): no reload applies it empty or half-written.
    @Test func anExplicitReloadNeverAppliesAFileBeingWritten() throws {
        let full = Self.rects((0..<40).map { "p\($0)" })
        let f = try DaemonFixture(config: full)
        try f.startDaemon()
        // Quiet long enough between saves for a stable read (150 ms) even on a loaded machine.
        let saver = InPlaceSaver(full, to: f.configPath, gap: 30_000, pause: 600_000)
        defer { saver.stop() }
        var waited = 0
        for _ in 0..<10 {
            let run = try f.ctl(["reload"])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.hasPrefix("reloaded: 40 popups"), "\(run.stdout)")
            if run.stdout.contains("after waiting") { waited += 1 }
        }
        #expect(waited > 0, "no reload said it waited for the file")
        #expect(try popupCount(f) == 40)
    }
}
