import Glibc
import SystemPackage

/// A Unix stream socket address for `path`, or nil when the path does not fit in sun_path.
public func unixAddress(_ path: String) -> sockaddr_un? {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return addr
}

public func withSockaddr<R>(_ addr: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var a = addr
    return withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

func newStreamSocket() throws(Errno) -> FileDescriptor {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw Errno(rawValue: errno) }
    return FileDescriptor(rawValue: fd)
}

func setNonBlocking(_ fd: FileDescriptor) {
    let flags = fcntl(fd.rawValue, F_GETFL)
    _ = fcntl(fd.rawValue, F_SETFL, flags | O_NONBLOCK)
}

/// The uid of the process at the other end of a connected Unix socket.
func peerUID(_ fd: FileDescriptor) -> uid_t? {
    // struct ucred is hidden behind _GNU_SOURCE in Glibc's module: same layout, spelled out.
    struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }
    var cred = PeerCredentials()
    var len = socklen_t(MemoryLayout<PeerCredentials>.size)
    guard getsockopt(fd.rawValue, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 else { return nil }
    return cred.uid
}

/// Splits a byte stream into lines, refusing lines longer than a limit.
struct LineBuffer {
    let limit: Int
    private var bytes: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    enum Line {
        case text(String)
        case tooLong
    }

    mutating func append(_ chunk: UnsafeRawBufferPointer) { bytes.append(contentsOf: chunk) }

    /// The next complete line, or `.tooLong` once the buffer holds more than `limit` without a newline.
    mutating func next() -> Line? {
        if let nl = bytes.firstIndex(of: 0x0A) {
            guard nl <= limit else { return .tooLong }
            let line = String(decoding: bytes[..<nl], as: UTF8.self)
            bytes.removeSubrange(...nl)
            return .text(line)
        }
        return bytes.count > limit ? .tooLong : nil
    }
}
