import ClickawaySystem
import Foundation
import SystemPackage

/// A datagram socket standing in for systemd's notification socket: bound at a filesystem
/// path or in the abstract namespace, with SO_PASSCRED so each message carries its sender's
/// pid, which systemd checks against the unit's main pid (NotifyAccess=main).
public final class NotifySocket {
    /// What $NOTIFY_SOCKET must say to reach this socket.
    public let environmentValue: String
    private let fd: FileDescriptor
    private let path: String?

    public struct Message {
        public let text: String
        /// The datagram as it came, for binary protocols (the journal's native one).
        public var bytes: [UInt8] = []
        public let senderPID: pid_t

        public var lines: [Substring] { text.split(separator: "\n") }

        public func value(_ key: String) -> String? {
            lines.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
    }

    public init(abstract: Bool) throws {
        let name = "clickaway-notify-\(getpid())-\(UUID().uuidString.prefix(8))"
        if abstract {
            path = nil
            environmentValue = "@" + name
        } else {
            let socketPath = FileManager.default.temporaryDirectory.appendingPathComponent(name + ".sock").path
            path = socketPath
            environmentValue = socketPath
        }
        do {
            fd = try FileDescriptor.unixSocket(.datagram)
        } catch {
            throw HarnessError("cannot create a datagram socket: \(error)")
        }
        do {
            try fd.bind(to: try UnixSocketAddress(notifySocket: environmentValue))
        } catch {
            try? fd.close()
            throw HarnessError("cannot bind a datagram socket at \(environmentValue): \(error)")
        }
        var on: Int32 = 1
        setsockopt(fd.rawValue, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        try? fd.close()
        if let path { unlink(path) }
    }

    /// The next datagram, or nil when none arrives within `timeout`.
    public func next(within timeout: Duration) throws -> Message? {
        let deadline = Deadline(after: timeout)
        while true {
            if let message = try receive() { return message }
            guard !deadline.hasPassed() else { return nil }
            _ = try? fd.wait(until: deadline)
        }
    }

    /// Reads messages until one holds `line` (e.g. "READY=1"); fails saying which never came.
    public func waitFor(_ line: String, within timeout: Duration, _ context: @autoclosure () -> String = "") throws -> Message {
        let deadline = Deadline(after: timeout)
        var seen: [String] = []
        while let message = try next(within: .milliseconds(deadline.remaining())) {
            if message.lines.contains(Substring(line)) { return message }
            seen.append(message.text.replacingOccurrences(of: "\n", with: "\\n"))
        }
        throw HarnessError("no \(line) arrived on \(environmentValue) within \(timeout); messages seen instead: "
            + (seen.isEmpty ? "none" : seen.joined(separator: " | ")) + context())
    }

    /// One waiting datagram and its sender's pid, nil when none is waiting.
    private func receive() throws -> Message? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var control = [UInt64](repeating: 0, count: 8)  // 64 bytes, aligned for cmsghdr
        let (count, senderPID): (Int, pid_t) = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    let n = recvmsg(fd.rawValue, &header, Int32(MSG_DONTWAIT))
                    guard n >= 0 else { return (n, 0) }
                    return (n, Self.credentialsPID(controlBytes, length: Int(header.msg_controllen)))
                }
            }
        }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return nil }
            throw HarnessError("cannot read \(environmentValue): \(String(cString: strerror(errno)))")
        }
        return Message(text: String(decoding: buffer[..<count], as: UTF8.self), bytes: Array(buffer[..<count]), senderPID: senderPID)
    }

    /// The pid in an SCM_CREDENTIALS control message (struct ucred: pid, uid, gid), 0 if none.
    private static func credentialsPID(_ control: UnsafeMutableRawBufferPointer, length: Int) -> pid_t {
        let scmCredentials: Int32 = 2  // SCM_CREDENTIALS, hidden behind _GNU_SOURCE in Glibc's module
        let headerSize = MemoryLayout<cmsghdr>.size
        guard length >= headerSize + MemoryLayout<pid_t>.size else { return 0 }
        let header = control.load(as: cmsghdr.self)
        guard header.cmsg_level == SOL_SOCKET, header.cmsg_type == scmCredentials else { return 0 }
        return control.load(fromByteOffset: headerSize, as: pid_t.self)
    }
}

