internal import CLinux
public import Glibc
public import SystemPackage

/// AF_UNIX sockets on swift-system's `FileDescriptor`, close-on-exec from the start, every
/// call retried when a signal interrupts it.
extension FileDescriptor {
    public enum SocketKind: Sendable {
        case stream, datagram

        var rawValue: Int32 { self == .stream ? Int32(SOCK_STREAM.rawValue) : Int32(SOCK_DGRAM.rawValue) }
    }

    /// A new AF_UNIX socket, close-on-exec.
    public static func unixSocket(_ kind: SocketKind) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try systemCall { socket(AF_UNIX, kind.rawValue | Int32(SOCK_CLOEXEC.rawValue), 0) })
    }

    /// A stream socket connected to `address`; closed again if the connection fails.
    public static func connectedUnixSocket(_ address: UnixSocketAddress) throws(Errno) -> FileDescriptor {
        let socket = try unixSocket(.stream)
        do {
            try socket.connect(to: address)
        } catch {
            try? socket.close()
            throw error
        }
        return socket
    }

    public func connect(to address: UnixSocketAddress) throws(Errno) {
        // connect(2) interrupted goes on in the background: EINTR cannot be retried, so wait it out.
        let result = address.withSockaddr { Glibc.connect(rawValue, $0, $1) }
        guard result != 0 else { return }
        let error = Errno(rawValue: errno)
        guard error == .interrupted else { throw error }
        guard try wait(for: .writable, until: nil).contains(.writable) else { throw .connectionRefused }
    }

    public func bind(to address: UnixSocketAddress) throws(Errno) {
        try systemCall { address.withSockaddr { Glibc.bind(rawValue, $0, $1) } }
    }

    public func listen(backlog: Int32) throws(Errno) {
        try systemCall { Glibc.listen(rawValue, backlog) }
    }

    /// The next pending connection, non-blocking and close-on-exec; nil when none is waiting.
    public func acceptConnection() throws(Errno) -> FileDescriptor? {
        do {
            let fd = try systemCall { clinux_accept4(rawValue, Int32(SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)) }
            return FileDescriptor(rawValue: fd)
        } catch {
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    /// The uid of the process at the other end (SO_PEERCRED); nil when it cannot be told.
    public var peerUID: UInt32? {
        var uid: UInt32 = 0
        return clinux_peer_uid(rawValue, &uid) == 0 ? uid : nil
    }

    /// Sends one datagram to `address` without blocking: throws when it cannot go now (a
    /// full receive queue is `.wouldBlock`).
    public func sendDatagram(_ bytes: [UInt8], to address: UnixSocketAddress) throws(Errno) {
        let sent = try systemCall {
            bytes.withUnsafeBytes { payload in
                address.withSockaddr { target, length in
                    sendto(rawValue, payload.baseAddress, payload.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), target, length)
                }
            }
        }
        if sent != bytes.count { throw .messageTooLong }
    }
}
