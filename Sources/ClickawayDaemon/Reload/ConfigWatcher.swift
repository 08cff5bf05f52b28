internal import ClickawaySystem
internal import Glibc
internal import Logging
internal import SystemPackage

/// Watches the configuration's directories with inotify and says when to reload: a burst of
/// changes (an editor's write, rename and chmod) becomes one reload `debounceMs` after the
/// last of them. Directories, not files, are watched, so an editor that saves by writing a
/// new file and renaming it over the old one is seen, and so is a file created later.
///
/// Symlinks are followed, each link where it is and where it points (stow, home-manager): a
/// linked file, a linked `conf.d/` or configuration directory, a link in any directory above
/// them, and each linked file in `conf.d/`. Switching a link (`ln -sfn`, `rm` + `ln`, a
/// rename over it) counts as a change, and the next `watch` follows the new target.
final class ConfigWatcher {
    enum Target: Equatable, Sendable {
        /// One file: changes to that name in its directory count.
        case file(String)
        /// A drop-in directory: changes to any visible `*.toml` in it count.
        case directory(String)
    }

    static let debounceMs: Int64 = 150

    let descriptor: FileDescriptor
    private let logger: Logger
    /// Watch descriptor → what changes in that directory count.
    private var watches: [Int32: (directory: String, counts: (String) -> Bool)] = [:]
    /// When the pending reload is due (monotonic ms), if a change was seen.
    private(set) var due: Int64? { didSet { debounce.deadline = due.map(Deadline.init(milliseconds:)) } }
    /// `due`, for the loop.
    let debounce = LoopTimer()

    /// A file written in place counts when it is closed, not at each write: a file held open
    /// beside the configuration (a log written there, the daemon's own) would otherwise wake
    /// the loop at every line.
    private static let events = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB)

    /// nil when inotify is unavailable: then only SIGHUP and `clickawayctl reload` reload.
    init?(logger: Logger) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            logger.warning("cannot watch the configuration for changes (inotify: \(String(cString: strerror(errno)))); reload with SIGHUP or `clickawayctl reload`")
            return nil
        }
        descriptor = FileDescriptor(rawValue: fd)
        self.logger = logger
    }

    deinit { try? descriptor.close() }

    static func isVisibleTOML(_ name: String) -> Bool { name.hasSuffix(".toml") && !name.hasPrefix(".") }

    /// Replaces the watches, without a moment of none: a directory watched before and now
    /// keeps its watch. A directory that does not exist yet is waited for through its
    /// nearest existing ancestor, so creating ~/.config/clickaway/conf.d later is seen.
    /// Called before each load, so what the load reads is watched while it reads.
    func watch(_ targets: [Target]) {
        var wanted: [Int32: (directory: String, counts: (String) -> Bool)] = [:]
        for target in targets {
            switch target {
            case .file(let path):
                for (dir, name) in Self.chain(path) { add(dir, counts: { $0 == name }, into: &wanted) }
            case .directory(let path):
                add(path, counts: Self.isVisibleTOML, into: &wanted)
                for (dir, name) in Self.chain(path) { add(dir, counts: { $0 == name }, into: &wanted) }
                // A linked drop-in: where it points too.
                for name in Self.names(in: path) where Self.isVisibleTOML(name) && Self.isLink(path + "/" + name) {
                    for (dir, linked) in Self.chain(path + "/" + name).dropFirst() { add(dir, counts: { $0 == linked }, into: &wanted) }
                }
            }
        }
        for wd in watches.keys where wanted[wd] == nil { inotify_rm_watch(descriptor.rawValue, wd) }
        watches = wanted
    }

    /// Each (directory, name) whose change changes what `path` reads: the path itself, each
    /// symlink on the way (in its own directory), and, through each, what it points to.
    static func chain(_ path: String, depth: Int = 0) -> [(directory: String, name: String)] {
        let (dir, name) = split(path)
        var points = [(dir, name)]
        guard depth < 8, path.hasPrefix("/") else { return points }
        var prefix = ""
        for component in dir.split(separator: "/") {
            prefix += "/" + component
            if isLink(prefix) { points += chain(prefix, depth: depth + 1) }
        }
        if let target = readLink(path) {
            points += chain(target.hasPrefix("/") ? target : (dir == "/" ? "" : dir) + "/" + target, depth: depth + 1)
        }
        return points
    }

    static func isLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func names(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The directories watched now (for tests and the debug log).
    var watchedDirectories: [String] { watches.values.map(\.directory).sorted() }

    /// A change seen some other way (what a load read differs from what is there now).
    func markChanged(now: Int64) {
        due = now + Self.debounceMs
    }

    private func add(_ directory: String, counts: @escaping (String) -> Bool,
                     into wanted: inout [Int32: (directory: String, counts: (String) -> Bool)]) {
        var dir = directory
        var counts = counts
        while true {
            let wd = inotify_add_watch(descriptor.rawValue, dir, Self.events | UInt32(IN_ONLYDIR))
            if wd >= 0 {
                let earlier = wanted[wd]?.counts
                wanted[wd] = (dir, earlier.map { e in { e($0) || counts($0) } } ?? counts)
                return
            }
            guard errno == ENOENT || errno == ENOTDIR, dir != "/", !dir.isEmpty else {
                logger.warning("cannot watch \(dir) for configuration changes: \(String(cString: strerror(errno)))")
                return
            }
            // Not there yet: watch the parent for it to appear.
            let (parent, name) = Self.split(dir)
            dir = parent
            counts = { $0 == name }
        }
    }

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }

    /// Reads every pending inotify event; a relevant one (re)starts the debounce.
    func read(now: Int64) {
        while true {
            var buffer: [UInt8] = []
            guard let n = try? descriptor.readAvailable(appendingTo: &buffer, chunk: 4096), n > 0 else { return }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let (wd, mask, length) = buffer.withUnsafeBytes { raw in
                    let e = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (e.wd, e.mask, Int(e.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = buffer[nameStart..<min(nameStart + length, n)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                offset = nameStart + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    due = now + Self.debounceMs
                } else if let watch = watches[wd], watch.counts(name) {
                    logger.debug("configuration change seen", metadata: ["file": "\(watch.directory)/\(name)"])
                    due = now + Self.debounceMs
                }
            }
        }
    }

    /// True once, when the debounce after the last change has run out.
    func takeDue(now: Int64) -> Bool {
        guard let due, now >= due else { return false }
        self.due = nil
        return true
    }
}
