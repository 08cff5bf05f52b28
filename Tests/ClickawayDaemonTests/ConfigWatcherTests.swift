@testable import ClickawayDaemon
import ClickawaySystem
import Foundation
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
        #expect(!w.takeDue(now: 1000 + ConfigWatcher.debounceMs))
        #expect(w.takeDue(now: 1100 + ConfigWatcher.debounceMs))
        #expect(!w.takeDue(now: 9999))
        #expect(w.due == nil)
    }

    @Test func otherFilesBesideItDoNotCount() throws {
        let w = try watcher([.file(directory + "/config.toml")])
        try write("notes.txt")
        try read(w, now: 1000)
        #expect(w.due == nil)
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
}
