internal import ClickawaySystem
internal import Glibc
internal import SystemPackage

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
        case ready(socket: FileDescriptor, address: UnixSocketAddress)
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
        if case .ready(let socket, _) = endpoint { try? socket.close() }
    }

    /// Sends one datagram, e.g. "READY=1\nSTATUS=watching 3 popups". Never blocks: when systemd
    /// is not reading, the message is dropped and false returned (`lastFailure` says why).
    @discardableResult
    public func send(_ state: String) -> Bool {
        switch endpoint {
        case .unusable(let reason):
            lastFailure = reason
            return false
        case .ready(let socket, let address):
            do {
                try socket.sendDatagram(Array(state.utf8), to: address)
            } catch {
                lastFailure = "cannot notify systemd at NOTIFY_SOCKET=\(socketName): \(error)"
                return false
            }
            lastFailure = nil
            return true
        }
    }

    /// RELOADING=1 with MONOTONIC_USEC, the CLOCK_MONOTONIC time in microseconds, and a one-line
    /// STATUS when given. Send READY=1 once the reload is done, whether it succeeded or not.
    @discardableResult
    public func sendReloading(status: String? = nil) -> Bool {
        var state = "RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.microseconds())"
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
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(notifySocket: name)
        } catch {
            return .unusable("NOTIFY_SOCKET=\(error)")
        }
        do {
            return .ready(socket: try FileDescriptor.unixSocket(.datagram), address: address)
        } catch {
            return .unusable("cannot create a socket to notify systemd: \(error)")
        }
    }
}
