public import Glibc
internal import SystemPackage

/// How a child process ended, decoded from a wait status (waitpid(2)).
public enum ProcessExit: Equatable, Hashable, Sendable, CustomStringConvertible {
    case exited(code: Int32)
    case killed(signal: Int32)

    /// Decodes what waitpid(2) stores: WIFEXITED/WEXITSTATUS, WIFSIGNALED/WTERMSIG.
    public init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited(code: (status >> 8) & 0xff) : .killed(signal: signal)
    }

    public var succeeded: Bool { self == .exited(code: 0) }

    /// The shell's convention: the exit code, or 128 + the signal.
    public var shellStatus: Int32 {
        switch self {
        case .exited(let code): code
        case .killed(let signal): 128 + signal
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .killed(let signal): "killed by signal \(signal)"
        }
    }

    /// Reaps one child of this process that has ended, without blocking: nil when none has.
    public static func reapAny() -> (pid: pid_t, exit: ProcessExit)? {
        var status: Int32 = 0
        guard let pid = try? systemCall({ waitpid(-1, &status, WNOHANG) }), pid > 0 else { return nil }
        return (pid, ProcessExit(waitStatus: status))
    }

    /// Reaps `pid` once it has ended; nil while it runs (`blocking: false`).
    public static func reap(_ pid: pid_t, blocking: Bool) -> ProcessExit? {
        var status: Int32 = 0
        guard let reaped = try? systemCall({ waitpid(pid, &status, blocking ? 0 : WNOHANG) }), reaped == pid else { return nil }
        return ProcessExit(waitStatus: status)
    }
}
