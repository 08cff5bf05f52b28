import Foundation
import ProcessSupport
import SystemPackage

/// The FIFO a test's own program (a small GTK program) reads its commands from, a line each.
/// Opened read and write: opening never waits for the program, and the FIFO never ends.
final class CommandFifo {
    let path: String
    private let descriptor: FileDescriptor

    init(_ path: String) throws {
        guard mkfifo(path, 0o600) == 0 else { throw HarnessError("mkfifo \(path): \(String(cString: strerror(errno)))") }
        self.path = path
        descriptor = try FileDescriptor.open(path, .readWrite, options: [.closeOnExec])
    }

    func send(_ command: String) throws {
        try descriptor.writeAll(Array((command + "\n").utf8))
    }

    func close() { try? descriptor.close() }
}
