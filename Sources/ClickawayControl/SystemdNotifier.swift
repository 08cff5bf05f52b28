import Glibc
import SystemPackage

/// Tells systemd how the daemon is doing, the way sd_notify(3) does, without libsystemd: each
/// message is one datagram ("READY=1\nSTATUS=...") sent to the AF_UNIX socket $NOTIFY_SOCKET
/// names, a filesystem path or, with a leading '@', a name in the abstract namespace.
///
/// Reloads follow systemd.service(5): on SIGHUP send `sendReloading()`, reload, then READY=1.
/// The MONOTONIC_USEC that goes with RELOADING=1 is what Type=notify-reload (systemd 253+)
/// waits for; Type=notify with ExecReload ignores it, so one daemon serves both unit types.
public final class SystemdNotifier {
    /// How often to send WATCHDOG=1, in milliseconds: half of $WATCHDOG_USEC, as
    /// sd_watchdog_enabled(3) advises. nil when no watchdog is asked for, when $WATCHDOG_PID
    /// names another process, or when either variable is not a number.
    public let watchdogIntervalMs: Int64?
    /// $NOTIFY_SOCKET as found, for messages.
    public let socketName: String
    /// Why the last `send` failed; nil after one that succeeded.
    public private(set) var lastFailure: String?

    private enum Endpoint {
        case ready(socket: FileDescriptor, address: sockaddr_un, length: socklen_t)
        /// $NOTIFY_SOCKET names nothing a datagram can go to: every send fails with this reason.
        case unusable(String)
    }

    private let endpoint: Endpoint

    /// nil when $NOTIFY_SOCKET is unset or empty: not started by systemd, or by a unit that
    /// is not Type=notify.
    public init?(environment: [String: String]) {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        socketName = name
        watchdogIntervalMs = Self.watchdogInterval(environment)
        endpoint = Self.endpoint(for: name)
    }

    deinit {
        if case .ready(let socket, _, _) = endpoint { try? socket.close() }
    }

    /// Sends one datagram, e.g. "READY=1\nSTATUS=watching 3 popups". Never blocks: when systemd
    /// is not reading, the message is dropped and false returned (`lastFailure` says why).
    @discardableResult
    public func send(_ state: String) -> Bool {
        guard case .ready(let socket, var address, let length) = endpoint else {
            if case .unusable(let reason) = endpoint { lastFailure = reason }
            return false
        }
        let bytes = Array(state.utf8)
        let sent = bytes.withUnsafeBytes { payload in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                    retryingOnInterrupt {
                        sendto(socket.rawValue, payload.baseAddress, payload.count,
                               Int32(MSG_DONTWAIT | MSG_NOSIGNAL), target, length)
                    }
                }
            }
        }
        guard sent == bytes.count else {
            lastFailure = "cannot notify systemd at NOTIFY_SOCKET=\(socketName): \(Errno(rawValue: errno))"
            return false
        }
        lastFailure = nil
        return true
    }

    /// RELOADING=1 with MONOTONIC_USEC, the CLOCK_MONOTONIC time in microseconds, and a one-line
    /// STATUS when given. Send READY=1 once the reload is done, whether it succeeded or not.
    @discardableResult
    public func sendReloading(status: String? = nil) -> Bool {
        var state = "RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())"
        if let status {
            // A newline would start a field of its own.
            state += "\nSTATUS=" + status.split(whereSeparator: \.isNewline).joined(separator: " ")
        }
        return send(state)
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    /// sd_watchdog_enabled(3)'s rules: WATCHDOG_USEC a positive number of microseconds (not
    /// UINT64_MAX, systemd's "infinity"), and WATCHDOG_PID, when present, this process.
    private static func watchdogInterval(_ environment: [String: String]) -> Int64? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0, usec != .max else {
            return nil
        }
        if let pidText = environment["WATCHDOG_PID"] {
            guard let pid = pid_t(pidText), pid == getpid() else { return nil }
        }
        return max(1, Int64(usec / 2_000))
    }

    private static func endpoint(for name: String) -> Endpoint {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let bytes: [UInt8]
        let length: Int
        switch name.first {
        case "@":
            // Abstract namespace: a leading NUL, then the name, with no terminator; the address
            // length says where the name ends.
            bytes = [0] + Array(name.utf8.dropFirst())
            length = pathOffset + bytes.count
        case "/":
            bytes = Array(name.utf8) + [0]
            length = pathOffset + bytes.count
        default:
            return .unusable("NOTIFY_SOCKET=\(name) is neither an absolute path nor an abstract socket name (@name)")
        }
        guard bytes.count <= capacity else {
            return .unusable("NOTIFY_SOCKET=\(name) is longer than a Unix socket address allows (\(capacity - 1) bytes)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            return .unusable("cannot create a socket to notify systemd: \(Errno(rawValue: errno))")
        }
        return .ready(socket: FileDescriptor(rawValue: fd), address: address, length: socklen_t(length))
    }
}

private func retryingOnInterrupt(_ call: () -> Int) -> Int {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}
