internal import ClickawaySystem
internal import Glibc
internal import Logging
internal import SystemPackage

/// Watches the configuration's directories with inotify and says when to reload: a burst of
/// changes (an editor's write, rename and chmod) becomes one reload `debounceMs` after the
/// last of them. Directories, not files, are watched, so an editor that saves by writing a
/// new file and renaming it over the old one is seen, and so is a file created later.
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
    private(set) var due: Int64?

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

    /// Replaces the watches. A directory that does not exist yet is waited for through its
    /// nearest existing ancestor, so creating ~/.config/clickaway/conf.d later is seen.
    func watch(_ targets: [Target]) {
        for wd in watches.keys { inotify_rm_watch(descriptor.rawValue, wd) }
        watches = [:]
        for target in targets {
            switch target {
            case .file(let path):
                let (dir, name) = split(path)
                add(dir, counts: { $0 == name })
            case .directory(let path):
                add(path, counts: { $0.hasSuffix(".toml") && !$0.hasPrefix(".") })
                let (parent, name) = split(path)
                add(parent, counts: { $0 == name })
            }
        }
    }

    private func add(_ directory: String, counts: @escaping (String) -> Bool) {
        var dir = directory
        var counts = counts
        while true {
            let wd = inotify_add_watch(descriptor.rawValue, dir, Self.events | UInt32(IN_ONLYDIR))
            if wd >= 0 {
                let earlier = watches[wd]?.counts
                watches[wd] = (dir, earlier.map { e in { e($0) || counts($0) } } ?? counts)
                return
            }
            guard errno == ENOENT || errno == ENOTDIR, dir != "/", !dir.isEmpty else {
                logger.warning("cannot watch \(dir) for configuration changes: \(String(cString: strerror(errno)))")
                return
            }
            // Not there yet: watch the parent for it to appear.
            let (parent, name) = split(dir)
            dir = parent
            counts = { $0 == name }
        }
    }

    private func split(_ path: String) -> (directory: String, name: String) {
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
