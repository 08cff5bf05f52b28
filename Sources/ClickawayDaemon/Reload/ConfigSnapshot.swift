internal import ClickawayConfig
internal import Glibc

/// What the configuration's files are at one moment, without reading them: each file's name,
/// where its links lead, its inode, size and change times. Two snapshots differ when any file
/// was written, replaced, added, removed or relinked between them.
struct ConfigSnapshot: Equatable, Sendable {
    struct Entry: Equatable, Sendable {
        var path: String
        /// Where the path leads after every link, nil if it does not exist.
        var resolved: String?
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var size: Int64 = 0
        var modifiedNs: Int64 = 0
        var changedNs: Int64 = 0
    }

    var entries: [Entry]

    /// The files a load reads now: `--config`'s, else config.toml and every visible
    /// `conf.d/*.toml` (and the directory itself, so a file appearing is a difference).
    static func take(configFile: String?, environment: [String: String]) -> ConfigSnapshot {
        guard configFile == nil else { return ConfigSnapshot(entries: [entry(configFile!)]) }
        let location = ConfigLocation(environment: environment)
        let dropIns = ConfigWatcher.names(in: location.dropInDirectory).filter(ConfigWatcher.isVisibleTOML).sorted()
        return ConfigSnapshot(entries: [entry(location.mainFile), entry(location.dropInDirectory)]
            + dropIns.map { entry(location.dropInDirectory + "/" + $0) })
    }

    private static func entry(_ path: String) -> Entry {
        var entry = Entry(path: path)
        var st = stat()
        guard stat(path, &st) == 0 else { return entry }
        if let resolved = realpath(path, nil) {
            entry.resolved = String(cString: resolved)
            free(resolved)
        }
        entry.device = UInt64(st.st_dev)
        entry.inode = UInt64(st.st_ino)
        entry.size = Int64(st.st_size)
        entry.modifiedNs = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        entry.changedNs = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
        return entry
    }

    /// The last time any of the files changed (wall clock, ns).
    var lastChangeNs: Int64 { entries.map { max($0.modifiedNs, $0.changedNs) }.max() ?? 0 }

    /// How long ago the last change was, in ms; nil when it is in the future (a clock set
    /// back, a file touched with a later date): then the files' times say nothing.
    func quietForMs(now: Int64 = ConfigSnapshot.wallClockNs()) -> Int64? {
        let age = (now - lastChangeNs) / 1_000_000
        return age >= 0 ? age : nil
    }

    static func wallClockNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
