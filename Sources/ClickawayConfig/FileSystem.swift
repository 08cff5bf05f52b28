internal import ClickawaySystem
internal import Glibc
internal import SystemPackage

/// The few file operations the configuration needs.
public enum FileSystem {
    enum ReadFailure: Error, Equatable {
        case missing
        case directory
        case notRegular
        case denied
        case tooLarge(bytes: Int, limit: Int)
        case failed(String)

        var reason: String {
            switch self {
            case .missing: return "no such file"
            case .directory: return "it is a directory"
            case .notRegular: return "it is not a regular file"
            case .denied: return "permission denied"
            case .tooLarge(let bytes, let limit):
                return "the file has \(bytes) bytes; a configuration file may have at most \(limit) (\(limit >> 20) MiB)"
            case .failed(let why): return why
            }
        }
    }

    /// The whole file, if it is a regular file of at most `limit` bytes. Opened without
    /// blocking, so a FIFO or a device put in the configuration's place is refused, not waited on.
    static func read(_ path: String, limit: Int) -> Result<[UInt8], ReadFailure> {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec, .nonBlocking, FileDescriptor.OpenOptions(rawValue: O_NOCTTY)])
        } catch {
            return .failure(openFailure((error as? Errno)?.rawValue ?? EIO))
        }
        defer { try? fd.close() }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { return .failure(.failed(describe(errno))) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .failure(.directory)
        default: return .failure(.notRegular)
        }
        guard Int(info.st_size) <= limit else { return .failure(.tooLarge(bytes: Int(info.st_size), limit: limit)) }
        // The size may change while reading: read up to one byte past the limit to notice.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size) + 1)
        while bytes.count <= limit {
            let n: Int?
            do { n = try fd.readAvailable(appendingTo: &bytes, chunk: min(limit + 1 - bytes.count, max(Int(info.st_size) + 1, 4096))) } catch {
                return .failure(.failed(describe(error.rawValue)))
            }
            if n == nil || n == 0 { break }
        }
        guard bytes.count <= limit else { return .failure(.tooLarge(bytes: bytes.count, limit: limit)) }
        return .success(bytes)
    }

    private static func openFailure(_ code: Int32) -> ReadFailure {
        switch code {
        case ENOENT, ENOTDIR: return .missing
        case EACCES, EPERM: return .denied
        case EISDIR: return .directory
        default: return .failed(describe(code))
        }
    }

    /// Whether something is at `path` (symlinks followed).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The names in a directory, without "." and ".."; nil if it cannot be read.
    static func names(in directory: String) -> [String]? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// `directory/name`, with one slash between them.
    static func join(_ directory: String, _ name: String) -> String {
        var base = directory
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        return base == "/" ? "/" + name : base + "/" + name
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// The user's home from the password database, for when $HOME is not set.
    static func passwordHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let dir = entry.pw_dir else {
            return nil
        }
        let home = String(cString: dir)
        return home.isEmpty ? nil : home
    }

    /// Creates `path` and its missing parents with `mode`; nil or why not.
    static func makeDirectories(_ path: String, mode: mode_t) -> String? {
        if exists(path) { return nil }
        let parentPath = parent(of: path)
        if parentPath != path, let failure = makeDirectories(parentPath, mode: mode) { return failure }
        guard mkdir(path, mode) == 0 || errno == EEXIST else { return "cannot create \(path): \(describe(errno))" }
        return nil
    }

    /// Replaces `path` with `text`, readable by all (a picture, a report): see `writeAtomically`.
    public static func write(_ text: String, to path: String) -> String? {
        writeAtomically(Array(text.utf8), to: path, mode: 0o644)
    }

    /// Replaces `path` with `bytes` so that a reader sees the old file or the new one, never
    /// part of either, even across a crash: a temporary file beside it, synced, renamed over it.
    /// The file gets `mode`; nil or why not.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) -> String? {
        let directory = parent(of: path)
        // Close-on-exec from the start: a command spawned meanwhile inherits nothing.
        let temporary = path + ".new-\(getpid())"
        unlink(temporary)
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec, .noFollow],
                                         permissions: FilePermissions(rawValue: mode))
        } catch {
            return "cannot create \(temporary): \(describe((error as? Errno)?.rawValue ?? EIO))"
        }
        var failure: String?
        if fchmod(fd.rawValue, mode) != 0 { failure = describe(errno) }
        if failure == nil {
            do { try fd.writeAll(bytes) } catch { failure = describe((error as? Errno)?.rawValue ?? EIO) }
        }
        if failure == nil && fsync(fd.rawValue) != 0 { failure = describe(errno) }
        try? fd.close()
        if failure == nil && rename(temporary, path) != 0 { failure = describe(errno) }
        guard failure == nil else {
            unlink(temporary)
            return "cannot write \(path): \(failure!)"
        }
        // The rename itself is durable once the directory is synced.
        if let directoryDescriptor = try? FileDescriptor.open(directory, .readOnly, options: [.directory, .closeOnExec]) {
            fsync(directoryDescriptor.rawValue)
            try? directoryDescriptor.close()
        }
        return nil
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}
