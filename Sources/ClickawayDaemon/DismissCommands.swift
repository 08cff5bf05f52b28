internal import ClickawaySystem
internal import Glibc
internal import Logging

/// Runs dismiss commands (`Spawn`): no shell, each in its own process group, stdin from
/// /dev/null, stdout and stderr the daemon's (the journal), no other descriptor. Children
/// are reaped on SIGCHLD without blocking; a command still running after `slowAfterMs` is
/// logged once and left alone.
final class DismissCommands {
    private struct Child {
        var argv0: String
        var popup: String
        /// The popup's window, when it has one: a failed command leaves it open.
        var window: UInt32?
        var startedAt: Int64
        var reportedSlow = false
    }

    private var children: [pid_t: Child] = [:]
    private let logger: Logger
    static let slowAfterMs: Int64 = 5000

    init(logger: Logger) { self.logger = logger }

    /// Starts a command; false when it could not be started (logged).
    @discardableResult
    func run(_ argv: [String], environment extra: [String: String], popup: String, window: UInt32?, now: Int64) -> Bool {
        var environment = processEnvironment()
        // systemd's notification variables are the daemon's own, not its children's.
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { environment[key] = nil }
        environment.merge(extra) { $1 }
        let pid: pid_t
        do {
            pid = try Spawn.start(argv, Spawn.Options(environment: environment, stdin: .null, ownProcessGroup: true))
        } catch {
            logger.error("cannot run dismiss command", metadata: [
                "popup": "\(popup)", "command": "\(argv[0])", "error": "\(error.errno)",
            ])
            return false
        }
        children[pid] = Child(argv0: argv[0], popup: popup, window: window, startedAt: now)
        logger.debug("dismiss command started", metadata: ["popup": "\(popup)", "pid": "\(pid)", "command": "\(argv[0])"])
        return true
    }

    /// Collects every child that has exited; never blocks. Returns the windows whose
    /// dismiss command failed.
    @discardableResult
    func reap() -> [UInt32] {
        var failed: [UInt32] = []
        while let (pid, exit) = ProcessExit.reapAny() {
            guard let child = children.removeValue(forKey: pid) else { continue }
            if exit.succeeded {
                logger.debug("dismiss command finished", metadata: ["popup": "\(child.popup)", "pid": "\(pid)"])
                continue
            }
            if let window = child.window { failed.append(window) }
            switch exit {
            case .exited(let code):
                logger.warning("dismiss command failed", metadata: [
                    "popup": "\(child.popup)", "command": "\(child.argv0)", "exit": "\(code)",
                ])
            case .killed(let signal):
                logger.warning("dismiss command killed by a signal", metadata: [
                    "popup": "\(child.popup)", "command": "\(child.argv0)", "signal": "\(signal)",
                ])
            }
        }
        return failed
    }

    /// When the next running command becomes slow enough to report.
    var nextSlowCheck: Deadline? {
        children.values.filter { !$0.reportedSlow }.map { Deadline(milliseconds: $0.startedAt + Self.slowAfterMs) }.min()
    }

    /// Logs the commands that have been running for `slowAfterMs`, once each.
    func reportSlow(now: Int64) {
        for (pid, child) in children where !child.reportedSlow && now >= child.startedAt + Self.slowAfterMs {
            logger.warning("dismiss command still running; the daemon does not wait for it", metadata: [
                "popup": "\(child.popup)", "command": "\(child.argv0)", "pid": "\(pid)",
            ])
            children[pid]?.reportedSlow = true
        }
    }
}
