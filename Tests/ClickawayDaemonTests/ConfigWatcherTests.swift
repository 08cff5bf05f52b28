@testable import ClickawayDaemon
import ClickawayCore
import ClickawaySystem
import ClickawayConfig
import Foundation
import Glibc
import ProcessSupport
import Logging
import SystemPackage
import Testing

/// The watcher against real inotify events, with the clock given: a burst of changes is one
/// reload `debounceMs` after the last of them.
@Suite struct ConfigWatcherTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("clickaway-watch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func watcher(_ targets: [ConfigWatcher.Target]) throws -> ConfigWatcher {
        let watcher = try #require(ConfigWatcher(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }))
        watcher.watch(targets)
        return watcher
    }

    /// Waits (bounded) for inotify, then lets the watcher read as if it were `now`.
    func read(_ watcher: ConfigWatcher, now: Int64) throws {
        #expect(try watcher.descriptor.wait(until: .inMilliseconds(5000)).canRead, "no inotify event within 5 s")
        watcher.read(now: now)
    }

    func write(_ name: String) throws {
        // Close-on-exec, as every file the tests write: a child of another test must not hold it.
        let fd = try FileDescriptor.open(directory + "/" + name, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                         permissions: .ownerReadWrite)
        _ = try fd.writeAll(Array("x = 1\n".utf8))
        try fd.close()
    }

    @Test func aBurstOfChangesIsOneReloadAfterTheLastOfThem() throws {
        let w = try watcher([.file(directory + "/config.toml")])
        try write("config.toml")
        try read(w, now: 1000)
        #expect(w.due == 1000 + ConfigWatcher.debounceMs)
        try write("config.toml")
        try read(w, now: 1100)
        #expect(w.due == 1100 + ConfigWatcher.debounceMs)
        // What the loop wakes for.
        #expect(w.debounce.deadline == Deadline(milliseconds: 1100 + ConfigWatcher.debounceMs))
        #expect(!w.takeDue(now: 1000 + ConfigWatcher.debounceMs))
        #expect(w.takeDue(now: 1100 + ConfigWatcher.debounceMs))
        #expect(!w.takeDue(now: 9999))
        #expect(w.due == nil)
        #expect(w.debounce.deadline == nil)
    }

    @Test func otherFilesBesideItDoNotCount() throws {
        let w = try watcher([.file(directory + "/config.toml")])
        try write("notes.txt")
        try read(w, now: 1000)
        #expect(w.due == nil)
    }

    @Test func aFileHeldOpenBesideItWakesNothingAsItIsWritten() throws {
        let w = try watcher([.file(directory + "/config.toml")])
        let log = try FileDescriptor.open(directory + "/clickaway.log", .writeOnly, options: [.create, .append, .closeOnExec],
                                          permissions: .ownerReadWrite)
        defer { try? log.close() }
        try read(w, now: 1000)  // its creation
        for line in 1...3 { _ = try log.writeAll(Array("line \(line)\n".utf8)) }
        // inotify queues an event inside the write(2) that causes it: none is there now.
        #expect(try !w.descriptor.wait(until: .inMilliseconds(0)).canRead, "a write to another open file woke the watcher")
        // The configuration written in place counts once it is closed.
        let config = try FileDescriptor.open(directory + "/config.toml", .writeOnly, options: [.create, .truncate, .closeOnExec],
                                             permissions: .ownerReadWrite)
        _ = try config.writeAll(Array("x = 1\n".utf8))
        try read(w, now: 2000)  // its creation
        #expect(w.due == 2000 + ConfigWatcher.debounceMs)
        _ = try config.writeAll(Array("y = 2\n".utf8))
        try config.close()
        try read(w, now: 3000)
        #expect(w.due == 3000 + ConfigWatcher.debounceMs)
    }

    @Test func aDropInDirectoryCountsItsVisibleTOMLFilesOnly() throws {
        let w = try watcher([.directory(directory)])
        try write(".hidden.toml")
        try write("readme.md")
        try read(w, now: 1000)
        #expect(w.due == nil)
        try write("20-menu.toml")
        try read(w, now: 2000)
        #expect(w.due == 2000 + ConfigWatcher.debounceMs)
    }

    @Test func aDirectoryCreatedLaterIsSeenThroughItsParent() throws {
        let later = directory + "/conf.d"
        let w = try watcher([.directory(later)])
        try FileManager.default.createDirectory(atPath: later, withIntermediateDirectories: false)
        try read(w, now: 500)
        #expect(w.due == 500 + ConfigWatcher.debounceMs)
    }

    @Test func aSymlinkedFileIsWatchedWhereItPoints() throws {
        try write("real.toml")
        let link = directory + "/config.toml"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory + "/real.toml")
        let targets = Reloading.watchedPaths(configFile: link, environment: [:])
        #expect(targets == [.file(link), .file(directory + "/real.toml")])
        let xdg = Reloading.watchedPaths(configFile: nil, environment: ["XDG_CONFIG_HOME": directory])
        #expect(xdg == [.file(directory + "/clickaway/config.toml"), .directory(directory + "/clickaway/conf.d")])
    }

    // MARK: Links (issue 24): stow and home-manager

    func link(_ target: String, at path: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    func makePackage(_ name: String) throws -> String {
        let package = directory + "/" + name + "/clickaway"
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        try TestText.write("x = 1\n", to: package + "/config.toml")
        return package
    }

    /// Whether the watcher sees a change (reads what inotify has, bounded) and resets it.
    func sees(_ w: ConfigWatcher, _ what: String) throws -> Bool {
        guard try w.descriptor.wait(until: .inMilliseconds(2000)).canRead else { return false }
        w.read(now: 1000)
        defer { _ = w.takeDue(now: .max) }
        return w.due != nil
    }

    /// A configuration directory that is a link to a package, switched to another package by
    /// each of the ways tools switch links: every switch is seen, and once watched again,
    /// edits in the new package are, not those in the old one.
    @Test(arguments: ["rm+ln", "ln -sfn", "rename"])
    func aLinkedConfigurationDirectorySwitched(_ how: String) throws {
        let old = try makePackage("pkg-a"), new = try makePackage("pkg-b")
        let config = directory + "/config"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try link(old, at: config + "/clickaway")
        let xdg = Reloading.watchedPaths(configFile: nil, environment: ["XDG_CONFIG_HOME": config])
        let w = try watcher(xdg)
        switch how {
        case "rm+ln":
            unlink(config + "/clickaway")
            try link(new, at: config + "/clickaway")
        case "ln -sfn":
            let run = Process()
            run.executableURL = URL(fileURLWithPath: "/bin/ln")
            run.arguments = ["-sfn", new, config + "/clickaway"]
            try run.run()
            run.waitUntilExit()
        default:
            try link(new, at: config + "/.clickaway.new")
            #expect(rename(config + "/.clickaway.new", config + "/clickaway") == 0)
        }
        #expect(try sees(w, "the switch"), "\(how) not seen")
        // As the reload the switch starts does: the paths looked at again, then watched.
        w.watch(Reloading.watchedPaths(configFile: nil, environment: ["XDG_CONFIG_HOME": config]))
        try TestText.write("x = 2\n", to: new + "/config.toml")
        #expect(try sees(w, "an edit in the new package"))
        try TestText.write("x = 3\n", to: old + "/config.toml")
        #expect(!(try sees(w, "an edit in the old package")), "the old package is still watched: \(w.watchedDirectories)")
    }

    /// A linked file in conf.d: edits where it points are seen.
    @Test func aLinkedDropInIsWatchedWhereItPoints() throws {
        let elsewhere = try makePackage("dotfiles")
        let dropIns = directory + "/conf.d"
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        try link(elsewhere + "/config.toml", at: dropIns + "/10-menu.toml")
        let w = try watcher([.directory(dropIns)])
        try TestText.write("x = 2\n", to: elsewhere + "/config.toml")
        #expect(try sees(w, "an edit of the linked drop-in's target"))
    }

    /// A watch replaced by the same one leaves no moment without it.
    @Test func watchingAgainKeepsTheWatch() throws {
        let w = try watcher([.file(directory + "/config.toml")])
        w.watch([.file(directory + "/config.toml")])
        try write("config.toml")
        #expect(try sees(w, "a write after watching again"))
    }

    // MARK: Stable reads (issue 24)

    /// Any change to what a load reads makes a different snapshot: written in place, replaced
    /// by a rename, a drop-in added.
    @Test func snapshotsDifferAfterEachKindOfChange() throws {
        let config = directory + "/xdg"
        try FileManager.default.createDirectory(atPath: config + "/clickaway/conf.d", withIntermediateDirectories: true)
        let env = ["XDG_CONFIG_HOME": config]
        let main = config + "/clickaway/config.toml"
        try TestText.write("x = 1\n", to: main)
        var last = ConfigSnapshot.take(configFile: nil, environment: env)
        let changes: [(String, () throws -> Void)] = [
            ("in place", { try TestText.write("x = 22\n", to: main) }),
            ("renamed over", { try TestText.write("x = 3\n", to: main + ".new"); rename(main + ".new", main) }),
            ("a drop-in added", { try TestText.write("y = 1\n", to: config + "/clickaway/conf.d/a.toml") }),
            ("a drop-in removed", { unlink(config + "/clickaway/conf.d/a.toml") }),
        ]
        for (what, change) in changes {
            try change()
            let now = ConfigSnapshot.take(configFile: nil, environment: env)
            #expect(now != last, "\(what): same snapshot")
            last = now
        }
    }

    /// A load of `file`, its last good copy kept under the test's directory.
    func loadJob(_ file: String) -> ConfigReloader.Job {
        ConfigReloader.Job(configFile: file, environment: [:],
                           lastGood: LastGoodConfig(state: StateLocation(environment: ["XDG_STATE_HOME": directory + "/state"]),
                                                    configFile: file, environment: [:]))
    }

    /// A file changed a moment ago may be half-written: the load waits for its quiet period,
    /// and says how long it waited.
    @Test func aLoadWaitsForAFileChangedAMomentAgo() throws {
        let file = directory + "/config.toml"
        try TestText.write("[[popup]]\nname = \"a\"\nrect = [0, 0, 5, 5]\n", to: file)
        let job = loadJob(file)
        let outcome = ConfigReloader.perform(job)
        #expect(outcome.waitedMs > 0, "a file written just now was read at once")
        #expect(try outcome.result.get().popupCount == 1)
        let later = ConfigReloader.perform(job)
        #expect(later.waitedMs == 0, "a quiet file was waited for")
    }

    /// A replaced configuration is freed on the worker a piece at a time, its model with it
    /// when the configuration runs its own model (no runtime popups): the same model twice.
    @Test func aRetiredConfigurationIsFreedInPieces() throws {
        let file = directory + "/config.toml"
        let text = (0..<3000).map { "[[popup]]\nname = \"p\($0)\"\nwindow = { class = \"C\($0)\" }\n" }.joined()
        try TestText.write(text, to: file)
        let job = loadJob(file)
        weak var gone: ClickModel?
        var pauses = 0
        do {
            var config: LoadedConfig? = try ConfigReloader.perform(job).result.get()
            gone = config?.model
            // As the loop retires it: the configuration and the model it runs, the same one.
            ConfigReloader.free((config!, config.take()!.model)) { pauses += 1 }
        }
        #expect(gone == nil)
        #expect(pauses >= 10, "\(pauses) pauses freeing 3,000 popups")
    }

    /// A file saved in place again and again while loads run: no load returns it half-written.
    @Test func noLoadReadsAFileBeingWritten() throws {
        let file = directory + "/config.toml"
        let full = (0..<40).map { "[[popup]]\nname = \"p\($0)\"\nrect = [0, 0, 5, 5]\n" }.joined()
        try TestText.write(full, to: file)
        let job = loadJob(file)
        // An editor saving in place: truncate, then the text in two writes.
        let saver = InPlaceSaver(full, to: file, gap: 20_000, pause: 300_000)
        defer { saver.stop() }
        for _ in 0..<8 {
            let outcome = ConfigReloader.perform(job)
            if case .success(let config) = outcome.result {
                #expect(config.popupCount == 40, "a load read \(config.popupCount) of 40 popups")
            } else {
                Issue.record("a load failed: \(outcome.result)")
            }
        }
    }
}

/// Files written close-on-exec.
enum TestText {
    static func write(_ text: String, to path: String) throws {
        let fd = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: .ownerReadWrite)
        _ = try fd.writeAll(Array(text.utf8))
        try fd.close()
    }
}
