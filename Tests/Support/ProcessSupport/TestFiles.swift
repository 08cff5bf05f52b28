import Foundation
import SystemPackage

/// Files the tests write, always close-on-exec: a program another test starts meanwhile
/// must not inherit one, or its exit (a close) would look like an edit to a watcher
/// (IN_CLOSE_WRITE on a config.toml makes a daemon reload unasked).
public enum TestFiles {
    /// Creates or overwrites `path` in place (open, truncate, write, close), as `echo >` does.
    public static func write(_ text: String, to path: String, permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]) throws {
        do {
            let fd = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: permissions)
            try fd.closeAfter { _ = try fd.writeAll(text.utf8) }
        } catch {
            throw HarnessError("cannot write \(path): \(error)")
        }
    }

    /// Replaces `path` by writing a new file beside it and renaming it over, as many editors save.
    public static func replace(_ path: String, with text: String) throws {
        let temporary = path + ".tmp-\(UUID().uuidString)"
        try write(text, to: temporary)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw HarnessError("cannot rename \(temporary) over \(path): \(reason)")
        }
    }
}
