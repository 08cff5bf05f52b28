internal import ClickawaySystem
internal import Glibc
internal import Logging

/// Runs dismiss commands (`Spawn`): no shell, each in its own process group, stdin from
/// /dev/null, stdout and stderr the daemon's (the journal), no other descriptor. Children
/// are reaped on SIGCHLD without blocking; a command still running after `slowAfterMs` is
/// logged once and left alone.
///
/// It runs the daemon's own helpers the same way (`runHelper`: notify-send, see
/// DesktopNotifications.swift): one reaper for every child, since a reap takes any child. A
/// helper still running at its limit has its process group killed.
final class DismissCommands {
    private struct Child {
        var argv0: String
        var popup: String
        /// The popup's window, when it has one: a failed command leaves it open.
        var window: UInt32?
        var startedAt: Int64
        var reportedSlow = false
    }

    /// A program the daemon runs for itself, killed at `killAt`; `finished` hears how it ended.
    private struct Helper {
        var killAt: Int64
        var killed = false
        var finished: (ProcessExit, _ killedForTime: Bool) -> Void
    }

    private var children: [pid_t: Child] = [:] { didSet { slowCheck.deadline = nextSlowCheck } }
    private var helpers: [pid_t: Helper] = [:] { didSet { slowCheck.deadline = nextSlowCheck } }
    /// When the next running command becomes slow enough to report, or a helper is due to
    /// be killed: `reportSlow(now:)` then.
    let slowCheck = LoopTimer()
    let logger: Logger
    /// What DesktopNotifications keeps between rejections.
    var desktop = DesktopNotifications()
    static let slowAfterMs: Int64 = 5000

    init(logger: Logger) { self.logger = logger }

    /// The daemon's environment without systemd's notification variables, which are the
    /// daemon's own, not its children's, and with `extra`.
    private static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = processEnvironment()
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { environment[key] = nil }
        environment.merge(extra) { $1 }
        return environment
    }

    private static func start(_ argv: [String], extra: [String: String] = [:]) throws(Spawn.Failure) -> pid_t {
        try Spawn.start(argv, Spawn.Options(environment: environment(extra), stdin: .null, ownProcessGroup: true))
    }

    /// Starts one of the daemon's own programs, as a dismiss command is started (no shell, no
    /// descriptor but the standard ones, a process group of its own); its process group is
    /// killed when it still runs `killAfterMs` from `now`.
    func runHelper(_ argv: [String], killAfterMs: Int64, now: Int64,
                   finished: @escaping (ProcessExit, _ killedForTime: Bool) -> Void) throws(Spawn.Failure) {
        let pid = try Self.start(argv)
        helpers[pid] = Helper(killAt: now + killAfterMs, finished: finished)
    }

    /// Starts a command; false when it could not be started (logged).
    @discardableResult
    func run(_ argv: [String], environment extra: [String: String], popup: String, window: UInt32?, now: Int64) -> Bool {
        let pid: pid_t
        do {
            pid = try Self.start(argv, extra: extra)
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
            if let helper = helpers.removeValue(forKey: pid) { helper.finished(exit, helper.killed) }
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

    /// The children running and not reaped yet, commands and helpers (for tests).
    var childPids: [pid_t] { Array(children.keys) + Array(helpers.keys) }

    private var nextSlowCheck: Deadline? {
        var earliest = Int64.max
        for child in children.values where !child.reportedSlow { earliest = min(earliest, child.startedAt + Self.slowAfterMs) }
        for helper in helpers.values where !helper.killed { earliest = min(earliest, helper.killAt) }
        return earliest == .max ? nil : Deadline(milliseconds: earliest)
    }

    /// Logs the commands that have been running for `slowAfterMs`, once each; kills the
    /// helpers past their limit (reaped as any child, on SIGCHLD).
    func reportSlow(now: Int64) {
        for (pid, helper) in helpers where !helper.killed && now >= helper.killAt {
            kill(-pid, SIGKILL)
            helpers[pid]?.killed = true
        }
        for (pid, child) in children where !child.reportedSlow && now >= child.startedAt + Self.slowAfterMs {
            logger.warning("dismiss command still running; the daemon does not wait for it", metadata: [
                "popup": "\(child.popup)", "command": "\(child.argv0)", "pid": "\(pid)",
            ])
            children[pid]?.reportedSlow = true
        }
    }
}
