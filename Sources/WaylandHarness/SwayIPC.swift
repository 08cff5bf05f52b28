import Foundation
import XTestHarness

/// sway's IPC (i3's): a message is "i3-ipc", a 32-bit length and a 32-bit type in host
/// byte order, then a JSON payload; the reply has the same shape.
enum SwayIPC {
    enum MessageType: UInt32 {
        case runCommand = 0
        case getOutputs = 3
    }

    /// Sends one message on a new connection and returns the decoded JSON reply.
    static func send(_ type: MessageType, _ payload: String, to path: String, timeout: Duration = .seconds(5)) throws -> Any {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("cannot create a socket for sway's IPC: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw HarnessError("sway's IPC path is too long for a socket address: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw HarnessError("cannot connect to sway's IPC at \(path): \(String(cString: strerror(errno)))") }

        let body = Array(payload.utf8)
        var message = Array("i3-ipc".utf8)
        withUnsafeBytes(of: UInt32(body.count)) { message += $0 }
        withUnsafeBytes(of: type.rawValue) { message += $0 }
        message += body
        try message.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let n = write(fd, bytes.baseAddress! + sent, bytes.count - sent)
                guard n > 0 else { throw HarnessError("cannot write to sway's IPC: \(String(cString: strerror(errno)))") }
                sent += n
            }
        }

        let deadline = ContinuousClock.now + timeout
        let header = try readExactly(14, from: fd, until: deadline)
        guard header.prefix(6).elementsEqual("i3-ipc".utf8) else { throw HarnessError("sway's IPC answered with a bad header") }
        let length = header[6..<10].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        let reply = try readExactly(Int(length), from: fd, until: deadline)
        return try JSONSerialization.jsonObject(with: Data(reply))
    }

    private static func readExactly(_ count: Int, from fd: Int32, until deadline: ContinuousClock.Instant) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < count {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, waitMilliseconds(until: deadline)) > 0 else {
                throw HarnessError("sway's IPC did not answer in time (\(bytes.count) of \(count) bytes)")
            }
            let n = read(fd, &buffer, min(buffer.count, count - bytes.count))
            guard n > 0 else { throw HarnessError("sway's IPC closed the connection (\(bytes.count) of \(count) bytes)") }
            bytes += buffer[..<n]
        }
        return bytes
    }
}

/// Milliseconds left until `deadline`, for poll(2); 0 once it has passed.
func waitMilliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
    let left = deadline - .now
    guard left > .zero else { return 0 }
    let (seconds, attoseconds) = left.components
    return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
}
